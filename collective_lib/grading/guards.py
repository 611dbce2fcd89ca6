"""Guards around a student's code: a wall-clock limit, silence, and failures told as advice.

Every grading helper runs a student's code inside :func:`wall_clock_limit` (which
stops a loop that never yields) and ``quiet`` (nbgrader gives zero points to a
test cell that writes to stderr), and turns an exception of the student's code
into an :class:`AssertionError` that names the student's own line
(``explain_exception``). :func:`guarded_call` does all of that for a plain
function, and :func:`as_real` reads the number it returned as grading does. Imported in
IPython (a notebook, ``nbgrader validate``), it also keeps
the frames of this package out of the tracebacks a student reads
(:func:`hide_grading_frames`).
"""
from __future__ import annotations

import contextlib
import math
import numbers
import os
import signal
import sys
import threading
import time
import types
import warnings
from decimal import Decimal
from typing import Any, Callable

import numpy as np

from ._advice import explain_exception, format_value, name_of, quiet
from .failures import CheckFailed

__all__ = ["wall_clock_limit", "WallClockLimitExceeded", "guarded_call", "as_real",
           "hide_grading_frames",
           "scaled_time_limits"]

# -- the wall-clock guard --------------------------------------------------------------

class _WallClockExpired(BaseException):
    """Raised by the alarm handler inside the guarded code.

    A ``BaseException`` (like ``KeyboardInterrupt``), so that a student's
    ``except Exception:`` cannot swallow it.
    """


class WallClockLimitExceeded(CheckFailed):
    """The guarded code ran out of real time (raised by :func:`wall_clock_limit`); its kind
    is ``"time_limit"``."""

    kind = "time_limit"


class wall_clock_limit:
    """Stop the code in a ``with`` block after ``seconds`` of real time.

    On expiry the block is interrupted and :class:`WallClockLimitExceeded`
    (an :class:`AssertionError`) with ``message`` is raised from the ``with``
    statement.  This stops loops that
    never return control to the simulator (``while True: pass``), which
    ``max_ops`` cannot see.  It uses ``SIGALRM`` and ``setitimer``, so it works
    in the main thread on POSIX systems (where Jupyter kernels run their
    cells); elsewhere it does nothing.  The previous ``SIGALRM`` handler and any
    timer already running (an outer guard) are restored on exit.  An alarm that
    comes while a context manager enters or exits is put off by :attr:`RETRY`
    (for :attr:`REPEAT` at most): raised there, it would skip that exit.

    Parameters
    ----------
    seconds : float
        Real-time budget of the block.
    message : str or callable, optional
        Text of the AssertionError, or a function of no arguments that returns
        it (called at expiry, so it can say what was running then).

    Examples
    --------
    >>> with wall_clock_limit(5.0):
    ...     total = sum(range(1000))
    >>> total
    499500
    >>> try:
    ...     with wall_clock_limit(0.05, "the loop never ended"):
    ...         while True:
    ...             pass
    ... except AssertionError as err:
    ...     print(err)
    the loop never ended
    """

    #: Once expired, the alarm fires again every this many seconds, so a
    #: program that swallows the first interruption is interrupted again.
    REPEAT = 0.25

    #: An alarm that comes while a context manager enters or exits is put off by this many
    #: seconds (see :func:`_entering_or_exiting`).
    RETRY = 0.001

    #: Every budget is multiplied by this (see :func:`scaled_time_limits`).
    scale = 1.0

    def __init__(self, seconds: float, message: str | Callable[[], str] | None = None):
        if not isinstance(seconds, (int, float)) or not seconds > 0:
            raise ValueError(f"seconds must be a positive number, got {seconds!r}")
        self.seconds = float(seconds) * wall_clock_limit.scale
        self.message = message
        self.active = False
        self.expired = False
        self._put_off_at = None         # when an alarm was first put off (see _handler)

    def _usable(self) -> bool:
        return (hasattr(signal, "setitimer") and hasattr(signal, "SIGALRM")
                and threading.current_thread() is threading.main_thread())

    def _handler(self, signum, frame):
        if not self.active:
            return
        if _entering_or_exiting(frame):
            if self._put_off_at is None:
                self._put_off_at = time.monotonic()
            # put off for REPEAT at most: code that waits inside an exit (a sleep called by
            # an ExitStack) is stopped all the same
            if time.monotonic() - self._put_off_at < self.REPEAT:
                signal.setitimer(signal.ITIMER_REAL, self.RETRY, self.REPEAT)
                return
        self._put_off_at = None
        self.expired = True
        raise _WallClockExpired()

    def __enter__(self):
        self._armed = self._usable()
        if not self._armed:
            return self
        self._old_handler = signal.getsignal(signal.SIGALRM)
        self._start = time.monotonic()
        # An outer guard that expires first keeps priority: this guard then stops
        # the block at the outer deadline and lets the outer guard report it.  (A
        # timer that is not a guard's is only paused, and given back on exit.)
        outer_delay = signal.getitimer(signal.ITIMER_REAL)[0]
        outer_guard = isinstance(getattr(self._old_handler, "__self__", None), wall_clock_limit)
        self._outer_first = outer_guard and 0 < outer_delay < self.seconds
        delay = outer_delay if self._outer_first else self.seconds
        signal.signal(signal.SIGALRM, self._handler)
        self.active = True
        self._old_timer = signal.setitimer(signal.ITIMER_REAL, delay, self.REPEAT)
        return self

    def __exit__(self, kind, value, tb):
        self.active = False        # first: from here on the alarm handler does nothing
        __tracebackhide__ = True   # IPython: show the message, not these frames
        if not self._armed:
            return False
        signal.setitimer(signal.ITIMER_REAL, 0)
        old = self._old_handler
        signal.signal(signal.SIGALRM, old if old is not None else signal.SIG_DFL)
        delay, interval = self._old_timer
        if delay > 0:       # an outer timer was running: give it back what is left of it
            left = delay - (time.monotonic() - self._start)
            # Stopped at the outer deadline, the block's interruption is on its way to the
            # outer guard, which reports it: its alarm need only come again if the
            # interruption is swallowed on the way.
            soonest = self.REPEAT if self._outer_first and self.expired else self.RETRY
            signal.setitimer(signal.ITIMER_REAL, max(left, soonest), interval)
        timed_out = self.expired or (kind is not None and issubclass(kind, _WallClockExpired))
        if not timed_out:
            return False
        if self._outer_first and self.expired:
            if kind is None:            # the block swallowed the interruption
                raise _WallClockExpired()
            return False                # the outer guard reports it
        message = self.message() if callable(self.message) else self.message
        raise WallClockLimitExceeded(
            message or f"the code did not finish within {self.seconds:g} s of real time "
            "(an endless loop?)") from None


# Where an interruption must not be raised: the code that enters and exits context managers
# (contextlib's, ``warnings.catch_warnings``, these guards). Raised there, it skips an exit:
# stderr stays redirected, or a guard stays armed and goes on interrupting whatever runs
# next (a generator-based context manager whose ``__exit__`` is interrupted before it throws
# into its generator never exits the guard that generator holds).
_MACHINERY = frozenset(os.path.abspath(module.__file__) for module in (contextlib, warnings))
_THIS_FILE = os.path.abspath(__file__)


def _entering_or_exiting(frame: types.FrameType | None) -> bool:
    if frame is None:
        return False
    path = os.path.abspath(frame.f_code.co_filename)
    return path in _MACHINERY or (path == _THIS_FILE
                                  and frame.f_code.co_name in ("__enter__", "__exit__"))


# -- plain functions ------------------------------------------------------------------------

def guarded_call(func: Callable, *args, time_limit_s: float = 10.0, **kwargs) -> Any:
    """Call a student's plain function; explain an exception or a hang as an AssertionError.

    Parameters
    ----------
    func : callable
        The student's function.
    *args, **kwargs
        Its arguments (also shown in messages).
    time_limit_s : float
        Real-time budget of the call.

    Examples
    --------
    >>> guarded_call(max, 3, 7)
    7
    >>> def half(n):
    ...     return n / 0
    >>> try:
    ...     guarded_call(half, 4)
    ... except AssertionError as err:
    ...     print(str(err).splitlines()[0])
    half(4) raised ZeroDivisionError: division by zero
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    shown = ", ".join([format_value(a, 40) for a in args]
                      + [f"{k}={format_value(v, 40)}" for k, v in kwargs.items()])
    what = f"{name_of(func)}({shown})"
    try:
        with quiet(), wall_clock_limit(
                time_limit_s,
                f"{what} did not return within {time_limit_s:g} s of real time. Is there an "
                "endless loop, or a search over far too many candidates? Keep the search "
                "bounded."):
            return func(*args, **kwargs)
    except WallClockLimitExceeded:
        raise
    except Exception as exc:
        raise CheckFailed(explain_exception(exc, what), "exception") from None


# -- what a student reads in IPython ---------------------------------------------------------

# This package's own files: a check's frames, which say nothing to a student.
_GRADING_DIR = os.path.dirname(os.path.abspath(__file__))


def _is_grading_frame(tb: types.TracebackType) -> bool:
    return os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(_GRADING_DIR + os.sep)


def _without_grading_frames(tb: types.TracebackType | None) -> types.TracebackType | None:
    """A copy of the traceback ``tb`` without the frames of this package."""
    kept = []
    while tb is not None:
        if not _is_grading_frame(tb):
            kept.append(tb)
        tb = tb.tb_next
    trimmed = None
    for entry in reversed(kept):
        trimmed = types.TracebackType(trimmed, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return trimmed


def as_real(value: Any, infinite: bool = False) -> float | None:
    """``value`` as a float when it is a finite real number (or an infinite one, with
    ``infinite``), else None: how a check reads an answer that must be a number.

    An ``int``, ``float``, ``Fraction``, ``Decimal`` or NumPy number is one; a ``bool``,
    a NaN, an infinity or a string is not. Graded, a ``Fraction`` or ``Decimal`` reaches
    the checks as its nearest float already (the student's process sends it so); in the
    kernel that runs a notebook (and Validate's), the visible checks see the value itself
    and read it here alike, so that they pass what grading passes.

    >>> from decimal import Decimal
    >>> as_real(Decimal("2.5")), as_real(3), as_real(True), as_real(float("nan"))
    (2.5, 3.0, None, None)
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Real, Decimal)):
        return None
    try:
        number = float(value)
    except (OverflowError, ValueError):         # an int or Fraction beyond any float
        return None
    return number if math.isfinite(number) or (infinite and math.isinf(number)) else None


def _show_without_grading_frames(shell, etype, value, tb, tb_offset=None):
    """IPython's custom exception handler: its usual traceback, minus the grading frames."""
    seen = {id(value)}
    chained = value.__cause__ or (None if value.__suppress_context__ else value.__context__)
    while chained is not None and id(chained) not in seen:     # the exceptions it shows too
        seen.add(id(chained))
        chained.__traceback__ = _without_grading_frames(chained.__traceback__)
        chained = chained.__cause__ or (None if chained.__suppress_context__
                                        else chained.__context__)
    tb = _without_grading_frames(tb)
    shell.showtraceback((etype, value.with_traceback(tb), tb), tb_offset=tb_offset)


@contextlib.contextmanager
def scaled_time_limits(factor: float):
    """Inside the block, every :class:`wall_clock_limit` allows ``factor`` times its budget.

    The trusted checker raises the budgets: there each step of a student's code
    crosses to a sandboxed process and back, and the budgets are there to stop
    endless loops, not to time honest work.

    >>> with scaled_time_limits(2.0):
    ...     wall_clock_limit(1.5).seconds
    3.0
    >>> wall_clock_limit(1.5).seconds
    1.5
    """
    if not isinstance(factor, (int, float)) or not factor > 0:
        raise ValueError(f"factor must be a positive number, got {factor!r}")
    before, wall_clock_limit.scale = wall_clock_limit.scale, float(factor)
    try:
        yield
    finally:
        wall_clock_limit.scale = before


def hide_grading_frames() -> bool:
    """Keep the frames of this package out of the tracebacks IPython shows; True if it does.

    A failed check raises a :class:`~.failures.CheckFailed`, which IPython shows as
    its message alone (the message names the student's line). Any other
    :class:`AssertionError` that passes through this package (a student's own
    ``assert`` in code a check ran) keeps its frames, but the frames of the check
    itself, this package's code, only bury its message in the student's notebook and
    in ``nbgrader validate``. IPython skips frames that set ``__tracebackhide__`` but
    always shows the one that raised, so this registers an IPython handler of
    ``AssertionError`` that shows its usual traceback without this package's frames
    (the student's cell, and the student's own frames, stay). Called when this module is imported; it does
    nothing outside IPython (the trusted checker reports messages itself) or
    where another custom exception handler is already registered. To see every
    frame again: ``get_ipython().set_custom_exc((), None)``.
    """
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None or not hasattr(shell, "set_custom_exc"):
        return False
    if getattr(shell, "_grading_frames_hidden", False):
        return True
    if shell.custom_exceptions:
        return False
    shell.set_custom_exc((AssertionError,), _show_without_grading_frames)
    shell._grading_frames_hidden = True
    return True


hide_grading_frames()
