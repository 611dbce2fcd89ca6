"""Every chapter runs under nbval, and the whole book, built once from those runs, reads correctly.

First each chapter of ``_toc.yml`` runs under nbval in lax mode, in its own
pytest process: every cell must execute without error, and the cells a chapter
tags ``nbval-check-output`` must reproduce their stored outputs (the kernel is
the project's virtualenv, ``--nbval-current-env``). Then the module builds every
page with the repository's own configuration, every warning an error. ``make
book`` executes each chapter while it builds; here the build takes each chapter's
outputs from its nbval run instead (``nbval_keep_outputs.py`` writes them, a
Jupyter cache hands them to myst-nb), so a chapter is executed once, not twice:
the same fresh kernel in the same folder, about three minutes saved on one core.
A chapter whose nbval run failed is executed by the build itself, as ``make
book`` would. This is the suite's only whole-book build. Every page must

* load scripts, stylesheets, fonts and images only from the book itself
  (no ``http:``, ``https:`` or ``//`` address), and every such file must exist;
* have local stylesheets without ``url()`` or ``@import`` pointing elsewhere;
* run its inline scripts without "Identifier 'X' has already been declared"
  (two top-level ``const``/``let``/``class`` declarations of one name);
* show no live widget view, because the book loads no widget embedder
  (``nb_ipywidgets_js`` is empty in ``_config.yml``): the view would stay blank;
* carry no widget state either (nothing reads it; ``_ext/widget_state.py``);
* show a cell's printout in one box per stream (``nb_merge_streams``), and
  nothing printed to stderr;
* typeset math with the MathJax copy in ``_static`` and its fonts;
* show no Markdown pipe table as a paragraph of pipes;
* write every number of five digits or more with thousands separators, outside code,
  its printouts and math (in prose, captions, tables and alt texts);
* offer, from its chapter, the student version of every assignment (no solution,
  no hidden test) and, from Getting started, the course bundle, whose package
  builds on its own (``_ext/downloads.py``);
* render in headless Chromium, offline, with all math typeset, no script error,
  no request leaving the book and no serious or critical WCAG 2.1 AA violation
  that axe-core finds (``tools/browser_check.py``; ``make test`` installs
  Chromium and axe-core).
"""

import base64
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from urllib.parse import unquote, urlsplit

import jupyter_cache
import nbformat
import pytest
import yaml
from bs4 import BeautifulSoup
from pypdf.generic import ContentStream


HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
CONFIG = REPO_ROOT / "_config.yml"
TOC = REPO_ROOT / "_toc.yml"
TOC_DATA = yaml.safe_load(TOC.read_text(encoding="utf-8"))
PAGES = (TOC_DATA["root"], *(entry["file"] for entry in TOC_DATA["chapters"]))
CHAPTERS = tuple(page for page in PAGES if (REPO_ROOT / f"{page}.ipynb").exists())
#: The chapter with the most math per page.
MATH_CHAPTER = "book/ch0_machine_model"
BUILD_TIMEOUT = 1800
# Per-cell limit of an nbval run, the same as the book build's (execute.timeout in
# _config.yml), and an upper bound for a whole chapter, so a stuck kernel cannot hang the suite.
CELL_TIMEOUT = 300
NOTEBOOK_TIMEOUT = 1800

# Tags and attributes through which a page makes the browser fetch something.
FETCHING_ATTRIBUTES = {
    "script": ("src",),
    "link": ("href",),
    "img": ("src", "srcset"),
    "source": ("src", "srcset"),
    "iframe": ("src",),
    "embed": ("src",),
    "object": ("data",),
    "video": ("src", "poster"),
    "audio": ("src",),
}
# <link rel=...> values that are navigation, not something the browser loads.
NAVIGATION_RELS = {"index", "search", "next", "prev", "canonical", "author", "license", "help"}
CSS_REFERENCE = re.compile(r"""url\(\s*['"]?([^'")]+)['"]?\s*\)|@import\s+(?:url\()?\s*['"]([^'"]+)['"]""")
# Inline scripts of these types run as classic scripts and share one global
# lexical scope, so a name declared with const/let/class twice is an error.
CLASSIC_SCRIPT_TYPES = {"", "text/javascript", "application/javascript"}
WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE_MIME = "application/vnd.jupyter.widget-state+json"
MARKDOWN_TABLE_RULE = re.compile(r"\|\s*:?-{3,}")


def is_external(url: str) -> bool:
    """True for an address outside the book: a scheme with a host, or ``//host``."""
    url = url.strip()
    return url.startswith("//") or urlsplit(url).scheme in ("http", "https", "ftp", "ws", "wss")


def local_target(page: Path, url: str) -> Path | None:
    """The file a relative ``url`` of ``page`` names (None for data: and fragment-only URLs)."""
    parts = urlsplit(url.strip())
    if parts.scheme or not parts.path:
        return None
    return (page.parent / unquote(parts.path)).resolve()


def top_level_lexical_names(source: str) -> list[str]:
    """Names declared with ``const``, ``let`` or ``class`` outside every block.

    A small scanner, enough for the short inline scripts that Sphinx extensions
    write: it skips comments, string and template literals, tracks bracket
    depth, and reads the first name after each keyword at depth 0.
    """
    names = []
    depth = 0
    i = 0
    n = len(source)
    keyword = re.compile(r"(?<![\w$.])(const|let|class)\s+([A-Za-z_$][\w$]*)")
    while i < n:
        ch = source[i]
        if source.startswith("//", i):
            i = source.find("\n", i)
            i = n if i < 0 else i
            continue
        if source.startswith("/*", i):
            end = source.find("*/", i + 2)
            i = n if end < 0 else end + 2
            continue
        if ch in "'\"`":
            i += 1
            while i < n and source[i] != ch:
                i += 2 if source[i] == "\\" else 1
            i += 1
            continue
        if ch in "{([":
            depth += 1
        elif ch in "})]":
            depth -= 1
        elif depth == 0:
            match = keyword.match(source, i)
            if match and (i == 0 or not (source[i - 1].isalnum() or source[i - 1] in "_$.")):
                names.append(match.group(2))
                i = match.end()
                continue
        i += 1
    return names


def reference_problem(owner: Path, url: str) -> str | None:
    """Why the browser could not load ``url`` from a book without network (None if it can)."""
    if is_external(url):
        return f"loads {url!r} from outside the book"
    target = local_target(owner, url)
    if target is not None and not target.is_file():
        return f"names a missing file {url!r}"
    return None


def css_references(css: str) -> list[str]:
    """The addresses of every ``url()`` and ``@import`` in a stylesheet."""
    return [match.group(1) or match.group(2) for match in CSS_REFERENCE.finditer(css)]


class NbvalRuns:
    """Each chapter's nbval run, made on first request and kept: ``runs[chapter]`` is the
    finished process; :attr:`kept` the folder of the outputs of the clean runs."""

    def __init__(self, kept: Path):
        self.kept = kept
        self._done: dict[str, subprocess.CompletedProcess] = {}

    def __getitem__(self, chapter: str) -> subprocess.CompletedProcess:
        if chapter not in self._done:
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(
                filter(None, [str(HERE), str(HERE.parent), os.environ.get("PYTHONPATH")]))}
            cmd = [sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-current-env",
                   f"--nbval-cell-timeout={CELL_TIMEOUT}", "-p", "no:cacheprovider",
                   "-p", "jupyter_kernels",
                   "-p", "nbval_keep_outputs", f"--keep-outputs={self.kept}", "-q",
                   str(REPO_ROOT / f"{chapter}.ipynb")]
            self._done[chapter] = subprocess.run(
                cmd, cwd=REPO_ROOT / "book", env=env, stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                timeout=NOTEBOOK_TIMEOUT)
        return self._done[chapter]


@pytest.fixture(scope="module")
def nbval_runs(tmp_path_factory) -> NbvalRuns:
    """The chapters' nbval runs (``-k "nbval and ch3"`` runs one chapter alone)."""
    return NbvalRuns(tmp_path_factory.mktemp("executed"))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_runs_under_nbval(nbval_runs, chapter):
    run = nbval_runs[chapter]
    assert run.returncode == 0, f"nbval failed on {chapter} (exit {run.returncode}):\n{run.stdout}"


@pytest.fixture(scope="module")
def build(nbval_runs, tmp_path_factory) -> tuple[Path, str]:
    """The HTML output of the whole book and the build's log.

    Built as ``make book`` builds it, except that the configuration's execution
    mode is ``cache``, with a Jupyter cache holding every chapter nbval ran
    cleanly: myst-nb takes a chapter's outputs from there when its code is that
    of the cached notebook, and executes it otherwise.
    """
    out = tmp_path_factory.mktemp("book")
    cache = jupyter_cache.get_cache(out / "executed")
    for chapter in CHAPTERS:
        nbval_runs[chapter]             # run now, unless its test ran it already
    for notebook in sorted(nbval_runs.kept.glob("*.ipynb")):
        cache.cache_notebook_file(str(notebook), uri=str(REPO_ROOT / "book" / notebook.name))
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    config["execute"].update(execute_notebooks="cache", cache=str(out / "executed"))
    # Read from another folder, the configuration names its extensions' folders in full.
    extensions = config["sphinx"]["local_extensions"]
    extensions.update({name: str(REPO_ROOT / folder) for name, folder in extensions.items()})
    (out / "_config.yml").write_text(yaml.safe_dump(config), encoding="utf-8")
    cmd = [
        sys.executable, "-c", "from jupyter_book.cli.main import main; main()",
        "build", str(REPO_ROOT), "-W", "--keep-going", "--path-output", str(out),
        "--config", str(out / "_config.yml"),
    ]
    proc = subprocess.run(
        cmd, cwd=REPO_ROOT, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, timeout=BUILD_TIMEOUT,
    )
    # Every warning is an error (-W): name them first, then the end of the log.
    warnings = [line for line in proc.stdout.splitlines() if "WARNING" in line or "ERROR" in line]
    assert proc.returncode == 0, (f"jupyter-book build failed (exit {proc.returncode}):\n"
                                  + "\n".join(warnings[:40]) + "\n...\n" + proc.stdout[-3000:])
    return out / "_build" / "html", proc.stdout


@pytest.fixture(scope="module")
def site(build) -> Path:
    """The HTML output of the whole book."""
    return build[0]


def test_the_build_executes_no_chapter_a_second_time(build):
    executed_again = [chapter for chapter in CHAPTERS
                      if f"{REPO_ROOT / chapter}.ipynb: Using cached notebook" not in build[1]]
    assert not executed_again, (
        f"the build executed {executed_again} itself: their nbval runs failed (see "
        "test_chapter_runs_under_nbval) or their outputs did not reach the cache")


@pytest.fixture(scope="module")
def pages(site) -> dict[Path, BeautifulSoup]:
    """Every built HTML page, parsed (not the theme's Jinja macro files in _static)."""
    found = {
        p: BeautifulSoup(p.read_text(encoding="utf-8"), "html.parser")
        for p in sorted(site.rglob("*.html"))
        if "_static" not in p.relative_to(site).parts
    }
    chapters = {p.relative_to(site).with_suffix("").as_posix() for p in found}
    assert set(PAGES) <= chapters, f"the build lacks {set(PAGES) - chapters}"
    return found


def test_top_level_lexical_names_skips_nested_and_quoted():
    source = "let a; { const b = 1 } `const c` /* let d */ // class e\nclass F {}; x.let = 2"
    assert top_level_lexical_names(source) == ["a", "F"]


def test_pages_fetch_nothing_from_outside_the_book(site, pages):
    problems = []
    for page, soup in pages.items():
        references = []          # (what refers, address)
        for tag_name, attributes in FETCHING_ATTRIBUTES.items():
            for tag in soup.find_all(tag_name):
                if tag_name == "link" and NAVIGATION_RELS.intersection(tag.get("rel", [])):
                    continue
                for attribute in attributes:
                    value = tag.get(attribute) or ""
                    # srcset lists "address width, address width, ..."
                    urls = ([part.split()[0] for part in value.split(",") if part.strip()]
                            if attribute == "srcset" else [value])
                    references += [(f"<{tag_name} {attribute}>", url) for url in urls if url]
        css_texts = [style.get_text() for style in soup.find_all("style")]
        css_texts += [tag["style"] for tag in soup.find_all(style=True)]
        references += [("inline CSS", url) for css in css_texts for url in css_references(css)]
        for what, url in references:
            problem = reference_problem(page, url)
            if problem:
                problems.append(f"{page.relative_to(site)}: {what} {problem}")
    assert not problems, "\n".join(problems)


def test_stylesheets_fetch_nothing_from_outside_the_book(site):
    problems = []
    for sheet in sorted(site.rglob("*.css")):
        for url in css_references(sheet.read_text(encoding="utf-8", errors="replace")):
            problem = reference_problem(sheet, url)
            if problem:
                problems.append(f"{sheet.relative_to(site)} {problem}")
    assert not problems, "\n".join(problems)


def test_inline_scripts_declare_each_name_once(site, pages):
    problems = []
    for page, soup in pages.items():
        seen = set()
        for script in soup.find_all("script", src=False):
            if script.get("type", "").strip().lower() not in CLASSIC_SCRIPT_TYPES:
                continue
            for declared in top_level_lexical_names(script.get_text()):
                if declared in seen:
                    problems.append(
                        f"{page.relative_to(site)}: Identifier {declared!r} has already been declared"
                    )
                seen.add(declared)
    assert not problems, "\n".join(problems)


def test_no_widget_view_without_an_embedder(site, pages):
    shown = [
        str(page.relative_to(site))
        for page, soup in pages.items()
        if soup.find("script", type=WIDGET_VIEW_MIME) is not None
    ]
    assert not shown, (
        f"{shown} show a live widget view, which stays blank: the book loads no widget "
        "embedder (nb_ipywidgets_js is empty in _config.yml). Give the widget a static "
        "text/html or image fallback (see nb_mime_priority_overrides)."
    )


def test_no_widget_state_without_an_embedder(site, pages):
    carrying = {
        str(page.relative_to(site)): sum(len(script.get_text()) for script in scripts)
        for page, soup in pages.items()
        if (scripts := soup.find_all("script", type=WIDGET_STATE_MIME))
    }
    assert not carrying, (
        f"pages embed widget state (characters per page: {carrying}) that no view reads: "
        "the book loads no widget embedder. Is _ext/widget_state.py listed in _config.yml?"
    )


def test_each_stream_of_a_cell_prints_into_one_box(site, pages):
    # Whether a printout arrives in pieces depends on timing, so the pages alone may not show
    # a split one: the setting is checked too.
    config = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    assert config["sphinx"]["config"].get("nb_merge_streams") is True, \
        "_config.yml must set nb_merge_streams: true"
    problems = []
    for page, soup in pages.items():
        for area in soup.select("div.cell_output"):
            boxes = [box for box in area.find_all("div", class_="output", recursive=False)
                     if {"stream", "stderr"} & set(box.get("class", []))]
            kinds = ["stderr" if "stderr" in box["class"] else "stdout" for box in boxes]
            if len(kinds) != len(set(kinds)):
                problems.append(f"{page.relative_to(site)}: {kinds} in {area.get_text()[:60]!r}")
    assert not problems, ("a printout split into several boxes (nb_merge_streams in "
                          "_config.yml?):\n" + "\n".join(problems))


def test_no_cell_prints_to_stderr(site, pages):
    # Library code writes nothing to stderr (CONTRIBUTING); a warning there is a bug to fix.
    problems = [
        f"{page.relative_to(site)}: {box.get_text()[:120]!r}"
        for page, soup in pages.items()
        for box in soup.select("div.cell_output div.output.stderr")
    ]
    assert not problems, "cells print to stderr:\n" + "\n".join(problems)


def test_math_is_typeset_by_the_book_own_mathjax(site, pages):
    page = site / f"{MATH_CHAPTER}.html"
    soup = pages[page]
    assert soup.find(class_="math") is not None, f"{page.name} has no math to check"
    scripts = [script["src"] for script in soup.find_all("script", src=True)]
    sources = [src for src in scripts if "mathjax" in src.lower()]
    assert len(sources) == 1, f"{page.name} should load exactly one MathJax, loads {sources}"
    mathjax = local_target(page, sources[0])
    assert mathjax is not None and mathjax.is_file(), f"MathJax {sources[0]!r} is not a file of the book"
    # MathJax computes its font URLs from its own location and loads them from CSS it writes itself.
    fonts = mathjax.parent / "output" / "chtml" / "fonts" / "woff-v2"
    assert (fonts / "MathJax_Main-Regular.woff").is_file(), f"MathJax's fonts are missing from {fonts}"


def test_markdown_tables_are_tables(site, pages):
    problems = [
        f"{page.relative_to(site)}: {paragraph.get_text()[:80]!r}"
        for page, soup in pages.items()
        for paragraph in soup.find_all("p")
        if MARKDOWN_TABLE_RULE.search(paragraph.get_text())
    ]
    assert not problems, "a Markdown table rendered as a paragraph:\n" + "\n".join(problems)


#: A number of five digits or more without thousands separators (69300, not 69,300); not
#: part of a word, a decimal, a path or an address (a repository's id after a colon).
BARE_LONG_NUMBER = re.compile(r"(?<![\w.,/#=:\-])\d{5,}(?![\w,])")


def bare_long_numbers(soup: BeautifulSoup) -> list[str]:
    """Where a page's text or alt texts write a long number bare: code, its printouts and
    math (typeset from TeX, where the source writes 69{,}300) keep their own form."""
    main = soup.select_one("main") or soup
    for skipped in main.select("pre, code, .math, script, style"):
        skipped.decompose()
    texts = [main.get_text(" ")] + [image.get("alt") or "" for image in main.select("img")]
    return [text[max(0, found.start() - 40):found.end() + 10].replace("\n", " ")
            for text in texts for found in BARE_LONG_NUMBER.finditer(text)]


def test_long_numbers_carry_thousands_separators(site, pages):
    # a reader (and a screen reader, which says "sixty-nine thousand three hundred" only
    # for 69,300 in some voices) takes 524032 in at a glance no better than a code
    problems = [f"{page.relative_to(site)}: ...{where}..." for page, soup in pages.items()
                for where in bare_long_numbers(BeautifulSoup(str(soup), "html.parser"))]
    assert not problems, "long numbers without separators:\n" + "\n".join(problems)


def test_the_long_number_finder_skips_code_math_and_addresses():
    page = BeautifulSoup(
        "<main><p>69300 units, 69,300 units, <code>m = 10000</code>, "
        "<span class='math'>\\(69{,}300\\)</span>, InstRepos:23518805, 0.123456</p>"
        "<pre>12345</pre><img alt='m = 10000 words'></main>", "html.parser")
    assert [where.split()[0] for where in bare_long_numbers(page)] == ["69300", "m"]


# -- downloads: the student versions and the course bundle (_ext/downloads.py) -------------

EXERCISES = REPO_ROOT / "exercises" / "source"
SECRET_REGIONS = (("BEGIN SOLUTION", "END SOLUTION"), ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS"),
                  ("BEGIN MARK SCHEME", "END MARK SCHEME"))


def secret_lines(source: Path) -> set[str]:
    """The lines of an instructor's notebook inside a solution, hidden-test or rubric
    region that appear nowhere outside one (so a release must not show them)."""
    inside, outside = set(), set()
    for cell in nbformat.read(source, as_version=4).cells:
        region = None
        for line in cell.source.splitlines():
            text = line.strip()
            begin = [end for start, end in SECRET_REGIONS if start in text]
            if begin:
                region = begin[0]
            elif region and region in text:
                region = None
            elif len(text) > 12:
                (inside if region else outside).add(text)
    return inside - outside


def downloads(page: BeautifulSoup, suffix: str) -> list[str]:
    return [a["href"] for a in page.find_all("a", href=True)
            if "_downloads/" in a["href"] and a["href"].endswith(suffix)]


@pytest.mark.parametrize("assignment", sorted(p.name for p in EXERCISES.iterdir() if p.is_dir()))
def test_a_chapter_offers_the_student_version_of_each_assignment(site, pages, assignment):
    offered = {page: downloads(soup, f"/{assignment}.ipynb") for page, soup in pages.items()
               if page.relative_to(site).with_suffix("").as_posix() in CHAPTERS}
    offered = {page: links for page, links in offered.items() if links}
    assert len(offered) == 1 and len(next(iter(offered.values()), [])) == 1, \
        f"{assignment}: student-version links {offered}"
    ((page_path, links),) = offered.items()
    released = local_target(page_path, links[0])
    assert released is not None and released.exists(), links[0]
    text = released.read_text(encoding="utf-8")
    for marker in (start for region in SECRET_REGIONS for start in region):
        assert marker not in text, f"the student version of {assignment} shows {marker!r}"
    # Whole lines, not substrings: a hidden test's first line may begin a longer visible one.
    released_lines = {line.strip() for cell in nbformat.reads(text, as_version=4).cells
                      for line in cell.source.splitlines()}
    shown = sorted(secret_lines(EXERCISES / assignment / f"{assignment}.ipynb") & released_lines)
    assert not shown, f"the student version of {assignment} gives away {shown[:3]}"
    assert "raise NotImplementedError()" in text, "no starting cell left for the answers"


def test_the_course_bundle_holds_what_its_readme_installs(site, pages, tmp_path):
    page_path = site / "book" / "getting_started.html"
    links = downloads(pages[page_path], "/collective-course.zip")
    assert len(links) == 1, links
    with zipfile.ZipFile(local_target(page_path, links[0])) as bundle:
        bundle.extractall(tmp_path)
    root = tmp_path / "collective-course"
    chapters = {p.name for p in (REPO_ROOT / "book").glob("*.ipynb")}
    assert {p.name for p in (root / "book").glob("*.ipynb")} == chapters
    package = {p.relative_to(REPO_ROOT) for p in (REPO_ROOT / "collective_lib").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts}
    assert {p.relative_to(root) for p in (root / "collective_lib").rglob("*")} >= package
    assert {p.stem for p in (root / "exercises").glob("*.ipynb")} == \
        {p.name for p in EXERCISES.iterdir() if p.is_dir()}
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert "pip install -r requirements.txt -e ." in readme and "jupyter lab" in readme
    assert "JUPYTER_CONFIG_PATH=$PWD/jupyter_reader" in readme
    assert (root / "jupyter_reader" / "labconfig" / "page_config.json").exists()
    # The package builds from the bundle alone (pyproject.toml names README.md, the data files).
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                            "--no-build-isolation", "-q", "-w", str(tmp_path / "wheel"), str(root)],
                           capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = (tmp_path / "wheel").glob("collective_lib-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        assert "collective_lib/cm200/data/tables.json" in archive.namelist()


# -- in a real browser: typeset math, no script error, nothing from outside, axe-core ---------

def _browser_check():
    """tools/browser_check.py, imported from its file (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location("browser_check", REPO_ROOT / "tools" / "browser_check.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_page_renders_offline_typeset_accessible_and_fits_the_screen(site, tmp_path):
    check = _browser_check()
    chromium = next(filter(None, map(shutil.which, check.CHROMIUM_NAMES)), None)
    assert chromium is not None, "no Chromium on PATH: `make test` installs it (apt-get install chromium)"
    assert check.AXE.exists(), f"{check.AXE} is missing: `make test` installs it (npm ci in tools/)"
    rows = check.check_site(site, tmp_path / "shots", chromium)
    assert {row["page"] for row in rows} >= {f"{page}.html" for page in PAGES}
    bad = [row for row in rows if check.failing(row)]
    assert not bad, check.report(bad)


# -- figures: numbered, captioned, with a text alternative (issue 29, point 2) ---------------

def figure_problems(site: Path, soup: BeautifulSoup) -> list[str]:
    """Every picture of a chapter's content (not an animation's frame, which has its own
    alt text and text equivalent) sits in a numbered figure and says what it shows; demo
    snapshots and the key frames printed instead of an animation are sharp."""
    problems = [f"a figure shown as its text: {pre.get_text().strip()[:60]}"
                for pre in soup.select("main pre") if "<Figure size" in pre.get_text()]
    for image in soup.select("main img"):
        if (image.get("id") or "").startswith("_anim_img"):
            continue
        if image.get("src", "").startswith("data:"):
            problems += snapshot_problems(image)
            continue
        alt = (image.get("alt") or "").strip()
        name = Path(urlsplit(image.get("src", "")).path).name
        if len(alt) < 20 or alt == name or alt.endswith((".png", ".svg", ".jpg")):
            problems.append(f"{name}: alt text {alt!r}")
        figure = image.find_parent("figure")
        caption = figure.find("figcaption") if figure else None
        if caption is None or not caption.get_text(" ", strip=True).startswith("Fig. "):
            problems.append(f"{name}: not in a numbered figure with a caption")
        problems += sharpness_problems(site, image)
    return problems


#: Image pixels per CSS pixel of every picture of the built book.
SHARP = 2


def _not_sharp(what: str, pixels: tuple, shown: tuple) -> list[str]:
    """A problem unless an image of ``pixels`` holds two for each CSS pixel it is ``shown``
    at (widgets._demo.SNAPSHOT_SCALE, viz.book_figures), give or take two."""
    if all(abs(SHARP * css - image) <= 2 for css, image in zip(shown, pixels)):
        return []
    return [f"{what} of {pixels[0]}x{pixels[1]} pixels shown at {shown[0]}x{shown[1]} CSS "
            "pixels, not two pixels for each"]


def snapshot_problems(image) -> list[str]:
    """A live demo's snapshot is as sharp as a figure (its width and height attributes)."""
    from collective_lib.widgets._demo import png_size

    pixels = png_size(base64.b64decode(image["src"].split(",", 1)[1]))
    return _not_sharp("a demo's snapshot", pixels,
                      (int(image.get("width", 0)), int(image.get("height", 0))))


def sharpness_problems(site: Path, image) -> list[str]:
    """A figure's PNG holds two pixels for each CSS pixel it is shown at (sharp on a screen
    with two device pixels to a CSS pixel, with detail for a reader who zooms), and the
    image links to its file (viz.book_figures)."""
    from PIL import Image

    name = Path(urlsplit(image.get("src", "")).path).name
    pixels = Image.open(site / "_images" / name).size
    # its width in pixels and its shape, "aspect-ratio: width / height" (_ext/page_styles.py)
    ratio = re.search(r"aspect-ratio:\s*([\d.]+)\s*/\s*([\d.]+)", image.get("style", ""))
    width = re.search(r"(?<![-\w])width:\s*([\d.]+)px", image.get("style", ""))
    shown = (0, 0) if not (ratio and width) else (
        int(float(width[1])), int(float(width[1]) * float(ratio[2]) / float(ratio[1])))
    problems = _not_sharp(name, pixels, shown)
    link = image.find_parent("a")
    if link is None or Path(urlsplit(link.get("href", "")).path).name != name:
        problems.append(f"{name}: does not link to its full-size file")
    return problems


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_figure_is_numbered_captioned_and_described(site, pages, chapter):
    problems = figure_problems(site, pages[site / f"{chapter}.html"])
    assert not problems, f"{chapter}:\n" + "\n".join(problems)


# -- the PDF edition (make pdf: tools/book_pdf.py), printed from the same build --------------

def _book_pdf():
    spec = importlib.util.spec_from_file_location("book_pdf", REPO_ROOT / "tools" / "book_pdf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_pdf_edition_holds_every_chapter_and_figure(site, pages, tmp_path):
    from pypdf import PdfReader
    book_pdf = _book_pdf()
    chromium = next(filter(None, map(shutil.which, book_pdf.browser_check.CHROMIUM_NAMES)), None)
    assert chromium is not None, "no Chromium on PATH: `make test` installs it"
    pdf = PdfReader(book_pdf.print_book(site, tmp_path / "book.pdf", chromium))
    page_texts, small = read_pages(pdf)
    text = "\n".join(page_texts)
    flat = " ".join(text.split())
    titles = [pages[site / f"{page}.html"].find("h1").get_text(" ", strip=True).rstrip("#").strip()
              for page in PAGES]
    assert flat.startswith(book_pdf.book_title()[0]), "the PDF starts with its title page"
    assert "Contents" in flat[:2000]
    missing = [title for title in titles if " ".join(title.split()) not in flat]
    assert not missing, f"chapters missing from the PDF: {missing}"
    assert [item.title for item in pdf.outline] == [" ".join(t.split()) for t in titles]
    assert "??" not in flat, "an unresolved cross reference"
    captions = [caption.get_text(" ", strip=True).split(" ")[:2] for page in PAGES
                for caption in pages[site / f"{page}.html"].select("figure figcaption")]
    for number in (" ".join(words) for words in captions):
        assert number in flat, f"{number} is not in the PDF"
    assert_pages_numbered_and_linked_within(pdf, page_texts, book_pdf.book_title()[0])
    headings = {" ".join(h.get_text(" ", strip=True).rstrip("#").split())
                for page in PAGES for h in pages[site / f"{page}.html"].select("main h2, main h3")}
    assert_no_heading_ends_a_page(pdf, headings, book_pdf.book_title()[0])
    assert not small, f"text too small to read on paper (page, points, text): {small[:10]}"
    assert_pages_filled_and_pictures_whole(pdf, book_pdf.PAPER)


#: The smallest printed text, in points: text (a table's notes, the footer) and math, whose
#: scripts of scripts are smaller still (MathJax's fonts reach the PDF as Type 3 fonts).
SMALLEST_TEXT_PT, SMALLEST_MATH_PT = 7.0, 5.5


def read_pages(pdf) -> tuple[list, list]:
    """Each page's text, and the text printed smaller than SMALLEST_TEXT_PT, or math than
    SMALLEST_MATH_PT, as (page, points, text), in one pass (pypdf reads a page in some
    25 ms). A table or formula too wide for the column is shrunk to fit it (book_pdf.py),
    and the summaries' closed forms were shrunk to 4 pt before each had a line of its own."""
    texts, small = [], []
    for number, page in enumerate(pdf.pages, 1):
        def visit(text, cm, tm, font, size, number=number):
            if not text.strip() or font is None:
                return
            printed = size * abs(tm[3] * cm[3] + tm[2] * cm[1])
            math = font.get("/Subtype") == "/Type3"
            if printed < (SMALLEST_MATH_PT if math else SMALLEST_TEXT_PT) - 0.05:
                small.append((number, round(printed, 1), text.strip()[:30]))
        texts.append(page.extract_text(visitor_text=visit))
    return texts, small


def assert_no_heading_ends_a_page(pdf, headings: set, title: str) -> None:
    """No page's last line, above its footer, is a heading: a heading starts the text it
    heads (print.css; a figure caption glued to the next block once left "Summary" alone)."""
    alone = []
    for number, page in enumerate(pdf.pages, 1):
        lines = [" ".join(line.split()) for line in page.extract_text(
            extraction_mode="layout").splitlines() if line.strip() and title not in line]
        if lines and lines[-1] in headings:
            alone.append((number, lines[-1]))
    assert not alone, f"headings alone at the foot of a page: {alone}"


def assert_pages_numbered_and_linked_within(pdf, page_texts: list, title: str) -> None:
    """Every page but the title page (its text in ``page_texts``) ends with the book's
    title and its number in the whole book (the contents' numbers); a link goes to a page
    of the book or to the web, never to the local server the pages were printed from, and
    a link within the book to the first page of a chapter (the outline's)."""
    unnumbered = [number for number, text in enumerate(page_texts[1:], 2)
                  if not " ".join(text.split()).endswith(f"{title} · {number}")]
    assert not unnumbered, f"pages without their number: {unnumbered[:10]}"
    starts = {pdf.get_destination_page_number(item) for item in pdf.outline}
    local, elsewhere = [], []
    for number, page in enumerate(pdf.pages, 1):
        for annotation in page.get("/Annots") or []:
            action = annotation.get_object().get("/A", {})
            if "/URI" in action and urlsplit(str(action["/URI"])).hostname in ("127.0.0.1",
                                                                               "localhost"):
                local.append((number, str(action["/URI"])))
            if action.get("/S") == "/GoTo":
                target = pdf.get_page_number(action["/D"][0].get_object())
                if target not in starts:
                    elsewhere.append((number, target + 1))
    assert not local, f"links a printed book cannot follow: {local[:5]}"
    assert not elsewhere, f"links within the book to no chapter's start: {elsewhere[:5]}"


#: A page (not a chapter's last) may end with a blank this big, as a share of its text column,
#: only where a picture goes first on the next page. Pages open with pictures a quarter to
#: nine tenths of a page high, each kept whole with its caption: whatever of that height did
#: not fit stays blank, when no text after the picture in its section can move up to fill the
#: gap (book_pdf.FLOAT_FIGURES). Anything else that left a gap this big (a note, a box of code,
#: a demo's notes carried over whole, key frames kept two together) was carried over for no
#: reason: 20 such pages before print.css let them break, from 26 % to 74 % of a page blank.
PART_EMPTY = 0.25


def printed_items(page) -> list[tuple[str, float, float]]:
    """The text and pictures printed on ``page``: (``"text"`` or ``"image"``, top, bottom) in
    points from the top of the sheet (Chromium draws each picture as an image XObject)."""
    height = float(page.mediabox.height)
    items = []

    def visit(text, cm, tm, font, size):
        if text.strip():
            y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
            items.append(("text", height - y - size * abs(tm[3] * cm[3] + tm[2] * cm[1]),
                          height - y))
    page.extract_text(visitor_text=visit)
    pictures = page["/Resources"].get("/XObject", {})
    ctm, saved = [1.0, 0.0, 0.0, 1.0, 0.0, 0.0], []
    for operands, operator in ContentStream(page.get_contents(), page.pdf).operations:
        if operator == b"q":
            saved.append(ctm)
        elif operator == b"Q":
            ctm = saved.pop()
        elif operator == b"cm":
            a, b, c, d, e, f = (float(x) for x in operands)
            A, B, C, D, E, F = ctm
            ctm = [a * A + b * C, a * B + b * D, c * A + d * C, c * B + d * D,
                   e * A + f * C + E, e * B + f * D + F]
        elif (operator == b"Do" and operands[0] in pictures
              and pictures[operands[0]].get_object().get("/Subtype") == "/Image"):
            ys = [ctm[1] * x + ctm[3] * y + ctm[5] for x in (0, 1) for y in (0, 1)]
            items.append(("image", height - max(ys), height - min(ys)))
    return items


def assert_pages_filled_and_pictures_whole(pdf, paper: dict) -> None:
    """No picture is cut by a page's edge (drawn past its text column: Chromium prints a
    picture split between pages twice, each cut to its page), and no page but a chapter's
    last ends with more than PART_EMPTY of its column blank unless the next page opens with a
    picture that, with the caption under it, is taller than the gap."""
    starts = sorted(pdf.get_destination_page_number(item) + 1 for item in pdf.outline)
    chapter_ends = {start - 1 for start in starts[1:]} | {len(pdf.pages)}
    printed = [printed_items(page) for page in pdf.pages]
    cut, part_empty = [], []
    for number, (page, items) in enumerate(zip(pdf.pages, printed), 1):
        top = paper["marginTop"] * 72
        bottom = float(page.mediabox.height) - paper["marginBottom"] * 72
        column = bottom - top
        shown = [item for item in items if item[1] < bottom]          # not the footer
        cut += [(number, round(t), round(b)) for kind, t, b in shown
                if kind == "image" and (t < top - 2 or b > bottom + 2)]
        if number < starts[0] or number in chapter_ends or not shown:
            continue
        gap = (bottom - max(b for _, _, b in shown)) / column
        if gap <= PART_EMPTY:
            continue
        following = sorted((item for item in printed[number] if item[1] < bottom),
                           key=lambda item: item[1])
        needed = 0.0
        if following and following[0][0] == "image":                  # a picture opens it
            end = following[0][2]
            for kind, t, b in following[1:]:                          # and its caption
                if kind != "text" or t > end + 16:
                    break
                end = max(end, b)
            needed = (end - following[0][1]) / column
        if needed < gap - 0.02:
            part_empty.append((number, f"{gap:.0%} blank",
                               f"next opens with a picture of {needed:.0%}" if needed else
                               "next opens with text"))
    assert not cut, f"pictures cut by a page's edge (page, top, bottom in points): {cut[:10]}"
    assert not part_empty, f"pages left part empty for no picture that did not fit: {part_empty}"
