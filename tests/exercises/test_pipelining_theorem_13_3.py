"""nbgrader round trip of `pipelining_theorem_13_3` (Theorem 13.3, checked numerically).

The source notebook is released with ``nbgrader generate_assignment`` (the release
must hide solutions and hidden tests), and a set of submissions is autograded in
one ``nbgrader autograde`` run: the instructor's solution (full marks), a wrong
excess and a wrong best k (each costs only its own points, with the helpful
message in the failing cell), and a crashing and an endless best k (no marks,
and grading still finishes quickly).
"""
from __future__ import annotations

import pytest

import nbgrader_harness as h

ASSIGNMENT = "pipelining_theorem_13_3"

# All tests of the assignment on one pytest-xdist worker: the graded fixture runs once.
pytestmark = pytest.mark.xdist_group(ASSIGNMENT)

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

BEST_K_CRASHES = '''
return int("the best k")
'''

BEST_K_SPINS = '''
k = 1
while k > 0:                          # the search never stops
    k += 1
return k
'''


def build_submissions(source):
    return {
        "solution": source,
        "excess_without_3bn": h.replace_solution(source, "excess_solution", EXCESS_WITHOUT_3BN),
        "best_k_off_by_one": h.replace_solution(source, "best_k_solution", BEST_K_OFF_BY_ONE),
        "best_k_crashes": h.replace_solution(source, "best_k_solution", BEST_K_CRASHES),
        "best_k_spins": h.replace_solution(source, "best_k_solution", BEST_K_SPINS),
    }


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    return h.grade_assignment(ASSIGNMENT, build_submissions, tmp_path_factory)


def test_release_hides_solution_and_hidden_tests(graded):
    course, _, _ = graded
    text = h.assert_release_hides(course, ASSIGNMENT, [
        "2 * math.ceil(guess) + 4", "key=lambda k: simulated_time",
        "(3 * beta * n + 2 * alpha * math.log2(p))", "excess(n, p, alpha, beta) / math.sqrt",
        "_best(", "sanders_optimal_k", "_students_best_k", "1.005",
        "forbid_library_calls"])
    for signature in ["def best_k_by_simulation(n, p, alpha, beta):",
                      "def excess(n, p, alpha, beta):",
                      "def excess_ratios(ns, p, alpha, beta):"]:
        assert signature in text
    assert text.count("raise NotImplementedError()") == 3


def test_solution_gets_full_marks(graded):
    _, results, _ = graded
    result = results["solution"]
    assert set(h.autograded_ids(result)) == {"best_k_tests", "excess_tests", "ratios_tests"}
    h.assert_full_marks(result)
    assert result.total == result.max_score == 10


def test_wrong_excess_gets_partial_marks(graded):
    _, results, _ = graded
    result = results["excess_without_3bn"]
    assert result.scores == {"best_k_tests": 4, "excess_tests": 0, "ratios_tests": 0}
    assert "excess(1000, 15, 1.0, 0.01) returned" in result.messages("excess_tests")
    assert "T(k*) - (3 beta n + 2 alpha log2 p) =" in result.messages("excess_tests")
    assert "outside [0.5, 5]" in result.messages("ratios_tests")


def test_wrong_best_k_costs_only_its_own_points(graded):
    _, results, _ = graded
    result = results["best_k_off_by_one"]
    assert result.scores == {"best_k_tests": 0, "excess_tests": 3, "ratios_tests": 3}
    assert ("returned k = 2 with simulated time 54; there is a k with a smaller simulated time"
            in result.messages("best_k_tests"))


@pytest.mark.parametrize("student, message", [
    ("best_k_crashes", "best_k_by_simulation(1000, 15, 1.0, 0.01) raised ValueError"),
    ("best_k_spins", "did not return within 5 s of real time"),
])
def test_bad_submissions_get_zero_with_a_helpful_message(graded, student, message):
    _, results, _ = graded
    result = results[student]
    assert result.total == 0
    assert message in result.messages("best_k_tests")


def test_grading_is_quick(graded):
    _, _, seconds = graded
    assert seconds < 120, f"autograding 5 submissions took {seconds:.0f} s"
