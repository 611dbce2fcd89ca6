"""Communication operations: the values an SPMD program yields.

A program is a generator function ``program(me, p, data, **params)``.  It
yields one of the records below, is resumed with the operation's result, and
returns its PE's final value.  The records are plain immutable values, so the
same program runs under any backend (the simulator or real MPI processes).

The ``||`` of the sources (Sanders' ``receive(...) || send(...)``, Grama's
simultaneous send and receive) is :func:`sendrecv`.

Every record keeps three rules, each stated once here (:func:`valid_words`,
:func:`valid_time`, :func:`valid_rank`): a message size is a non-negative
integer, a time is finite and non-negative, a rank is a non-negative integer
below p.  The constructors apply them; :func:`check_operation` applies them to
a record built without a constructor, and the simulator and the codec that
rebuilds a student's records refuse what breaks them (a NaN size would make a
run's time NaN, and a negative one would shorten it).
"""
from __future__ import annotations

import math
import reprlib
import sys
from numbers import Integral, Number, Real
from typing import Any, Callable, NamedTuple

__all__ = [
    "Send", "Recv", "SendRecv", "Compute", "Multi",
    "send", "recv", "sendrecv", "exchange", "compute", "multi",
    "size_in_words", "relay",
    "WORDS_RULE", "TIME_RULE", "RANK_RULE", "MAX_WORDS",
    "valid_words", "valid_time", "valid_rank", "check_operation", "shown",
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
    if type(size) is int and size >= 0:
        return size
    try:
        return len(data)
    except TypeError:
        return 1


# -- the rules every record keeps ------------------------------------------------------
# One function per rule, used by the constructors below, by the codec that rebuilds a
# student's records (collective_lib.autograde.codec) and by the simulator, which must
# also check records a program built without a constructor.  Each raises ValueError
# naming the field and its value.

#: Message sizes: Python or numpy integers, never a bool.
WORDS_RULE = "a message size must be a non-negative integer"
#: The largest message size plus one: every size below it is exact as a float, so that
#: its cost ``tw * words`` can be computed (2**53 words is 64 PiB of 8-byte words).
MAX_WORDS = 2 ** 53
#: Times (``compute``, and the shared-memory ``pause``): never NaN or infinite.
TIME_RULE = "a time must be a finite non-negative number"
#: Ranks: Python or numpy integers, never a bool; only a run knows its p.
RANK_RULE = "a rank must be a non-negative integer"

_LARGEST_FLOAT = sys.float_info.max
_shown = reprlib.Repr()
_shown.maxstring = _shown.maxother = 40


def shown(value: Any) -> str:
    """A short repr of ``value`` for a message (a long list is cut, not printed whole).

    >>> shown(float("nan")), shown(list(range(100)))
    ('nan', '[0, 1, 2, 3, 4, 5, ...]')
    """
    return _shown.repr(value)


def valid_words(words: Any, field: str = "words") -> int:
    """``words`` as an int if it is a message size: a non-negative integer, not a bool,
    below :data:`MAX_WORDS`.

    numpy integers count as integers.  Raises ValueError naming ``field`` and the value.

    >>> valid_words(3)
    3
    >>> valid_words(float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: words=nan: a message size must be a non-negative integer
    >>> valid_words(10 ** 20)
    Traceback (most recent call last):
    ...
    ValueError: words=100000000000000000000: a message size must be below 2**53 words
    """
    if type(words) is int and 0 <= words < MAX_WORDS:
        return words
    if isinstance(words, Integral) and not isinstance(words, bool) and words >= 0:
        if words < MAX_WORDS:
            return int(words)
        raise ValueError(f"{field}={shown(words)}: a message size must be below 2**53 words")
    raise ValueError(f"{field}={shown(words)}: {WORDS_RULE}")


def valid_time(time: Any, field: str = "time"):
    """``time`` if it is a finite non-negative real number (not a bool), else ValueError.

    >>> valid_time(2.5)
    2.5
    >>> valid_time(-1.0)
    Traceback (most recent call last):
    ...
    ValueError: time=-1.0: a time must be a finite non-negative number
    """
    if (type(time) is float or type(time) is int) and 0 <= time <= _LARGEST_FLOAT:
        return time
    if isinstance(time, Real) and not isinstance(time, bool):
        try:
            if math.isfinite(time) and time >= 0:
                return time
        except (OverflowError, TypeError, ValueError):     # an int too large for a float
            pass
    raise ValueError(f"{field}={shown(time)}: {TIME_RULE}")


def valid_rank(rank: Any, p: int | None = None, field: str = "rank") -> int:
    """``rank`` as an int if it is a rank: a non-negative integer (below ``p`` if given).

    >>> valid_rank(3), valid_rank(3, p=4)
    (3, 3)
    >>> valid_rank(4, p=4)
    Traceback (most recent call last):
    ...
    ValueError: rank=4: a rank must be an integer in 0..3
    """
    if isinstance(rank, Integral) and not isinstance(rank, bool) and rank >= 0 \
            and (p is None or rank < p):
        return int(rank)
    rule = RANK_RULE if p is None else f"a rank must be an integer in 0..{p - 1}"
    raise ValueError(f"{field}={shown(rank)}: {rule}")


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


_RECORDS = (Send, Recv, SendRecv, Compute, Multi)
_new = tuple.__new__


def send(dst: int, data: Any, words: int | None = None) -> Send:
    """Send ``data`` to PE ``dst``; ``words`` defaults to the size of ``data``."""
    return _new(Send, (dst, data, size_in_words(data) if words is None else valid_words(words)))


def recv(src: int) -> Recv:
    """Receive the next message from PE ``src`` (FIFO per sender, like MPI)."""
    return _new(Recv, (src,))


def sendrecv(dst: int, data: Any, src: int, words: int | None = None) -> SendRecv:
    """Send to ``dst`` and receive from ``src`` at the same time (the sources' ``||``)."""
    return _new(SendRecv, (dst, data, src,
                           size_in_words(data) if words is None else valid_words(words)))


def exchange(partner: int, data: Any, words: int | None = None) -> SendRecv:
    """Swap messages with ``partner``: ``sendrecv(partner, data, partner)``."""
    return _new(SendRecv, (partner, data, partner,
                           size_in_words(data) if words is None else valid_words(words)))


def compute(time: float) -> Compute:
    """Spend ``time`` units on local work (no communication)."""
    return _new(Compute, (valid_time(time),))


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
            triples.append((dst, data, size_in_words(data) if words is None
                            else valid_words(words)))
        else:
            raise ValueError(f"a send in multi() is (dst, data) or (dst, data, words), got {item!r}")
    return Multi(tuple(triples), tuple(recvs))


def check_operation(op: Any, p: int | None = None):
    """``op``, a record of this module, if it keeps every rule; else ValueError saying why.

    For a record a program built itself, or one rebuilt from a message: sizes
    must be non-negative integers, times finite and non-negative, ranks
    non-negative integers (below ``p`` if given), and a ``Multi`` must hold
    ``(dst, data, words)`` triples and sources.  Returns the record with its
    sizes and ranks as ints and a ``Multi``'s parts as tuples.  The message
    names the record, the field and the value.

    >>> check_operation(send(1, [1, 2]))
    Send(dst=1, data=[1, 2], words=2)
    >>> check_operation(Send(1, [1, 2], float("nan")))
    Traceback (most recent call last):
    ...
    ValueError: Send with words=nan: a message size must be a non-negative integer
    """
    kind = type(op)
    if kind not in _RECORDS:
        raise TypeError(f"{shown(op)} is not an operation; yield send(...), recv(...), "
                        "sendrecv(...), exchange(...), compute(...) or multi(...)")
    name = kind.__name__
    if len(op) != len(kind._fields):
        raise ValueError(f"{name} with {len(op)} fields instead of {len(kind._fields)}")
    try:
        if kind is SendRecv:
            dst, data, src, words = op
            return _new(SendRecv, (valid_rank(dst, p, "dst"), data, valid_rank(src, p, "src"),
                                   valid_words(words)))
        if kind is Send:
            dst, data, words = op
            return _new(Send, (valid_rank(dst, p, "dst"), data, valid_words(words)))
        if kind is Recv:
            return _new(Recv, (valid_rank(op[0], p, "src"),))
        if kind is Compute:
            return _new(Compute, (valid_time(op[0]),))
        sends, recvs = op
        for field, parts in (("sends", sends), ("recvs", recvs)):
            if type(parts) is not tuple and type(parts) is not list:
                raise ValueError(f"{field}={shown(parts)}: a multi()'s {field} are a tuple")
        triples = []
        for i, part in enumerate(sends):
            if (type(part) is not tuple and type(part) is not list) or len(part) != 3:
                raise ValueError(f"sends[{i}]={shown(part)}: a send of a multi() is a "
                                 "(dst, data, words) triple")
            triples.append((valid_rank(part[0], p, f"sends[{i}] dst"), part[1],
                            valid_words(part[2], f"sends[{i}] words")))
        sources = tuple(valid_rank(src, p, f"recvs[{i}]") for i, src in enumerate(recvs))
        return _new(Multi, (tuple(triples), sources))
    except ValueError as err:
        raise ValueError(f"{name} with {err}") from None


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
