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
:func:`format_trace` lists readably.  The machine that applies the operations
is internal (``_engine.py``, shared with the model checker); the runners that
drive it live in :mod:`collective_lib.shared_memory.runners`.
"""
from __future__ import annotations

from dataclasses import dataclass
from numbers import Real
from typing import Any, NamedTuple

from .ops import cell_name

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
        cell = cell_name(e.cell) if e.cell is not None else ""
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
