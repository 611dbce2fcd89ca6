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

Every kind of record also says once what it sends and receives, so that code
which handles operations in general (a group's rank translation, a recording,
a grader's copies, the MPI backend) needs no case per kind:
``op.parts()`` gives its :class:`Parts` (sends, sources, compute time),
``type(op).from_parts(parts)`` rebuilds the same kind from changed parts, and
``op.result(received)`` makes the value a program is resumed with from the
payloads received.  :func:`mapped` rebuilds a record with its ranks or its
payloads changed.  :data:`RECORDS` lists the kinds.
"""
from __future__ import annotations

import math
import reprlib
import sys
from numbers import Integral, Number, Real
from typing import Any, Callable, NamedTuple

__all__ = [
    "Send", "Recv", "SendRecv", "Compute", "Multi", "RECORDS", "Parts", "mapped",
    "send", "recv", "sendrecv", "exchange", "compute", "multi",
    "size_in_words", "relay",
    "WORDS_RULE", "TIME_RULE", "RANK_RULE", "MAX_WORDS",
    "valid_words", "valid_time", "valid_rank", "check_operation", "shown", "waiting_for",
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


# The records are named tuples: immutable, cheap to build, and printable.  Each kind
# says once what it sends and receives (parts), how it is rebuilt from changed parts
# (from_parts) and what its result is (result); see Parts.

_new = tuple.__new__


class Parts(NamedTuple):
    """What one operation sends, receives and spends, whatever its kind.

    Every record of this module has the same interface:

    ``op.parts()``
        its :class:`Parts`;
    ``type(op).from_parts(parts)``
        the same kind of record made from ``parts`` (changed ranks or
        payloads); ``type(op).from_parts(op.parts()) == op``.  Raises
        ValueError if ``parts`` (a :class:`Parts` or any ``(sends, sources,
        time)`` triple) do not fit the kind (a ``Send`` has one send, no
        source and no time).  The rules of :func:`check_operation` are not
        applied;
    ``op.result(received)``
        the value the program is resumed with, from the payloads ``received``
        from ``sources``, in their order: ``None`` for ``Send`` and
        ``Compute``, the one payload for ``Recv`` and ``SendRecv``, the list
        of them for ``Multi``;
    ``op.waiting()``
        what a PE blocked in it waits for, as a deadlock's message says it.

    Attributes
    ----------
    sends : tuple
        ``(dst, data, words)`` triples, one per message sent.
    sources : tuple
        The ranks a message is received from, in the order of the results.
    time : number
        Local work (``Compute``); 0 for an operation that communicates.

    Examples
    --------
    >>> op = sendrecv(1, "x", 2)
    >>> op.parts()
    Parts(sends=((1, 'x', 1),), sources=(2,), time=0)
    >>> op.result(["y"])
    'y'
    >>> SendRecv.from_parts(Parts(((5, "x", 1),), (6,))) == sendrecv(5, "x", 6)
    True
    >>> [type(op).__name__ for op in (send(1, 7), recv(0), compute(2.0), multi([(1, 7)], [2]))
    ...  if type(op).from_parts(op.parts()) == op]
    ['Send', 'Recv', 'Compute', 'Multi']
    """
    sends: tuple
    sources: tuple
    time: Any = 0


def _unfitting(kind, parts, sends: int | None, sources: int | None, work: bool = False):
    """The ValueError for ``parts`` that do not make a ``kind``."""
    return ValueError(f"a {kind.__name__} is made of {_counted(sends, 'send')}, "
                      f"{_counted(sources, 'source')}{' and a time' if work else ''}, "
                      f"not {shown(tuple(parts))}")


def _counted(n: int | None, what: str) -> str:
    return f"any number of {what}s" if n is None else f"{n} {what}{'' if n == 1 else 's'}"


class Send(NamedTuple):
    """Send ``data`` (``words`` long) to PE ``dst``; the result is ``None``.

    >>> send(3, [1, 2]).parts()
    Parts(sends=((3, [1, 2], 2),), sources=(), time=0)
    """
    dst: int
    data: Any
    words: int

    def parts(self) -> Parts:
        """One send, no source (see :class:`Parts`)."""
        return _new(Parts, (((self[0], self[1], self[2]),), (), 0))

    @classmethod
    def from_parts(cls, parts) -> "Send":
        """The send of ``parts``, which hold one send and nothing else."""
        sends, sources, time = parts
        if len(sends) != 1 or sources or time:
            raise _unfitting(cls, parts, 1, 0)
        dst, data, words = sends[0]
        return _new(cls, (dst, data, words))

    def result(self, received) -> None:
        """``None``: a send returns nothing."""
        return None

    def waiting(self) -> str:
        """What a PE blocked in this operation waits for (in a deadlock's message)."""
        return f"send(dst={self[0]}): PE {self[0]} never posted the matching receive"


class Recv(NamedTuple):
    """Receive the next message from PE ``src``; the result is its payload.

    >>> recv(2).parts(), recv(2).result(["x"])
    (Parts(sends=(), sources=(2,), time=0), 'x')
    """
    src: int

    def parts(self) -> Parts:
        """No send, one source (see :class:`Parts`)."""
        return _new(Parts, ((), (self[0],), 0))

    @classmethod
    def from_parts(cls, parts) -> "Recv":
        """The receive of ``parts``, which hold one source and nothing else."""
        sends, sources, time = parts
        if sends or len(sources) != 1 or time:
            raise _unfitting(cls, parts, 0, 1)
        return _new(cls, (sources[0],))

    def result(self, received):
        """The one payload received."""
        return received[0]

    def waiting(self) -> str:
        """What a PE blocked in this operation waits for (in a deadlock's message)."""
        return f"recv(src={self[0]})"


class SendRecv(NamedTuple):
    """Send to ``dst`` while receiving from ``src``; the result is the payload received.

    >>> exchange(1, "x").parts()
    Parts(sends=((1, 'x', 1),), sources=(1,), time=0)
    """
    dst: int
    data: Any
    src: int
    words: int

    def parts(self) -> Parts:
        """One send and one source (see :class:`Parts`)."""
        return _new(Parts, (((self[0], self[1], self[3]),), (self[2],), 0))

    @classmethod
    def from_parts(cls, parts) -> "SendRecv":
        """The sendrecv of ``parts``, which hold one send and one source."""
        sends, sources, time = parts
        if len(sends) != 1 or len(sources) != 1 or time:
            raise _unfitting(cls, parts, 1, 1)
        dst, data, words = sends[0]
        return _new(cls, (dst, data, sources[0], words))

    def result(self, received):
        """The one payload received."""
        return received[0]

    def waiting(self) -> str:
        """What a PE blocked in this operation waits for (in a deadlock's message)."""
        return (f"sendrecv(dst={self[0]}, src={self[2]}): its message from PE {self[2]} "
                "never came")


class Compute(NamedTuple):
    """Local work taking ``time`` units; the result is ``None``.

    >>> compute(2.5).parts()
    Parts(sends=(), sources=(), time=2.5)
    """
    time: float

    def parts(self) -> Parts:
        """No send, no source, the time (see :class:`Parts`)."""
        return _new(Parts, ((), (), self[0]))

    @classmethod
    def from_parts(cls, parts) -> "Compute":
        """The work of ``parts``, which hold a time and nothing else."""
        sends, sources, time = parts
        if sends or sources:
            raise _unfitting(cls, parts, 0, 0, work=True)
        return _new(cls, (time,))

    def result(self, received) -> None:
        """``None``: local work returns nothing."""
        return None

    def waiting(self) -> str:
        """Nothing: local work never blocks (kept so that every kind answers)."""
        return repr(self)


class Multi(NamedTuple):
    """Several sends and receives at once (multi-port machines such as the CM-200).

    ``sends`` is a tuple of ``(dst, data, words)``; ``recvs`` a tuple of
    sources.  The result is the list of payloads received, in the order of
    ``recvs``.  How many of the transfers really overlap is decided by the
    cost model's ``ports``.

    >>> op = multi([(1, "a"), (2, "b")], [1, 2])
    >>> op.parts().sources, op.result(["x", "y"])
    ((1, 2), ['x', 'y'])
    """
    sends: tuple
    recvs: tuple

    def parts(self) -> Parts:
        """Its sends and its sources, as they are (see :class:`Parts`)."""
        return _new(Parts, (self[0], self[1], 0))

    @classmethod
    def from_parts(cls, parts) -> "Multi":
        """The multi of ``parts``: any sends and sources, no time."""
        sends, sources, time = parts
        if time:
            raise _unfitting(cls, parts, None, None)
        return _new(cls, (tuple(sends), tuple(sources)))

    def result(self, received) -> list:
        """The list of payloads received, in the order of the sources."""
        return list(received)

    def waiting(self) -> str:
        """What a PE blocked in this operation waits for (in a deadlock's message)."""
        return f"multi(recvs={list(self[1])}): not every message arrived"


#: Every kind of record a program may yield (each has ``parts``, ``from_parts`` and
#: ``result``: see :class:`Parts`).
RECORDS = (Send, Recv, SendRecv, Compute, Multi)


def waiting_for(op) -> str:
    """What a PE blocked on ``op`` waits for, in a deadlock's message: the record says it."""
    return op.waiting() if type(op) in RECORDS else repr(op)


def _not_an_operation(op) -> TypeError:
    return TypeError(f"{shown(op)} is not an operation; yield send(...), recv(...), "
                     "sendrecv(...), exchange(...), compute(...) or multi(...)")


def mapped(op, rank: Callable | None = None, payload: Callable | None = None):
    """The same kind of operation with its ranks or its payloads changed.

    Parameters
    ----------
    op : record of :data:`RECORDS`
    rank : callable, optional
        Applied to every destination and source rank.
    payload : callable, optional
        Applied to every payload sent.

    Returns
    -------
    record
        A record of ``op``'s kind (``op`` itself if it has nothing to change);
        sizes and times are kept.  The rules of :func:`check_operation` are
        not applied.

    Raises
    ------
    TypeError
        If ``op`` is not a record of this module.

    Examples
    --------
    >>> members = [10, 20, 30]
    >>> mapped(sendrecv(1, "x", 2), rank=members.__getitem__)
    SendRecv(dst=20, data='x', src=30, words=1)
    >>> mapped(multi([(0, "ab")], [2]), rank=members.__getitem__, payload=str.upper)
    Multi(sends=((10, 'AB', 2),), recvs=(30,))
    >>> mapped(compute(1.5), rank=members.__getitem__)
    Compute(time=1.5)
    """
    kind = type(op)
    if kind not in RECORDS:
        raise _not_an_operation(op)
    sends, sources, time = op.parts()
    if rank is None:
        if payload is None or not sends:
            return op
        rank = _same
    elif not sends and not sources:
        return op
    elif len(sources) == 1:              # the common shapes: no list built for one part
        sources = (rank(sources[0]),)
    else:
        sources = tuple([rank(src) for src in sources])
    if payload is None:
        payload = _same
    if len(sends) == 1:
        dst, data, words = sends[0]
        sends = ((rank(dst), payload(data), words),)
    else:
        sends = tuple([(rank(dst), payload(data), words) for dst, data, words in sends])
    return kind.from_parts((sends, sources, time))


def _same(value):
    return value


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
    if kind not in RECORDS:
        raise _not_an_operation(op)
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
