#!/usr/bin/env python3
"""Render every page of the built book in headless Chromium with no network.

The book is served from ``_build/html`` on 127.0.0.1 and Chromium resolves no
other host, so a page shows what a reader without internet sees. For every
page (but index.html, which only redirects to the first chapter) the check
saves a 1366x768 screenshot and reports

* typeset: MathJax formulas (``mjx-container`` elements) once MathJax is done;
* untypeset: math left as TeX source -- Sphinx math elements without a
  ``mjx-container``, and text outside code still holding ``\\(``, ``\\[``,
  ``$$``, ``\\begin{`` or a ``$...$`` with a TeX command;
* external: requests the page made to any other host (they fail);
* errors: uncaught script errors and failed loads (not ``console.error``
  messages: the theme logs one on a first visit, when no colour mode is stored);
* axe: the WCAG 2.1 A and AA violations that axe-core (the npm package, installed
  into ``tools/node_modules`` by ``make``) rates *serious* or *critical*, run in
  the rendered page once MathJax is done;
* wide: code cells (source or output) that scroll sideways at a laptop's width (1200,
  1280 or 1366 px; the sidebars take their room from 1200 px on);
* nav: whether a reader can move around: at 1366 px a single search button shows; at phone
  width a tap on the visible sidebar button opens the table of contents (and one on the
  contents button the page's contents) and Escape closes it again;
* phone: at phone width (390 px, as a phone lays the page out) whether the page
  scrolls sideways, every element that sticks out of the screen without a
  box of its own that scrolls or clips it (code and wide tables scroll inside
  their boxes there, which is what a reader expects), every control (a button,
  a slider) that lies outside its box until the reader scrolls it, every formula
  whose box clips it instead of scrolling (its end would be lost), and every display
  formula that scrolls but is not in the tab order, every figure shown narrower than
  the width at which its smallest text is readable, and every picture drawn out of its
  shape; a second screenshot each;
* focus: the controls among the first 30 that Tab reaches whose keyboard focus
  nothing shows (no outline, no visible box shadow).

It prints one table row per page and exits 1 if any count but "typeset" is
not zero. It drives Chromium through the DevTools protocol (``websocket-client``
comes with the project's requirements); Chromium itself is Debian's::

    apt-get install -y chromium
    make book
    .venv/bin/python tools/browser_check.py                    # screenshots in _build/browser_check
    .venv/bin/python tools/browser_check.py --site _build/html --shots /tmp/shots

tests/notebooks/test_built_book.py runs it over the book that ``make test`` builds.
"""
from __future__ import annotations

import argparse
import base64
import functools
import http.server
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

import websocket

REPO_ROOT = Path(__file__).resolve().parents[1]
AXE = REPO_ROOT / "tools" / "node_modules" / "axe-core" / "axe.min.js"
#: The rules axe-core runs: WCAG 2.0 and 2.1, levels A and AA.
AXE_TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa")
#: The impacts that fail the check.
AXE_FAILING = ("serious", "critical")
CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
WIDTH, HEIGHT = 1366, 768
#: Screen widths at which no code cell may scroll: the sidebars appear at 1200 px.
LAPTOP_WIDTHS = (1200, 1280, WIDTH)
PHONE_WIDTH, PHONE_HEIGHT = 390, 844
#: Tab stops whose focus ring each page's check looks at (the header's and the sidebar's
#: controls, and the chapter's first links).
FOCUS_STOPS = 30
# Seconds Chromium may take to start, and one page to load and typeset.
START_TIMEOUT = 30
PAGE_TIMEOUT = 120

# Waits until the page's MathJax (if any) has typeset everything it was given.
WAIT_FOR_MATHJAX = """
(async () => {
  while (!document.body || document.readyState !== "complete") {
    await new Promise(resolve => setTimeout(resolve, 100));
  }
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    await MathJax.startup.promise;
  }
  await document.fonts.ready;
  return true;
})()
"""

# Resolves once the page has been laid out again after a change of screen size and every
# transition that started (a sidebar sliding away) has finished.
NEXT_LAYOUT = """
(async () => {
  await new Promise(resolve => requestAnimationFrame(() => requestAnimationFrame(resolve)));
  const finite = document.getAnimations().filter(
    a => Number.isFinite(a.effect?.getComputedTiming().endTime));
  await Promise.allSettled(finite.map(a => a.finished));
  return true;
})()
"""

# Counts typeset and untypeset math in the rendered page.
COUNT_MATH = r"""
(() => {
  const skip = "script, style, pre, code, textarea, noscript, mjx-container, .highlight";
  const tex = /\\\(|\\\[|\$\$|\\begin\{|\$[^$\s][^$]*\\[A-Za-z]+[^$]*\$/;
  const samples = [];
  let untypeset = 0;
  for (const el of document.querySelectorAll(".math")) {
    if (!el.querySelector("mjx-container") && !el.closest(skip)) {
      untypeset += 1;
      samples.push(el.textContent.trim().slice(0, 70));
    }
  }
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  while (walker.nextNode()) {
    const node = walker.currentNode;
    const parent = node.parentElement;
    if (!parent || parent.closest(skip) || parent.closest(".math")) continue;
    if (tex.test(node.data)) {
      untypeset += 1;
      samples.push(node.data.trim().slice(0, 70));
    }
  }
  return {typeset: document.querySelectorAll("mjx-container").length, untypeset, samples};
})()
"""


# Code cells that scroll sideways: a line of code cut off at the right edge.
WIDE_CODE = r"""
(() => [...document.querySelectorAll("main div.cell pre")]
  .filter(pre => pre.scrollWidth > pre.clientWidth + 1)
  .map(pre => `${pre.scrollWidth - pre.clientWidth} px too wide: ` +
              pre.textContent.split("\n").reduce((a, b) => b.length > a.length ? b : a).trim()
                 .slice(0, 60)))()
"""

# The pictures of the page's figures and demos drawn in another shape than their own (a
# height that stayed when the width shrank to the column): ``[alt text, squeezed by]``.
SQUEEZED_PICTURES = r"""
[...document.querySelectorAll(
   "main figure a.image-reference > img, main figure div.output.text_html > img")]
  .filter(img => img.naturalWidth && img.getBoundingClientRect().height)
  .map(img => {
    const box = img.getBoundingClientRect();
    return [img.alt.slice(0, 40),
            (box.width / box.height) / (img.naturalWidth / img.naturalHeight) - 1];
  })
  .filter(([, squeezed]) => Math.abs(squeezed) > 0.02)
"""

# What sticks out of the screen: the page's sideways scroll, and the elements that reach past
# the right edge with no ancestor that scrolls or clips them.
PAGE_OVERFLOW = r"""
(() => {
  const width = document.documentElement.clientWidth;
  const boxed = el => {
    for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
      if (getComputedStyle(up).overflowX !== "visible") return true;
    }
    return false;
  };
  const name = el => el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") +
    (typeof el.className === "string" && el.className.trim()
       ? "." + el.className.trim().split(/\s+/).join(".") : "");
  const problems = [];
  const sideways = document.documentElement.scrollWidth - width;
  if (sideways > 1) problems.push(`the page scrolls sideways by ${sideways} px`);
  for (const el of document.querySelectorAll("body *")) {
    const box = el.getBoundingClientRect();
    if (box.width && box.right > width + 1 && !boxed(el) &&
        getComputedStyle(el).visibility !== "hidden") {
      problems.push(`${name(el)} sticks out by ${Math.round(box.right - width)} px`);
    }
  }
  // an inline formula wider than its box that the box clips rather than scrolls: its end
  // is lost (measured on the typeset formula, mjx-math: MathJax's hidden copy for screen
  // readers makes scrollWidth larger than what is drawn; a display formula scrolls in its
  // mjx-container)
  for (const el of document.querySelectorAll("span.math")) {
    const drawn = el.querySelector("mjx-math");
    const cut = drawn ? Math.round(drawn.getBoundingClientRect().right -
                                  el.getBoundingClientRect().right) : 0;
    if (cut > 1 && ["hidden", "clip"].includes(getComputedStyle(el).overflowX)) {
      problems.push(`${name(el)} cuts ${cut} px off a formula: ` +
                    el.textContent.trim().slice(0, 40));
    }
  }
  // a control (a button, a slider) that lies outside the box that holds it: the reader
  // must scroll the box to find it (matplotlib's animation buttons on a phone)
  for (const el of document.querySelectorAll("main button, main input, main select")) {
    const box = el.getBoundingClientRect();
    if (!box.width || getComputedStyle(el).visibility === "hidden") continue;
    for (let up = el.parentElement; up && up !== document.body; up = up.parentElement) {
      if (getComputedStyle(up).overflowX === "visible") continue;
      const outside = Math.round(box.right - up.getBoundingClientRect().right);
      if (outside > 1) {
        problems.push(`${name(el)} "${el.getAttribute("aria-label") || el.title || ""}" ` +
                      `lies ${outside} px outside its box`);
      }
      break;
    }
  }
  // a display formula that scrolls in its box where no key reaches it
  for (const el of document.querySelectorAll("div.math mjx-container")) {
    const drawn = el.querySelector("mjx-math");
    const hidden = drawn ? Math.round(drawn.getBoundingClientRect().width -
                                      el.getBoundingClientRect().width) : 0;
    if (hidden > 1 && el.tabIndex < 0) {
      problems.push(`a display formula scrolls ${hidden} px but no key reaches it: ` +
                    el.textContent.trim().slice(0, 40));
    }
  }
  // a figure shown narrower than the width at which its smallest text is readable
  // (--readable-width: _ext/page_styles.py writes it beside a figure's width, and
  // widgets/_demo.py into a demo's snapshot)
  const pictures = "main figure a.image-reference > img, main figure div.output.text_html > img";
  for (const img of document.querySelectorAll(pictures)) {
    const readable = parseFloat(img.style.getPropertyValue("--readable-width"));
    const shown = img.getBoundingClientRect().width;
    if (!(readable > 0)) {
      problems.push(`a figure has no readable width: ${img.alt.slice(0, 40)}`);
    } else if (shown < readable - 1) {
      problems.push(`a figure is shown ${Math.round(shown)} px wide, below the ` +
                    `${Math.round(readable)} px its text needs: ${img.alt.slice(0, 40)}`);
    }
  }
  for (const [alt, squeezed] of """ + SQUEEZED_PICTURES + r""") {
    problems.push(`a picture is drawn ${Math.round(100 * squeezed)}% out of shape: ${alt}`);
  }
  return problems;
})()
"""

# The theme's search buttons a reader sees (one belongs in the sidebar; the search page
# has its own form besides).
VISIBLE_SEARCH_FIELDS = r"""
[...document.querySelectorAll(".search-button-field")]
  .filter(el => el.getBoundingClientRect().width > 0 && getComputedStyle(el).visibility !== "hidden")
  .length
"""

# Where to tap the visible button of a sidebar (``null``: no such button shows).
SIDEBAR_BUTTON = r"""
((kind) => {
  const button = [...document.querySelectorAll(`button.${kind}-toggle`)]
    .find(b => b.getBoundingClientRect().width > 0 && getComputedStyle(b).visibility !== "hidden");
  if (!button) return null;
  const box = button.getBoundingClientRect();
  return [box.x + box.width / 2, box.y + box.height / 2];
})
"""

# Whether a sidebar's links are on the screen: the table of contents (primary) or the
# page's contents (secondary), wherever the theme shows them (in place, or in a dialog).
SIDEBAR_SHOWN = r"""
((kind) => {
  const links = kind === "primary" ? "nav.bd-docs-nav a" : "nav.page-toc a, nav#bd-toc-nav a";
  return [...document.querySelectorAll(links)].some(a => {
    const box = a.getBoundingClientRect();
    return box.width > 0 && box.right > 0 && box.left < document.documentElement.clientWidth &&
           getComputedStyle(a).visibility !== "hidden";
  });
})
"""

# The element that has the keyboard focus, and whether anything shows it (WCAG 2.4.7): an
# outline, or a box shadow that is not transparent.
FOCUS_SHOWN = r"""
(() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const style = getComputedStyle(el);
  const ring = style.outlineStyle !== "none" && parseFloat(style.outlineWidth) > 0;
  const shadow = style.boxShadow !== "none" && !/rgba\([^)]*,\s*0\)/.test(style.boxShadow);
  const label = (el.getAttribute("aria-label") || el.textContent || "").trim().slice(0, 30);
  return {name: `${el.tagName.toLowerCase()} "${label}"`, shown: ring || shadow};
})()
"""


# Runs axe-core (already loaded in the page) and keeps what a reader needs to find each problem.
RUN_AXE = """
(async () => {
  const result = await axe.run(document, {runOnly: {type: "tag", values: %s}});
  return result.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.length, targets: v.nodes.slice(0, 3).map(n => n.target.join(" "))}));
})()
"""


def axe_violations(tools: "DevTools", axe_source: str) -> list[dict]:
    """The serious and critical WCAG 2.1 AA violations axe-core finds in the current page."""
    tools.evaluate(axe_source + ";true")
    found = tools.evaluate(RUN_AXE % json.dumps(list(AXE_TAGS)))
    return [v for v in found if v["impact"] in AXE_FAILING]


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    """Serves the book without logging every request."""

    def log_message(self, format, *args):
        pass


def serve(site: Path) -> http.server.ThreadingHTTPServer:
    """Serve ``site`` on a free port of 127.0.0.1 from a daemon thread."""
    handler = functools.partial(QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class DevTools:
    """A minimal DevTools-protocol client for one page target."""

    def __init__(self, ws_url: str):
        self.socket = websocket.create_connection(ws_url, timeout=PAGE_TIMEOUT, suppress_origin=True)
        self.next_id = 0
        self.events: list[dict] = []

    def call(self, method: str, **params):
        """Send one command and return its result; events met on the way are kept."""
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method} failed: {message['error']}")
                return message["result"]
            if "method" in message:
                self.events.append(message)

    def wait_for(self, event: str, timeout: float) -> None:
        """Read messages until ``event`` arrives."""
        deadline = time.monotonic() + timeout
        while not any(e["method"] == event for e in self.events):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no {event} within {timeout} s")
            message = json.loads(self.socket.recv())
            if "method" in message:
                self.events.append(message)

    def evaluate(self, expression: str):
        result = self.call("Runtime.evaluate", expression=expression, awaitPromise=True,
                           returnByValue=True, timeout=PAGE_TIMEOUT * 1000)
        if "exceptionDetails" in result:
            raise RuntimeError(f"script failed in the page: {result['exceptionDetails']}")
        return result["result"]["value"]


def start_chromium(chromium: str, profile: Path) -> tuple[subprocess.Popen, str]:
    """Start headless Chromium resolving only 127.0.0.1; return it and its first page's socket URL."""
    log = profile / "stderr.log"
    process = subprocess.Popen(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", f"--window-size={WIDTH},{HEIGHT}",
         "--remote-debugging-port=0", f"--user-data-dir={profile}",
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
         "--no-first-run", "--hide-scrollbars", "about:blank"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log.open("w"),
    )
    port_file = profile / "DevToolsActivePort"
    deadline = time.monotonic() + START_TIMEOUT
    while not port_file.is_file() or not port_file.read_text().strip():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"{chromium} did not start; its log:\n{log.read_text()[-3000:]}")
        time.sleep(0.2)
    port = port_file.read_text().split()[0]
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list") as answer:
        targets = json.load(answer)
    page = next(t for t in targets if t["type"] == "page")
    return process, page["webSocketDebuggerUrl"]


def page_problems(events: list[dict], origin: str) -> tuple[list[str], list[str]]:
    """Requests to other hosts, and errors, among one page's DevTools events."""
    external, errors = [], []
    for event in events:
        method, params = event["method"], event["params"]
        if method == "Network.requestWillBeSent":
            url = params["request"]["url"]
            if not url.startswith((origin, "data:", "blob:", "about:")):
                external.append(url)
        elif method == "Runtime.exceptionThrown":
            details = params["exceptionDetails"]
            errors.append(details.get("exception", {}).get("description") or details["text"])
        elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
            entry = params["entry"]
            # Chromium asks for /favicon.ico on its own; the book declares no icon.
            if entry.get("url") != origin + "favicon.ico":
                errors.append(f"{entry['text']} {entry.get('url', '')}".strip())
    return external, errors


def is_redirect(page: Path) -> bool:
    """True for a page that only sends the browser on (Jupyter Book's index.html)."""
    return 'http-equiv="Refresh"' in page.read_text(encoding="utf-8")[:500]


def resize(tools: "DevTools", width: int, height: int, mobile: bool) -> None:
    """Show the page in a screen of ``width`` x ``height``, and wait until it is laid out
    again and its transitions have run."""
    tools.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
               deviceScaleFactor=1, mobile=mobile)
    tools.evaluate(NEXT_LAYOUT)


def open_page(tools: "DevTools", url: str) -> None:
    """Load ``url`` and wait until its math is typeset."""
    tools.events.clear()
    tools.call("Page.navigate", url=url)
    tools.wait_for("Page.loadEventFired", PAGE_TIMEOUT)
    tools.evaluate(WAIT_FOR_MATHJAX)


def screenshot(tools: "DevTools", path: Path) -> None:
    path.write_bytes(base64.b64decode(tools.call("Page.captureScreenshot", format="png")["data"]))


def unshown_focus(tools: "DevTools", stops: int = FOCUS_STOPS) -> list[str]:
    """The controls among the first ``stops`` that Tab reaches whose focus nothing shows."""
    tools.evaluate("document.activeElement && document.activeElement.blur(), true")
    unshown = []
    for _ in range(stops):
        for kind in ("keyDown", "keyUp"):
            tools.call("Input.dispatchKeyEvent", type=kind, key="Tab", code="Tab",
                       windowsVirtualKeyCode=9)
        focused = tools.evaluate(FOCUS_SHOWN)
        if focused and not focused["shown"] and focused["name"] not in unshown:
            unshown.append(focused["name"])
    return unshown


def wide_code(tools: "DevTools") -> list[str]:
    """The code cells that scroll sideways at each of ``LAPTOP_WIDTHS``."""
    wide = []
    for width in LAPTOP_WIDTHS:
        resize(tools, width, HEIGHT, mobile=False)
        wide += [f"at {width} px {code}" for code in tools.evaluate(WIDE_CODE)]
    return wide


def wait_until(tools: "DevTools", expression: str, timeout: float = 3.0) -> bool:
    """Whether ``expression`` became true in the page within ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not tools.evaluate(expression):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def tap(tools: "DevTools", x: float, y: float) -> None:
    for kind in ("mousePressed", "mouseReleased"):
        tools.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)


def sidebar_problems(tools: "DevTools") -> list[str]:
    """At phone width: the sidebars that their visible button does not open, or Escape does
    not close. The table of contents must have a button; the page's contents only where the
    page has sections."""
    problems = []
    for kind, what in (("primary", "the table of contents"), ("secondary", "the page's contents")):
        where = tools.evaluate(f"({SIDEBAR_BUTTON})({kind!r})")
        if where is None:
            if kind == "primary":
                problems.append(f"no visible button opens {what}")
            continue
        if tools.evaluate(f"({SIDEBAR_SHOWN})({kind!r})"):
            problems.append(f"{what} shows before its button is pressed")
            continue
        tap(tools, *where)
        if not wait_until(tools, f"({SIDEBAR_SHOWN})({kind!r})"):
            problems.append(f"its button does not open {what}")
            continue
        for key in ("keyDown", "keyUp"):
            tools.call("Input.dispatchKeyEvent", type=key, key="Escape", code="Escape",
                       windowsVirtualKeyCode=27)
        if not wait_until(tools, f"!({SIDEBAR_SHOWN})({kind!r})"):
            problems.append(f"Escape does not close {what}")
    return problems


def failing(row: dict) -> bool:
    """Whether a page's row holds a problem (every count but "typeset")."""
    return any(row[key] for key in ("untypeset", "external", "errors", "axe", "wide", "nav",
                                    "phone", "focus"))


def check_site(site: Path, shots: Path, chromium: str) -> list[dict]:
    """Render every page of ``site``; one dict of counts per page."""
    if not AXE.exists():
        raise SystemExit(f"{AXE} is missing: run make (it installs tools/package.json with npm)")
    axe_source = AXE.read_text(encoding="utf-8")
    pages = sorted(p.relative_to(site).as_posix() for p in site.rglob("*.html")
                   if "_static" not in p.relative_to(site).parts and not is_redirect(p))
    if not pages:
        raise SystemExit(f"no HTML pages under {site}: build the book first (make book)")
    shots.mkdir(parents=True, exist_ok=True)
    server = serve(site)
    origin = f"http://127.0.0.1:{server.server_address[1]}/"
    rows = []
    with tempfile.TemporaryDirectory(prefix="browser_check_") as profile:
        process, ws_url = start_chromium(chromium, Path(profile))
        try:
            tools = DevTools(ws_url)
            for domain in ("Page", "Network", "Runtime", "Log"):
                tools.call(f"{domain}.enable")
            for page in pages:
                name = page[:-len(".html")].replace("/", "_")
                resize(tools, WIDTH, HEIGHT, mobile=False)
                open_page(tools, origin + page)
                math = tools.evaluate(COUNT_MATH)
                screenshot(tools, shots / f"{name}.png")
                axe = axe_violations(tools, axe_source)
                focus = unshown_focus(tools)
                searches = tools.evaluate(VISIBLE_SEARCH_FIELDS)
                nav = [f"{searches} search buttons show at {WIDTH} px"] if searches > 1 else []
                wide = wide_code(tools)
                external, errors = page_problems(tools.events, origin)
                resize(tools, PHONE_WIDTH, PHONE_HEIGHT, mobile=True)   # the same page, narrow
                phone = tools.evaluate(PAGE_OVERFLOW)
                screenshot(tools, shots / f"{name}_phone.png")
                nav += sidebar_problems(tools)
                rows.append({"page": page, **math, "external": external, "errors": errors,
                             "axe": axe, "wide": wide, "nav": nav, "phone": phone,
                             "focus": focus})
            tools.socket.close()
        finally:
            process.terminate()
            process.wait(timeout=30)
            server.shutdown()
    return rows


def report(rows: list[dict]) -> str:
    """The table, then the details of every problem."""
    width = max(len("page"), *(len(r["page"]) for r in rows))
    lines = [f"{'page':<{width}} | typeset | untypeset | external | errors | axe | wide | nav "
             "| phone | focus",
             f"{'-' * width}-|---------|-----------|----------|--------|-----|------|-----|"
             "-------|------"]
    for r in rows:
        lines.append(f"{r['page']:<{width}} | {r['typeset']:>7} | {r['untypeset']:>9} | "
                     f"{len(r['external']):>8} | {len(r['errors']):>6} | {len(r['axe']):>3} | "
                     f"{len(r['wide']):>4} | {len(r['nav']):>3} | {len(r['phone']):>5} | "
                     f"{len(r['focus']):>5}")
    for r in rows:
        for sample in r["samples"][:5]:
            lines.append(f"{r['page']}: untypeset {sample!r}")
        for url in r["external"]:
            lines.append(f"{r['page']}: external request {url}")
        for error in r["errors"]:
            lines.append(f"{r['page']}: error {error}")
        for v in r["axe"]:
            lines.append(f"{r['page']}: axe {v['impact']} {v['id']} ({v['help']}) on "
                         f"{v['nodes']} element(s), e.g. {'; '.join(v['targets'])}")
        for code in r["wide"][:5]:
            lines.append(f"{r['page']}: a code cell scrolls {code}")
        for problem in r["nav"]:
            lines.append(f"{r['page']}: {problem}")
        for problem in r["phone"][:5]:
            lines.append(f"{r['page']}: at {PHONE_WIDTH} px {problem}")
        for control in r["focus"]:
            lines.append(f"{r['page']}: nothing shows the keyboard focus on {control}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=REPO_ROOT / "_build" / "html",
                        help="the built book (default: _build/html)")
    parser.add_argument("--shots", type=Path, default=REPO_ROOT / "_build" / "browser_check",
                        help="directory for the screenshots (default: _build/browser_check)")
    parser.add_argument("--chromium", default=None,
                        help="the browser to run (default: the first of "
                             f"{', '.join(CHROMIUM_NAMES)} on PATH)")
    args = parser.parse_args(argv)
    if args.chromium is not None:
        chromium = shutil.which(args.chromium)
        if chromium is None:
            parser.error(f"--chromium {args.chromium!r} is not an executable")
    else:
        chromium = next(filter(None, map(shutil.which, CHROMIUM_NAMES)), None)
    if chromium is None:
        parser.error(f"none of {', '.join(CHROMIUM_NAMES)} is on PATH; "
                     "install Debian's: apt-get install -y chromium")
    rows = check_site(args.site.resolve(), args.shots.resolve(), chromium)
    print(report(rows))
    print(f"screenshots: {args.shots}")
    return 1 if any(map(failing, rows)) else 0


if __name__ == "__main__":
    sys.exit(main())
