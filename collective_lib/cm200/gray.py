"""Binary-reflected Gray codes and the Hamiltonian cycle they trace in a d-cube.

The d-bit binary-reflected Gray code is the sequence ``G(0), G(1), ...,
G(2**d - 1)`` built by reflection: the (d+1)-bit code is the d-bit code with a
0 in front, followed by the d-bit code read backwards with a 1 in front
(Mathur and Johnsson 1993, §3, Table 1).  Successive codes, and the last and
the first, differ in exactly one bit, so the sequence is a Hamiltonian cycle
of the binary d-cube: ring position q sits on node ``G(q)``.

Names used below, as in the paper:

* ``G(i) = i XOR (i >> 1)`` (:func:`gray`) and its inverse ``G^-1``, the
  running XOR of the bits from the top down (:func:`gray_inverse`);
* the *transition sequence*, the bit that changes from ``G(u)`` to
  ``G(u + 1)`` (:func:`transition_sequence`; 0, 1, 0, 2, 0, 1, 0 for d = 3);
* ``sh``, the left cyclic shift of a d-bit string (:func:`sh`).

:func:`gray`, :func:`gray_inverse` and :func:`sh` accept Python ints and numpy
integer arrays alike.

Source: K. K. Mathur and S. L. Johnsson, All-to-All Communication on the
Connection Machine CM-200, Harvard TR-02-93 (1993), §3 and Table 1.
"""
from __future__ import annotations

from numbers import Integral

import numpy as np

__all__ = ["gray", "gray_inverse", "gray_code", "transition_sequence", "sh", "bits",
           "ring_embedding", "gray_table"]


def _check_d(d) -> int:
    if not isinstance(d, Integral) or isinstance(d, bool) or d < 0:
        raise ValueError(f"d must be an integer >= 0, got d={d!r}")
    return int(d)


def _check_nonnegative(name, x):
    """Integers only (Python or numpy), and none negative."""
    if isinstance(x, np.ndarray):
        if not np.issubdtype(x.dtype, np.integer):
            raise ValueError(f"{name} must hold integers, got an array of {x.dtype}")
        if x.size and x.min() < 0:
            raise ValueError(f"{name} must be >= 0, got {x.min()}")
        return x
    if not isinstance(x, Integral) or isinstance(x, bool) or x < 0:
        raise ValueError(f"{name} must be an integer >= 0, got {x!r}")
    return int(x)


def gray(i):
    """The binary-reflected Gray code ``G(i) = i XOR (i >> 1)``.

    Examples
    --------
    >>> [gray(i) for i in range(8)]
    [0, 1, 3, 2, 6, 7, 5, 4]
    >>> gray(np.arange(4))
    array([0, 1, 3, 2])
    """
    i = _check_nonnegative("i", i)
    return i ^ (i >> 1)


def gray_inverse(g):
    """``G^-1(g)``: the integer whose Gray code is ``g``.

    Bit k of the result is the XOR of bits k and above of ``g``; folding
    ``g`` onto itself with shifts 1, 2, 4, ... computes all of them at once.

    Examples
    --------
    >>> gray_inverse(0b101)          # Mathur and Johnsson §4.1: the code 101 is 6
    6
    >>> gray_inverse(gray(np.arange(8)))
    array([0, 1, 2, 3, 4, 5, 6, 7])
    """
    g = _check_nonnegative("g", g)
    top = int(g.max()) if isinstance(g, np.ndarray) and g.size else (g if isinstance(g, int) else 0)
    shift = 1
    while top >> shift:
        g = g ^ (g >> shift)
        shift <<= 1
    return g


def gray_code(d: int) -> np.ndarray:
    """The d-bit code ``(G(0), ..., G(2**d - 1))`` as an int64 array.

    >>> gray_code(3).tolist()
    [0, 1, 3, 2, 6, 7, 5, 4]
    """
    return gray(np.arange(1 << _check_d(d), dtype=np.int64))


def transition_sequence(d: int, cyclic: bool = False) -> np.ndarray:
    """The bits that change along the d-bit Gray code, bit 0 the least significant.

    Entry u is the bit in which ``G(u)`` and ``G(u + 1)`` differ: the number of
    trailing zeros of ``u + 1``.  There are ``2**d - 1`` entries; with
    ``cyclic=True`` the step from the last code back to ``G(0)`` (bit d-1)
    is appended, as in the paper's example "0, 1, 0, 2, 0, 1, 0 and 2".
    The sequence reads the same backwards (Mathur and Johnsson §4.2.3).

    >>> transition_sequence(3).tolist()
    [0, 1, 0, 2, 0, 1, 0]
    >>> transition_sequence(3, cyclic=True).tolist()
    [0, 1, 0, 2, 0, 1, 0, 2]
    """
    d = _check_d(d)
    u1 = np.arange(1, 1 << d, dtype=np.int64)
    lowest = u1 & -u1                                   # 2**(trailing zeros of u + 1)
    seq = np.log2(lowest).astype(np.int64) if lowest.size else lowest
    if cyclic and d > 0:
        seq = np.append(seq, d - 1)
    return seq


def sh(x, d: int, k: int = 1):
    """Left cyclic shift of the d-bit string ``x`` by ``k`` places (the paper's ``sh^k``).

    ``x`` and ``k`` may be integers or numpy integer arrays (broadcast together).

    >>> sh(0b011, 3), sh(0b011, 3, k=2), sh(0b100, 3)
    (6, 5, 1)
    """
    d = _check_d(d)
    x = _check_nonnegative("x", x)
    if isinstance(k, np.ndarray):
        if not np.issubdtype(k.dtype, np.integer):
            raise ValueError(f"the shifts k must be integers, got an array of {k.dtype}")
    elif not isinstance(k, Integral) or isinstance(k, bool):
        raise ValueError(f"the shift k must be an integer, got k={k!r}")
    if d == 0:
        return x
    too_big = (x >> d).any() if isinstance(x, np.ndarray) else x >> d
    if too_big:
        raise ValueError(f"x must fit in d={d} bits, got x={x!r}")
    k %= d
    mask = (1 << d) - 1
    return ((x << k) | (x >> (d - k))) & mask


def bits(x: int, d: int) -> str:
    """``x`` written with d binary digits, most significant first.

    >>> bits(5, 3)
    '101'
    """
    return format(_check_nonnegative("x", x), f"0{_check_d(d)}b") if d else ""


def ring_embedding(d: int) -> np.ndarray:
    """The ring of ``2**d`` positions laid on the d-cube: position q on node ``G(q)``.

    Consecutive positions, and the last and the first, are cube neighbours,
    so a cyclic shift along the ring is one exchange per node.  It is
    :func:`gray_code` under the name the algorithms use.

    >>> ring_embedding(2).tolist()
    [0, 1, 3, 2]
    """
    return gray_code(d)


def gray_table(d: int = 3) -> list:
    """Rows ``(integer, Gray code as a bit string)``: Mathur and Johnsson Table 1 for d = 3.

    >>> gray_table(2)
    [(0, '00'), (1, '01'), (2, '11'), (3, '10')]
    """
    return [(i, bits(int(g), d)) for i, g in enumerate(gray_code(d))]
