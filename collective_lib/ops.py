"""Communication operations: the values an SPMD program yields.

A program is a generator function ``program(me, p, data, **params)``.  It
yields one of the records below, is resumed with the operation's result, and
returns its PE's final value.  The records are plain immutable values, so the
same program runs under any backend (the simulator or real MPI processes).

The ``||`` of the sources (Sanders' ``receive(...) || send(...)``, Grama's
simultaneous send and receive) is :func:`sendrecv`.
"""
from __future__ import annotations

from numbers import Number
from typing import Any, Callable, NamedTuple

__all__ = [
    "Send", "Recv", "SendRecv", "Compute", "Multi",
    "send", "recv", "sendrecv", "exchange", "compute", "multi",
    "size_in_words", "relay",
]


def size_in_words(data: Any) -> int:
    """Words a payload occupies: 0 for ``None``, 1 for a scalar, else its length.

    A numpy array counts its elements; any other sized object (list, tuple,
    string, bytes) counts ``len(data)``; any other object counts as one word.

    Examples
    --------
    >>> size_in_words(7), size_in_words([1, 2, 3]), size_in_words(None)
    (1, 3, 0)
    """
    kind = type(data)
    if kind is int or kind is float:
        return 1
    if kind is list or kind is tuple:
        return len(data)
    if data is None:
        return 0
    if isinstance(data, Number):
        return 1
    size = getattr(data, "size", None)          # numpy arrays and scalars
    if isinstance(size, int):
        return size
    try:
        return len(data)
    except TypeError:
        return 1


def _words(data: Any, words: int | None) -> int:
    if words is None:
        return size_in_words(data)
    if not isinstance(words, int) or isinstance(words, bool) or words < 0:
        raise ValueError(f"words must be a non-negative integer, got {words!r}")
    return words


# The records are named tuples: immutable, cheap to build, and printable.

class Send(NamedTuple):
    """Send ``data`` (``words`` long) to PE ``dst``; the result is ``None``."""
    dst: int
    data: Any
    words: int


class Recv(NamedTuple):
    """Receive the next message from PE ``src``; the result is its payload."""
    src: int


class SendRecv(NamedTuple):
    """Send to ``dst`` while receiving from ``src``; the result is the payload received."""
    dst: int
    data: Any
    src: int
    words: int


class Compute(NamedTuple):
    """Local work taking ``time`` units; the result is ``None``."""
    time: float


class Multi(NamedTuple):
    """Several sends and receives at once (multi-port machines such as the CM-200).

    ``sends`` is a tuple of ``(dst, data, words)``; ``recvs`` a tuple of
    sources.  The result is the list of payloads received, in the order of
    ``recvs``.  How many of the transfers really overlap is decided by the
    cost model's ``ports``.
    """
    sends: tuple
    recvs: tuple


_new = tuple.__new__


def send(dst: int, data: Any, words: int | None = None) -> Send:
    """Send ``data`` to PE ``dst``; ``words`` defaults to the size of ``data``."""
    return _new(Send, (dst, data, size_in_words(data) if words is None else _words(data, words)))


def recv(src: int) -> Recv:
    """Receive the next message from PE ``src`` (FIFO per sender, like MPI)."""
    return _new(Recv, (src,))


def sendrecv(dst: int, data: Any, src: int, words: int | None = None) -> SendRecv:
    """Send to ``dst`` and receive from ``src`` at the same time (the sources' ``||``)."""
    return _new(SendRecv, (dst, data, src,
                           size_in_words(data) if words is None else _words(data, words)))


def exchange(partner: int, data: Any, words: int | None = None) -> SendRecv:
    """Swap messages with ``partner``: ``sendrecv(partner, data, partner)``."""
    return _new(SendRecv, (partner, data, partner,
                           size_in_words(data) if words is None else _words(data, words)))


def compute(time: float) -> Compute:
    """Spend ``time`` units on local work (no communication)."""
    if not isinstance(time, Number) or time < 0:
        raise ValueError(f"compute time must be a non-negative number, got {time!r}")
    return Compute(time)


def multi(sends=(), recvs=()) -> Multi:
    """Issue several sends and receives together.

    ``sends`` holds ``(dst, data)`` or ``(dst, data, words)`` tuples and
    ``recvs`` holds source ranks.  Under ``ports="all"`` they all proceed at
    once, one per link; under the one-port models they queue on the ports.
    """
    triples = []
    for item in sends:
        if len(item) == 2:
            dst, data = item
            triples.append((dst, data, size_in_words(data)))
        elif len(item) == 3:
            dst, data, words = item
            triples.append((dst, data, _words(data, words)))
        else:
            raise ValueError(f"a send in multi() is (dst, data) or (dst, data, words), got {item!r}")
    return Multi(tuple(triples), tuple(recvs))


def relay(steps, op: Callable | None = None, received: Callable | None = None):
    """Run one PE's generator ``steps`` inside another program: ``yield from relay(...)``.

    Every operation ``steps`` yields is passed on as ``op(operation)`` and
    every result it is resumed with as ``received(result)`` (unchanged where
    None); the value ``steps`` returns is returned.  Programs that wrap other
    programs (a collective on a group of PEs, a grader that copies messages)
    are written with it.

    Examples
    --------
    >>> def twice(me, p, data):
    ...     return 2 * (yield recv(1 - me))
    >>> def from_the_other_side(me, p, data):
    ...     return (yield from relay(twice(me, p, data), received=lambda x: -x))
    >>> steps = from_the_other_side(0, 2, None)
    >>> next(steps)
    Recv(src=1)
    >>> try:
    ...     steps.send(21)
    ... except StopIteration as done:
    ...     print(done.value)
    -42
    """
    result = None
    while True:
        try:
            operation = steps.send(result)
        except StopIteration as done:
            return done.value
        result = yield (operation if op is None else op(operation))
        if received is not None:
            result = received(result)
