"""A shared-memory machine for SPMD programs that yield memory operations.

This is the shared-memory sibling of :mod:`collective_lib.simulator`.  A
program is again a generator function ``program(me, p, data, **params)``, one
instance per PE, but what it yields are operations on named memory cells:

* :func:`read`, :func:`write`, :func:`cas` (compare-and-swap; the result is
  True or False) and :func:`fetch_add` (the result is the old value), each
  atomic;
* :func:`pause` for local work or back-off;
* the markers :func:`enter`, :func:`leave` and :func:`note`, which cost
  nothing and only put an event into the trace, so that properties such as
  mutual exclusion can be checked afterwards.

Cells are declared up front with their initial values, as a dict whose keys
are names (``"lock"``) or ``(name, index)`` pairs (``("readyEpoch", 3)``);
:func:`cell_array` builds the pairs for an array.  Touching an undeclared cell
raises ValueError naming it.

Three ways to run a program
---------------------------
``simulate_shared(program, p)``
    Timed and deterministic: the PEs run in order of virtual time and every
    operation costs what the :class:`CoherenceModel` says.
``simulate_shared(program, p, seed=s)``
    A seeded random interleaving: at every step one PE, chosen at random among
    those that have not returned, performs its next operation.  Time then
    counts steps.  ``schedule=[pe, pe, ...]`` replays an exact interleaving
    (every run records its own in ``run.schedule``).
:func:`run_with_threads`
    Real Python threads, one per PE, with a lock that makes each memory
    operation atomic: a correctness demonstration, not a timing one.

:func:`find_violation` runs many seeded interleavings and returns the first
one (its schedule and a readable trace) that breaks a property;
:func:`explore_interleavings` tries *every* interleaving of a tiny case.

The cost model
--------------
Cells live in cache lines (one line per cell unless ``line_of`` groups them).
A line is valid in a set of caches, as in a simple MSI protocol:

* a read by a PE whose cache holds the line is a ``hit``;
* any other read is a ``miss``: the line is fetched and the reader joins the
  holders;
* a write, CAS or fetch-and-add leaves only the writer holding the line.  It
  costs ``hit`` when the writer already is the only holder, ``miss`` when no
  other cache holds the line, and ``contended`` when other copies must be
  invalidated;
* misses and contended accesses to one line are served one at a time (the
  line's home is busy until the previous one finished); hits are local.

So spinning on an unchanged cached value is cheap, a line that many PEs write
is expensive, and two cells that share a line interfere (false sharing).
Every operation takes effect at the moment it is issued; the PE resumes when
it completes.
"""
from __future__ import annotations

import heapq
import random
import threading
import time as _time
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any, Callable, Hashable, NamedTuple

from ..errors import OperationLimitError
from ..simulator import schedule_resume, start_programs

__all__ = [
    "Read", "Write", "CAS", "FetchAdd", "Pause", "Marker",
    "read", "write", "cas", "fetch_add", "pause", "enter", "leave", "note",
    "cell_array", "packed_lines", "uses_memory",
    "CoherenceModel", "Event", "SharedRun", "Violation",
    "simulate_shared", "run_with_threads", "find_violation", "explore_interleavings",
    "format_trace", "exclusion_violation", "mutual_exclusion",
]

DEFAULT_MAX_OPS = 1_000_000


# -- operations -----------------------------------------------------------------------

class Read(NamedTuple):
    """Read ``cell``; the result is its value."""
    cell: Hashable


class Write(NamedTuple):
    """Store ``value`` in ``cell``; the result is ``None``."""
    cell: Hashable
    value: Any


class CAS(NamedTuple):
    """If ``cell`` holds ``expected``, store ``new``; the result says whether it did."""
    cell: Hashable
    expected: Any
    new: Any


class FetchAdd(NamedTuple):
    """Add ``delta`` to ``cell``; the result is the value before the addition."""
    cell: Hashable
    delta: Any


class Pause(NamedTuple):
    """Local work or back-off lasting ``time`` units; the result is ``None``."""
    time: float


class Marker(NamedTuple):
    """A zero-cost event in the trace: ``kind`` is "enter", "leave" or "note"."""
    kind: str
    label: Any
    value: Any


def read(cell) -> Read:
    """Read a cell; the PE is resumed with its value."""
    return Read(cell)


def write(cell, value) -> Write:
    """Write ``value`` into a cell."""
    return Write(cell, value)


def cas(cell, expected, new) -> CAS:
    """Compare-and-swap: atomically replace ``expected`` by ``new``; True if it did."""
    return CAS(cell, expected, new)


def fetch_add(cell, delta=1) -> FetchAdd:
    """Atomically add ``delta`` to a cell; the PE is resumed with the old value."""
    return FetchAdd(cell, delta)


def pause(time: float = 1) -> Pause:
    """Spend ``time`` units on local work (the back-off of a spin loop, or computation)."""
    if not isinstance(time, Real) or isinstance(time, bool) or time < 0:
        raise ValueError(f"pause time must be a non-negative number, got {time!r}")
    return Pause(time)


def enter(section: str = "cs") -> Marker:
    """Mark that the PE enters the critical section ``section`` (costs nothing)."""
    return Marker("enter", section, None)


def leave(section: str = "cs") -> Marker:
    """Mark that the PE leaves the critical section ``section`` (costs nothing)."""
    return Marker("leave", section, None)


def note(label: str, value: Any = None) -> Marker:
    """Put ``(label, value)`` into the trace (costs nothing), e.g. ``note("arrive", epoch)``."""
    return Marker("note", label, value)


# -- memory layout --------------------------------------------------------------------

def cell_array(name: str, n: int, initial: Any = 0) -> dict:
    """Declarations for an array of ``n`` cells ``(name, 0) .. (name, n-1)``.

    >>> cell_array("readyEpoch", 3)
    {('readyEpoch', 0): 0, ('readyEpoch', 1): 0, ('readyEpoch', 2): 0}
    """
    if not isinstance(n, Integral) or n < 0:
        raise ValueError(f"an array needs a non-negative length, got {n!r}")
    return {(name, i): initial for i in range(n)}


def packed_lines(per_line: int) -> Callable:
    """A ``line_of`` that packs arrays densely: ``per_line`` consecutive cells share a line.

    ``(name, i)`` goes to the line ``(name, i // per_line)``; a named cell keeps a
    line of its own.  With 4-byte counters and 64-byte lines, ``per_line=16`` is
    an unpadded array: neighbouring PEs' cells share a line (false sharing).

    >>> f = packed_lines(4)
    >>> f(("readyEpoch", 5)), f("lock")
    (('readyEpoch', 1), 'lock')
    """
    if not isinstance(per_line, Integral) or per_line < 1:
        raise ValueError(f"per_line must be a positive integer, got {per_line!r}")

    def line_of(cell):
        if isinstance(cell, tuple):
            return (cell[0], cell[1] // per_line)
        return cell
    return line_of


def uses_memory(layout: Callable) -> Callable:
    """Decorator: attach a memory layout ``layout(p, **params) -> dict`` to a program.

    :func:`simulate_shared` and the other runners call it when they are given
    no ``memory``, so a program carries the cells it needs with it.
    """
    def attach(program):
        program.memory = layout
        return program
    return attach


def _is_cell(cell) -> bool:
    if isinstance(cell, str):
        return True
    return (isinstance(cell, tuple) and len(cell) == 2 and isinstance(cell[0], str)
            and isinstance(cell[1], Integral))


def _cell_text(cell) -> str:
    if isinstance(cell, tuple):
        return f"{cell[0]}[{cell[1]}]"
    return str(cell)


def _declared_memory(program, p, memory, params) -> dict:
    if memory is None:
        memory = getattr(program, "memory", None)
        if memory is None:
            return {}
    if callable(memory):
        memory = memory(p, **params)
    if not isinstance(memory, dict):
        raise TypeError(f"memory must be a dict {{cell: initial value}} or a callable "
                        f"(p, **params) -> dict, got {memory!r}")
    for cell in memory:
        if not _is_cell(cell):
            raise ValueError(f"a cell is named by a string or a (string, integer) pair, "
                             f"got {cell!r}")
    return dict(memory)


# -- the cost model -------------------------------------------------------------------

@dataclass(frozen=True)
class CoherenceModel:
    """Cost of one memory operation under a simple MSI-like cache-coherence protocol.

    Parameters
    ----------
    hit : float, default 1
        A read of a line the PE's cache holds, or a write to a line only it holds.
    miss : float, default 10
        A read of a line the cache does not hold, or a write to a line no other
        cache holds.
    contended : float, default 20
        A write, CAS or fetch-and-add to a line that other caches hold: their
        copies are invalidated.

    Misses and contended accesses to the same line are served one after the
    other; hits are served by the PE's own cache at once.

    Examples
    --------
    >>> CoherenceModel()
    CoherenceModel(hit=1, miss=10, contended=20)
    """
    hit: float = 1
    miss: float = 10
    contended: float = 20

    def __post_init__(self):
        for name in ("hit", "miss", "contended"):
            value = getattr(self, name)
            if not isinstance(value, Real) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{name} must be a non-negative number, got {value!r}")


DEFAULT_MODEL = CoherenceModel()


# -- runs -----------------------------------------------------------------------------

class Event(NamedTuple):
    """One entry of a trace.

    ``op`` is "read", "write", "cas", "fetch_add", "pause", "enter", "leave" or
    "note".  ``value`` is what a read returned, what a write stored, the
    success of a CAS, the old value of a fetch-and-add, a pause's duration, or
    a note's value; ``cell`` is the cell (a section or label for a marker).
    ``time`` is the virtual time at which the operation took effect (in the
    interleaving modes: the number of operations before it).
    """
    time: float
    pe: int
    op: str
    cell: Any
    value: Any


@dataclass
class SharedRun:
    """The outcome of :func:`simulate_shared` or :func:`run_with_threads`.

    Attributes
    ----------
    results : list
        What each PE's program returned (None for a PE that had not returned
        when a partial run stopped).
    time : float
        Makespan: virtual time in the timed mode, number of operations in the
        interleaving modes and for threads.
    finish_times : list
        When each PE returned (None if it had not).
    trace : list of Event
        Every operation and marker in the order it took effect (empty when
        ``trace=False``).
    memory : dict
        The final value of every cell.
    accesses : dict
        ``{cell: number of read/write/cas/fetch_add operations on it}``.
    transfers : dict
        ``{line: number of misses and contended accesses}``: how often the line
        moved between caches.
    spins : list of int
        Per PE: reads and failed CAS that saw the same value in the same cell
        as the PE's previous memory operation (pauses in between allowed):
        the polls of a spin loop that found nothing new.
    schedule : list of int
        The PE that performed each operation (not the markers), in order;
        ``simulate_shared(..., schedule=run.schedule)`` replays the run.
    operations : int
        Operations performed (markers excluded).
    complete : bool
        False for a run stopped after a prefix of a schedule.
    stopped : str or None
        Why :func:`find_violation` stopped an incomplete run at its operation
        limit (the message :class:`OperationLimitError` would have had).
    mode : str
        "timed", "interleaved" or "threads".
    """
    results: list
    time: float
    finish_times: list
    trace: list
    memory: dict
    accesses: dict
    transfers: dict
    spins: list
    schedule: list
    operations: int
    p: int
    model: CoherenceModel | None = None
    mode: str = "timed"
    seed: int | None = None
    complete: bool = True
    stopped: str | None = None

    def events(self, op=None, pe=None) -> list:
        """The trace entries of one kind (``"note"``, ``"cas"``, ...) and/or one PE."""
        return [e for e in self.trace
                if (op is None or e.op == op) and (pe is None or e.pe == pe)]

    def notes(self, label) -> list:
        """The ``note(label, value)`` events, as ``(time, pe, value)``."""
        return [(e.time, e.pe, e.value) for e in self.trace if e.op == "note" and e.cell == label]


def format_trace(trace, start: int = 0, stop: int | None = None) -> str:
    """A readable listing of trace entries ``start .. stop-1``, one per line.

    >>> print(format_trace([Event(0, 1, "read", "lock", 0), Event(1, 1, "enter", "cs", None)]))
        time  PE  operation
           0   1  read lock -> 0
           1   1  enter cs
    """
    lines = ["    time  PE  operation"]
    for e in list(trace)[start:stop]:
        cell = _cell_text(e.cell) if e.cell is not None else ""
        if e.op in ("read", "fetch_add", "cas"):
            what = f"{e.op} {cell} -> {e.value!r}"
        elif e.op == "write":
            what = f"write {cell} := {e.value!r}"
        elif e.op == "pause":
            what = f"pause {e.value:g}"
        elif e.op == "note":
            what = f"note {e.cell}" + ("" if e.value is None else f" = {e.value!r}")
        else:
            what = f"{e.op} {e.cell}"
        t = f"{e.time:g}" if isinstance(e.time, Real) else str(e.time)
        lines.append(f"{t:>8}  {e.pe:>2}  {what}")
    return "\n".join(lines)


# -- the machine: memory, cache lines, statistics ---------------------------------------

_MEMORY_OPS = (Read, Write, CAS, FetchAdd)
_WROTE = object()        # marks a previous operation that changed the cell


class _Machine:
    """Applies one memory operation atomically and accounts for it.

    ``apply`` returns the operation's result and when it completes.  Cache
    state is one set of holders per line.
    """

    def __init__(self, p, memory, model, line_of, keep_trace):
        self.p = p
        self.values = memory
        if line_of is None:
            self.line = {cell: cell for cell in memory}
        else:
            self.line = {cell: line_of(cell) for cell in memory}
        lines = set(self.line.values())
        self.holders = {line: set() for line in lines}
        self.free_at = dict.fromkeys(lines, 0)
        self.transfers = dict.fromkeys(lines, 0)
        self.accesses = dict.fromkeys(memory, 0)
        self.hit, self.miss, self.contended = model.hit, model.miss, model.contended
        self.trace = [] if keep_trace else None
        self.spins = [0] * p
        self.streak = [0] * p           # consecutive spins of each PE
        self.last = [None] * p          # each PE's last memory operation, for messages
        self.prev = [None] * p          # (cell, value seen or _WROTE, operation)
        self.spun_at = [None] * p       # memory version at a PE's latest spin
        self.version = 0                # how many times memory changed
        self.schedule = []

    def unknown(self, pe, cell):
        declared = ", ".join(repr(c) for c in list(self.values)[:12])
        more = ", ..." if len(self.values) > 12 else ""
        return ValueError(f"PE {pe} accessed the cell {cell!r}, which is not declared in "
                          f"memory (declared: {declared or 'none'}{more})")

    def _observe(self, pe, op, name, cell, value):
        """Count a spin when pe's previous memory operation saw this value in this cell."""
        prev = self.prev[pe]
        same = False
        if prev is not None and prev[0] == cell and prev[1] is not _WROTE:
            try:
                same = bool(prev[1] == value)
            except Exception:               # e.g. comparing arrays
                same = False
        self.prev[pe] = (cell, value, op)
        self.last[pe] = (name, cell, value)
        if same:
            self.spins[pe] += 1
            self.streak[pe] += 1
            self.spun_at[pe] = self.version
        else:
            self.streak[pe] = 0
            self.spun_at[pe] = None

    def _changed(self, pe, op, name, cell, value):
        self.prev[pe] = (cell, _WROTE, op)
        self.last[pe] = (name, cell, value)
        self.streak[pe] = 0
        self.spun_at[pe] = None
        self.version += 1

    def _cost(self, pe, cell, writes, now):
        line = self.line[cell]
        holders = self.holders[line]
        if writes:
            if len(holders) == 1 and pe in holders:
                return now + self.hit
            cost = self.contended if holders else self.miss   # others hold copies?
            holders.clear()
            holders.add(pe)
        else:
            if pe in holders:
                return now + self.hit
            cost = self.miss
            holders.add(pe)
        start = self.free_at[line]
        if start < now:
            start = now
        end = start + cost
        self.free_at[line] = end
        self.transfers[line] += 1
        return end

    def apply(self, pe, op, now):
        """Perform op for pe at time now; return (result, completion time)."""
        kind = type(op)
        self.schedule.append(pe)
        if kind is Pause:
            if self.trace is not None:
                self.trace.append(Event(now, pe, "pause", None, op.time))
            return None, now + op.time
        if kind not in _MEMORY_OPS:
            self.schedule.pop()
            raise TypeError(f"PE {pe} yielded {op!r}, which is not a shared-memory operation; "
                            "yield read(...), write(...), cas(...), fetch_add(...), pause(...), "
                            "enter(...), leave(...) or note(...)")
        cell = op[0]
        values = self.values
        try:
            declared = cell in values
        except TypeError:                   # an unhashable name
            declared = False
        if not declared:
            self.schedule.pop()
            raise self.unknown(pe, cell)
        self.accesses[cell] += 1
        if kind is Read:
            result = values[cell]
            end = self._cost(pe, cell, False, now)
            self._observe(pe, op, "read", cell, result)
            logged = result
            name = "read"
        elif kind is CAS:
            current = values[cell]
            try:
                result = bool(current == op.expected)
            except Exception:
                result = current is op.expected
            end = self._cost(pe, cell, True, now)
            if result:
                values[cell] = op.new
                self._changed(pe, op, "cas", cell, op.new)
            else:
                self._observe(pe, op, "cas", cell, current)
            logged = result
            name = "cas"
        elif kind is FetchAdd:
            result = values[cell]
            values[cell] = result + op.delta
            end = self._cost(pe, cell, True, now)
            self._changed(pe, op, "fetch_add", cell, result)
            logged = result
            name = "fetch_add"
        else:                               # Write
            values[cell] = op.value
            end = self._cost(pe, cell, True, now)
            self._changed(pe, op, "write", cell, op.value)
            result = None
            logged = op.value
            name = "write"
        if self.trace is not None:
            self.trace.append(Event(now, pe, name, cell, logged))
        return result, end

    def mark(self, pe, marker, now):
        if type(marker) is not Marker:
            raise TypeError(f"PE {pe} yielded {marker!r}, which is not an operation")
        if self.trace is not None:
            self.trace.append(Event(now, pe, marker.kind, marker.label, marker.value))

    def spinning(self, pe) -> str | None:
        """What PE pe keeps re-reading, if its latest operations were spins."""
        if not self.streak[pe]:
            return None
        op, cell, value = self.last[pe]
        return (f"spins on {op}({_cell_text(cell)!s}) seeing {value!r} "
                f"({self.streak[pe]} times in a row)")

    def limit_error(self, max_ops, pending, where):
        lines = []
        for pe in sorted(pending):
            what = self.spinning(pe)
            if what is None:
                what = f"next operation {pending[pe]!r}"
            lines.append(f"  PE {pe}: {what}")
        spinning = [pe for pe in pending if self.streak[pe]]
        hint = ""
        if pending and len(spinning) == len(pending):
            hint = ("\nevery PE that has not returned keeps re-reading an unchanged value: "
                    "a livelock or deadlock (did a PE skip a barrier or keep a lock?)")
        return OperationLimitError(
            f"the PEs performed more than max_ops={max_ops} operations ({where}) and "
            f"{len(pending)} PE(s) have not returned:\n" + "\n".join(lines) + hint)

    def run_record(self, results, finish, now, p, model, mode, seed, complete):
        return SharedRun(results=results, time=now, finish_times=finish,
                         trace=self.trace if self.trace is not None else [],
                         memory=dict(self.values), accesses=dict(self.accesses),
                         transfers=dict(self.transfers), spins=list(self.spins),
                         schedule=self.schedule, operations=len(self.schedule), p=p,
                         model=model, mode=mode, seed=seed, complete=complete)


# -- starting the PEs -----------------------------------------------------------------

def _check_p(p):
    if not isinstance(p, int) or isinstance(p, bool) or p < 1:
        raise ValueError(f"p must be an integer >= 1, got {p!r}")


def _check_max_ops(max_ops):
    if not isinstance(max_ops, int) or isinstance(max_ops, bool) or max_ops < 1:
        raise ValueError(f"max_ops must be a positive integer, got {max_ops!r}")


def _advance(gen, value, pe, machine, now, p):
    """Resume a PE with value; run its markers; return (next operation, done, result)."""
    try:
        op = gen.send(value)
        while type(op) is Marker:
            machine.mark(pe, op, now)
            op = gen.send(None)
    except StopIteration as stop:
        return None, True, stop.value
    except Exception as exc:
        exc.add_note(f"raised by PE {pe} of {p} at time {now:g}")
        raise
    return op, False, None


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
            op, done, result = _advance(gens[pe], value, pe, machine, now, p)
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


# -- the interleaving engine ----------------------------------------------------------

class _Interleaving:
    """Runs PEs one operation at a time, in an order chosen from outside."""

    def __init__(self, gens, machine, p, history=False):
        self.gens, self.machine, self.p = gens, machine, p
        self.history = [[] for _ in range(p)] if history else None
        self.steps = 0
        self.pending = {}
        self.finish = [None] * p
        self.results = [None] * p
        for pe in range(p):
            self._settle(pe, None)

    def _settle(self, pe, value):
        op, done, result = _advance(self.gens[pe], value, pe, self.machine, self.steps, self.p)
        if done:
            self.finish[pe] = self.steps
            self.results[pe] = result
            self.pending.pop(pe, None)
        else:
            self.pending[pe] = op

    def ready(self) -> list:
        return sorted(self.pending)

    def parked(self, pe) -> bool:
        """True if pe is in a spin loop that cannot see anything new yet.

        Its last memory operation re-observed the value the one before it saw,
        no memory changed since, and what it does next is a pause or the very
        same operation again.
        """
        machine = self.machine
        spun = machine.spun_at[pe]
        if spun is None or spun != machine.version:
            return False
        op = self.pending.get(pe)
        return type(op) is Pause or op == machine.prev[pe][2]

    def step(self, pe):
        op = self.pending.get(pe)
        if op is None:
            state = "has returned" if self.finish[pe] is not None else "does not exist"
            raise ValueError(f"the schedule names PE {pe} at step {self.steps}, but PE {pe} "
                             f"{state}")
        try:
            value, _ = self.machine.apply(pe, op, self.steps)
        except (ValueError, TypeError) as exc:
            exc.add_note(f"raised for PE {pe} of {self.p} at step {self.steps}")
            raise
        self.steps += 1
        if self.history is not None:
            self.history[pe].append(value)
        self._settle(pe, value)

    def key(self):
        """What determines the future: memory, what each PE was told, who is parked."""
        state = (tuple(self.machine.values.values()),
                 tuple(tuple(h) for h in self.history),
                 tuple(self.parked(pe) for pe in range(self.p)))
        try:
            hash(state)
            return state
        except TypeError:
            return repr(state)

    def record(self, model, seed, complete):
        return self.machine.run_record(self.results, self.finish, self.steps, self.p, model,
                                       "interleaved", seed, complete)


def _run_interleaved(gens, machine, p, model, max_ops, seed, schedule, stop_after,
                     stop_at_limit=False):
    run = _Interleaving(gens, machine, p)
    rng = random.Random(seed) if seed is not None else None
    schedule = list(schedule) if schedule is not None else []
    last = -1
    while run.pending:
        if stop_after is not None and run.steps >= stop_after:
            return run.record(model, seed, False)
        if run.steps >= max_ops:
            error = machine.limit_error(max_ops, dict(run.pending), f"step {run.steps}")
            if stop_at_limit:
                stopped = run.record(model, seed, False)
                stopped.stopped = str(error)
                return stopped
            raise error
        if run.steps < len(schedule):
            pe = schedule[run.steps]
        elif rng is not None:
            ready = run.ready()
            pe = ready[rng.randrange(len(ready))]
        else:                              # after a schedule without a seed: round robin
            ready = run.ready()
            pe = next((q for q in ready if q > last), ready[0])
        run.step(pe)
        last = pe
    return run.record(model, seed, True)


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
    _check_p(p)
    _check_max_ops(max_ops)
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
    cells = _declared_memory(program, p, memory, params)
    machine = _Machine(p, cells, model, line_of, trace)
    gens = start_programs(program, p, inputs, params)
    if seed is None and schedule is None:
        if stop_after is not None:
            raise ValueError("stop_after applies to interleavings: give a seed or a schedule")
        return _run_timed(gens, machine, p, model, max_ops)
    return _run_interleaved(gens, machine, p, model, max_ops, seed, schedule, stop_after)


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

    >>> def count(me, p, data):
    ...     return (yield fetch_add("c", 1))
    >>> sorted(run_with_threads(count, 4, memory={"c": 0}).results)
    [0, 1, 2, 3]
    """
    _check_p(p)
    _check_max_ops(max_ops)
    cells = _declared_memory(program, p, memory, params)
    machine = _Machine(p, cells, DEFAULT_MODEL, None, trace)
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


# -- properties and model checking ----------------------------------------------------

def exclusion_violation(trace, exclusive: str = "cs", shared: str | None = "read"):
    """The first trace event at which exclusion breaks, or None.

    An ``exclusive`` section may be entered only while no PE is in an
    ``exclusive`` or ``shared`` section; a ``shared`` section (readers of a
    reader-writer lock) only while no PE is in an ``exclusive`` one.

    >>> t = [Event(0, 0, "enter", "cs", None), Event(1, 1, "enter", "cs", None)]
    >>> exclusion_violation(t)
    Event(time=1, pe=1, op='enter', cell='cs', value=None)
    """
    inside_x, inside_s = set(), set()
    for e in trace:
        if e.op == "enter":
            if e.cell == exclusive:
                if inside_x or inside_s:
                    return e
                inside_x.add(e.pe)
            elif shared is not None and e.cell == shared:
                if inside_x:
                    return e
                inside_s.add(e.pe)
        elif e.op == "leave":
            if e.cell == exclusive:
                inside_x.discard(e.pe)
            elif e.cell == shared:
                inside_s.discard(e.pe)
    return None


def mutual_exclusion(run: SharedRun) -> bool:
    """True if no two PEs were ever in section "cs" together, nor a "cs" with a "read"."""
    return exclusion_violation(run.trace) is None


@dataclass
class Violation:
    """An interleaving under which a property fails.

    ``schedule`` replays it (``simulate_shared(..., schedule=v.schedule)``);
    ``run`` is the run it gives (partial when the schedule was shortened to
    the first steps that already show the failure); ``text`` lists its trace.
    """
    schedule: list
    run: SharedRun
    seed: int | None = None
    reason: str = "the check failed"

    @property
    def trace(self) -> list:
        return self.run.trace

    @property
    def text(self) -> str:
        return format_trace(self.run.trace)

    def __str__(self):
        origin = f"seed {self.seed}" if self.seed is not None else "exhaustive search"
        return (f"{self.reason} ({origin}); schedule of {len(self.schedule)} steps: "
                f"{self.schedule}\n{self.text}")


def _shortest_failing_prefix(replay, check, schedule):
    """Binary search the shortest prefix of schedule whose partial run fails check."""
    lo, hi = 0, len(schedule)
    best = None
    while lo < hi:
        mid = (lo + hi) // 2
        run = replay(schedule[:mid], mid)
        if not check(run):
            hi, best = mid, run
        else:
            lo = mid + 1
    return schedule[:lo], best


def find_violation(program: Callable, p: int, check: Callable, *, seeds=range(200),
                   inputs=None, memory=None, max_ops: int = 100_000,
                   line_of: Callable | None = None, shrink: bool = True,
                   **params) -> Violation | None:
    """Run seeded random interleavings until one fails ``check``; return it, or None.

    ``check(run) -> bool`` says whether a :class:`SharedRun` is fine
    (:func:`mutual_exclusion` is one).  A run that exceeds ``max_ops``
    operations (PEs that spin forever) is returned as a violation too, with
    the reason "no progress" and the spinning PEs named.  With ``shrink`` the schedule is cut to
    the shortest prefix whose partial run already fails; this assumes that a
    failure visible in a trace stays visible when the trace grows, which holds
    for checks that look only at the trace (as all checks should when
    ``run.complete`` is False).

    >>> def racy(me, p, data):                 # read, then write: not atomic
    ...     x = yield read("c")
    ...     yield write("c", x + 1)
    >>> v = find_violation(racy, 2, lambda run: run.memory["c"] == 2, memory={"c": 0},
    ...                    shrink=False)
    >>> v.schedule, v.run.memory
    ([0, 1, 0, 1], {'c': 1})
    """
    _check_p(p)
    _check_max_ops(max_ops)
    for seed in seeds:
        cells = _declared_memory(program, p, memory, params)
        machine = _Machine(p, cells, DEFAULT_MODEL, line_of, True)
        run = _run_interleaved(start_programs(program, p, inputs, params), machine, p, None,
                               max_ops, seed, None, None, stop_at_limit=True)
        if run.stopped is not None:
            return Violation(list(run.schedule), run, seed,
                             reason="no progress: " + run.stopped)
        if check(run):
            continue
        schedule = list(run.schedule)
        if shrink:
            def replay(prefix, n):
                return simulate_shared(program, p, inputs, memory=memory, schedule=prefix,
                                       stop_after=n, max_ops=max_ops, line_of=line_of,
                                       **params)
            short, partial = _shortest_failing_prefix(replay, check, schedule)
            if partial is not None:
                return Violation(short, partial, seed)
        return Violation(schedule, run, seed)
    return None


def explore_interleavings(program: Callable, p: int, check: Callable, *, max_steps: int = 40,
                          max_runs: int = 100_000, inputs=None, memory=None,
                          line_of: Callable | None = None, **params) -> Violation | None:
    """Try every interleaving of a tiny case; return a shortest failing one, or None.

    The search is breadth first, so the interleaving returned is as short as
    possible, and ``check`` is applied to every prefix (see :func:`find_violation`
    on partial runs).  Three reductions keep it finite and small:

    * a PE in a spin loop (its last operation re-observed an unchanged value
      and it is about to pause or repeat that operation) is not scheduled
      again until some PE changes memory, since it would only see the same
      value again;
    * two prefixes that leave the same memory and have given every PE the same
      sequence of results lead to the same state (programs are deterministic
      functions of what they are told), so only one is explored;
    * prefixes longer than ``max_steps`` are not extended.

    A state where every PE that has not returned spins on unchanged values is
    reported as a livelock.  Raises OperationLimitError after ``max_runs``
    replays.

    >>> from collective_lib.algorithms.sync import lock_demo, broken_lock
    >>> v = explore_interleavings(lock_demo, 2, mutual_exclusion, lock=broken_lock, rounds=1)
    >>> v.schedule
    [0, 1, 0, 1]
    """
    _check_p(p)
    runs = 0

    def replay(prefix):
        nonlocal runs
        runs += 1
        if runs > max_runs:
            raise OperationLimitError(f"explore_interleavings replayed more than "
                                      f"max_runs={max_runs} prefixes; the case is too big "
                                      f"(lower max_steps, p or the number of rounds)")
        cells = _declared_memory(program, p, memory, params)
        machine = _Machine(p, cells, DEFAULT_MODEL, line_of, True)
        state = _Interleaving(start_programs(program, p, inputs, params), machine, p,
                              history=True)
        for pe in prefix:
            state.step(pe)
        return state

    visited = set()
    frontier = [[]]
    for depth in range(max_steps + 1):
        following = []
        for prefix in frontier:
            state = replay(prefix)
            key = state.key()
            if key in visited:
                continue
            visited.add(key)
            run = state.record(None, None, not state.pending)
            if not check(run):
                return Violation(prefix, run)
            if not state.pending or depth == max_steps:
                continue
            runnable = [pe for pe in state.ready() if not state.parked(pe)]
            if not runnable:
                spinning = "; ".join(f"PE {pe} {state.machine.spinning(pe)}"
                                     for pe in state.ready())
                return Violation(prefix, run, reason=f"livelock: {spinning}")
            following.extend(prefix + [pe] for pe in runnable)
        frontier = following
    return None
