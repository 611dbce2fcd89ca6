"""A shared-memory machine for SPMD programs that yield memory operations.

This is the shared-memory sibling of :mod:`collective_lib.simulator`.  A
program is again a generator function ``program(me, p, data, **params)``, one
instance per PE, but what it yields are operations on named memory cells
(:func:`read`, :func:`write`, :func:`cas`, :func:`fetch_add`, :func:`pause`
and the zero-cost markers :func:`enter`, :func:`leave` and :func:`note`).

One module per concept; every public name is importable from here:

:mod:`~collective_lib.shared_memory.ops`
    The operations a PE yields and the declaration of the cells they touch
    (:func:`cell_array`, :func:`packed_lines`, :func:`uses_memory`).
:mod:`~collective_lib.shared_memory.machine`
    The coherence cost model (:class:`CoherenceModel`), the machine that
    performs one operation atomically and accounts for it, and what a run
    records (:class:`SharedRun`, :class:`Event`, :func:`format_trace`).
:mod:`~collective_lib.shared_memory.runners`
    :func:`simulate_shared` (timed, or a seeded or replayed interleaving) and
    :func:`run_with_threads` (real Python threads).
:mod:`~collective_lib.shared_memory.checking`
    Properties of a trace (:func:`exclusion_violation`,
    :func:`mutual_exclusion`) and the search for an interleaving that breaks
    one (:func:`find_violation`, :func:`explore_interleavings`, :func:`find_livelock`).
"""
from .checking import (RecordedLock, Violation, exclusion_violation, explore_interleavings,
                       find_livelock, find_violation, mutual_exclusion, Replayer)
from .machine import DEFAULT_MODEL, CoherenceModel, Event, SharedRun, format_trace
from .ops import (CAS, MARKER_KINDS, FetchAdd, Marker, Pause, Read, Write, cas, cell_array,
                  cell_name, check_memory_operation, declared_memory, enter, fetch_add, leave,
                  note, packed_lines, pause, read, uses_memory, write)
from .runners import DEFAULT_MAX_OPS, run_with_threads, simulate_shared

__all__ = ["RecordedLock", "Replayer", 
    "Read", "Write", "CAS", "FetchAdd", "Pause", "Marker",
    "read", "write", "cas", "fetch_add", "pause", "enter", "leave", "note",
    "cell_array", "packed_lines", "uses_memory", "check_memory_operation", "MARKER_KINDS",
    "cell_name", "declared_memory", "CoherenceModel", "DEFAULT_MODEL", "Event", "SharedRun", "Violation",
    "simulate_shared", "run_with_threads", "DEFAULT_MAX_OPS", "find_violation",
    "explore_interleavings", "find_livelock",
    "format_trace", "exclusion_violation", "mutual_exclusion",
]
