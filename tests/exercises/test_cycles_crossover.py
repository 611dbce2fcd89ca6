"""nbgrader round trip of `cycles_crossover` (Mathur and Johnsson, §6.1 and Table 9).

The exercise works on the fitted models of :mod:`collective_lib.cm200.models`.
The source notebook is released with ``nbgrader generate_assignment`` (the release
must hide solutions and hidden tests), then the instructor's solution (full
marks) and wrong, crashing, endless and library-calling submissions (partial
marks, a helpful message in the failing cell) are autograded in one nbgrader run.
Each single typical bug costs exactly the cell of its part.

Every typical bug is also handed to ``nbgrader validate`` as a student's saved notebook:
the Validate button must not say "Success!" for any of them, and it must for the solution.
"""
from __future__ import annotations

import re

import pytest

import numpy as np

import nbgrader_harness as h
from messages import flat
from collective_lib.autograde.variants import variant
from collective_lib.cm200.models import d_cycles_time, one_cycle_time
from exercise_submissions import (message_width_test, validate_tests, validated_fixture,
                                  visible_kind_test)

ASSIGNMENT = "cycles_crossover"

#: Each student searches multiples of 2d BLOCKS, BLOCKS from their own variant
#: (collective_lib.autograde.variants): the solution gets full marks under ids with other
#: BLOCKS, and a solution copied from another variant (BLOCKS written in) fails.
SOLUTION_IDS = ("alice", "bob")                    # BLOCKS 1 and 5
COPIER = "copier"


def _blocks(student):
    return variant(ASSIGNMENT, student).blocks


def _copied_solution(source):
    """The solution as a student with another BLOCKS wrote it, that number written in."""
    other = _blocks(COPIER) % 6 + 1
    notebook = h.replace_solution(source, "search_solution", f"""
step = 2 * d * {other}
words = np.arange(step, 4097, step)
faster = d_cycles_time(d, words, index) < one_cycle_time(d, words)
return int(words[np.argmax(faster)]) if faster.any() else None
""")
    return h.replace_solution(notebook, "predict_solution", f"""
m_star = break_even(d, index)
if m_star is None:
    return None
block = 2 * d * {other}
words = max(block, (int(np.floor(m_star / block)) + 1) * block)
return words if words <= 4096 else None
""", 1)


def _reference(d, index, blocks):
    words = np.arange(2 * d * blocks, 4097, 2 * d * blocks)
    faster = d_cycles_time(d, words, index) < one_cycle_time(d, words)
    return int(words[np.argmax(faster)]) if faster.any() else None


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

#: break_even's lines, read off the models at 2d and 4d; a submission adds its return.
LINES = '''
a, b = 2 * d, 4 * d
slope_one = (float(one_cycle_time(d, b)) - float(one_cycle_time(d, a))) / (b - a)
slope_d = (float(d_cycles_time(d, b, index)) - float(d_cycles_time(d, a, index))) / (b - a)
if slope_d >= slope_one:
    return None
start_one = float(one_cycle_time(d, a)) - slope_one * a
start_d = float(d_cycles_time(d, a, index)) - slope_d * a
'''

BREAK_EVEN_SIGN = LINES + '''return (start_one - start_d) / (slope_one - slope_d)
'''

SEARCH_GIVES_UP = '''
return None                                  # "d cycles never win": not checked visibly before
'''

# M* cut to a whole number: the lines do not meet there (predicted_crossover stays right).
BREAK_EVEN_TRUNCATED = LINES + '''return int((start_d - start_one) / (slope_one - slope_d))
'''

# The prediction replaced by the search of part (i): right results, but not a prediction.
PREDICTION_SEARCHES = '''
block = 2 * d * BLOCKS
words = np.arange(block, 4097, block)
faster = d_cycles_time(d, words, index) < one_cycle_time(d, words)
return int(words[np.argmax(faster)]) if faster.any() else None
'''

# Tenth round (student audit): None when break_even's M* is above 4096, not when the multiple
# is: right on the models and on every M* the hidden test gave (3 of 3); an M* in
# (4096 - s, 4096] tells them apart.
PREDICTION_NONE_ABOVE_4096 = '''
m_star = break_even(d, index)
if m_star is None or m_star > 4096:
    return None
block = 2 * d * BLOCKS
return max(block, (int(np.floor(m_star / block)) + 1) * block)
'''

# The smallest multiple at or above M*, not strictly above it; and one without max(s, ...):
# both right on the models (M* is never a multiple of s, nor below s), and Validate said
# "Success!" (then 0 of 3).
PREDICTION_AT_OR_ABOVE = '''
m_star = break_even(d, index)
if m_star is None:
    return None
block = 2 * d * BLOCKS
words = max(block, int(np.ceil(m_star / block)) * block)
return words if words <= 4096 else None
'''

PREDICTION_WITHOUT_MAX = '''
m_star = break_even(d, index)
if m_star is None:
    return None
block = 2 * d * BLOCKS
words = (int(np.floor(m_star / block)) + 1) * block
return words if words <= 4096 else None
'''

PREDICTION_CRASHES = '''
return int(break_even(d, index)) // (2 * d) * (2 * d) + 2 * d
'''


# A student audit (twelfth round): the solution's predicted_crossover holding break_even as a
# default argument. Autograde forwarded the break_even its checks put in place (3/3), the
# notebook did not: Validate failed it, "with a break_even that returns -7.0 for d = 1,
# predicted_crossover(1, 'compute') returned None".
HOLDS_BREAK_EVEN = "holds_break_even"


def _holds_break_even(source):
    """The solution, its predicted_crossover holding break_even as a default argument."""
    notebook = h.replace_solution(source, "predict_solution", """
m_star = meet(d, index)
if m_star is None:
    return None
block = 2 * d * BLOCKS
words = max(block, (int(np.floor(m_star / block)) + 1) * block)
return words if words <= 4096 else None
""", 1)
    cell = h.find_cell(notebook, "predict_solution")
    header = 'def predicted_crossover(d, index="compute"):'
    assert cell.source.count(header) == 1
    cell.source = cell.source.replace(
        header, 'def predicted_crossover(d, index="compute", meet=break_even):')
    return notebook
# Twelfth round (B-F3): math.ceil without `import math`, which only the visible test cell
# imports, above its calls: right in the notebook (Validate said "Success!"), and a NameError
# in grading (0 of 3).
PREDICTION_WITH_MATH_FROM_THE_TEST_CELL = '''
m_star = break_even(d, index)
if m_star is None:
    return None
s = 2 * d * BLOCKS
words = math.ceil(m_star / s) * s
if words <= m_star:
    words += s
words = max(s, words)
return words if words <= 4096 else None
'''


def build_submissions(source):
    built = h.submissions(source, {
        "every_size": ("search_solution", SEARCH_EVERY_SIZE),
        "library": ("search_solution", SEARCH_WITH_THE_LIBRARY),
        "spins": ("search_solution", SEARCH_SPINS),
        "sign": ("predict_solution", BREAK_EVEN_SIGN, 0),
        "crashes": ("predict_solution", PREDICTION_CRASHES, 1),
        "searches": ("predict_solution", PREDICTION_SEARCHES, 1),
        "none_above_4096": ("predict_solution", PREDICTION_NONE_ABOVE_4096, 1),
    })
    built.update({student: source for student in SOLUTION_IDS})
    built[COPIER] = _copied_solution(source)
    built[HOLDS_BREAK_EVEN] = _holds_break_even(source)
    built["math_from_the_test_cell"] = h.replace_solution(
        source, "predict_solution", PREDICTION_WITH_MATH_FROM_THE_TEST_CELL, 1)
    return built


graded = h.graded_fixture(ASSIGNMENT, build_submissions, spinning=["spins"])



# Validate: the typical bugs as a student's saved notebooks, each with the messages Validate
# must show. A bug in (i) rides with one in (ii): their checks are independent.
VALIDATE = {
    "every_size_and_sign": (
        [("search_solution", SEARCH_EVERY_SIZE), ("predict_solution", BREAK_EVEN_SIGN, 0)],
        ["which is not a multiple of 2d BLOCKS = ", "predicted_crossover("]),
    "spins_and_crashes": (
        [("search_solution", SEARCH_SPINS), ("predict_solution", PREDICTION_CRASHES, 1)],
        ["crossover(4, 'compute') did not return within 10 s",
         "predicted_crossover(1, 'compute') raised TypeError"]),
    # an answer that gives up and a break_even cut to a whole number: Validate passed both
    "gives_up_and_truncated": (
        [("search_solution", SEARCH_GIVES_UP), ("predict_solution", BREAK_EVEN_TRUNCATED, 0)],
        ["returned None, but d cycles are strictly faster at a multiple of 2d BLOCKS",
         "the two straight lines do not meet there"]),
    # predicted_crossover with a break_even rebound in the visible cell too
    "at_or_above": ([("predict_solution", PREDICTION_AT_OR_ABOVE, 1)],
                    ["for d = 4, predicted_crossover(4, 'compute') returned"]),
    "without_max": ([("predict_solution", PREDICTION_WITHOUT_MAX, 1)],
                    ["with a break_even that returns -7.0 for d = 1"]),
    # twelfth round (B-F6): a locked set-up value set again above the answer (Table 9's
    # blocks): Validate said "Success!", its checks reading that value, then 0 of 6
    "blocks_changed": ([h.code_above("search_solution", "BLOCKS = 10\n")],
                       ["your cells changed BLOCKS: they set it to 10, the set-up cell "
                        "gives"]),
}


def _validated_submissions(source):
    built = h.submissions(source, {student: changes for student, (changes, _) in VALIDATE.items()})
    built[HOLDS_BREAK_EVEN] = _holds_break_even(source)
    return built


validated = validated_fixture(ASSIGNMENT, _validated_submissions, [*VALIDATE, HOLDS_BREAK_EVEN])


def test_a_prediction_that_holds_break_even_keeps_full_marks(graded, validated):
    _, results = graded
    h.assert_full_marks(results[HOLDS_BREAK_EVEN])
    assert validated[HOLDS_BREAK_EVEN].passed, validated[HOLDS_BREAK_EVEN].text


def test_release_hides_solution_and_hidden_tests(graded):
    course, _ = graded
    h.assert_release_hides(course, ASSIGNMENT, [
        "np.argmax(faster)", "slope_one", "_reference", "_searched", "floor(m_star"],
        shows=['def crossover(d, index="compute"):', 'def break_even(d, index="compute"):',
               'def predicted_crossover(d, index="compute"):'], unanswered=3)


def test_solution_gets_full_marks(graded):
    h.assert_solution_full_marks(graded, ASSIGNMENT, {"search_tests", "predict_tests"}, 6)


@pytest.mark.parametrize("student, scores, cell, message", [
    ("every_size", {"search_tests": 0, "predict_tests": 3}, "search_tests",
     "which is not a multiple of 2d BLOCKS = "),
    ("library", {"search_tests": 0, "predict_tests": 3}, "search_tests", "cycles_crossover"),
    ("spins", {"search_tests": 0, "predict_tests": 3}, "search_tests",
     "did not return within 10 s of real time"),
    ("sign", {"search_tests": 3, "predict_tests": 0}, "predict_tests",
     "but there d cycles take"),
    ("crashes", {"search_tests": 3, "predict_tests": 0}, "predict_tests",
     "predicted_crossover(1, 'compute') raised TypeError"),
    # the task asks for a prediction from break_even: a search gives the same results on the
    # models, so it is graded with break_even giving other values of M*
    ("searches", {"search_tests": 3, "predict_tests": 0}, "predict_tests",
     "with a break_even that returns "),
    # an M* at the last multiple of s up to 4096: the next one is above 4096
    ("none_above_4096", {"search_tests": 3, "predict_tests": 0}, "predict_tests",
     "with a break_even that returns "),
])
def test_wrong_submissions_get_partial_marks(graded, student, scores, cell, message):
    _, results = graded
    result = results[student]
    assert result.scores == scores, result.messages()
    assert message in flat(result.messages(cell)), result.messages(cell)


test_validate_passes_the_solution, test_validate_reports_each_named_bug = validate_tests(
    {student: v[1] for student, v in VALIDATE.items()})


def test_the_visible_checks_say_what_they_do_not_check(graded):
    # the library's crossover passes every visible check: the release says so
    course, _ = graded
    assert ("Not checked here (the graded tests check them): that the search is your own work."
            in flat(
                h.released_text(course, ASSIGNMENT)).replace('" "', ""))


def test_no_message_states_a_crossover_or_a_line(graded):
    # Table 9's values and the models' lines are what the student is asked to find
    course, results = graded
    text = h.released_text(course, ASSIGNMENT)
    assert "== 80" not in text and "72 < m4 < 80" not in text
    for student, result in results.items():
        assert "expected" not in result.messages() and "T1 = " not in result.messages(), student


def test_the_solution_gets_full_marks_in_every_variant(graded):
    _, results = graded
    assert len({_blocks(s) for s in ("solution", *SOLUTION_IDS)}) == 3
    for student in SOLUTION_IDS:
        h.assert_full_marks(results[student])


def test_an_answer_copied_from_another_variant_fails_without_the_right_values(graded):
    _, results = graded
    result = results[COPIER]
    assert result.scores == {"search_tests": 0, "predict_tests": 0}, result.messages()
    text = flat(result.messages())
    for found in re.finditer(r"crossover\((\d+), '(\w+)'\) returned", text):
        d, index = int(found.group(1)), found.group(2)
        want = _reference(d, index, _blocks(COPIER))
        rest = text[found.end():].split("crossover(")[0].replace(f"= {2 * d * _blocks(COPIER)}", "")
        assert want is None or not re.search(rf"\b{want}\b", rest), (want, rest)


test_a_visible_check_records_its_kind_of_failure = visible_kind_test([
    ("every_size", "search_tests", "wrong_result"),
    ("sign", "predict_tests", "wrong_result"),
])


def test_a_module_only_a_test_cell_imports_works_as_in_the_notebook(graded):
    # the test cells' visible imports run in the student's processes where the cells stand
    _, results = graded
    h.assert_full_marks(results["math_from_the_test_cell"])


test_no_line_of_a_message_is_cut_by_validate = message_width_test()
