"""nbgrader round trip of `fit_and_predict` (Chapter 7: calibration and the crossover).

The source notebook is released with ``nbgrader generate_assignment`` (the release
must hide the fit, the crossover formula, the hidden tests and the model answer),
and a set of submissions is autograded in one ``nbgrader autograde`` run: the
instructor's solution (full marks), typical slips in the fit and in the crossover
(each costs only its own cell, with a hint in the message), a fit that calls the
library's calibration (rejected), and a crashing and an endless function (no marks
for that cell, and grading still finishes quickly). The timings are synthetic, so
the grades do not depend on the machine.

Each student's timings hold REPEATS round trips each and come from their own constants and seed
(collective_lib.autograde.variants): the solution gets full marks under a second id with other
values, and a fit written for another variant (its REPEATS written in) fails, without any
message stating the constants or the fit that would pass.

Every typical slip is also handed to ``nbgrader validate`` as a student's saved notebook:
the Validate button must not say "Success!" for any of them, and it must for the solution.
"""
from __future__ import annotations

import math
import re

import numpy as np
import pytest

import nbgrader_harness as h
from messages import flat
from collective_lib.autograde.variants import variant
from collective_lib.mpi import fit_ts_tw
from exercise_submissions import (message_width_test, validate_tests, validated_fixture,
                                  visible_kind_test)

ASSIGNMENT = "fit_and_predict"
CELLS = ("fit_tests", "crossover_tests")
FULL_MARKS = {"fit_tests": 4, "crossover_tests": 3}
WRITTEN_CELLS = {"explain_crossover": 0, "explain_crossover_rubric": 0}   # graded by hand later

SOLUTION_IDS = ("alice",)              # REPEATS 5 ("solution": 4), other constants and seed
COPIER = "copier"                      # REPEATS 8; copies the fit of "solution", REPEATS 4 in it


def _copied_fit(source):
    """The solution with another student's REPEATS written in as a number."""
    return h.replace_solution(source, "fit_solution", f'''
m = np.asarray(words, dtype=float)
t = np.asarray(round_trips, dtype=float) / (2 * {variant(ASSIGNMENT, "solution").repeats})
design = np.column_stack([np.ones_like(m), m]) / t[:, None]
(ts, tw), *_ = np.linalg.lstsq(design, np.ones_like(t), rcond=None)
return float(ts), float(tw)
''')


def _right_fit(student):
    """The fit of ``student``'s own timings (what their visible check wants) and the constants."""
    chosen = variant(ASSIGNMENT, student)
    ts, tw = chosen.ts_us * 1e-6, chosen.tw_ns * 1e-9
    words = [2 ** j for j in range(21)]
    rng = np.random.default_rng(chosen.seed)
    one_way = ts + tw * np.asarray(words, dtype=float)
    timings = 2 * chosen.repeats * one_way * np.exp(0.05 * rng.standard_normal(len(words)))
    return fit_ts_tw(words, timings / (2 * chosen.repeats)), (ts, tw)


FIT_NOT_HALVED = '''
m = np.asarray(words, dtype=float)
t = np.asarray(round_trips, dtype=float) / 2           # as if each timing were one round trip
design = np.column_stack([np.ones_like(m), m]) / t[:, None]
(ts, tw), *_ = np.linalg.lstsq(design, np.ones_like(t), rcond=None)
return float(ts), float(tw)
'''

FIT_PLAIN_LEAST_SQUARES = '''
m = np.asarray(words, dtype=float)
t = np.asarray(round_trips, dtype=float) / (2 * REPEATS)
(ts, tw), *_ = np.linalg.lstsq(np.column_stack([np.ones_like(m), m]), t, rcond=None)
return float(ts), float(tw)
'''

FIT_CALLS_THE_LIBRARY = '''
from collective_lib.mpi import fit_ts_tw
return fit_ts_tw(words, np.asarray(round_trips) / (2 * REPEATS))
'''

FIT_SPINS = '''
ts = 0.0
while ts >= 0:                        # never returns
    ts += 1.0
return ts, 0.0
'''

# Right on the visible timings, then an int beyond any float: the hidden check's isfinite
# raised "OverflowError: int too large to convert to float" instead of saying what is wrong.
FIT_HUGE_ELSEWHERE = '''
m = np.asarray(words, dtype=float)
t = np.asarray(round_trips, dtype=float) / (2 * REPEATS)
design = np.column_stack([np.ones_like(m), m]) / t[:, None]
(ts, tw), *_ = np.linalg.lstsq(design, np.ones_like(t), rcond=None)
if list(words) != list(WORDS):
    return 10 ** 400, float(tw)
return float(ts), float(tw)
'''

CROSSOVER_WITHOUT_FACTOR_2 = '''
levels = math.log2(p)
return levels * ts / (tw * (levels - (p - 1) / p))
'''

CROSSOVER_NONE_FOR_NEVER = '''
levels = math.log2(p)
gain = tw * (levels - 2 * (p - 1) / p)
return levels * ts / gain if gain > 0 else None
'''

CROSSOVER_DIVIDES_BY_ZERO = '''
levels = math.log2(p)
return levels * ts / (tw * (levels - 2 * (p - 1) / p))
'''

# A careful numerical answer: bisection on the difference of the two closed forms,
# down to 1e-6 words (student audit: "Success!", then 0 of 3 with a message that
# contradicted itself, "returned 4, but there the binomial tree takes 10 and
# scatter + all-gather 10").
CROSSOVER_BY_BISECTION = '''
if math.log2(p) <= 2 * (p - 1) / p:
    return math.inf
def gap(m):
    return binomial_time(p, m, ts, tw) - scatter_allgather_time(p, m, ts, tw)
low, high = 0.0, 1.0
while gap(high) < 0:
    high *= 2
while high - low > 1e-6:
    middle = (low + high) / 2
    if gap(middle) < 0:
        low = middle
    else:
        high = middle
return high
'''

# No start-up cost taken for "never": but with ts = 0 scatter + all-gather wins for
# every m > 0 from p = 4 on, so m* = 0 (student audit: "Success!", then a message
# about long messages).
CROSSOVER_INF_WITHOUT_STARTUP = '''
if ts == 0:
    return math.inf
levels = math.log2(p)
gain = tw * (levels - 2 * (p - 1) / p)
return levels * ts / gain if gain > 0 else math.inf
'''


# A bisection to an absolute 1e-3 words (student audit: "Success!", the visible cases all
# having m* >= ~6000 words, where 1e-3 is within 1e-6 m*; then 0 of 3 on ts = tw = 1).
CROSSOVER_BISECTION_TO_1E_3 = '''
def gain(m):
    return binomial_time(p, m, ts, tw) - scatter_allgather_time(p, m, ts, tw)
hi = 1.0
while gain(hi) <= 0:
    hi *= 2
    if hi > 1e15:
        return math.inf
lo = 0.0
while hi - lo > 1e-3:
    mid = (lo + hi) / 2
    if gain(mid) > 0:
        hi = mid
    else:
        lo = mid
return lo
'''

# m* = 0 whenever ts = 0, forgetting that for p <= 2 scatter + all-gather never wins
# (student audit: "Success!", the visible ts = 0 case being p = 8 alone; then 0 of 3 with
# a message that said the two forms should take the same time, which they did).
CROSSOVER_ZERO_WITHOUT_STARTUP = '''
if ts == 0:
    return 0.0
L = math.log2(p)
saving = L - 2 * (p - 1) / p
if saving <= 0:
    return math.inf
return L * ts / (tw * saving)
'''


# The solution's answers as Decimals: numbers, which crossed as floats when graded but the
# visible checks refused (numbers.Real holds no Decimal): Validate failed what grading passed
AS_DECIMALS = [h.code_below("fit_solution", """
from decimal import Decimal
_fit_in_floats = fit_ping_pong
def fit_ping_pong(words, round_trips):
    return tuple(Decimal(repr(float(x))) for x in _fit_in_floats(words, round_trips))
"""), h.code_below("crossover_solution", """
_crossover_in_floats = crossover
def crossover(ts, tw, p):
    return Decimal(repr(float(_crossover_in_floats(ts, tw, p))))
""")]


def build_submissions(source):
    built = h.submissions(source, {
        "decimals": AS_DECIMALS,
        "fit_not_halved": ("fit_solution", FIT_NOT_HALVED),
        "fit_plain_least_squares": ("fit_solution", FIT_PLAIN_LEAST_SQUARES),
        "fit_calls_library": ("fit_solution", FIT_CALLS_THE_LIBRARY),
        "fit_spins": ("fit_solution", FIT_SPINS),
        "fit_huge_elsewhere": ("fit_solution", FIT_HUGE_ELSEWHERE),
        "crossover_without_factor_2": ("crossover_solution", CROSSOVER_WITHOUT_FACTOR_2),
        "crossover_none_for_never": ("crossover_solution", CROSSOVER_NONE_FOR_NEVER),
        "crossover_divides_by_zero": ("crossover_solution", CROSSOVER_DIVIDES_BY_ZERO),
        "crossover_by_bisection": ("crossover_solution", CROSSOVER_BY_BISECTION),
        "crossover_inf_without_startup": ("crossover_solution",
                                          CROSSOVER_INF_WITHOUT_STARTUP),
        "crossover_bisection_to_1e_3": ("crossover_solution", CROSSOVER_BISECTION_TO_1E_3),
        "crossover_zero_without_startup": ("crossover_solution",
                                           CROSSOVER_ZERO_WITHOUT_STARTUP),
    })
    built.update({student: source for student in SOLUTION_IDS})
    built[COPIER] = _copied_fit(source)
    return built


graded = h.graded_fixture(ASSIGNMENT, build_submissions, spinning=["fit_spins"])



# Validate: the typical slips as a student's saved notebooks (the written answer filled in, so
# that only the code decides), each with the messages Validate must show. A slip in the fit
# rides with one in the crossover: their checks are independent.
VALIDATE = {
    "not_halved_without_factor_2": (
        [("fit_solution", FIT_NOT_HALVED), ("crossover_solution", CROSSOVER_WITHOUT_FACTOR_2)],
        ["Is each timing divided by the 2 REPEATS messages it holds", "at m* the two closed forms should take the same time"]),
    "plain_least_squares_none_for_never": (
        [("fit_solution", FIT_PLAIN_LEAST_SQUARES),
         ("crossover_solution", CROSSOVER_NONE_FOR_NEVER)],
        ["your fit gives ts = ", "are the residuals relative, and is the pair in the order (ts, tw)?",
         "crossover(ts=2e-06, tw=5e-10, p=1) returned None; it must return"]),
    "spins_divides_by_zero": (
        [("fit_solution", FIT_SPINS), ("crossover_solution", CROSSOVER_DIVIDES_BY_ZERO)],
        ["WallClockLimitExceeded: fit_ping_pong(", "raised ZeroDivisionError"]),
    # the library's fit passes the visible check of the fit: Validate must say it is refused
    "library": ([("fit_solution", FIT_CALLS_THE_LIBRARY)],
                ["fit_ping_pong uses the library's `fit_ts_tw`"]),
    "inf_without_startup": ([("crossover_solution", CROSSOVER_INF_WITHOUT_STARTUP)],
                            ["crossover(ts=0, tw=5e-10, p=8) returned inf"]),
    # both said "Success!" once: a visible case with a small m* (ts = tw = 1), and ts = 0
    # with p = 1 and 2, where the forms are equal above m* = 0
    "bisection_to_1e_3": ([("crossover_solution", CROSSOVER_BISECTION_TO_1E_3)],
                          ["crossover(ts=1, tw=1, p=8) returned 2.399"]),
    "zero_without_startup": ([("crossover_solution", CROSSOVER_ZERO_WITHOUT_STARTUP)],
                             ["crossover(ts=0, tw=5e-10, p=1) returned 0.0",
                              "scatter + all-gather is not faster than the binomial tree"]),
    # twelfth round (B-F6): REPEATS set again above the fit (one round trip per timing):
    # Validate said "Success!", its check reading that value, then 0 of 4
    "repeats_changed": ([h.code_above("fit_solution", "REPEATS = 1\n")],
                        ["your cells changed REPEATS: they set it to 1, the set-up cell "
                         "gives"]),
}
WRITTEN = {"explain_crossover": "m* = (ts/tw) L / (L - 2(p-1)/p)."}


validated = validated_fixture(ASSIGNMENT, lambda source: h.submissions(
    source, {"decimals": AS_DECIMALS,
             **{student: changes for student, (changes, _) in VALIDATE.items()}}),
    [*VALIDATE, "decimals"], written=WRITTEN)


def test_answers_given_as_decimals_pass_validate_and_get_full_marks(graded, validated):
    _, results = graded
    h.assert_full_marks(results["decimals"])
    assert validated["decimals"].passed, validated["decimals"].text


def test_release_hides_solution_and_hidden_tests(graded):
    course, _ = graded
    h.assert_release_hides(course, ASSIGNMENT, [
        "np.linalg.lstsq(design", "/ t[:, None]", "slope_gain", "levels - 2 * (p - 1) / p",
        "_reference", "_timings", "Model answer", "Rubric",
        "9600", "L - 2(p-1)/p"],
        shows=["def fit_ping_pong(words, round_trips):", "def crossover(ts, tw, p):",
               "YOUR ANSWER HERE",
               "def synthetic_ping_pong(words, ts, tw, noise, seed, repeats):",
               'VARIANT = variant("fit_and_predict")', "REPEATS = VARIANT.repeats"],
        unanswered=2)


def test_solution_gets_full_marks(graded):
    h.assert_solution_full_marks(graded, ASSIGNMENT, CELLS, 10, by_hand={"explain_crossover": 3})


@pytest.mark.parametrize("student, cell, message", [
    ("fit_not_halved", "fit_tests", "Is each timing divided by the 2 REPEATS messages it holds"),
    ("fit_not_halved", "fit_tests", "more than 20% off the constants that made the data"),
    ("fit_plain_least_squares", "fit_tests", "is not the least-squares fit with relative residuals"),
    ("fit_calls_library", "fit_tests", "uses the library's `fit_ts_tw`"),
    ("fit_spins", "fit_tests", "did not return within 5 s of real time"),
    ("fit_huge_elsewhere", "fit_tests",
     "fit_ping_pong must return a pair of finite numbers (ts, tw), got (1000"),
    ("crossover_without_factor_2", "crossover_tests",
     "at m* the two closed forms should take the same time"),
    ("crossover_none_for_never", "crossover_tests",
     "crossover(ts=2e-06, tw=5e-10, p=1) returned None; it must return a number m* >= 0 "
     "(math.inf"),
    ("crossover_divides_by_zero", "crossover_tests", "raised ZeroDivisionError"),
    ("crossover_inf_without_startup", "crossover_tests",
     "crossover(ts=0, tw=5e-10, p=8) returned inf, but at m = "),
    ("crossover_bisection_to_1e_3", "crossover_tests",
     "crossover(ts=1, tw=1, p=8) returned 2.399"),
    # equal forms just above m* = 0: the message says that scatter + all-gather is not
    # faster there, and what the answer is where it never is
    ("crossover_zero_without_startup", "crossover_tests",
     "crossover(ts=0, tw=5e-10, p=1) returned 0.0, but at m = 1e-06 words, just above it, "
     "scatter + all-gather is not faster than the binomial tree: both take 0.0. Above m* "
     "it must be faster; if it is never faster, whatever the message length, the answer "
     "is math.inf"),
])
def test_each_slip_costs_only_its_own_cell(graded, student, cell, message):
    _, results = graded
    result = results[student]
    assert result.scores == {**FULL_MARKS, **WRITTEN_CELLS, cell: 0}
    assert message in flat(result.messages(cell)), result.messages(cell)


def test_a_crossover_found_numerically_gets_full_marks(graded):
    """m* to within 1e-6 max(1, m*) words is what the task asks for, and what both the
    visible and the hidden check accept."""
    _, results = graded
    h.assert_full_marks(results["crossover_by_bisection"])


def test_the_task_states_the_precision_of_m_star(graded):
    course, _ = graded
    released = flat(h.released_text(course, ASSIGNMENT))
    assert "to within $10^{-6}\\max(1, m^*)$ words" in released


test_validate_passes_the_solution, test_validate_reports_each_named_bug = validate_tests(
    {student: v[1] for student, v in VALIDATE.items()})


def test_the_visible_checks_say_what_they_do_not_check(graded):
    # the visible check refuses the library's fit, but not a fit copied from elsewhere, nor
    # every timing: the release says what the graded tests add
    course, _ = graded
    assert ("Not checked here (the graded tests check them): the exact fit on other timings, and "
            "that the fit is your own work." in flat(h.released_text(course, ASSIGNMENT)).replace(
                '" "', ""))


def test_no_message_answers_a_written_question(graded):
    # the written questions ask for m*'s closed form, for the p without a crossover and why,
    # and for m* on this machine: no feedback may state them (nor the fit the hidden tests want)
    _, results = graded
    for student, result in results.items():
        text = flat(result.messages())
        for answer in ("they are equal at m* =", "2(p-1)/p", "log2 p", "per word it pays",
                       "the least-squares fit with relative residuals is ts ="):
            assert answer not in text, (student, answer)


def test_the_solution_gets_full_marks_in_another_variant(graded):
    _, results = graded
    values = {tuple(variant(ASSIGNMENT, s).values()) for s in ("solution", *SOLUTION_IDS)}
    assert len({v[2] for v in values}) == len(values) == 1 + len(SOLUTION_IDS)   # REPEATS differ
    for student in SOLUTION_IDS:
        h.assert_full_marks(results[student])


def _numbers(text):
    return [float(x) for x in re.findall(r"(?<![\w.])\d+(?:\.\d+)?(?:e[-+]?\d+)?", text)]


def test_a_fit_copied_from_another_variant_fails_without_the_right_values(graded):
    _, results = graded
    result = results[COPIER]
    assert variant(ASSIGNMENT, COPIER).repeats != variant(ASSIGNMENT, "solution").repeats
    assert result.scores == {**FULL_MARKS, **WRITTEN_CELLS, "fit_tests": 0}, result.messages()
    text = _failure_message(result, "fit_tests")
    assert "your fit gives ts = " in text, text
    # neither the fit of the copier's timings nor the constants that made them, to 2 digits
    for right in (*_right_fit(COPIER)[0], *_right_fit(COPIER)[1]):
        for number in _numbers(text):
            assert not math.isclose(number, right, rel_tol=0.01), (right, text)


def _failure_message(result, grade_id):
    """What the failed check of cell ``grade_id`` says (its exception's message), flattened."""
    return flat(" ".join(out.get("evalue", "") for out in result.cell(grade_id).get("outputs", [])
                          if out.get("output_type") == "error"))


def test_no_message_states_the_constants_of_the_data(graded):
    _, results = graded
    for student, result in results.items():
        text = flat(result.messages())
        assert "the data were made with" not in text and "made with ts =" not in text, student
        if student in ("solution", *SOLUTION_IDS):
            continue
        text = _failure_message(result, "fit_tests")
        (fit_ts, fit_tw), (true_ts, true_tw) = _right_fit(student)
        for right in (fit_ts, fit_tw, true_ts, true_tw):
            assert not any(math.isclose(n, right, rel_tol=0.01) for n in _numbers(text)), (
                student, right)


test_a_visible_check_records_its_kind_of_failure = visible_kind_test([
    ("fit_not_halved", "fit_tests", "wrong_result"),
    ("crossover_none_for_never", "crossover_tests", "wrong_form"),
])


test_no_line_of_a_message_is_cut_by_validate = message_width_test()
