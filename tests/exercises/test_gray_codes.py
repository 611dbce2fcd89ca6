"""nbgrader round trip of `gray_codes` (Mathur and Johnsson, §3 and §4.1, Table 1, Fig. 7).

The source notebook is released with ``nbgrader generate_assignment`` (the release
must hide solutions and hidden tests), then the instructor's solution (full
marks) and wrong, crashing, endless and library-calling submissions (partial
marks, a helpful message in the failing cell) are autograded in one nbgrader run.
"""
from __future__ import annotations

import pytest

import nbgrader_harness as h

ASSIGNMENT = "gray_codes"


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


def build_submissions(source):
    return h.submissions(source, {
        "wrong_gray": ("gray_solution", WRONG_GRAY, 0),
        "spinning_rank": ("gray_solution", SPINNING_RANK, 1),
        "off_by_one": ("transitions_solution", OFF_BY_ONE_TRANSITIONS),
        "crashing": ("transitions_solution", CRASHING_TRANSITIONS),
        "backwards": ("index_solution", BACKWARDS_INDEX),
        "library": ("index_solution", LIBRARY_INDEX),
    })


graded = h.graded_fixture(ASSIGNMENT, build_submissions)


def test_release_hides_solution_and_hidden_tests(graded):
    course, _ = graded
    h.assert_release_hides(course, ASSIGNMENT, [
        "i ^ (i >> 1)", "_ref_gray", "(position + s)", "_FORBIDDEN", "bit_length() - 1)"],
        shows=["def gray_of(i):", "def gray_rank(g):", "def transitions(d):",
               "def fig7_index(pa, s, d):"], unanswered=4)


def test_solution_gets_full_marks(graded):
    h.assert_solution_full_marks(graded, ASSIGNMENT,
                                 {"gray_tests", "transitions_tests", "index_tests"}, 8)


@pytest.mark.parametrize("student, scores, cell, message", [
    # a mistake in (i) costs (i) only: (ii) and (iii) are graded with a correct gray_of/gray_rank
    ("wrong_gray", {"gray_tests": 0, "transitions_tests": 2, "index_tests": 3}, "gray_tests",
     "the 3-bit codes should be"),
    ("spinning_rank", {"gray_tests": 0, "transitions_tests": 2, "index_tests": 3}, "gray_tests",
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
    _, results = graded
    result = results[student]
    assert result.scores == scores, result.messages()
    assert message in result.messages(cell)


@pytest.mark.parametrize("student", ["wrong_gray", "spinning_rank"])
def test_later_parts_say_why_their_visible_check_is_skipped(graded, student):
    _, results = graded
    result = results[student]
    for cell in ("transitions_tests", "index_tests"):
        shown = "".join(out.get("text", "") for out in result.cell(cell).outputs)
        assert "gray_of or gray_rank does not give the codes of part (i) yet" in shown, shown

