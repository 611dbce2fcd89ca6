"""nbgrader round trip of `min_location` (Sanders, Exercise 13.8): release, then autograde.

The source notebook is released with ``nbgrader generate_assignment`` (the release
must hide solutions and hidden tests), then the instructor's solution (full
marks) and wrong, crashing and endless submissions (partial marks, a helpful
message in the failing cell, and quick grading) are autograded in one nbgrader run.
"""
from __future__ import annotations

import copy

import nbformat
import pytest

import nbgrader_harness as h
from exercise_submissions import (message_width_test, validate_tests, validated_fixture,
                                  visible_kind_test)

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
while a[0] == b[0]:                      # never returns on a tie (none in the first checks)
    pass
return a if (a[0], a[1]) <= (b[0], b[1]) else b
'''

# Always the result on PE 0: right for root 0 and the all-reduces only.
RUNNER_ON_PE_0 = '''
inputs = [(value, pe) for pe, value in enumerate(values)]
return algorithms[algorithm].simulate(len(values), inputs=inputs, op=min_loc, **params).results[0]
'''

# The extra parameters dropped: a reduction to PE 0, whose result is right for every root.
RUNNER_IGNORES_ROOT = '''
inputs = [(value, pe) for pe, value in enumerate(values)]
return algorithms[algorithm].simulate(len(values), inputs=inputs, op=min_loc).results[0]
'''

# The algorithm ignored (a student audit): binomial_reduce with the given root, whatever was
# asked for. Validate passed it (the visible all-reduce combines the same pairs), then the
# runner cell said 0/2 with a false hint to pass **params on.
RUNNER_IGNORES_ALGORITHM = '''
inputs = [(value, pe) for pe, value in enumerate(values)]
run = algorithms["binomial_reduce"].simulate(len(values), inputs=inputs, op=min_loc, **params)
return run.results[params.get("root", 0)]
'''

# Honest variants (a student audit) that keep full marks.
MIN_LOC_BUILTIN = '''
return min(a, b)                         # tuples compare value first, then the PE number
'''
MIN_LOC_NEW_TUPLE = '''
if a[0] == b[0]:
    return (a[0], min(a[1], b[1]))       # a new pair on a tie
return a if a[0] < b[0] else b
'''
RUNNER_FIRST_NOT_NONE = '''
inputs = [(value, pe) for pe, value in enumerate(values)]
run = algorithms[algorithm].simulate(len(values), inputs=inputs, op=min_loc, **params)
return next(result for result in run.results if result is not None)
'''

# min_loc bound when the function is defined, as a default argument (a student audit): the
# runner simulates the algorithm asked for with the student's own min_loc. The grader put its
# recording stand-in in place of min_loc by the name only, saw no pair combined, and gave
# 0/2 with "Run the simulation with op=min_loc", also in Validate. A whole cell: the
# default is in the line that defines the function.
RUNNER_BINDS_MIN_LOC = '''\
def reduce_min_location(values, algorithm="binomial_reduce", op=min_loc, **params):
    """(minimum, lowest PE holding it) of values, computed by a simulated reduction."""
    inputs = [(value, pe) for pe, value in enumerate(values)]
    run = algorithms[algorithm].simulate(len(values), inputs=inputs, op=op, **params)
    return run.results[params.get("root", 0)]
'''

# No simulation (an audit): min_loc called on every ordered pair of the inputs, p times each,
# a superset of the pairs that any reduction combines, then the answer computed directly:
# 2/2 and Validate passed, since the check only asked for the reduction's calls among them.
RUNNER_EVERY_PAIR = '''
pairs = [(value, pe) for pe, value in enumerate(values)]
for a in pairs:
    for b in pairs:
        if a is not b:
            for _ in range(len(pairs)):
                min_loc(a, b)
return min(pairs)
'''

# Honest, and calls min_loc more often than one run does: the simulation twice (the second
# to check the first), and a fold of the inputs with min_loc to check the result.
RUNNER_SIMULATES_TWICE = '''
import functools
inputs = [(value, pe) for pe, value in enumerate(values)]
first = algorithms[algorithm].simulate(len(values), inputs=inputs, op=min_loc, **params)
run = algorithms[algorithm].simulate(len(values), inputs=inputs, op=min_loc, **params)
assert first.results == run.results
got = run.results[params.get("root", 0)]
assert got[0] == functools.reduce(min_loc, inputs)[0]
return got
'''

# The same runner with a min_loc that is no plain function (a student audit, twelfth round):
# the builtin min (tuples compare value first, then the PE number) or a memoized def. Only
# a plain function could be forwarded: 0/2, "combined only 0 pairs with min_loc", also in
# Validate. Whole cells.
MIN_LOC_IS_MIN = "min_loc = min\n"
MIN_LOC_MEMOIZED = '''\
import functools


@functools.lru_cache(maxsize=None)
def min_loc(a, b):
    """Combine two (value, pe) pairs: the smaller value; on a tie, the smaller PE number."""
    return a if (a[0], a[1]) <= (b[0], b[1]) else b
'''
NOT_PLAIN_MIN_LOCS = {"binds_builtin_min": MIN_LOC_IS_MIN,
                      "binds_memoized_min_loc": MIN_LOC_MEMOIZED}

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


def _with_cell(source, cell, text):
    """The solution with the whole of ``cell`` written as ``text``."""
    notebook = (copy.deepcopy(source) if hasattr(source, "cells")
                else nbformat.read(source, as_version=4))
    h.find_cell(notebook, cell).source = text
    return notebook


def build_submissions(source):
    built = h.submissions(source, {
        "keep_left": ("min_loc_solution", KEEP_LEFT),
        "ties_right": ("min_loc_solution", TIES_TO_THE_RIGHT),
        "crashes": ("min_loc_solution", MIN_LOC_CRASHES),
        "spins": ("min_loc_solution", MIN_LOC_SPINS),
        "no_reduction": ("runner_solution", RUNNER_WITHOUT_REDUCTION),
        "runner_on_pe_0": ("runner_solution", RUNNER_ON_PE_0),
        "ignores_root": ("runner_solution", RUNNER_IGNORES_ROOT),
        "ignores_algorithm": ("runner_solution", RUNNER_IGNORES_ALGORITHM),
        "every_pair": ("runner_solution", RUNNER_EVERY_PAIR),
        "simulates_twice": ("runner_solution", RUNNER_SIMULATES_TWICE),
        "min_builtin": ("min_loc_solution", MIN_LOC_BUILTIN),
        "new_tuple_on_ties": ("min_loc_solution", MIN_LOC_NEW_TUPLE),
        "first_not_none": ("runner_solution", RUNNER_FIRST_NOT_NONE),
        "wrong_answers": ("commutative_answer", WRONG_ANSWERS),
        "keep_left_honest": [("min_loc_solution", KEEP_LEFT),
                             ("commutative_answer", HONEST_ANSWERS)],
    })
    built["binds_min_loc"] = _with_cell(source, "runner_solution", RUNNER_BINDS_MIN_LOC)
    for student, min_loc in NOT_PLAIN_MIN_LOCS.items():
        built[student] = _with_cell(_with_cell(source, "runner_solution", RUNNER_BINDS_MIN_LOC),
                                    "min_loc_solution", min_loc)
    return built


graded = h.graded_fixture(ASSIGNMENT, build_submissions, spinning=["spins"])


def test_release_hides_solution_and_hidden_tests(graded):
    course, _ = graded
    text = h.assert_release_hides(course, ASSIGNMENT, [
        "(a[0], a[1]) <=", "_reference", "check_operator_in_reductions", "_counting",
        "min_loc_is_commutative = True", "keep_left_is_commutative = False",
        "lexicographic", "op=min_loc, **params", "total order", "_out_of_rank_order"],
        shows=["def min_loc(a, b):",
               'def reduce_min_location(values, algorithm="binomial_reduce", **params):',
               "YOUR ANSWER HERE",
               # the visible sanity checks stay
               "for a, b, want in [((2, 5), (2, 1), (2, 1)), ((0.5, 7), (1, 3), (0.5, 7))]:",
               "Whether they are right is not checked here"],
        unanswered=3)
    # nothing visible tells whether min_loc is commutative (a question of part (iii))
    assert "should be; check part (i)" not in text and "must not matter" not in text


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
    assert ("min_loc((2, 5), (2, 1)) returned (2, 5), but (2, 1) was expected: the smaller value "
            "wins, and on equal values the pair with the smaller PE number") in text
    # the visible check of (iii) warns about the operator without a deduction in (iii), and
    # without saying whether the exercise's min_loc is commutative (a question of (iii))
    shown = _shown(result, "commutative_tests")
    assert ("Warning: your min_loc((1, 0), (1, 3)) = (1, 0) but min_loc((1, 3), (1, 0)) = "
            "(1, 3): does the operator you wrote in (i) follow its rule for both orders") in shown
    assert "commutative" not in shown.split("Warning:")[1]


def test_answers_true_of_a_wrong_operator_keep_their_points(graded):
    _, results = graded
    assert results["keep_left_honest"].scores == {**FULL, "any_order_tests": 0}


def test_ties_to_the_right_costs_the_rank_order_cell_only(graded):
    _, results = graded
    result = results["ties_right"]
    # wrong on ties in rank order (the left operand holds the lower PE numbers), right out of
    # rank order: one bug, one deduction. The runner is graded with a correct operator, and
    # the answers in (iii) are true of the exercise's min_loc.
    assert result.scores == {**FULL, "min_loc_tests": 0}
    assert "the reduction of [5, 2, 7, 2] should give (2, 1), got (2, 3)" in \
        result.messages("min_loc_tests")


def test_any_order_gives_the_student_only_operands_out_of_rank_order():
    """Every reduction of the rank-order cell calls the operator with the lower PE numbers on
    the left, so the two operator cells grade disjoint sets of operands."""
    import numpy as np
    from collective_lib import catalog
    from collective_lib.algorithms.reduce import elementwise
    seen = []

    def op(a, b):
        seen.append(a[1] < b[1])
        return a if (a[0], a[1]) <= (b[0], b[1]) else b

    rng = np.random.default_rng(5)
    for name in ("binomial_reduce", "binary_tree_reduce", "reduce_broadcast_allreduce",
                 "hypercube_allreduce", "binary_tree_prefix_sum", "hypercube_prefix_sum"):
        entry = catalog()[name]
        for p in [p for p in range(1, 20) if entry.valid(p)]:
            params = {"root": p - 1} if "root" in entry.params and name != "binomial_reduce" else {}
            inputs = [(int(v), pe) for pe, v in enumerate(rng.integers(0, 3, size=p))]
            entry.simulate(p, inputs=inputs, op=op, trace=False, **params)
    for name in ("rabenseifner_allreduce", "pipelined_binary_tree_reduce"):
        entry = catalog()[name]
        for p in [p for p in (2, 3, 4, 7, 8) if entry.valid(p)]:
            params = {key: value for key, value in {"root": p - 1, "k": 2}.items()
                      if key in entry.params}
            rows = [[(int(v), pe) for v in rng.integers(0, 3, size=p)] for pe in range(p)]
            entry.simulate(p, p, inputs=rows, op=elementwise(op), trace=False, **params)
    assert seen and all(seen)


@pytest.mark.parametrize("student, message", [
    ("crashes", "min_loc((3, 0), (1, 1)) raised AttributeError"),
    ("crashes", "`return a.value if a.value < b.value else b`"),
    # an operator that never returns on a tie: the first reduction of the visible checks
    # has one, and is run within a time limit too (else Validate would hang)
    ("spins", "reduction_with_min_loc([5, 2, 7, 2]) did not return within 5 s of real "
              "time"),
])
def test_broken_operators_get_no_operator_points(graded, student, message):
    _, results = graded
    result = results[student]
    assert result.scores["min_loc_tests"] == result.scores["any_order_tests"] == 0
    assert result.scores["commutative_tests"] == 2
    assert message in result.messages("min_loc_tests")


@pytest.mark.parametrize("student, message", [
    ("no_reduction", "combined only 0 pairs with min_loc"),
    ("runner_on_pe_0", "reduce_min_location([7, 2, 9, 5, 4], 'binomial_reduce', root=3) should "
                       "be (2, 1), got None"),
    ("ignores_root", "reduce_min_location([7, 2, 9, 5, 4], 'binomial_reduce', root=3) "
                     "returned the right pair, but min_loc did not combine the pairs that "
                     "'binomial_reduce' with root=3 combines"),
    ("every_pair", "reduce_min_location([6, 3, 8, 4], 'binomial_reduce') returned the right "
                   "pair, but min_loc combined 48 pairs, where 'binomial_reduce' combines 3. "
                   "Return what one simulation with op=min_loc gives, without other calls "
                   "of min_loc."),
])
def test_runner_bugs_cost_the_runner_cell_only(graded, student, message):
    _, results = graded
    result = results[student]
    assert result.scores == {**FULL, "runner_tests": 0}
    assert message in " ".join(result.messages("runner_tests").split())  # lines broken


def test_a_runner_that_ignores_the_algorithm_is_told_so(graded):
    # a student audit: Validate passed it, and the grader blamed **params, which it passed on
    _, results = graded
    result = results["ignores_algorithm"]
    assert result.scores == {**FULL, "runner_tests": 0}
    text = " ".join(result.messages("runner_tests").split())
    assert ("returned the right pair, but min_loc combined the pairs that 'binomial_reduce' "
            "combines, not those of 'hypercube_allreduce'") in text, text
    assert "simulate the algorithm that the parameter `algorithm` names" in text
    assert "**params" not in text


@pytest.mark.parametrize("student", ["min_builtin", "new_tuple_on_ties", "first_not_none",
                                     "binds_min_loc", "simulates_twice",
                                     *NOT_PLAIN_MIN_LOCS])
def test_honest_variants_keep_full_marks(graded, student):
    _, results = graded
    h.assert_full_marks(results[student])


def test_a_failing_operator_is_not_charged_again_in_the_runner(graded):
    _, results = graded
    for student in ("crashes", "spins"):
        # an operator that fails on every pair is wrong in both orders: the two operator cells;
        # the runner is checked with a stand-in operator, visibly and after hand-in
        assert results[student].scores == {**FULL, "min_loc_tests": 0, "any_order_tests": 0}
        assert "All checks passed." in _shown(results[student], "runner_tests")


def test_wrong_answers_cost_their_points(graded):
    _, results = graded
    result = results["wrong_answers"]
    assert result.scores == {**FULL, "commutative_tests": 0}
    assert "min_loc_is_commutative: try min_loc(a, b) and min_loc(b, a)" in \
        result.messages("commutative_tests")
    # a hidden check: the report of what the class got wrong counts it as a wrong answer
    assert result.cell("commutative_tests").metadata["collective_lib"] == {
        "failure": "wrong_entry"}
    # the visible part says plainly that it does not check the answers
    assert "Whether they are right is not checked here" in _shown(result, "commutative_tests")


# -- what the Validate button says (the visible checks, in a student's saved notebook) --------

#: Submissions whose bug a student's Validate must report, with the start of what it says.
CAUGHT_BY_VALIDATE = {
    "keep_left": "min_loc((2, 5), (2, 1)) returned (2, 5), but (2, 1) was expected",
    "ties_right": "the reduction of [5, 2, 7, 2] should give (2, 1), got (2, 3)",
    "crashes": "min_loc((3, 0), (1, 1)) raised AttributeError",
    "no_reduction": "reduce_min_location([6, 3, 8, 4], 'binomial_reduce') combined",
    "runner_on_pe_0": "reduce_min_location([7, 2, 9, 5, 4], 'binomial_reduce', root=3)",
    "ignores_root": "reduce_min_location([7, 2, 9, 5, 4], 'binomial_reduce', root=3) "
                    "returned the right pair",
    "ignores_algorithm": "reduce_min_location([9, 4, 7, 6], "
                         "'hypercube_allreduce') returned the right pair, but min_loc "
                         "combined the pairs that 'binomial_reduce' combines",
    "every_pair": "reduce_min_location([6, 3, 8, 4], 'binomial_reduce') returned the "
                  "right pair, but min_loc combined 48 pairs",
}

validated = validated_fixture(ASSIGNMENT, build_submissions,
                              [*CAUGHT_BY_VALIDATE, "wrong_answers", "binds_min_loc",
                               *NOT_PLAIN_MIN_LOCS],
                              written={"explain_commutative": "A written answer."})


test_validate_passes_the_solution, test_validate_reports_each_named_bug = validate_tests(
    {student: f"AssertionError: {start}" for student, start in CAUGHT_BY_VALIDATE.items()})


@pytest.mark.parametrize("student", ["binds_min_loc", *NOT_PLAIN_MIN_LOCS])
def test_validate_passes_a_runner_that_holds_min_loc_as_a_default(validated, student):
    # a student audit: Validate said it "combined only 0 pairs with min_loc"
    assert validated[student].passed, validated[student].text


def test_validate_cannot_judge_the_answers_of_iii(validated):
    # telling whether True or False is right would give the answer away: the visible cell says
    # that it only checks that they are set (test_wrong_answers_cost_their_points)
    assert validated["wrong_answers"].passed


test_a_visible_check_records_its_kind_of_failure = visible_kind_test([
    ("runner_on_pe_0", "runner_tests", "wrong_result"),
    ("no_reduction", "runner_tests", "wrong_form"),
    ("ignores_root", "runner_tests", "wrong_form"),
    ("ignores_algorithm", "runner_tests", "wrong_form"),
    ("every_pair", "runner_tests", "wrong_form"),
])


test_no_line_of_a_message_is_cut_by_validate = message_width_test()
