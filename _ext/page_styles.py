"""Sphinx extension: what the book's pages need beyond the theme, on screen and on paper.

* Every focusable control shows a focus ring (``static/accessibility.css``).
* A code cell's 88 columns fit the text column from 1200 px on (``static/layout.css``).
* The theme's navigation bar stays off: pydata-sphinx-theme 0.17 puts its
  ``navbar_persistent`` search field back into every page unless the option is set
  (sphinx-book-theme's own setting no longer reaches it; executablebooks/sphinx-book-theme
  issue 986). The bar then showed a second search field above the sidebar's at 960 px and
  wider, and it holds hidden copies of the sidebar buttons that the theme's script binds
  first, so the visible buttons opened no sidebar: a phone reader could not reach the table
  of contents.
* An inline formula wider than its line scrolls in its own box, in the tab order, where
  the theme clipped it (``static/math_overflow.js``, ``static/layout.css``).
* A figure's picture narrower than its own width keeps its shape, and on a phone it keeps
  the width at which its smallest text is still ``viz.MIN_FONT_PX`` high and scrolls
  sideways in its own box (``static/layout.css``): shrunk to a phone's column, the figures
  drawn for a laptop's showed their labels four to six pixels high.
* Printed (``make pdf``), a page is its text column, with code wrapped, figures
  whole and animations as strips of key frames (``static/print.css``).
* A list of citations is not marked as an ARIA list: docutils writes
  ``<div class="citation-list" role="list">`` around entries of role
  ``doc-biblioentry``, which a list may not hold (axe-core: aria-required-children).

The theme's own buttons are mended by the templates in ``_templates/``; MathJax
keeps formulas out of the tab order by its own setting (``mathjax3_config`` in
``_config.yml``). tools/browser_check.py runs axe-core over every built page.
"""
import re
from pathlib import Path

from collective_lib.viz import READABLE_SHARE

STATIC = Path(__file__).parent / "static"
CITATION_LIST = re.compile(r'<div (?:role="list" class="citation-list"|class="citation-list" role="list")>')
#: A figure's picture, which links to its file: its size as myst-nb writes it.
FIGURE_IMAGE = re.compile(r'(<a class="reference internal image-reference" href="[^"]*">'
                          r'<img [^>]*style=")width: ([\d.]+)px; height: ([\d.]+)px;')


def drop_citation_list_role(app, pagename, templatename, context, doctree) -> None:
    body = context.get("body")
    if body:
        context["body"] = CITATION_LIST.sub('<div class="citation-list">', body)


def fit_figure_pictures(app, pagename, templatename, context, doctree) -> None:
    """Each figure's picture keeps its shape when the column is narrower than it, and
    carries the width below which its text gets too small to read.

    myst-nb gives a picture its width and height in pixels; the theme caps the width at the
    column's but the height stayed, so a picture wider than the column was squeezed (by 14%
    at 1200 px, by half on a phone, and on paper). Its height now follows its width (an
    ``aspect-ratio`` keeps its room on the page before it loads), and the CSS variable
    ``--readable-width`` (``viz.READABLE_SHARE`` of its width) is the width that
    layout.css keeps on a phone (a demo's snapshot carries it already: widgets._demo).
    """
    body = context.get("body")
    if body:
        context["body"] = FIGURE_IMAGE.sub(
            lambda m: f"{m[1]}width: {m[2]}px; aspect-ratio: {m[2]} / {m[3]}; height: auto; "
                      f"--readable-width: {float(m[2]) * READABLE_SHARE:.0f}px;", body)


def add_static(app, config) -> None:
    config.html_static_path.append(str(STATIC))


def keep_navbar_off(app, config) -> None:
    config.html_theme_options.setdefault("navbar_persistent", [])


def setup(app):
    app.connect("config-inited", add_static)
    app.connect("config-inited", keep_navbar_off)
    app.add_css_file("accessibility.css")
    app.add_css_file("layout.css")
    app.add_css_file("print.css", media="print")
    app.add_js_file("math_overflow.js", defer="defer")
    app.connect("html-page-context", drop_citation_list_role)
    app.connect("html-page-context", fit_figure_pictures)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
