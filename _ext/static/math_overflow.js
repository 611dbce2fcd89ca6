// An inline formula wider than its line scrolls inside its box, and a box that scrolls can be
// reached with the keyboard (WCAG 2.1.1), a display formula's too; the others keep the theme's
// box. Marked once MathJax
// has typeset the page and again whenever the window changes size (a phone turned around).
(() => {
  const fit = () => {
    for (const el of document.querySelectorAll("span.math")) {
      // the typeset formula, not scrollWidth: MathJax's hidden copy for screen readers is wider
      const drawn = el.querySelector("mjx-math");
      const wide = drawn !== null &&
        drawn.getBoundingClientRect().width > el.getBoundingClientRect().width + 1;
      el.classList.toggle("math-scrolls", wide);
      if (wide) {
        el.tabIndex = 0;
      } else {
        el.removeAttribute("tabindex");
      }
    }
    // a display formula scrolls in its own box already (the theme's rule): put it in the tab
    // order when it does not fit (MathJax leaves formulas out of it, inTabOrder: false)
    for (const el of document.querySelectorAll("div.math mjx-container")) {
      const drawn = el.querySelector("mjx-math");
      const wide = drawn !== null &&
        drawn.getBoundingClientRect().width > el.getBoundingClientRect().width + 1;
      if (wide) {
        el.tabIndex = 0;
      } else if (el.tabIndex === 0) {
        el.removeAttribute("tabindex");
      }
    }
  };
  const start = () => {
    const promise = window.MathJax && MathJax.startup && MathJax.startup.promise;
    if (promise) {
      promise.then(fit);
    } else {
      setTimeout(start, 100);
    }
  };
  start();
  window.addEventListener("resize", fit);
})();
