"""nbgrader round trip of the chapter-6 exercises gray_codes and cycles_crossover.

gray_codes: Mathur and Johnsson §3 and §4.1 (Table 1, Fig. 7); cycles_crossover:
§6.1 and Table 9, on the fitted models of :mod:`collective_lib.cm200.models`.

As in test_exercises.py: the assignment is released with ``nbgrader
generate_assignment`` (the release must hide solutions and hidden tests), then
the instructor's solution (full marks) and wrong, crashing, endless and
library-calling submissions (partial marks, a helpful message in the failing
cell) are autograded in one nbgrader run.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import nbgrader_harness as h

GRAY = "gray_codes"

WRONG_GRAY = '''
return i ^ (i << 1)
'''

SPINNING_RANK = '''
i = 0
while g >= 0:                            # never ends
    i ^= g
return i
'''

OFF_BY_ONE_TRANSITIONS = '''
return [(u & -u).bit_length() - 1 for u in range(2**d - 1)]
'''

CRASHING_TRANSITIONS = '''
return [gray_of(u) ^ gray_of(u + 1) for u in range(2**d - 1)].index(None)
'''

BACKWARDS_INDEX = '''
return gray_of((gray_rank(pa) - s) % 2**d)
'''

LIBRARY_INDEX = '''
from collective_lib.cm200.schedules import one_cycle_index
return int(one_cycle_index(pa, s, d))
'''


def grade(workdir: Path):
    def submissions(source):
        def bad(cell, code, region=None):
            return h.replace_solution(source, cell, code, region)

        return {
            "solution": source,
            "wrong_gray": bad("gray_solution", WRONG_GRAY, region=0),
            "spinning_rank": bad("gray_solution", SPINNING_RANK, region=1),
            "off_by_one": bad("transitions_solution", OFF_BY_ONE_TRANSITIONS),
            "crashing": bad("transitions_solution", CRASHING_TRANSITIONS),
            "backwards": bad("index_solution", BACKWARDS_INDEX),
            "library": bad("index_solution", LIBRARY_INDEX),
        }

    return h.release_and_grade(workdir / "course", GRAY, submissions, grade=h.grade_all)


# -- cycles_crossover ---------------------------------------------------------------------------

CROSS = "cycles_crossover"

SEARCH_EVERY_SIZE = '''
words = np.arange(1, 4097)                   # every M', not whole blocks of 2d
faster = d_cycles_time(d, words, index) < one_cycle_time(d, words)
return int(words[np.argmax(faster)]) if faster.any() else None
'''

SEARCH_WITH_THE_LIBRARY = '''
from collective_lib.cm200.models import cycles_crossover
return cycles_crossover(d, index)
'''

SEARCH_SPINS = '''
words = 2 * d
while not d_cycles_time(d, words, index) < one_cycle_time(d, words):
    words += 0                               # never moves on
return words
'''

BREAK_EVEN_SIGN = '''
a, b = 2 * d, 4 * d
slope_one = (float(one_cycle_time(d, b)) - float(one_cycle_time(d, a))) / (b - a)
slope_d = (float(d_cycles_time(d, b, index)) - float(d_cycles_time(d, a, index))) / (b - a)
if slope_d >= slope_one:
    return None
start_one = float(one_cycle_time(d, a)) - slope_one * a
start_d = float(d_cycles_time(d, a, index)) - slope_d * a
return (start_one - start_d) / (slope_one - slope_d)
'''

PREDICTION_CRASHES = '''
return int(break_even(d, index)) // (2 * d) * (2 * d) + 2 * d
'''


def grade_crossover(workdir: Path):
    def submissions(source):
        def bad(cell, code, region=None):
            return h.replace_solution(source, cell, code, region)

        return {
            "solution": source,
            "every_size": bad("search_solution", SEARCH_EVERY_SIZE),
            "library": bad("search_solution", SEARCH_WITH_THE_LIBRARY),
            "spins": bad("search_solution", SEARCH_SPINS),
            "sign": bad("predict_solution", BREAK_EVEN_SIGN, region=0),
            "crashes": bad("predict_solution", PREDICTION_CRASHES, region=1),
        }

    return h.release_and_grade(workdir / "course", CROSS, submissions, grade=h.grade_all)


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    """Release and grade both assignments side by side (nbgrader runs in subprocesses)."""
    jobs = {"gray": grade, "cross": grade_crossover}
    return h.grade_side_by_side(jobs, tmp_path_factory)


@pytest.fixture(scope="module")
def graded(both):
    return both["gray"]


@pytest.fixture(scope="module")
def crossing(both):
    return both["cross"]


def test_release_hides_solution_and_hidden_tests(graded):
    course, _, _ = graded
    text = h.released_text(course, GRAY)
    for secret in ["BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS",
                   "i ^ (i >> 1)", "_ref_gray", "(position + s)", "_FORBIDDEN",
                   "bit_length() - 1)"]:
        assert secret not in text, f"the release gives away {secret!r}"
    for signature in ["def gray_of(i):", "def gray_rank(g):", "def transitions(d):",
                      "def fig7_index(pa, s, d):"]:
        assert signature in text
    assert text.count("raise NotImplementedError()") == 4


def test_solution_gets_full_marks(graded):
    _, results, _ = graded
    result = results["solution"]
    assert set(h.autograded_ids(result)) == {"gray_tests", "transitions_tests", "index_tests"}
    h.assert_full_marks(result)
    assert result.max_score == 8


@pytest.mark.parametrize("student, scores, cell, message", [
    ("wrong_gray", {"gray_tests": 0, "transitions_tests": 0, "index_tests": 0}, "gray_tests",
     "the 3-bit codes should be"),
    ("spinning_rank", {"gray_tests": 0, "transitions_tests": 2, "index_tests": 0}, "gray_tests",
     "did not return within 5 s of real time"),
    ("off_by_one", {"gray_tests": 3, "transitions_tests": 0, "index_tests": 3},
     "transitions_tests", "transitions(3) should be [0, 1, 0, 2, 0, 1, 0]"),
    ("crashing", {"gray_tests": 3, "transitions_tests": 0, "index_tests": 3},
     "transitions_tests", "transitions(3) raised ValueError"),
    ("backwards", {"gray_tests": 3, "transitions_tests": 2, "index_tests": 0}, "index_tests",
     "node 101, address 1 holds index 100 in Figure 7"),
    ("library", {"gray_tests": 3, "transitions_tests": 2, "index_tests": 0}, "index_tests",
     "one_cycle_index"),
])
def test_wrong_submissions_get_partial_marks_and_a_message(graded, student, scores, cell,
                                                           message):
    _, results, _ = graded
    result = results[student]
    assert {gid: result.scores[gid] for gid in scores} == scores, result.messages()
    assert message in result.messages(cell)


def test_grading_is_quick(graded):
    _, _, seconds = graded
    assert seconds < 120, f"autograding 7 submissions took {seconds:.0f} s"


def test_crossover_release_hides_solution_and_hidden_tests(crossing):
    course, _, _ = crossing
    text = h.released_text(course, CROSS)
    for secret in ["BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS",
                   "np.argmax(faster)", "slope_one", "_reference", "_searched", "floor(m_star"]:
        assert secret not in text, f"the release gives away {secret!r}"
    for signature in ['def crossover(d, index="compute"):', 'def break_even(d, index="compute"):',
                      'def predicted_crossover(d, index="compute"):']:
        assert signature in text
    assert text.count("raise NotImplementedError()") == 3


def test_crossover_solution_gets_full_marks(crossing):
    _, results, _ = crossing
    result = results["solution"]
    assert set(h.autograded_ids(result)) == {"search_tests", "predict_tests"}
    h.assert_full_marks(result)
    assert result.max_score == 6


@pytest.mark.parametrize("student, scores, cell, message", [
    ("every_size", {"search_tests": 0, "predict_tests": 3}, "search_tests",
     "crossover(5, 'move') returned 25, expected 30"),
    ("library", {"search_tests": 0, "predict_tests": 3}, "search_tests", "cycles_crossover"),
    ("spins", {"search_tests": 0, "predict_tests": 3}, "search_tests",
     "did not return within 10 s of real time"),
    ("sign", {"search_tests": 3, "predict_tests": 0}, "predict_tests",
     "the lines for d = 4 meet between M' = 72 and 80"),
    ("crashes", {"search_tests": 3, "predict_tests": 0}, "predict_tests",
     "predicted_crossover(1, 'compute') raised TypeError"),
])
def test_crossover_wrong_submissions_get_partial_marks(crossing, student, scores, cell, message):
    _, results, _ = crossing
    result = results[student]
    assert {gid: result.scores[gid] for gid in scores} == scores, result.messages()
    assert message in result.messages(cell)


def test_crossover_grading_is_quick(crossing):
    _, _, seconds = crossing
    assert seconds < 120, f"autograding 6 submissions took {seconds:.0f} s"
