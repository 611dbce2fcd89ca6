"""nbgrader round trip of `pipelining_theorem_13_3` (Theorem 13.3, checked numerically).

The source notebook is released with ``nbgrader generate_assignment`` (the release
must hide solutions and hidden tests), and a set of submissions is autograded in
one ``nbgrader autograde`` run: the instructor's solution (full marks), a wrong
best k, a wrong excess and wrong ratios (each costs only its own cell, with the
helpful message in it: later parts are graded against the reference's earlier
parts, or consistently with the student's own), and a crashing and an endless best k (no
marks for part (i) only, and grading still finishes quickly). The Validate button, which runs
only the visible checks, reports each of these bugs without giving an answer away.
"""
from __future__ import annotations

import math

import nbformat
import pytest

import nbgrader_harness as h
from messages import flat
from collective_lib import CostModel
from collective_lib.algorithms.broadcast import sanders_optimal_k
from collective_lib.grading import pipelined_broadcast_time
from collective_lib.trees import tree_height
from exercise_submissions import (message_width_test, validate_tests, validated_fixture,
                                  visible_kind_test)

ASSIGNMENT = "pipelining_theorem_13_3"


EXCESS_WITHOUT_3BN = '''
k = best_k_by_simulation(n, p, alpha, beta)
return simulated_time(n, p, alpha, beta, k) - 2 * alpha * math.log2(p)
'''

BEST_K_OFF_BY_ONE = '''
height = max(1, math.ceil(math.log2(p)))
guess = math.sqrt(max(0.0, beta * n * (2 * height - 3)) / (3 * alpha))
times = [simulated_time(n, p, alpha, beta, k) for k in range(1, min(n, 2 * math.ceil(guess) + 4) + 1)]
return times.index(min(times))        # an index, not a number of packets
'''

RATIOS_WITH_LN = '''
return [excess(n, p, alpha, beta) / math.sqrt(alpha * beta * n * math.log(p)) for n in ns]
'''

# The window of k is empty when the calculus optimum is below 1 (short messages): right for
# long messages only.
BEST_K_EMPTY_WINDOW = '''
height = max(1, math.ceil(math.log2(p)))
guess = math.sqrt(max(0.0, beta * n * (2 * height - 3)) / (3 * alpha))
return min(range(1, int(2 * guess)), key=lambda k: simulated_time(n, p, alpha, beta, k))
'''

# The optimum of the Lemma 13.2 bound from the catalog: not allowed.
BEST_K_FROM_THE_CATALOG = '''
return PIPELINE.optimal_k(p, n, CostModel(ts=alpha, tw=beta))
'''

# log2 p rounded up: right only for p a power of two.
EXCESS_WITH_CEIL_LOG = '''
k = best_k_by_simulation(n, p, alpha, beta)
return simulated_time(n, p, alpha, beta, k) - (3 * beta * n + 2 * alpha * math.ceil(math.log2(p)))
'''

# A search of k only near the calculus optimum k^ (here k^ +- 3): but the simulated
# optimum can lie far below k^ (k = 1 for n = 50, p = 5, alpha = beta = 1, where
# k^ = 7.07). Student audit: Validate said "Success!", then 0 of 4.
BEST_K_NEAR_THE_GUESS = '''
height = max(1, math.ceil(math.log2(p)))
guess = round(math.sqrt(max(0.0, beta * n * (2 * height - 3)) / (3 * alpha)))
ks = range(max(1, guess - 3), min(n, guess + 3) + 1)
return min(ks, key=lambda k: simulated_time(n, p, alpha, beta, k))
'''

# Two stubs: an excess of 0 and ratios of 0. The ratios agree with the stub excess, but
# that earns no points in part (iii) (student audit: 3 of 3 while (ii) had 0 of 3).
EXCESS_STUB = '''
return 0.0
'''

RATIOS_STUB = '''
return [0.0] * len(ns)
'''

# Lazy shortcuts, tenth round (student audit). A best k that is always 1, and an excess at
# k = 1 (correct ratios): the hidden test of (ii) took that excess for one that agrees with
# the student's own best k (3 of 3 while (i) had 0 of 4).
BEST_K_ONE = '''
return 1
'''

EXCESS_AT_K_ONE = '''
return simulated_time(n, p, alpha, beta, 1) - (3 * beta * n + 2 * alpha * math.log2(p))
'''

# An honest pair that the guard above must keep: a search of too few k (right on some cases
# of (ii), not on others) and an excess that keeps it as a default argument: right for that
# best k (the student's function now calls the grader's best k wherever it is held,
# grading.forwarding, eleventh round).
BEST_K_SMALL_WINDOW = '''
return min(range(1, min(n, 4) + 1), key=lambda k: simulated_time(n, p, alpha, beta, k))
'''

EXCESS_OWN_BEST_K = '''
k = _best_k(n, p, alpha, beta)
return simulated_time(n, p, alpha, beta, k) - (3 * beta * n + 2 * alpha * math.log2(p))
'''

# An excess of n and ratios of n divided by the scale: the ratios agree with that excess,
# which is not constant (the guard of (iii)), but is no excess anywhere (3 of 3).
EXCESS_N = '''
return float(n)
'''

RATIOS_OF_N = '''
return [n / math.sqrt(alpha * beta * n * math.log2(p)) for n in ns]
'''

# The hint as it was released, taken literally: sqrt(beta n (2L - 3) / (3 alpha)) is the
# square root of a negative number for p <= 2, where k = 1 is best (10 of 10: no case had
# p < 5). The released hint now says max(0, 2L - 3): taken literally, it is right for every p.
BEST_K_OLD_HINT = '''
L = math.ceil(math.log2(p))
k_hat = math.sqrt(beta * n * (2 * L - 3) / (3 * alpha))
ks = range(1, min(n, 3 * math.ceil(k_hat) + 8) + 1)
return min(ks, key=lambda k: simulated_time(n, p, alpha, beta, k))
'''

BEST_K_HINT = BEST_K_OLD_HINT.replace("(2 * L - 3)", "max(0, 2 * L - 3)")

BEST_K_CRASHES = '''
return int("the best k")
'''

BEST_K_SPINS = '''
k = 1
while k > 0:                          # the search never stops
    k += 1
return k
'''

# Right on the visible cases, then ints beyond any float: the hidden checks' isfinite
# raised "OverflowError: int too large to convert to float" instead of saying what is wrong.
EXCESS_HUGE_ELSEWHERE = '''
if (n, p) != (1000, 15):
    return 10 ** 400
k = best_k_by_simulation(n, p, alpha, beta)
return simulated_time(n, p, alpha, beta, k) - (3 * beta * n + 2 * alpha * math.log2(p))
'''

RATIOS_HUGE_ELSEWHERE = '''
if p != 31:
    return [10 ** 400 for n in ns]
return [excess(n, p, alpha, beta) / math.sqrt(alpha * beta * n * math.log2(p)) for n in ns]
'''


def build_submissions(source):
    built = h.submissions(source, {
        "excess_without_3bn": ("excess_solution", EXCESS_WITHOUT_3BN),
        "best_k_off_by_one": ("best_k_solution", BEST_K_OFF_BY_ONE),
        "ratios_with_ln": ("ratios_solution", RATIOS_WITH_LN),
        "best_k_crashes": ("best_k_solution", BEST_K_CRASHES),
        "best_k_spins": ("best_k_solution", BEST_K_SPINS),
        "best_k_empty_window": ("best_k_solution", BEST_K_EMPTY_WINDOW),
        "best_k_from_catalog": ("best_k_solution", BEST_K_FROM_THE_CATALOG),
        "excess_with_ceil_log": ("excess_solution", EXCESS_WITH_CEIL_LOG),
        "best_k_near_the_guess": ("best_k_solution", BEST_K_NEAR_THE_GUESS),
        "stubs": [("excess_solution", EXCESS_STUB), ("ratios_solution", RATIOS_STUB)],
        "k_one": [("best_k_solution", BEST_K_ONE), ("excess_solution", EXCESS_AT_K_ONE)],
        "excess_n": [("excess_solution", EXCESS_N), ("ratios_solution", RATIOS_OF_N)],
        "old_hint": ("best_k_solution", BEST_K_OLD_HINT),
        "huge_elsewhere": [("excess_solution", EXCESS_HUGE_ELSEWHERE),
                           ("ratios_solution", RATIOS_HUGE_ELSEWHERE)],
        "hint": ("best_k_solution", BEST_K_HINT),
        "small_window_kept_by_excess": [("best_k_solution", BEST_K_SMALL_WINDOW),
                                        ("excess_solution", EXCESS_OWN_BEST_K)],
    })
    cell = h.find_cell(built["small_window_kept_by_excess"], "excess_solution")
    cell.source = cell.source.replace("def excess(n, p, alpha, beta):",
                                      "def excess(n, p, alpha, beta, _best_k=best_k_by_simulation):")
    return built


graded = h.graded_fixture(ASSIGNMENT, build_submissions, spinning=["best_k_spins"])


def test_release_hides_solution_and_hidden_tests(graded):
    course, _ = graded
    h.assert_release_hides(course, ASSIGNMENT, [
        "2 * math.ceil(guess) + 4", "key=lambda k: simulated_time",
        "(3 * beta * n + 2 * alpha * math.log2(p))", "excess(n, p, alpha, beta) / math.sqrt",
        "_best(", "sanders_optimal_k", "_students_best_k", "_reference_excess",
        "(128, 63, 1.0, 0.5)"],
        shows=["def best_k_by_simulation(n, p, alpha, beta):", "def excess(n, p, alpha, beta):",
               "def excess_ratios(ns, p, alpha, beta):"], unanswered=3)


def test_solution_gets_full_marks(graded):
    h.assert_solution_full_marks(graded, ASSIGNMENT,
                                 {"best_k_tests", "excess_tests", "ratios_tests"}, 10)


FULL = {"best_k_tests": 4, "excess_tests": 3, "ratios_tests": 3}


@pytest.mark.parametrize("student, lost, messages", [
    ("best_k_off_by_one", "best_k_tests",
     ["returned k = 2 with simulated time 54; there is a k with a smaller simulated time"]),
    # a wrong excess costs part (ii) only: part (iii) divides whatever excess returns
    ("excess_without_3bn", "excess_tests",
     ["excess(1000, 15, 1.0, 0.01) returned", "T(k*) - (3 beta n + 2 alpha log2 p) ="]),
    ("ratios_with_ln", "ratios_tests",
     ["the ratio is", "divided by sqrt(alpha beta n log2 p)"]),
    ("best_k_empty_window", "best_k_tests",
     ["best_k_by_simulation(20, 40, 1.0, 0.01) raised ValueError"]),
    ("best_k_from_catalog", "best_k_tests", ["uses the library's `optimal_k`"]),
    ("excess_with_ceil_log", "excess_tests", ["excess(1000, 15, 1.0, 0.01) returned 14.02"]),
    ("best_k_near_the_guess", "best_k_tests",
     ["best_k_by_simulation(60, 5, 1, 1) returned k = ",
      "(allowed: 0.5% more than the best)"]),
    # a best k that fails costs part (i) only: (ii) and (iii) are graded with the reference's
    ("best_k_crashes", "best_k_tests",
     ["best_k_by_simulation(1000, 15, 1.0, 0.01) raised ValueError"]),
    ("best_k_spins", "best_k_tests", ["did not return within 5 s of real time"]),
])
def test_one_bug_costs_one_cell(graded, student, lost, messages):
    _, results = graded
    result = results[student]
    assert result.scores == {**FULL, lost: 0}
    for message in messages:
        assert message in result.messages(lost), (message, result.messages(lost))


def test_stub_ratios_earn_nothing_from_a_stub_excess(graded):
    _, results = graded
    result = results["stubs"]
    assert result.scores == {**FULL, "excess_tests": 0, "ratios_tests": 0}
    text = " ".join(result.messages("ratios_tests").split())
    assert ("the ratio is 0.0000, but excess(n, p, alpha, beta) / "
            "sqrt(alpha beta n log2 p) is") in text, text


def test_an_excess_at_a_constant_k_earns_nothing_from_a_constant_best_k(graded):
    """(ii) accepts an excess at the k of the student's own best_k_by_simulation only if
    that one is right somewhere and not constant."""
    _, results = graded
    result = results["k_one"]
    assert result.scores == {**FULL, "best_k_tests": 0, "excess_tests": 0}
    text = " ".join(result.messages("excess_tests").split())
    assert "excess(n=1000, p=15, alpha=1, beta=0.01) returned" in text, text
    assert "at the k = 1 your best_k_by_simulation picks" not in text, text


def test_an_excess_right_for_the_students_own_search_keeps_its_points(graded):
    """A best k that searches too few k is right on some cases and wrong on others: an
    excess at the k it picks keeps the points of (ii)."""
    _, results = graded
    result = results["small_window_kept_by_excess"]
    assert result.scores == {**FULL, "best_k_tests": 0}, result.messages()


def test_values_beyond_any_float_are_not_numbers(graded):
    _, results = graded
    result = results["huge_elsewhere"]
    assert result.scores == {**FULL, "excess_tests": 0, "ratios_tests": 0}
    excess_text = flat(result.messages("excess_tests"))
    ratios_text = flat(result.messages("ratios_tests"))
    assert "excess(n=64, p=7, alpha=1, beta=0.1) returned 1000" in excess_text, excess_text
    assert "it must return a finite number" in excess_text, excess_text
    assert "excess_ratios(..., p=15, alpha=1, beta=0.1) gave 1000" in ratios_text, ratios_text
    assert "expected a finite number" in ratios_text, ratios_text
    assert "OverflowError" not in excess_text + ratios_text


def test_ratios_of_a_varying_stub_excess_earn_nothing(graded):
    """(iii) accepts ratios of the student's own excess only if that one passes (ii)'s
    check for some n: an excess that changes with n is not enough."""
    _, results = graded
    result = results["excess_n"]
    assert result.scores == {**FULL, "excess_tests": 0, "ratios_tests": 0}
    text = " ".join(result.messages("ratios_tests").split())
    assert "for p=31, alpha=1, beta=0.01, n = 256 the ratio is" in text, text
    assert "your own excess gives" not in text, text


def test_p_of_one_and_two_are_graded_and_the_hint_holds_there(graded):
    """For p <= 2, 2L - 3 < 0 and k = 1 is best: the old hint, sqrt(beta n (2L - 3) /
    (3 alpha)), raised there, and no case had p < 5. Now p = 1 and 2 are checked, visibly too,
    and the released hint says max(0, 2L - 3): taken literally, it gets full marks."""
    _, results = graded
    result = results["old_hint"]
    assert result.scores == {**FULL, "best_k_tests": 0}, result.messages()
    assert "best_k_by_simulation(30, 2, 1.0, 0.1) raised ValueError: math domain error" \
        in result.messages("best_k_tests")
    assert results["hint"].scores == FULL, results["hint"].messages()
    source = nbformat.read(
        h.source_notebook(h.EXERCISES_DIR, ASSIGNMENT, f"{ASSIGNMENT}.ipynb"), as_version=4)
    task = next(c for c in source.cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == "task_best_k")
    text = " ".join(task.source.split())
    assert "\\max(0, 2L - 3)" in text and "$p \\ge 1$" in text, text


def test_the_task_does_not_promise_the_optimum_near_k_hat():
    source = nbformat.read(
        h.source_notebook(h.EXERCISES_DIR, ASSIGNMENT, f"{ASSIGNMENT}.ipynb"),
        as_version=4)
    task = next(c for c in source.cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == "task_best_k")
    text = " ".join(task.source.split())
    assert "never far from" not in text
    assert "from $k = 1$" in text


def test_a_wrong_excess_is_noted_in_part_iii_without_a_deduction(graded):
    _, results = graded
    cell = h.find_cell(results["excess_without_3bn"].notebook, "ratios_tests")
    shown = "".join(out.get("text", "") for out in cell.outputs)
    assert "Note: some ratios lie outside [0.5, 5]" in shown and "check excess in part (ii)" in shown


@pytest.mark.parametrize("student", ["best_k_crashes", "best_k_spins"])
def test_later_parts_say_why_they_cannot_be_checked_yet(graded, student):
    """The visible checks of (ii) and (iii) call the student's own earlier parts: they say
    that these fail instead of failing themselves."""
    _, results = graded
    cell = h.find_cell(results[student].notebook, "excess_tests")
    shown = "".join(out.get("text", "") for out in cell.outputs)
    assert "Cannot check excess yet: best_k_by_simulation(1000, 15, 1.0, 0.01) fails" in shown


def test_no_message_names_the_best_k_of_a_hidden_case(graded):
    _, results = graded
    for student in ("best_k_off_by_one", "best_k_empty_window", "excess_without_3bn"):
        for cell in FULL:
            assert "but k=" not in results[student].messages(cell)
            assert "(k=" not in results[student].messages(cell)


# -- what the Validate button says (the visible checks, in a student's saved notebook) --------

#: Submissions whose bug a student's Validate must report, with the start of what it says.
#: (best_k_spins is left out to keep the test short: the guarded call that stops
#: best_k_crashes stops it, after 5 s.)
CAUGHT_BY_VALIDATE = {
    "excess_without_3bn": "excess(1000, 15, 1.0, 0.01) returned 44.2062",
    "best_k_off_by_one": "best_k_by_simulation(1000, 15, 1.0, 0.01) returned k = 2",
    "ratios_with_ln": "for n = 256 (p = 31, alpha = 1, beta = 0.01) the ratio is 2.5267",
    "best_k_crashes": "best_k_by_simulation(1000, 15, 1.0, 0.01) raised ValueError",
    "best_k_empty_window": "best_k_by_simulation(20, 40, 1.0, 0.01) raised ValueError",
    "best_k_from_catalog": "best_k_by_simulation uses the library's `optimal_k`",
    "excess_with_ceil_log": "excess(1000, 15, 1.0, 0.01) returned 14.02",
    "best_k_near_the_guess": "best_k_by_simulation(60, 5, 1, 1) returned k = ",
    "old_hint": "best_k_by_simulation(30, 2, 1.0, 0.1) raised ValueError",
}

validated = validated_fixture(ASSIGNMENT, build_submissions, [*CAUGHT_BY_VALIDATE],
                              written=None)


test_validate_passes_the_solution, test_validate_reports_each_named_bug = validate_tests(
    {student: f"AssertionError: {start}" for student, start in CAUGHT_BY_VALIDATE.items()})


def _best_simulated_time(n, p, alpha, beta):
    """The best simulated time over a window of k that holds the optimum (the hidden tests' way)."""
    guess = sanders_optimal_k(p, n, CostModel(ts=alpha, tw=beta), 0)
    return min(pipelined_broadcast_time(n, p, alpha, beta, k)
               for k in range(1, min(n, 3 * math.ceil(guess) + 8) + 1))


@pytest.mark.parametrize("p, alpha, beta, ns", [
    (31, 1.0, 0.01, [2 ** j for j in range(8, 15)]),          # the run part (iii) prints
    (15, 1.0, 0.1, [2 ** j for j in range(6, 13)]),
    (16, 2.0, 0.05, [2 ** j for j in range(7, 14)])])
def test_the_ratios_rise_with_n_and_stay_below_the_bounds_limit(p, alpha, beta, ns):
    """What the closing cell says: the ratios keep rising (ever more slowly) and stay below
    2 sqrt(3(2L - 3) / log2 p), L = ceil(log2 p), the limit of the ratio for Lemma 13.2's bound."""
    L = math.ceil(math.log2(p))
    assert tree_height(p, 0) == L                   # the simulated tree's height is that L
    limit = 2 * math.sqrt(3 * (2 * L - 3) / math.log2(p))
    ratios = [(_best_simulated_time(n, p, alpha, beta) - (3 * beta * n + 2 * alpha * math.log2(p)))
              / math.sqrt(alpha * beta * n * math.log2(p)) for n in ns]
    steps = [b - a for a, b in zip(ratios, ratios[1:])]
    assert all(step > 0 for step in steps), ratios
    assert steps == sorted(steps, reverse=True), ratios
    assert max(ratios) < limit, (ratios, limit)
    # the bound at its best (real) k: 3 beta n + (2L - 3) alpha + 2 sqrt(3 (2L - 3) alpha beta n)
    n = 2 ** 40
    k = sanders_optimal_k(p, n, CostModel(ts=alpha, tw=beta), 0)
    bound = (2 * L + 3 * (k - 1)) * (alpha + beta * n / k)
    assert math.isclose(bound, 3 * beta * n + (2 * L - 3) * alpha
                        + 2 * math.sqrt(3 * (2 * L - 3) * alpha * beta * n))
    ratio = (bound - (3 * beta * n + 2 * alpha * math.log2(p))) / math.sqrt(alpha * beta * n * math.log2(p))
    assert ratio < limit and math.isclose(ratio, limit, rel_tol=1e-4)


def test_the_closing_cell_says_so():
    source = nbformat.read(h.source_notebook(h.EXERCISES_DIR, ASSIGNMENT, f"{ASSIGNMENT}.ipynb"),
                           as_version=4)
    outro = next(c for c in source.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "outro")
    text = " ".join(outro.source.split())
    assert "they keep rising with $n$, ever more slowly, and stay below" in text
    assert "$2\\sqrt{3(2L-3)/\\log_2 p}$" in text and "settle at" not in text


test_a_visible_check_records_its_kind_of_failure = visible_kind_test([
    ("best_k_off_by_one", "best_k_tests", "wrong_result"),
    ("excess_without_3bn", "excess_tests", "wrong_result"),
    ("ratios_with_ln", "ratios_tests", "wrong_result"),
])


test_no_line_of_a_message_is_cut_by_validate = message_width_test()
