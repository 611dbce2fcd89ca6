"""What crosses between the trusted checker and a student's sandboxed process: data only.

The two sides of trusted grading (:mod:`collective_lib.autograde.checker`)
exchange length-prefixed JSON messages over pipes. Values are encoded by
:func:`encode` and rebuilt by :func:`decode` from a fixed set of types, so
nothing a student's process sends can run code in the checker: no pickle, no
student objects, only numbers, strings, containers, ranges, numeric numpy arrays, the
operation records a program yields, and references to the checker's own
callables (``{"$cb": i}``), which the student's side can only call back. An instance
of a subclass of a builtin type (a ``namedtuple``, a ``defaultdict``, an ``IntEnum``)
crosses as its base type, read by the base type's own methods, so whatever its class
overrides (``__eq__``, ``__iter__``, ``__len__``) never runs in the checker; a
``Fraction`` or a ``Decimal`` crosses as the nearest float. A ``range`` crosses as
itself (a student's answer may be one, and it is one where Validate runs the checks),
and counts one item per number it holds, which a check may list.

What a student's process sends is checked as it is rebuilt: an operation record
must keep the rules of its kind (:func:`collective_lib.ops.check_operation`, a
size such as ``float("nan")`` or ``-3`` is refused with a message naming it), a
message holds at most :data:`MAX_MESSAGE_BYTES` bytes and a value at most
:data:`MAX_ITEMS` items, so the checker's memory stays bounded whatever arrives.

Examples
--------
>>> from collective_lib import sendrecv
>>> decode(encode([1, 2.5, (3, "x"), {frozenset({(0, 1)})}, sendrecv(1, [7], 2)]))
[1, 2.5, (3, 'x'), {frozenset({(0, 1)})}, SendRecv(dst=1, data=[7], src=2, words=1)]
>>> class Sneaky:
...     def __eq__(self, other):
...         return True
>>> try:
...     encode(Sneaky())
... except Undecodable as err:
...     print(err)
values of type Sneaky cannot be graded:
use numbers, strings, lists, tuples, sets, dicts or numpy arrays
"""
from __future__ import annotations

import json
import math
import os
import re
import select
import struct
import time
from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from .. import ops as _ops
from ..shared_memory import ops as _memory_ops

__all__ = ["Undecodable", "encode", "decode", "send_message", "receive_message",
           "MAX_MESSAGE_BYTES", "MAX_ITEMS"]

# What one message may hold, so that the checker's memory stays bounded whatever a
# student's process sends.  A message is parsed by json.loads, then rebuilt by decode();
# each Python object of either costs some 30-270 bytes, whatever few bytes of JSON made
# it, so a count of items bounds memory where a count of bytes cannot.  Before these
# limits (8 MiB, no count) one message of nested empty lists made 487 MiB of Python
# objects in the checker (tracemalloc peak; [[],[],...] 345 MiB, of which 173 MiB stayed
# in the decoded value).  With them the worst message measured, 99,999 empty sets
# ({"$s": []} each, 1 MiB of JSON), peaks at 45 MiB and keeps 21 MiB; one just over the
# count (150,000 of them, refused) peaks at 50 MiB, 0.9 s.  The largest honest value of
# the exercises is a few thousand numbers (grid_alltoall's 32 x 32 messages of 4 words
# cross as one row per PE), far below both limits.
#: Bytes of one JSON message.
MAX_MESSAGE_BYTES = 2 << 20
#: Items of one value: every container and every scalar counts one.
MAX_ITEMS = 100_000
_MAX_DEPTH = 60
# JSON values a message of MAX_ITEMS items may need: a tagged container ({"$t": [...]})
# is an object, its key and its list; a complex number, its two strings too.
_MAX_JSON_VALUES = 6 * MAX_ITEMS + 64
# A set or dict may hold this many items whose hash repeats that of another: Python
# builds one in time quadratic in its colliding keys (ints n * (2**61 - 1) all hash to 0).
_MAX_SHARED_HASHES = 64

# The records a program may yield, by name; a decoded record is rebuilt as the real type
# and must keep the rules of its kind (ops.check_operation, check_memory_operation).
_RECORDS = {cls.__name__: cls for cls in (
    *_ops.RECORDS,
    _memory_ops.Read, _memory_ops.Write, _memory_ops.CAS, _memory_ops.FetchAdd,
    _memory_ops.Pause, _memory_ops.Marker)}
_CHECK = {cls: (_ops.check_operation if cls.__module__ == _ops.__name__
                else _memory_ops.check_memory_operation) for cls in _RECORDS.values()}


class Undecodable(ValueError):
    """A value that cannot cross between the checker and a student's process."""


def _too_many(max_items: int) -> Undecodable:
    return Undecodable(f"a value of more than {max_items:,} items cannot be graded")


def encode(value: Any, callbacks: list | None = None, *, max_items: int = MAX_ITEMS) -> Any:
    """``value`` as JSON-ready data; callables go into ``callbacks`` as ``{"$cb": i}``.

    An instance of a subclass of a builtin type (a ``namedtuple``, a ``defaultdict``,
    an ``IntEnum``, a ``str`` subclass) is sent as its base type, its data read by
    the base type's own methods, never by the subclass's; of an operation record's
    subclass, as the record. A ``fractions.Fraction`` or ``decimal.Decimal`` is
    sent as the nearest float. So :func:`decode` rebuilds exact builtin types and
    no method of the value's class runs on the other side:

    >>> from collections import defaultdict, namedtuple
    >>> Item = namedtuple("Item", "src msg")
    >>> table = defaultdict(list)
    >>> table[1].append(Item(0, [5]))
    >>> decode(encode(table))
    {1: [(0, [5])]}
    >>> from fractions import Fraction
    >>> decode(encode([Fraction(7, 2), Fraction(1, 3)]))
    [3.5, 0.3333333333333333]

    Raises :class:`Undecodable` for what is not data, for a number too large for a
    float, and for a value of more than ``max_items`` items (what :func:`decode`
    would refuse).
    """
    kind = type(value)
    if max_items > 0 and (value is None or kind is bool or kind is str or
                          kind is int and -2 ** 53 < value < 2 ** 53):
        return value            # a plain scalar (most values a lock or a PE is sent) as is
    left = max_items

    def encoded(value: Any, depth: int) -> Any:
        nonlocal left
        left -= 1
        if left < 0:
            raise _too_many(max_items)
        if depth > _MAX_DEPTH:
            raise Undecodable("a value nested too deeply cannot be graded")
        kind = type(value)
        if value is None or kind is bool or kind is str:
            return value
        if kind is int:
            return value if abs(value) < 2 ** 53 else {"$i": str(value)}
        if kind is float:
            return value if math.isfinite(value) else {"$f": repr(value)}
        base = kind if kind in _DATA_TYPES else _data_type(kind)
        if base is np.generic and value.dtype.kind not in "biufc" and isinstance(value, str):
            base = str                                  # numpy's str_
        if base is not kind and base in _SCALARS:       # read as the base type reads it
            left += 1                                   # one item, as the exact type is
            return encoded(_SCALARS[base](value), depth)
        if base is None and isinstance(value, (Fraction, Decimal)):
            left += 1
            return encoded(_nearest_float(value), depth)
        depth += 1
        if base in _CHECK:
            return {"$r": base.__name__, "v": [encoded(item, depth)
                                                for item in tuple.__iter__(value)]}
        if base is list:
            return [encoded(item, depth) for item in list.__iter__(value)]
        if base is tuple:
            return {"$t": [encoded(item, depth) for item in tuple.__iter__(value)]}
        if base is set or base is frozenset:
            return {"$s" if base is set else "$fs": [encoded(item, depth)
                                                     for item in base.__iter__(value)]}
        if base is dict:
            return {"$d": [[encoded(k, depth), encoded(v, depth)]
                           for k, v in dict.items(value)]}
        if base is complex:
            return {"$c": [repr(complex.real.__get__(value)), repr(complex.imag.__get__(value))]}
        if kind is range:                   # range cannot be subclassed
            left -= _range_items(value, left, max_items)
            return {"$rg": [encoded(value.start, depth), encoded(value.stop, depth),
                            encoded(value.step, depth)]}
        if base is np.ndarray:
            array = np.ndarray.view(value, np.ndarray)
            if array.dtype.kind not in "biufc":
                raise Undecodable(f"numpy arrays of dtype {array.dtype} cannot be graded "
                                  "(use arrays of numbers, or lists)")
            if array.size > left:
                raise _too_many(max_items)
            return {"$nd": [array.dtype.str, list(array.shape),
                            encoded(array.ravel().tolist(), depth)]}
        if base is np.generic and value.dtype.kind in "biufc":
            return {"$ng": [value.dtype.str, encoded(value.item(), depth)]}
        if callbacks is not None and callable(value):
            callbacks.append(value)
            return {"$cb": len(callbacks) - 1}
        raise Undecodable(f"values of type {kind.__name__} cannot be graded:\nuse numbers, "
                          "strings, lists, tuples, sets, dicts or numpy arrays")

    return encoded(value, 0)


# What a value crosses as, by type: a builtin, an operation record or numpy's array or
# scalar; an instance of a subclass of one of them crosses as that one (_data_type).
_DATA_TYPES = frozenset({int, float, complex, str, list, tuple, set, frozenset, dict,
                         np.ndarray, np.generic, *_CHECK})
# The scalar types, each with its own method that gives a subclass's value as an exact
# instance of the type itself (int(x) or str(x) would call the subclass's __int__, __str__).
_SCALARS = {int: int.__index__, float: float.__float__, str: str.__str__}


def _data_type(kind: type) -> type | None:
    """The first of ``_DATA_TYPES`` among the classes ``kind`` derives from (a record
    before ``tuple``), or ``None``; from its real ``__mro__``, whatever its metaclass says."""
    return next((cls for cls in _MRO.__get__(kind) if cls in _DATA_TYPES), None)


_MRO = type.__dict__["__mro__"]


def _range_items(numbers: range, left: int, max_items: int) -> int:
    """How many items ``numbers`` counts (the numbers it holds: a check may list them);
    refused if more than ``left`` are left of the value's ``max_items``."""
    try:
        count = range.__len__(numbers)
    except OverflowError:               # more numbers than an index can count
        count = left + 1
    if count > left:
        raise _too_many(max_items)
    return count


def _nearest_float(number: Fraction | Decimal) -> float:
    """A ``Fraction`` or a ``Decimal`` (or an instance of a subclass) as the nearest float,
    read from its own fields; refused if it is finite but too large for a float.

    A float is what the tasks ask for, and what the checks format (``f"{x:g}"`` fails on
    a ``Fraction`` before Python 3.12) and take for ``numbers.Real`` (a ``Decimal`` is not).
    """
    if isinstance(number, Fraction):
        numerator, denominator = Fraction.numerator.fget(number), Fraction.denominator.fget(number)
        if not (type(numerator) is int and type(denominator) is int and denominator > 0):
            raise Undecodable(f"a {type(number).__name__} whose numerator and denominator "
                              "are not integers cannot be graded")
        try:
            return numerator / denominator              # rounded once, as float() rounds
        except OverflowError:
            size = round((numerator.bit_length() - denominator.bit_length()) * math.log10(2))
            raise Undecodable(f"a Fraction of about 10**{size}, too large for a float, "
                              "cannot be graded") from None
    text = Decimal.__str__(number)
    if Decimal.is_nan(number):                          # "sNaN" is no float's text
        return math.nan
    nearest = float(text)
    if math.isinf(nearest) and Decimal.is_finite(number):
        raise Undecodable(f"the Decimal {text[:40]} is too large for a float and cannot be "
                          "graded")
    return nearest


def decode(data: Any, callback: Callable[[int], Any] | None = None, *,
           max_items: int = MAX_ITEMS) -> Any:
    """The value :func:`encode` encoded; ``callback(i)`` stands for ``{"$cb": i}``.

    Raises :class:`Undecodable` for anything else: a malformed value, one of
    more than ``max_items`` items (containers and scalars, each counted once,
    so the value this builds stays small), a set or dict whose items collide
    in their hashes, and an operation record that breaks a rule of its kind,
    with a message naming the record, the field and the value:

    >>> decode({"$r": "Send", "v": [1, [7], {"$f": "nan"}]})
    Traceback (most recent call last):
    ...
    collective_lib.autograde.codec.Undecodable: Send with words=nan: a message size must be a non-negative integer
    """
    kind = type(data)
    if max_items > 0 and (data is None or kind is bool or kind is int or kind is float or
                          kind is str):
        return data             # a plain scalar, as the walk below would give it back
    left = max_items

    def decoded(data: Any, depth: int) -> Any:
        nonlocal left
        left -= 1
        if left < 0:
            raise _too_many(max_items)
        if depth > _MAX_DEPTH:
            raise Undecodable("a value nested too deeply cannot be graded")
        kind = type(data)
        if data is None or kind is bool or kind is int or kind is float or kind is str:
            return data
        depth += 1
        if kind is list:
            return [decoded(item, depth) for item in data]
        if kind is not dict or not data:
            raise Undecodable(f"malformed value {str(data)[:80]!r}")
        tag, body = next(iter(data.items()))
        try:
            if tag == "$i":
                return int(body)
            if tag == "$f":
                return float(body)
            if tag == "$t":
                return tuple([decoded(item, depth) for item in body])
            if tag == "$s" or tag == "$fs":
                items = _distinct([decoded(item, depth) for item in body], "set")
                return set(items) if tag == "$s" else frozenset(items)
            if tag == "$d":
                pairs = [(decoded(k, depth), decoded(v, depth)) for k, v in body]
                _distinct([k for k, _ in pairs], "dict")
                return dict(pairs)
            if tag == "$c":
                return complex(float(body[0]), float(body[1]))
            if tag == "$rg":
                bounds = [decoded(item, depth) for item in body]
                if len(bounds) != 3 or any(type(bound) is not int for bound in bounds):
                    raise Undecodable(f"malformed range {str(body)[:80]!r}")
                numbers = range(*bounds)
                left -= _range_items(numbers, left, max_items)
                return numbers
            if tag == "$nd":
                dtype = np.dtype(body[0])
                if dtype.kind not in "biufc":
                    raise Undecodable(f"arrays of {dtype} cannot be graded")
                return np.array(decoded(body[2], depth), dtype=dtype).reshape(body[1])
            if tag == "$ng":
                dtype = np.dtype(body[0])
                if dtype.kind not in "biufc":
                    raise Undecodable(f"numbers of {dtype} cannot be graded")
                return dtype.type(decoded(body[1], depth))
            if tag == "$r" and body in _RECORDS:
                cls = _RECORDS[body]
                record = cls(*[decoded(item, depth) for item in data["v"]])
                try:
                    return _CHECK[cls](record)
                except ValueError as err:       # a size, time, rank or cell that breaks a rule
                    raise Undecodable(str(err)) from None
            if tag == "$cb" and callback is not None and type(body) is int:
                return callback(body)
        except (TypeError, ValueError, KeyError, OverflowError) as err:
            if isinstance(err, Undecodable):
                raise
            raise Undecodable(f"malformed value ({type(err).__name__}: {err})") from None
        raise Undecodable(f"malformed value {str(data)[:80]!r}")

    return decoded(data, 0)


def _distinct(items: list, what: str) -> list:
    """``items`` unless too many of them share a hash with another (see _MAX_SHARED_HASHES).

    An encoded set or dict never repeats an item, so only a forged one gets refused.
    """
    if len(items) > _MAX_SHARED_HASHES and \
            len(items) - len({hash(item) for item in items}) > _MAX_SHARED_HASHES:
        raise Undecodable(f"a {what} whose items repeat or collide in their hash values "
                          "cannot be graded")
    return items


# Made once: json.dumps and json.loads with options build a new coder on every call, a
# third of the time of a small message (grading exchanges some 100,000 of them).
_ENCODER = json.JSONEncoder(separators=(",", ":"))
_DECODER = json.JSONDecoder()


def send_message(fd: int, message: Any, deadline: float | None = None) -> None:
    """Write one JSON message, prefixed by its length, to the pipe ``fd``; ``TimeoutError``
    after ``deadline`` (monotonic) when the reader at the other end does not read."""
    blob = _ENCODER.encode(message).encode()
    if len(blob) > MAX_MESSAGE_BYTES:
        raise Undecodable(f"a message of {len(blob)} bytes is over the limit of "
                          f"{MAX_MESSAGE_BYTES}")
    data = struct.pack("!I", len(blob)) + blob
    while data:
        if deadline is None:
            data = data[os.write(fd, data):]
            continue
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([], [fd], [], left)[1]:
            raise TimeoutError
        # a pipe that selects as writable takes PIPE_BUF bytes without blocking
        data = data[os.write(fd, data[:select.PIPE_BUF]):]


def _read_exactly(fd: int, size: int, deadline: float | None) -> bytes:
    chunks, missing = [], size
    while missing:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(missing, 1 << 20))
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        missing -= len(chunk)
    return b"".join(chunks)


# A JSON string: from a quote to the next quote that no backslash escapes.
_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)


def _json_values(blob: bytes) -> int:
    """At most how many JSON values json.loads builds from ``blob`` (before it fails, if
    it is not JSON): every value but the first is an element of an array (the first one
    follows its "[", every other one a ","), or an object's key or value (around a ":").

    The count is of the brackets, commas and colons outside strings: a string is one
    value however many of them it holds (700,000 commas in one string were refused as
    "more than 100,000 items"). The quick count, strings included, is an upper bound;
    the strings are cut out only when it is over the limit.

    >>> _json_values(b'[1,[2,3],{"a":4}]')
    8
    >>> _json_values(b'{"ret":"' + b',' * 700_000 + b'"}')
    3
    """
    def count(data: bytes) -> int:
        return 1 + data.count(b"[") + data.count(b",") + 2 * data.count(b":")
    values = count(blob)
    if values > _MAX_JSON_VALUES:
        values = count(_STRING.sub(b'""', blob))
    return values


def receive_message(fd: int, deadline: float | None = None) -> Any:
    """Read one message from the pipe ``fd``; ``TimeoutError`` after ``deadline`` (monotonic).

    Raises :class:`Undecodable` for a message over :data:`MAX_MESSAGE_BYTES`,
    one that is not JSON, and one that may hold more JSON values than a value
    of :data:`MAX_ITEMS` items needs (counted before parsing, from its commas,
    colons and brackets outside strings, so json.loads never builds more).
    """
    (size,) = struct.unpack("!I", _read_exactly(fd, 4, deadline))
    if size > MAX_MESSAGE_BYTES:
        raise Undecodable(f"a message of {size} bytes is over the limit of {MAX_MESSAGE_BYTES}")
    blob = _read_exactly(fd, size, deadline)
    if _json_values(blob) > _MAX_JSON_VALUES:
        raise _too_many(MAX_ITEMS)
    try:
        return _DECODER.decode(blob.decode())
    except ValueError as err:       # not UTF-8 or not JSON, or an int of over 4300 digits
        raise Undecodable(f"a message that is not JSON ({err})") from None
