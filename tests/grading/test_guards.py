"""Tests of collective_lib.grading.guards: the wall-clock guard and guarded_call (and
as_real, how a check reads the number it got back).

A student's plain function must come back with its value, and an exception or an
endless loop in it must become an AssertionError that says what went wrong; the
wall-clock guard must stop code that never returns and leave every signal
handler and timer as it found them.
"""
import contextlib
import math
import signal
import sys
import threading
import time
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from collective_lib.autograde.codec import decode, encode
from collective_lib.grading import (WallClockLimitExceeded, as_real, guarded_call,
                                    wall_clock_limit)

needs_alarm = pytest.mark.skipif(not hasattr(signal, "setitimer"),
                                 reason="the wall-clock guard needs SIGALRM and setitimer")



# -- guarded_call ---------------------------------------------------------------------

def test_guarded_call_returns_the_value():
    assert guarded_call(pow, 2, 10) == 1024
    assert guarded_call(sorted, [3, 1, 2], reverse=True) == [3, 2, 1]


def test_guarded_call_explains_an_exception():
    def best_k(n, p):
        return [1, 2][n]

    with pytest.raises(AssertionError) as err:
        guarded_call(best_k, 64, 7)
    text = str(err.value)
    assert text.startswith("best_k(64, 7) raised IndexError: list index out of range")
    assert "of best_k: `return [1, 2][n]`" in text


def test_guarded_call_hints_at_the_skeleton():
    def skeleton(n):
        raise NotImplementedError()

    with pytest.raises(AssertionError, match="NotImplementedError"):
        guarded_call(skeleton, 3)


@needs_alarm
def test_guarded_call_stops_an_endless_function():
    def search(n):
        while True:
            n += 1

    start = time.monotonic()
    with pytest.raises(AssertionError, match=r"search\(0\) did not return within 0.2 s"):
        guarded_call(search, 0, time_limit_s=0.2)
    assert time.monotonic() - start < 5


# -- wall_clock_limit -------------------------------------------------------------------

@needs_alarm
def test_wall_clock_limit_lets_fast_code_through_and_disarms():
    with wall_clock_limit(2.0):
        value = sum(range(100))
    assert value == 4950
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


@needs_alarm
def test_wall_clock_limit_restores_the_previous_handler():
    calls = []

    def previous(signum, frame):
        calls.append(signum)

    old = signal.signal(signal.SIGALRM, previous)
    try:
        with wall_clock_limit(1.0):
            pass
        assert signal.getsignal(signal.SIGALRM) is previous
        with pytest.raises(WallClockLimitExceeded, match="too slow"):
            with wall_clock_limit(0.05, "too slow"):
                while True:
                    pass
        assert signal.getsignal(signal.SIGALRM) is previous
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        assert calls == []
    finally:
        signal.signal(signal.SIGALRM, old)


@needs_alarm
def test_wall_clock_limit_gives_an_outer_timer_back():
    old = signal.signal(signal.SIGALRM, lambda signum, frame: None)
    try:
        signal.setitimer(signal.ITIMER_REAL, 30.0)
        with wall_clock_limit(1.0):
            pass
        remaining = signal.getitimer(signal.ITIMER_REAL)[0]
        assert 25.0 < remaining <= 30.0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@needs_alarm
def test_nested_guards_report_the_outer_deadline():
    with pytest.raises(WallClockLimitExceeded, match="outer"):
        with wall_clock_limit(0.1, "outer"):
            with wall_clock_limit(10.0, "inner"):
                while True:
                    pass
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    with pytest.raises(WallClockLimitExceeded, match="inner"):
        with wall_clock_limit(10.0, "outer"):
            with wall_clock_limit(0.1, lambda: "inner, computed late"):
                while True:
                    pass


@needs_alarm
def test_a_swallowed_interruption_is_repeated():
    with pytest.raises(WallClockLimitExceeded, match="stubborn"):
        with wall_clock_limit(0.05, "stubborn"):
            try:
                while True:
                    pass
            except BaseException:       # a student's bare except: swallows the first alarm
                pass
            while True:                 # ... and loops again
                pass


@needs_alarm
def test_an_alarm_while_a_context_manager_exits_is_put_off(monkeypatch):
    # Raised in contextlib's exit machinery, the interruption skipped exits: a guard held by a
    # generator-based context manager (as check_collective_program holds its own) whose
    # __exit__ it hit before that threw into the generator never exited, stayed armed and
    # went on interrupting what ran next (Validate's report of the next cells, a checker).
    reached = []
    monkeypatch.setattr(wall_clock_limit, "RETRY", 0.5)     # long enough to look at the timer

    @contextlib.contextmanager
    def exiting():
        yield
        alarm = signal.getsignal(signal.SIGALRM)
        alarm(signal.SIGALRM, sys._getframe(1))     # as if it came in contextlib's __exit__

    with pytest.raises(WallClockLimitExceeded, match="late"):
        with wall_clock_limit(10.0, "late"):
            with exiting():
                pass
            reached.append(signal.getitimer(signal.ITIMER_REAL)[0])
            while True:                             # the alarm put off comes here
                pass
    assert len(reached) == 1 and 0 < reached[0] <= wall_clock_limit.RETRY
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


@needs_alarm
def test_code_that_waits_inside_an_exit_is_stopped_all_the_same():
    start = time.monotonic()
    with pytest.raises(WallClockLimitExceeded, match="asleep"):
        with wall_clock_limit(0.05, "asleep"):
            with contextlib.ExitStack() as stack:
                stack.callback(time.sleep, 60)      # sleeps in contextlib's exit
    assert time.monotonic() - start < 10                   # not the 60 s of the sleep
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


@needs_alarm
def test_an_inner_guard_stopped_at_the_outer_deadline_gives_the_alarm_back_for_later():
    # The interruption is on its way to the outer guard: its alarm comes again only if the
    # interruption is swallowed, and not before REPEAT (it came after a millisecond, while
    # the exception was still leaving the context managers between the two guards).
    given_back = []
    with pytest.raises(WallClockLimitExceeded, match="outer"):
        with wall_clock_limit(0.1, "outer"):
            try:
                with wall_clock_limit(10.0, "inner"):
                    while True:
                        pass
            except BaseException:                   # swallowed: the outer guard insists
                given_back.append(signal.getitimer(signal.ITIMER_REAL)[0])
            while True:
                pass
    assert given_back and given_back[0] > 10 * wall_clock_limit.RETRY


def test_wall_clock_limit_outside_the_main_thread_does_nothing():
    result = []

    def worker():
        with wall_clock_limit(0.01):
            time.sleep(0.05)
            result.append("done")

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert result == ["done"]


def test_wall_clock_limit_rejects_bad_budgets():
    with pytest.raises(ValueError):
        wall_clock_limit(0)


@pytest.mark.parametrize("answer, read", [
    (3, 3.0), (2.5, 2.5), (Fraction(7, 2), 3.5), (Decimal("0.1"), 0.1), (np.int64(4), 4.0),
    (np.float32(1.5), 1.5), (-0.0, 0.0),
    (True, None), (np.True_, None), (float("nan"), None), (float("inf"), None),
    (Decimal("Infinity"), None), (10 ** 400, None), ("3", None), (None, None), ([1.0], None),
    (1 + 0j, None),
])
def test_an_answer_that_must_be_a_number_is_read_alike_in_the_notebook_and_when_graded(
        answer, read):
    # a Decimal crosses from the student's process as its nearest float: the visible
    # checks, which see it as it is, must pass it too
    assert as_real(answer) == read and (read is None or type(as_real(answer)) is float)
    if read is not None:
        assert as_real(decode(encode(answer))) == read


def test_an_answer_may_be_infinite_where_the_check_says_so():
    for infinity in (math.inf, -math.inf, Decimal("Infinity"), np.float64("inf")):
        assert as_real(infinity) is None and abs(as_real(infinity, infinite=True)) == math.inf
    assert as_real(math.nan, infinite=True) is None and as_real(Decimal("NaN")) is None
