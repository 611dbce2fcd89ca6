"""What a shared-memory program yields, and the cells it yields them on.

A PE of a shared-memory program is a generator that yields these records:

* :func:`read`, :func:`write`, :func:`cas` (compare-and-swap; the result is
  True or False) and :func:`fetch_add` (the result is the old value), each
  atomic;
* :func:`pause` for local work or back-off;
* the markers :func:`enter`, :func:`leave` and :func:`note`, which cost
  nothing and only put an event into the trace, so that properties such as
  mutual exclusion can be checked afterwards.

Cells are declared up front with their initial values, as a dict whose keys
are names (``"lock"``) or ``(name, index)`` pairs (``("readyEpoch", 3)``);
:func:`cell_array` builds the pairs for an array, :func:`packed_lines` puts
several cells on one cache line, and :func:`uses_memory` attaches a layout to
a program.  Touching an undeclared cell raises ValueError naming it.

A pause keeps the rule of every time (:func:`collective_lib.ops.valid_time`):
finite and non-negative.  :func:`check_memory_operation` checks a record built
without these functions; the machine refuses a bad pause or marker from any
program, and the grader's codec refuses any bad record a student's process sends.
"""
from __future__ import annotations

from numbers import Integral
from typing import Any, Callable, Hashable, NamedTuple

from ..ops import shown, valid_time
from ..validate import check_positive_int

__all__ = [
    "Read", "Write", "CAS", "FetchAdd", "Pause", "Marker",
    "read", "write", "cas", "fetch_add", "pause", "enter", "leave", "note",
    "cell_array", "packed_lines", "uses_memory", "check_memory_operation", "MARKER_KINDS",
    "cell_name", "declared_memory",
]

#: The kinds of :class:`Marker`.
MARKER_KINDS = ("enter", "leave", "note")


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
    """Spend ``time`` units on local work (the back-off of a spin loop, or computation).

    ``time`` follows the rule of every time (:func:`collective_lib.ops.valid_time`):
    finite and non-negative.
    """
    return Pause(valid_time(time))


def enter(section: str = "cs") -> Marker:
    """Mark that the PE enters the critical section ``section`` (costs nothing)."""
    return Marker("enter", section, None)


def leave(section: str = "cs") -> Marker:
    """Mark that the PE leaves the critical section ``section`` (costs nothing)."""
    return Marker("leave", section, None)


def note(label: str, value: Any = None) -> Marker:
    """Put ``(label, value)`` into the trace (costs nothing), e.g. ``note("arrive", epoch)``."""
    return Marker("note", label, value)


_MEMORY_OPS = (Read, Write, CAS, FetchAdd)


def check_memory_operation(op: Any):
    """``op``, a record of this module, if it keeps the rules of its kind; else ValueError.

    For a record a program built without the functions above, or one rebuilt
    from a message (:mod:`collective_lib.autograde.codec`): a memory operation
    names a cell by a string or a ``(string, integer)`` pair (whether it is
    declared, only a run knows), a pause lasts a finite non-negative time, and a
    marker is one of :data:`MARKER_KINDS`.  The message names the record, the
    field and the value.

    >>> check_memory_operation(Pause(float("nan")))
    Traceback (most recent call last):
    ...
    ValueError: Pause with time=nan: a time must be a finite non-negative number
    """
    kind = type(op)
    if kind not in _MEMORY_OPS and kind is not Pause and kind is not Marker:
        raise TypeError(f"{shown(op)} is not a shared-memory operation")
    name = kind.__name__
    if len(op) != len(kind._fields):
        raise ValueError(f"{name} with {len(op)} fields instead of {len(kind._fields)}")
    if kind is Pause:
        try:
            valid_time(op[0])
        except ValueError as err:
            raise ValueError(f"{name} with {err}") from None
    elif kind is Marker:
        if type(op[0]) is not str or op[0] not in MARKER_KINDS:
            raise ValueError(f"{name} with kind={shown(op[0])}: a marker is 'enter', 'leave' "
                             "or 'note'")
    elif not _is_cell(op[0]):
        raise ValueError(f"{name} with cell={shown(op[0])}: a cell is named by a string or "
                         "a (string, integer) pair")
    return op


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
    check_positive_int("per_line", per_line)

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


def cell_name(cell) -> str:
    """How a cell is written: ``"flag"``, or ``"ready[3]"`` for ``("ready", 3)``."""
    if isinstance(cell, tuple):
        return f"{cell[0]}[{cell[1]}]"
    return str(cell)


def declared_memory(program, p, memory, params) -> dict:
    """The cells ``program`` runs on: ``memory`` (a dict, or a layout called with
    ``(p, **params)``), else the layout of :func:`uses_memory`, else none."""
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
