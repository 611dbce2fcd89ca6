"""A submission's nbgrader metadata is only what the gradebook vouches for.

Attacks of the third round, on the JSON of a submitted notebook: a cell whose
nbgrader metadata is a string, a new test cell with a grade id the assignment
does not have, a copy of a test cell worth 100 points, the answer cell relabelled
as a locked test worth 100 points. nbgrader stopped on each before any grading:
no autograded notebook, and a regrade of a student whose new submission did this
left the gradebook with the previous submission's full marks. Now each such cell
is the student's own (or gets its role back from the gradebook,
``collective_lib.autograde.verdict.DeduplicateCells``), and every submission is
graded.
"""

import nbformat
import pytest

import nbgrader_harness as h

ASSIGNMENT = "gray_codes"
WRONG = "def gray_of(i):\n    return 0\n\n\ndef gray_rank(g):\n    return 0\n"


def _test_cell(grade_id, points=100, locked=True):
    cell = nbformat.v4.new_code_cell("pass")
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": locked,
                                 "points": points, "grade_id": grade_id, "schema_version": 3}
    return cell


def _metadata_string(nb):
    nb.cells.insert(1, nbformat.v4.new_code_cell("x = 1"))
    nb.cells[1].metadata["nbgrader"] = "grade"


def _unknown_test(nb):
    nb.cells.append(_test_cell("bonus", locked=False))


def _copied_test(nb):
    nb.cells.insert(0, _test_cell("gray_tests"))


def _answer_as_test(nb):
    h.find_cell(nb, "gray_solution").metadata["nbgrader"].update(
        grade=True, points=100, locked=True, solution=False)


ATTACKS = {"metadata_string": _metadata_string, "unknown_test": _unknown_test,
           "copied_test": _copied_test, "answer_as_test": _answer_as_test}


def _attacked(released, attack, answer=WRONG):
    nb = nbformat.from_dict(released)
    h.find_cell(nb, "gray_solution").source = answer
    attack(nb)
    return nb


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course, released, source = h.released_course(
        tmp_path_factory.mktemp("metadata") / "course", ASSIGNMENT)
    honest = h.answered_release(released, source)
    first = h.autograde_many(course, ASSIGNMENT, {"regraded": honest})
    # every attack on a wrong answer, and the regraded student's next submission: wrong, with
    # a cell whose metadata is a string
    later = {student: _attacked(released, attack) for student, attack in ATTACKS.items()}
    later["regraded"] = _attacked(released, _metadata_string)
    return first, h.autograde_many(course, ASSIGNMENT, later)


def test_every_edited_submission_is_graded_and_earns_nothing(graded):
    _, results = graded
    for student in ATTACKS:
        result = results[student]
        assert result.scores == {"gray_tests": 0, "transitions_tests": 0, "index_tests": 0}, \
            (student, result.scores)
        assert result.max_score == 8, (student, result.max_score)       # no cell worth 100


def test_a_regrade_replaces_the_scores_of_the_previous_submission(graded):
    first, results = graded
    h.assert_full_marks(first["regraded"])
    assert results["regraded"].total == 0, results["regraded"].scores
