"""What crosses between the trusted checker and a student's sandboxed process: data only.

The two sides of trusted grading (:mod:`collective_lib.autograde.checker`)
exchange length-prefixed JSON messages over pipes. Values are encoded by
:func:`encode` and rebuilt by :func:`decode` from a fixed set of types, so
nothing a student's process sends can run code in the checker: no pickle, no
student objects, only numbers, strings, containers, numeric numpy arrays, the
operation records a program yields, and references to the checker's own
callables (``{"$cb": i}``), which the student's side can only call back.

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
values of type Sneaky cannot be graded (use numbers, strings, lists, tuples, sets, dicts or numpy arrays)
"""
from __future__ import annotations

import json
import math
import os
import select
import struct
import time
from typing import Any, Callable

import numpy as np

from .. import ops as _ops
from ..shared_memory import ops as _memory_ops

__all__ = ["Undecodable", "encode", "decode", "send_message", "receive_message",
           "MAX_MESSAGE_BYTES"]

MAX_MESSAGE_BYTES = 8 << 20
_MAX_DEPTH = 60

# The records a program may yield, by name; a decoded record is rebuilt as the real type.
_RECORDS = {cls.__name__: cls for cls in (
    _ops.Send, _ops.Recv, _ops.SendRecv, _ops.Compute, _ops.Multi,
    _memory_ops.Read, _memory_ops.Write, _memory_ops.CAS, _memory_ops.FetchAdd,
    _memory_ops.Pause, _memory_ops.Marker)}


class Undecodable(ValueError):
    """A value that cannot cross between the checker and a student's process."""


def encode(value: Any, callbacks: list | None = None, _depth: int = 0) -> Any:
    """``value`` as JSON-ready data; callables go into ``callbacks`` as ``{"$cb": i}``."""
    if _depth > _MAX_DEPTH:
        raise Undecodable("a value nested too deeply cannot be graded")
    kind = type(value)
    if value is None or kind is bool or kind is str:
        return value
    if kind is int:
        return value if abs(value) < 2 ** 53 else {"$i": str(value)}
    if kind is float:
        return value if math.isfinite(value) else {"$f": repr(value)}

    def inner(item):
        return encode(item, callbacks, _depth + 1)

    if kind in _RECORDS.values():
        return {"$r": kind.__name__, "v": [inner(item) for item in value]}
    if kind is list:
        return [inner(item) for item in value]
    if kind is tuple:
        return {"$t": [inner(item) for item in value]}
    if kind is set or kind is frozenset:
        return {"$s" if kind is set else "$fs": [inner(item) for item in value]}
    if kind is dict:
        return {"$d": [[inner(k), inner(v)] for k, v in value.items()]}
    if kind is complex:
        return {"$c": [repr(value.real), repr(value.imag)]}
    if kind is np.ndarray and value.dtype.kind in "biufc":
        return {"$nd": [value.dtype.str, list(value.shape), inner(value.ravel().tolist())]}
    if isinstance(value, np.generic) and value.dtype.kind in "biufc":
        return {"$ng": [value.dtype.str, inner(value.item())]}
    if callbacks is not None and callable(value):
        callbacks.append(value)
        return {"$cb": len(callbacks) - 1}
    raise Undecodable(f"values of type {kind.__name__} cannot be graded (use numbers, "
                      "strings, lists, tuples, sets, dicts or numpy arrays)")


def decode(data: Any, callback: Callable[[int], Any] | None = None, _depth: int = 0) -> Any:
    """The value :func:`encode` encoded; ``callback(i)`` stands for ``{"$cb": i}``."""
    if _depth > _MAX_DEPTH:
        raise Undecodable("a value nested too deeply cannot be graded")
    kind = type(data)
    if data is None or kind in (bool, int, float, str):
        return data

    def inner(item):
        return decode(item, callback, _depth + 1)

    if kind is list:
        return [inner(item) for item in data]
    if kind is not dict or not data:
        raise Undecodable(f"malformed value {str(data)[:80]!r}")
    tag, body = next(iter(data.items()))
    try:
        if tag == "$i":
            return int(body)
        if tag == "$f":
            return float(body)
        if tag == "$t":
            return tuple(inner(item) for item in body)
        if tag == "$s":
            return {inner(item) for item in body}
        if tag == "$fs":
            return frozenset(inner(item) for item in body)
        if tag == "$d":
            return {inner(k): inner(v) for k, v in body}
        if tag == "$c":
            return complex(float(body[0]), float(body[1]))
        if tag == "$nd":
            dtype = np.dtype(body[0])
            if dtype.kind not in "biufc":
                raise Undecodable(f"arrays of {dtype} cannot be graded")
            return np.array(inner(body[2]), dtype=dtype).reshape(body[1])
        if tag == "$ng":
            dtype = np.dtype(body[0])
            if dtype.kind not in "biufc":
                raise Undecodable(f"numbers of {dtype} cannot be graded")
            return dtype.type(inner(body[1]))
        if tag == "$r" and body in _RECORDS:
            return _RECORDS[body](*(inner(item) for item in data["v"]))
        if tag == "$cb" and callback is not None and type(body) is int:
            return callback(body)
    except (TypeError, ValueError, KeyError, OverflowError) as err:
        if isinstance(err, Undecodable):
            raise
        raise Undecodable(f"malformed value ({type(err).__name__}: {err})") from None
    raise Undecodable(f"malformed value {str(data)[:80]!r}")


def send_message(fd: int, message: Any) -> None:
    """Write one JSON message, prefixed by its length, to the pipe ``fd``."""
    blob = json.dumps(message, separators=(",", ":")).encode()
    if len(blob) > MAX_MESSAGE_BYTES:
        raise Undecodable(f"a message of {len(blob)} bytes is over the limit of "
                          f"{MAX_MESSAGE_BYTES}")
    data = struct.pack("!I", len(blob)) + blob
    while data:
        data = data[os.write(fd, data):]


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


def receive_message(fd: int, deadline: float | None = None) -> Any:
    """Read one message from the pipe ``fd``; ``TimeoutError`` after ``deadline`` (monotonic)."""
    (size,) = struct.unpack("!I", _read_exactly(fd, 4, deadline))
    if size > MAX_MESSAGE_BYTES:
        raise Undecodable(f"a message of {size} bytes is over the limit of {MAX_MESSAGE_BYTES}")
    try:
        return json.loads(_read_exactly(fd, size, deadline))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise Undecodable(f"a message that is not JSON ({err})") from None
