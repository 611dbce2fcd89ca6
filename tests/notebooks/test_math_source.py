"""Math in the book's prose is typeset, and prose is not typeset as math.

Every page of ``_toc.yml`` (the markdown pages and the markdown cells of the
chapters) is parsed with MyST's own parser and the book's extensions, as the
build parses it, and must show

* no ``$`` and no TeX command (``\\sqrt``, ``^{``, ``_{``) in plain text: a
  formula whose dollars do not pair up (a display set inline, a ``$`` too many)
  reaches the reader as raw TeX;
* no run of three or more words inside math (outside ``\\text{...}`` and the
  like): a ``$`` too few turns the following sentence into italic math;
* no escaped character (``\\_``, ``\\%``) inside ``\\text{...}``: MathJax sets the
  text of ``\\text`` as it stands, backslash included.

It reads the sources, so it covers every chapter without building the book.
"""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest
import yaml
from myst_parser.config.main import MdParserConfig
from myst_parser.mdit_to_docutils.base import DocutilsRenderer
from myst_parser.parsers.mdit import create_md_parser

REPO_ROOT = Path(__file__).resolve().parents[2]
CONFIG = yaml.safe_load((REPO_ROOT / "_config.yml").read_text(encoding="utf-8"))
TOC = yaml.safe_load((REPO_ROOT / "_toc.yml").read_text(encoding="utf-8"))

RAW_TEX = re.compile(r"\$|\\[A-Za-z]+|\^\{|_\{")
TEXT_IN_MATH = re.compile(
    r"\\(?:text|mathrm|textrm|mbox|operatorname|mathit|textit|mathbf|textbf)\s*\{[^{}]*\}")
ESCAPE_IN_TEXT = re.compile(r"\\text\s*\{[^{}]*\\[_%&#$][^{}]*\}")
PROSE = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{3,}(?:[ ,]+[A-Za-z]{3,}){2,}")
MATH_TOKENS = {"math_inline", "math_block", "math_block_label", "amsmath"}


def _pages() -> list[Path]:
    files = [TOC["root"], *(entry["file"] for entry in TOC["chapters"])]
    found = []
    for name in files:
        for suffix in (".md", ".ipynb"):
            if (REPO_ROOT / (name + suffix)).exists():
                found.append(REPO_ROOT / (name + suffix))
    return found


PARSER = create_md_parser(
    MdParserConfig(enable_extensions=set(CONFIG["parse"]["myst_enable_extensions"])),
    DocutilsRenderer)


def _markdown(page: Path) -> list[tuple[str, str]]:
    """(where, text) of each piece of markdown of a page."""
    if page.suffix == ".md":
        return [(page.name, page.read_text(encoding="utf-8"))]
    cells = nbformat.read(page, as_version=4).cells
    return [(f"{page.name} cell {i}", cell.source) for i, cell in enumerate(cells)
            if cell.cell_type == "markdown"]


def _tokens(tokens):
    for token in tokens:
        yield token
        yield from _tokens(token.children or ())


def math_slips(text: str) -> list[str]:
    """What of ``text`` reaches a reader as raw TeX, or as prose set as math."""
    slips = []
    for token in _tokens(PARSER.parse(text)):
        if token.type == "text" and RAW_TEX.search(token.content):
            slips.append(f"raw TeX in the text: {token.content.strip()[:80]!r}")
        elif token.type in MATH_TOKENS:
            slips += [f"a backslash shown in text: {text!r}"
                      for text in ESCAPE_IN_TEXT.findall(token.content)]
            body = re.sub(r"\\[A-Za-z]+", " ", TEXT_IN_MATH.sub(" ", token.content))
            prose = PROSE.search(body)
            if prose:
                slips.append(f"prose set as math: {prose.group(0)!r}")
    return slips


@pytest.mark.parametrize("page", _pages(), ids=lambda page: page.name)
def test_math_is_typeset_and_prose_is_not(page):
    slips = [f"{where}: {slip}" for where, text in _markdown(page) for slip in math_slips(text)]
    assert not slips, "\n".join(slips)


def test_the_check_finds_the_slips_it_is_for():
    assert math_slips("Lemma: $$T = x$ holds") != []
    assert math_slips("so $k^* = \\sqrt{a}$ is best") == []
    assert math_slips("so k^* = \\sqrt{a} is best") != []
    assert math_slips("$$\nT = 2\\alpha \\log p \\quad \\text{for every p here}\n$$") == []
    assert math_slips("$x$ is $y = 1 (the last form ignores the rounding). Then $z$") != []
    assert math_slips("$\\lfloor r / \\text{per\\_node} \\rfloor$") != []
    assert math_slips("$\\lfloor r / \\text{per_node} \\rfloor$") == []
