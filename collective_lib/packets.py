"""Cutting a message into packets for pipelined algorithms, and gluing it back.

Sanders §13.1.2 reads a message of n words as k packets of at most
``ceil(n/k)`` words.  We cut like ``numpy.array_split``: the first ``n % k``
packets are one word longer than the rest, so every packet is non-empty.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

__all__ = ["split_packets", "join_packets", "packet_words"]


def packet_words(n: int, k: int) -> int:
    """Size of the longest packet, ``ceil(n/k)``.

    >>> packet_words(10, 4)
    3
    """
    return -(-n // k)


def split_packets(message: Sequence, k: int) -> list:
    """Cut ``message`` into ``k`` contiguous, non-empty packets.

    >>> split_packets([1, 2, 3, 4, 5], 2)
    [[1, 2, 3], [4, 5]]
    """
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise ValueError(f"the number of packets k must be an integer >= 1, got {k!r}")
    try:
        n = len(message)
    except TypeError:
        raise TypeError(f"a pipelined algorithm needs a sequence (list, array, string) "
                        f"to cut into packets, got {type(message).__name__}") from None
    if k > n:
        raise ValueError(f"cannot cut a message of {n} words into k={k} packets; choose k <= {n}")
    small, extra = divmod(n, k)
    packets, start = [], 0
    for i in range(k):
        stop = start + small + (i < extra)
        packets.append(message[start:stop])
        start = stop
    return packets


def join_packets(packets: list) -> Any:
    """Glue packets back into one message of the packets' own type.

    >>> join_packets([[1, 2, 3], [4, 5]])
    [1, 2, 3, 4, 5]
    """
    first = packets[0]
    if isinstance(first, np.ndarray):
        return np.concatenate(packets)
    if isinstance(first, str):
        return "".join(packets)
    joined = []
    for packet in packets:
        joined.extend(packet)                     # C-level copy; much faster than a comprehension
    return tuple(joined) if isinstance(first, tuple) else joined
