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

The analysis around these programs lives in :mod:`collective_lib.cm200.schedules`:
the local-memory index formulas of §4.1, §4.2.1 and §4.2.3, the schedule the
programs follow, the numpy executors that check it for the real machine's
d = 11, and the element-transfer counts of Table 2.

The cycle programs move every element slot in each of the p - 1 steps,
about p^2 d transfers in all (46 million for the CM-200's d = 11 with
M' = d), so each step of a program does O(d) work besides its messages: the
payloads are cut once, passed on by reference, and put in order once at the
end (benchmarks/cm200_scale.py runs them on 2048 nodes).

Closed forms count communication only, one element per word: with
``ts = 0, tw = 1`` a program's simulated time is the number of element
transfers in sequence over one channel per direction (the quantity of the
paper's Table 2; :func:`~collective_lib.cm200.transfers.element_transfers`).
The CM-200 has a pair of channels between neighbours and moves two elements
at a time (``channels=2``).

Source: K. K. Mathur and S. L. Johnsson, All-to-All Communication on the
Connection Machine CM-200, Harvard TR-02-93 (1993), §3-§5.
"""
from __future__ import annotations

from functools import lru_cache
from itertools import chain
from operator import itemgetter

import numpy as np

from ..catalog import register
from ..cm200.gray import gray, gray_inverse
from ..cm200.schedules import (d_cycles_schedule, one_cycle_index, split_subblocks,
                               subblock_bounds)
from ..networks import Hypercube
from ..ops import multi, sendrecv
from ..validate import check_operator, check_power_of_two
from .reduce import add

__all__ = [
    "one_cycle_broadcast", "one_cycle_reduce", "d_cycles_broadcast", "d_cycles_reduce",
    "butterfly_reduce_and_spread", "butterfly_cost", "reduce_and_spread", "send_and_spread",
    "d_cycles_cost", "one_cycle_cost", "reduce_and_spread_cost",
    "send_and_spread_cost",
]

#: Where the catalog lists this module's entries (see collective_lib.algorithms).
CATALOG_POSITION = 60


# -- checks and small helpers ----------------------------------------------------------------

def _cube_d(algorithm, p) -> int:
    return check_power_of_two(algorithm, p)


def _valid_cube(p):
    check_power_of_two("the CM-200 algorithms", p)


def _elements(algorithm, message) -> list:
    """The elements of one message, as a list (a list itself, not a copy: only read)."""
    if isinstance(message, list):
        return message
    if isinstance(message, np.ndarray):
        return message.tolist()
    if isinstance(message, tuple):
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


def _interleave(slots, m, d=None):
    """Inverse of ``elements[i::d]``: address k*d + i holds ``slots[i][k]``.

    ``d`` defaults to ``len(slots)``; pass it when the empty slots are left out.
    """
    d = len(slots) if d is None else d
    out = [None] * m
    for i, part in enumerate(slots):
        out[i::d] = part
    return out


@lru_cache(maxsize=16)
def _program_schedule(d: int):
    """The schedule of :func:`d_cycles_schedule` as the SPMD programs read it, shared by all PEs.

    ``links[u][i] = 2**dims[u, i]`` (PA's partner for slot i in step u is
    ``PA XOR links[u][i]``); ``send_offset`` and ``recv_offset`` as lists;
    ``row_of[x, i]`` the row j with ``arrival[j, i] = x`` (sh^i o G is one to one),
    the inverse of §4.2.1's index formula used to reorder by source.
    """
    s = d_cycles_schedule(d)
    row_of = np.empty_like(s.arrival)
    row_of[s.arrival, np.arange(d)] = np.arange(1 << d)[:, None]
    row_of.setflags(write=False)
    return (np.left_shift(1, s.dims).tolist(), s.send_offset.tolist(), s.recv_offset.tolist(),
            row_of)


@lru_cache(maxsize=16)
def _gray_codes(d: int) -> list:
    """``G(q)`` for q = 0 .. 2**d - 1: the node at ring position q, shared by all PEs."""
    return gray(np.arange(1 << d)).tolist()


# -- one Hamiltonian cycle (§4.1) ---------------------------------------------------------------

def one_cycle_cost(p, m, model, **_):
    """(2**d - 1)(ts + tw M'): one cyclic shift of M' elements per step; exact."""
    _cube_d("one_cycle", p)
    return (p - 1) * model.transfer_time(m)


#: The closed form of :func:`one_cycle_cost` as TeX (``register(tex=...)``).
_ONE_CYCLE_TEX = r"(2^d - 1)(t_s + t_w M')"


@register(operation="allgather", cost=one_cycle_cost, exact=True, ports="all",
          tex=_ONE_CYCLE_TEX,
          network_for=Hypercube.of_size, valid_p=_valid_cube,
          source="Mathur and Johnsson 1993, §4.1, Figs. 5 and 7")
def one_cycle_broadcast(me, p, data, reorder=True):
    """All-to-all broadcast by 2**d - 1 left cyclic shifts along the Gray code cycle.

    Mathur and Johnsson 1993, §4.1, Figs. 5 and 7.  Ring position q lives on
    node G(q) (:func:`~collective_lib.cm200.gray.ring_embedding`), so both ring
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
    result = [None] * p                     # Fig. 7: file each message by its source
    for x, index in zip(memory, one_cycle_index(me, np.arange(p), d).tolist()):
        result[index] = x
    return result


@register(operation="all_to_all_reduction", cost=one_cycle_cost, exact=True, ports="all",
          tex=_ONE_CYCLE_TEX,
          network_for=Hypercube.of_size, valid_p=_valid_cube, params={"op": add},
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
    d = _cube_d("one_cycle_reduce", p)
    op = check_operator(op)
    if not isinstance(data, (list, tuple)) or len(data) != p:
        raise ValueError(f"one_cycle_reduce needs a list of p={p} messages on every PE (one per "
                         f"destination), got {data!r:.80}")
    memory = list(data)                                  # sent-on messages become None
    snapshots = [list(memory)] if history else None
    q = gray_inverse(me)
    node = _gray_codes(d)                                # ring position -> node
    left, right = node[(q - 1) % p], node[(q + 1) % p]
    for s in range(1, p):
        out, into = node[(q - s) % p], node[(q - 1 - s) % p]
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
    return (p - 1) * model.transfer_time(-(-m // d)) if d else 0.0


#: The closed form of :func:`d_cycles_cost` as TeX (``register(tex=...)``).
_D_CYCLES_TEX = r"(2^d - 1)\bigl(t_s + t_w \lceil M'/d \rceil\bigr)"


@register(operation="allgather", cost=d_cycles_cost, exact=True, ports="all",
          tex=_D_CYCLES_TEX,
          network_for=Hypercube.of_size, valid_p=_valid_cube,
          source="Mathur and Johnsson 1993, §4.2.1, Figs. 8-11 (after Johnsson and Ho 1989)")
def d_cycles_broadcast(me, p, data, reorder=True):
    """All-to-all broadcast over d edge-disjoint Hamiltonian cycles, all d links at once.

    Mathur and Johnsson 1993, §4.2.1, Figs. 8-11.  Local address k d + i of
    the M' elements belongs to slot i; slot i is exchanged in step u across
    dimension (t_u + i) mod d, t being the Gray code transition sequence, so
    the d slots use d different links in every step.  What arrives is passed
    on in the next step; step j - 1 brings slot i the element of node
    ``PA XOR sh^i(G(j))``
    (:func:`~collective_lib.cm200.schedules.d_cycles_source`).  The elements
    are stored at ``s = j M' + k d + i`` and, unless ``reorder=False`` (which returns
    the 2**d rows of this local memory), reordered by source with full
    indirect addressing.  Slots left empty (M' < d) leave their link idle.

    Model: ``Hypercube(d)``, ``ports="all"``, p = 2**d, every PE holding M'
    elements; time (2**d - 1)(ts + tw ceil(M'/d)).
    """
    d = _cube_d("d_cycles_broadcast", p)
    elements = _elements("d_cycles_broadcast", data)
    m = len(elements)
    if d == 0:
        return [data] if reorder else [list(elements)]
    links, _, _, row_of = _program_schedule(d)
    busy = min(m, d)                # slots i >= M' are empty: their links stay idle
    slots = [elements[i::d] for i in range(busy)]
    memory = list(slots)            # slot i of row j at j * busy + i, as it arrived
    for u in range(p - 1):
        partners = [me ^ link for _, link in zip(range(busy), links[u])]
        # pass on what came last
        slots = yield multi(list(zip(partners, slots)), partners)
        memory += slots
    if not reorder:
        return [_interleave(memory[j * busy:(j + 1) * busy], m, d) for j in range(p)]
    # Full indirect addressing: element k of slot i of source PA XOR sh^i(G(j)) is in
    # row j (§4.2.1), and row j's slots lie end to end from j * M' in ``flat``.
    flat = list(chain.from_iterable(memory))
    address = np.arange(m)
    # where each slot starts within a row: the same in every row
    starts = np.cumsum([0] + [len(slot) for slot in memory[:busy - 1]])
    within = starts[address % d] + address // d
    rows = row_of[me ^ np.arange(p)][:, address % d]
    ordered = itemgetter(*(rows * m + within).ravel().tolist())(flat)
    return [_like(ordered[source * m:(source + 1) * m], data) for source in range(p)]


@register(operation="all_to_all_reduction", cost=d_cycles_cost, exact=True, ports="all",
          tex=_D_CYCLES_TEX,
          network_for=Hypercube.of_size, valid_p=_valid_cube, params={"op": add},
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
    (:func:`~collective_lib.cm200.schedules.d_cycles_reduce_blocks`).
    ``history=True`` also returns the local memory, ``memory[j][i]`` (``None`` once sent on), after every step.

    Model: ``Hypercube(d)``, ``ports="all"``, p = 2**d, messages of M'
    elements; time (2**d - 1)(ts + tw ceil(M'/d)).
    """
    d = _cube_d("d_cycles_reduce", p)
    op = check_operator(op)
    messages = _messages("d_cycles_reduce", data, p)
    if d == 0:
        return (data[0], [[messages[0]]]) if history else data[0]
    links, send_offset, recv_offset, _ = _program_schedule(d)
    bounds = subblock_bounds(len(messages[0]), d)
    busy = min(len(messages[0]), d)                  # empty subblocks leave their link idle
    # Slot i of block j holds the node's own subblock until a partial sum for it comes in,
    # which the node sends on in the next step (the receiver of step u is the sender of step
    # u + 1), so at most d partial sums are held at a time and a subblock is cut when needed.
    partial = {}                                     # j * d + i -> partial sum held
    sent = set() if history else None
    snapshots = [_reduce_memory(messages, bounds, partial, sent)] if history else None
    for u in range(p - 1):
        partners = [me ^ link for _, link in zip(range(busy), links[u])]
        keys = [(me ^ offset) * d + i for i, offset in zip(range(busy), send_offset[u])]
        if u:                                        # what came in in step u - 1
            out = [partial.pop(key) for key in keys]
        else:                                        # step 0: the cycles start here
            out = [messages[key // d][start:stop] for key, (start, stop) in zip(keys, bounds)]
        if history:
            sent.update(keys)
        got = yield multi(list(zip(partners, out)), partners)
        for i, offset, incoming in zip(range(busy), recv_offset[u], got):
            j = me ^ offset
            start, stop = bounds[i]
            partial[j * d + i] = op(incoming, messages[j][start:stop])
        if history:
            snapshots.append(_reduce_memory(messages, bounds, partial, sent))
    result = _like(list(chain.from_iterable(partial[me * d + i] for i in range(busy))), data[me])
    return (result, snapshots) if history else result


def _reduce_memory(messages, bounds, partial, sent):
    """:func:`d_cycles_reduce`'s local memory as ``memory[j][i]``: the own subblock, the
    partial sum held, or None once sent on (for ``history=True``)."""
    d = len(bounds)
    return [[None if j * d + i in sent else partial.get(j * d + i, message[start:stop])
             for i, (start, stop) in enumerate(bounds)] for j, message in enumerate(messages)]


# -- alternatives of §5 ----------------------------------------------------------------------------

def butterfly_cost(p, m, model, **_):
    """d (ts + tw ceil(M/d)) for M elements per node: d exchanges of one variable per link; exact."""
    d = _cube_d("butterfly_reduce_and_spread", p)
    return d * model.transfer_time(-(-m // d)) if d else 0.0


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
    op = check_operator(op)
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
    return d * model.transfer_time(-(-p * m // d)) if d else 0.0


@register(operation="all_to_all_reduction", cost=reduce_and_spread_cost, exact=True,
          tex=r"d\bigl(t_s + t_w \lceil p M'/d \rceil\bigr)",
          ports="all", network_for=Hypercube.of_size, valid_p=_valid_cube, params={"op": add},
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
    op = check_operator(op)
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
    send = sum(model.transfer_time((1 << t) * b) for t in range(d))
    return send + d * model.transfer_time(p * b)


def _tree_dims(i, d):
    """Dimension order of the i-th rotated spanning binomial tree: i, i+1, ..., i+d-1 mod d."""
    return [(i + t) % d for t in range(d)]


@register(operation="allgather", cost=send_and_spread_cost, exact=True, ports="all",
          tex=r"d t_s + (2^d - 1) b t_w + d(t_s + 2^d b t_w),\quad b = \lceil M'/d \rceil",
          network_for=Hypercube.of_size, valid_p=_valid_cube,
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
