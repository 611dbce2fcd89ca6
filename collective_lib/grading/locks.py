"""Shared memory (chapter 3): a student's interleavings and a student's lock class.

The lock exercise checks them with the shared-memory machine of
:mod:`collective_lib.shared_memory`. A lock class follows the protocol of
:mod:`collective_lib.algorithms.sync`: ``lock(me, p)`` makes a PE's instance,
``lock.memory(p)`` declares the shared cells, and ``acquire()``/``release()``
are generators that yield memory operations. The driver program is
``lock_demo`` (every PE increments a shared counter in its critical section
``rounds`` times).
"""
from __future__ import annotations

import inspect
import re
from typing import Callable, Iterable

import numpy as np

from ..errors import OperationLimitError
from ._advice import explain_exception, format_value, in_library, quiet, wrapped
from ._lock_messages import (exclusion_text, inside_text, livelock_text, no_operation_hint,
                             no_progress_text, schedule_text, too_slow_text, trace_excerpt)
from .failures import CheckFailed
from .guards import WallClockLimitExceeded, wall_clock_limit
from .isolation import isolated
from . import static
from .library import forbid_computed_with, forbid_library_calls
from .review import flag_for_review
from .standins import is_stand_in

__all__ = ["replay_schedule", "forbid_searched_schedule", "SEARCHES", "check_own_lock",
           "check_lock_progress", "check_lock_exclusion", "check_lock_exhaustive"]

#: Steps each waiting PE gets while another PE holds the lock, in the check that a PE
#: never stops waiting (a lock that gives up after some number of tries lets it in).
_HELD_STEPS = 1000
#: Lines of its trace shown before the waiting PE entered (after the holder's entry).
_HELD_TAIL = 8

# Operations a student's lock may take in one run of random interleavings (one PE's step
# at a time, whatever it costs) when each of its steps crosses to a sandboxed process
# (trusted grading): few enough that a lock that never lets a PE in is stopped within
# seconds, not minutes.
_REMOTE_LOCK_OPS = 5_000

#: Time units a critical section of ``lock_demo`` takes, handing the lock on included,
#: besides its ``hold``: the estimate :func:`_lock_ops_needed` builds on.
_SECTION_TIME = 60
#: How many times :func:`_lock_ops_needed` a timed run may take before it is stopped.
_TIMED_OPS_FACTOR = 3


def _lock_ops_needed(p: int, rounds: int, hold: float = 0) -> int:
    """Operations a correct lock needs at most in a timed run of ``lock_demo``.

    A waiting PE that polls its own cached copy performs one operation per unit of
    time (a cache hit costs 1), and each PE waits while the others go through their
    ``p * rounds`` critical sections of about 60 units plus ``hold``: at most
    ``p * p * rounds * (60 + hold)``. Correct locks of every design the course has met
    stay within 0.84 of it (Anderson's array lock, whose PEs each poll a flag of their
    own, needs the most: 9,618 of 11,520 with p = 8 and 3 rounds; a ticket lock 3,998;
    test-and-test-and-set with back-off 374). :func:`check_lock_progress` stops a run
    after three times this many."""
    return int(p * p * rounds * (_SECTION_TIME + hold))


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
    ...     print(err)
    your schedule names PE 2 at step 1, but there are only 2 PEs (0
    and 1)
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    from ..shared_memory import simulate_shared
    if isinstance(schedule, np.ndarray):
        schedule = schedule.tolist()
    if not isinstance(schedule, (list, tuple)):
        raise CheckFailed(f"{what} must be a list of PE numbers such as [0, 1, 1, 0], "
                          f"got {format_value(schedule)} ({type(schedule).__name__})",
                          "wrong_form")
    if len(schedule) > max_steps:
        raise CheckFailed(f"{what} has {len(schedule)} steps; no more than {max_steps} "
                       "are needed here. Keep only the steps that matter.", "wrong_form")
    ranks = "PE 0" if p == 1 else "PEs (0 and 1)" if p == 2 else f"PEs (0 .. {p - 1})"
    for step, pe in enumerate(schedule):
        if isinstance(pe, (bool, np.bool_)) or not isinstance(pe, (int, np.integer)):
            raise CheckFailed(f"{what} must list PE numbers (ints), but step {step} is "
                              f"{format_value(pe)} ({type(pe).__name__})", "wrong_form")
        if not 0 <= pe < p:
            raise CheckFailed(f"{what} names PE {pe} at step {step}, but there are only "
                              f"{p} {ranks}", "wrong_form")
    schedule = [int(pe) for pe in schedule]

    def replay(steps):
        return simulate_shared(program, p, schedule=steps, stop_after=len(steps), **params)

    try:
        with quiet(), wall_clock_limit(time_limit_s, f"replaying {what} took more than "
                                        f"{time_limit_s:g} s of real time"):
            return replay(schedule)
    except WallClockLimitExceeded:
        raise
    except ValueError as exc:
        found = re.search(r"names PE (\d+) at step (\d+), but PE \d+ has returned", str(exc))
        if not found:
            raise CheckFailed(explain_exception(exc, f"replaying {what}"),
                           "exception") from None
        pe, step = int(found.group(1)), int(found.group(2))
        with quiet():
            before = replay(schedule[:step])
        raise CheckFailed(
            f"{what} names PE {pe} at step {step}, but PE {pe} has already returned: it has no "
            f"operation left. The run up to that step:\n{trace_excerpt(before.trace)}",
            "wrong_form") from None
    except Exception as exc:
        raise CheckFailed(explain_exception(exc, f"replaying {what}"),
                       "exception") from None


#: The library's searches for an interleaving that breaks a property, and the checks
#: whose messages print one: an answer that asks for a schedule found by hand must not
#: call them.
SEARCHES = ("explore_interleavings", "find_violation", "check_lock_exclusion",
            "check_lock_exhaustive")

#: What runs the lock of part 1: a schedule whose definition runs it in a loop, or at
#: random, was found by a search of the student's own.
_RUNS_THE_LOCK = ("simulate_shared", "try_schedule", "replay_schedule", "run_with_threads",
                  "lock_demo", "broken_lock", "Replayer", "RecordedLock")


def forbid_searched_schedule(name: str, cells=None, searches: Iterable[str] = SEARCHES,
                             ) -> None:
    """Fail when the student's cells compute the schedule ``name`` with a search.

    A schedule asked for by hand is data; what computed it is read from the source
    of the student's cells (:func:`~.library.forbid_computed_with`, which says where
    the source comes from: ``cells`` is a stand-in of the same notebook, a list of
    cell sources, or None for the cells the IPython kernel ran). It fails when the
    statements that give the schedule its value reach one of the library's
    ``searches``, or run the lock (``simulate_shared``, ``try_schedule``...) in a loop,
    a function that calls itself or at random: a search of the student's own. Running
    a schedule written by hand (``try_schedule([0, 1, 0, 1]).schedule``) is no search.
    A schedule drawn at random without running the lock, and a lookup by computed
    name, are flagged for review.

    >>> forbid_searched_schedule("mine", ["mine = [0, 1, 0, 1]"])
    >>> cells = ["from collective_lib.shared_memory import explore_interleavings as ei",
    ...          "found = ei(lock_demo, 2, mutual_exclusion, lock=broken_lock)",
    ...          "mine = found.schedule"]
    >>> try:
    ...     forbid_searched_schedule("mine", cells)
    ... except AssertionError as err:
    ...     print(str(err).splitlines()[0])
    mine is computed with the library's `explore_interleavings`;
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    sources = forbid_computed_with(
        name, cells, searches, asks="this part asks for a schedule you find yourself "
        "(try_schedule shows what one does). Write it as a list of PE numbers")
    if sources is None:
        return
    used = static.used_names(sources, name, every=True)
    runs = [run for run in _RUNS_THE_LOCK if run in used]
    repeated = static.repetitions(sources, name)
    if runs and repeated:
        raise CheckFailed(
            f"{name} is found by a search of your own: the statements that give it its "
            f"value run the lock (`{runs[0]}`) and use {' and '.join(repeated)}. Part 1 asks "
            "for a schedule found by reasoning: try_schedule may show what a schedule you "
            "wrote does, but not search for one. Write the schedule as a list of PE "
            "numbers.", "uses_library")
    drawn = [how for how in repeated if how in ("random numbers", "a seed")]
    if drawn:
        flag_for_review(f"{name}: its definition uses {' and '.join(drawn)}; part 1 asks "
                        "for a schedule found by reasoning")


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
    Mine inherits from the library's cas_spin_lock; write acquire()
    and release() yourself.
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    name = _lock_name(lock)
    if is_stand_in(lock):                    # graded in a sandbox: its source is checked
        if getattr(lock, "kind", None) != "class":
            raise CheckFailed(f"{name} must be a class (with acquire and release methods)",
                              "wrong_form")
        forbid_library_calls(lock, forbidden,
                             reason="this exercise asks for your own lock, built from read, "
                                    "write, cas, fetch_add and pause")
    elif not isinstance(lock, type):
        raise CheckFailed(f"{name} must be a class (with acquire and release methods), "
                          f"got {format_value(lock)}", "wrong_form")
    for base in ([] if is_stand_in(lock) else lock.__mro__[1:]):
        if base.__module__.split(".")[0] == "collective_lib":
            raise CheckFailed(f"{name} inherits from the library's {base.__name__}; "
                              "write acquire() and release() yourself.", "uses_library")
    for method in ("acquire", "release"):
        func = getattr(lock, method, None)
        if not callable(func):
            raise CheckFailed(f"{name} has no method {method}()", "wrong_form")
        if in_library(func):
            raise CheckFailed(f"{name}.{method} is the library's own "
                              f"{getattr(func, '__qualname__', method)}; write it yourself.",
                              "uses_library")
        forbid_library_calls(func, forbidden,
                             reason="this exercise asks for your own lock, built from read, "
                                    "write, cas, fetch_add and pause")
    try:
        with quiet(), wall_clock_limit(5.0, f"creating a {name} or calling memory(p) did not "
                                        "finish within 5 s"):
            cells = lock.memory(2)
            mine = lock(0, 2)
            gens = {method: getattr(mine, method)() for method in ("acquire", "release")}
    except WallClockLimitExceeded:
        raise
    except Exception as exc:
        raise CheckFailed(explain_exception(exc, f"{name}(0, 2) and its methods"),
                          "exception") from None
    if not isinstance(cells, dict):
        raise CheckFailed(f"{name}.memory(p) must return a dict {{cell: initial value}}, "
                          f"got {format_value(cells)}", "wrong_form")
    for method, gen in gens.items():
        if not inspect.isgenerator(gen):
            raise CheckFailed(
                f"{name}.{method}() must be a generator: it yields its memory operations "
                f"(e.g. `ok = yield cas(self.cell, 0, 1)`), but it returned "
                f"{format_value(gen)}. Does it contain a `yield`?", "wrong_form")
        gen.close()


def _recorded(lock):
    """``lock`` replayed from a record of its events, for the searches that replay every
    interleaving from the start (see :class:`~collective_lib.shared_memory.RecordedLock`);
    a student's lock in a sandboxed process is asked one event per request."""
    from ..shared_memory import RecordedLock
    return RecordedLock(lock, lock.replayer() if is_stand_in(lock) else None)


def _lock_run_text(name, p, rounds) -> str:
    return (f"{name} with p={p} PE{'s' * (p != 1)}, {rounds} round{'s' * (rounds != 1)} "
            f"each")


def check_lock_progress(lock, ps: Iterable[int], *, rounds: int = 2, hold: float = 0,
                        max_ops: int = 50_000, time_limit_s: float = 10.0,
                        exclusion: bool = True) -> None:
    """Run ``lock_demo`` with ``lock`` in the timed model: everyone finishes, nothing is lost.

    For every p, each PE must get through its ``rounds`` critical sections,
    the shared counter must end at ``p * rounds``, and no two PEs may be in
    the critical section together (with ``exclusion=False`` only the first is
    checked, for a test of progress alone). Under the trusted grader, each PE's lock
    object lives in a process of its own, so PEs that coordinate through
    Python globals instead of the shared memory fail with a message that says so.

    A run is stopped after three times the operations a correct lock needs at most
    (:func:`_lock_ops_needed`, ``p * p * rounds * (60 + hold)``; at most ``max_ops``): a
    PE waits forever when nobody wrote to shared memory in the last half of them, and
    otherwise the PEs livelock or wait far too long, which the message says.

    >>> from collective_lib.algorithms.sync import cas_spin_lock
    >>> check_lock_progress(cas_spin_lock, [1, 2, 3])
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    name = _lock_name(lock)
    with wall_clock_limit(time_limit_s, (
            f"{name} did not finish within {time_limit_s:g} s of real time. Is there a "
            "loop in acquire() or release() that never yields an operation (such as "
            "`while True: pass`)?")):
        for p in ps:
            budget = min(max_ops, _TIMED_OPS_FACTOR * _lock_ops_needed(p, rounds, hold))
            if not is_stand_in(lock):
                _check_lock_run(lock, name, p, rounds, hold, budget, exclusion)
                continue
            with isolated(lock) as apart:
                try:
                    _check_lock_run(apart, name, p, rounds, hold, budget)
                    continue
                except WallClockLimitExceeded:
                    raise
                except AssertionError as failure:
                    apart_failure = failure
            try:
                _check_lock_run(lock, name, p, rounds, hold, budget)
            except AssertionError:
                # wrong in one process too: this cell judges only its own property
                _check_lock_run(lock, name, p, rounds, hold, budget, exclusion)
                continue
            raise CheckFailed(
                f"{_lock_run_text(name, p, rounds)}: the lock works only while all PEs "
                f"share one Python process; with each PE's {name} in its own process: "
                f"{apart_failure}\nA PE knows only the shared memory cells and its own "
                "object; PEs must not share Python globals.", "shared_state")


def _check_lock_run(lock, name, p, rounds, hold, max_ops, exclusion=True) -> None:
    """One timed run of ``lock_demo`` on ``p`` PEs; an AssertionError saying what went wrong."""
    from ..algorithms.sync import lock_demo
    from ..shared_memory import exclusion_violation, simulate_shared
    what = _lock_run_text(name, p, rounds)
    try:
        with quiet():
            run = simulate_shared(lock_demo, p, lock=lock, rounds=rounds, hold=hold,
                                  max_ops=max_ops)
    except OperationLimitError as exc:
        if getattr(exc, "since_write", max_ops) >= max_ops // 2:    # nothing changed
            raise CheckFailed(no_progress_text(f"{what},", str(exc)), "no_progress") from None
        raise CheckFailed(too_slow_text(what, max_ops, _TIMED_OPS_FACTOR, str(exc)),
                       "no_progress") from None
    except WallClockLimitExceeded:
        raise
    except Exception as exc:
        raise CheckFailed(explain_exception(exc, what), "exception") from None
    if not exclusion:
        return
    bad = exclusion_violation(run.trace)
    if bad is not None:
        index = run.trace.index(bad)
        raise CheckFailed(
            f"{what}:\nPE {bad.pe} entered the critical section at time {bad.time:g} "
            f"while {inside_text(run.trace, index)}.\n"
            f"{trace_excerpt(run.trace, index)}"
            + ("\n" + no_operation_hint(run.trace, index)
               if no_operation_hint(run.trace, index) else ""), "lock_exclusion")
    counter = run.memory.get("counter")
    if counter != p * rounds:
        raise CheckFailed(f"{what}: the shared counter ended at {counter!r} instead "
                          f"of {p * rounds}: increments were lost.", "lock_exclusion")


def check_lock_exclusion(lock, ps: Iterable[int], *, seeds=range(100), rounds: int = 2,
                         max_ops: int = 20_000, time_limit_s: float = 20.0,
                         progress: bool = True) -> None:
    """Random interleavings: no two PEs in the critical section, and everyone gets through.

    Runs :func:`~collective_lib.shared_memory.find_violation` on ``lock_demo``
    for every p in ``ps``; a failure shows the seed, the shortest failing
    beginning of the interleaving, and its trace. With ``progress=False`` only
    exclusion is judged (a run in which PEs wait forever is checked as far as
    it went), for a test of exclusion alone; then the lock must let some PE through
    (PE 0 alone, or one of two PEs), since a lock that lets nobody in keeps the PEs
    apart only trivially.

    Random interleavings seldom leave one PE alone for long, so for every p one
    PE then takes the lock and keeps it, and the others try 1000 steps each:
    none may enter (a lock that gives up waiting after some tries fails here). It then
    lets go, and every interleaving of the next steps and random interleavings of more
    rounds (five each with two PEs) must keep the PEs apart (a lock that takes the lock
    without an atomic step after some tries, or the third time it finds the lock free
    after a long wait, fails there).

    >>> from collective_lib.algorithms.sync import broken_lock, cas_spin_lock
    >>> check_lock_exclusion(cas_spin_lock, [2, 3], seeds=range(20))
    >>> try:
    ...     check_lock_exclusion(broken_lock, [2], seeds=range(20))
    ... except AssertionError as err:
    ...     lines = str(err).splitlines()
    >>> lines[0]
    'broken_lock with p=2 PEs, 2 rounds each:'
    >>> lines[1]
    'under the interleaving of seed 1, PE 0 enters the critical section while PE 1 is'
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    from ..algorithms.sync import lock_demo
    from ..shared_memory import exclusion_violation, find_violation, mutual_exclusion
    name = _lock_name(lock)
    if not progress:            # judged alone, exclusion counts only if PEs get through
        _check_someone_enters(lock, name, time_limit_s)
    with wall_clock_limit(time_limit_s, (
            f"checking {name} on random interleavings took more than "
            f"{time_limit_s:g} s of real time. Is there a loop in acquire() or "
            "release() that never yields an operation?")):
        for p in ps:
            what = _lock_run_text(name, p, rounds)
            recorded = _recorded(lock)
            try:
                with quiet():
                    found = find_violation(lock_demo, p, mutual_exclusion, seeds=seeds,
                                           max_ops=min(max_ops, _REMOTE_LOCK_OPS)
                                           if is_stand_in(lock) else max_ops,
                                           lock=recorded, rounds=rounds,
                                           progress=progress)
            except WallClockLimitExceeded:
                raise
            except Exception as exc:
                raise CheckFailed(explain_exception(exc, what), "exception") from None
            if found is None:
                _check_lock_held(lock, name, p, recorded=recorded)
                continue
            if found.reason.startswith("no progress"):
                raise CheckFailed(no_progress_text(
                    f"{what}, under the interleaving of seed {found.seed},", found.reason),
                    "no_progress")
            raise CheckFailed(exclusion_text(
                what, f"the interleaving of seed {found.seed}", found,
                exclusion_violation), "lock_exclusion")


def _stays_inside(me, p, data, lock, objects):
    """The first PE through ``lock``'s acquire() enters the critical section and stays
    there (it returns without leaving or releasing); every other PE tries to acquire.
    ``objects`` gets each PE's lock object, for :func:`_after_hold`."""
    from ..shared_memory import enter
    mine = objects[me] = lock(me, p)
    yield from mine.acquire()
    yield enter("cs")


def _after_hold(me, p, data, lock, objects, rounds):
    """Each PE goes on from where :func:`_stays_inside` left its lock object (a
    :class:`~collective_lib.shared_memory.RecordedLock`'s): the holder, inside, and the
    others, in the middle of acquire(), each finish ``rounds`` rounds of ``lock_demo``."""
    from ..shared_memory import enter, leave, read, write
    mine, acquiring = lock.resumed(objects[me])
    yield from acquiring
    for r in range(rounds):
        if r:
            yield from mine.acquire()
        yield enter("cs")
        value = yield read("counter")
        yield write("counter", value + 1)
        yield leave("cs")
        yield from mine.release()


#: After the long hold the holder lets go, and each PE does rounds from there, about
#: _AFTER_HOLD_ACQUIRES in all (five each with two PEs, two each with five): every
#: interleaving of the next _AFTER_HOLD_STEPS steps (as far as _AFTER_HOLD_STATES states
#: allow) and _AFTER_HOLD_SEEDS random interleavings of whole runs (a third as many with
#: three PEs or more, whose replays cost more) must keep the PEs apart.
#: Each of them replays the waiting PEs' lock objects through their whole wait (a student's
#: object, in a sandboxed process, cannot be copied), so they are few: one flaw shows after
#: a few steps. The rounds are the bound of the check: with two PEs the one that waited
#: long acquires the lock five more times, so a lock that cheats only from the sixth time
#: after a long wait (counting the times it finds the lock free, say) passes.
_AFTER_HOLD_STEPS = 10
_AFTER_HOLD_STATES = 300
_AFTER_HOLD_SEEDS = 10
_AFTER_HOLD_ACQUIRES = 10
_ROUND_WORDS = {2: "two", 3: "three", 4: "four", 5: "five"}


def _after_hold_seeds(p: int) -> int:
    """How many random interleavings :func:`_check_after_hold` tries with ``p`` PEs."""
    return _AFTER_HOLD_SEEDS if p <= 2 else -(-_AFTER_HOLD_SEEDS // 3)


def _check_lock_held(lock, name: str, p: int, steps: int = _HELD_STEPS,
                     recorded=None) -> str:
    """One PE holds the lock; the others, taking turns, try ``steps`` steps each and must
    never enter: no interleaving search parks a PE that long, and random interleavings
    seldom leave one PE so long alone (a lock that counts its tries and then enters
    anyway passes both). The holder then lets go, and the interleavings of more rounds
    from there (five each with two PEs) must keep the PEs apart too (a lock that
    counts its tries, or the times it found the lock free, and then takes the lock without
    an atomic step lets two in only once the lock is free). Returns
    what was checked, for a message to say (None if nobody took the lock).
    ``recorded`` is ``lock`` as a :class:`~collective_lib.shared_memory.RecordedLock`
    (made here if None)."""
    from ..shared_memory import exclusion_violation, simulate_shared
    limit = steps * p
    what = f"{name} with p={p} PEs"
    recorded = _recorded(lock) if recorded is None else recorded
    objects = {}
    try:
        with quiet():
            run = simulate_shared(_stays_inside, p, lock=recorded, objects=objects,
                                  schedule=[], memory=lambda p, **_: recorded.memory(p),
                                  stop_after=limit, max_ops=limit + 1)
    except WallClockLimitExceeded:
        raise
    except Exception as exc:
        raise CheckFailed(explain_exception(exc, f"{what}, one PE holding the lock"),
                          "exception") from None
    bad = exclusion_violation(run.trace)
    first = next((i for i, e in enumerate(run.trace) if e.op == "enter"), None)
    if bad is None:
        if first is None or len(objects) < p:     # nobody got in: nothing to let go of
            return None
        holder = run.trace[first].pe
        others = "the other" if p == 2 else "the others"
        held = f"PE {holder} held the lock while {others} tried {steps} steps"
        return held + ", and then " + _check_after_hold(recorded, what, p, steps, run,
                                                         objects, holder)
    index = run.trace.index(bad)
    holder = run.trace[first].pe
    from ..shared_memory import format_trace
    shown = format_trace(run.trace, 0, first + 1)
    tail = max(first + 1, index + 1 - _HELD_TAIL)
    if tail > first + 1:
        shown += f"\n     ...  ({tail - first - 1} entries are left out)"
    shown += "\n" + format_trace(run.trace, tail, index + 1).split("\n", 1)[1]
    raise CheckFailed(
        f"{what}:\nPE {holder} took the lock and stayed in the critical section; the "
        f"others kept trying ({steps} steps each, taking turns), and PE {bad.pe} "
        f"entered after {bad.time} steps while {inside_text(run.trace, index)}.\n"
        f"{shown}\n" + (no_operation_hint(run.trace, index) or
        "Hint: a PE must wait as long as the lock is taken, however long that is. "
        "Does acquire() stop trying after some number of tries?"), "lock_exclusion")


def _check_after_hold(recorded, what, p, steps, held, objects, holder) -> str:
    """The interleavings after the hold of :func:`_check_lock_held`: ``held`` is its run,
    ``objects`` the PEs' lock objects where it left them."""
    from ..shared_memory import (exclusion_violation, explore_interleavings, find_violation,
                                 mutual_exclusion)
    count = max(2, -(-_AFTER_HOLD_ACQUIRES // p))       # ten acquires in all, two each
    rounds = _ROUND_WORDS.get(count, str(count))
    after = dict(lock=recorded, objects=objects, rounds=count,
                 memory={**held.memory, "counter": 0})
    depth = f"every interleaving of the next {_AFTER_HOLD_STEPS} steps"
    try:
        with quiet():
            try:
                found = explore_interleavings(
                    _after_hold, p, mutual_exclusion, max_steps=_AFTER_HOLD_STEPS,
                    max_runs=_AFTER_HOLD_STATES, livelock=False, **after)
            except OperationLimitError as exc:      # too many states, none of them wrong
                found, depth = None, f"every interleaving of the next {exc.covered} steps"
            origin = "the shortest interleaving that breaks it"
            if found is None:
                budget = 200 * p * count
                found = find_violation(_after_hold, p, mutual_exclusion,
                                       seeds=range(_after_hold_seeds(p)), max_ops=budget,
                                       progress=False, **after)
                origin = f"the random interleaving of seed {getattr(found, 'seed', None)}"
    except (WallClockLimitExceeded, OperationLimitError):
        raise
    except Exception as exc:
        raise CheckFailed(explain_exception(exc, f"{what}, after one PE held the lock"),
                       "exception") from None
    others = "the other" if p == 2 else "the others"
    if found is None:
        return (f"{depth} and {_after_hold_seeds(p)} random interleavings of {rounds} "
                "rounds")
    bad = exclusion_violation(found.run.trace)
    index = found.run.trace.index(bad)
    raise CheckFailed(
        f"{what}:\nPE {holder} took the lock and stayed in the critical section while "
        f"{others} kept trying ({steps} steps each, taking turns). None entered, but "
        f"then PE {holder} went on (it left and released the lock), every PE did {rounds} "
        f"rounds from there, and under {origin}, PE {bad.pe} enters the critical section "
        f"while {inside_text(found.run.trace, index)}. Its steps after the long wait, "
        f"counted from 0 again:\nschedule {schedule_text(found.schedule)}\n"
        f"{trace_excerpt(found.run.trace, index)}\n"
        "Hint: a PE must wait as long as the lock is taken, however long that is, and "
        "take it with one atomic step (cas or fetch_add) however long it waited. Does "
        "acquire() take the lock another way after some number of tries?",
        "lock_exclusion")


#: Random interleavings of whole runs that the check of every interleaving adds when the
#: interleavings are too many to check them all.
_FALLBACK_SEEDS = 500


def _searched(what: str, time_limit_s: float, search: Callable, *args, **kwargs):
    """``search(*args, **kwargs)`` within the time limit, silenced; the lock's exception
    becomes a failure that explains it."""
    try:
        with quiet(), wall_clock_limit(time_limit_s, (
                f"checking the interleavings of {what} took more than {time_limit_s:g} s "
                "of real time. Is there a loop in acquire() or release() that never "
                "yields an operation?")):
            return search(*args, **kwargs)
    except (WallClockLimitExceeded, OperationLimitError):
        raise
    except Exception as exc:
        raise CheckFailed(explain_exception(exc, what), "exception") from None


def check_lock_exhaustive(lock, p: int = 2, *, rounds: int = 2, max_steps: int = 40,
                          max_runs: int = 30_000, time_limit_s: float = 30.0,
                          progress: bool = True, exclusion: bool = True) -> str:
    """Every interleaving of a tiny case: exclusion always holds and no PE waits forever.

    Runs :func:`~collective_lib.shared_memory.explore_interleavings` on
    ``lock_demo`` with ``p`` PEs; a failure shows the shortest failing
    interleaving. With ``progress=False`` only exclusion is judged, with
    ``exclusion=False`` only progress. A lock must let some PE through
    (:func:`check_lock_exclusion`): one that lets nobody in keeps the PEs apart only
    trivially.

    The search skips a PE that repeats the same poll (it assumes the PE would go on
    doing the same), and stops at ``max_steps``: a lock that counts its tries and then
    does something else would pass it. So, as in :func:`check_lock_exclusion`, one PE
    then keeps the lock while the others try 1000 steps each, and none may enter; it
    then lets go, and the interleavings of five more rounds each from there must keep the
    PEs apart too. PEs whose waiting changes memory never look parked, so
    :func:`~collective_lib.shared_memory.find_livelock` looks for steps they can repeat
    forever without anyone entering.

    A lock whose every poll changes memory (``fetch_add``) has no end of states: when
    the search runs out of its ``max_runs`` states without a flaw, the lock is not
    failed for it; the first steps of every interleaving (as many as were checked)
    and 500 random interleavings of whole runs are judged instead. Returns what was
    checked, and what the search assumed, for the cell to say.

    >>> from collective_lib.algorithms.sync import broken_lock, cas_spin_lock
    >>> print(check_lock_exhaustive(cas_spin_lock, rounds=1))
    every interleaving keeps the PEs apart, and both finish, if a PE
    that polls an unchanged cell again would go on doing so until memory changes
    (the search skips such polls). Also, PE 0 held the lock while the other tried
    1000 steps, and then every interleaving of the next 10 steps and 10 random
    interleavings of five rounds kept the PEs apart.
    >>> print(check_lock_exhaustive(broken_lock, rounds=1, exclusion=False))
    every interleaving lets both finish, if a PE that polls an
    unchanged cell again would go on doing so until memory changes (the search skips
    such polls).
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    from ..algorithms.sync import lock_demo
    from ..shared_memory import (exclusion_violation, explore_interleavings, find_livelock,
                                 find_violation, mutual_exclusion)
    name = _lock_name(lock)
    what = _lock_run_text(name, p, rounds)
    _check_someone_enters(lock, name, time_limit_s)
    recorded = _recorded(lock)
    check = mutual_exclusion if exclusion else (lambda run: True)
    covered, stats = None, {}
    try:
        found = _searched(what, time_limit_s, explore_interleavings, lock_demo, p,
                          check, max_steps=max_steps, max_runs=max_runs,
                          lock=recorded, livelock=progress, rounds=rounds, stats=stats)
    except OperationLimitError as exc:         # too many states, none of them wrong
        found, covered = None, getattr(exc, "covered", 0)
    if found is None and progress:
        found = _searched(what, time_limit_s, find_livelock, lock_demo, p,
                          max_runs=max_runs, lock=recorded, rounds=rounds)
    origin = "the shortest interleaving that breaks it"
    if found is None and covered is not None:
        budget = min(_REMOTE_LOCK_OPS, 20_000) if is_stand_in(lock) else 20_000
        found = _searched(what, time_limit_s, find_violation, lock_demo, p,
                          check, seeds=range(_FALLBACK_SEEDS), max_ops=budget,
                          lock=recorded, rounds=rounds, progress=progress)
        origin = f"the random interleaving of seed {getattr(found, 'seed', None)}"
    if found is None:
        after = None
        if exclusion:
            with quiet(), wall_clock_limit(time_limit_s, (
                    f"checking {what} with one PE holding the lock took more than "
                    f"{time_limit_s:g} s of real time. Is there a loop in acquire() that "
                    "never yields an operation?")):
                after = _check_lock_held(lock, name, p, recorded=recorded)
        return _exhaustive_text(p, exclusion, progress, max_steps, max_runs, covered,
                                stats, after)
    if found.cycle:
        raise CheckFailed(livelock_text(what, found), "no_progress")
    if found.reason.startswith("no progress"):
        raise CheckFailed(no_progress_text(f"{what}, under {origin},", found.reason),
                       "no_progress")
    if found.reason.startswith("livelock"):
        raise CheckFailed(no_progress_text(
            f"{what}, under the interleaving {schedule_text(found.schedule)},",
            found.reason.replace("livelock: ", "").replace("; PE", "\nPE")), "no_progress")
    raise CheckFailed(exclusion_text(what, origin, found, exclusion_violation),
                   "lock_exclusion")


def _exhaustive_text(p, exclusion, progress, max_steps, max_runs, covered, stats,
                     after) -> str:
    """What :func:`check_lock_exhaustive` checked, and what its search assumed; ``after``
    is what :func:`_check_lock_held` checked (None if not run)."""
    both = "both" if p == 2 else "all"
    claim = ", ".join(["keeps the PEs apart"] * exclusion +
                      [f"and {both} finish" if exclusion else f"lets {both} finish"] *
                      progress)
    if covered is not None:
        held = ", one PE holding the lock for long and then letting go" * bool(after)
        return wrapped(
            f"too many interleavings to check them all (more than {max_runs} states), so "
            f"these were checked: every interleaving of the first {covered} steps, "
            f"{_FALLBACK_SEEDS} random interleavings of whole runs{held}"
            f"{' and a search for livelocks' * progress}. They "
            f"{claim.replace('keeps', 'keep').replace('lets', 'let')}.")
    text = f"every interleaving{f' of up to {max_steps} steps' * stats['cut']} {claim}"
    if stats["parked"]:
        text += (", if a PE that polls an unchanged cell again would go on doing so until "
                 "memory changes (the search skips such polls)")
    if after and (stats["parked"] or stats["cut"]):
        text += f". Also, {after} kept the PEs apart"
    return wrapped(text + "." * (stats["parked"] or bool(after and stats["cut"])))


def _check_someone_enters(lock, name: str, time_limit_s: float = 10.0,
                          steps: int = _HELD_STEPS) -> None:
    """Some PE gets through a round: PE 0 alone, or one of two PEs (round robin and three
    random interleavings). A lock that lets nobody in keeps the PEs apart, trivially: the
    checks of mutual exclusion credit only a lock that lets PEs through (the check of
    progress charges the waiting)."""
    from ..algorithms.sync import lock_demo
    from ..shared_memory import simulate_shared
    tries = [(1, None), (2, None), (2, 0), (2, 1), (2, 2)]
    try:
        with quiet(), wall_clock_limit(time_limit_s, (
                f"checking whether {name} lets a PE in took more than {time_limit_s:g} s "
                "of real time. Is there a loop in acquire() or release() that never yields "
                "an operation?")):
            for p, seed in tries:
                run = simulate_shared(lock_demo, p, lock=lock, rounds=1, seed=seed,
                                      schedule=[] if seed is None else None,
                                      stop_after=steps * p, max_ops=steps * p + 1)
                if any(e.op == "leave" for e in run.trace):
                    return
    except WallClockLimitExceeded:
        raise
    except Exception as exc:
        raise CheckFailed(explain_exception(exc, f"{name} with p={p} PE{'s' * (p > 1)}, 1 round "
                                              "each"), "exception") from None
    raise CheckFailed(
        f"{name} lets no PE into the critical section: with p=1 PE, PE 0 did not get "
        f"through one round in {steps} steps, and with p=2 PEs neither did (round robin "
        f"and {len(tries) - 2} random interleavings, {2 * steps} steps each). Such a lock "
        "keeps the PEs apart only because it lets nobody in: mutual exclusion counts only "
        "for a lock that lets PEs through.\nHint: does acquire() return once the PE has "
        "taken the lock?", "no_entry")
