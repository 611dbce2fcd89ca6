"""nbgrader round trip of `fit_and_predict` (Chapter 7: calibration and the crossover).

The source notebook is released with ``nbgrader generate_assignment`` (the release
must hide the fit, the crossover formula, the hidden tests and the model answer),
and a set of submissions is autograded in one ``nbgrader autograde`` run: the
instructor's solution (full marks), typical slips in the fit and in the crossover
(each costs only its own cell, with a hint in the message), a fit that calls the
library's calibration (rejected), and a crashing and an endless function (no marks
for that cell, and grading still finishes quickly). The timings are synthetic, so
the grades do not depend on the machine.

Every typical slip is also handed to ``nbgrader validate`` as a student's saved notebook:
the Validate button must not say "Success!" for any of them, and it must for the solution.
"""
from __future__ import annotations

import pytest

import nbgrader_harness as h
from exercise_submissions import validate_tests, validated_fixture

ASSIGNMENT = "fit_and_predict"
CELLS = ("fit_tests", "crossover_tests")
FULL_MARKS = {"fit_tests": 4, "crossover_tests": 3}
WRITTEN_CELLS = {"explain_crossover": 0, "explain_crossover_rubric": 0}   # graded by hand later


FIT_NOT_HALVED = '''
m = np.asarray(words, dtype=float)
t = np.asarray(round_trips, dtype=float)               # the whole round trip
design = np.column_stack([np.ones_like(m), m]) / t[:, None]
(ts, tw), *_ = np.linalg.lstsq(design, np.ones_like(t), rcond=None)
return float(ts), float(tw)
'''

FIT_PLAIN_LEAST_SQUARES = '''
m = np.asarray(words, dtype=float)
t = np.asarray(round_trips, dtype=float) / 2
(ts, tw), *_ = np.linalg.lstsq(np.column_stack([np.ones_like(m), m]), t, rcond=None)
return float(ts), float(tw)
'''

FIT_CALLS_THE_LIBRARY = '''
from collective_lib.mpi import fit_ts_tw
return fit_ts_tw(words, np.asarray(round_trips) / 2)
'''

FIT_SPINS = '''
ts = 0.0
while ts >= 0:                        # never returns
    ts += 1.0
return ts, 0.0
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


def build_submissions(source):
    return h.submissions(source, {
        "fit_not_halved": ("fit_solution", FIT_NOT_HALVED),
        "fit_plain_least_squares": ("fit_solution", FIT_PLAIN_LEAST_SQUARES),
        "fit_calls_library": ("fit_solution", FIT_CALLS_THE_LIBRARY),
        "fit_spins": ("fit_solution", FIT_SPINS),
        "crossover_without_factor_2": ("crossover_solution", CROSSOVER_WITHOUT_FACTOR_2),
        "crossover_none_for_never": ("crossover_solution", CROSSOVER_NONE_FOR_NEVER),
        "crossover_divides_by_zero": ("crossover_solution", CROSSOVER_DIVIDES_BY_ZERO),
    })


graded = h.graded_fixture(ASSIGNMENT, build_submissions)


def _flat(text):
    """``text`` with every run of white space made one blank: messages break their lines (so that
    Validate, which cuts lines at 90 characters, shows them whole), and Validate indents them."""
    return " ".join(text.split())


# Validate: the typical slips as a student's saved notebooks (the written answer filled in, so
# that only the code decides), each with the messages Validate must show. A slip in the fit
# rides with one in the crossover: their checks are independent.
VALIDATE = {
    "not_halved_without_factor_2": (
        [("fit_solution", FIT_NOT_HALVED), ("crossover_solution", CROSSOVER_WITHOUT_FACTOR_2)],
        ["Is each round trip halved", "at m* the two closed forms should take the same time"]),
    "plain_least_squares_none_for_never": (
        [("fit_solution", FIT_PLAIN_LEAST_SQUARES),
         ("crossover_solution", CROSSOVER_NONE_FOR_NEVER)],
        ["more than 10% off", "crossover(ts=2e-06, tw=5e-10, p=1) returned None; it must return"]),
    "spins_divides_by_zero": (
        [("fit_solution", FIT_SPINS), ("crossover_solution", CROSSOVER_DIVIDES_BY_ZERO)],
        ["WallClockLimitExceeded: fit_ping_pong(", "raised ZeroDivisionError"]),
}
WRITTEN = {"explain_crossover": "m* = (ts/tw) L / (L - 2(p-1)/p)."}


validated = validated_fixture(ASSIGNMENT, lambda source: h.submissions(
    source, {student: changes for student, (changes, _) in VALIDATE.items()}),
    [*VALIDATE], written=WRITTEN)


def test_release_hides_solution_and_hidden_tests(graded):
    course, _ = graded
    h.assert_release_hides(course, ASSIGNMENT, [
        "np.linalg.lstsq(design", "/ t[:, None]", "slope_gain", "levels - 2 * (p - 1) / p",
        "_reference", "_timings", "forbid_library_calls(", "Model answer", "Rubric",
        "9600", "L - 2(p-1)/p"],
        shows=["def fit_ping_pong(words, round_trips):", "def crossover(ts, tw, p):",
               "YOUR ANSWER HERE", "def synthetic_ping_pong(words, ts, tw, noise, seed):"],
        unanswered=2)


def test_solution_gets_full_marks(graded):
    h.assert_solution_full_marks(graded, ASSIGNMENT, CELLS, 10, by_hand={"explain_crossover": 3})


@pytest.mark.parametrize("student, cell, message", [
    ("fit_not_halved", "fit_tests", "Is each round trip halved"),
    ("fit_plain_least_squares", "fit_tests", "more than 10% off"),
    ("fit_calls_library", "fit_tests", "uses the library's `fit_ts_tw`"),
    ("fit_spins", "fit_tests", "did not return within 5 s of real time"),
    ("crossover_without_factor_2", "crossover_tests",
     "at m* the two closed forms should take the same time"),
    ("crossover_none_for_never", "crossover_tests",
     "crossover(ts=2e-06, tw=5e-10, p=1) returned None; it must return a number m* >= 0 "
     "(math.inf"),
    ("crossover_divides_by_zero", "crossover_tests", "raised ZeroDivisionError"),
])
def test_each_slip_costs_only_its_own_cell(graded, student, cell, message):
    _, results = graded
    result = results[student]
    assert result.scores == {**FULL_MARKS, **WRITTEN_CELLS, cell: 0}
    assert message in _flat(result.messages(cell)), result.messages(cell)


test_validate_passes_the_solution, test_validate_reports_each_named_bug = validate_tests(
    {student: v[1] for student, v in VALIDATE.items()})


def test_the_visible_checks_say_what_they_do_not_check(graded):
    # the library's calibration passes the visible check of the fit: the release says so
    course, _ = graded
    assert ("Not checked here (the graded tests check them): the exact fit on other timings, and "
            "that the fit is your own work." in _flat(h.released_text(course, ASSIGNMENT)).replace(
                '" "', ""))


def test_no_message_answers_a_written_question(graded):
    # the written questions ask for m*'s closed form, for the p without a crossover and why,
    # and for m* on this machine: no feedback may state them (nor the fit the hidden tests want)
    _, results = graded
    for student, result in results.items():
        text = _flat(result.messages())
        for answer in ("they are equal at m* =", "2(p-1)/p", "log2 p", "per word it pays",
                       "the least-squares fit with relative residuals is ts ="):
            assert answer not in text, (student, answer)
