"""The machine that performs memory operations, what it costs, and what a run records.

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

A run is a :class:`SharedRun`; its trace is a list of :class:`Event`, which
:func:`format_trace` lists readably.  The runners that drive the machine live
in :mod:`collective_lib.shared_memory.runners`.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from numbers import Real
from typing import Any, NamedTuple

from ..errors import OperationLimitError
from .ops import (CAS, MARKER_KINDS, FetchAdd, Marker, Pause, Read, Write, _cell_text,
                  check_memory_operation)

__all__ = ["CoherenceModel", "DEFAULT_MODEL", "Event", "SharedRun", "format_trace"]


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
_LARGEST = sys.float_info.max   # a finite time is at most this
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
            t = op[0]
            if (type(t) is not int and type(t) is not float) or not 0 <= t <= _LARGEST:
                self.schedule.pop()
                t = self.refuse(pe, op)             # a numpy number passes; NaN does not
                self.schedule.append(pe)
            if self.trace is not None:
                self.trace.append(Event(now, pe, "pause", None, t))
            return None, now + t
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

    @staticmethod
    def refuse(pe, op):
        """``op``'s time if PE pe's record keeps its rules (a numpy number), else the
        ValueError naming PE, record and value (:func:`check_memory_operation`)."""
        try:
            return check_memory_operation(op)[0]
        except ValueError as err:
            raise ValueError(f"PE {pe} yielded {err}") from None

    def mark(self, pe, marker, now):
        if type(marker) is not Marker:
            raise TypeError(f"PE {pe} yielded {marker!r}, which is not an operation")
        if type(marker[0]) is not str or marker[0] not in MARKER_KINDS:
            self.refuse(pe, marker)
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
