#!/usr/bin/env python3
"""Print the built book into one PDF: ``make pdf``.

The pages of ``_build/html`` are printed by headless Chromium (Debian's, the
same as the browser tests), with the book's print styles
(``_ext/static/print.css``): no navigation, every figure whole on a page with its
caption, notes and code breaking between lines like text, each widget as its static
picture and each animation as a strip of key frames.  A figure too tall for what is left
of a page goes to the top of the next and the text after it moves up into the gap, as in a
printed book (``FLOAT_FIGURES``).
Chromium typesets the math with the book's own MathJax, so the PDF shows what
the web page shows; a formula or table wider than the column is scaled down to
it, and printing stops if anything is still wider or a line of code would
wrap.  The chapters come in the order of ``_toc.yml``, after a title page and a
table of contents that gives the page each one starts on; pypdf joins them,
numbers every page in the whole book, adds a bookmark per chapter and points
each link to another page of the book at that chapter's first page.

Why the printed pages and not Jupyter Book's LaTeX builder: the chapters'
widgets and animations exist as HTML only (LaTeX would drop them), and the
print needs nothing beyond the browser the tests already install, where a TeX
Live that typesets the book is a download of several hundred megabytes.

    make pdf                                  # builds the book first if needed
    .venv/bin/python tools/book_pdf.py --site _build/html --out _build/pdf/book.pdf
"""
from __future__ import annotations

import argparse
import base64
import html
import io
import shutil
import sys
import tempfile
from pathlib import Path

import yaml
from urllib.parse import urlsplit

from pypdf import PdfReader, PdfWriter
from pypdf.generic import ArrayObject, DictionaryObject, NameObject

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser_check  # noqa: E402  (a sibling script: tools/ is not a package)

REPO_ROOT = Path(__file__).resolve().parents[1]
#: A4 in inches, and the margins.
PAPER = {"paperWidth": 8.27, "paperHeight": 11.69, "marginTop": 0.7, "marginBottom": 0.7,
         "marginLeft": 0.7, "marginRight": 0.7}
#: The text column on paper, in CSS pixels (96 to the inch): each page is laid out at this
#: width, in print media, before it is measured and printed.
COLUMN_PX = round((PAPER["paperWidth"] - PAPER["marginLeft"] - PAPER["marginRight"]) * 96)
#: The footer of every page but the title page: the book and the page's number in the whole
#: book (the table of contents gives these numbers). Chromium numbers each printed document
#: from 1, so the footers are printed once for the whole book and laid over its pages.
FOOTER = ('<div style="font-size:10px;width:100%;text-align:center;color:#444">'
          '{title} &middot; <span class="pageNumber"></span></div>')

# The block a box's lines are laid out in (an inline formula's parent may be an <em> or <a>).
BLOCK_OF = """
  const blockOf = element => {
    let block = element.parentElement;
    while (getComputedStyle(block).display.startsWith("inline")) block = block.parentElement;
    return block;
  };"""

# On paper a box cannot scroll: a display formula, an inline one or a table wider than its
# column is cut at the margin. Each is scaled down to its column (CSS zoom; a table's math
# with it). Returns how many were scaled.
FIT_TO_COLUMN = "(() => {" + BLOCK_OF + """
  let fitted = 0;
  const fit = (box, drawn, room) => {
    if (drawn > room + 1) {
      box.style.zoom = (0.99 * room / drawn).toFixed(4);
      box.style.overflow = "visible";
      fitted += 1;
    }
  };
  for (const el of document.querySelectorAll("main div.math mjx-container, main span.math")) {
    const drawn = el.querySelector("mjx-math");
    if (drawn !== null && el.closest("table") === null) {
      fit(el, drawn.getBoundingClientRect().width, blockOf(el).clientWidth);
    }
  }
  for (const table of document.querySelectorAll("main table")) {
    // A table is as wide as its widest formulas allow (the closed forms of a summary): those
    // give up to 30 % of their width first, so that the rest of the table keeps its size.
    const room = blockOf(table).clientWidth;
    const maths = [...table.querySelectorAll("td mjx-container")].map(
      m => [m, m.getBoundingClientRect().width]);
    const widest = Math.max(0, ...maths.map(([, w]) => w));
    const cap = Math.max(widest - (table.scrollWidth - room), 0.7 * widest);
    for (const [m, w] of maths) {
      if (table.scrollWidth > room + 1 && w > cap + 1) {
        m.style.zoom = (cap / w).toFixed(4);
        fitted += 1;
      }
    }
    fit(table, table.scrollWidth, room);
  }
  return fitted;
})()
"""

# What is still wider than the column after FIT_TO_COLUMN (nothing may be), the pictures
# drawn out of their shape (none may be), how many
# characters a printed line of a code cell holds and the page's longest line of code (it must
# not wrap: a wrapped line starts again at the margin, where Python reads it as new code).
PRINT_LAYOUT = "(() => {" + BLOCK_OF + """
  const wide = [];
  for (const el of document.querySelectorAll(
      "main div.math mjx-container mjx-math, main span.math mjx-math, main table")) {
    const box = el.closest("table") || el.closest("mjx-container");
    const room = blockOf(box).getBoundingClientRect().right;
    if (el.getBoundingClientRect().right > room + 2) {
      wide.push(box.textContent.trim().slice(0, 60));
    }
  }
  let columns = null, longest = 0;
  for (const code of document.querySelectorAll("main div.cell_input pre")) {
    for (const line of code.textContent.split("\\n")) longest = Math.max(longest, line.length);
  }
  const pre = document.querySelector("main div.cell_input pre");
  if (pre !== null) {
    const probe = document.createElement("span");
    probe.textContent = "0".repeat(100);
    pre.appendChild(probe);
    const style = getComputedStyle(pre);
    const room = pre.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
    columns = Math.floor(100 * room / probe.getBoundingClientRect().width);
    probe.remove();
  }
  return {wide, columns, longest, squeezed: """ + browser_check.SQUEEZED_PICTURES + """};
})()
"""


#: The height of the printed text column, in CSS pixels.
PAGE_PX = (PAPER["paperHeight"] - PAPER["marginTop"] - PAPER["marginBottom"]) * 96
#: A page left emptier than this share at its foot, because the figure after it did not fit
#: there, has the text that follows the figure moved up into the gap (FLOAT_FIGURES).
FLOAT_GAP = 0.12

# A figure is kept whole with its caption (print.css): one that does not fit in what is left of
# a page goes to the next and leaves the rest of this one blank, up to most of a page. A printed
# book lets the figure float to the top of the next page and the text go on: so does this. The
# page is laid out in columns of the printed page's size (Chromium breaks columns as it breaks
# pages, by the same print styles), which tells on which page each block falls: mostly, as a
# few pages of a chapter break differently in columns (the built-book test measures the
# printed pages, book_pdf's measure is only the guide). For each figure
# that starts a page after a gap, the paragraphs that follow it in its section (text only: never
# code, a heading, another figure or output) move before it, one at a time, while the figure
# stays on its page; a figure whose cell shows its code leaves that code in place, and only the
# output moves. Returns the figures moved, as [caption's start, paragraphs moved].
FLOAT_FIGURES = "((W, H, GAP) => {" + r"""
  const article = document.querySelector("main article.bd-article");
  if (article === null) return [];
  const TEXT = "p, ul, ol, dl, blockquote, div.math-wrapper, div.math, div.line-block";
  const spacer = document.createElement("div");   // what the first page holds above the article
  spacer.style.height = `${article.getBoundingClientRect().top + window.scrollY}px`;
  article.prepend(spacer);
  const style = article.getAttribute("style");
  Object.assign(article.style, {columnWidth: `${W}px`, columnGap: "0px", columnFill: "auto",
                                height: `${H}px`});
  const origin = () => article.getBoundingClientRect();
  const pageOf = rect => Math.floor((rect.left - origin().left + 1) / W);
  const shown = el => el.getClientRects().length > 0 && el.getBoundingClientRect().height > 0;
  // The gap a page leaves at its foot, under the last of `before`'s fragments on that page.
  const gapAbove = (before, page) => {
    const bottoms = [...before.getClientRects()].filter(r => r.height > 0 && pageOf(r) === page)
      .map(r => r.bottom - origin().top);
    return bottoms.length ? H - Math.max(...bottoms) : null;
  };
  const moved = [];
  for (const figure of document.querySelectorAll("main figure")) {
    if (getComputedStyle(figure).breakInside !== "avoid" || !shown(figure)) continue;
    // The block that moves: the figure with the boxes around it that hold nothing else.
    let block = figure;
    while (block.parentElement.tagName !== "SECTION" && block.parentElement !== article
           && [...block.parentElement.children].every(c => c === block || !shown(c))) {
      block = block.parentElement;
    }
    // The block of its section that holds it, which it must end.
    let outer = block;
    while (outer.parentElement.tagName !== "SECTION" && outer.parentElement !== article) {
      if ([...outer.parentElement.children].slice(
            [...outer.parentElement.children].indexOf(outer) + 1).some(shown)) { outer = null; break; }
      outer = outer.parentElement;
    }
    if (outer === null) continue;
    let before = block.previousElementSibling;
    while (before !== null && !shown(before)) before = before.previousElementSibling;
    if (before === null) {
      before = outer.previousElementSibling;
      while (before !== null && !shown(before)) before = before.previousElementSibling;
    }
    if (before === null) continue;
    const page = pageOf(figure.getBoundingClientRect());   // kept whole: on one page
    const gap = gapAbove(before, page - 1);
    if (gap === null || gap < GAP * H) continue;
    // The paragraphs after it in its section.
    const text = [];
    for (let next = outer.nextElementSibling; next !== null && next.matches(TEXT);
         next = next.nextElementSibling) text.push(next);
    if (!text.length) continue;
    // The figure goes after the paragraphs; a cell whose code shows keeps it where it was.
    let carried = block;
    if (block !== outer) {
      carried = outer.cloneNode(false);
      carried.removeAttribute("id");
      outer.after(carried);
      carried.append(block);
    }
    let count = 0;
    for (const paragraph of text) {
      carried.before(paragraph);
      if (pageOf(figure.getBoundingClientRect()) !== page) {   // the figure went on: undo
        carried.after(paragraph);
        break;
      }
      count += 1;
      if ([...paragraph.getClientRects()].some(r => pageOf(r) >= page)) break;  // page full
    }
    if (count === 0 && carried !== block) {                 // nothing moved: put it back
      outer.append(block);
      carried.remove();
    }
    if (count > 0) {
      moved.push([(figure.querySelector("figcaption") || figure).textContent.trim().slice(0, 40),
                  count]);
    }
  }
  spacer.remove();
  if (style === null) article.removeAttribute("style"); else article.setAttribute("style", style);
  return moved;
})""" + f"({COLUMN_PX}, {PAGE_PX}, {FLOAT_GAP})"


def toc_pages() -> list[str]:
    """The book's pages in reading order: the root, then every chapter of ``_toc.yml``."""
    toc = yaml.safe_load((REPO_ROOT / "_toc.yml").read_text(encoding="utf-8"))
    return [toc["root"], *(entry["file"] for entry in toc["chapters"])]


def book_title() -> str:
    config = yaml.safe_load((REPO_ROOT / "_config.yml").read_text(encoding="utf-8"))
    return config["title"], config.get("author", "")


# On paper nothing can be opened: show every text equivalent of an animation.
OPEN_DETAILS = "document.querySelectorAll('details').forEach(d => { d.open = true; }); true"


def _print(tools: browser_check.DevTools, footer: str | None = None) -> bytes:
    result = tools.call("Page.printToPDF", printBackground=True,
                        displayHeaderFooter=footer is not None,
                        headerTemplate="<span></span>", footerTemplate=footer or "<span></span>",
                        generateDocumentOutline=False, **PAPER)
    return base64.b64decode(result["data"])


def _print_page(tools: browser_check.DevTools, url: str) -> bytes:
    """One page of the book laid out for paper: formulas and tables fit the column."""
    tools.events.clear()
    tools.call("Page.navigate", url=url)
    tools.wait_for("Page.loadEventFired", browser_check.PAGE_TIMEOUT)
    tools.evaluate(browser_check.WAIT_FOR_MATHJAX)
    tools.evaluate(OPEN_DETAILS)
    tools.evaluate(FIT_TO_COLUMN)
    tools.evaluate(FLOAT_FIGURES)
    layout = tools.evaluate(PRINT_LAYOUT)
    if layout["wide"]:
        raise SystemExit(f"{url}: wider than the printed column: {layout['wide']}")
    if layout["squeezed"]:
        raise SystemExit(f"{url}: pictures drawn out of shape on paper: {layout['squeezed']}")
    if layout["columns"] is not None and layout["columns"] < layout["longest"]:
        raise SystemExit(f"{url}: a printed code line holds {layout['columns']} characters, "
                         f"the page's longest {layout['longest']}")
    return _print(tools)


def _set_blank(tools: browser_check.DevTools, page: str) -> None:
    """Make the browser's page the HTML document ``page`` (no site, no network)."""
    tools.call("Page.navigate", url="about:blank")
    tools.wait_for("Page.loadEventFired", browser_check.PAGE_TIMEOUT)
    frame = tools.call("Page.getFrameTree")["frameTree"]["frame"]["id"]
    tools.call("Page.setDocumentContent", frameId=frame, html=page)


def _numbered_footers(tools: browser_check.DevTools, pages: int, footer: str) -> PdfReader:
    """``pages`` empty pages with the book's footer, numbered from 1."""
    blank = '<div style="break-before:page">&nbsp;</div>'
    _set_blank(tools, f"<!doctype html><html><body>&nbsp;{blank * (pages - 1)}</body></html>")
    footers = PdfReader(io.BytesIO(_print(tools, footer)))
    if len(footers.pages) != pages:
        raise SystemExit(f"printed {len(footers.pages)} footers for {pages} pages")
    return footers


def _page_title(tools: browser_check.DevTools) -> str:
    return tools.evaluate("(document.querySelector('main h1') || {}).textContent || document.title")


def _front_matter(title: str, author: str, chapters: list[tuple[str, int]]) -> str:
    """The title page and the table of contents, as one HTML document."""
    rows = "".join(f"<tr><td>{html.escape(name.rstrip('#').strip())}</td><td>{page}</td></tr>"
                   for name, page in chapters)
    return f"""<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>{html.escape(title)}</title>
<style>
  body {{ font-family: sans-serif; color: #222; }}
  .title {{ height: 9in; display: flex; flex-direction: column; justify-content: center;
           text-align: center; break-after: page; }}
  .title h1 {{ font-size: 30pt; margin-bottom: 0.4in; }}
  table {{ width: 100%; border-collapse: collapse; font-size: 12pt; }}
  td {{ padding: 4pt 0; border-bottom: 1px dotted #aaa; }}
  td:last-child {{ text-align: right; }}
</style></head><body>
<div class="title"><h1>{html.escape(title)}</h1><p>{html.escape(author)}</p></div>
<h2>Contents</h2><table>{rows}</table></body></html>"""


def print_book(site: Path, out: Path, chromium: str) -> Path:
    """Print every page of ``site`` in book order into ``out``; return ``out``."""
    title, author = book_title()
    footer = FOOTER.format(title=html.escape(title))
    server = browser_check.serve(site)
    origin = f"http://127.0.0.1:{server.server_address[1]}/"
    printed = []                                    # (heading, pdf bytes)
    with tempfile.TemporaryDirectory(prefix="book_pdf_") as profile:
        process, ws_url = browser_check.start_chromium(chromium, Path(profile))
        try:
            tools = browser_check.DevTools(ws_url)
            tools.call("Page.enable")
            # Laid out as on paper while the pages are measured: print styles, the column's width.
            tools.call("Emulation.setEmulatedMedia", media="print")
            tools.call("Emulation.setDeviceMetricsOverride", width=COLUMN_PX,
                       height=browser_check.HEIGHT, deviceScaleFactor=1, mobile=False)
            for page in toc_pages():
                path = site / f"{page}.html"
                if not path.exists():
                    raise SystemExit(f"{path} is missing: build the book first (make book)")
                pdf = _print_page(tools, origin + f"{page}.html")
                printed.append((_page_title(tools), pdf))
            # The front matter: its length decides where the chapters start.
            starts, page = [], 1
            front = None
            for _ in range(2):                      # once to count its own pages, once for real
                offset = 1 + (len(PdfReader(io.BytesIO(front)).pages) if front else 1)
                starts, page = [], offset
                for heading, pdf in printed:
                    starts.append((heading, page))
                    page += len(PdfReader(io.BytesIO(pdf)).pages)
                _set_blank(tools, _front_matter(title, author, starts))
                front = _print(tools)
            footers = _numbered_footers(tools, page - 1, footer)
            tools.socket.close()
        finally:
            process.terminate()
            process.wait(timeout=30)
            server.shutdown()
    writer = PdfWriter()
    writer.append(PdfReader(io.BytesIO(front)))
    for (heading, pdf), (_, start) in zip(printed, starts):
        writer.append(PdfReader(io.BytesIO(pdf)))
        writer.add_outline_item(title=heading.rstrip("#").strip(), page_number=start - 1)
    for number, (sheet, footer_sheet) in enumerate(zip(writer.pages, footers.pages), 1):
        if number > 1:                              # the title page has no footer
            sheet.merge_page(footer_sheet)
    _link_within_the_book(writer, origin, {f"{page}.html": start for page, (_, start)
                                           in zip(toc_pages(), starts)})
    writer.add_metadata({"/Title": title, "/Author": author})
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as file:
        writer.write(file)
    return out


def _link_within_the_book(writer: PdfWriter, origin: str, starts: dict) -> None:
    """Links to the local server that served the pages go to the first page of their
    chapter; links to its other files (an image, a download) are removed: the server
    is gone once the book is printed."""
    for sheet in writer.pages:
        if "/Annots" not in sheet:
            continue
        kept = ArrayObject()
        for reference in sheet["/Annots"]:
            action = reference.get_object().get("/A", {})
            uri = str(action.get("/URI", ""))
            if not uri.startswith(origin):
                kept.append(reference)
                continue
            start = starts.get(urlsplit(uri).path.lstrip("/"))
            if start is None:
                continue
            reference.get_object()[NameObject("/A")] = DictionaryObject({
                NameObject("/S"): NameObject("/GoTo"),
                NameObject("/D"): ArrayObject([writer.pages[start - 1].indirect_reference,
                                               NameObject("/Fit")])})
            kept.append(reference)
        sheet[NameObject("/Annots")] = kept


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--site", type=Path, default=REPO_ROOT / "_build" / "html",
                        help="the built book (default: _build/html)")
    parser.add_argument("--out", type=Path, default=REPO_ROOT / "_build" / "pdf" / "book.pdf",
                        help="the PDF to write (default: _build/pdf/book.pdf)")
    args = parser.parse_args(argv)
    chromium = next(filter(None, map(shutil.which, browser_check.CHROMIUM_NAMES)), None)
    if chromium is None:
        parser.error(f"none of {', '.join(browser_check.CHROMIUM_NAMES)} is on PATH; "
                     "install Debian's: apt-get install -y chromium (make pdf does, as root)")
    out = print_book(args.site.resolve(), args.out.resolve(), chromium)
    print(f"{out}: {len(PdfReader(out).pages)} pages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
