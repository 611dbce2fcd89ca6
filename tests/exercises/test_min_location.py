"""nbgrader round trip of `min_location` (Sanders, Exercise 13.8): release, then autograde.

The source notebook is released with ``nbgrader generate_assignment`` (the release
must hide solutions and hidden tests), then the instructor's solution (full
marks) and wrong, crashing and endless submissions (partial marks, a helpful
message in the failing cell, and quick grading) are autograded in one nbgrader run.
"""
from __future__ import annotations

import pytest

import nbgrader_harness as h

ASSIGNMENT = "min_location"


KEEP_LEFT = '''
return a if a[0] <= b[0] else b          # associative, but not commutative
'''

TIES_TO_THE_RIGHT = '''
return a if a[0] < b[0] else b           # on a tie the right operand wins
'''

MIN_LOC_CRASHES = '''
return a.value if a.value < b.value else b
'''

MIN_LOC_SPINS = '''
while True:                              # never returns
    pass
'''

RUNNER_WITHOUT_REDUCTION = '''
smallest = min(values)
return (smallest, values.index(smallest))
'''

# keep_left as min_loc, and answers that are true of it: accepted in (iii)
HONEST_ANSWERS = '''
min_loc_is_commutative = False
keep_left_is_commutative = False
'''

WRONG_ANSWERS = '''
min_loc_is_commutative = False
keep_left_is_commutative = True
'''


def build_submissions(source):
    return h.submissions(source, {
        "keep_left": ("min_loc_solution", KEEP_LEFT),
        "ties_right": ("min_loc_solution", TIES_TO_THE_RIGHT),
        "crashes": ("min_loc_solution", MIN_LOC_CRASHES),
        "spins": ("min_loc_solution", MIN_LOC_SPINS),
        "no_reduction": ("runner_solution", RUNNER_WITHOUT_REDUCTION),
        "wrong_answers": ("commutative_answer", WRONG_ANSWERS),
        "keep_left_honest": [("min_loc_solution", KEEP_LEFT),
                             ("commutative_answer", HONEST_ANSWERS)],
    })


graded = h.graded_fixture(ASSIGNMENT, build_submissions)


def test_release_hides_solution_and_hidden_tests(graded):
    course, _ = graded
    h.assert_release_hides(course, ASSIGNMENT, [
        "(a[0], a[1]) <=", "_reference", "check_operator_in_reductions", "_counting",
        "min_loc_is_commutative = True", "keep_left_is_commutative = False",
        "lexicographic", "op=min_loc, **params", "total order"],
        shows=["def min_loc(a, b):",
               'def reduce_min_location(values, algorithm="binomial_reduce", **params):',
               "YOUR ANSWER HERE",
               "min_loc((2, 5), (2, 1)) should be (2, 1)"],      # the visible sanity checks stay
        unanswered=3)


def test_solution_gets_full_marks(graded):
    h.assert_solution_full_marks(
        graded, ASSIGNMENT,
        {"min_loc_tests", "any_order_tests", "runner_tests", "commutative_tests"}, 11,
        by_hand={"explain_commutative": 2})


FULL = {"min_loc_tests": 3, "any_order_tests": 2, "runner_tests": 2, "commutative_tests": 2,
        "explain_commutative": 0, "explain_commutative_rubric": 0}


def _shown(result, cell):
    return "".join(out.get("text", "") for out in result.cell(cell).outputs)


def test_keep_left_passes_in_rank_order_only(graded):
    _, results = graded
    result = results["keep_left"]
    assert result.scores == {**FULL, "any_order_tests": 0}
    text = result.messages("any_order_tests")
    assert ("binomial_reduce with your operator min_loc on p=3 PEs, root=2: PE 2 returned (0, 2), "
            "but (0, 0) was expected") in text
    assert "combined the operands of the PEs in this order: 2,0:1" in text
    assert "does not combine the PEs in rank order" in text
    # the visible check of (iii) warns about the operator without a deduction in (iii)
    assert ("Warning: your min_loc((1, 0), (1, 3)) = (1, 0) but min_loc((1, 3), (1, 0)) = "
            "(1, 3), so the operator you wrote in (i) is not commutative") in \
        _shown(result, "commutative_tests")


def test_answers_true_of_a_wrong_operator_keep_their_points(graded):
    _, results = graded
    assert results["keep_left_honest"].scores == {**FULL, "any_order_tests": 0}


def test_ties_to_the_right_fails_everywhere(graded):
    _, results = graded
    result = results["ties_right"]
    # wrong on ties in rank order and not commutative: both operator cells; the runner is graded
    # with a correct operator, and the answers in (iii) are true of the exercise's min_loc
    assert result.scores == {**FULL, "min_loc_tests": 0, "any_order_tests": 0}
    assert "the reduction of [5, 2, 7, 2] should give (2, 1), got (2, 3)" in \
        result.messages("min_loc_tests")


@pytest.mark.parametrize("student, message", [
    ("crashes", "min_loc((3, 0), (1, 1)) raised AttributeError"),
    ("crashes", "`return a.value if a.value < b.value else b`"),
    ("spins", "did not return within 5 s of real time"),
])
def test_broken_operators_get_no_operator_points(graded, student, message):
    _, results = graded
    result = results[student]
    assert result.scores["min_loc_tests"] == result.scores["any_order_tests"] == 0
    assert result.scores["commutative_tests"] == 2
    assert message in result.messages("min_loc_tests")


def test_runner_must_use_the_reduction(graded):
    _, results = graded
    result = results["no_reduction"]
    assert result.scores == {**FULL, "runner_tests": 0}
    assert "combined only 0 pairs with min_loc" in result.messages("runner_tests")


def test_wrong_answers_cost_their_points(graded):
    _, results = graded
    result = results["wrong_answers"]
    assert result.scores == {**FULL, "commutative_tests": 0}
    assert "min_loc_is_commutative: try min_loc(a, b) and min_loc(b, a)" in \
        result.messages("commutative_tests")

