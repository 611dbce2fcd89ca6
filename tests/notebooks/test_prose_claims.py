"""Every "always", "never", "stays below" and "at most" in a chapter's prose is checked.

A sentence such as "the pipelined reduction stays below 7500 units" or "the binomial
tree never sends more than one message per step" is a claim the library can refute. So
every such word in a chapter's prose (outside math, code and references) must lie inside
a phrase that one of the chapter's book tests (``book_prose.CHAPTER_TESTS``) registers in
its module-level ``PROSE_CLAIMS``::

    PROSE_CLAIMS = {
        "stays below the bound of Exercise 13.5": "test_exercise_13_5_bound",
        "never sends two messages at once": "core/test_ports.py::test_one_port",
        "exactly as the README says": "no claim: an instruction to the reader",
    }

The value names the test that checks the claim: a function of the same module, or
``path::function`` under ``tests/``, or it starts with ``no claim:`` and says why the
words state nothing the library could contradict. A phrase the prose no longer holds,
or a test that does not exist, fails too, so the register cannot go stale.
"""
from __future__ import annotations

import re

import nbformat
import pytest

from book_prose import (TESTS, chapter_test_files, chapters, defined_tests, module_literal,
                        prose_only)

#: The words that make a sentence a claim of "for all" or of a bound.
CLAIM = re.compile(r"\b(?:always|never|stays? (?:below|above|under|within)|at most|at least|"
                   r"no (?:more|fewer|less) than|exactly)\b", re.I)
NO_CLAIM = "no claim:"


def _phrase_pattern(phrase: str) -> re.Pattern:
    return re.compile(r"\s+".join(re.escape(word) for word in phrase.split()))


def claims_register(chapter: str) -> dict[str, tuple[str, str]]:
    """``{phrase: (module it is registered in, check)}`` over the chapter's book tests."""
    register = {}
    for path in chapter_test_files(chapter):
        for phrase, check in module_literal(path, "PROSE_CLAIMS", {}).items():
            register[phrase] = (path.relative_to(TESTS).as_posix(), check)
    return register


def unregistered_claims(source: str, phrases) -> list[tuple[str, str]]:
    """``(claim word, its context)`` for each claim word of a Markdown cell that no
    registered phrase covers."""
    prose = prose_only(source)
    covered = [match.span() for phrase in phrases
               for match in _phrase_pattern(phrase).finditer(source)]
    return [(match.group(),
             " ".join(source[max(match.start() - 60, 0):match.end() + 60].split()))
            for match in CLAIM.finditer(prose)
            if not any(start <= match.start() and match.end() <= end
                       for start, end in covered)]


@pytest.mark.parametrize("notebook", chapters(), ids=lambda path: path.stem)
def test_every_claim_in_the_prose_is_checked(notebook):
    chapter = notebook.name[:3]
    register = claims_register(chapter)
    cells = [cell.source for cell in nbformat.read(notebook, as_version=4).cells
             if cell.cell_type == "markdown"]
    unchecked = [(index, context) for index, source in enumerate(cells)
                 for _, context in unregistered_claims(source, register)]
    assert not unchecked, (
        f"{notebook.name}: claims no book test registers in PROSE_CLAIMS "
        f"(markdown cell, context): {unchecked}")


@pytest.mark.parametrize("notebook", chapters(), ids=lambda path: path.stem)
def test_the_claims_register_points_at_prose_and_at_tests(notebook):
    chapter = notebook.name[:3]
    prose = "\n\n".join(cell.source for cell in nbformat.read(notebook, as_version=4).cells
                        if cell.cell_type == "markdown")
    for phrase, (module, check) in claims_register(chapter).items():
        assert CLAIM.search(phrase), f"{module}: {phrase!r} holds no claim word"
        assert _phrase_pattern(phrase).search(prose), \
            f"{module}: {phrase!r} is no longer in {notebook.name}'s prose"
        if check.startswith(NO_CLAIM):
            assert check[len(NO_CLAIM):].strip(), f"{module}: {phrase!r}: say why"
            continue
        path, _, name = check.rpartition("::")
        path = TESTS / (path or module)
        assert path.is_file(), f"{module}: {phrase!r} is checked in {path}, which is missing"
        assert name in defined_tests(path), f"{module}: {phrase!r}: {path.name} has no {name}"


def test_the_claim_finder_reads_prose_only():
    source = ("The tree never sends twice; `never` in code, $x$ at most one.\n"
              "It stays below the bound, always.")
    found = unregistered_claims(source, ["stays below the bound"])
    assert [word for word, _ in found] == ["never", "at most", "always"]
    covering = ["tree never sends", "at most one", "stays below the bound, always"]
    assert unregistered_claims(source, covering) == []
