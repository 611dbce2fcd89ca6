#!/usr/bin/env python3
"""Print the built book into one PDF: ``make pdf``.

The pages of ``_build/html`` are printed by headless Chromium (Debian's, the
same as the browser tests), with the book's print styles
(``_ext/static/print.css``): no navigation, every figure and table whole on a
page, each widget as its static picture and each animation as a strip of key
frames.  Chromium typesets the math with the book's own MathJax, so the PDF
shows what the web page shows.  The chapters come in the order of
``_toc.yml``, after a title page and a table of contents that gives the page
each one starts on; pypdf joins them and adds a bookmark per chapter.

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
from pypdf import PdfReader, PdfWriter

sys.path.insert(0, str(Path(__file__).resolve().parent))
import browser_check  # noqa: E402  (a sibling script: tools/ is not a package)

REPO_ROOT = Path(__file__).resolve().parents[1]
#: A4 in inches, and the margins.
PAPER = {"paperWidth": 8.27, "paperHeight": 11.69, "marginTop": 0.7, "marginBottom": 0.7,
         "marginLeft": 0.7, "marginRight": 0.7}
#: Chromium's footer: the chapter's own page count would restart in every chapter, so the
#: footer names the book; the PDF viewer shows the page of the whole book.
FOOTER = ('<div style="font-size:8px;width:100%;text-align:center;color:#555">'
          '{title}</div>')


def toc_pages() -> list[str]:
    """The book's pages in reading order: the root, then every chapter of ``_toc.yml``."""
    toc = yaml.safe_load((REPO_ROOT / "_toc.yml").read_text(encoding="utf-8"))
    return [toc["root"], *(entry["file"] for entry in toc["chapters"])]


def book_title() -> str:
    config = yaml.safe_load((REPO_ROOT / "_config.yml").read_text(encoding="utf-8"))
    return config["title"], config.get("author", "")


# On paper nothing can be opened: show every text equivalent of an animation.
OPEN_DETAILS = "document.querySelectorAll('details').forEach(d => { d.open = true; }); true"


def _print(tools: browser_check.DevTools, footer: str) -> bytes:
    result = tools.call("Page.printToPDF", printBackground=True, displayHeaderFooter=True,
                        headerTemplate="<span></span>", footerTemplate=footer,
                        generateDocumentOutline=False, **PAPER)
    return base64.b64decode(result["data"])


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
            for page in toc_pages():
                path = site / f"{page}.html"
                if not path.exists():
                    raise SystemExit(f"{path} is missing: build the book first (make book)")
                tools.events.clear()
                tools.call("Page.navigate", url=origin + f"{page}.html")
                tools.wait_for("Page.loadEventFired", browser_check.PAGE_TIMEOUT)
                tools.evaluate(browser_check.WAIT_FOR_MATHJAX)
                tools.evaluate(OPEN_DETAILS)
                printed.append((_page_title(tools), _print(tools, footer)))
            # The front matter: its length decides where the chapters start.
            starts, page = [], 1
            front = None
            for _ in range(2):                      # once to count its own pages, once for real
                offset = 1 + (len(PdfReader(io.BytesIO(front)).pages) if front else 1)
                starts, page = [], offset
                for heading, pdf in printed:
                    starts.append((heading, page))
                    page += len(PdfReader(io.BytesIO(pdf)).pages)
                tools.call("Page.navigate", url="about:blank")
                tools.wait_for("Page.loadEventFired", browser_check.PAGE_TIMEOUT)
                frame = tools.call("Page.getFrameTree")["frameTree"]["frame"]["id"]
                tools.call("Page.setDocumentContent", frameId=frame,
                           html=_front_matter(title, author, starts))
                front = _print(tools, footer)
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
    writer.add_metadata({"/Title": title, "/Author": author})
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as file:
        writer.write(file)
    return out


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
