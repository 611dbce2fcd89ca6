"""Three ways to run a shared-memory program: timed, interleaved, on threads.

``simulate_shared(program, p)``
    Timed and deterministic: the PEs run in order of virtual time and every
    operation costs what the :class:`~collective_lib.shared_memory.CoherenceModel`
    says.
``simulate_shared(program, p, seed=s)``
    A seeded random interleaving: at every step one PE, chosen at random among
    those that have not returned, performs its next operation.  Time then
    counts steps.  ``schedule=[pe, pe, ...]`` replays an exact interleaving
    (every run records its own in ``run.schedule``).
:func:`run_with_threads`
    Real Python threads, one per PE, with a lock that makes each memory
    operation atomic: a correctness demonstration, not a timing one.

The interleaving engine is also what the model checker of
:mod:`collective_lib.shared_memory.checking` replays.
"""
from __future__ import annotations

import heapq
import threading
import time as _time
from numbers import Integral
from typing import Callable

from ..simulator import schedule_resume, start_programs
from ..validate import check_positive_int
from ._engine import Machine, advance, run_interleaved
from .machine import DEFAULT_MODEL, CoherenceModel, SharedRun
from .ops import Marker, declared_memory

__all__ = ["simulate_shared", "run_with_threads", "DEFAULT_MAX_OPS"]

DEFAULT_MAX_OPS = 1_000_000


# -- starting the PEs -----------------------------------------------------------------

# -- the timed engine -----------------------------------------------------------------

def _run_timed(gens, machine, p, model, max_ops):
    """Time-ordered execution: resume events in buckets, one per distinct time."""
    buckets = {0: list(range(p))}
    times = [0]
    heappop = heapq.heappop
    resume = [None] * p
    pending = {}
    finish = [None] * p
    results = [None] * p
    apply = machine.apply
    ops = 0
    now = 0
    while times:
        now = heappop(times)
        bucket = buckets[now]
        i = 0
        while i < len(bucket):            # the bucket may grow while it runs
            pe = bucket[i]
            i += 1
            value = resume[pe]
            resume[pe] = None
            op, done, result = advance(gens[pe], value, pe, machine, now, p)
            if done:
                finish[pe] = now
                results[pe] = result
                pending.pop(pe, None)
                continue
            ops += 1
            if ops > max_ops:
                pending[pe] = op
                raise machine.limit_error(max_ops, pending, f"PE {pe} at time {now:g}")
            pending[pe] = op
            try:
                resume[pe], end = apply(pe, op, now)
            except (ValueError, TypeError) as exc:
                exc.add_note(f"raised for PE {pe} of {p} at time {now:g}")
                raise
            schedule_resume(buckets, times, pe, end)
        del buckets[now]
    return machine.run_record(results, finish, max(finish), p, model, "timed", None, True)


# -- the public runners ---------------------------------------------------------------

def simulate_shared(program: Callable, p: int, inputs=None, *, memory=None,
                    model: CoherenceModel | None = None, seed: int | None = None,
                    schedule=None, max_ops: int = DEFAULT_MAX_OPS, trace: bool = True,
                    line_of: Callable | None = None, stop_after: int | None = None,
                    **params) -> SharedRun:
    """Run the shared-memory SPMD ``program`` on ``p`` PEs and return a :class:`SharedRun`.

    Parameters
    ----------
    program : generator function
        ``program(me, p, data, **params)``; it yields :func:`read`,
        :func:`write`, :func:`cas`, :func:`fetch_add`, :func:`pause` and markers.
    p : int
        Number of PEs.
    inputs : list of length p, callable, or None
        PE ``i`` gets ``inputs[i]`` (or ``inputs(i)``) as ``data``.
    memory : dict or callable, optional
        ``{cell: initial value}``, or ``memory(p, **params) -> dict``.  By
        default the layout attached to the program with :func:`uses_memory`.
    model : CoherenceModel, optional
        Costs in the timed mode (default ``CoherenceModel()``).
    seed : int, optional
        Run a seeded random interleaving instead of the timed execution.
    schedule : list of int, optional
        Replay an interleaving: the PE to perform each operation, in order.
        When it runs out, the run continues with ``seed``'s random choices if a
        seed is given, else round robin.
    max_ops : int
        Raise :class:`OperationLimitError` after this many operations; the
        message names every PE that has not returned and what it spins on.
    trace : bool
        Record the trace (switch off for large timed runs).
    line_of : callable, optional
        ``line_of(cell) -> line``: cells with the same line share a cache line
        (default: every cell has its own line; see :func:`packed_lines`).
    stop_after : int, optional
        Interleaving modes only: stop after this many operations and return
        the partial run (``complete=False``).
    **params
        Passed to every PE's program (and to a callable ``memory``).

    Examples
    --------
    >>> from collective_lib.shared_memory import fetch_add
    >>> def count(me, p, data):
    ...     old = yield fetch_add("c", 1)
    ...     return old
    >>> run = simulate_shared(count, 3, memory={"c": 0})
    >>> run.results, run.memory, run.time
    ([0, 1, 2], {'c': 3}, 50)

    The three increments hit one line: a miss (10) and two contended
    accesses (20 each), served one after the other.  A seeded interleaving
    counts steps instead, and can be replayed:

    >>> run = simulate_shared(count, 3, memory={"c": 0}, seed=1)
    >>> replay = simulate_shared(count, 3, memory={"c": 0}, schedule=run.schedule)
    >>> replay.results == run.results, run.time
    (True, 3)
    """
    check_positive_int("p", p)
    check_positive_int("max_ops", max_ops)
    model = DEFAULT_MODEL if model is None else model
    if not isinstance(model, CoherenceModel):
        raise TypeError(f"model must be a CoherenceModel, got {model!r}")
    if seed is not None and (not isinstance(seed, Integral) or isinstance(seed, bool)):
        raise ValueError(f"seed must be an integer or None, got {seed!r}")
    if schedule is not None:
        schedule = list(schedule)
        for pe in schedule:
            if not isinstance(pe, Integral) or isinstance(pe, bool) or not 0 <= pe < p:
                raise ValueError(f"a schedule lists ranks in 0..{p - 1}, got {pe!r}")
    cells = declared_memory(program, p, memory, params)
    machine = Machine(p, cells, model, line_of, trace)
    gens = start_programs(program, p, inputs, params)
    if seed is None and schedule is None:
        if stop_after is not None:
            raise ValueError("stop_after applies to interleavings: give a seed or a schedule")
        return _run_timed(gens, machine, p, model, max_ops)
    return run_interleaved(gens, machine, p, model, max_ops, seed, schedule, stop_after)


def run_with_threads(program: Callable, p: int, inputs=None, *, memory=None,
                     timeout: float = 10.0, max_ops: int = DEFAULT_MAX_OPS,
                     trace: bool = True, **params) -> SharedRun:
    """Run the same program on ``p`` real Python threads, one per PE.

    A single ``threading.Lock`` guards the memory, so every read, write, CAS
    and fetch-and-add is atomic, and the trace lists them (with the markers)
    in the order they happened.  ``pause`` yields the processor
    (``time.sleep(0)``); so does every memory operation, which makes threads
    interleave often.  This shows that the programs are correct under a real
    scheduler; it says nothing about their speed.  ``time`` fields count
    operations.

    Raises :class:`OperationLimitError` after ``max_ops`` operations and
    TimeoutError if the threads are not done after ``timeout`` seconds; an
    exception in a PE is re-raised here with a note naming the PE.  Threads
    print nothing.

    >>> from collective_lib.shared_memory import fetch_add
    >>> def count(me, p, data):
    ...     return (yield fetch_add("c", 1))
    >>> sorted(run_with_threads(count, 4, memory={"c": 0}).results)
    [0, 1, 2, 3]
    """
    check_positive_int("p", p)
    check_positive_int("max_ops", max_ops)
    cells = declared_memory(program, p, memory, params)
    machine = Machine(p, cells, DEFAULT_MODEL, None, trace)
    gens = start_programs(program, p, inputs, params)
    guard = threading.Lock()
    stop = threading.Event()
    results = [None] * p
    finish = [None] * p
    errors = {}
    counter = [0]
    pending = {}

    class _Stopped(Exception):
        pass

    def body(pe):
        gen, value = gens[pe], None
        try:
            while True:
                if stop.is_set():
                    raise _Stopped
                op = gen.send(value)
                value = None
                with guard:
                    if type(op) is Marker:
                        machine.mark(pe, op, counter[0])
                        continue
                    if counter[0] >= max_ops:
                        pending[pe] = op
                        raise _Stopped
                    value, _ = machine.apply(pe, op, counter[0])
                    counter[0] += 1
                _time.sleep(0)               # let the other threads run
        except StopIteration as done:
            with guard:
                results[pe] = done.value
                finish[pe] = counter[0]
                pending.pop(pe, None)
        except _Stopped:
            stop.set()
        except BaseException as exc:        # reported by the main thread, not printed
            errors[pe] = exc
            stop.set()
        finally:
            gen.close()

    threads = [threading.Thread(target=body, args=(pe,), name=f"PE {pe}", daemon=True)
               for pe in range(p)]
    for t in threads:
        t.start()
    deadline = _time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, deadline - _time.monotonic()))
    late = [pe for pe, t in enumerate(threads) if t.is_alive()]
    if late:
        stop.set()
        for t in threads:
            t.join(1.0)
    if errors:
        pe = min(errors)
        exc = errors[pe]
        exc.add_note(f"raised by PE {pe} of {p} (thread)")
        raise exc
    if late:
        lines = [f"  PE {pe}: " + (machine.spinning(pe) or "still running") for pe in late]
        raise TimeoutError(f"{len(late)} thread(s) had not returned after {timeout:g} s:\n"
                           + "\n".join(lines))
    unfinished = [pe for pe in range(p) if finish[pe] is None]
    if unfinished:
        for pe in unfinished:
            pending.setdefault(pe, "?")
        raise machine.limit_error(max_ops, {pe: pending[pe] for pe in unfinished}, "threads")
    return machine.run_record(results, finish, counter[0], p, None, "threads", None, True)
