"""Running a student's SPMD program, and checking its results and its simulated time.

:func:`run_program` simulates a program under the guards and explains a
deadlock, an unreceived message, an endless program or an exception;
:func:`check_broadcast_program` and :func:`check_collective_program` check a
program on many cases against the expected results and times;
:func:`check_pe_isolation` catches PEs that share Python globals instead of
sending messages (each PE in its own process).
"""
from __future__ import annotations

import copy
import functools
import inspect
import math
import random
from contextlib import contextmanager
from typing import Any, Callable, Iterable

import numpy as np

from ..errors import DeadlockError, OperationLimitError, UnreceivedMessageError
from ..model import CostModel
from ..ops import RECORDS, mapped, relay
from ..runs import Run
from ..simulator import DEFAULT_MODEL, simulate
from ._advice import (explain_exception, first_line, format_value, name_of, quiet, root_list,
                      same_value)
from .failures import CheckFailed
from .guards import WallClockLimitExceeded, wall_clock_limit
from .isolation import PEProcessError, differs_alone, isolated, noting
from .sizes import check_declared_words
from .standins import is_stand_in

__all__ = ["run_program", "check_broadcast_program", "simulated_time",
           "check_collective_program", "check_pe_isolation",
           "check_enough_finished", "OperationLimitExceeded", "REPLAYED_SHARE"]


# Which graded runs have a PE replayed alone, and which PE (_run): choices the student's code
# cannot foresee.  A replay starts a student process (some 30 ms), so one run in four: a
# program must share state in many runs to earn points, and each of them is a draw that
# catches it (scatter_any_root grades some 400 runs: 4 s of grading became 7, not 17).
_UNFORESEEN = random.SystemRandom()
REPLAYED_SHARE = 0.25
# What _run found of a student's program (a stand-in) that read what it never received: every
# later run and check_enough_finished of the notebook fail with it, so that a test that skips
# the runs that fail cannot hide it (nor make it depend on which PE was replayed).  Pairs
# (stand-in, finding), matched by identity: a stand-in need not be hashable.
_CAUGHT: list = []


def _caught(program: Callable) -> str:
    """What :func:`_run` found of ``program`` (a stand-in) reading what it never received."""
    return next((found for caught, found in _CAUGHT if caught is program), "")


class OperationLimitExceeded(CheckFailed):
    """The program issued more operations than its budget (raised by :func:`run_program`):
    an endless loop that keeps yielding, as :class:`~.guards.WallClockLimitExceeded` is one
    that never yields. A test that runs many cases can stop at the first (each costs the
    whole budget). Its kind is ``"operation_limit"``."""

    kind = "operation_limit"


# -- running an SPMD program -------------------------------------------------------------

def _describe_model(model: CostModel) -> str:
    return f"alpha={model.ts:g}, beta={model.tw:g}, ports={model.ports!r}"


def _default_max_ops(p: int) -> int:
    """The operation budget of a graded run: 64 per PE and tree level, plus 1,000.

    Far below the simulator's general :func:`~collective_lib.limits.default_max_ops`
    (10,000 + 4p per PE) on purpose: every exercise program is a collective of
    O(p log p) operations, so a student's endless yield loop is stopped within a
    fraction of a second with a message about endless loops, rather than after
    millions of operations.
    """
    return 64 * p * max(1, (p - 1).bit_length() + 1) + 1000


def _copied(op):
    """``op`` with a deep copy of every payload it sends (what is no record, as it is)."""
    return mapped(op, payload=copy.deepcopy) if type(op) in RECORDS else op


def _copying_messages(program: Callable) -> Callable:
    """``program`` with every message copied when it is sent and when it is received.

    The simulator hands payloads over by reference, so a PE that changes a
    list after sending it, or a list it received, would change what the trace
    says was sent; copies, as between real processes, keep the trace true.
    What is not a generator is passed on for the simulator to refuse.
    """
    @functools.wraps(program)
    def copying(me, p, data, **params):
        steps = program(me, p, data, **params)
        if not inspect.isgenerator(steps):
            return steps
        return relay(steps, _copied, copy.deepcopy)
    return copying


def _endless_loop_text(what: str, limit_s: float, running: str = "") -> str:
    """What to say when ``what`` runs out of real time (``running``: the case it was on)."""
    during = f" (it was running for {running})" if running else ""
    return (f"{what} did not finish within {limit_s:g} s of real time{during}. Is there an "
            "endless loop that never yields an operation (such as `while True: pass`, or a "
            "loop whose condition never changes)?")


@contextmanager
def _cases_time_limit(name: str, time_limit_s: float):
    """The real-time limit of a check over many cases; yields ``state``, whose
    ``"context"`` names the case being run for the endless-loop message."""
    state = {"context": "the first run"}
    with wall_clock_limit(time_limit_s,
                          lambda: _endless_loop_text(name, time_limit_s, state["context"])):
        yield state


def run_program(program: Callable, p: int, inputs=None, *, model: CostModel | None = None,
                network=None, max_ops: int | None = None, time_limit_s: float = 10.0,
                context: str | None = None, copying: bool = False, **params) -> Run:
    """Simulate a student's SPMD ``program`` and explain any failure as an AssertionError.

    Like :func:`~collective_lib.simulate`, with guards: at most ``max_ops``
    operations (default: generous for a logarithmic algorithm) and at most
    ``time_limit_s`` seconds of real time.  Under ``nbgrader autograde``, where the
    PEs of a run share the student's process, one run in four (:data:`REPLAYED_SHARE`),
    drawn at random, has one PE, chosen at random, run again in a process of its own
    from the same data and messages; a PE that behaves otherwise there read what it
    never received (a program that shares state only when it can), and the run fails.

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
    copying : bool
        Copy every message when it is sent and when it is received, as between real
        processes, so that the run's messages hold what was sent even where a PE changes
        a list after sending or receiving it: for a check that reads the payloads.
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
    return _run(program, p, inputs, model=model, network=network, max_ops=max_ops,
                time_limit_s=time_limit_s, context=context, params=params, copying=copying)


def _run(program: Callable, p: int, inputs, *, model, network, max_ops, time_limit_s, context,
         params: dict, copying: bool = False, alone: bool | None = None) -> Run:
    """:func:`run_program`; ``copying``: copy every message (:func:`_copying_messages`);
    ``alone``: in a share :data:`REPLAYED_SHARE` of the runs, replay one PE, chosen at
    random, in a process of its own and fail where it behaves otherwise
    (:func:`~.isolation.differs_alone`); by default for a stand-in, whose PEs share the
    student's process (in a student's own notebook nothing is graded)."""
    __tracebackhide__ = True
    if context is None:
        context = ", ".join([f"p={p}"] + [f"{k}={v!r}" for k, v in params.items()])
    limit = _default_max_ops(p) if max_ops is None else max_ops
    where = f"{name_of(program)} for {context}"
    if _caught(program):
        raise CheckFailed(_caught(program), "shared_state")
    alone = (is_stand_in(program) if alone is None else alone) and p > 1 and \
        _UNFORESEEN.random() < REPLAYED_SHARE
    notes: dict = {}
    runner = _copying_messages(program) if copying else program
    try:
        with quiet(), wall_clock_limit(
                time_limit_s, _endless_loop_text(where, time_limit_s)):
            run = simulate(noting(runner, notes) if alone else runner, p, inputs, model=model,
                           network=network, trace=True, max_ops=limit, **params)
    except DeadlockError as exc:
        lines = [f"  PE {pe} waits in {what}" for pe, what in sorted(exc.blocked.items())]
        raise CheckFailed(
            f"deadlock in {where}: at simulated time {exc.time:g} no PE can go on, but "
            f"{len(exc.blocked)} PE(s) still wait:\n" + "\n".join(lines) +
            _deadlock_hint(len(exc.blocked), p), "deadlock") from None
    except UnreceivedMessageError as exc:
        lines = [f"  {n} message(s) from PE {s} to PE {d}"
                 for (s, d), n in sorted(exc.unreceived.items())]
        senders = sorted({s for s, _ in exc.unreceived})
        who = ", ".join(f"PE {s}" for s in senders)
        raise CheckFailed(
            f"{where}: {who} sent messages that were never received:\n" + "\n".join(lines) +
            "\nHint: the receiving PE returned without a matching recv; is the message sent "
            "to the right PE, and does that PE receive before it returns?",
            "unreceived_message") from None
    except OperationLimitError:
        raise OperationLimitExceeded(
            f"{where} did not finish: the PEs issued more than {limit} operations, far more "
            "than this exercise needs. Is there an endless loop that keeps yielding "
            "operations?") from None
    except WallClockLimitExceeded:
        raise
    except Exception as exc:   # the student's own code, or an invalid operation it yielded
        raise CheckFailed(explain_exception(exc, where), "exception") from None
    if alone:
        me = _UNFORESEEN.randrange(p)
        with quiet():
            differs = differs_alone(program, me, p, params, notes[me], run.results[me],
                                    time_limit_s=time_limit_s)
        if differs:
            _CAUGHT.append((program,
                f"{where}: PE {me} behaves otherwise in a process of its own: started from "
                f"the same data and fed the values it received in the run, it {differs}. A PE "
                "knows only its own data and the messages it received; PEs must not share "
                "Python globals (nor draw random numbers or read the clock)."))
            raise CheckFailed(_caught(program), "shared_state")
    return run


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
    model = DEFAULT_MODEL if model is None else model
    params = dict(params or {})
    rng = np.random.default_rng(seed)
    name = name_of(program)
    with _cases_time_limit(name, time_limit_s) as state:
        for p in ps:
            root_0_right = False   # right for root 0, wrong for another: no root translation
            for root in root_list(roots, p):
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
                    # isclose is False for a NaN or infinite time: it fails closed
                    if not math.isclose(run.time, want, rel_tol=rel_tol, abs_tol=1e-12):
                        sent = len(run.messages)
                        note = (f" (The PEs sent {sent} messages; a broadcast needs only "
                                f"p - 1 = {p - 1}.)" if sent != p - 1 else "")
                        raise CheckFailed(
                            f"wrong time of {name} for {context}, m={m}, {_describe_model(model)}: "
                            f"the simulated time is {run.time:g}, but {time_label} = {want:g}."
                            + note, "wrong_time")


def _check_results(run: Run, name: str, context: str, message: list, root: int,
                   require_receive: bool, root_0_right: bool = False) -> None:
    results = run.results
    for pe, got in enumerate(results):
        if not same_value(got, message):
            hint = ""
            if root_0_right:
                hint = (f" The same p worked with root 0, but not with root {root}: does each "
                        "PE compute its rank relative to the root, rel = (me - root) % p, and "
                        "turn the relative ranks of its parent and children back into real "
                        "ones with (rel + root) % p?")
            elif got is None:
                hint = " Does every PE return the message (the root included)?"
            raise CheckFailed(
                f"wrong result of {name} for {context}: PE {pe} returned {format_value(got)}, "
                f"but the root's message was {format_value(message)}.{hint}", "wrong_result")
    if require_receive and run.p > 1:
        receivers = {msg.dst for msg in run.messages}
        for pe in range(run.p):
            if pe != root and pe not in receivers:
                raise CheckFailed(
                    f"{name} for {context}: PE {pe} returned the right message but never "
                    "received one; a PE can only learn the root's message from a recv.",
                    "not_received")


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



# -- any collective program (chapters 4 and 5) --------------------------------------------

def _case(case) -> tuple:
    """``(p, params)`` of a case written as ``p`` or ``(p, {params})``."""
    if isinstance(case, tuple) and len(case) == 2 and isinstance(case[1], dict):
        return case[0], dict(case[1])
    return case, {}


def _case_text(p: int, params: dict) -> str:
    shown = [f"{k}={name_of(v) if callable(v) else repr(v)}" for k, v in params.items()]
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
        yield p, params, context, inputs, (None if expected is None else
                                           expected(copy.deepcopy(inputs), **params))


def _first_wrong_pe(results: list, want: list) -> int | None:
    """The first PE whose result is not the one expected, or None."""
    return next((pe for pe, (got, wanted) in enumerate(zip(results, want))
                 if not same_value(got, wanted)), None)


def _wrong_result_text(name: str, context: str, pe: int, got: Any, wanted: Any, item: str,
                       hint: str) -> str:
    return (f"wrong result of {name} for {context}: PE {pe} returned {format_value(got)}, "
            f"but {format_value(wanted)} was expected{_first_difference(got, wanted, item)}."
            + (f"\n{hint}" if hint else ""))


def _first_difference(got: Any, want: Any, item: str) -> str:
    """' (item 2 is 5, but 7 was expected)' for two sequences of the same length, else ''."""
    if not (isinstance(got, (list, tuple, np.ndarray)) and isinstance(want, (list, tuple))):
        return ""
    if len(got) != len(want):
        return f" ({len(got)} items instead of {len(want)})"
    for index, (a, b) in enumerate(zip(got, want)):
        if not same_value(a, b):
            return (f" ({item} {index} is {format_value(a, 60)}, but {format_value(b, 60)} "
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


def check_enough_finished(program: Callable, finished: Iterable[int], tried: Iterable[int],
                          what: str, see: str, *, short: Iterable = ()) -> None:
    """Check that a test judged only on the runs that finish had enough of them to judge.

    A test of the messages or the time of a program skips the cases on which the
    program crashes or deadlocks, so that one bug costs the points of the
    correctness test only. Skipping must not pay: a program that fails on every
    case but the trivial ones (p = 1, where nothing is sent) would otherwise earn
    the points of a tree or a time it never showed. So at least half of the cases
    with p >= 2 must have finished.

    ``finished`` and ``tried`` are the p of the cases (one entry per case), ``what``
    names what the test measures ("the time"), ``see`` the test that says why the
    others failed.

    A run that finishes may still show nothing: a program that sends nothing, or
    messages that carry none of the data, finishes at once, within any bound of time.
    A test that counts only the runs whose messages carry what the operation needs
    leaves the others out of ``finished`` and lists them in ``short``, a pair
    ``(p, why)`` each (``why``: what the messages lacked); when too few cases count, the
    message quotes the first ``why`` with p >= 2.

    >>> check_enough_finished(lambda me, p: None, [1, 2, 3], [1, 2, 3, 4], "the time",
    ...                       "the correctness test")
    >>> try:
    ...     check_enough_finished(lambda me, p: None, [1], [1, 2, 3], "the time",
    ...                           "the correctness test")
    ... except AssertionError as err:
    ...     print(err)
    the time is measured on the runs that finish, and <lambda>
    finished on 0 of the 2 cases with p >= 2: too few to judge the time; see the correctness test
    >>> try:
    ...     check_enough_finished(lambda me, p: None, [], [2], "the time",
    ...                           "the correctness test",
    ...                           short=[(2, "for p = 2 no message left PE 0")])
    ... except AssertionError as err:
    ...     print(err)
    the time is measured on the runs that finish with messages that carry
    the data, and <lambda> did so on 0 of the 1 cases with p >= 2:
    for p = 2 no message left PE 0.
    Its results cannot be right then (see the correctness test), so the time it shows
    says nothing.
    """
    if _caught(program):                # why the runs failed, once and for all
        raise CheckFailed(_caught(program), "shared_state")
    done = sum(1 for p in finished if p >= 2)
    cases = sum(1 for p in tried if p >= 2)
    if not (cases > 0 and 2 * done >= cases):
        lacking = [why for p, why in short if p >= 2]
        if lacking:
            raise CheckFailed(
                f"{what} is measured on the runs that finish with messages that carry\nthe "
                f"data, and {name_of(program)} did so on {done} of the {cases} cases with "
                f"p >= 2:\n{lacking[0]}.\nIts results cannot be right then (see {see}), so "
                f"{what} it shows says nothing.", "too_few_finished")
        raise CheckFailed(
            f"{what} is measured on the runs that finish, and {name_of(program)}\nfinished on "
            f"{done} of the {cases} cases with p >= 2: too few to judge {what}; see {see}",
            "too_few_finished")


def check_collective_program(program: Callable, cases: Iterable, *, make_inputs: Callable,
                             expected: Callable | None, model: CostModel | None = None,
                             network_for: Callable | None = None,
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
    expected : callable or None
        ``expected(inputs, **params) -> list`` of the p results; None checks no
        result, only that the program runs to the end and its time and sizes
        (when another test grades the results: one bug, one deduction).
    model : CostModel, optional
        Defaults to ``CostModel(ts=1, tw=0)`` (time counts steps).
    network_for : callable, optional
        ``network_for(p)`` builds the network of each case, e.g. ``Ring``; defaults to a
        fully connected network.
    expected_time, time_bound : callable, optional
        ``f(p, **params)``: the time the program must take exactly (up to
        ``rel_tol``), or must not exceed.
    time_label : str
        How to name that time in messages, e.g. ``"(ts + tw m)(p - 1)"``.
    payload_words : callable, optional
        ``payload_words(payload, inputs)``: the words a message really carries
        (e.g. n times the input messages it holds, see :func:`~.sizes.count_pieces`);
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
    >>> from collective_lib.networks import Hypercube
    >>> def inputs(p, rng):
    ...     return [[int(x) for x in rng.integers(0, 9, size=p)] for _ in range(p)]
    >>> def sums(inputs):
    ...     return [sum(row[j] for row in inputs) for j in range(len(inputs))]
    >>> cube = catalog()["all_to_all_red_hcube"].program
    >>> check_collective_program(cube, [1, 2, 4, 8, 16], make_inputs=inputs, expected=sums,
    ...                          network_for=Hypercube.of_size,
    ...                          expected_time=lambda p: p.bit_length() - 1)
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
    model = DEFAULT_MODEL if model is None else model
    rng = np.random.default_rng(seed)
    name = name_of(program)
    with _cases_time_limit(name, time_limit_s) as state:
        for p, params, context, inputs, want in _prepared_cases(cases, make_inputs, expected,
                                                                rng, state):
            original = copy.deepcopy(inputs)
            run = _run(program, p, inputs, model=model,
                       network=None if network_for is None else network_for(p), max_ops=max_ops,
                       time_limit_s=time_limit_s, context=context, params=params,
                       copying=payload_words is not None)
            pe = None if want is None else _first_wrong_pe(run.results, want)
            if pe is not None:
                why = hint(run.results, original, **params) if callable(hint) else hint
                raise CheckFailed(_wrong_result_text(name, context, pe, run.results[pe],
                                                     want[pe], item, why), "wrong_result")
            if payload_words is not None:
                check_declared_words(run, lambda x: payload_words(x, original),
                                     f"{name} for {context}")
            _check_time(run, name, context, model, p, params, expected_time, time_bound,
                        time_label, rel_tol, time_hint)


def check_pe_isolation(program: Callable, cases: Iterable, *, make_inputs: Callable,
                       expected: Callable, model: CostModel | None = None,
                       network_for: Callable | None = None, item: str = "item", hint: str = "",
                       time_limit_s: float = 10.0, max_ops: int | None = None,
                       seed: int = 0) -> None:
    """Check that each PE knows only its own data and the messages it received.

    Runs the cases like :func:`check_collective_program` (same ``cases``,
    ``make_inputs``, ``expected``, ``model``, ``network_for``, ...) but with each PE
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
    cases, make_inputs, expected, model, network_for, item, hint, time_limit_s, max_ops, seed :
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
    model = DEFAULT_MODEL if model is None else model
    rng = np.random.default_rng(seed)
    name = name_of(program)
    def results_of(runner, p, inputs, context, params) -> tuple:
        """``(results, None)`` of one run, or ``(None, the AssertionError)``."""
        try:
            run = _run(runner, p, copy.deepcopy(inputs), model=model,
                       network=None if network_for is None else network_for(p), max_ops=max_ops,
                       time_limit_s=time_limit_s, context=context, params=params, alone=False)
            return run.results, None
        except AssertionError as err:
            return None, err
        finally:
            apart.close()        # a failed run leaves PE processes behind

    with _cases_time_limit(name, time_limit_s) as state, \
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
                raise CheckFailed(_wrong_result_text(name, context, wrong, shared[wrong],
                                                     want[wrong], item, hint), "wrong_result")
            raise CheckFailed(_shared_state_text(name, context, failure, pe, results, want),
                              "shared_state")


def _shared_state_text(name: str, context: str, failure: AssertionError | None,
                       pe: int | None, results: list | None, want: list) -> str:
    """Why results that are right only with all PEs in one process are wrong."""
    where = ""
    cause = None if failure is None else failure.__context__
    if failure is None:
        head = f"PE {pe} returned a value it never received"
        apart = (f"PE {pe} returned {format_value(results[pe])} where "
                 f"{format_value(want[pe])} was expected")
    elif isinstance(cause, PEProcessError):
        head = f"PE {cause.pe} used a value it never received"
        apart, where = f"PE {cause.pe} {cause.detail}", cause.where
    else:
        head = "a PE used a value it never received"
        apart = "the run failed: " + first_line(str(failure))
    return (f"{name} for {context}: {head}: with all PEs in one Python process the results are "
            f"right, but with each PE in its own process {apart}. A PE knows only its own data "
            "and the messages it received; PEs must not share Python globals."
            + (f"\n  at {where}" if where else ""))


def _check_time(run, name, context, model, p, params, expected_time, time_bound, label,
                rel_tol, hint) -> None:
    """Fail unless ``run.time`` equals ``expected_time`` and is within ``time_bound``.

    Every comparison fails closed: a NaN or infinite time passes none of them
    (no valid operation makes a time NaN, see :mod:`collective_lib.ops`, but a
    huge ``compute`` can make it infinite).
    """
    where = f"{name} for {context}, {_describe_model(model)}"
    tail = (f"\n{hint}" if hint else "")
    if (expected_time is not None or time_bound is not None) and not math.isfinite(run.time):
        raise CheckFailed(f"wrong time of {where}: the simulated time is {run.time:g}, not "
                          "a finite number, so it meets no time limit." + tail,
                          "wrong_time" if expected_time is not None else "too_slow")
    if expected_time is not None:
        want = expected_time(p, **params)
        if not math.isclose(run.time, want, rel_tol=rel_tol, abs_tol=1e-12):
            raise CheckFailed(f"wrong time of {where}: the simulated time is {run.time:g}, "
                              f"but {label} = {want:g} {_traffic_text(run)}." + tail,
                              "wrong_time")
    if time_bound is not None:
        bound = time_bound(p, **params)
        if not run.time <= bound * (1 + rel_tol) + 1e-12:       # fails on NaN too
            raise CheckFailed(f"too slow: {where} takes {run.time:g}, more than "
                              f"{label} = {bound:g} {_traffic_text(run)}." + tail, "too_slow")
