"""Helpers for the autograded exercises: run a student's code safely, explain failures.

The hidden tests of an nbgrader exercise call these functions so that a test
cell stays a few lines long and every failure reads like advice from a tutor:
which p, which root, which PE, what was expected and what came back.

Every helper turns anything that can go wrong in a student's code into an
:class:`AssertionError` with a message that explains it:

* a wrong result or a wrong simulated time;
* a deadlock (:class:`~collective_lib.errors.DeadlockError`) or a message that
  nobody received (:class:`~collective_lib.errors.UnreceivedMessageError`);
* an exception raised by the student's own code;
* an endless program, both one that keeps yielding operations (stopped by
  ``max_ops``) and one that loops without ever yielding (stopped by a
  wall-clock alarm, :func:`wall_clock_limit`);
* a submission that just calls the library's reference implementation
  (:func:`forbid_library_calls`);
* PEs that share Python globals instead of sending messages
  (:func:`check_pe_isolation` runs each PE in its own process).

Nothing here writes to stderr: nbgrader gives zero points to a test cell that
does, so warnings and stray ``stderr`` output of the student's code are
swallowed while it runs.
"""
from __future__ import annotations

import contextlib
import copy
import functools
import inspect
import io
import math
import os
import re
import signal
import sys
import threading
import time
import tokenize
import traceback
import types
import warnings
from typing import Any, Callable, Iterable

import numpy as np

from .autograde import review, static
from .autograde.remote import is_remote
from .autograde.student import FORBIDDEN
from .errors import DeadlockError, OperationLimitError, UnreceivedMessageError
from .isolation import PEProcessError, isolated
from .model import CostModel
from .simulator import Run, simulate

__all__ = [
    "wall_clock_limit", "WallClockLimitExceeded", "run_program", "check_broadcast_program",
    "simulated_time", "guarded_call", "forbid_library_calls", "pipelined_broadcast_time",
]

_LIBRARY_DIR = os.path.dirname(os.path.abspath(__file__))


# -- the wall-clock guard --------------------------------------------------------------

class _WallClockExpired(BaseException):
    """Raised by the alarm handler inside the guarded code.

    A ``BaseException`` (like ``KeyboardInterrupt``), so that a student's
    ``except Exception:`` cannot swallow it.
    """


class WallClockLimitExceeded(AssertionError):
    """The guarded code ran out of real time (raised by :func:`wall_clock_limit`)."""


class wall_clock_limit:
    """Stop the code in a ``with`` block after ``seconds`` of real time.

    On expiry the block is interrupted and :class:`WallClockLimitExceeded`
    (an :class:`AssertionError`) with ``message`` is raised from the ``with``
    statement.  This stops loops that
    never return control to the simulator (``while True: pass``), which
    ``max_ops`` cannot see.  It uses ``SIGALRM`` and ``setitimer``, so it works
    in the main thread on POSIX systems (where Jupyter kernels run their
    cells); elsewhere it does nothing.  The previous ``SIGALRM`` handler and any
    timer already running (an outer guard) are restored on exit.

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

    #: Every budget is multiplied by this. The trusted checker raises it: there
    #: each step of a student's code crosses to a sandboxed process and back, and
    #: the budgets are there to stop endless loops, not to time honest work.
    scale = 1.0

    def __init__(self, seconds: float, message: str | Callable[[], str] | None = None):
        if not isinstance(seconds, (int, float)) or not seconds > 0:
            raise ValueError(f"seconds must be a positive number, got {seconds!r}")
        self.seconds = float(seconds) * wall_clock_limit.scale
        self.message = message
        self.active = False
        self.expired = False

    def _usable(self) -> bool:
        return (hasattr(signal, "setitimer") and hasattr(signal, "SIGALRM")
                and threading.current_thread() is threading.main_thread())

    def _handler(self, signum, frame):
        if self.active:
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
            signal.setitimer(signal.ITIMER_REAL, max(left, 1e-3), interval)
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


@contextlib.contextmanager
def _quiet():
    """Swallow warnings and stderr output of the student's code (nbgrader zeroes a cell
    that writes to stderr)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with contextlib.redirect_stderr(io.StringIO()):
            yield


# -- describing failures ------------------------------------------------------------------

def _name(func) -> str:
    if isinstance(func, functools.partial):
        return f"partial({_name(func.func)})"
    return getattr(func, "__name__", None) or type(func).__name__


def _student_frame(exc: BaseException) -> str:
    """'line 7 of my_func: `x = y / 0`' for the innermost frame outside the library."""
    if getattr(exc, "student_where", ""):          # raised in a student's sandboxed process
        return exc.student_where
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not os.path.abspath(f.filename).startswith(_LIBRARY_DIR + os.sep)]
    if not frames:
        return ""
    f = frames[-1]
    code = f": `{f.line.strip()}`" if f.line and f.line.strip() else ""
    return f"line {f.lineno} of {f.name}{code}"


def _explain_exception(exc: Exception, what: str) -> str:
    """A sentence about an exception raised while running ``what``."""
    text = str(exc).strip()
    notes = [n for n in getattr(exc, "__notes__", ()) if n]
    hint = ""
    if isinstance(exc, NotImplementedError):
        hint = ("\nHint: replace `raise NotImplementedError()` in the exercise cell with your "
                "code, then run that cell again.")
    elif isinstance(exc, TypeError) and "not a generator function" in text:
        hint = ("\nHint: an SPMD program must be a generator function: every PE yields its "
                "operations, e.g. `x = yield recv(src)` and `yield send(dst, x)`, "
                "and returns its result.")
    detail = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    lines = [f"{what} raised {detail}"]
    lines += [f"  ({note})" for note in notes]
    frame = _student_frame(exc)
    if frame:
        lines.append(f"  at {frame}")
    return "\n".join(lines) + hint


def _format_value(value: Any, limit: int = 120) -> str:
    text = repr(value.tolist() if isinstance(value, np.ndarray) else value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _same(a: Any, b: Any) -> bool:
    """Equality that also works for numpy arrays and never raises."""
    try:
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return bool(np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object)))
        return bool(a == b)
    except Exception:
        return False


def _describe_model(model: CostModel) -> str:
    return f"alpha={model.ts:g}, beta={model.tw:g}, ports={model.ports!r}"


# -- running an SPMD program -------------------------------------------------------------

def _default_max_ops(p: int) -> int:
    return 64 * p * max(1, (p - 1).bit_length() + 1) + 1000


def _endless_loop_text(what: str, limit_s: float, running: str = "") -> str:
    """What to say when ``what`` runs out of real time (``running``: the case it was on)."""
    during = f" (it was running for {running})" if running else ""
    return (f"{what} did not finish within {limit_s:g} s of real time{during}. Is there an "
            "endless loop that never yields an operation (such as `while True: pass`, or a "
            "loop whose condition never changes)?")


def run_program(program: Callable, p: int, inputs=None, *, model: CostModel | None = None,
                network=None, max_ops: int | None = None, time_limit_s: float = 10.0,
                context: str | None = None, **params) -> Run:
    """Simulate a student's SPMD ``program`` and explain any failure as an AssertionError.

    Like :func:`~collective_lib.simulate`, with guards: at most ``max_ops``
    operations (default: generous for a logarithmic algorithm) and at most
    ``time_limit_s`` seconds of real time.

    Parameters
    ----------
    program : generator function
        ``program(me, p, data, **params)``.
    p : int
        Number of PEs.
    inputs : list, callable or None
        As for :func:`~collective_lib.simulate`.
    model, network : optional
        As for :func:`~collective_lib.simulate`.
    max_ops : int, optional
        Operation budget of the whole run.
    time_limit_s : float
        Real-time budget of the whole run.
    context : str, optional
        How to name the run in messages; defaults to ``"p=..."`` plus the params.
    **params
        Passed to every PE (``root=...``).

    Returns
    -------
    Run

    Raises
    ------
    AssertionError
        For a deadlock, an unreceived message, an endless program or an
        exception in the program, with a message that says which.

    Examples
    --------
    >>> from collective_lib import recv, send
    >>> def hello(me, p, data):
    ...     if me == 0:
    ...         yield send(1, "hi")
    ...     return None
    >>> try:
    ...     run_program(hello, 2)
    ... except AssertionError as err:
    ...     print(str(err).splitlines()[0])
    hello for p=2: PE 0 sent messages that were never received:
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    if context is None:
        context = ", ".join([f"p={p}"] + [f"{k}={v!r}" for k, v in params.items()])
    limit = _default_max_ops(p) if max_ops is None else max_ops
    name = _name(program)
    where = f"{name} for {context}"
    try:
        with _quiet(), wall_clock_limit(
                time_limit_s, _endless_loop_text(where, time_limit_s)):
            return simulate(program, p, inputs, model=model, network=network, trace=True,
                            max_ops=limit, **params)
    except DeadlockError as exc:
        lines = [f"  PE {pe} waits in {what}" for pe, what in sorted(exc.blocked.items())]
        raise AssertionError(
            f"deadlock in {where}: at simulated time {exc.time:g} no PE can go on, but "
            f"{len(exc.blocked)} PE(s) still wait:\n" + "\n".join(lines) +
            _deadlock_hint(len(exc.blocked), p)) from None
    except UnreceivedMessageError as exc:
        lines = [f"  {n} message(s) from PE {s} to PE {d}"
                 for (s, d), n in sorted(exc.unreceived.items())]
        senders = sorted({s for s, _ in exc.unreceived})
        who = ", ".join(f"PE {s}" for s in senders)
        raise AssertionError(
            f"{where}: {who} sent messages that were never received:\n" + "\n".join(lines) +
            "\nHint: the receiving PE returned without a matching recv; is the message sent "
            "to the right PE, and does that PE receive before it returns?") from None
    except OperationLimitError:
        raise AssertionError(
            f"{where} did not finish: the PEs issued more than {limit} operations, far more "
            "than this exercise needs. Is there an endless loop that keeps yielding "
            "operations?") from None
    except WallClockLimitExceeded:
        raise
    except Exception as exc:   # the student's own code, or an invalid operation it yielded
        raise AssertionError(_explain_exception(exc, where)) from None


def _deadlock_hint(waiting: int, p: int) -> str:
    # When no PE has returned, no PE can be the first to send: the PEs wait for each other in
    # a cycle (as on a ring where every PE receives before it sends), not along a tree.
    if waiting == p:
        return ("\nHint: no PE has returned and every PE waits, so they wait for each other in "
                "a cycle: each waits in a recv before the send its neighbour is waiting for. "
                "Send before you wait, or send and receive at once with sendrecv, and check "
                "that every recv(src) has a matching send from PE src.")
    return ("\nHint: every recv(src) needs a matching send from PE src to this PE; check "
            "that each PE receives from its parent and sends to exactly its children.")


def _root_list(roots, p: int) -> list:
    if isinstance(roots, str):
        if roots != "all":
            raise ValueError(f'roots must be "all", a list of ranks or a function of p, got {roots!r}')
        return list(range(p))
    if callable(roots):
        chosen = roots(p)
    else:
        chosen = roots
    return sorted({r for r in chosen if 0 <= r < p})


def check_broadcast_program(program: Callable, ps: Iterable[int], *, roots="all", m: int = 4,
                            model: CostModel | None = None,
                            expected_time: Callable[[int], float] | None = None,
                            time_label: str = "expected_time(p)", rel_tol: float = 1e-9,
                            time_limit_s: float = 10.0, max_ops: int | None = None,
                            seed: int = 0, require_receive: bool = True,
                            params: dict | None = None) -> None:
    """Check a student's broadcast on every p in ``ps`` and every root in ``roots``.

    For each p and root the root gets a random message of ``m`` integers and
    the other PEs ``None``; the program runs as
    ``program(me, p, data, root=root, **params)``.  Every PE must return the
    root's message; with ``require_receive`` every non-root PE must also have
    received at least one message (it cannot have learnt the message another
    way).  With ``expected_time`` the simulated time must equal
    ``expected_time(p)`` up to ``rel_tol``.

    Parameters
    ----------
    program : generator function
        The student's SPMD program.
    ps : iterable of int
        Numbers of PEs to try.
    roots : "all", iterable of int, or callable
        The roots to try for each p: all of them, the given ones that are
        smaller than p, or ``roots(p)``.
    m : int
        Words in the message.
    model : CostModel, optional
        Defaults to ``CostModel(ts=1, tw=0)`` (time counts steps).
    expected_time : callable, optional
        ``expected_time(p)``, the time the program must take.
    time_label : str
        How to name the expected time in messages (e.g. ``"d(d+1)/2 (alpha + beta m)"``).
    rel_tol : float
        Relative tolerance of the time comparison.
    time_limit_s : float
        Real-time budget of the whole check.
    max_ops : int, optional
        Operation budget of each run.
    seed : int
        Seed of the random messages.
    require_receive : bool
        Demand that every non-root PE receives at least one message.
    params : dict, optional
        More keyword arguments for the program.

    Returns
    -------
    None
        Nothing, so a call can end a test cell: nbgrader would read a number
        there as partial credit.

    Raises
    ------
    AssertionError
        On the first failure, saying which p, root and PE, and what was
        expected and what came back.

    Examples
    --------
    >>> from collective_lib import catalog
    >>> program = catalog()["binomial_broadcast"].program
    >>> check_broadcast_program(program, range(1, 9), expected_time=lambda p: (p - 1).bit_length())
    >>> def lazy(me, p, data, root=0):
    ...     return data
    ...     yield
    >>> try:
    ...     check_broadcast_program(lazy, [3], roots=[0])
    ... except AssertionError as err:
    ...     print(str(err).split(", but")[0])
    wrong result of lazy for p=3, root=0: PE 1 returned None
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    model = CostModel(ts=1.0, tw=0.0) if model is None else model
    params = dict(params or {})
    rng = np.random.default_rng(seed)
    name = _name(program)
    state = {"context": "the first run"}

    def expired():
        return _endless_loop_text(name, time_limit_s, state["context"])

    with wall_clock_limit(time_limit_s, expired):
        for p in ps:
            root_0_right = False   # right for root 0, wrong for another: no root translation
            for root in _root_list(roots, p):
                context = f"p={p}, root={root}"
                state["context"] = context
                message = rng.integers(0, 1000, size=m).tolist()
                inputs = [list(message) if i == root else None for i in range(p)]
                run = run_program(program, p, inputs, model=model, max_ops=max_ops,
                                  time_limit_s=time_limit_s, context=context,
                                  root=root, **params)
                _check_results(run, name, context, message, root, require_receive,
                               root_0_right)
                root_0_right = root_0_right or root == 0
                if expected_time is not None:
                    want = expected_time(p)
                    if not math.isclose(run.time, want, rel_tol=rel_tol, abs_tol=1e-12):
                        sent = len(run.messages)
                        note = (f" (The PEs sent {sent} messages; a broadcast needs only "
                                f"p - 1 = {p - 1}.)" if sent != p - 1 else "")
                        raise AssertionError(
                            f"wrong time of {name} for {context}, m={m}, {_describe_model(model)}: "
                            f"the simulated time is {run.time:g}, but {time_label} = {want:g}."
                            + note)


def _check_results(run: Run, name: str, context: str, message: list, root: int,
                   require_receive: bool, root_0_right: bool = False) -> None:
    results = run.results
    for pe, got in enumerate(results):
        if not _same(got, message):
            hint = ""
            if root_0_right:
                hint = (f" The same p worked with root 0, but not with root {root}: does each "
                        "PE compute its rank relative to the root, rel = (me - root) % p, and "
                        "turn the relative ranks of its parent and children back into real "
                        "ones with (rel + root) % p?")
            elif got is None:
                hint = " Does every PE return the message (the root included)?"
            raise AssertionError(
                f"wrong result of {name} for {context}: PE {pe} returned {_format_value(got)}, "
                f"but the root's message was {_format_value(message)}.{hint}")
    if require_receive and run.p > 1:
        receivers = {msg.dst for msg in run.messages}
        for pe in range(run.p):
            if pe != root and pe not in receivers:
                raise AssertionError(
                    f"{name} for {context}: PE {pe} returned the right message but never "
                    "received one; a PE can only learn the root's message from a recv.")


def simulated_time(program: Callable, p: int, *, m: int = 1, model: CostModel | None = None,
                   root: int = 0, time_limit_s: float = 10.0, max_ops: int | None = None,
                   seed: int = 0, **params) -> float:
    """Simulated time of a student's broadcast from ``root`` with a random ``m``-word message.

    The same guards and messages as :func:`run_program`; the results are not
    checked (use :func:`check_broadcast_program` for that).

    Examples
    --------
    >>> from collective_lib import CostModel, catalog
    >>> program = catalog()["binomial_broadcast"].program
    >>> simulated_time(program, 16, m=4, model=CostModel(ts=1.0, tw=0.5))
    12.0
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    rng = np.random.default_rng(seed)
    message = rng.integers(0, 1000, size=m).tolist()
    inputs = [list(message) if i == root else None for i in range(p)]
    run = run_program(program, p, inputs, model=model, max_ops=max_ops,
                      time_limit_s=time_limit_s, context=f"p={p}, root={root}", root=root,
                      **params)
    return run.time


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
    shown = ", ".join([_format_value(a, 40) for a in args]
                      + [f"{k}={_format_value(v, 40)}" for k, v in kwargs.items()])
    what = f"{_name(func)}({shown})"
    try:
        with _quiet(), wall_clock_limit(
                time_limit_s,
                f"{what} did not return within {time_limit_s:g} s of real time. Is there an "
                "endless loop, or a search over far too many candidates? Keep the search "
                "bounded."):
            return func(*args, **kwargs)
    except WallClockLimitExceeded:
        raise
    except Exception as exc:
        raise AssertionError(_explain_exception(exc, what)) from None


# -- the student's own work ---------------------------------------------------------------

def _unwrap(obj, limit: int = 20) -> list:
    """``obj`` and what it wraps: partials, bound methods, ``__wrapped__``."""
    found = []
    for _ in range(limit):
        found.append(obj)
        if isinstance(obj, functools.partial):
            found.extend(obj.args)
            found.extend(obj.keywords.values())
            obj = obj.func
        elif isinstance(obj, types.MethodType):
            obj = obj.__func__
        elif getattr(obj, "__wrapped__", None) is not None:
            obj = obj.__wrapped__
        else:
            break
    return found


def _code_objects(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def _library_objects(names: set) -> dict:
    """``{id(obj): (obj, name)}`` of every library object called one of ``names``."""
    from .catalog import catalog
    objects = {}
    entries = catalog()
    for name in names:
        if name in entries:
            objects[id(entries[name].program)] = (entries[name].program, name)
    for modname, module in list(sys.modules.items()):
        if module is None or not (modname == "collective_lib" or modname.startswith("collective_lib.")):
            continue
        for name in names:
            obj = getattr(module, name, None)
            if obj is not None and not isinstance(obj, (int, float, str, bool)):
                objects[id(obj)] = (obj, name)
    return objects


def _source_names(func) -> set:
    """The identifiers in ``func``'s source text (comments and strings excluded)."""
    try:
        source = inspect.getsource(func)
    except (OSError, TypeError):
        return set()
    names = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.NAME:
                names.add(tok.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return names


def forbid_library_calls(program: Callable, names: Iterable[str], *,
                         reason: str = "this exercise asks for your own program, built from "
                                       "send and recv") -> None:
    """Fail when ``program`` uses any of the library's objects called ``names``.

    Looks at everything the function can reach: the names and string
    constants of its code and of every nested function, lambda and
    comprehension; its closures and default arguments; the global helper
    functions it calls that are defined next to it (recursively); aliases
    (``bb = binomial_broadcast``) and ``functools.partial`` wrappers; and, if
    available, the identifiers of its source text.  Comments, the docstring
    and local variables that merely share a name do not count.

    Parameters
    ----------
    program : callable
        The student's function.
    names : iterable of str
        Forbidden names, e.g. ``["binomial_broadcast", "catalog"]``.
    reason : str
        Appended to the message.

    Raises
    ------
    AssertionError
        Naming the forbidden object and the function that uses it.

    Examples
    --------
    >>> from collective_lib import recv, send
    >>> def mine(me, p, data, root=0):
    ...     return data
    ...     yield
    >>> forbid_library_calls(mine, ["binomial_broadcast", "catalog"])
    >>> from collective_lib.algorithms.broadcast import binomial_broadcast
    >>> def copied(me, p, data, root=0):
    ...     return (yield from binomial_broadcast(me, p, data, root))
    >>> try:
    ...     forbid_library_calls(copied, ["binomial_broadcast"])
    ... except AssertionError as err:
    ...     print(str(err).split(";")[0])
    copied uses the library's `binomial_broadcast` (in copied)
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    names = {n for n in names}
    if not names:
        return
    forbidden = _library_objects(names)
    top = _name(program)
    if is_remote(program):
        _forbid_by_source(program, names, forbidden, reason)
        return
    word = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(names)) + r")\b")

    def fail(name, where):
        raise AssertionError(
            f"{top} uses the library's `{name}` (in {where}); {reason}. "
            f"Not allowed here: {', '.join(f'`{n}`' for n in sorted(names))}.")

    seen: set = set()
    home = getattr(program, "__globals__", None)

    def visit(obj, where):
        """Fail on a forbidden object; look inside the student's own functions."""
        for item in _unwrap(obj):
            if id(item) in forbidden:
                fail(forbidden[id(item)][1], where)
            if isinstance(item, types.FunctionType) and id(item) not in seen and (
                    item is program or (item.__globals__ is home and not _in_library(item))):
                seen.add(id(item))
                visit_function(item)

    def visit_function(func):
        where = _name(func)
        local_names, used_names = set(), set()
        strings = []
        for c in _code_objects(func.__code__):
            local_names.update(c.co_varnames, c.co_cellvars)
            used_names.update(c.co_names, c.co_freevars)
            strings += [const for const in c.co_consts
                        if isinstance(const, str) and const != func.__doc__]
        for name in sorted(used_names & names):
            fail(name, where)
        for name in sorted((_source_names(func) & names) - local_names):
            fail(name, where)
        for text in strings:            # getattr(module, "name"), catalog()["name"], eval("...")
            hit = word.search(text)
            if hit:
                fail(hit.group(1), where)
        for cell in func.__closure__ or ():
            try:
                contents = cell.cell_contents
            except ValueError:          # an empty cell
                continue
            visit(contents, where)
        for value in list(func.__defaults__ or ()) + list((func.__kwdefaults__ or {}).values()):
            visit(value, where)
        glob = func.__globals__
        for name in sorted(used_names):
            if name in glob:            # a global the code refers to: an alias or a helper
                visit(glob[name], f"{where}, as `{name}`")

    visit(program, top)


def _forbid_by_source(standin, names: set, forbidden: dict, reason: str) -> None:
    """:func:`forbid_library_calls` for a student's object in its sandboxed process.

    Its code cannot be inspected here, so the source of the student's cells is
    read instead (:mod:`collective_lib.autograde.static`): a forbidden name the
    function reaches fails; computed lookups and a close likeness to a library
    function raise a flag for a human (:mod:`collective_lib.autograde.review`).
    """
    sources = standin.sandbox.sources
    top = _name(standin)
    used = static.used_names(sources, top)
    for name in sorted(used & names):
        raise AssertionError(
            f"{top} uses the library's `{name}`; {reason}. "
            f"Not allowed here: {', '.join(f'`{n}`' for n in sorted(names))}.")
    tricks = static.dynamic_lookups(sources)
    if tricks:
        review.flag(f"{top}: the cells reach objects by computed names: {', '.join(tricks)}")
    definition = static.definitions(sources).get(top.split(".")[0])
    if definition is None:
        return
    mine = static.node_source(definition)
    for obj, label in _library_candidates(forbidden):
        likeness = static.similarity(mine, obj)
        if likeness >= static.REVIEW_SIMILARITY:
            review.flag(f"{top} is {likeness:.2f} similar to the library's {label} "
                        "(the same code up to renaming?)")


@functools.lru_cache(maxsize=1)
def _library_sources() -> tuple:
    """``(source, label)`` of every catalog program, for comparing a submission with."""
    from .catalog import catalog
    found = []
    for name, entry in catalog().items():
        try:
            found.append((inspect.getsource(entry.program), name))
        except (OSError, TypeError):
            pass
    return tuple(found)


def _library_candidates(forbidden: dict) -> list:
    """Sources of the forbidden library objects and of every catalog program."""
    found = []
    for obj, label in forbidden.values():
        try:
            found.append((inspect.getsource(obj), label))
        except (OSError, TypeError):
            pass
    return found + list(_library_sources())


def _in_library(obj) -> bool:
    func = getattr(obj, "func", obj)
    code = getattr(func, "__code__", None)
    if code is None:
        return False
    return os.path.abspath(code.co_filename).startswith(_LIBRARY_DIR + os.sep)


# -- the pipelining exercise -------------------------------------------------------------

@functools.lru_cache(maxsize=4096)
def pipelined_broadcast_time(n: int, p: int, alpha: float, beta: float, k: int,
                             root: int = 0) -> float:
    """Simulated time of the library's pipelined binary tree broadcast (half-duplex).

    ``n`` words from ``root`` to ``p`` PEs in ``k`` packets under
    ``CostModel(ts=alpha, tw=beta, ports="half-duplex")`` (Sanders, Lemma 13.2).
    Cached, since the exercise's tests ask for the same points repeatedly.

    Examples
    --------
    >>> pipelined_broadcast_time(n=64, p=7, alpha=1.0, beta=0.1, k=2)
    29.4
    """
    from .catalog import catalog
    entry = catalog()["pipelined_binary_tree_broadcast"]
    model = CostModel(ts=alpha, tw=beta, ports="half-duplex")
    return entry.simulate(p, m=n, model=model, root=root, k=k, trace=False).time


# -- shared memory: schedules and locks (chapter 3) ------------------------------------------
#
# The lock exercise checks a student's interleavings and a student's lock class with the
# shared-memory machine of collective_lib.shared_memory.  A lock class follows the protocol of
# collective_lib.algorithms.sync: ``lock(me, p)`` makes a PE's instance, ``lock.memory(p)``
# declares the shared cells, and ``acquire()``/``release()`` are generators that yield memory
# operations.  The driver program is ``lock_demo`` (every PE increments a shared counter in
# its critical section ``rounds`` times).

__all__ += ["replay_schedule", "check_own_lock", "check_lock_progress",
            "check_lock_exclusion", "check_lock_exhaustive"]

#: Lines of a trace shown in a message (the last ones before the failure).
TRACE_LINES = 30


def _trace_excerpt(trace, upto=None, limit: int = TRACE_LINES) -> str:
    """The trace up to and including index ``upto`` (default: all), at most ``limit`` lines."""
    from .shared_memory import format_trace
    end = len(trace) if upto is None else upto + 1
    begin = max(0, end - limit)
    text = format_trace(trace, begin, end)
    if begin:
        head, rest = text.split("\n", 1)
        text = f"{head}\n     ...  (the first {begin} entries are left out)\n{rest}"
    return text


def _schedule_text(schedule, limit: int = 60) -> str:
    schedule = list(schedule)
    if len(schedule) <= limit:
        return str(schedule)
    return str(schedule[:limit])[:-1] + f", ... ({len(schedule)} steps in all)]"


def replay_schedule(program: Callable, p: int, schedule, *, what: str = "your schedule",
                    max_steps: int = 1000, time_limit_s: float = 10.0, **params):
    """Replay a student's interleaving of a shared-memory program, step by step.

    ``schedule`` lists the PE that performs each operation (reads, writes,
    CAS, fetch-and-add, pauses; the markers ``enter``/``leave``/``note`` come
    free with the operation before them).  The run stops after the last step,
    so everything it shows is caused by the schedule itself.

    Parameters
    ----------
    program : generator function
        A shared-memory SPMD program (``program(me, p, data, **params)``).
    p : int
        Number of PEs.
    schedule : list of int
        The interleaving.
    what : str
        How to name the schedule in messages.
    max_steps : int
        Longest schedule accepted.
    time_limit_s : float
        Real-time budget.
    **params
        Passed to the program (e.g. ``lock=broken_lock, rounds=1``).

    Returns
    -------
    SharedRun
        The run; ``run.complete`` says whether every PE returned within the schedule.

    Raises
    ------
    AssertionError
        If the schedule is not a list of ranks, names a PE that has already
        returned, or is too long; the message shows the trace so far.

    Examples
    --------
    >>> from collective_lib.algorithms.sync import lock_demo, broken_lock
    >>> run = replay_schedule(lock_demo, 2, [0, 1, 0, 1], lock=broken_lock, rounds=1)
    >>> [(e.pe, e.op) for e in run.trace if e.op == "enter"]
    [(0, 'enter'), (1, 'enter')]
    >>> try:
    ...     replay_schedule(lock_demo, 2, [0, 2], lock=broken_lock, rounds=1)
    ... except AssertionError as err:
    ...     print(str(err).splitlines()[0])
    your schedule names PE 2 at step 1, but there are only 2 PEs (0 and 1)
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    from .shared_memory import simulate_shared
    if isinstance(schedule, np.ndarray):
        schedule = schedule.tolist()
    if not isinstance(schedule, (list, tuple)):
        raise AssertionError(f"{what} must be a list of PE numbers such as [0, 1, 1, 0], "
                             f"got {_format_value(schedule)} ({type(schedule).__name__})")
    if len(schedule) > max_steps:
        raise AssertionError(f"{what} has {len(schedule)} steps; no more than {max_steps} are "
                             "needed here. Keep only the steps that matter.")
    ranks = "PE 0" if p == 1 else f"PEs (0 and 1)" if p == 2 else f"PEs (0 .. {p - 1})"
    for step, pe in enumerate(schedule):
        if isinstance(pe, (bool, np.bool_)) or not isinstance(pe, (int, np.integer)):
            raise AssertionError(f"{what} must list PE numbers (ints), but step {step} is "
                                 f"{_format_value(pe)} ({type(pe).__name__})")
        if not 0 <= pe < p:
            raise AssertionError(f"{what} names PE {pe} at step {step}, but there are only "
                                 f"{p} {ranks}")
    schedule = [int(pe) for pe in schedule]

    def replay(steps):
        return simulate_shared(program, p, schedule=steps, stop_after=len(steps), **params)

    try:
        with _quiet(), wall_clock_limit(time_limit_s, f"replaying {what} took more than "
                                        f"{time_limit_s:g} s of real time"):
            return replay(schedule)
    except WallClockLimitExceeded:
        raise
    except ValueError as exc:
        found = re.search(r"names PE (\d+) at step (\d+), but PE \d+ has returned", str(exc))
        if not found:
            raise AssertionError(_explain_exception(exc, f"replaying {what}")) from None
        pe, step = int(found.group(1)), int(found.group(2))
        with _quiet():
            before = replay(schedule[:step])
        raise AssertionError(
            f"{what} names PE {pe} at step {step}, but PE {pe} has already returned: it has no "
            f"operation left. The run up to that step:\n{_trace_excerpt(before.trace)}"
        ) from None
    except Exception as exc:
        raise AssertionError(_explain_exception(exc, f"replaying {what}")) from None


def _lock_name(lock) -> str:
    return getattr(lock, "__name__", None) or type(lock).__name__


def check_own_lock(lock, forbidden: Iterable[str] = ("cas_spin_lock", "ttas_backoff_lock",
                                                     "reader_writer_lock", "LOCKS")) -> None:
    """Check that ``lock`` is a usable lock class written by the student.

    It must be a class whose instances ``lock(me, p)`` have generator methods
    ``acquire()`` and ``release()``, with a ``memory(p)`` that returns a dict of
    cells; it must not inherit from, alias or call the library's locks.

    >>> from collective_lib.algorithms.sync import cas_spin_lock
    >>> class Mine(cas_spin_lock):
    ...     pass
    >>> try:
    ...     check_own_lock(Mine)
    ... except AssertionError as err:
    ...     print(err)
    Mine inherits from the library's cas_spin_lock; write acquire() and release() yourself.
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    name = _lock_name(lock)
    if is_remote(lock):                    # graded in a sandbox: its source is checked
        if getattr(lock, "kind", None) != "class":
            raise AssertionError(f"{name} must be a class (with acquire and release methods)")
        forbid_library_calls(lock, forbidden,
                             reason="this exercise asks for your own lock, built from read, "
                                    "write, cas, fetch_add and pause")
    elif not isinstance(lock, type):
        raise AssertionError(f"{name} must be a class (with acquire and release methods), "
                             f"got {_format_value(lock)}")
    for base in ([] if is_remote(lock) else lock.__mro__[1:]):
        if base.__module__.split(".")[0] == "collective_lib":
            raise AssertionError(f"{name} inherits from the library's {base.__name__}; "
                                 "write acquire() and release() yourself.")
    for method in ("acquire", "release"):
        func = getattr(lock, method, None)
        if not callable(func):
            raise AssertionError(f"{name} has no method {method}()")
        if _in_library(func):
            raise AssertionError(f"{name}.{method} is the library's own "
                                 f"{getattr(func, '__qualname__', method)}; write it yourself.")
        forbid_library_calls(func, forbidden,
                             reason="this exercise asks for your own lock, built from read, "
                                    "write, cas, fetch_add and pause")
    try:
        with _quiet(), wall_clock_limit(5.0, f"creating a {name} or calling memory(p) did not "
                                        "finish within 5 s"):
            cells = lock.memory(2)
            mine = lock(0, 2)
            gens = {method: getattr(mine, method)() for method in ("acquire", "release")}
    except WallClockLimitExceeded:
        raise
    except Exception as exc:
        raise AssertionError(_explain_exception(exc, f"{name}(0, 2) and its methods")) from None
    if not isinstance(cells, dict):
        raise AssertionError(f"{name}.memory(p) must return a dict {{cell: initial value}}, "
                             f"got {_format_value(cells)}")
    for method, gen in gens.items():
        if not inspect.isgenerator(gen):
            raise AssertionError(
                f"{name}.{method}() must be a generator: it yields its memory operations "
                f"(e.g. `ok = yield cas(self.cell, 0, 1)`), but it returned "
                f"{_format_value(gen)}. Does it contain a `yield`?")
        gen.close()


def _recorded(lock):
    """``lock`` replayed from a record of its events, for the searches that replay every
    interleaving from the start (see :class:`~collective_lib.shared_memory.RecordedLock`);
    a student's lock in a sandboxed process is asked one event per request."""
    from .shared_memory import RecordedLock
    return RecordedLock(lock, getattr(lock, "replay", None) if is_remote(lock) else None)


def _lock_run_text(name, p, rounds) -> str:
    return (f"{name} with p={p} PE{'s' * (p != 1)}, {rounds} round{'s' * (rounds != 1)} "
            f"each")


def _no_progress_text(what: str, detail: str) -> str:
    lines = ["  " + line.strip() for line in detail.splitlines()
             if line.strip().startswith("PE ")]
    return (f"{what} never finished: some PEs wait forever.\n" + "\n".join(lines) +
            "\nHint: does release() really free the lock (so that a waiting acquire() can "
            "succeed)? Does acquire() return as soon as it has the lock? A PE that waits "
            "should keep polling, e.g. `while not (yield cas(...)): yield pause(1)`.")


def check_lock_progress(lock, ps: Iterable[int], *, rounds: int = 2, hold: float = 0,
                        max_ops: int = 50_000, time_limit_s: float = 10.0) -> None:
    """Run ``lock_demo`` with ``lock`` in the timed model: everyone finishes, nothing is lost.

    For every p, each PE must get through its ``rounds`` critical sections,
    the shared counter must end at ``p * rounds``, and no two PEs may be in
    the critical section together. Under the trusted grader, each PE's lock
    object lives in a process of its own, so PEs that coordinate through
    Python globals instead of the shared memory fail with a message that says so.

    >>> from collective_lib.algorithms.sync import cas_spin_lock
    >>> check_lock_progress(cas_spin_lock, [1, 2, 3])
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    name = _lock_name(lock)
    with wall_clock_limit(time_limit_s, f"{name} did not finish within {time_limit_s:g} s of "
                          "real time. Is there a loop in acquire() or release() that never "
                          "yields an operation (such as `while True: pass`)?"):
        for p in ps:
            if not is_remote(lock):
                _check_lock_run(lock, name, p, rounds, hold, max_ops)
                continue
            with isolated(lock) as apart:
                try:
                    _check_lock_run(apart, name, p, rounds, hold, max_ops)
                except WallClockLimitExceeded:
                    raise
                except AssertionError as failure:
                    _check_lock_run(lock, name, p, rounds, hold, max_ops)   # wrong anyway?
                    raise AssertionError(
                        f"{_lock_run_text(name, p, rounds)}: the lock works only while all PEs "
                        f"share one Python process; with each PE's {name} in its own process: "
                        f"{failure}\nA PE knows only the shared memory cells and its own "
                        "object; PEs must not share Python globals.") from None


def _check_lock_run(lock, name, p, rounds, hold, max_ops) -> None:
    """One timed run of ``lock_demo`` on ``p`` PEs; an AssertionError saying what went wrong."""
    from .algorithms.sync import lock_demo
    from .shared_memory import exclusion_violation, simulate_shared
    what = _lock_run_text(name, p, rounds)
    try:
        with _quiet():
            run = simulate_shared(lock_demo, p, lock=lock, rounds=rounds, hold=hold,
                                  max_ops=max_ops)
    except OperationLimitError as exc:
        raise AssertionError(_no_progress_text(f"{what},", str(exc))) from None
    except WallClockLimitExceeded:
        raise
    except Exception as exc:
        raise AssertionError(_explain_exception(exc, what)) from None
    bad = exclusion_violation(run.trace)
    if bad is not None:
        index = run.trace.index(bad)
        raise AssertionError(
            f"{what}: PE {bad.pe} entered the critical section at time {bad.time:g} "
            f"while {_inside_text(run.trace, index)}.\n"
            f"{_trace_excerpt(run.trace, index)}")
    counter = run.memory.get("counter")
    if counter != p * rounds:
        raise AssertionError(f"{what}: the shared counter ended at {counter!r} instead "
                             f"of {p * rounds}: increments were lost.")


def check_lock_exclusion(lock, ps: Iterable[int], *, seeds=range(100), rounds: int = 2,
                         max_ops: int = 20_000, time_limit_s: float = 20.0) -> None:
    """Random interleavings: no two PEs in the critical section, and everyone gets through.

    Runs :func:`~collective_lib.shared_memory.find_violation` on ``lock_demo``
    for every p in ``ps``; a failure shows the seed, the shortest failing
    beginning of the interleaving, and its trace.

    >>> from collective_lib.algorithms.sync import broken_lock, cas_spin_lock
    >>> check_lock_exclusion(cas_spin_lock, [2, 3], seeds=range(20))
    >>> try:
    ...     check_lock_exclusion(broken_lock, [2], seeds=range(20))
    ... except AssertionError as err:
    ...     print(str(err).splitlines()[0])
    broken_lock with p=2 PEs, 2 rounds each: under the interleaving of seed 1, PE 0 enters the critical section while PE 1 is inside.
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    from .algorithms.sync import lock_demo
    from .shared_memory import exclusion_violation, find_violation, mutual_exclusion
    name = _lock_name(lock)
    with wall_clock_limit(time_limit_s, f"checking {name} on random interleavings took more "
                          f"than {time_limit_s:g} s of real time. Is there a loop in acquire() "
                          "or release() that never yields an operation?"):
        for p in ps:
            what = _lock_run_text(name, p, rounds)
            try:
                with _quiet():
                    found = find_violation(lock_demo, p, mutual_exclusion, seeds=seeds,
                                           max_ops=max_ops, lock=_recorded(lock),
                                           rounds=rounds)
            except WallClockLimitExceeded:
                raise
            except Exception as exc:
                raise AssertionError(_explain_exception(exc, what)) from None
            if found is None:
                continue
            if found.reason.startswith("no progress"):
                raise AssertionError(_no_progress_text(
                    f"{what}, under the interleaving of seed {found.seed},", found.reason))
            raise AssertionError(_exclusion_text(what, f"the interleaving of seed {found.seed}",
                                                 found, exclusion_violation))


def _inside_text(trace, index) -> str:
    """'PE 0 is inside' / 'PEs 0, 2 are inside': who is in a section just before trace[index]."""
    inside = set()
    for e in trace[:index]:
        if e.op == "enter":
            inside.add(e.pe)
        elif e.op == "leave":
            inside.discard(e.pe)
    inside.discard(trace[index].pe)
    pes = sorted(inside)
    if len(pes) == 1:
        return f"PE {pes[0]} is inside"
    return f"PEs {', '.join(map(str, pes))} are inside"


def _exclusion_text(what, origin, found, exclusion_violation) -> str:
    bad = exclusion_violation(found.run.trace)
    index = found.run.trace.index(bad) if bad is not None else None
    who = (f"PE {bad.pe} enters the critical section while {_inside_text(found.run.trace, index)}"
           if bad is not None else "mutual exclusion breaks")
    return (f"{what}: under {origin}, {who}.\n"
            f"Its first {len(found.schedule)} steps already show it: schedule "
            f"{_schedule_text(found.schedule)}\n{_trace_excerpt(found.run.trace, index)}\n"
            "Hint: between seeing the lock free and taking it, another PE can take it too; "
            "the test and the set must be one atomic operation (cas or fetch_add).")


def check_lock_exhaustive(lock, p: int = 2, *, rounds: int = 2, max_steps: int = 40,
                          max_runs: int = 30_000, time_limit_s: float = 30.0) -> None:
    """Every interleaving of a tiny case: exclusion always holds and no PE waits forever.

    Runs :func:`~collective_lib.shared_memory.explore_interleavings` on
    ``lock_demo`` with ``p`` PEs; a failure shows the shortest failing
    interleaving.

    >>> from collective_lib.algorithms.sync import cas_spin_lock
    >>> check_lock_exhaustive(cas_spin_lock, rounds=1)
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    from .algorithms.sync import lock_demo
    from .shared_memory import exclusion_violation, explore_interleavings, mutual_exclusion
    name = _lock_name(lock)
    what = _lock_run_text(name, p, rounds)
    try:
        with _quiet(), wall_clock_limit(
                time_limit_s, f"checking every interleaving of {what} took more than "
                f"{time_limit_s:g} s of real time. Is there a loop in acquire() or release() "
                "that never yields an operation?"):
            found = explore_interleavings(lock_demo, p, mutual_exclusion, max_steps=max_steps,
                                          max_runs=max_runs, lock=_recorded(lock),
                                          rounds=rounds)
    except WallClockLimitExceeded:
        raise
    except OperationLimitError:
        raise AssertionError(
            f"{what} has too many interleavings to check them all (more than {max_runs} "
            "states). The search skips a PE that repeats the same poll without news; does a "
            "waiting PE repeat exactly the same operation (or pause) while the lock is "
            "taken?") from None
    except Exception as exc:
        raise AssertionError(_explain_exception(exc, what)) from None
    if found is None:
        return
    if found.reason.startswith("livelock"):
        raise AssertionError(_no_progress_text(
            f"{what}, under the interleaving {_schedule_text(found.schedule)},",
            found.reason.replace("livelock: ", "").replace("; PE", "\nPE")))
    raise AssertionError(_exclusion_text(what, "the shortest interleaving that breaks it",
                                         found, exclusion_violation))


# -- chapter 2: a student's operator inside the library's reductions -----------------------

__all__ += ["check_operator_in_reductions"]


def _combination_order(entry, p: int, params: dict, pe: int) -> str | None:
    """How ``entry`` combines the PEs' operands for PE ``pe``, e.g. '3:5,0:2' (or None).

    Found by running the entry once more on symbolic one-word operands
    (:class:`collective_lib.viz.Span`); None when that is not possible.
    """
    try:
        from .spans import Span, span_inputs, span_op
        words = 1 if "k" not in params else params["k"]
        run = entry.simulate(p, words, inputs=span_inputs(p, words),
                             trace=False, **{**params, "op": span_op})
        got = run.results[pe]
        if isinstance(got, tuple) and len(got) == 2 and not isinstance(got[0], Span):
            got = got[1]                     # (prefix, total): the total
        if isinstance(got, (list, tuple)) and got:
            got = got[0]
        return str(got) if isinstance(got, Span) else None
    except Exception:
        return None


def check_operator_in_reductions(op: Callable, algorithms: Iterable[str], ps: Iterable[int], *,
                                 make_inputs: Callable, reference_op: Callable,
                                 roots="all", params: dict | None = None,
                                 time_limit_s: float = 10.0, seed: int = 0,
                                 hint: str = "") -> None:
    """Run the library's reductions with a student's operator; compare with a reference.

    For every catalog entry named in ``algorithms``, every p in ``ps`` it is
    valid for and every root (for entries that take one), the PEs get
    ``make_inputs(p, rng)`` and the entry's program runs with ``op=op`` under
    the guards of :func:`run_program`.  Every PE must return what the entry's
    operation prescribes when the operands are combined in rank order with
    ``reference_op`` (``entry.expected``).

    Parameters
    ----------
    op : callable
        The student's binary operator (lift it with ``elementwise`` first for
        vector messages).
    algorithms : iterable of str
        Catalog names, e.g. ``["binomial_reduce", "hypercube_allreduce"]``.
    ps : iterable of int
        Numbers of PEs; an entry skips those it cannot run on.
    make_inputs : callable
        ``make_inputs(p, rng) -> list`` of p messages (rng: numpy Generator).
    reference_op : callable
        A correct operator, to compute the expected results.
    roots : "all", iterable of int, or callable
        The roots to try, as for :func:`check_broadcast_program`.
    params : dict, optional
        More parameters for the entries that take them (e.g. ``{"k": 2}``).
    time_limit_s : float
        Real-time budget of the whole check.
    seed : int
        Seed of the random inputs.
    hint : str
        Appended to a wrong-result message.

    Raises
    ------
    AssertionError
        Naming the algorithm, p, root and PE, what came back and what was
        expected, the inputs, and the order in which that algorithm combined
        the operands (e.g. "3:5,0:2" for the PEs 3, 4, 5, 0, 1, 2).

    Examples
    --------
    >>> import operator
    >>> def ints(p, rng):
    ...     return [int(x) for x in rng.integers(0, 9, size=p)]
    >>> check_operator_in_reductions(operator.add, ["binomial_reduce"], range(1, 9),
    ...                              make_inputs=ints, reference_op=operator.add)
    >>> def left(a, b):                 # keeps the left operand: not commutative
    ...     return a
    >>> try:
    ...     check_operator_in_reductions(left, ["binomial_reduce"], [3], roots=[1],
    ...                                  make_inputs=lambda p, rng: [10, 20, 30],
    ...                                  reference_op=left)
    ... except AssertionError as err:
    ...     print(err)
    binomial_reduce with your operator left on p=3 PEs, root=1: PE 1 returned 20, but 10 was expected.
      inputs (PE 0, 1, ...): [10, 20, 30]
      binomial_reduce combined the operands of the PEs in this order: 1:2,0 (x:y means the PEs x, x+1, ..., y)
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    from .catalog import catalog
    table = catalog()
    params = dict(params or {})
    rng = np.random.default_rng(seed)
    name = _name(op)
    ps = list(ps)
    state = {"context": "the first run"}

    def expired():
        return (f"the reductions with your operator {name} did not finish within "
                f"{time_limit_s:g} s of real time (they were running {state['context']}). "
                "Does the operator loop forever, or do far too much work?")

    with wall_clock_limit(time_limit_s, expired):
        for algorithm in algorithms:
            if algorithm not in table:
                raise ValueError(f"unknown algorithm {algorithm!r}")
            entry = table[algorithm]
            for p in ps:
                if not entry.valid(p):
                    continue
                root_choices = _root_list(roots, p) if "root" in entry.params else [None]
                for root in root_choices:
                    run_params = {k: v for k, v in params.items() if k in entry.params}
                    if root is not None:
                        run_params["root"] = root
                    context = f"{algorithm} with your operator {name} on p={p} PEs" + (
                        f", root={root}" if root is not None else "")
                    state["context"] = context
                    inputs = make_inputs(p, rng)
                    expected = entry.expected(inputs, **{**run_params, "op": reference_op})
                    run = run_program(entry.program, p, inputs, model=entry.default_model(),
                                      network=entry.network(p), time_limit_s=time_limit_s,
                                      context=context, op=op, **run_params)
                    for pe, (got, want) in enumerate(zip(run.results, expected)):
                        if _same(got, want):
                            continue
                        order = _combination_order(entry, p, run_params, pe)
                        lines = [f"{context}: PE {pe} returned {_format_value(got)}, but "
                                 f"{_format_value(want)} was expected.",
                                 f"  inputs (PE 0, 1, ...): {_format_value(inputs, 300)}"]
                        if order is not None:
                            lines.append(f"  {algorithm} combined the operands of the PEs in "
                                         f"this order: {order} (x:y means the PEs x, x+1, ..., y)")
                        raise AssertionError("\n".join(lines) + (f"\n{hint}" if hint else ""))


# -- chapters 4 and 5: any collective program, and tables filled in by hand -----------------
#
# check_collective_program checks a student's program for any collective operation against
# results computed directly from the inputs, with an exact time or a time bound;
# forbid_library_execution catches a program that runs a library algorithm however it got
# hold of it; parse_terms, format_terms, sends_by_step and check_answer_table grade a table
# of symbolic partial sums that a student fills in by hand (what each PE sends in each step).

__all__ += ["check_collective_program", "check_pe_isolation", "forbid_library_execution",
            "count_pieces", "parse_terms", "format_terms", "sends_by_step", "check_answer_table"]


def _case(case) -> tuple:
    """``(p, params)`` of a case written as ``p`` or ``(p, {params})``."""
    if isinstance(case, tuple) and len(case) == 2 and isinstance(case[1], dict):
        return case[0], dict(case[1])
    return case, {}


def _case_text(p: int, params: dict) -> str:
    shown = [f"{k}={_name(v) if callable(v) else repr(v)}" for k, v in params.items()]
    return ", ".join([f"p={p}"] + shown)


def _prepared_cases(cases: Iterable, make_inputs: Callable, expected: Callable, rng,
                    state: dict):
    """``(p, params, context, inputs, want)`` for each case, with ``want`` computed before the
    run from a copy of the inputs (a program that changes its input in place does not change
    the answer); ``state["context"]`` names the case being run, for the endless-loop message."""
    for case in cases:
        p, params = _case(case)
        context = state["context"] = _case_text(p, params)
        inputs = make_inputs(p, rng, **params)
        yield p, params, context, inputs, expected(copy.deepcopy(inputs), **params)


def _first_wrong_pe(results: list, want: list) -> int | None:
    """The first PE whose result is not the one expected, or None."""
    return next((pe for pe, (got, wanted) in enumerate(zip(results, want))
                 if not _same(got, wanted)), None)


def _wrong_result_text(name: str, context: str, pe: int, got: Any, wanted: Any, item: str,
                       hint: str) -> str:
    return (f"wrong result of {name} for {context}: PE {pe} returned {_format_value(got)}, "
            f"but {_format_value(wanted)} was expected{_first_difference(got, wanted, item)}."
            + (f"\n{hint}" if hint else ""))


def _first_difference(got: Any, want: Any, item: str) -> str:
    """' (item 2 is 5, but 7 was expected)' for two sequences of the same length, else ''."""
    if not (isinstance(got, (list, tuple, np.ndarray)) and isinstance(want, (list, tuple))):
        return ""
    if len(got) != len(want):
        return f" ({len(got)} items instead of {len(want)})"
    for index, (a, b) in enumerate(zip(got, want)):
        if not _same(a, b):
            return (f" ({item} {index} is {_format_value(a, 60)}, but {_format_value(b, 60)} "
                    "was expected)")
    return ""


def _traffic_text(run: Run) -> str:
    """'(the PEs sent 12 messages in 3 rounds; the longest was 4 words)'."""
    if not run.messages:
        return "(no PE sent a message)"
    rounds = len(run.step_starts())
    longest = max(m.words for m in run.messages)
    return (f"(the PEs sent {len(run.messages)} messages in {rounds} round"
            f"{'s' * (rounds != 1)}; the longest was {longest} word{'s' * (longest != 1)})")


def count_pieces(payload: Any, pieces) -> int:
    """How many items of ``pieces`` a payload carries, looking inside lists, tuples, sets and dicts.

    ``pieces`` is a set of hashable items (lists are compared as tuples).  Use it
    to count the input messages a bundle carries, whatever the bundle's layout
    (a list of messages, of (source, message) pairs, a dict ...).

    >>> count_pieces([(0, (5, 6)), (2, (7, 8))], {(5, 6), (7, 8), (9, 9)})
    2
    >>> count_pieces({3: [5, 6]}, {(5, 6)})
    1
    """
    if isinstance(payload, (list, tuple)):
        try:
            if tuple(payload) in pieces:
                return 1
        except TypeError:           # an unhashable item inside
            pass
        return sum(count_pieces(item, pieces) for item in payload)
    if isinstance(payload, dict):
        return sum(count_pieces(k, pieces) + count_pieces(v, pieces) for k, v in payload.items())
    if isinstance(payload, (set, frozenset)):
        return sum(count_pieces(item, pieces) for item in payload)
    try:
        return int(payload in pieces)
    except TypeError:
        return 0


def check_collective_program(program: Callable, cases: Iterable, *, make_inputs: Callable,
                             expected: Callable, model: CostModel | None = None,
                             network: Callable | None = None,
                             expected_time: Callable | None = None,
                             time_bound: Callable | None = None,
                             time_label: str = "the expected time",
                             payload_words: Callable | None = None, item: str = "item",
                             hint: str | Callable = "", time_hint: str = "",
                             rel_tol: float = 1e-9,
                             time_limit_s: float = 10.0, max_ops: int | None = None,
                             seed: int = 0) -> None:
    """Check a student's program for any collective operation on many cases.

    For every case the PEs get ``make_inputs(p, rng, **params)`` and the
    program runs as ``program(me, p, data, **params)`` under the guards of
    :func:`run_program`.  Every PE must return what ``expected(inputs,
    **params)`` says (computed before the run, from a copy of the inputs, so a
    program that changes its input in place does not change the answer).

    Parameters
    ----------
    program : generator function
        The student's SPMD program.
    cases : iterable
        Each case is ``p`` or a pair ``(p, params)`` of the number of PEs and a
        dict of keyword arguments for the program (e.g. ``(9, {"k": 3, "d": 2})``).
    make_inputs : callable
        ``make_inputs(p, rng, **params) -> list`` of the p inputs (rng: numpy Generator).
    expected : callable
        ``expected(inputs, **params) -> list`` of the p results.
    model : CostModel, optional
        Defaults to ``CostModel(ts=1, tw=0)`` (time counts steps).
    network : callable, optional
        ``network(p)``, e.g. ``Ring``; defaults to a fully connected network.
    expected_time, time_bound : callable, optional
        ``f(p, **params)``: the time the program must take exactly (up to
        ``rel_tol``), or must not exceed.
    time_label : str
        How to name that time in messages, e.g. ``"(ts + tw m)(p - 1)"``.
    payload_words : callable, optional
        ``payload_words(payload, inputs)``: the words a message really carries
        (e.g. n times the input messages it holds, see :func:`count_pieces`);
        a transfer that declares fewer (``words=``) fails.
    item : str
        What one entry of a result list is called in messages ("word",
        "the message from PE").
    hint, time_hint : str
        Appended to a wrong-result (wrong-time) message.  ``hint`` may also be
        a callable ``hint(results, inputs, **params) -> str`` that picks the
        hint from what the PEs returned (``inputs`` as before the run).
    rel_tol, time_limit_s, max_ops, seed :
        Tolerance of the time comparison, real-time budget of the whole check,
        operation budget of each run, seed of the inputs.

    Raises
    ------
    AssertionError
        On the first failure, naming the case and the PE, what came back and
        what was expected (and the first entry that differs), or the simulated
        time, the time required and how many messages the PEs sent.

    Examples
    --------
    >>> from collective_lib import catalog
    >>> from collective_lib.networks import Ring
    >>> def inputs(p, rng):
    ...     return [[int(x) for x in rng.integers(0, 9, size=p)] for _ in range(p)]
    >>> def sums(inputs):
    ...     return [sum(row[j] for row in inputs) for j in range(len(inputs))]
    >>> ring = catalog()["all_to_all_red_ring"].program
    >>> check_collective_program(ring, range(1, 9), make_inputs=inputs, expected=sums,
    ...                          network=Ring, expected_time=lambda p: p - 1)
    >>> def keep(me, p, data):
    ...     return data[me]
    ...     yield
    >>> try:
    ...     check_collective_program(keep, [3], make_inputs=lambda p, rng: [[1, 2, 3]] * p,
    ...                              expected=sums)
    ... except AssertionError as err:
    ...     print(err)
    wrong result of keep for p=3: PE 0 returned 1, but 3 was expected.
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    model = CostModel(ts=1.0, tw=0.0) if model is None else model
    rng = np.random.default_rng(seed)
    name = _name(program)
    state = {"context": "the first run"}

    def expired():
        return _endless_loop_text(name, time_limit_s, state["context"])

    with wall_clock_limit(time_limit_s, expired):
        for p, params, context, inputs, want in _prepared_cases(cases, make_inputs, expected,
                                                                rng, state):
            original = copy.deepcopy(inputs)
            run = run_program(program, p, inputs, model=model,
                              network=None if network is None else network(p),
                              max_ops=max_ops, time_limit_s=time_limit_s, context=context,
                              **params)
            pe = _first_wrong_pe(run.results, want)
            if pe is not None:
                why = hint(run.results, original, **params) if callable(hint) else hint
                raise AssertionError(_wrong_result_text(name, context, pe, run.results[pe],
                                                        want[pe], item, why))
            if payload_words is not None:
                _check_declared_words(run, lambda x: payload_words(x, original), name, context)
            _check_time(run, name, context, model, p, params, expected_time, time_bound,
                        time_label, rel_tol, time_hint)


def check_pe_isolation(program: Callable, cases: Iterable, *, make_inputs: Callable,
                       expected: Callable, model: CostModel | None = None,
                       network: Callable | None = None, item: str = "item", hint: str = "",
                       time_limit_s: float = 10.0, max_ops: int | None = None,
                       seed: int = 0) -> None:
    """Check that each PE knows only its own data and the messages it received.

    Runs the cases like :func:`check_collective_program` (same ``cases``,
    ``make_inputs``, ``expected``, ``model``, ``network``, ...) but with each PE
    in a process of its own (:func:`~collective_lib.isolation.isolated`), so
    PEs that share Python globals instead of sending messages see none of each
    other's writes.  When a PE's result is wrong there, or a PE fails, the same
    inputs run again with all PEs in one process: if that is right, the PEs
    must have shared state, and the message says so; if not, the program is
    simply wrong and the message is that of :func:`check_collective_program`.
    Starting a PE's process costs about 15 ms, so a few small cases suffice.

    A PE's process starts as a copy of this one, globals included: give the
    check a ``seed`` no earlier check of the program used, so that no global
    can still hold the values of these inputs.

    Parameters
    ----------
    program : generator function
        The student's SPMD program.
    cases, make_inputs, expected, model, network, item, hint, time_limit_s, max_ops, seed :
        As for :func:`check_collective_program`; ``time_limit_s`` also bounds
        the real time a PE may take between two operations.

    Raises
    ------
    AssertionError
        "PE k returned a value it never received: ..." when the results are
        right only with all PEs in one process; otherwise the message of the
        program's first failure.

    Examples
    --------
    >>> from collective_lib import sendrecv
    >>> def inputs(p, rng):
    ...     return [int(x) for x in rng.integers(0, 99, size=p)]
    >>> def sums(inputs):
    ...     return [sum(inputs)] * len(inputs)
    >>> def ring_sum(me, p, data):
    ...     total = data
    ...     for _ in range(p - 1):
    ...         data = yield sendrecv((me + 1) % p, data, (me - 1) % p)
    ...         total += data
    ...     return total
    >>> check_pe_isolation(ring_sum, [3, 4], make_inputs=inputs, expected=sums)
    >>> BOARD = {}
    >>> def board_sum(me, p, data):
    ...     BOARD[me] = data
    ...     for _ in range(p - 1):
    ...         yield sendrecv((me + 1) % p, 0, (me - 1) % p)
    ...     return sum(BOARD.get(pe, 0) for pe in range(p))
    >>> try:
    ...     check_pe_isolation(board_sum, [3], make_inputs=inputs, expected=sums)
    ... except AssertionError as err:
    ...     print(err)
    board_sum for p=3: PE 0 returned a value it never received: with all PEs in one Python
    process the results are right, but with each PE in its own process PE 0 returned 84 where
    197 was expected. A PE knows only its own data and the messages it received; PEs must not
    share Python globals.
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    model = CostModel(ts=1.0, tw=0.0) if model is None else model
    rng = np.random.default_rng(seed)
    name = _name(program)
    state = {"context": "the first run"}

    def expired():
        return _endless_loop_text(name, time_limit_s, state["context"])

    def results_of(runner, p, inputs, context, params) -> tuple:
        """``(results, None)`` of one run, or ``(None, the AssertionError)``."""
        try:
            run = run_program(runner, p, copy.deepcopy(inputs), model=model,
                              network=None if network is None else network(p),
                              max_ops=max_ops, time_limit_s=time_limit_s, context=context,
                              **params)
            return run.results, None
        except AssertionError as err:
            return None, err
        finally:
            apart.close()        # a failed run leaves PE processes behind

    with wall_clock_limit(time_limit_s, expired), \
            isolated(program, time_limit_s=time_limit_s) as apart:
        for p, params, context, inputs, want in _prepared_cases(cases, make_inputs, expected,
                                                                rng, state):
            results, failure = results_of(apart, p, inputs, context, params)
            pe = None if failure is not None else _first_wrong_pe(results, want)
            if failure is None and pe is None:
                continue
            shared, shared_failure = results_of(program, p, inputs, context, params)
            if shared_failure is not None:
                raise shared_failure
            wrong = _first_wrong_pe(shared, want)
            if wrong is not None:
                raise AssertionError(_wrong_result_text(name, context, wrong, shared[wrong],
                                                        want[wrong], item, hint))
            raise AssertionError(_shared_state_text(name, context, failure, pe, results, want))


def _shared_state_text(name: str, context: str, failure: AssertionError | None,
                       pe: int | None, results: list | None, want: list) -> str:
    """Why results that are right only with all PEs in one process are wrong."""
    where = ""
    cause = None if failure is None else failure.__context__
    if failure is None:
        head = f"PE {pe} returned a value it never received"
        apart = (f"PE {pe} returned {_format_value(results[pe])} where "
                 f"{_format_value(want[pe])} was expected")
    elif isinstance(cause, PEProcessError):
        head = f"PE {cause.pe} used a value it never received"
        apart, where = f"PE {cause.pe} {cause.detail}", cause.where
    else:
        head = "a PE used a value it never received"
        apart = "the run failed: " + str(failure).splitlines()[0]
    return (f"{name} for {context}: {head}: with all PEs in one Python process the results are "
            f"right, but with each PE in its own process {apart}. A PE knows only its own data "
            "and the messages it received; PEs must not share Python globals."
            + (f"\n  at {where}" if where else ""))


def _check_declared_words(run: Run, payload_words: Callable, name: str, context: str) -> None:
    for msg in run.messages:
        carried = payload_words(msg.payload)
        if msg.words < carried:
            raise AssertionError(
                f"{name} for {context}: the message from PE {msg.src} to PE {msg.dst} carries "
                f"{carried} words of data but is sent as {msg.words} word"
                f"{'s' * (msg.words != 1)}, so the simulator charges too little for it.\n"
                "Hint: a list of messages counts as one word per list item; give the real size "
                "with `words=`, e.g. `sendrecv(dst, bundle, src, words=n * len(bundle))`.")


def _check_time(run, name, context, model, p, params, expected_time, time_bound, label,
                rel_tol, hint) -> None:
    where = f"{name} for {context}, {_describe_model(model)}"
    tail = (f"\n{hint}" if hint else "")
    if expected_time is not None:
        want = expected_time(p, **params)
        if not math.isclose(run.time, want, rel_tol=rel_tol, abs_tol=1e-12):
            raise AssertionError(f"wrong time of {where}: the simulated time is {run.time:g}, "
                                 f"but {label} = {want:g} {_traffic_text(run)}." + tail)
    if time_bound is not None:
        bound = time_bound(p, **params)
        if run.time > bound * (1 + rel_tol) + 1e-12:
            raise AssertionError(f"too slow: {where} takes {run.time:g}, more than "
                                 f"{label} = {bound:g} {_traffic_text(run)}." + tail)


# -- did the library's code run? --------------------------------------------------------------

def _fingerprint(code: types.CodeType) -> tuple:
    return (code.co_code, code.co_names)


def forbid_library_execution(program: Callable, algorithms: Iterable, p: int, inputs=None, *,
                             model: CostModel | None = None, network=None,
                             reason: str = "this exercise asks for your own program, built "
                                           "from send and recv",
                             time_limit_s: float = 10.0, **params) -> None:
    """Fail when the library's code of ``algorithms`` runs while ``program`` is simulated.

    A runtime complement to :func:`forbid_library_calls`: the program runs once
    on ``p`` PEs under a profiler that watches for the code of the named
    algorithms, however the program reached it (a call, ``yield from``, an
    alias, ``getattr`` with a computed name, ``importlib``, a copy of the
    function object, or even its source text compiled again).

    Parameters
    ----------
    program : generator function
        The student's program.
    algorithms : iterable
        Catalog names or programs whose code must not run.
    p, inputs, model, network, **params :
        One run, as for :func:`run_program`.
    reason : str
        Appended to the message.
    time_limit_s : float
        Real-time budget of the run.

    Raises
    ------
    AssertionError
        Naming the library's algorithm that ran.  A program that fails in
        another way (a wrong result is not checked here) raises the
        AssertionError of :func:`run_program` only if no library code ran.

    Examples
    --------
    >>> from collective_lib import catalog, recv, send
    >>> def relay(me, p, data, root=0):
    ...     program = catalog()["binomial_" + "broadcast"].program
    ...     return (yield from program(me, p, data, root))
    >>> try:
    ...     forbid_library_execution(relay, ["binomial_broadcast"], 4, [7, None, None, None])
    ... except AssertionError as err:
    ...     print(str(err).split(";")[0])
    relay runs the library's `binomial_broadcast` (its code ran when relay was simulated on p=4)
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    from .catalog import catalog
    entries = catalog()
    targets = {}
    for algorithm in algorithms:
        if isinstance(algorithm, str):
            if algorithm not in entries:
                raise ValueError(f"unknown algorithm {algorithm!r}")
            func, label = entries[algorithm].program, algorithm
        else:
            func, label = algorithm, _name(algorithm)
        for item in _unwrap(func):
            code = getattr(item, "__code__", None)
            if code is not None:
                targets[_fingerprint(code)] = label
    seen: dict = {}
    ran: list = []

    def watch(frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        label = seen.get(code, False)
        if label is False:
            label = seen[code] = targets.get(_fingerprint(code))
        if label is not None and not ran:
            ran.append(label)

    name = _name(program)
    if is_remote(program):
        _forbid_by_poison(program, sorted(set(targets.values())), p, inputs, model, network,
                          reason, time_limit_s, params)
        return
    failure = None
    old = sys.getprofile()
    sys.setprofile(watch)
    try:
        run_program(program, p, inputs, model=model, network=network,
                    time_limit_s=time_limit_s, **params)
    except AssertionError as exc:
        failure = exc
    finally:
        sys.setprofile(old)
    if ran:
        raise AssertionError(f"{name} runs the library's `{ran[0]}` (its code ran when {name} "
                             f"was simulated on p={p}); {reason}.")
    if failure is not None:
        raise failure


def _forbid_by_poison(standin, labels, p, inputs, model, network, reason, time_limit_s,
                      params) -> None:
    """:func:`forbid_library_execution` for a student's program in its sandboxed process:
    it runs once in a process where the library's ``labels`` raise when run."""
    name = _name(standin)
    try:
        run_program(standin.poisoned(labels), p, inputs, model=model, network=network,
                    time_limit_s=time_limit_s, **params)
    except AssertionError as exc:
        text = str(exc)
        if FORBIDDEN not in text:
            raise
        label = text.split(FORBIDDEN + ": ", 1)[1].split()[0].strip("'\".,;:")
        raise AssertionError(f"{name} runs the library's `{label}` (its code ran when {name} "
                             f"was simulated on p={p}); {reason}.") from None


# -- tables filled in by hand ------------------------------------------------------------------

_TERM = re.compile(r"^\s*([A-Za-z]+)_?\{?\s*(-?\d+)\s*\}?\s*\[\s*(-?\d+)\s*\]\s*$")


def parse_terms(entry: Any, letter: str = "x") -> frozenset:
    """The set of ``(source, destination)`` pairs of a symbolic partial sum.

    A term ``x3[5]`` (also ``x_3[5]``) stands for the message that PE 3 holds
    for PE 5, and a partial sum lists its terms: a string joined with ``+``
    or commas (``"x3[5] + x4[5]"``), or a list, tuple or set of terms, each a
    string or a pair ``(3, 5)``.

    Raises
    ------
    ValueError
        Saying which part could not be read.

    Examples
    --------
    >>> sorted(parse_terms("x3[5] + x4[5]"))
    [(3, 5), (4, 5)]
    >>> sorted(parse_terms(["x_0[1]", (2, 1)]))
    [(0, 1), (2, 1)]
    >>> parse_terms("x3 + x4")
    Traceback (most recent call last):
    ...
    ValueError: cannot read the term 'x3' (write a term as x3[5]: the message PE 3 holds for PE 5)
    """
    if isinstance(entry, str):
        parts = [t for t in re.split(r"[+,]", entry)]
        if not entry.strip():
            raise ValueError("the entry is empty (write its terms, e.g. 'x3[5] + x4[5]')")
    elif isinstance(entry, (list, tuple, set, frozenset)):
        if isinstance(entry, tuple) and len(entry) == 2 and all(
                isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in entry):
            parts = [entry]                   # one (source, destination) pair
        else:
            parts = list(entry)
    else:
        raise ValueError(f"cannot read {_format_value(entry, 60)} ({type(entry).__name__}); "
                         "write a partial sum as a string such as 'x3[5] + x4[5]' or a list of "
                         "terms")
    terms = set()
    for part in parts:
        if isinstance(part, tuple) and len(part) == 2 and all(
                isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in part):
            terms.add((int(part[0]), int(part[1])))
            continue
        found = _TERM.match(part) if isinstance(part, str) else None
        if not found or found.group(1) != letter:
            shown = part.strip() if isinstance(part, str) else _format_value(part, 40)
            raise ValueError(f"cannot read the term {shown!r} "
                             f"(write a term as {letter}3[5]: the message PE 3 holds for PE 5)")
        terms.add((int(found.group(2)), int(found.group(3))))
    if not terms:
        raise ValueError("the entry has no terms (write them, e.g. 'x3[5] + x4[5]')")
    return frozenset(terms)


def format_terms(terms, letter: str = "x") -> str:
    """``'x3[5] + x4[5]'``: a set of (source, destination) pairs as text, sorted.

    >>> format_terms({(4, 5), (3, 5)})
    'x3[5] + x4[5]'
    """
    return " + ".join(f"{letter}{s}[{d}]" for s, d in sorted(terms, key=lambda t: (t[1], t[0])))


def sends_by_step(run: Run) -> dict:
    """``{step: {source: payload}}``: what each PE sent in each step of a traced run.

    Steps are counted from 1 as in the figures (:meth:`Run.step`).

    >>> from collective_lib import catalog
    >>> run = catalog()["all_to_all_red_ring"].simulate(3, inputs=[[1, 2, 3]] * 3)
    >>> sends_by_step(run)
    {1: {0: 2, 1: 3, 2: 1}, 2: {0: 6, 1: 2, 2: 4}}
    """
    table = {}
    for s in range(1, len(run.step_starts()) + 1):
        row = {}
        for msg in run.step(s):
            if msg.src in row:
                raise ValueError(f"PE {msg.src} sends more than one message in step {s}; "
                                 "read run.step(s) instead")
            row[msg.src] = msg.payload
        table[s] = dict(sorted(row.items()))
    return table


def _set_difference(got, want, show) -> str:
    """' (missing: ...; not expected: ...)' for two sets, else ''."""
    if not (isinstance(got, (set, frozenset)) and isinstance(want, (set, frozenset))):
        return ""
    parts = []
    if want - got:
        parts.append(f"missing: {show(frozenset(want - got))}")
    if got - want:
        parts.append(f"not expected: {show(frozenset(got - want))}")
    return f" ({'; '.join(parts)})" if parts else ""


def _keys_text(keys) -> str:
    return ", ".join(repr(k) for k in keys)


def check_answer_table(answer: Any, expected: Any, *, name: str, normalize: Callable = None,
                       show: Callable = None, hint: str = "") -> None:
    """Compare a table a student filled in by hand with the expected one, entry by entry.

    ``expected`` is a (nested) dict or list; ``answer`` must have the same
    shape: the same keys for a dict (a list may stand for a dict with the keys
    0, 1, ...), the same length for a list.  Each leaf of the answer is read
    with ``normalize`` (a ValueError it raises is reported with the entry's
    place) and compared with the expected leaf.

    Parameters
    ----------
    answer, expected : dict, list or leaf
        The student's table and the right one.
    name : str
        The student's variable, to name an entry (``sends_4[2][3]``).
    normalize : callable, optional
        Reads one answer leaf (e.g. :func:`parse_terms`); default: as it is.
    show : callable, optional
        Formats an expected or normalized leaf for messages; default ``repr``.
    hint : str
        Appended to a wrong-entry message.

    Raises
    ------
    AssertionError
        At the first entry that is missing, unreadable or wrong.

    Examples
    --------
    >>> check_answer_table({1: ["a", "b"]}, {1: {0: "a", 1: "b"}}, name="t")
    >>> try:
    ...     check_answer_table({1: ["a", "c"]}, {1: ["a", "b"]}, name="t")
    ... except AssertionError as err:
    ...     print(err)
    t[1][1] is 'c', but 'b' was expected
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    normalize = normalize or (lambda x: x)
    show = show or repr

    def compare(got, want, path):
        __tracebackhide__ = True
        if isinstance(want, dict) or isinstance(want, (list, tuple)):
            keys = list(want) if isinstance(want, dict) else list(range(len(want)))
            if isinstance(got, (list, tuple)):
                got = dict(enumerate(got))
            if not isinstance(got, dict):
                raise AssertionError(f"{path} must be a {'dict' if isinstance(want, dict) else 'list'}"
                                     f" with the entries {_keys_text(keys)}, got "
                                     f"{_format_value(got, 80)}")
            missing = [k for k in keys if k not in got]
            extra = [k for k in got if k not in keys]
            if missing or extra:
                text = f"{path} must have the entries {_keys_text(keys)}"
                if missing:
                    text += f"; {_keys_text(missing)} {'is' if len(missing) == 1 else 'are'} missing"
                if extra:
                    text += f"; {_keys_text(extra)} should not be there"
                raise AssertionError(text)
            for k in keys:
                compare(got[k], want[k] if isinstance(want, dict) else want[k], f"{path}[{k!r}]")
            return
        try:
            value = normalize(got)
        except ValueError as exc:
            raise AssertionError(f"{path}: {exc}") from None
        if not _same(value, want):
            raise AssertionError(f"{path} is {show(value)}, but {show(want)} was expected"
                                 f"{_set_difference(value, want, show)}"
                                 + (f"\n{hint}" if hint else ""))

    compare(answer, expected, name)
