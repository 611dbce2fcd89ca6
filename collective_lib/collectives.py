"""Every collective operation of the book, declared once.

An operation says what a correct algorithm must do, whatever its
communication pattern: how to make random inputs for p PEs and m words, what
each PE must return for given inputs, how many words the inputs hold, which
m it accepts, and which MPI routine does the same.  The catalog's entries
(:mod:`collective_lib.catalog`), the widgets, the benchmarks and
:mod:`collective_lib.mpi` read it from here; nothing else re-describes an
operation.

Operators and messages
----------------------
A message is a sequence of words (the random inputs are Python lists of m
ints, so results compare with ``==``).  A reduction's operator ``op`` combines
two messages; the default :data:`add` adds them word by word and
:func:`elementwise` lifts any binary function on words to messages.
:func:`combine` folds ``op`` over operands, ``None`` playing the neutral
element (the ``0`` of the sources' pseudocode).

Adding an operation
-------------------
Write its two functions (inputs, expected results) here and add one
:class:`Operation` to ``_OPERATIONS``, in chapter order; an algorithm then
registers against its name (``register(operation="...")``).

Examples
--------
>>> import numpy as np
>>> gather = operations()["gather"]
>>> inputs = gather.make_inputs(3, 2, np.random.default_rng(0))
>>> gather.expected(inputs)[0] == inputs, gather.input_words(3, 2), gather.mpi
(True, 6, 'MPI_Gather')
"""
from __future__ import annotations

import operator
from dataclasses import dataclass
from functools import reduce as _fold
from types import MappingProxyType
from typing import Callable

import numpy as np

from .validate import check_positive_int

__all__ = ["Operation", "operations", "elementwise", "add", "combine", "random_h_relation"]


# -- operators ------------------------------------------------------------------------

def elementwise(f):
    """Lift a binary function on words to a binary operator on messages.

    Lists, tuples and numpy arrays are combined word by word (they must have
    the same length) and keep their type; anything else is one word and is
    passed to ``f`` as it is.  ``op`` is associative (commutative) on messages
    exactly when ``f`` is on words.

    >>> add = elementwise(operator.add)
    >>> add([1, 2, 3], [10, 20, 30]), add(4, 3)
    ([11, 22, 33], 7)
    >>> elementwise(operator.add)(["a", "b"], ["c", "d"])       # word-wise concatenation
    ['ac', 'bd']
    """
    if not callable(f):
        raise ValueError(f"elementwise needs a callable binary function, got {f!r}")

    def lifted(a, b):
        if isinstance(a, (list, tuple, np.ndarray)):
            if len(a) != len(b):
                raise ValueError(f"cannot combine messages of {len(a)} and {len(b)} words")
            words = [f(x, y) for x, y in zip(a, b)]
            if isinstance(a, np.ndarray):
                return np.asarray(words)
            return tuple(words) if isinstance(a, tuple) else words
        return f(a, b)

    lifted.__name__ = lifted.__qualname__ = f"elementwise({getattr(f, '__name__', repr(f))})"
    lifted.__doc__ = f"``{lifted.__name__}``: apply it word by word."
    return lifted


#: The default operator: word-by-word addition of two messages.
add = elementwise(operator.add)


def combine(op, *operands):
    """``op`` folded over the operands from left to right, skipping ``None``.

    ``None`` plays the neutral element ``0`` of the book's pseudocode; if every
    operand is ``None`` the result is ``None``.

    >>> combine(operator.add, None, 5, None, 2)
    7
    >>> combine(operator.add, None, None) is None
    True
    """
    result = None
    for x in operands:
        if x is not None:
            result = x if result is None else op(result, x)
    return result


# -- the operation record -------------------------------------------------------------

@dataclass(frozen=True)
class Operation:
    """A collective operation: its inputs, its results, its size and its MPI counterpart.

    Attributes
    ----------
    name : str
        The name algorithms register against (``"broadcast"``, ...).
    summary : str
        One line: what every PE ends with.
    mpi : str
        The MPI routine(s) doing the same, e.g. ``"MPI_Bcast"``; ``"A+B"`` when
        MPI needs two calls.  For an exclusive prefix sum :mod:`collective_lib.mpi`
        uses ``MPI_Exscan`` in place of ``MPI_Scan``.
    draw_inputs : callable
        ``draw_inputs(p, m, rng, **params)``: the p inputs (use :meth:`make_inputs`,
        which checks p and m first).
    results : callable
        ``results(inputs, **params)``: the p results (use :meth:`expected`).
    words : callable
        ``words(p, m)``: the words the p inputs hold together (use :meth:`input_words`).
    least_m : int
        The smallest m the operation accepts (every integer m >= it is accepted).
    """
    name: str
    summary: str
    mpi: str
    draw_inputs: Callable
    results: Callable
    words: Callable
    least_m: int = 1

    def check_m(self, m) -> int:
        """``m`` as an int, or a ValueError naming m if the operation does not accept it.

        >>> operations()["broadcast"].check_m(0)
        Traceback (most recent call last):
        ...
        ValueError: m must be an integer >= 1, got 0
        """
        return check_positive_int("m", m, least=self.least_m)

    def make_inputs(self, p: int, m: int, rng, **params) -> list:
        """Random inputs for ``p`` PEs and ``m`` words from the numpy Generator ``rng``."""
        return self.draw_inputs(check_positive_int("p", p), self.check_m(m), rng, **params)

    def expected(self, inputs: list, **params) -> list:
        """What every PE must return for ``inputs`` (one result per PE)."""
        return self.results(inputs, **params)

    def input_words(self, p: int, m: int) -> int:
        """The words all p inputs hold together (the operation's data volume).

        p m for most operations, p p m when every PE holds one message per
        destination, m for a broadcast (only the root holds data), 0 for a
        barrier.  ``"alltoallv"``'s random inputs hold a random number of words,
        at most p (m + 2): every PE sends at most h = m words to the others and
        keeps 0 to 2 for itself (:func:`random_h_relation`); that bound is returned.

        >>> ops = operations()
        >>> [ops[name].input_words(4, 3) for name in ("broadcast", "reduce", "alltoall", "alltoallv")]
        [3, 12, 48, 20]
        """
        return self.words(check_positive_int("p", p), self.check_m(m))


# -- inputs -----------------------------------------------------------------------------

def _message(m, rng):
    """One random message of m words (a list of ints)."""
    return rng.integers(0, 1000, size=m).tolist()


def _messages(p, m, rng, **_):
    """PE i holds its own message m_i."""
    return [_message(m, rng) for _ in range(p)]


def _rooted_message(p, m, rng, root=0, **_):
    """The root holds one message, the other PEs nothing (broadcast)."""
    message = _message(m, rng)
    return [message if i == root else None for i in range(p)]


def _rooted_messages(p, m, rng, root=0, **_):
    """The root holds the list of all p messages, the other PEs nothing (scatter)."""
    messages = _messages(p, m, rng)
    return [messages if i == root else None for i in range(p)]


def _nothing(p, m, rng, **_):
    return [None] * p


def _p_messages(p, m, rng, **_):
    """PE i holds p random messages of m words, the j-th destined for PE j."""
    return rng.integers(0, 1000, size=(p, p, m)).tolist()


def random_h_relation(p: int, h: int, rng=None) -> list:
    """Random message lengths for p PEs with bottleneck volume exactly h (p >= 2).

    Every PE sends to a random subset of the others, so many messages are
    empty and the rest have uneven lengths; one hot receiver (a random PE)
    receives exactly h words, and no PE sends or receives more than h.  The
    diagonal (messages to oneself, not counted in h) holds 0 to 2 words.
    For p = 1 only the diagonal is set.

    Parameters
    ----------
    p, h : int
        Number of PEs (>= 1) and the bottleneck volume (>= 0).
    rng : numpy Generator or int, optional
        The random source, or a seed.

    Examples
    --------
    >>> from collective_lib.algorithms.hrelation import bottleneck_volume
    >>> sizes = random_h_relation(6, 10, rng=1)
    >>> bottleneck_volume(sizes)
    10
    >>> any(sizes[i][j] == 0 for i in range(6) for j in range(6) if i != j)
    True
    """
    p = check_positive_int("p", p)
    h = check_positive_int("h", h, least=0)
    rng = np.random.default_rng(rng)
    sizes = np.zeros((p, p), dtype=np.int64)
    np.fill_diagonal(sizes, rng.integers(0, 3, size=p))
    if p == 1:
        return sizes.tolist()
    sent = np.zeros(p, dtype=np.int64)
    got = np.zeros(p, dtype=np.int64)
    hot = int(rng.integers(p))
    for sender in rng.choice(np.delete(np.arange(p), hot), size=h):   # the hot receiver's h words
        sizes[sender, hot] += 1
        sent[sender] += 1
    got[hot] = h
    for i in rng.permutation(p):
        partners = rng.permutation(np.delete(np.arange(p), [i, hot]))
        partners = partners[:rng.integers(1, len(partners) + 1)] if len(partners) else partners
        for _ in range(int(rng.integers(0, h + 1)) - int(sent[i])):
            open_ = partners[got[partners] < h]
            if len(open_) == 0:
                break
            j = open_[rng.integers(len(open_))]
            sizes[i, j] += 1
            sent[i] += 1
            got[j] += 1
    return sizes.tolist()


def _h_relation_messages(p, m, rng, **_):
    """Random messages whose lengths form an h-relation with h = m (see random_h_relation)."""
    sizes = random_h_relation(p, m, rng)
    flat = rng.integers(0, 1000, size=int(np.sum(sizes))).tolist()
    inputs, at = [], 0
    for row in sizes:
        messages = []
        for s in row:
            messages.append(flat[at:at + s])
            at += s
        inputs.append(messages)
    return inputs


# -- expected results -----------------------------------------------------------------

def _broadcast_expected(inputs, root=0, **_):
    return [inputs[root]] * len(inputs)


def _reduce_expected(inputs, root=0, op=add, **_):
    total = _fold(op, inputs)
    return [total if i == root else None for i in range(len(inputs))]


def _allreduce_expected(inputs, op=add, **_):
    return [_fold(op, inputs)] * len(inputs)


def _prefixes(inputs, op, exclusive):
    """Inclusive prefixes, or exclusive ones with None on PE 0."""
    out, running = [], None
    for x in inputs:
        before = running
        running = combine(op, running, x)
        out.append(before if exclusive else running)
    return out


def _prefix_expected(inputs, op=add, exclusive=False, **_):
    return _prefixes(inputs, op, exclusive)


def _prefix_and_total_expected(inputs, op=add, exclusive=False, **_):
    total = _fold(op, inputs)
    return [(x, total) for x in _prefixes(inputs, op, exclusive)]


def _barrier_expected(inputs, **_):
    return [None] * len(inputs)


def _gather_expected(inputs, root=0, **_):
    return [list(inputs) if i == root else None for i in range(len(inputs))]


def _scatter_expected(inputs, root=0, **_):
    return list(inputs[root])


def _allgather_expected(inputs, **_):
    return [list(inputs) for _ in inputs]


def _all_to_all_reduction_expected(inputs, op=add, **_):
    return [combine(op, *(row[j] for row in inputs)) for j in range(len(inputs))]


def _alltoall_expected(inputs, **_):
    """PE j gets column j of the matrix of messages: ``[inputs[i][j] for i]``."""
    return [[row[j] for row in inputs] for j in range(len(inputs))]


def _alltoallv_expected(inputs, **_):
    """PE j gets column j of the matrix of messages, each as a list."""
    return [[list(row[j]) for row in inputs] for j in range(len(inputs))]


# -- the operations, in chapter order ----------------------------------------------------

def _one_message(p, m):
    return m


def _one_per_pe(p, m):
    return p * m


def _one_per_destination(p, m):
    return p * p * m


def _no_words(p, m):
    return 0


def _h_relation_bound(p, m):
    return p * (m + 2)


_OPERATIONS = {op.name: op for op in (
    Operation("broadcast", "The root's message of m words reaches every PE.",
              "MPI_Bcast", _rooted_message, _broadcast_expected, _one_message),
    Operation("reduce", "The root gets m_0 op m_1 op ... op m_(p-1); every other PE None.",
              "MPI_Reduce", _messages, _reduce_expected, _one_per_pe),
    Operation("allreduce", "Every PE gets m_0 op m_1 op ... op m_(p-1).",
              "MPI_Allreduce", _messages, _allreduce_expected, _one_per_pe),
    Operation("prefix_sum", "PE i gets m_0 op ... op m_i (exclusive: up to m_(i-1), None on PE 0).",
              "MPI_Scan", _messages, _prefix_expected, _one_per_pe),
    Operation("prefix_sum_and_total", "PE i gets the pair (its prefix sum, the total).",
              "MPI_Scan+MPI_Allreduce", _messages, _prefix_and_total_expected, _one_per_pe),
    Operation("barrier", "No PE leaves before every PE has come; no data, every PE returns None.",
              "MPI_Barrier", _nothing, _barrier_expected, _no_words, least_m=0),
    Operation("gather", "The root gets [m_0, ..., m_(p-1)] by real rank; every other PE None.",
              "MPI_Gather", _messages, _gather_expected, _one_per_pe),
    Operation("scatter", "The root holds [m_0, ..., m_(p-1)]; PE i gets m_i.",
              "MPI_Scatter", _rooted_messages, _scatter_expected, _one_per_pe),
    Operation("allgather", "Every PE gets [m_0, ..., m_(p-1)] (all-to-all broadcast, gossiping).",
              "MPI_Allgather", _messages, _allgather_expected, _one_per_pe),
    Operation("all_to_all_reduction",
              "PE j gets x_0[j] op x_1[j] op ... op x_(p-1)[j]: p reductions at once.",
              "MPI_Reduce_scatter_block", _p_messages, _all_to_all_reduction_expected,
              _one_per_destination),
    Operation("alltoall", "PE j gets [x_0[j], ..., x_(p-1)[j]]: the total exchange, a transpose.",
              "MPI_Alltoall", _p_messages, _alltoall_expected, _one_per_destination),
    Operation("alltoallv", "As alltoall with messages of any length; m is the bottleneck volume h.",
              "MPI_Alltoall+MPI_Alltoallv", _h_relation_messages, _alltoallv_expected,
              _h_relation_bound),
)}

_READ_ONLY = MappingProxyType(_OPERATIONS)


def operations() -> MappingProxyType:
    """Every collective operation, by name, in chapter order (read-only).

    >>> list(operations())[:3], operations()["prefix_sum"].mpi
    (['broadcast', 'reduce', 'allreduce'], 'MPI_Scan')
    """
    return _READ_ONLY
