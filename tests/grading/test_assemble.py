"""``assemble``: the instructor's cells from the gradebook, each student cell after its anchor."""

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from nbformat.notebooknode import NotebookNode

from collective_lib.autograde.verdict import assemble

# The gradebook's view of a small assignment: set-up, task text, test.
CELLS = {name: NotebookNode(name=name, cell_type=cell_type, source=source, checksum="",
                            kind=kind, points=points)
         for name, cell_type, source, kind, points in (
             ("intro", "markdown", "# Task", None, None),
             ("data", "code", "WORDS = [1, 2]", None, None),
             ("tests", "code", "assert f(WORDS) == 3", "test", 2.0))}


def _cell(grade_id, source, kind="code"):
    make = new_code_cell if kind == "code" else new_markdown_cell
    cell = make(source)
    if grade_id is not None:
        cell.metadata["nbgrader"] = {"grade_id": grade_id, "locked": True}
    return cell


def _submission(*cells):
    return new_notebook(cells=list(cells))


def _layout(roles):
    return [(cell.metadata.get("nbgrader", {}).get("grade_id") or cell.source, role)
            for cell, role in roles]


def test_an_untouched_notebook_stays_as_it_was():
    nb = _submission(_cell("intro", "# Task", "markdown"), _cell("data", "WORDS = [1, 2]"),
                     _cell("answer", "def f(w): return sum(w)"),
                     _cell("tests", "assert f(WORDS) == 3"))
    nb.cells[2].metadata["nbgrader"] = {"grade_id": "answer", "solution": True}
    roles, notes = assemble(nb, CELLS)
    assert _layout(roles) == [("intro", "trusted"), ("data", "trusted"),
                              ("answer", "student"), ("tests", "graded")]
    assert notes == []


def test_deleted_cells_come_back_right_after_the_cell_before_them():
    nb = _submission(_cell("intro", "# Task", "markdown"), _cell(None, "WORDS = [9]"),
                     _cell(None, "def f(w): return 3"))
    roles, notes = assemble(nb, CELLS)
    assert _layout(roles) == [("intro", "trusted"), ("data", "trusted"), ("tests", "graded"),
                              ("WORDS = [9]", "student"), ("def f(w): return 3", "student")]
    assert notes == ["the assignment's cells `data`, `tests` were missing from your notebook "
                     "and were put back"]
    restored = roles[1][0]
    assert restored.source == "WORDS = [1, 2]" and restored.metadata["editable"] is False
    assert roles[2][0].metadata["nbgrader"]["points"] == 2.0
    nbformat.validate(nb)


def test_moved_edited_and_copied_cells_are_the_instructors_in_their_places():
    nb = _submission(_cell("tests", "pass"), _cell(None, "def f(w): return 3"),
                     _cell("data", "WORDS = [1, 2]"), _cell("tests", "assert True"),
                     _cell("intro", "# Task", "markdown"))
    roles, notes = assemble(nb, CELLS)
    layout = _layout(roles)
    assert [name for name, role in layout if role != "student"] == ["intro", "data", "tests"]
    assert [cell.source for cell, role in roles if role == "graded"] == ["assert f(WORDS) == 3"]
    # the student's function stays after the (moved) test cell it followed; the copy of
    # the test cell, which followed `data`, is the student's own, without the metadata
    assert layout[2:] == [("assert True", "student"), ("tests", "graded"),
                          ("def f(w): return 3", "student")]
    assert "nbgrader" not in roles[2][0].metadata
    assert any("moved" in note for note in notes) and any("changed" in note for note in notes)
