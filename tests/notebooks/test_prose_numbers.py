"""Every number a chapter's prose states is glued from the library or checked by a test.

A number typed into a sentence ("164 units instead of 240", "speedup 0.36") goes
stale the day the library changes, and nothing says so. So every number in a
chapter's Markdown, outside math, code, references and years, must be

* glued (``{glue:text}`` and friends, which the build fills in from a cell), or
* a literal of the chapter's code cells (the parameters the chapter runs with:
  ``p = 64``, ``n/p = 100``), or
* a literal of the chapter's book tests (``CHAPTER_TESTS``), which assert it
  against the library, or
* listed in ``NOT_A_CLAIM`` with the reason it is no claim (a version number).

The match is by token, so a number met in a test for another reason also
passes; the test is a net for numbers typed by hand, not a proof that each is
checked where it should be. The book tests say where each claim is checked.
"""
from __future__ import annotations

import re

import nbformat
import pytest

from book_prose import CHAPTER_TESTS, chapter_test_files, chapters, prose_only

#: ``{chapter: {number: why it is no claim}}``.
NOT_A_CLAIM = {
    "ch6": {"3.0": "CMSSL 3.0, the version of the library the report timed",
            "000": "the address of node 0 on the 3-cube, in binary"},
}

# What a number may follow without being a claim: a reference into a source or the book.
_REFERENCE = re.compile(
    r"(?:§|\b(?:Sec(?:tion)?|Figs?|Figures?|Eqs?|Equations?|Tables?|Theorems?|Lemmas?|"
    r"Exercises?|Algs?|Algorithms?|Chapters?|Remarks?|Thm|Cor|Corollary|Example|Problems?|"
    r"pp?)\.?)"
    r"\s*\(?\d+(?:\.\d+)*(?:\s*(?:[–-]|,|and|to)\s*\d+(?:\.\d+)*)*\)?")
_YEAR = re.compile(r"\b(?:19[5-9]\d|20[0-4]\d)[a-z]?\b")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:,\d{3})*(?:\.\d+)?(?![\w])")


def prose_numbers(source: str) -> list[str]:
    """The numbers a Markdown cell states in its prose."""
    source = _YEAR.sub(" ", _REFERENCE.sub(" ", prose_only(source)))
    return [number.replace(",", "") for number in _NUMBER.findall(source)
            if len(number.replace(",", "").replace(".", "")) > 1]   # 2 and up: digits are words


def _value(number: str) -> str:
    """One spelling per value: 1.10, 1.1 and 1.100 are the same number."""
    return repr(float(number.replace(",", "").replace("_", "")))


def _tokens(text: str) -> set[str]:
    return {_value(number) for number in re.findall(r"(?<![\w.])\d[\d_]*(?:\.\d+)?", text)}


@pytest.mark.parametrize("notebook", chapters(), ids=lambda path: path.stem)
def test_every_number_in_the_prose_is_glued_or_checked(notebook):
    chapter = notebook.name[:3]
    cells = nbformat.read(notebook, as_version=4).cells
    known = _tokens(" ".join(cell.source for cell in cells if cell.cell_type == "code"))
    for test in chapter_test_files(chapter):
        known |= _tokens(test.read_text(encoding="utf-8"))
    allowed = set(NOT_A_CLAIM.get(chapter, {}))
    unchecked = sorted({(number, index) for index, cell in enumerate(cells)
                        if cell.cell_type == "markdown"
                        for number in prose_numbers(cell.source)
                        if number not in allowed and _value(number) not in known},
                       key=lambda item: item[1])
    assert not unchecked, (
        f"{notebook.name}: numbers in the prose that no glue, code cell or book test "
        f"({', '.join(CHAPTER_TESTS[chapter])}) holds (number, cell): {unchecked}")


def test_the_number_finder_skips_what_is_no_claim():
    text = ("Grama et al. (2003), §4.2.4 and Fig. 4.12, Table 3 and Eq. 13.5, Theorem 13.9: "
            "$p = 64$ and `run(8)`; {glue:text}`t:.1f` units; a speedup of 0.36 at 1,222 "
            "units, 3 times.")
    assert prose_numbers(text) == ["0.36", "1222"]
