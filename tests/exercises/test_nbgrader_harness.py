"""Round trip of a tiny throwaway assignment through the nbgrader harness.

The assignment is built in a temporary copy of the course, so this checks the
harness and the course configuration (exercises/nbgrader_config.py) without
depending on any real exercise.
"""


import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import nbgrader_harness as h

ASSIGNMENT = "harness_selftest"
NOTEBOOK = "doubling.ipynb"

SOLUTION_CELL = '''\
def f(x):
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION
'''

TEST_CELL = '''\
assert f(3) == 6, "f(3) should be 6"
### BEGIN HIDDEN TESTS
assert f(-5) == -10, "f(-5) should be -10"
### END HIDDEN TESTS
'''


def _nbgrader_meta(grade_id, *, solution=False, grade=False, locked=False, points=None):
    meta = {
        "grade_id": grade_id,
        "solution": solution,
        "grade": grade,
        "locked": locked,
        "schema_version": 3,
    }
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A copy of the course with the tiny assignment, already released."""
    course = h.copy_course(tmp_path_factory.mktemp("nbgrader") / "course")
    nb = new_notebook(
        cells=[
            new_markdown_cell("# Doubling\n\nWrite `f` so that it doubles its argument."),
            new_code_cell(SOLUTION_CELL, metadata=_nbgrader_meta("f_solution", solution=True)),
            new_code_cell(
                TEST_CELL,
                metadata=_nbgrader_meta("f_tests", grade=True, locked=True, points=2),
            ),
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    src = h.source_notebook(course, ASSIGNMENT, NOTEBOOK)
    src.parent.mkdir(parents=True)
    nbformat.write(nb, src)
    released = h.generate_assignment(course, ASSIGNMENT)
    assert [p.name for p in released] == [NOTEBOOK]
    return course


def test_release_hides_solution_and_hidden_tests(course):
    released = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    text = "\n".join(c.source for c in released.cells)
    assert "return 2 * x" not in text
    assert "f(-5)" not in text
    assert "BEGIN SOLUTION" not in text and "HIDDEN TESTS" not in text
    assert 'assert f(3) == 6' in text


def test_solution_gets_full_marks(course):
    result = h.autograde(course, ASSIGNMENT, h.source_notebook(course, ASSIGNMENT, NOTEBOOK),
                         student="solver")
    assert result.max_score == 2
    assert result.scores == {"f_tests": 2.0}
    assert result.total == result.max_score, result.messages()


def test_wrong_submission_gets_zero_with_message(course):
    wrong = h.replace_solution(h.source_notebook(course, ASSIGNMENT, NOTEBOOK), "f_solution",
                               "return x + 3")
    # passes the visible test (3 + 3 == 6) but not the hidden one
    assert "return x + 3" in h.find_cell(wrong, "f_solution").source
    result = h.autograde(course, ASSIGNMENT, wrong, student="wrong", notebook_name=NOTEBOOK)
    assert result.scores == {"f_tests": 0.0}
    assert result.total == 0
    assert "f(-5) should be -10" in result.messages("f_tests")


def test_crashing_submission_is_graded(course):
    crash = h.replace_solution(h.source_notebook(course, ASSIGNMENT, NOTEBOOK), "f_solution",
                               "raise RuntimeError('boom')")
    result = h.autograde(course, ASSIGNMENT, crash, student="crash", notebook_name=NOTEBOOK)
    assert result.total == 0
    assert "RuntimeError: boom" in result.messages()


def test_endless_submission_is_interrupted_and_graded(course):
    endless = h.replace_solution(
        h.source_notebook(course, ASSIGNMENT, NOTEBOOK), "f_solution",
        "while True:\n    pass",
    )
    result = h.autograde(course, ASSIGNMENT, endless, student="endless",
                         notebook_name=NOTEBOOK, timeout=3)
    assert result.total == 0
    # the loop runs when the test cell calls f: the trusted checker stops that
    # cell after its time limit and records why, which costs the cell's points
    assert "took longer than 3 s and were stopped" in result.messages("f_tests")


def test_replace_solution_rejects_cells_without_markers(course):
    with pytest.raises(ValueError, match="no ### BEGIN SOLUTION"):
        h.replace_solution(h.source_notebook(course, ASSIGNMENT, NOTEBOOK), "f_tests", "pass")
    with pytest.raises(KeyError, match="no cell with grade_id"):
        h.replace_solution(h.source_notebook(course, ASSIGNMENT, NOTEBOOK), "nope", "pass")


def test_answered_release_fills_the_answers_into_the_release(course):
    source = h.source_notebook(course, ASSIGNMENT, NOTEBOOK)
    released = course / "release" / ASSIGNMENT / NOTEBOOK
    wrong = h.replace_solution(source, "f_solution", "return x + x + 1")
    nb = h.answered_release(released, wrong)
    assert h.find_cell(nb, "f_solution").source == "def f(x):\n    return x + x + 1"
    # everything else is the release's, hidden tests stay hidden
    assert h.find_cell(nb, "f_tests").source == h.find_cell(
        nbformat.read(released, as_version=4), "f_tests").source
    with pytest.raises(KeyError, match="no written answer cell"):
        h.answered_release(released, wrong, written={"f_solution": "text"})
