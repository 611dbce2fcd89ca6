"""The d-cycles schedules of the CM-200 study: index formulas and numpy executors.

The programs of :mod:`collective_lib.algorithms.cm200` move the data; this
module holds the analysis of Mathur and Johnsson around them:

* the layout of an array in blocks and of a block in d subblocks (Fig. 20,
  :func:`block_bounds`, :func:`split_subblocks`, :func:`memory_partition`);
* the local-memory index formulas of §4.1, §4.2.1 and §4.2.3
  (:func:`one_cycle_index`, :func:`d_cycles_source`,
  :func:`d_cycles_broadcast_index`, :func:`d_cycles_reduce_start`,
  :func:`d_cycles_reduce_nodes`, :func:`d_cycles_reduce_blocks`), in binary
  or Gray code node order (:data:`ORDERS`);
* the node-independent schedule the front end computes once
  (:func:`d_cycles_schedule`);
* :func:`run_d_cycles_broadcast` and :func:`run_d_cycles_reduce`, which move
  the data of the d-cycles schedules with numpy, step by step, and check link
  use, completeness and the formulas, fast enough for the real machine's
  d = 11 (:class:`CyclesCheck`);
* the numpy executors (:func:`execute_one_cycle_broadcast`,
  :func:`execute_one_cycle_reduce`, :func:`execute_d_cycles_broadcast`,
  :func:`execute_d_cycles_reduce`), which move real data the way the four
  cycle programs do, so that the event simulator's results and times can be
  compared with them up to d = 11 (benchmarks/cm200_scale.py).

The programs of :mod:`collective_lib.algorithms.cm200` stand on this module, so it
imports nothing above the cost model; the element transfers their runs count
(Table 2) are in :mod:`.transfers`.

Source: K. K. Mathur and S. L. Johnsson, All-to-All Communication on the
Connection Machine CM-200, Harvard TR-02-93 (1993), §4.1-§4.2, Table 2.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from ..model import CostModel
from ..validate import check_positive_int
from .gray import gray, gray_inverse, sh, transition_sequence

__all__ = [
    "ORDERS", "block_bounds", "subblock_bounds", "split_subblocks", "memory_partition",
    "one_cycle_index", "d_cycles_source", "d_cycles_broadcast_index", "d_cycles_reduce_start",
    "d_cycles_reduce_nodes", "d_cycles_reduce_blocks",
    "DCyclesSchedule", "d_cycles_schedule", "CyclesCheck", "run_d_cycles_broadcast",
    "run_d_cycles_reduce", "Executed", "execute_one_cycle_broadcast", "execute_one_cycle_reduce",
    "execute_d_cycles_broadcast", "execute_d_cycles_reduce",
]

#: How the array is laid on the nodes: by binary node address or by Gray code (§3).
ORDERS = ("binary", "gray")


def _check_order(order):
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got order={order!r}")
    return order


def block_bounds(M: int, d: int) -> list:
    """(start, stop) of the 2**d blocks of an M-element array, as the CM-200 lays it out.

    Mathur and Johnsson §4.2.4: an array of M elements spread over 2**d nodes
    gives ``ceil(M / 2**d)`` consecutive elements to each node in turn until
    the elements run out, so the first ``floor(M / ceil(M / 2**d))`` blocks
    are full, one block may hold the rest, and the last blocks may be empty.
    Block j is what node j ends with after an all-to-all reduction.

    >>> block_bounds(34, 3)
    [(0, 5), (5, 10), (10, 15), (15, 20), (20, 25), (25, 30), (30, 34), (34, 34)]
    """
    M = check_positive_int("M", M, least=0)
    d = check_positive_int("d", d, least=0)
    size = -(-M // (1 << d))
    return [(min(j * size, M), min((j + 1) * size, M)) for j in range(1 << d)]


def subblock_bounds(m: int, d: int) -> list:
    """(start, stop) of the d subblocks of an m-element block (Fig. 20, :func:`split_subblocks`).

    >>> subblock_bounds(7, 3)
    [(0, 3), (3, 5), (5, 7)]
    """
    d = check_positive_int("d", d)
    beta = -(-m // d)
    gamma = m - d * (beta - 1)
    bounds, start = [], 0
    for i in range(d):
        size = beta if i < gamma else beta - 1
        bounds.append((start, start + size))
        start += size
    return bounds


def split_subblocks(elements, d: int) -> list:
    """Cut a block into d consecutive subblocks as in Mathur and Johnsson Fig. 20.

    With ``beta = ceil(len / d)`` the first ``gamma = len - d (beta - 1)``
    subblocks hold beta elements and the others ``beta - 1``; when the block
    is shorter than d the last subblocks are empty.  (This follows Fig. 20;
    the text of §4.2.4 writes beta = ceil((M/2**d)/2**d) and speaks of 2d
    subblocks, which fits neither the figure nor the d exchange sequences.)

    >>> split_subblocks(list(range(7)), 3)
    [[0, 1, 2], [3, 4], [5, 6]]
    >>> split_subblocks([0, 1], 3)
    [[0], [1], []]
    """
    return [list(elements[start:stop]) for start, stop in subblock_bounds(len(elements), d)]


def memory_partition(M: int, d: int) -> list:
    """Fig. 20: the 2**d blocks of an M-element array, each cut into d subblocks.

    ``memory_partition(M, d)[j][i]`` is the (start, stop) of subblock i of
    block j in the whole array: :func:`block_bounds` cuts the array, and
    :func:`subblock_bounds` cuts every block as the d-cycles reduction does.

    >>> [[stop - start for start, stop in block] for block in memory_partition(34, 3)][5:]
    [[2, 2, 1], [2, 1, 1], [0, 0, 0]]
    """
    d = check_positive_int("d", d)
    return [[(start + a, start + b) for a, b in subblock_bounds(stop - start, d)]
            for start, stop in block_bounds(M, d)]


# -- index formulas (§4.1, §4.2.1, §4.2.3) --------------------------------------------------

def one_cycle_index(pa, s, d: int, order: str = "binary"):
    """Array index in local memory address s of node ``pa`` after the one-cycle broadcast.

    Mathur and Johnsson §4.1, Fig. 7: with node addresses in binary order,
    address s of node PA holds element ``G((s + G^-1(PA)) mod 2**d)``; with
    node addresses in Gray code order (Fig. 5) it holds
    ``(s + G^-1(PA)) mod 2**d``, a cyclic shift by the node's ring position.
    Works element-wise on numpy arrays.

    >>> one_cycle_index(0b101, 1, 3)          # the paper's example: the code 100
    4
    """
    n = 1 << d
    position = (s + gray_inverse(pa)) % n
    return gray(position) if _check_order(order) == "binary" else position


def d_cycles_source(pa, j, i, d: int, order: str = "binary"):
    """The node (or, in Gray code order, its Gray code address) whose element arrives
    in slot i of node ``pa`` in step j - 1 of the d-cycles broadcast.

    ``PA XOR sh^i(G(j))`` in binary order, ``G^-1(PA) XOR G^-1(sh^i(G(j)))`` in
    Gray code order (Mathur and Johnsson §4.2.1); j = 0 is the node's own
    element.

    >>> [d_cycles_source(0, j, 1, 3) for j in range(8)]
    [0, 2, 6, 4, 5, 7, 3, 1]
    """
    offset = sh(gray(j), d, i)
    if _check_order(order) == "binary":
        return pa ^ offset
    return gray_inverse(pa) ^ gray_inverse(offset)


def d_cycles_broadcast_index(pa, s, d: int, m: int, order: str = "binary"):
    """Array index in local memory address s of node ``pa`` after the d-cycles broadcast.

    Mathur and Johnsson §4.2.1: with M' = m elements per node and
    ``s = j M' + k d + i`` (0 <= i < d), the index is
    ``(PA XOR sh^i(G(j))) M' + k d + i`` for nodes in binary order and
    ``(G^-1(PA) XOR G^-1(sh^i(G(j)))) M' + k d + i`` for nodes in Gray code
    order.  Works element-wise on numpy arrays.

    >>> [d_cycles_broadcast_index(0, s, 3, 3) for s in (3, 4, 5)]   # Fig. 8, step 0, P0
    [3, 7, 14]
    """
    m = check_positive_int("m", m)
    if d == 0:
        return s
    j, offset = s // m, s % m
    return d_cycles_source(pa, j, offset % d, d, order) * m + offset


def d_cycles_reduce_start(j, i, d: int):
    """The node where the partial sum for slot i of block j starts: ``j XOR 2**((d-1+i) mod d)``.

    Mathur and Johnsson §4.2.3, "data motion for block j", item 1.

    >>> [d_cycles_reduce_start(0, i, 3) for i in range(3)]
    [4, 1, 2]
    """
    return j ^ (1 << ((d - 1 + i) % d))


def d_cycles_reduce_nodes(j, i, u, d: int):
    """(sending node, receiving node) of slot i of block j in step u of the d-cycles reduction.

    The sender is ``j XOR sh^i(G(2**d - 1 - u))`` (Mathur and Johnsson §4.2.3,
    item 3).  The receiver is ``j XOR sh^i(G(2**d - 2 - u))``: the paper prints
    ``G(2**d - u)`` (item 4 there), which contradicts its own rule "the sending
    node in step u >= 1 is the receiving node in step u - 1" and its Figures
    12-19; the simulated movement agrees with ``2**d - 2 - u``.

    >>> d_cycles_reduce_nodes(0, 0, 0, 3)      # Fig. 12, step 0, memory 0: P4 sends to P5
    (4, 5)
    """
    n = 1 << d
    return j ^ sh(gray(n - 1 - u), d, i), j ^ sh(gray(n - 2 - u), d, i)


def d_cycles_reduce_blocks(pa, u, i, d: int, order: str = "binary"):
    """(block sent, block received) by node ``pa`` from/into slot i in step u of the reduction.

    Binary order: ``PA XOR sh^i(G(2**d - 1 - u))`` and
    ``PA XOR sh^i(G(2**d - 2 - u))`` (Mathur and Johnsson §4.2.3, with the
    receiving index corrected as in :func:`d_cycles_reduce_nodes`); Gray code
    order applies ``G^-1`` to both, ``G^-1(PA) XOR G^-1(sh^i(...))`` (the
    paper writes the step there as s).

    >>> d_cycles_reduce_blocks(1, 0, 1, 3)     # Fig. 13: P1 sends block 0 slot 1 to P3
    (0, 2)
    """
    n = 1 << d
    send_offset, recv_offset = sh(gray(n - 1 - u), d, i), sh(gray(n - 2 - u), d, i)
    if _check_order(order) == "binary":
        return pa ^ send_offset, pa ^ recv_offset
    g = gray_inverse(pa)
    return g ^ gray_inverse(send_offset), g ^ gray_inverse(recv_offset)


# -- the schedule, as the front end computes it ---------------------------------------------

class DCyclesSchedule(NamedTuple):
    """The node-independent part of the d-cycles schedules (Mathur and Johnsson §4.2).

    Node PA's part follows by XOR with PA, which is why the CM-200 front end
    could compute these arrays once for all nodes.

    Attributes
    ----------
    d : int
    dims : ndarray (2**d - 1, d)
        ``dims[u, i] = (t_u + i) mod d``: the cube dimension of slot i in step u.
    arrival : ndarray (2**d, d)
        ``arrival[j, i] = sh^i(G(j))``: broadcast step j - 1 brings slot i the
        element of node ``PA XOR arrival[j, i]`` (row 0: the node's own).
    send_offset, recv_offset : ndarray (2**d - 1, d)
        Reduction step u sends slot i of block ``PA XOR send_offset[u, i]`` and
        adds into block ``PA XOR recv_offset[u, i]``.
    """
    d: int
    dims: np.ndarray
    arrival: np.ndarray
    send_offset: np.ndarray
    recv_offset: np.ndarray


@lru_cache(maxsize=16)
def d_cycles_schedule(d: int) -> DCyclesSchedule:
    """The d-cycles schedule of a d-cube as numpy arrays (cached; do not modify them).

    >>> s = d_cycles_schedule(3)
    >>> s.dims[:, 0].tolist(), s.dims[0].tolist()
    ([0, 1, 0, 2, 0, 1, 0], [0, 1, 2])
    """
    d = check_positive_int("d", d, least=0)
    n = 1 << d
    slots = np.arange(d)
    t = transition_sequence(d)
    dims = (t[:, None] + slots[None, :]) % d if d else np.zeros((0, 0), np.int64)
    codes = gray(np.arange(n + 1, dtype=np.int64)) & (n - 1)
    arrival = np.stack([sh(codes[:n], d, i) for i in range(d)], axis=1) if d else \
        np.zeros((1, 0), np.int64)
    u = np.arange(n - 1)
    send = np.stack([sh(codes[n - 1 - u], d, i) for i in range(d)], axis=1) if d else dims
    recv = np.stack([sh(codes[n - 2 - u], d, i) for i in range(d)], axis=1) if d else dims
    for a in (dims, arrival, send, recv):
        a.setflags(write=False)
    return DCyclesSchedule(d, dims, arrival, send, recv)


# -- the schedules moved with numpy ---------------------------------------------------------------

@dataclass(frozen=True)
class CyclesCheck:
    """What :func:`run_d_cycles_broadcast` or :func:`run_d_cycles_reduce` found.

    Attributes
    ----------
    d, steps : int
        Cube dimension and number of exchange steps (``2**d - 1``).
    max_link_uses : int
        Largest number of transfers that crossed one directed link in one step.
    link_uses : int
        Transfers per directed link over the whole run (the same for every link).
    complete : bool
        Broadcast: every node ended with every element of every node, each
        received once.  Reduction: every node ended with the sums of its own
        block, every node having contributed once to each.
    formula_mismatches : int
        (node, slot, step) triples where the data moved disagreed with the
        index formulas of §4.2.1 / §4.2.3.
    """
    d: int
    steps: int
    max_link_uses: int
    link_uses: int
    complete: bool
    formula_mismatches: int

    @property
    def ok(self) -> bool:
        """Correct, edge-disjoint in every step, and in agreement with the formulas."""
        return (self.complete and self.max_link_uses <= 1 and self.formula_mismatches == 0
                and self.steps == (1 << self.d) - 1)


def _link_uses(dims_of_step, d):
    """Transfers on each directed link (node, dimension) in one step.

    Slot i of every node crosses dimension ``dims_of_step[i]``, so a node's
    link in dimension c carries as many transfers as there are slots with
    dimension c, and so does every other node's.
    """
    return np.bincount(dims_of_step, minlength=d)


def _broadcast_moves(d):
    """Yield (step, partner, holding) of the d-cycles broadcast, moved by exchanges only.

    ``holding[PA, i]`` is the source node of the element that slot i of PA
    has just received; ``partner[PA, i]`` the node it came from.
    """
    n = 1 << d
    nodes = np.arange(n)
    slot = np.arange(d)[None, :]
    holding = np.repeat(nodes[:, None], d, axis=1)
    dims = d_cycles_schedule(d).dims
    for u in range(n - 1):
        partner = nodes[:, None] ^ (1 << dims[u])[None, :]
        holding = holding[partner, slot]
        yield u, partner, holding


def run_d_cycles_broadcast(d: int) -> CyclesCheck:
    """Move the d-cycles broadcast's data with numpy and check it (seconds for d = 11).

    Each step every node exchanges slot i across dimension ``dims[u, i]``
    (:func:`d_cycles_schedule`); nothing else is assumed.  The data moved is
    checked against the full set of elements and the index formula of §4.2.1.

    >>> run_d_cycles_broadcast(3).ok
    True
    """
    d = check_positive_int("d", d, least=0)
    n = 1 << d
    nodes = np.arange(n)
    arrival = d_cycles_schedule(d).arrival
    has = np.zeros(d * n * n, bool)                    # has[i, PA, source]
    base = (np.arange(d)[None, :] * n + nodes[:, None]) * n
    has[base + nodes[:, None]] = True
    duplicates = mismatches = max_uses = 0
    totals = np.zeros(d, np.int64)
    dims = d_cycles_schedule(d).dims
    for u, partner, holding in _broadcast_moves(d):
        uses = _link_uses(dims[u], d)
        totals += uses
        max_uses = max(max_uses, int(uses.max()))
        mismatches += int(np.count_nonzero(holding != nodes[:, None] ^ arrival[u + 1][None, :]))
        index = base + holding
        duplicates += int(np.count_nonzero(has[index]))
        has[index] = True
    return CyclesCheck(d, n - 1, max_uses, int(totals.max(initial=0)),
                       bool(has.all()) and duplicates == 0 and
                       (d == 0 or int(totals.min()) == n - 1), mismatches)


def _mix(x):
    """splitmix64: a well-spread 64-bit value for each integer (uint64 arithmetic wraps)."""
    x = (x + np.uint64(0x9E3779B97F4A7C15)).astype(np.uint64)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _contribution(pa, block, slot, d):
    """Node pa's (pseudo-random) value for subblock ``slot`` of ``block``."""
    n = 1 << d
    return _mix(((pa * n + block) * d + slot).astype(np.uint64))


def _reduce_start(d):
    """``block[PA, i]``: the block whose partial sum slot i of PA sends first in the reduction.

    The block that arrived last in the broadcast (Mathur and Johnsson §4.2.2).
    """
    n = 1 << d
    last = np.repeat(np.arange(n)[:, None], d, axis=1)
    for _, _, last in _broadcast_moves(d):
        pass
    return last.copy()


def _reduce_moves(d):
    """Yield (step, partner, sent, received) of the d-cycles reduction, moved by exchanges only.

    Step v exchanges across the dimensions of broadcast step 2**d - 2 - v;
    ``sent[PA, i]`` is the block whose partial sum slot i of PA sends,
    ``received[PA, i]`` the block of the partial sum it gets from ``partner[PA, i]``.
    """
    n = 1 << d
    nodes = np.arange(n)[:, None]
    slot = np.arange(d)[None, :]
    dims = d_cycles_schedule(d).dims
    block = _reduce_start(d)
    for v in range(n - 1):
        partner = nodes ^ (1 << dims[n - 2 - v])[None, :]
        sent, block = block, block[partner, slot]
        yield v, partner, sent, block


def run_d_cycles_reduce(d: int) -> CyclesCheck:
    """Move the d-cycles reduction's data with numpy and check the sums (seconds for d = 11).

    The reduction is the broadcast's data motion reversed (Mathur and
    Johnsson §4.2.2): each node starts slot i with the block it received last
    in the broadcast, and step u exchanges across the dimensions of broadcast
    step 2**d - 2 - u.  Every node adds a pseudo-random value of its own to
    each partial sum it receives; the final sums are compared with the sums
    of all nodes' values, and the blocks with the formulas of §4.2.3.

    >>> run_d_cycles_reduce(3).ok
    True
    """
    d = check_positive_int("d", d, least=0)
    n = 1 << d
    nodes = np.arange(n)
    slot = np.arange(d)[None, :]
    sched = d_cycles_schedule(d)
    block = _reduce_start(d)
    partial = _contribution(nodes[:, None], block, slot, d)
    has = np.zeros(d * n * n, bool)                         # has[i, PA, block]
    base = (np.arange(d)[None, :] * n + nodes[:, None]) * n
    has[base + block] = True
    duplicates = mismatches = max_uses = 0
    totals = np.zeros(d, np.int64)
    for v, partner, sent, block in _reduce_moves(d):
        uses = _link_uses(sched.dims[n - 2 - v], d)
        totals += uses
        max_uses = max(max_uses, int(uses.max()))
        mismatches += int(np.count_nonzero(sent != nodes[:, None] ^ sched.send_offset[v]))
        partial = partial[partner, slot]
        mismatches += int(np.count_nonzero(block != nodes[:, None] ^ sched.recv_offset[v]))
        partial = partial + _contribution(nodes[:, None], block, slot, d)
        duplicates += int(np.count_nonzero(has[base + block]))
        has[base + block] = True
    expected = np.zeros((n, d), np.uint64)
    for pa in range(n):                                     # every node's values, summed
        expected += _contribution(np.uint64(pa), nodes[:, None], slot, d)
    complete = (bool(np.array_equal(block, np.repeat(nodes[:, None], d, axis=1)))
                and bool(np.array_equal(partial, expected)) and bool(has.all())
                and duplicates == 0)
    return CyclesCheck(d, n - 1, max_uses, int(totals.max(initial=0)), complete, mismatches)


# -- the cycle programs' data moved with numpy ---------------------------------------------------

class Executed(NamedTuple):
    """What a numpy executor computed.

    Attributes
    ----------
    results : ndarray
        What every node returns: ``(p, p, M')`` (the messages by source) for
        the broadcasts, ``(p, M')`` (the node's sums) for the reductions.
    steps : int
        Exchange steps (``2**d - 1``).
    words : int
        The most elements one link carries in one step, so that a step takes
        ``model.transfer_time(words, hops=1)`` and the run ``steps`` times that.
    """
    results: np.ndarray
    steps: int
    words: int

    def time(self, model: CostModel) -> float:
        """The run's time under ``model``: every step one neighbour transfer of ``words``."""
        return self.steps * model.transfer_time(self.words, hops=1) if self.steps else 0.0


def _cube_of(p, what):
    d = p.bit_length() - 1
    if p < 1 or p != 1 << d:
        raise ValueError(f"{what} needs 2**d nodes (one row each), got {p} rows")
    return d


def _broadcast_start(data, what):
    """(data as an array, d, the result array with every node's own message filed)."""
    data = np.asarray(data)
    if data.ndim != 2:
        raise ValueError(f"{what} needs one message per node, a 2-D array, got shape {data.shape}")
    d = _cube_of(len(data), what)
    out = np.empty((len(data),) + data.shape, data.dtype)
    out[np.arange(len(data)), np.arange(len(data))] = data
    return data, d, out


def _ring_moves(d, step):
    """Yield the ring neighbour every node takes a message from, ``2**d - 1`` times.

    ``step = 1``: from ring position q + 1 (the left shifts of the broadcast,
    §4.1); ``step = -1``: from position q - 1 (the reduction's right shifts).
    """
    n = 1 << d
    node = gray(np.arange(n))
    source = node[(gray_inverse(np.arange(n)) + step) % n]
    for _ in range(n - 1):
        yield source


def execute_one_cycle_broadcast(data) -> Executed:
    """The one-cycle broadcast (§4.1, Fig. 5) moved with numpy: ``data[PA]`` is node PA's message.

    Every step each node takes the message its right ring neighbour got last,
    together with the number of the node it comes from, and files it under
    that number.

    >>> execute_one_cycle_broadcast([[1, 2], [3, 4]]).results.tolist()
    [[[1, 2], [3, 4]], [[1, 2], [3, 4]]]
    """
    data, d, out = _broadcast_start(data, "execute_one_cycle_broadcast")
    n, m = data.shape
    nodes = np.arange(n)
    holding, carried = nodes, data
    for source in _ring_moves(d, 1):
        holding, carried = holding[source], carried[source]
        out[nodes, holding] = carried
    return Executed(out, n - 1, m if n > 1 else 0)


def execute_one_cycle_reduce(data) -> Executed:
    """The one-cycle reduction (§4.1, Fig. 6) moved with numpy, summing with ``+``.

    ``data[PA, j]`` is node PA's message for node j.  Every node starts with
    its message for the ring position behind it; each step it takes the
    partial sum (and the number of its block) from its left neighbour and
    adds its own message for that block.

    >>> execute_one_cycle_reduce([[[1], [2]], [[10], [20]]]).results.tolist()
    [[11], [22]]
    """
    data = np.asarray(data)
    n, _, m = data.shape
    d = _cube_of(n, "execute_one_cycle_reduce")
    nodes = np.arange(n)
    block = gray((gray_inverse(nodes) - 1) % n)
    partial = data[nodes, block]
    for source in _ring_moves(d, -1):
        block, partial = block[source], partial[source]
        partial = partial + data[nodes, block]
    out = np.empty((n, m), data.dtype)
    out[block] = partial
    return Executed(out, n - 1, m if n > 1 else 0)


def _slots(data, d, bounds):
    """``data[..., M']`` as ``[..., d, beta]``: slot i in row i, padded with zeros."""
    beta = max((stop - start for start, stop in bounds), default=0)
    out = np.zeros(data.shape[:-1] + (d, beta), data.dtype)
    for i, (start, stop) in enumerate(bounds):
        out[..., i, :stop - start] = data[..., start:stop]
    return out, beta


def execute_d_cycles_broadcast(data) -> Executed:
    """The d-cycles broadcast (§4.2.1) moved with numpy: ``data[PA]`` is node PA's message.

    Slot i (addresses k d + i) of every node crosses dimension ``dims[u, i]``
    in step u (:func:`d_cycles_schedule`); each slot travels with the number
    of its source node and is filed under it.

    >>> execute_d_cycles_broadcast([[1, 2], [3, 4]]).results.tolist()
    [[[1, 2], [3, 4]], [[1, 2], [3, 4]]]
    """
    data, d, out = _broadcast_start(data, "execute_d_cycles_broadcast")
    n, m = data.shape
    nodes = np.arange(n)
    strided = data[:, np.concatenate([np.arange(i, m, d) for i in range(d)]).astype(int)] \
        if d else data
    bounds = subblock_bounds(m, d) if d else []      # slot i is as long as subblock i (Fig. 20)
    carried, beta = _slots(strided, d, bounds)
    slot = np.arange(d)[None, :]
    for _, partner, holding in _broadcast_moves(d):
        carried = carried[partner, slot]
        for i, (start, stop) in enumerate(bounds):
            out[nodes, holding[:, i], i::d] = carried[:, i, :stop - start]
    return Executed(out, n - 1, beta)


def execute_d_cycles_reduce(data) -> Executed:
    """The d-cycles reduction (§4.2.2-4.2.4) moved with numpy, summing with ``+``.

    ``data[PA, j]`` is node PA's message for node j, cut into the d
    subblocks of Fig. 20.  The partial sums move by the exchanges of
    :func:`run_d_cycles_reduce`, each with the number of its block; every
    node adds its own subblock of that block.

    >>> execute_d_cycles_reduce([[[1], [2]], [[10], [20]]]).results.tolist()
    [[11], [22]]
    """
    data = np.asarray(data)
    n, _, m = data.shape
    d = _cube_of(n, "execute_d_cycles_reduce")
    if d == 0:
        return Executed(data[:, 0].copy(), 0, 0)
    nodes = np.arange(n)[:, None]
    slot = np.arange(d)[None, :]
    bounds = subblock_bounds(m, d)
    own, beta = _slots(data, d, bounds)                # own[PA, j, i]: subblock i of block j
    block = _reduce_start(d)
    partial = own[nodes, block, slot]
    for _, partner, _, block in _reduce_moves(d):
        partial = partial[partner, slot] + own[nodes, block, slot]
    out = np.empty((n, m), data.dtype)
    for i, (start, stop) in enumerate(bounds):
        out[block[:, i], start:stop] = partial[:, i, :stop - start]
    return Executed(out, n - 1, beta)
