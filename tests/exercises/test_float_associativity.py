"""nbgrader round trip of `float_associativity` (Sanders, Exercise 13.9): release, then autograde.

The source notebook is released with ``nbgrader generate_assignment`` (the release
must hide solutions and hidden tests), then the instructor's solution (full
marks) and wrong, crashing and endless submissions (partial marks, a helpful
message in the failing cell, and quick grading) are autograded in one nbgrader run.
"""
from __future__ import annotations

import pytest

import nbgrader_harness as h
from messages import flat
from exercise_submissions import (message_width_test, validate_tests, validated_fixture,
                                  visible_kind_test)

ASSIGNMENT = "float_associativity"


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

# Sums without a simulation: float32 additions from left to right for the binomial tree, from
# right to left for the in-order one. Near the exact sum, and different for the two trees on
# DATA (student audit: Validate's sum checks passed, then 0 of 3; Validate failed part (iii)
# instead, with a message about the values).
FORWARDS_BACKWARDS = '''
order = values if algorithm == "binomial_reduce" else values[::-1]
total = np.float32(0)
for v in order:
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

SIGNED_DIFFERENCE = '''
return float(simulated_sum(values, "binomial_reduce")) - float(simulated_sum(values, "binary_tree_reduce"))
'''

# The difference signed the other way: positive on DATA (the visible check sees no
# sign), so only hidden cases where the in-order tree gives the smaller sum can tell it
# from the answer (student audit: 2 of 2 and "Success!" while 6 of the 7 hidden cases
# had equal sums).
SIGNED_POSITIVE_ON_DATA = '''
return (float(simulated_sum(values, "binary_tree_reduce"))
        - float(simulated_sum(values, "binomial_reduce")))
'''

# Two stubs: no sum, no difference. The stub difference agrees with the stub sum, but
# that earns no points in part (ii) (student audit: 2 of 2 while (i) had 0 of 3).
SUM_STUB = '''
return np.float32(0.0)
'''

DIFFERENCE_STUB = '''
return 0.0
'''

HARMLESS_DATA = '''
my_values = [float(i) for i in range(16)]
'''

# Stubs that tell the two trees apart (student audit, tenth round): a "sum" of 1.0 for one
# tree and 0.0 for the other, a difference of 1.0 and zeros as data. The hidden test of (ii)
# took the stub difference for one that agrees with the student's own sum, since that sum
# gives the trees different results (2 of 2), and Validate said "Success!".
SUM_STUB_APART = '''
return np.float32(1.0 if algorithm == "binomial_reduce" else 0.0)
'''

DIFFERENCE_ONE = '''
return 1.0
'''

ZEROS = '''
my_values = [0.0] * 16
'''


# A tree_difference that keeps the student's own (wrong) simulated_sum as a default argument:
# right for that sum (red team, fourth round: 0 of 2, the grader's correct sum put in its
# place by the name only). The student's function now calls the grader's wherever it is
# held (grading.forwarding, eleventh round), and the hidden test still accepts agreement
# with the student's own sum where a replacement cannot reach it.
OWN_SUM_DIFFERENCE = '''
return abs(float(_sum(values, "binomial_reduce")) - float(_sum(values, "binary_tree_reduce")))
'''

# Right on DATA, then an int beyond any float: the hidden check's subtraction raised
# "OverflowError: int too large to convert to float" instead of saying what is wrong.
DIFFERENCE_HUGE_ELSEWHERE = '''
if list(values) != list(DATA):
    return 10 ** 400
return abs(float(simulated_sum(values, "binomial_reduce"))
           - float(simulated_sum(values, "binary_tree_reduce")))
'''


def build_submissions(source):
    built = h.submissions(source, {
        "double": ("sum_solution", DOUBLE_PRECISION),
        "left_to_right": ("sum_solution", LEFT_TO_RIGHT),
        "sum_crashes": ("sum_solution", SUM_CRASHES),
        "forwards_backwards": ("sum_solution", FORWARDS_BACKWARDS),
        "difference_spins": ("difference_solution", DIFFERENCE_SPINS),
        "signed_difference": ("difference_solution", SIGNED_DIFFERENCE),
        "harmless_data": ("data_solution", HARMLESS_DATA),
        "signed_positive_on_data": ("difference_solution", SIGNED_POSITIVE_ON_DATA),
        "difference_stub": ("difference_solution", DIFFERENCE_STUB),
        "difference_huge_elsewhere": ("difference_solution", DIFFERENCE_HUGE_ELSEWHERE),
        "stubs": [("sum_solution", SUM_STUB), ("difference_solution", DIFFERENCE_STUB)],
        "stubs_apart": [("sum_solution", SUM_STUB_APART),
                        ("difference_solution", DIFFERENCE_ONE), ("data_solution", ZEROS)],
        "double_kept_by_difference": [("sum_solution", DOUBLE_PRECISION),
                                      ("difference_solution", OWN_SUM_DIFFERENCE)],
    })
    cell = h.find_cell(built["double_kept_by_difference"], "difference_solution")
    cell.source = cell.source.replace("def tree_difference(values):",
                                      "def tree_difference(values, _sum=simulated_sum):")
    return built


graded = h.graded_fixture(ASSIGNMENT, build_submissions, spinning=["difference_spins"])


def test_release_hides_solution_and_hidden_tests(graded):
    course, _ = graded
    h.assert_release_hides(course, ASSIGNMENT, [
        "[1e8] + [1.0] * 7", "my_values = [", "def _sum(", "1e-6 * max",
        'abs(float(simulated_sum(values, "binomial_reduce"))', "Kahan",
        "inputs = [np.float32(v) for v in values]\n    run ="],
        shows=["def simulated_sum(values, algorithm):", "def tree_difference(values):",
               "YOUR ANSWER HERE", "DATA = [-0.802,"], unanswered=3)


def test_solution_gets_full_marks(graded):
    h.assert_solution_full_marks(graded, ASSIGNMENT,
                                 {"sum_tests", "difference_tests", "data_tests"}, 10,
                                 by_hand={"explain_consequences": 2})


FULL = {"sum_tests": 3, "difference_tests": 2, "data_tests": 3, "explain_consequences": 0,
        "explain_consequences_rubric": 0}


@pytest.mark.parametrize("student, message", [
    ("double", "simulated_sum(DATA, 'binomial_reduce') returned 26275034.22"),
    ("double", "which is not a float32 number"),
    ("double", "Did you convert the values to np.float32"),
    ("left_to_right", "simulated_sum gives 26275034.0 for both trees on DATA"),
    ("sum_crashes", "raised ValueError: op must be a callable binary operator"),
    # the visible check compares one sum with the simulation (without stating it)
    ("forwards_backwards", "simulated_sum(DATA, 'binomial_reduce') returned 26275034.0, "
                           "which is not the float32 sum that the simulated binomial tree"),
])
def test_wrong_sums_lose_only_their_points(graded, student, message):
    _, results = graded
    result = results[student]
    # tree_difference is graded with a correct simulated_sum, my_values with the reference
    assert result.scores == {**FULL, "sum_tests": 0}
    assert message in result.messages("sum_tests")


def test_a_difference_right_for_the_students_own_sum_keeps_its_points(graded):
    _, results = graded
    assert results["double_kept_by_difference"].scores == {**FULL, "sum_tests": 0}


def test_no_message_states_the_sum_of_data(graded):
    """The float32 sums of DATA are what part (i) computes: no check states them."""
    course, results = graded
    assert "26275032" not in h.released_text(course, ASSIGNMENT)
    for student in ("double", "left_to_right", "sum_crashes", "forwards_backwards"):
        assert "26275032" not in results[student].messages("sum_tests")


def test_a_crashing_sum_is_not_charged_again_in_part_ii(graded):
    _, results = graded
    cell = h.find_cell(results["sum_crashes"].notebook, "difference_tests")
    shown = "".join(out.get("text", "") for out in cell.outputs)
    assert "Cannot check tree_difference yet: simulated_sum(DATA, ...) fails (see part (i))" in shown


def test_a_difference_beyond_any_float_is_not_a_number(graded):
    _, results = graded
    result = results["difference_huge_elsewhere"]
    assert result.scores == {**FULL, "difference_tests": 0}
    text = flat(result.messages("difference_tests"))
    assert "values returned 1000" in text and "expected a finite number" in text, text
    assert "OverflowError" not in text, text


def test_endless_difference(graded):
    _, results = graded
    result = results["difference_spins"]
    assert result.scores == {**FULL, "difference_tests": 0}
    assert "did not return within 5 s of real time" in result.messages("difference_tests")


def test_signed_difference_loses_only_its_points(graded):
    _, results = graded
    result = results["signed_difference"]
    assert result.scores == {**FULL, "difference_tests": 0}
    # the visible check: an absolute difference is never negative
    assert "tree_difference(DATA) returned -4.0, a negative number" in \
        result.messages("difference_tests")


def test_a_difference_without_abs_loses_its_points(graded):
    """The hidden cases hold sums that differ both ways round: a missing abs fails."""
    _, results = graded
    result = results["signed_positive_on_data"]
    assert result.scores == {**FULL, "difference_tests": 0}
    assert "but |binomial - in-order| =" in result.messages("difference_tests")


def test_a_stub_difference_earns_nothing_from_a_stub_sum(graded):
    _, results = graded
    result = results["stubs"]
    # my_values is judged with the reference sums, so part (iii) keeps its points
    assert result.scores == {**FULL, "sum_tests": 0, "difference_tests": 0}
    assert "tree_difference for 16 values returned 0.0, but |binomial - in-order| =" \
        in result.messages("difference_tests")


def test_stubs_that_tell_the_trees_apart_earn_nothing(graded):
    """A stub sum that gives the two trees different constants does not make a constant
    difference right: (ii) accepts agreement with the student's own sum only if that one
    adds up values (it is right on whole numbers, which no tree rounds)."""
    _, results = graded
    result = results["stubs_apart"]
    assert result.scores == {**FULL, "sum_tests": 0, "difference_tests": 0, "data_tests": 0}
    assert "tree_difference for 16 values returned 1.0, but |binomial - in-order| =" \
        in result.messages("difference_tests")
    # the visible check of (i) compares the sums with the exact sum of DATA
    assert "simulated_sum(DATA, 'binomial_reduce') returned 1.0," in result.messages("sum_tests")


def test_a_stub_difference_fails_the_visible_check_of_part_ii(graded):
    """With a right simulated_sum, the visible check compares with what that one says."""
    _, results = graded
    result = results["difference_stub"]
    assert result.scores == {**FULL, "difference_tests": 0}
    assert "tree_difference(DATA) returned 0.0, but by your simulated_sum the two trees " \
        "differ by 4.0 on DATA" in result.messages("difference_tests")


def test_harmless_data_gets_no_data_points(graded):
    _, results = graded
    result = results["harmless_data"]
    assert result.scores == {**FULL, "data_tests": 0}
    assert "they differ by 0.0, but the difference must be at least max(1, half the exact " \
           "sum 120.0) = 60.0" in result.messages("data_tests")
    # that is the hidden check: the report of what the class got wrong counts a wrong answer
    assert result.cell("data_tests").metadata["collective_lib"] == {"failure": "wrong_entry"}
    # the visible part measured it with the student's own tree_difference first
    cell = h.find_cell(result.notebook, "data_tests")
    shown = "".join(out.get("text", "") for out in cell.outputs)
    assert "tree_difference(my_values) = 0.0; needed: max(1, half the exact sum) = 60.0" in shown
    # the hint does not spell out part (iii)'s answer
    assert "huge values that cancel" not in result.messages("data_tests")


# -- what the Validate button says (the visible checks, in a student's saved notebook) --------

#: Submissions whose bug a student's Validate must report, with the start of what it says.
#: (difference_spins is left out to keep the test short: the guarded call that stops
#: sum_crashes stops it, after 5 s.)
CAUGHT_BY_VALIDATE = {
    "double": "simulated_sum(DATA, 'binomial_reduce') returned 26275034.22",
    "left_to_right": "simulated_sum gives 26275034.0 for both trees on DATA",
    "sum_crashes": "simulated_sum([-0.802, -1324.359, -24836.162",
    # no simulation, but a sum near the exact one and different for the two trees: part
    # (i)'s visible check compares one sum with the simulation
    "forwards_backwards": "simulated_sum(DATA, 'binomial_reduce') returned 26275034.0, "
                          "which is not",
    "signed_difference": "tree_difference(DATA) returned -4.0, a negative number",
    "harmless_data": "by your tree_difference the two trees differ by 0.0 on my_values",
    # with a right simulated_sum, part (ii)'s visible check sees it (not only (iii))
    "difference_stub": "tree_difference(DATA) returned 0.0, but by your simulated_sum",
    # constants for sums: far from any float32 sum of DATA
    "stubs_apart": "simulated_sum(DATA, 'binomial_reduce') returned 1.0, but a float32 sum "
                   "of DATA",
}

validated = validated_fixture(ASSIGNMENT, build_submissions, [*CAUGHT_BY_VALIDATE],
                              written={"explain_consequences": "A written answer."})


test_validate_passes_the_solution, test_validate_reports_each_named_bug = validate_tests(
    {student: f"AssertionError: {start}" for student, start in CAUGHT_BY_VALIDATE.items()})


test_a_visible_check_records_its_kind_of_failure = visible_kind_test([
    ("signed_difference", "difference_tests", "wrong_result"),
])


test_no_line_of_a_message_is_cut_by_validate = message_width_test()
