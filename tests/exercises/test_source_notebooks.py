"""The instructor's (source) notebook of every assignment carries proper nbgrader metadata.

The round trip of each assignment (release, then autograde good and bad
submissions) is tested in the module named after it, e.g. test_broken_lock.py.
"""
from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SOURCE = REPO_ROOT / "exercises" / "source"

NOTEBOOKS = sorted(SOURCE.glob("*/*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_source_notebook_has_proper_nbgrader_metadata(path):
    from nbgrader.nbgraderformat import MetadataValidator

    nb = nbformat.read(path, as_version=4)
    MetadataValidator().validate_nb(nb)
    assert nb.metadata.kernelspec.name == "python3"
    assert path.stem == path.parent.name
    ids = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader")
        assert meta is not None, f"cell without nbgrader metadata: {cell.source[:60]!r}"
        assert meta["schema_version"] == 3
        assert set(meta) >= {"grade", "grade_id", "locked", "schema_version", "solution", "task"}
        ids.append(meta["grade_id"])
        if meta["grade"]:
            assert meta["points"] > 0
        if meta["solution"] and cell.cell_type == "code":
            assert "### BEGIN SOLUTION" in cell.source and not meta["locked"]
        if "BEGIN HIDDEN TESTS" in cell.source:
            assert meta["grade"] and meta["locked"] and not meta["solution"]
    assert len(ids) == len(set(ids)), "grade_ids must be unique"


# -- every hidden check that judges the submission says why it failed ----------------------------

NOTEBOOK_CHECK = "# checks the notebook, not the submission"


def _hidden_regions(source):
    """(first, last) line numbers (1-based) of each hidden-test region of a cell's source."""
    regions, start = [], None
    for number, line in enumerate(source.splitlines(), 1):
        if line.strip() == "### BEGIN HIDDEN TESTS":
            start = number
        elif line.strip() == "### END HIDDEN TESTS" and start is not None:
            regions.append((start, number))
            start = None
    return regions


def _plain_hidden_asserts(source):
    """The first lines of the plain asserts in the cell's hidden tests that are not marked with
    NOTEBOOK_CHECK (on the assert's first line or on the line right above it)."""
    lines = source.splitlines()
    regions = _hidden_regions(source)
    asserts = sorted((node for node in ast.walk(ast.parse(source))
                      if isinstance(node, ast.Assert)), key=lambda node: node.lineno)
    return [lines[node.lineno - 1].strip() for node in asserts
            if any(start < node.lineno < end for start, end in regions)
            and NOTEBOOK_CHECK not in lines[node.lineno - 1]
            and lines[node.lineno - 2].strip() != NOTEBOOK_CHECK]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_hidden_checks_name_their_kind_of_failure(path):
    # A plain assert fails as kind "other", and the report of what the class got wrong
    # (collective_lib.autograde.misconceptions) cannot say why: a hidden check of the
    # submission raises CheckFailed(message, kind=...) instead. An assert that checks the
    # instructor's own notebook (not the student's work) may stay, marked with NOTEBOOK_CHECK.
    nb = nbformat.read(path, as_version=4)
    plain = {cell.metadata.nbgrader["grade_id"]: found for cell in nb.cells
             if cell.cell_type == "code" and (found := _plain_hidden_asserts(cell.source))}
    assert not plain, (
        f"plain asserts in hidden tests: {plain}\nraise CheckFailed(message, kind=...) "
        f"(collective_lib.grading.KINDS) instead, or mark an assert that checks the notebook "
        f"itself with {NOTEBOOK_CHECK!r}")
    # a misspelt kind would raise ValueError only when a submission fails the check
    from collective_lib.grading import KINDS

    named = {kind.value for cell in nb.cells if cell.cell_type == "code"
             for node in ast.walk(ast.parse(cell.source)) if isinstance(node, ast.Call)
             and getattr(node.func, "id", None) == "CheckFailed"
             for kind in node.args[1:2] + [k.value for k in node.keywords if k.arg == "kind"]
             if isinstance(kind, ast.Constant)}
    assert named <= set(KINDS), named - set(KINDS)


def test_the_plain_assert_finder_sees_hidden_asserts_only():
    source = ("assert visible, 'seen by students'\n### BEGIN HIDDEN TESTS\nfor x in xs:\n"
              "    assert (x ==\n            1), 'hidden'\n"
              f"    {NOTEBOOK_CHECK}\n    assert ok, 'the notebook was changed'\n"
              f"assert also_ok  {NOTEBOOK_CHECK}\n### END HIDDEN TESTS\nassert after\n"
              "### BEGIN HIDDEN TESTS\nassert second_region\n### END HIDDEN TESTS\n")
    assert _plain_hidden_asserts(source) == ["assert (x ==", "assert second_region"]
