"""nbgrader round trip of `gray_codes` (Mathur and Johnsson, §3 and §4.1, Table 1, Fig. 7).

The source notebook is released with ``nbgrader generate_assignment`` (the release
must hide solutions and hidden tests), then the instructor's solution (full
marks) and wrong, crashing, endless and library-calling submissions (partial
marks, a helpful message in the failing cell) are autograded in one nbgrader run.
Each single typical bug costs exactly the cell of its part: the later parts are
graded with a correct gray_of and gray_rank.

Every typical bug is also handed to ``nbgrader validate`` as a student's saved notebook:
the Validate button must not say "Success!" for any of them, and it must for the solution.
"""
from __future__ import annotations

import pytest

import nbgrader_harness as h
from messages import flat
from exercise_submissions import (message_width_test, validate_tests, validated_fixture,
                                  visible_kind_test)

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

# Right for codes of up to 3 bits (Table 1), wrong from 4 bits on.
NARROW_RANK = '''
return g ^ (g >> 1) ^ (g >> 2)
'''

# The prefix XOR by doubling shifts, written for 64-bit integers: right below 2**64, wrong
# above, though the task asks for any non-negative integer (student audit: 8/8, the checks
# stopping at 2**62 - 1).
RANK_64_BITS = '''
for s in (1, 2, 4, 8, 16, 32):
    g ^= g >> s
return g
'''

OFF_BY_ONE_TRANSITIONS = '''
return [(u & -u).bit_length() - 1 for u in range(2**d - 1)]
'''

CRASHING_TRANSITIONS = '''
return [gray_of(u) ^ gray_of(u + 1) for u in range(2**d - 1)].index(None)
'''

# Right but for d = 4, where every bit is 10**11: the visible check shifted 1 by it, an
# int of 12.5 GB that no checker holds (a MemoryError, or the checker stopped at its limit
# and every cell lost), before it said which bit is wrong.
HUGE_BIT_TRANSITIONS = '''
if d != 4:
    return [((u + 1) & -(u + 1)).bit_length() - 1 for u in range(2**d - 1)]
return [10 ** 11] * (2**d - 1)
'''

BACKWARDS_INDEX = '''
return gray_of((gray_rank(pa) - s) % 2**d)
'''

LIBRARY_GRAY = '''
from collective_lib.cm200.gray import gray
return int(gray(i))
'''

LIBRARY_INDEX = '''
from collective_lib.cm200.schedules import one_cycle_index
return int(one_cycle_index(pa, s, d))
'''


def build_submissions(source):
    return h.submissions(source, {
        "wrong_gray": ("gray_solution", WRONG_GRAY, 0),
        "spinning_rank": ("gray_solution", SPINNING_RANK, 1),
        "narrow_rank": ("gray_solution", NARROW_RANK, 1),
        "rank_64_bits": ("gray_solution", RANK_64_BITS, 1),
        "off_by_one": ("transitions_solution", OFF_BY_ONE_TRANSITIONS),
        "crashing": ("transitions_solution", CRASHING_TRANSITIONS),
        "huge_bit": ("transitions_solution", HUGE_BIT_TRANSITIONS),
        "backwards": ("index_solution", BACKWARDS_INDEX),
        "library": ("index_solution", LIBRARY_INDEX),
    })


graded = h.graded_fixture(ASSIGNMENT, build_submissions, spinning=["spinning_rank"])



# Validate: the typical bugs as a student's saved notebooks, each with the messages Validate
# must show. A bug in (ii) rides with one in (iii): their checks are independent.
VALIDATE = {
    "wrong_gray": ([("gray_solution", WRONG_GRAY, 0)], ["the 3-bit codes should be"]),
    "spinning_rank": ([("gray_solution", SPINNING_RANK, 1)],
                      ["gray_rank(5) did not return within 5 s"]),
    "narrow_rank": ([("gray_solution", NARROW_RANK, 1)],
                    ["gray_rank(gray_of(8)) should give 8 back"]),
    "rank_64_bits": ([("gray_solution", RANK_64_BITS, 1)],
                     # (Validate cuts the line after 88 characters)
                     [f"gray_rank(gray_of({2 ** 64 + 5})) should give"]),
    "off_by_one_and_backwards": (
        [("transitions_solution", OFF_BY_ONE_TRANSITIONS), ("index_solution", BACKWARDS_INDEX)],
        ["transitions(3) should be [0, 1, 0, 2, 0, 1, 0]",
         "but the simulated broadcast leaves another index in address 1 of node 0"]),
    "crashing": ([("transitions_solution", CRASHING_TRANSITIONS)],
                 ["transitions(3) raised ValueError"]),
    # the library's codes and index pass the visible checks: Validate must say they are refused
    "library": ([("gray_solution", LIBRARY_GRAY, 0), ("index_solution", LIBRARY_INDEX)],
                ["gray_of uses the library's `gray`",
                 "fig7_index uses the library's `one_cycle_index`"]),
}


validated = validated_fixture(ASSIGNMENT, lambda source: h.submissions(
    source, {student: changes for student, (changes, _) in VALIDATE.items()}), [*VALIDATE])


def test_release_hides_solution_and_hidden_tests(graded):
    course, _ = graded
    h.assert_release_hides(course, ASSIGNMENT, [
        "i ^ (i >> 1)", "_ref_gray", "(position + s)", "bit_length() - 1)"],
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
    ("narrow_rank", {"gray_tests": 0, "transitions_tests": 2, "index_tests": 3}, "gray_tests",
     "gray_rank(gray_of(8)) should give 8 back, got 9 (gray_of(8) is 12)"),
    # integers beyond 64 bits, visibly and when graded
    ("rank_64_bits", {"gray_tests": 0, "transitions_tests": 2, "index_tests": 3}, "gray_tests",
     f"gray_rank(gray_of({2 ** 64 + 5})) should give {2 ** 64 + 5} back"),
    ("off_by_one", {"gray_tests": 3, "transitions_tests": 0, "index_tests": 3},
     "transitions_tests", "transitions(3) should be [0, 1, 0, 2, 0, 1, 0]"),
    ("crashing", {"gray_tests": 3, "transitions_tests": 0, "index_tests": 3},
     "transitions_tests", "transitions(3) raised ValueError"),
    ("huge_bit", {"gray_tests": 3, "transitions_tests": 0, "index_tests": 3},
     "transitions_tests", "transitions(4)[0] is 100000000000, but G(0) and G(1) do not "
     "differ in bit 100000000000"),
    ("backwards", {"gray_tests": 3, "transitions_tests": 2, "index_tests": 0}, "index_tests",
     "fig7_index(pa=0, s=1, d=2) returned 2, but the simulated broadcast leaves another index "
     "in address 1 of node 0"),
    ("library", {"gray_tests": 3, "transitions_tests": 2, "index_tests": 0}, "index_tests",
     "one_cycle_index"),
])
def test_wrong_submissions_get_partial_marks_and_a_message(graded, student, scores, cell,
                                                           message):
    _, results = graded
    result = results[student]
    assert result.scores == scores, result.messages()
    assert message in flat(result.messages(cell)), result.messages(cell)


@pytest.mark.parametrize("student", ["wrong_gray", "spinning_rank"])
def test_later_parts_say_why_their_visible_check_is_skipped(graded, student):
    _, results = graded
    result = results[student]
    for cell in ("transitions_tests", "index_tests"):
        shown = "".join(out.get("text", "") for out in result.cell(cell).outputs)
        assert "gray_of or gray_rank does not pass the checks of part (i) yet" in shown, shown


test_validate_passes_the_solution, test_validate_reports_each_named_bug = validate_tests(
    {student: v[1] for student, v in VALIDATE.items()})


def test_the_visible_checks_say_what_they_do_not_check(graded):
    # the library's index function passes every visible check: the release says so
    course, _ = graded
    text = h.released_text(course, ASSIGNMENT)
    for line in ("codes of up to 16 bits, and that gray_of and gray_rank are your own work",
                 "d up to 12, and that fig7_index is your own work, without simulating"):
        assert "Not checked here (the graded tests check them): " + line in flat(text).replace(
            '" "', ""), line


def test_no_message_states_a_code_or_index_that_was_expected(graded):
    # a wrong value is named, never the right one (feedback files circulate between cohorts)
    _, results = graded
    for student in ("wrong_gray", "narrow_rank", "off_by_one", "backwards"):
        text = results[student].messages()
        assert "expected" not in text and "differ in bit" not in text.replace(
            "do not differ in bit", ""), (student, text)


test_a_visible_check_records_its_kind_of_failure = visible_kind_test([
    ("wrong_gray", "gray_tests", "wrong_result"),
    ("off_by_one", "transitions_tests", "wrong_result"),
])


def test_chapter_6_leaves_the_answers_to_the_assignment():
    # Chapter 6 defines the code and names the library's functions; the closed forms of G and
    # G^-1, the transition sequence's shortcut and Fig. 7's index are the assignment's parts
    import nbformat

    chapter = nbformat.read(h.REPO_ROOT / "book" / "ch6_cm200.ipynb", as_version=4)
    prose = " ".join(" ".join(cell.source.split()) for cell in chapter.cells
                     if cell.cell_type == "markdown")
    for answer in (r"i \oplus \lfloor i/2", "XORs together", "trailing zeros",
                   r"G((s + G^{-1}(PA))"):
        assert answer not in prose, answer
    assert "assignment `gray_codes`" in prose


test_no_line_of_a_message_is_cut_by_validate = message_width_test()
