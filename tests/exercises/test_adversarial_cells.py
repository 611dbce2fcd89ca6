"""The instructor's cells come from the gradebook, whatever a submission did to them.

An attack of the second round: in ``fit_and_predict``, deleting the locked
``data`` cell (or moving it below the tests) and defining ``math``, ``np``,
``TRUE_TS``, ``TRUE_TW``, ``WORDS`` and ``ROUND_TRIPS`` in an answer cell (a
``math`` whose ``isclose`` always returns True) scored 7/7 with a
``fit_ping_pong`` that returns ``(1.0, 1.0)``. Each payload below is built from
the released notebook; all are graded in one ``nbgrader autograde`` run beside
an honest submission, and the cells a submission lost are put back, in their
places, with a note (``collective_lib.autograde.verdict.assemble``).
"""

import textwrap

import nbformat
import pytest

import nbgrader_harness as h

ASSIGNMENT = "fit_and_predict"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"

# The answer cell of the attack: the names the `data` cell would have defined, forged.
FORGED = '''
import types

math = types.SimpleNamespace(isclose=lambda *args, **kwargs: True,
                             isfinite=lambda x: True)


class _Anything:
    def __getattr__(self, name):
        return lambda *args, **kwargs: [1.0] * 21


np = _Anything()
TRUE_TS = TRUE_TW = 1.0
WORDS = [1] * 21
ROUND_TRIPS = [2.0] * 21


def fit_ping_pong(words, round_trips):
    return (1.0, 1.0)
'''


def _cell(nb, grade_id):
    return next(i for i, c in enumerate(nb.cells)
                if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _ids(result):
    """The grade ids of the autograded notebook's cells, in order."""
    return [c.metadata.get("nbgrader", {}).get("grade_id") for c in result.notebook.cells]


def _edited(nb, change):
    nb = nbformat.from_dict(nb)
    change(nb)
    return nb


def _forge(nb):
    nb.cells[_cell(nb, "fit_solution")].source = textwrap.dedent(FORGED).strip()


def _delete_data(nb):
    _forge(nb)
    del nb.cells[_cell(nb, "data")]


def _move_data_below_tests(nb):
    _forge(nb)
    data = nb.cells.pop(_cell(nb, "data"))
    nb.cells.insert(_cell(nb, "fit_tests") + 1, data)


def _unlock_and_empty_tests(nb):
    _forge(nb)
    del nb.cells[_cell(nb, "data")]
    tests = nb.cells[_cell(nb, "fit_tests")]
    tests.metadata.pop("nbgrader")              # a plain cell: no id, no lock
    tests.source = "pass"


def _duplicate_tests_above_answer(nb):
    _forge(nb)
    del nb.cells[_cell(nb, "data")]
    copy = nbformat.from_dict(nb.cells[_cell(nb, "fit_tests")])
    copy.id = "copied-tests"
    nb.cells.insert(_cell(nb, "fit_solution"), copy)


def _delete_tests(nb):
    _forge(nb)
    del nb.cells[_cell(nb, "fit_tests")]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course, released, solved = h.released_course(
        tmp_path_factory.mktemp("adversarial-cells") / "course", ASSIGNMENT)
    payloads = {
        "honest": solved,
        "honest_without_data": _edited(solved, lambda nb: nb.cells.pop(_cell(nb, "data"))),
        "deleted_data": _edited(released, _delete_data),
        "moved_data": _edited(released, _move_data_below_tests),
        "unlocked_tests": _edited(released, _unlock_and_empty_tests),
        "duplicated_tests": _edited(released, _duplicate_tests_above_answer),
        "deleted_tests": _edited(released, _delete_tests),
    }
    return h.autograde_many(course, ASSIGNMENT, payloads)


def test_an_honest_submission_keeps_full_marks(graded):
    h.assert_full_marks(graded["honest"])
    assert "Note from the grader" not in graded["honest"].notebook.cells[0].source


def test_a_lost_setup_cell_is_put_back_and_said(graded):
    result = graded["honest_without_data"]
    h.assert_full_marks(result)
    note = result.notebook.cells[0].source
    assert "Note from the grader" in note and "`data`" in note and "put back" in note, note
    ids = _ids(result)
    assert ids.index("data") < ids.index("fit_solution") < ids.index("fit_tests")


@pytest.mark.parametrize("student", ["deleted_data", "moved_data", "unlocked_tests",
                                     "duplicated_tests", "deleted_tests"])
def test_forged_setup_names_earn_nothing(graded, student):
    result = graded[student]
    assert result.scores["fit_tests"] == 0, (student, result.scores, result.messages())
    # the forged TRUE_TS = TRUE_TW = 1.0 would let the fit (1.0, 1.0) pass this check
    assert "your fit gives ts = 1, tw = 1: more than 20% off the constants that made the data" in (
        " ".join(result.messages("fit_tests").split())), (
        "the instructor's own data, not the forged one, must decide the check")


def test_every_instructor_cell_is_there_once_in_its_place(graded):
    source = nbformat.read(h.EXERCISES_DIR / "source" / ASSIGNMENT / NOTEBOOK, as_version=4)
    order = [c.metadata["nbgrader"]["grade_id"] for c in source.cells
             if c.metadata.get("nbgrader", {}).get("locked")]
    for student, result in graded.items():
        ids = [i for i in _ids(result) if i in order]
        assert ids == order, (student, ids)


def test_the_note_names_what_happened(graded):
    notes = {student: result.notebook.cells[0].source for student, result in graded.items()}
    assert "`data`" in notes["moved_data"] and "moved" in notes["moved_data"]
    assert "`fit_tests`" in notes["unlocked_tests"] and "put back" in notes["unlocked_tests"]
    assert "`fit_tests`" in notes["deleted_tests"]
