"""Cutting a message into packets for pipelined algorithms, and gluing it back.

Sanders §13.1.2 reads a message of n words as k packets of at most
``ceil(n/k)`` words.  We cut like ``numpy.array_split``: the first ``n % k``
packets are one word longer than the rest, so every packet is non-empty.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Sequence

import numpy as np

from .validate import check_positive_int

__all__ = ["split_packets", "cut_evenly", "join_packets", "packet_words", "check_packet_count",
           "packet_counts_worth_trying", "best_packet_count"]


def packet_words(n: int, k: int, *, allow_empty: bool = False) -> int:
    """Size of the longest packet, ``ceil(n/k)``.

    >>> packet_words(10, 4)
    3

    A message is cut into at most n non-empty packets (``split_packets``), so
    k > n is refused, as the pipelined programs refuse it, unless
    ``allow_empty`` (the two-tree broadcast sends empty packets then).
    """
    check_positive_int("k", k)
    if k > n and not allow_empty:
        raise ValueError(f"cannot cut a message of {n} words into k={k} packets; choose k <= {n}")
    return -(-n // k)


def check_packet_count(p: int, m: int, k: int = 1, **_) -> None:
    """The ``valid_m`` of a pipelined algorithm: k must be an integer in 1..m.

    A ValueError names k (and m) otherwise, with the words the programs use.

    >>> check_packet_count(7, 3, k=4)
    Traceback (most recent call last):
    ...
    ValueError: cannot cut a message of 3 words into k=4 packets; choose k <= 3
    """
    packet_words(m, k)


def split_packets(message: Sequence, k: int, allow_empty: bool = False) -> list:
    """Cut ``message`` into ``k`` contiguous packets, the first ``n mod k`` one word longer.

    Every packet holds a word unless ``allow_empty`` (then a message of fewer than
    k words leaves the last packets empty; the ring all-reduce's blocks).

    >>> split_packets([1, 2, 3, 4, 5], 2)
    [[1, 2, 3], [4, 5]]
    >>> split_packets([1, 2], 3, allow_empty=True)
    [[1], [2], []]
    """
    check_positive_int("the number of packets k", k)
    try:
        n = len(message)
    except TypeError:
        raise TypeError(f"a pipelined algorithm needs a sequence (list, array, string) "
                        f"to cut into packets, got {type(message).__name__}") from None
    if k > n and not allow_empty:
        raise ValueError(f"cannot cut a message of {n} words into k={k} packets; choose k <= {n}")
    small, extra = divmod(n, k)
    packets, start = [], 0
    for i in range(k):
        stop = start + small + (i < extra)
        packets.append(message[start:stop])
        start = stop
    return packets


def cut_evenly(message: Sequence, k: int, who: str = "two_tree_broadcast") -> list:
    """k contiguous packets of floor or ceil(n/k) words; some are empty when k > n.

    ``who`` is the program named in the error for a message that cannot be cut.

    >>> cut_evenly([1, 2, 3, 4, 5], 2), cut_evenly([1], 3)
    ([[1, 2], [3, 4, 5]], [[], [], [1]])
    """
    try:
        n = len(message)
    except TypeError:
        raise TypeError(f"{who} needs a sequence (list, array, string) to cut "
                        f"into packets, got {type(message).__name__}") from None
    return [message[i * n // k:(i + 1) * n // k] for i in range(k)]


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


def packet_counts_worth_trying(m: int, even: bool = False) -> list:
    """The numbers of packets k that can minimize a cost ``(a + b k) * step(ceil(m/k))``, b >= 0.

    For a fixed packet size w = ceil(m/k) such a cost grows with k, so only the
    smallest k giving each size can win: ceil(m/w).  Sizes below sqrt(m) are
    enumerated through w, larger ones through k: O(sqrt m) candidates in all,
    and the minimum over them is the exact minimum over 1..m.  With
    ``even=True`` each candidate is rounded up to an even number (algorithms
    that split the packets between two trees).

    >>> packet_counts_worth_trying(10)
    [1, 2, 3, 4, 5, 10]
    """
    m = check_positive_int("m", m)
    root = math.isqrt(m) + 1
    ks = set(range(1, min(m, root) + 1))
    ks.update(-(-m // w) for w in range(1, root + 1))
    if even:
        ks = {k + k % 2 for k in ks if k + k % 2 <= max(2, m)}
    return sorted(ks)


def best_packet_count(cost: Callable, p: int, m: int, model, *, even: bool = False, **params) -> int:
    """The k that minimizes ``cost(p, m, model, k=k, **params)``; the smallest on ties.

    ``cost`` must have the pipelined shape of :func:`packet_counts_worth_trying`
    (true of every pipelined closed form in the catalog), so the answer is exact.
    """
    return min(packet_counts_worth_trying(m, even),
               key=lambda k: (cost(p, m, model, k=k, **params), k))
