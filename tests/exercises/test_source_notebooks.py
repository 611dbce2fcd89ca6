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


# -- every check of a graded cell that judges the submission says why it failed -----------------

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


def _plain_asserts(source):
    """{"hidden": [...], "visible": [...]}: the first lines of the plain asserts of a graded
    cell, in its hidden tests and in the part students see, that are not marked with
    NOTEBOOK_CHECK (on the assert's first line or on the line right above it)."""
    lines = source.splitlines()
    regions = _hidden_regions(source)
    asserts = sorted((node for node in ast.walk(ast.parse(source))
                      if isinstance(node, ast.Assert)), key=lambda node: node.lineno)
    found = {"hidden": [], "visible": []}
    for node in asserts:
        if (NOTEBOOK_CHECK in lines[node.lineno - 1]
                or node.lineno > 1 and lines[node.lineno - 2].strip() == NOTEBOOK_CHECK):
            continue
        hidden = any(start < node.lineno < end for start, end in regions)
        found["hidden" if hidden else "visible"].append(lines[node.lineno - 1].strip())
    return found


def _kinds(source):
    """The kind each CheckFailed(...) of a cell names: a constant, "<caught>.kind" for the kind
    of an exception it passes on (`kind=err.kind`), or None where it names none (then the
    failure counts as "other")."""
    kinds = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "CheckFailed":
            kind = (node.args[1:2] + [k.value for k in node.keywords if k.arg == "kind"]
                    or [None])[0]
            if isinstance(kind, ast.Constant):
                kinds.append(kind.value)
            elif isinstance(kind, ast.Attribute) and kind.attr == "kind":
                kinds.append("<caught>.kind")
            else:
                kinds.append(None if kind is None else ast.unparse(kind))
    return kinds


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_graded_checks_name_their_kind_of_failure(path):
    # A plain assert fails as kind "other", and the report of what the class got wrong
    # (collective_lib.autograde.misconceptions) cannot say why: a check of the submission, in
    # the hidden tests or in the part of a graded cell students see (and run in Validate),
    # raises CheckFailed(message, kind=...) instead. An assert that checks the instructor's own
    # notebook (not the student's work) may stay, marked with NOTEBOOK_CHECK.
    from collective_lib.grading import KINDS

    nb = nbformat.read(path, as_version=4)
    graded = [cell for cell in nb.cells
              if cell.cell_type == "code" and cell.metadata.nbgrader.get("grade")]
    for part in ("hidden", "visible"):
        plain = {cell.metadata.nbgrader["grade_id"]: found for cell in graded
                 if (found := _plain_asserts(cell.source)[part])}
        assert not plain, (
            f"plain asserts in the {part} part of graded cells: {plain}\nraise "
            f"CheckFailed(message, kind=...) (collective_lib.grading.KINDS) instead, or mark "
            f"an assert that checks the notebook itself with {NOTEBOOK_CHECK!r}")
    # a misspelt kind would raise ValueError only when a submission fails the check, and a
    # CheckFailed without one counts as "other"
    named = {cell.metadata.nbgrader["grade_id"]: set(_kinds(cell.source)) for cell in nb.cells
             if cell.cell_type == "code"}
    unknown = {gid: kinds - set(KINDS) - {"<caught>.kind"} for gid, kinds in named.items()
               if kinds - set(KINDS) - {"<caught>.kind"}}
    assert not unknown, f"CheckFailed with no kind or an unknown one: {unknown}"


def test_the_plain_assert_finder_tells_hidden_from_visible_asserts():
    source = ("assert visible, 'seen by students'\n### BEGIN HIDDEN TESTS\nfor x in xs:\n"
              "    assert (x ==\n            1), 'hidden'\n"
              f"    {NOTEBOOK_CHECK}\n    assert ok, 'the notebook was changed'\n"
              f"assert also_ok  {NOTEBOOK_CHECK}\n### END HIDDEN TESTS\nassert after\n"
              f"{NOTEBOOK_CHECK}\nassert visible_but_marked\n"
              "### BEGIN HIDDEN TESTS\nassert second_region\n### END HIDDEN TESTS\n")
    assert _plain_asserts(source) == {"hidden": ["assert (x ==", "assert second_region"],
                                      "visible": ["assert visible, 'seen by students'",
                                                  "assert after"]}


def test_the_kind_finder_sees_constants_caught_kinds_and_missing_ones():
    source = ("raise CheckFailed('a', kind='wrong_result')\nraise CheckFailed('b', 'deadlock')\n"
              "raise CheckFailed('c', kind=_err.kind)\nraise CheckFailed('d')\n"
              "raise CheckFailed('e', kind=pick())\n")
    assert _kinds(source) == ["wrong_result", "deadlock", "<caught>.kind", None, "pick()"]


# -- a test cell runs after the cells a student runs, not after other test cells ------------------

def _without_hidden_tests(source):
    """What a student's copy of a cell holds: ``source`` without its hidden tests."""
    lines = source.splitlines()
    for start, end in reversed(_hidden_regions(source)):
        del lines[start - 1:end]
    return "\n".join(lines)


def _names(source):
    """(defined, used): the names a cell binds at its top level, and the global names it or
    any function in it reads."""
    import symtable

    defined, used = set(), set()

    def walk(table, top):
        for symbol in table.get_symbols():
            if top and (symbol.is_assigned() or symbol.is_imported() or symbol.is_namespace()):
                defined.add(symbol.get_name())
            if symbol.is_referenced() and (top or symbol.is_global()):
                used.add(symbol.get_name())
        for child in table.get_children():
            walk(child, False)

    walk(symtable.symtable(source, "cell", "exec"), True)
    return defined, used


def _borrowed_from_test_cells(path):
    """``{grade_id: names}``: what the part of a test cell students see reads that only an
    earlier test cell defines."""
    nb = nbformat.read(path, as_version=4)
    elsewhere, in_tests, borrowed = set(), {}, {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        defined, used = _names(_without_hidden_tests(cell.source))
        if not cell.metadata.nbgrader.get("grade"):
            elsewhere |= defined
            continue
        names = {name for name in used - defined - elsewhere
                 if any(name in earlier for earlier in in_tests.values())}
        if names:
            borrowed[cell.metadata.nbgrader["grade_id"]] = sorted(names)
        in_tests[cell.metadata.nbgrader["grade_id"]] = defined
    return borrowed


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_a_test_cell_needs_no_other_test_cell(path):
    # A student who reruns one part's test cell after a restart runs the cells above its own
    # (the set-up and their answers), not the test cells of other parts: what a test cell's
    # visible part reads comes from a set-up cell, the student's cells or the cell itself.
    assert _borrowed_from_test_cells(path) == {}


def test_the_borrowing_finder_sees_names_from_other_test_cells(tmp_path):
    nb = nbformat.v4.new_notebook()
    setup = {"grade": False, "grade_id": "setup", "locked": True, "schema_version": 3,
             "solution": False, "task": False}
    graded = dict(setup, grade=True, points=1)
    nb.cells = [
        nbformat.v4.new_code_cell("import math\n", metadata={"nbgrader": setup}),
        nbformat.v4.new_code_cell(
            "import numbers\ndef _check(x):\n    return math.isfinite(x)\n",
            metadata={"nbgrader": dict(graded, grade_id="first")}),
        nbformat.v4.new_code_cell(
            "def f(y):\n    return _check(y) and isinstance(y, numbers.Real)\n"
            "### BEGIN HIDDEN TESTS\nimport numbers\n### END HIDDEN TESTS\nmath.pi\n",
            metadata={"nbgrader": dict(graded, grade_id="second")})]
    path = tmp_path / "borrow.ipynb"
    nbformat.write(nb, path)
    assert _borrowed_from_test_cells(path) == {"second": ["_check", "numbers"]}


# -- a number a student returns is read one way ---------------------------------------------------

@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_graded_checks_read_a_number_through_as_real(path):
    # isinstance(x, numbers.Real) admits an int of 400 digits, which math.isfinite and any
    # sum with a float then refuse with OverflowError instead of a message; as_real reads it
    # as no number (and a bool, a NaN or a Decimal as the task means them)
    nb = nbformat.read(path, as_version=4)
    own = {cell.metadata.nbgrader["grade_id"] for cell in nb.cells
           if cell.cell_type == "code" and cell.metadata.nbgrader.get("grade")
           and "numbers.Real" in cell.source}
    assert not own, f"test cells that read a number by numbers.Real, not as_real: {own}"
