"""All-to-all broadcast and reduction on the CM-200's binary d-cube (chapter 6).

The Connection Machine CM-200 joins its ``p = 2**d`` nodes in a binary d-cube
and every node talks on all d of its links at once.  The programs here run on
``Hypercube(d)`` under ``CostModel(ports="all")`` and yield :func:`multi`
operations when they use several links in one step.  PE numbers are the
nodes' binary addresses ("PA" in the paper).

Operations (the conventions of chapter 5, :mod:`.alltoall` and :mod:`.gather`):

* ``"allgather"`` (all-to-all broadcast): PE i holds a message of M' elements
  (a list); every PE returns the list of all p messages, indexed by source;
* ``"all_to_all_reduction"``: PE i holds p messages, ``data[j]`` for PE j;
  PE j returns their combination with ``op``.  ``op`` combines two messages
  word by word (as :func:`~.reduce.elementwise` operators do), because the
  d-cycles programs move messages in pieces.  Operands are combined in the
  order of the cycles, not rank order: ``requires_commutative=True``.

Algorithms (Mathur and Johnsson 1993):

* :func:`one_cycle_broadcast`, :func:`one_cycle_reduce`: cyclic shifts along
  the Hamiltonian cycle of the Gray code (§4.1, Figs. 5-7);
* :func:`d_cycles_broadcast`, :func:`d_cycles_reduce`: d edge-disjoint
  Hamiltonian cycles, all d links busy in each of the ``2**d - 1`` steps
  (§4.2, Johnsson and Ho; Figs. 8-19, Fig. 20);
* :func:`butterfly_reduce_and_spread` (an all-reduce) and
  :func:`reduce_and_spread`, which applies it to everything and keeps a
  subselection (§5 alternative 4, Fig. 21);
* :func:`send_and_spread`: gather everything in node 0, then broadcast it
  (§5 alternative 3).

The local-memory index formulas of §4.1, §4.2.1 and §4.2.3 are functions
here (:func:`one_cycle_index`, :func:`d_cycles_broadcast_index`,
:func:`d_cycles_reduce_blocks`), and :func:`d_cycles_schedule`,
:func:`run_d_cycles_broadcast` and :func:`run_d_cycles_reduce` move the data
of the d-cycles schedules with numpy, step by step, fast enough for the real
machine's d = 11.

The catalog entries of the four cycle programs accept p up to
:data:`EVENT_MAX_P` (256): their event simulation grows as p^2 log p.

Closed forms count communication only, one element per word: with
``ts = 0, tw = 1`` a program's simulated time is the number of element
transfers in sequence over one channel per direction (the quantity of the
paper's Table 2; :func:`element_transfers`).  The CM-200 has a pair of
channels between neighbours and moves two elements at a time
(``channels=2``).

Source: K. K. Mathur and S. L. Johnsson, All-to-All Communication on the
Connection Machine CM-200, Harvard TR-02-93 (1993), §3-§5.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

import numpy as np

from ..catalog import register
from ..gray import gray, gray_inverse, sh, transition_sequence
from ..model import CostModel
from ..networks import Hypercube
from ..ops import multi, sendrecv
from ..validate import check_positive_int, check_power_of_two
from .reduce import _check_op, add

__all__ = [
    "one_cycle_broadcast", "one_cycle_reduce", "d_cycles_broadcast", "d_cycles_reduce",
    "butterfly_reduce_and_spread", "butterfly_cost", "reduce_and_spread", "send_and_spread",
    "one_cycle_index", "d_cycles_source", "d_cycles_broadcast_index", "d_cycles_reduce_start",
    "d_cycles_reduce_nodes", "d_cycles_reduce_blocks", "split_subblocks",
    "DCyclesSchedule", "d_cycles_schedule", "CyclesCheck", "run_d_cycles_broadcast",
    "run_d_cycles_reduce", "element_transfers", "ORDERS", "EVENT_MAX_P",
]

#: How the array is laid on the nodes: by binary node address or by Gray code (§3).
ORDERS = ("binary", "gray")


# -- checks and small helpers ----------------------------------------------------------------

def _cube_d(algorithm, p) -> int:
    return check_power_of_two(algorithm, p)


def _valid_cube(p):
    check_power_of_two("the CM-200 algorithms", p)


#: The cycle programs move every element slot in each of the p - 1 steps, p (p - 1) d
#: transfers in all; beyond this p the event simulator needs minutes.
EVENT_MAX_P = 256


def _valid_cycles(p):
    """Catalog check of the cycle programs: a power of two that the event simulator handles."""
    _valid_cube(p)
    if p > EVENT_MAX_P:
        raise ValueError(
            f"the catalog simulates the cycle algorithms event by event, about p^2 log p "
            f"transfers, which takes minutes for p > {EVENT_MAX_P}; got p={p}. Check the d-cycles "
            f"schedules of larger cubes (up to the CM-200's d = 11) with run_d_cycles_broadcast(d) "
            f"and run_d_cycles_reduce(d), or call simulate() on the program directly")


def _check_order(order):
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got order={order!r}")
    return order


def _elements(algorithm, message) -> list:
    """The elements of one message, as a list."""
    if isinstance(message, np.ndarray):
        return message.tolist()
    if isinstance(message, (list, tuple)):
        return list(message)
    raise ValueError(f"{algorithm} moves messages element by element and needs a list, tuple "
                     f"or 1-D array, got {type(message).__name__} {message!r:.60}")


def _like(elements, message):
    """``elements`` in the container type of ``message``."""
    if isinstance(message, np.ndarray):
        return np.asarray(elements, dtype=message.dtype)
    return tuple(elements) if isinstance(message, tuple) else list(elements)


def _messages(algorithm, data, p) -> list:
    """The input of a reduction: one message per destination, all of one length."""
    if not isinstance(data, (list, tuple)) or len(data) != p:
        raise ValueError(f"{algorithm} needs a list of p={p} messages on every PE (one per "
                         f"destination), got {data!r:.80}")
    messages = [_elements(algorithm, x) for x in data]
    if len({len(x) for x in messages}) > 1:
        raise ValueError(f"{algorithm} needs messages of one length, got lengths "
                         f"{sorted({len(x) for x in messages})}")
    return messages


def _interleave(slots, m):
    """Inverse of ``elements[i::d]``: address k*d + i holds ``slots[i][k]``."""
    d = len(slots)
    out = [None] * m
    for i, part in enumerate(slots):
        out[i::d] = part
    return out


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
    d = check_positive_int("d", d)
    m = len(elements)
    beta = -(-m // d)
    gamma = m - d * (beta - 1)
    out, start = [], 0
    for i in range(d):
        size = beta if i < gamma else beta - 1
        out.append(list(elements[start:start + size]))
        start += size
    return out


def _step(model, words):
    """One neighbour transfer of ``words`` words."""
    return model.transfer_time(words, hops=1)


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


@lru_cache(maxsize=16)
def _program_schedule(d: int):
    """The schedule as Python lists, for the SPMD programs (one look-up per step)."""
    s = d_cycles_schedule(d)
    return s.dims.tolist(), s.arrival.tolist(), s.send_offset.tolist(), s.recv_offset.tolist()


# -- one Hamiltonian cycle (§4.1) ---------------------------------------------------------------

def one_cycle_cost(p, m, model, **_):
    """(2**d - 1)(ts + tw M'): one cyclic shift of M' elements per step; exact."""
    _cube_d("one_cycle", p)
    return (p - 1) * _step(model, m)


@register(operation="allgather", cost=one_cycle_cost, exact=True, ports="all",
          network=Hypercube.of_size, valid_p=_valid_cycles,
          source="Mathur and Johnsson 1993, §4.1, Figs. 5 and 7")
def one_cycle_broadcast(me, p, data, reorder=True):
    """All-to-all broadcast by 2**d - 1 left cyclic shifts along the Gray code cycle.

    Mathur and Johnsson 1993, §4.1, Figs. 5 and 7.  Ring position q lives on
    node G(q) (:func:`~collective_lib.gray.ring_embedding`), so both ring
    neighbours are cube neighbours.  In step s every node passes the message
    it got last to its left neighbour and takes one from its right; local
    address s then holds the message of ring position q + s.  With binary
    node addresses that is node ``G((s + G^-1(PA)) mod 2**d)``
    (:func:`one_cycle_index`, Fig. 7), and a local reordering files each
    message under its source.  ``reorder=False`` returns the local memory
    before that reordering (address s = message s).

    Model: d-cube (``Hypercube(d)``), p = 2**d, one link used per direction
    in each step; time (p - 1)(ts + tw M').
    """
    d = _cube_d("one_cycle_broadcast", p)
    q = gray_inverse(me)
    left, right = gray((q - 1) % p), gray((q + 1) % p)
    memory = [data]
    msg = data
    for _ in range(1, p):
        msg = yield sendrecv(left, msg, right)    # left cyclic shift along the cycle
        memory.append(msg)
    if not reorder:
        return memory
    result = [None] * p
    for s, x in enumerate(memory):
        result[one_cycle_index(me, s, d)] = x
    return result


@register(operation="all_to_all_reduction", cost=one_cycle_cost, exact=True, ports="all",
          network=Hypercube.of_size, valid_p=_valid_cycles, params={"op": add},
          requires_commutative=True, source="Mathur and Johnsson 1993, §4.1, Fig. 6")
def one_cycle_reduce(me, p, data, op=add, history=False):
    """All-to-all reduction by 2**d - 1 right cyclic shifts along the Gray code cycle.

    Mathur and Johnsson 1993, §4.1, Fig. 6: the broadcast of Fig. 5 run the
    other way round, adding instead of copying.  In step s the node at ring
    position q sends on the partial sum destined for position q - s (its own
    message for it in step 1) to the right and adds the partial sum for
    position q - 1 - s that comes from the left to its own message.  After
    2**d - 1 steps what came in last is the sum for the node itself.  Ring
    position e is node G(e), so the messages are taken by destination node.

    ``history=True`` also returns the node's local memory (``data`` by
    destination, ``None`` once sent on) after every step, initial state first.

    Model: d-cube, p = 2**d; time (p - 1)(ts + tw M').
    """
    _cube_d("one_cycle_reduce", p)
    op = _check_op(op)
    if not isinstance(data, (list, tuple)) or len(data) != p:
        raise ValueError(f"one_cycle_reduce needs a list of p={p} messages on every PE (one per "
                         f"destination), got {data!r:.80}")
    memory = list(data)
    snapshots = [list(memory)]
    q = gray_inverse(me)
    left, right = gray((q - 1) % p), gray((q + 1) % p)
    for s in range(1, p):
        out, into = gray((q - s) % p), gray((q - 1 - s) % p)
        partial = yield sendrecv(right, memory[out], left)
        memory[out] = None                               # sent on
        memory[into] = op(partial, memory[into])
        if history:
            snapshots.append(list(memory))
    return (memory[me], snapshots) if history else memory[me]


# -- d Hamiltonian cycles (§4.2) ----------------------------------------------------------------

def d_cycles_cost(p, m, model, **_):
    """(2**d - 1)(ts + tw ceil(M'/d)): d slots of at most ceil(M'/d) elements per step; exact."""
    d = _cube_d("d_cycles", p)
    return (p - 1) * _step(model, -(-m // d)) if d else 0.0


@register(operation="allgather", cost=d_cycles_cost, exact=True, ports="all",
          network=Hypercube.of_size, valid_p=_valid_cycles,
          source="Mathur and Johnsson 1993, §4.2.1, Figs. 8-11 (after Johnsson and Ho 1989)")
def d_cycles_broadcast(me, p, data, reorder=True):
    """All-to-all broadcast over d edge-disjoint Hamiltonian cycles, all d links at once.

    Mathur and Johnsson 1993, §4.2.1, Figs. 8-11.  Local address k d + i of
    the M' elements belongs to slot i; slot i is exchanged in step u across
    dimension (t_u + i) mod d, t being the Gray code transition sequence, so
    the d slots use d different links in every step.  What arrives is passed
    on in the next step; step j - 1 brings slot i the element of node
    ``PA XOR sh^i(G(j))`` (:func:`d_cycles_source`).  The elements are stored
    at ``s = j M' + k d + i`` and, unless ``reorder=False`` (which returns
    the 2**d rows of this local memory), reordered by source with full
    indirect addressing.  Slots left empty (M' < d) leave their link idle.

    Model: ``Hypercube(d)``, ``ports="all"``, p = 2**d, every PE holding M'
    elements; time (2**d - 1)(ts + tw ceil(M'/d)).
    """
    d = _cube_d("d_cycles_broadcast", p)
    elements = _elements("d_cycles_broadcast", data)
    m = len(elements)
    if d == 0:
        return [data] if reorder else [elements]
    dims, arrival, _, _ = _program_schedule(d)
    slots = [elements[i::d] for i in range(d)]
    busy = [i for i in range(d) if slots[i]]
    rows = [slots]
    for u in range(p - 1):
        partners = [me ^ (1 << dims[u][i]) for i in busy]
        got = yield multi(list(zip(partners, (slots[i] for i in busy))), partners)
        slots = [[] for _ in range(d)]
        for i, x in zip(busy, got):
            slots[i] = x
        rows.append(slots)
    if not reorder:
        return [_interleave(row, m) for row in rows]
    parts = [[None] * d for _ in range(p)]
    for j, row in enumerate(rows):                      # full indirect addressing
        for i in range(d):
            parts[me ^ arrival[j][i]][i] = row[i]
    return [_like(_interleave(x, m), data) for x in parts]


@register(operation="all_to_all_reduction", cost=d_cycles_cost, exact=True, ports="all",
          network=Hypercube.of_size, valid_p=_valid_cycles, params={"op": add},
          requires_commutative=True,
          source="Mathur and Johnsson 1993, §4.2.2-4.2.4, Figs. 12-20")
def d_cycles_reduce(me, p, data, op=add, history=False):
    """All-to-all reduction over d edge-disjoint Hamiltonian cycles, all d links at once.

    Mathur and Johnsson 1993, §4.2.2-4.2.4, Figs. 12-19.  The message for PE
    j is block j, cut into d subblocks (Fig. 20, :func:`split_subblocks`).
    Subblock i of block j follows cycle i backwards: it starts on node
    ``j XOR 2**((d-1+i) mod d)`` and ends on node j, the broadcast's data
    motion reversed.  In step u node PA sends subblock i of block
    ``PA XOR sh^i(G(2**d - 1 - u))`` across dimension (t_u + i) mod d and adds
    the partial sum that comes back into block ``PA XOR sh^i(G(2**d - 2 - u))``
    (:func:`d_cycles_reduce_blocks`).  ``history=True`` also returns the local
    memory, ``memory[j][i]`` (``None`` once sent on), after every step.

    Model: ``Hypercube(d)``, ``ports="all"``, p = 2**d, messages of M'
    elements; time (2**d - 1)(ts + tw ceil(M'/d)).
    """
    d = _cube_d("d_cycles_reduce", p)
    op = _check_op(op)
    messages = _messages("d_cycles_reduce", data, p)
    if d == 0:
        return (data[0], [[messages[0]]]) if history else data[0]
    dims, _, send_offset, recv_offset = _program_schedule(d)
    memory = [split_subblocks(x, d) for x in messages]
    busy = [i for i in range(d) if memory[0][i]]
    snapshots = [[list(block) for block in memory]] if history else None
    for u in range(p - 1):
        partners, sends, into = [], [], []
        for i in busy:
            partner = me ^ (1 << dims[u][i])
            j = me ^ send_offset[u][i]
            partners.append(partner)
            sends.append((partner, memory[j][i]))
            memory[j][i] = None                          # sent on
            into.append(me ^ recv_offset[u][i])
        got = yield multi(sends, partners)
        for i, j, partial in zip(busy, into, got):
            memory[j][i] = op(partial, memory[j][i])
        if history:
            snapshots.append([list(block) for block in memory])
    result = _like([x for sub in memory[me] for x in sub], data[me])
    return (result, snapshots) if history else result


# -- alternatives of §5 ----------------------------------------------------------------------------

def butterfly_cost(p, m, model, **_):
    """d (ts + tw ceil(M/d)) for M elements per node: d exchanges of one variable per link; exact."""
    d = _cube_d("butterfly_reduce_and_spread", p)
    return d * _step(model, -(-m // d)) if d else 0.0


def _butterfly(me, d, variables, op, snapshots):
    """The d exchange steps of reduce-and-spread (Fig. 21); ``yield from`` it.

    Variable i crosses dimension (u + i) mod d in step u; empty variables
    leave their link idle.  Returns the variables, every one a total.
    """
    busy = [i for i in range(d) if variables[i]]
    for u in range(d):
        partners = [me ^ (1 << ((u + i) % d)) for i in busy]
        got = yield multi(list(zip(partners, (variables[i] for i in busy))), partners)
        variables = list(variables)
        for i, partner, theirs in zip(busy, partners, got):
            mine = variables[i]
            variables[i] = op(mine, theirs) if me < partner else op(theirs, mine)
        if snapshots is not None:
            snapshots.append(variables)
    return variables


def butterfly_reduce_and_spread(me, p, data, op=add, history=False):
    """Reduce-and-spread of d distributed variables by butterfly emulation: an all-reduce.

    Mathur and Johnsson 1993, §5, alternative 4 and Fig. 21.  A node's M
    elements are cut into d distributed variables (:func:`split_subblocks`;
    with M = d, one element each, as in the figure).  In step u every node
    exchanges variable i with its neighbour across dimension (u + i) mod d
    and both combine, so the d variables use d different links, and after d
    steps every node holds every sum.  The lower node's operand comes first,
    so both partners hold the same value.  ``history=True`` also returns the
    variables after every step, initial state first.

    Model: ``Hypercube(d)``, ``ports="all"``, p = 2**d; time
    d (ts + tw ceil(M/d)) (:func:`butterfly_cost`).  It computes an all-reduce
    but is not in the catalog (the chapter-2 value tables know no view of it).
    """
    d = _cube_d("butterfly_reduce_and_spread", p)
    op = _check_op(op)
    elements = _elements("butterfly_reduce_and_spread", data)
    snapshots = [split_subblocks(elements, d)] if history and d else None
    if d == 0:
        return (data, [[elements]]) if history else data
    variables = yield from _butterfly(me, d, split_subblocks(elements, d), op, snapshots)
    result = _like([x for v in variables for x in v], data)
    return (result, snapshots) if history else result


def reduce_and_spread_cost(p, m, model, **_):
    """d (ts + tw ceil(p M'/d)): reduce-and-spread of all p M' elements; exact."""
    d = _cube_d("reduce_and_spread", p)
    return d * _step(model, -(-p * m // d)) if d else 0.0


@register(operation="all_to_all_reduction", cost=reduce_and_spread_cost, exact=True,
          ports="all", network=Hypercube.of_size, valid_p=_valid_cube, params={"op": add},
          requires_commutative=True,
          source="Mathur and Johnsson 1993, §5 (alternative 4), Fig. 21, §6.2")
def reduce_and_spread(me, p, data, op=add):
    """All-to-all reduction as reduce-and-spread of everything, then a subselection.

    Mathur and Johnsson 1993, §5 (alternative 4) and §6.2: run
    :func:`butterfly_reduce_and_spread` on all p M' local elements (the p
    messages end to end), which leaves every node with every sum, 2**d times
    the data it needs, and keep the block of the node's own messages.

    Model: ``Hypercube(d)``, ``ports="all"``, p = 2**d; time
    d (ts + tw ceil(p M'/d)), a factor about d above :func:`d_cycles_reduce`.
    """
    d = _cube_d("reduce_and_spread", p)
    op = _check_op(op)
    messages = _messages("reduce_and_spread", data, p)
    m = len(messages[0])
    if d == 0:
        return data[0]
    everything = [x for msg in messages for x in msg]
    variables = yield from _butterfly(me, d, split_subblocks(everything, d), op, None)
    everything = [x for v in variables for x in v]
    return _like(everything[me * m:(me + 1) * m], data[me])          # subselection


def send_and_spread_cost(p, m, model, **_):
    """d ts + (2**d - 1) b tw (send) + d (ts + 2**d b tw) (spread), b = ceil(M'/d); exact."""
    d = _cube_d("send_and_spread", p)
    if d == 0:
        return 0.0
    b = -(-m // d)
    send = sum(_step(model, (1 << t) * b) for t in range(d))
    return send + d * _step(model, p * b)


def _tree_dims(i, d):
    """Dimension order of the i-th rotated spanning binomial tree: i, i+1, ..., i+d-1 mod d."""
    return [(i + t) % d for t in range(d)]


@register(operation="allgather", cost=send_and_spread_cost, exact=True, ports="all",
          network=Hypercube.of_size, valid_p=_valid_cube,
          source="Mathur and Johnsson 1993, §5 (alternative 3); spanning binomial trees "
                 "after Johnsson and Ho 1989")
def send_and_spread(me, p, data):
    """All-to-all broadcast as a send (gather) into node 0 followed by a spread from it.

    Mathur and Johnsson 1993, §5, alternative 3: an all-to-one personalized
    communication, then one broadcast of everything.  To use all d links, a
    message's slots i (addresses k d + i, as in :func:`d_cycles_broadcast`)
    travel on the i-th of d spanning binomial trees rooted at node 0, tree i
    taking the dimensions in the rotated order i, i+1, ..., i+d-1 (mod d).
    Send: tree i's leaves pass their slot up and every node forwards what its
    subtree collected, last dimension first.  Spread: node 0 pushes tree i's
    collection of p slots back down the same tree.  In each step the d trees
    use d different dimensions.  (The CM-200 used its router for the send and
    an optimized spread; here both are these trees.)

    Model: ``Hypercube(d)``, ``ports="all"``, p = 2**d; with b = ceil(M'/d),
    time d ts + (2**d - 1) b tw for the send and d (ts + 2**d b tw) for the spread.
    """
    d = _cube_d("send_and_spread", p)
    elements = _elements("send_and_spread", data)
    m = len(elements)
    if d == 0:
        return [data]
    size = [len(elements[i::d]) for i in range(d)]             # every node's slot i is this long
    busy = [i for i in range(d) if size[i]]
    collected = {i: [(me, elements[i::d])] for i in busy}    # (source, slot) pairs
    for t in reversed(range(d)):                               # send: up the trees
        sends, sources, trees = [], [], []
        for i in busy:
            order = _tree_dims(i, d)
            inside = sum(1 << c for c in order[:t + 1])
            if me & ~inside:
                continue                                       # not in this level's subcube
            partner = me ^ (1 << order[t])
            if me >> order[t] & 1:
                mine = collected.pop(i)                        # handed on to the parent
                sends.append((partner, mine, len(mine) * size[i]))
            else:
                sources.append(partner)
                trees.append(i)
        got = yield multi(sends, sources)
        for i, x in zip(trees, got):
            collected[i] = collected[i] + x
    for t in range(d):                                          # spread: down the trees
        sends, sources, trees = [], [], []
        for i in busy:
            order = _tree_dims(i, d)
            informed = sum(1 << c for c in order[:t])
            if me & ~(informed | 1 << order[t]):
                continue
            partner = me ^ (1 << order[t])
            if me & ~informed == 0:
                sends.append((partner, collected[i], p * size[i]))
            else:
                sources.append(partner)
                trees.append(i)
        got = yield multi(sends, sources)
        for i, x in zip(trees, got):
            collected[i] = x
    slot_of = [dict(collected[i]) if i in collected else {} for i in range(d)]
    return [_like(_interleave([slot_of[i].get(source, ()) for i in range(d)], m), data)
            for source in range(p)]


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
    last = np.repeat(nodes[:, None], d, axis=1)
    for _, _, last in _broadcast_moves(d):
        pass
    block = last.copy()                                     # block whose partial PA sends next
    partial = _contribution(nodes[:, None], block, slot, d)
    has = np.zeros(d * n * n, bool)                         # has[i, PA, block]
    base = (np.arange(d)[None, :] * n + nodes[:, None]) * n
    has[base + block] = True
    duplicates = mismatches = max_uses = 0
    totals = np.zeros(d, np.int64)
    for v in range(n - 1):
        partner = nodes[:, None] ^ (1 << sched.dims[n - 2 - v])[None, :]
        uses = _link_uses(sched.dims[n - 2 - v], d)
        totals += uses
        max_uses = max(max_uses, int(uses.max()))
        mismatches += int(np.count_nonzero(block != nodes[:, None] ^ sched.send_offset[v]))
        block, partial = block[partner, slot], partial[partner, slot]
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


# -- element transfers in sequence (Table 2) ----------------------------------------------------

_TRANSFER_PROGRAMS = ("one_cycle_broadcast", "d_cycles_broadcast", "send_and_spread",
                      "one_cycle_reduce", "d_cycles_reduce", "reduce_and_spread")


def element_transfers(name: str, d: int, m: int, channels: int = 1) -> int:
    """Element transfers in sequence of a CM-200 program, counted by the simulator.

    Runs the catalog entry ``name`` on ``Hypercube(d)`` with every PE holding
    ``m`` elements (M' = m for the broadcasts; p messages of m elements, one
    block per destination, for the all-to-all reductions) under
    ``CostModel(ts=0, tw=1, ports="all")``: the simulated time is then the
    number of elements that cross a link one after another, the quantity of
    Mathur and Johnsson's Table 2.  ``channels=2`` counts what the CM-200's
    pair of channels between neighbours moves, two elements at a time: each
    transfer of w elements is charged ceil(w / 2).

    >>> element_transfers("d_cycles_broadcast", 3, 6), element_transfers("one_cycle_broadcast", 3, 6)
    (14, 42)
    """
    from ..catalog import catalog
    if name not in _TRANSFER_PROGRAMS:
        raise ValueError(f"name must be one of {_TRANSFER_PROGRAMS}, got {name!r}")
    d = check_positive_int("d", d, least=0)
    m = check_positive_int("m", m)
    channels = check_positive_int("channels", channels)
    entry = catalog()[name]
    p = 1 << d
    run = entry.simulate(p, m, model=CostModel(ts=0.0, tw=1.0, ports="all"),
                         trace=channels > 1)
    if channels == 1:
        return int(round(run.time))
    # With c channels a w-element transfer takes ceil(w / c).  When the nodes move
    # in lock step (each step starts as the longest transfer of the one before
    # ends), the run is the sum over steps of the longest transfer; otherwise
    # rescaling the steps would not be the run the program makes, so refuse.
    longest, ends = {}, {}
    for msg in run.messages:
        longest[msg.start] = max(longest.get(msg.start, 0), -(-msg.words // channels))
        ends[msg.start] = max(ends.get(msg.start, 0), msg.end)
    starts = sorted(ends)
    for step, following in zip(starts, starts[1:]):
        if ends[step] != following:
            raise ValueError(f"{name} with m={m} on d={d} does not move in lock step (a step "
                             f"starts at {following:g}, the one before ends at {ends[step]:g}), "
                             "so its count with channels=2 cannot be read off the one-channel "
                             "run; choose m a multiple of d")
    return int(sum(longest.values()))
