"""nbgrader round trip of the chapter-2 exercises: min_location and float_associativity.

As in test_exercises.py: each assignment is released with ``nbgrader
generate_assignment`` (the release must hide solutions and hidden tests), then
the instructor's solution (full marks) and wrong, crashing and endless
submissions (partial marks, a helpful message in the failing cell, and quick
grading) are autograded in one nbgrader run per assignment.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import nbgrader_harness as h

# -- min_location (Sanders, Exercise 13.8) ---------------------------------------------------

MINLOC = "min_location"

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

WRONG_ANSWERS = '''
min_loc_is_commutative = False
keep_left_is_commutative = True
'''


def grade_minloc(workdir: Path):
    def submissions(source):
        def bad(cell, code):
            return h.replace_solution(source, cell, code)

        return {
            "solution": source,
            "keep_left": bad("min_loc_solution", KEEP_LEFT),
            "ties_right": bad("min_loc_solution", TIES_TO_THE_RIGHT),
            "crashes": bad("min_loc_solution", MIN_LOC_CRASHES),
            "spins": bad("min_loc_solution", MIN_LOC_SPINS),
            "no_reduction": bad("runner_solution", RUNNER_WITHOUT_REDUCTION),
            "wrong_answers": bad("commutative_answer", WRONG_ANSWERS),
        }

    return h.release_and_grade(workdir / "course", MINLOC, submissions, grade=h.grade_all)


# -- float_associativity (Sanders, Exercise 13.9) --------------------------------------------

FLOAT = "float_associativity"

DOUBLE_PRECISION = '''
run = algorithms[algorithm].simulate(len(values), inputs=[float(v) for v in values])
return run.results[0]
'''

LEFT_TO_RIGHT = '''
total = np.float32(0)
for v in values:
    total = np.float32(total + np.float32(v))
return total
'''

SUM_CRASHES = '''
return algorithms[algorithm].simulate(len(values), inputs=values, op="+").results[0]
'''

DIFFERENCE_SPINS = '''
d = 0.0
while d >= 0:                            # the loop never ends
    d += 1.0
return d
'''

HARMLESS_DATA = '''
my_values = [float(i) for i in range(16)]
'''


def grade_float(workdir: Path):
    def submissions(source):
        def bad(cell, code):
            return h.replace_solution(source, cell, code)

        return {
            "solution": source,
            "double": bad("sum_solution", DOUBLE_PRECISION),
            "left_to_right": bad("sum_solution", LEFT_TO_RIGHT),
            "sum_crashes": bad("sum_solution", SUM_CRASHES),
            "difference_spins": bad("difference_solution", DIFFERENCE_SPINS),
            "harmless_data": bad("data_solution", HARMLESS_DATA),
        }

    return h.release_and_grade(workdir / "course", FLOAT, submissions, grade=h.grade_all)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Release and grade both assignments side by side (nbgrader runs in subprocesses)."""
    jobs = {"minloc": grade_minloc, "float": grade_float}
    return h.grade_side_by_side(jobs, tmp_path_factory)


@pytest.fixture(scope="module")
def minloc(graded):
    return graded["minloc"]


@pytest.fixture(scope="module")
def floats(graded):
    return graded["float"]


# -- min_location ---------------------------------------------------------------------------

def test_minloc_release_hides_solution_and_hidden_tests(minloc):
    course, _, _ = minloc
    text = h.released_text(course, MINLOC)
    for secret in ["BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS",
                   "(a[0], a[1]) <=", "_reference", "check_operator_in_reductions", "_counting",
                   "min_loc_is_commutative = True", "keep_left_is_commutative = False",
                   "lexicographic", "op=min_loc, **params", "total order"]:
        assert secret not in text, f"the release gives away {secret!r}"
    assert "def min_loc(a, b):" in text
    assert 'def reduce_min_location(values, algorithm="binomial_reduce", **params):' in text
    assert text.count("raise NotImplementedError()") == 3
    assert "YOUR ANSWER HERE" in text
    # the visible sanity checks stay
    assert "min_loc((2, 5), (2, 1)) should be (2, 1)" in text


def test_minloc_solution_gets_full_marks(minloc):
    _, results, _ = minloc
    result = results["solution"]
    assert set(h.autograded_ids(result)) == {"min_loc_tests", "any_order_tests", "runner_tests",
                                           "commutative_tests"}
    h.assert_full_marks(result)
    assert result.max_scores["explain_commutative"] == 2          # graded by hand
    assert result.max_score == 11


def test_minloc_keep_left_passes_in_rank_order_only(minloc):
    _, results, _ = minloc
    result = results["keep_left"]
    assert result.scores == {"min_loc_tests": 3, "any_order_tests": 0, "runner_tests": 2,
                             "commutative_tests": 2, "explain_commutative": 0}
    text = result.messages("any_order_tests")
    assert ("binomial_reduce with your operator min_loc on p=3 PEs, root=2: PE 2 returned (0, 2), "
            "but (0, 0) was expected") in text
    assert "combined the operands of the PEs in this order: 2,0:1" in text
    assert "does not combine the PEs in rank order" in text


def test_minloc_ties_to_the_right_fails_everywhere(minloc):
    _, results, _ = minloc
    result = results["ties_right"]
    assert result.scores["min_loc_tests"] == result.scores["any_order_tests"] == 0
    assert result.scores["runner_tests"] == 2          # graded with a correct operator
    assert "the reduction of [5, 2, 7, 2] should give (2, 1), got (2, 3)" in \
        result.messages("min_loc_tests")


@pytest.mark.parametrize("student, message", [
    ("crashes", "min_loc((3, 0), (1, 1)) raised AttributeError"),
    ("crashes", "`return a.value if a.value < b.value else b`"),
    ("spins", "did not return within 5 s of real time"),
])
def test_minloc_broken_operators_get_no_operator_points(minloc, student, message):
    _, results, _ = minloc
    result = results[student]
    assert result.scores["min_loc_tests"] == result.scores["any_order_tests"] == 0
    assert result.scores["commutative_tests"] == 2
    assert message in result.messages("min_loc_tests")


def test_minloc_runner_must_use_the_reduction(minloc):
    _, results, _ = minloc
    result = results["no_reduction"]
    assert result.scores["runner_tests"] == 0
    assert result.scores["min_loc_tests"] == 3 and result.scores["any_order_tests"] == 2
    assert "combined only 0 pairs with min_loc" in result.messages("runner_tests")


def test_minloc_wrong_answers_cost_their_points(minloc):
    _, results, _ = minloc
    result = results["wrong_answers"]
    assert result.scores["commutative_tests"] == 0
    assert result.scores["min_loc_tests"] == 3 and result.scores["runner_tests"] == 2
    assert "min_loc_is_commutative: try min_loc(a, b) and min_loc(b, a)" in \
        result.messages("commutative_tests")


def test_minloc_grading_is_quick(minloc):
    _, _, seconds = minloc
    assert seconds < 120, f"autograding 7 submissions took {seconds:.0f} s"


# -- float_associativity --------------------------------------------------------------------

def test_float_release_hides_solution_and_hidden_tests(floats):
    course, _, _ = floats
    text = h.released_text(course, FLOAT)
    for secret in ["BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS",
                   "[1e8] + [1.0] * 7", "my_values = [", "def _sum(", "1e-6 * max",
                   'abs(float(simulated_sum(values, "binomial_reduce"))', "Kahan",
                   "inputs = [np.float32(v) for v in values]\n    run ="]:
        assert secret not in text, f"the release gives away {secret!r}"
    for signature in ["def simulated_sum(values, algorithm):", "def tree_difference(values):"]:
        assert signature in text
    assert text.count("raise NotImplementedError()") == 3
    assert "YOUR ANSWER HERE" in text
    assert "DATA = [-0.802," in text


def test_float_solution_gets_full_marks(floats):
    _, results, _ = floats
    result = results["solution"]
    assert set(h.autograded_ids(result)) == {"sum_tests", "difference_tests", "data_tests"}
    h.assert_full_marks(result)
    assert result.max_scores["explain_consequences"] == 2         # graded by hand
    assert result.max_score == 10


@pytest.mark.parametrize("student, message", [
    ("double", "the binomial tree's float32 sum of DATA is 26275032.0, yours is 26275034.22"),
    ("double", "Did you convert the values to np.float32"),
    ("left_to_right", "yours is 26275034.0"),
])
def test_float_wrong_sums_lose_only_their_points(floats, student, message):
    _, results, _ = floats
    result = results[student]
    # tree_difference is graded with a correct simulated_sum, my_values with the reference
    assert result.scores == {"sum_tests": 0, "difference_tests": 2, "data_tests": 3,
                             "explain_consequences": 0}
    assert message in result.messages("sum_tests")


def test_float_crashing_sum(floats):
    _, results, _ = floats
    result = results["sum_crashes"]
    # the visible part of the difference test needs a working simulated_sum; my_values does not
    assert result.scores == {"sum_tests": 0, "difference_tests": 0, "data_tests": 3,
                             "explain_consequences": 0}
    assert "raised ValueError: op must be a callable binary operator" in result.messages("sum_tests")
    assert "tree_difference([-0.802, " in result.messages("difference_tests")


def test_float_endless_difference(floats):
    _, results, _ = floats
    result = results["difference_spins"]
    assert result.scores["difference_tests"] == 0 and result.scores["sum_tests"] == 3
    assert "did not return within 5 s of real time" in result.messages("difference_tests")


def test_float_harmless_data_gets_no_data_points(floats):
    _, results, _ = floats
    result = results["harmless_data"]
    assert result.scores["data_tests"] == 0 and result.scores["sum_tests"] == 3
    assert "they differ by 0.0, but the difference must be at least max(1, half the exact " \
           "sum 120.0) = 60.0" in result.messages("data_tests")


def test_float_grading_is_quick(floats):
    _, _, seconds = floats
    assert seconds < 120, f"autograding 6 submissions took {seconds:.0f} s"
