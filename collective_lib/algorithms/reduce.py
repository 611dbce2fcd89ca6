"""Reduction, all-reduce, prefix sums and the message-passing barrier (chapter 2).

Every PE i holds a message m_i; an associative operator ``op`` combines them.

* reduce: the root returns ``m_0 op m_1 op ... op m_(p-1)``, every other PE ``None``;
* all-reduce: every PE returns that value;
* prefix sum: PE i returns ``m_0 op ... op m_i`` (inclusive) or ``m_0 op ... op m_(i-1)``
  (exclusive; ``None`` on PE 0, since a general operator has no known neutral element);
* barrier: an all-reduce of nothing (Sanders Corollary 13.8): no PE leaves before all came.

Operators and messages
----------------------
A message is a sequence of words (the catalog's inputs are Python lists of m
ints) and the default operator :data:`add` adds two messages word by word.
:func:`elementwise` lifts any binary function on words to messages (the three
operator helpers live in :mod:`collective_lib.collectives`, with what each
operation must return, and are importable from here too), e.g.
``elementwise(operator.mul)`` or word-wise string concatenation, which is
associative but not commutative.  The results are always combined with the
operand of the lower-ranked PEs on the left, except where an entry says
``requires_commutative=True``.

Inside the programs ``None`` stands for the neutral element ``0`` that the
book's pseudocode starts from ("x := 0; receive(leftChild, x)"): combining with
``None`` returns the other operand unchanged (:func:`combine`).

Cost convention
---------------
The closed forms are communication-only, like the sources' ``T`` formulas:
applying ``op`` costs no simulated time (a program would have to yield
``compute(t)`` to be charged for it, and none here does).

Sources: Sanders, Mehlhorn, Dietzfelbinger, Dementiev, Sequential and Parallel
Algorithms and Data Structures (2019), §13.2-13.4; Grama, Gupta, Karypis,
Kumar, Introduction to Parallel Computing (2003), §4.3 (all-reduce, barrier);
Rabenseifner, Optimization of Collective Reduction Operations, ICCS 2004
(reduce-scatter + all-gather); Hensgen, Finkel, Manber, Two Algorithms for
Barrier Synchronization, IJPP 1988 (dissemination barrier).
"""
from __future__ import annotations

from numbers import Integral

import numpy as np

from ..catalog import register
from ..networks import Hypercube
from ..collectives import add, combine, elementwise
from ..ops import exchange, recv, send, sendrecv, size_in_words
from ..packets import (best_packet_count, check_packet_count, join_packets, packet_words,
                       split_packets)
from ..trees import binomial_children, binomial_parent, ceil_log2, in_order_node, tree_height
from ..validate import (check_flag, check_operator, check_positive_int, check_power_of_two,
                        check_root)
from .broadcast import binomial_broadcast

__all__ = [
    "elementwise", "add", "combine", "binomial_reduce", "binary_tree_reduce",
    "pipelined_binary_tree_reduce", "reduce_broadcast_allreduce", "hypercube_allreduce",
    "rabenseifner_allreduce", "hypercube_prefix_sum", "binary_tree_prefix_sum",
    "pipelined_binary_tree_prefix_sum", "barrier", "barrier_cost", "binary_tree_prefix_sum_cost",
    "pipelined_binary_tree_prefix_sum_cost", "pipelined_binary_tree_prefix_sum_optimal_k",
    "binary_tree_reduce_cost",
    "binomial_reduce_cost", "hypercube_allreduce_cost", "hypercube_prefix_sum_cost",
    "pipelined_binary_tree_reduce_cost", "pipelined_binary_tree_reduce_optimal_k",
    "rabenseifner_allreduce_cost", "reduce_broadcast_allreduce_cost",
]

#: Where this module's entries stand in the catalog (chapter 2; see collective_lib.algorithms).
CATALOG_POSITION = 20


# kept until two_tree_prefix.py (being edited elsewhere) imports them from validate
# -- what a PE holds after each step (for the tables of values) --------------------------
#
# Each function reads a PE's recorded state (``locals``: the program's local variables).

def _combined(state, *names):
    """``op`` folded over the named locals that are bound and not None (None is neutral)."""
    env = state.locals
    return combine(env.get("op"), *[env.get(n) for n in names]) if "op" in env else None


def _tree_reduce_held(state):
    """Left, own and right operand combined so far (binary tree reduction, prefix sum up)."""
    return _combined(state, "x", "data", "z")


def _pipelined_held(state):
    """The packets combined so far, glued; the PE's own message before the first."""
    packets = state.locals.get("packets")
    return join_packets(packets) if packets else state.locals.get("data")


def _reduce_then_broadcast_held(state):
    """The partial sum while reducing, the result once broadcasting."""
    env = state.locals
    if "total" in env:                     # the broadcast phase: its `data` is the result
        return env.get("data")
    return env.get("x", env.get("data"))


def _tree_prefix_down(state):
    """The prefix known so far on the way down the tree."""
    return state.locals.get("mine")


# -- binomial tree reduction ----------------------------------------------------------------

def binomial_reduce_cost(p, m, model, **_):
    """ceil(log2 p)(alpha + beta m): the binomial broadcast run backwards; exact for every p."""
    return ceil_log2(p) * model.transfer_time(m)


@register(operation="reduce", cost=binomial_reduce_cost, exact=True,
          tex=r"\lceil \log_2 p \rceil (t_s + t_w m)",
          params={"root": 0, "op": add}, requires_commutative=True, held="x",
          source="Sanders et al. 2019, §13.2 (and §2.4.2), Fig. 13.3 right")
def binomial_reduce(me, p, data, root=0, op=add):
    """Reduce up the binomial tree: the binomial broadcast run backwards.

    Sanders et al. 2019, §13.2 and Fig. 13.3 (right): every PE receives the
    partial results of its children and sends the combination to its parent.
    Running the broadcast backwards also reverses the order of the children:
    the smallest subtree (i + 1) first, the largest (i + 2**(k-1)) last, so
    child i + 2**j is received in step j + 1, just when its own subtree is
    done.  Any p (the tree for the next power of two, cut at p), any root
    (ranks relative to the root, ``(me - root) mod p``), one port, time
    ceil(log2 p)(alpha + beta m), exactly the broadcast's (Theorem 13.1).

    Operand order: a PE with relative rank i combines the relative ranks
    i .. i + 2**k - 1 in increasing order, so for ``root=0`` the result is
    ``m_0 op ... op m_(p-1)`` for any associative ``op``.  For another root
    the relative order is the rotation ``root, ..., p-1, 0, ..., root-1``,
    which is right only for a commutative ``op``; the entry is therefore
    flagged ``requires_commutative``.
    """
    root = check_root(root, p)
    op = check_operator(op)
    i = (me - root) % p
    x = data
    for c in reversed(binomial_children(i, p)):          # smallest child first
        x = op(x, (yield recv((c + root) % p)))
    parent = binomial_parent(i)
    if parent is None:
        return x                                          # the root holds the result
    yield send((parent + root) % p, x)
    return None


# -- in-order binary tree reduction ------------------------------------------------------

def binary_tree_reduce_cost(p, m, model, root=0, **_):
    """2L(alpha + beta m), Lemma 13.4 with one packet; L = height of the in-order tree."""
    return 2 * tree_height(p, check_root(root, p)) * model.transfer_time(m)


@register(operation="reduce", cost=binary_tree_reduce_cost, exact=False, ports="half-duplex",
          tex=r"2L(t_s + t_w m)",
          params={"root": 0, "op": add}, held=_tree_reduce_held,
          source="Sanders et al. 2019, §13.2 (InOrderTree::reduce), Fig. 13.5, Lemma 13.4")
def binary_tree_reduce(me, p, data, root=0, op=add):
    """Reduce up the in-order binary tree: left subtree op own op right subtree.

    Sanders et al. 2019, §13.2, ``InOrderTree::reduce``: x := 0; receive x
    from the left child; z := 0; receive z from the right child; send
    x op m op z to the parent (the root keeps it).  The tree is the perfectly
    balanced in-order tree of ``buildTree`` (Fig. 13.5) with the given root:
    each subtree covers a contiguous range of ranks, the left one below the
    PE and the right one above, so the root ends with m_0 op ... op m_(p-1)
    in rank order for any associative, even non-commutative, ``op`` and any
    root.  Half-duplex (one send or receive at a time): time at most
    2L(alpha + beta m), L the tree height (Lemma 13.4 with k = 1); a tree
    with unequal subtrees can finish earlier.
    """
    root = check_root(root, p)
    op = check_operator(op)
    node = in_order_node(me, p, root)
    x = None                                              # x := 0
    if node.left is not None:
        x = yield recv(node.left)
    z = None                                              # z := 0
    if node.right is not None:
        z = yield recv(node.right)
    total = combine(op, x, data, z)
    if node.parent is None:
        return total                                      # the root returns the result
    yield send(node.parent, total)
    return None


# -- pipelined in-order binary tree reduction ------------------------------------------------

def pipelined_binary_tree_reduce_cost(p, m, model, root=0, k=1, **_):
    """(2L + 3(k-1))(alpha + beta ceil(m/k)), Sanders Lemma 13.4 (Eq. 13.2); an upper bound."""
    k = check_positive_int("k", k)
    if p == 1:
        return 0.0
    height = tree_height(p, check_root(root, p))
    return (2 * height + 3 * (k - 1)) * model.transfer_time(packet_words(m, k))


def pipelined_binary_tree_reduce_optimal_k(p, m, model, root=0, **_):
    """The number of packets in 1..m that minimizes Lemma 13.4's bound."""
    return best_packet_count(pipelined_binary_tree_reduce_cost, p, m, model, root=root)


@register(operation="reduce", cost=pipelined_binary_tree_reduce_cost, exact=False,
          tex=r"(2L + 3(k - 1))\bigl(t_s + t_w \lceil m/k \rceil\bigr)",
          ports="half-duplex", params={"root": 0, "op": add, "k": 1},
          valid_m=check_packet_count, held=_pipelined_held,
          optimal_k=pipelined_binary_tree_reduce_optimal_k,
          source="Sanders et al. 2019, §13.2, Lemma 13.4 (Eq. 13.2), Corollary 13.5")
def pipelined_binary_tree_reduce(me, p, data, root=0, op=add, k=1):
    """Reduce k packets up the in-order binary tree, one packet behind the other.

    Sanders et al. 2019, §13.2: the pseudocode of ``InOrderTree::reduce`` run
    once per packet (the book leaves it as an exercise): for packet j, receive
    the left child's packet j, receive the right child's packet j, send
    x_j op m_j op z_j to the parent.  Every PE cuts its message into k packets
    of at most ceil(m/k) words (``packets.split_packets``), so ``op`` must
    act word by word, as any :func:`elementwise` operator does ("the
    reduction can be computed componentwise", §13.2).  In-order tree, so the
    result is in rank order for any root and any associative ``op``.
    Half-duplex: time at most (2L + 3(k-1))(alpha + beta ceil(m/k))
    (Lemma 13.4); with the best k, 3 beta m + 2 alpha log p + O(sqrt(alpha beta m log p))
    (Corollary 13.5).
    """
    root = check_root(root, p)
    op = check_operator(op)
    k = check_positive_int("k", k)
    node = in_order_node(me, p, root)
    packets = split_packets(data, k)
    for j in range(k):
        x = None
        if node.left is not None:
            x = yield recv(node.left)
        z = None
        if node.right is not None:
            z = yield recv(node.right)
        packets[j] = combine(op, x, packets[j], z)
        if node.parent is not None:
            yield send(node.parent, packets[j])
    return join_packets(packets) if node.parent is None else None


# -- all-reduce: reduce, then broadcast ------------------------------------------------------

def reduce_broadcast_allreduce_cost(p, m, model, **_):
    """2 ceil(log2 p)(alpha + beta m): binomial reduce plus binomial broadcast; exact."""
    return 2 * ceil_log2(p) * model.transfer_time(m)


@register(operation="allreduce", cost=reduce_broadcast_allreduce_cost, exact=True,
          tex=r"2 \lceil \log_2 p \rceil (t_s + t_w m)",
          params={"op": add}, held=_reduce_then_broadcast_held,
          source="Sanders et al. 2019, §13.2.1 (reduction followed by a broadcast); "
                 "Grama et al. 2003, §4.3")
def reduce_broadcast_allreduce(me, p, data, op=add):
    """All-reduce as a binomial reduction to PE 0 followed by a binomial broadcast.

    Sanders et al. 2019, §13.2.1 ("a reduction followed by a broadcast"),
    Grama et al. 2003, §4.3 ("semantically identical to an all-to-one
    reduction followed by a one-to-all broadcast").  Both phases use the
    binomial tree rooted at PE 0, so the operands are combined in rank order
    and a non-commutative ``op`` is fine.  Any p, one port: time
    2 ceil(log2 p)(alpha + beta m), twice the latency of the hypercube
    algorithm.
    """
    op = check_operator(op)
    total = yield from binomial_reduce(me, p, data, root=0, op=op)
    return (yield from binomial_broadcast(me, p, total, root=0))


# -- all-reduce on the hypercube ------------------------------------------------------------

def hypercube_allreduce_cost(p, m, model, **_):
    """log2 p (alpha + beta m), Sanders §13.2.1; exact with full-duplex exchanges."""
    return check_power_of_two("hypercube_allreduce", p) * model.transfer_time(m)


def _hypercube_allreduce_p(p):
    check_power_of_two("hypercube_allreduce", p)


@register(operation="allreduce", cost=hypercube_allreduce_cost, exact=True,
          tex=r"(t_s + t_w m) \log_2 p",
          network_for=Hypercube.of_size, valid_p=_hypercube_allreduce_p, params={"op": add}, held="m",
          source="Sanders et al. 2019, §13.2.1, Fig. 13.7 (bottom values); Grama et al. 2003, "
                 "§4.3 (all-reduce on the all-to-all broadcast pattern, Fig. 4.11)")
def hypercube_allreduce(me, p, data, op=add):
    """All-reduce on a d-dimensional hypercube: exchange and combine along each dimension.

    Sanders et al. 2019, §13.2.1: for i := 0 to d-1, send m to PE
    me XOR 2**i while receiving m' from it, then m := m op m'.  Invariant:
    after iteration i every (i+1)-dimensional subcube (the PEs that agree in
    bits i+1 .. d-1) has done an all-reduce within itself.  We put the
    operand of the lower subcube on the left (m' op m on the PE whose bit i
    is 1), so the result is m_0 op ... op m_(p-1) even for a non-commutative
    ``op``; the book's m op m' is the same for a commutative one.  p must be a
    power of two; full-duplex exchanges between hypercube neighbours, time
    log2 p (alpha + beta m).

    Grama et al. 2003, §4.3 reach the same program from the other side: run
    the all-to-all broadcast of Algorithm 4.7 (Fig. 4.11), but add the
    numbers received instead of concatenating the messages, so the message
    stays m words long and each of the log p steps costs ts + tw m.
    """
    d = check_power_of_two("hypercube_allreduce", p)
    op = check_operator(op)
    m = data
    for i in range(d):
        partner = me ^ (1 << i)
        m_prime = yield exchange(partner, m)              # send(partner, m) || receive(partner, m')
        m = op(m_prime, m) if me & (1 << i) else op(m, m_prime)
    return m


# -- Rabenseifner: reduce-scatter by recursive halving, all-gather by recursive doubling -----

def _check_rabenseifner_m(p, m, **_):
    if not isinstance(m, Integral) or isinstance(m, bool) or m < p:
        raise ValueError(f"rabenseifner_allreduce cuts the message into one block per PE and "
                         f"needs m >= p words, got m={m!r} for p={p}")


def rabenseifner_allreduce_cost(p, m, model, **_):
    """2 sum_{j=1..log p} (alpha + beta (p/2**j) ceil(m/p)) = 2 alpha log p + 2 beta (p-1) ceil(m/p).

    When p divides m this is Rabenseifner's 2 alpha log p + 2 beta m (p-1)/p.
    Exact for every m >= p with full-duplex exchanges (blocks travel padded
    to ceil(m/p) words, see the program).
    """
    d = check_power_of_two("rabenseifner_allreduce", p)
    _check_rabenseifner_m(p, m)
    block = packet_words(m, p)
    return 2 * sum(model.transfer_time((p >> j) * block) for j in range(1, d + 1))


def _rabenseifner_p(p):
    check_power_of_two("rabenseifner_allreduce", p)


@register(operation="allreduce", cost=rabenseifner_allreduce_cost, exact=True,
          tex=r"2 t_s \log_2 p + 2 t_w (p - 1) \lceil m/p \rceil",
          network_for=Hypercube.of_size, valid_p=_rabenseifner_p, valid_m=_check_rabenseifner_m,
          params={"op": add}, held="vector",
          source="Rabenseifner, ICCS 2004 (reduce-scatter + all-gather); "
                 "Grama et al. 2003, §4.2.3, Algorithm 4.8 (ALL_TO_ALL_RED_HCUBE); "
                 "Sanders et al. 2019, §13.2.1")
def rabenseifner_allreduce(me, p, data, op=add):
    """All-reduce of long vectors: reduce-scatter by recursive halving, then all-gather.

    Rabenseifner 2004: cut the m-word vector into p blocks (as
    ``split_packets`` cuts: the first m mod p blocks one word longer).  Reduce-scatter:
    in step i (i = 0 .. d-1) exchange with PE me XOR 2**i the half of the
    current block range that the partner keeps, and combine the half received
    into the half kept, so the message halves each step and every PE ends
    with one fully reduced block (Grama's all-to-all reduction on the
    hypercube, Algorithm 4.8, is the same pattern).  All-gather: undo the
    steps in reverse order, exchanging the reduced ranges, which double.

    Why i runs upwards: after step i a PE's partial result covers the ranks of
    its aligned 2**(i+1)-subcube, a contiguous range, and the lower range is
    put on the left, so ``op`` needs no commutativity (halving with the
    partner at distance p/2 first, as Algorithm 4.8 does, would combine the
    ranks in bit-reversed order).  PE me therefore ends the first phase with
    block bitreverse(me); the time is the same either way.  ``op`` is applied
    to ranges of words, so it must act word by word (any :func:`elementwise`
    operator does; the vector is "computed componentwise", Sanders §13.2).

    p must be a power of two and m >= p.  Every block is charged as
    ceil(m/p) words, as if the vector were padded to a multiple of p (the
    usual fixed block size): then all pairs of a step exchange equally long
    messages and stay in lockstep.  (Charging uneven blocks by their true
    length lets a PE that is a step ahead occupy a slower PE's receive port
    early, and the time stops following any simple formula.)  Full-duplex
    exchanges; applying ``op`` is free (communication-only convention).
    Time 2 alpha log p + 2 beta (p-1) ceil(m/p), i.e. Rabenseifner's
    2 alpha log p + 2 beta m (p-1)/p when p divides m.
    """
    d = check_power_of_two("rabenseifner_allreduce", p)
    op = check_operator(op)
    m = size_in_words(data)
    _check_rabenseifner_m(p, m)
    small, extra = divmod(m, p)                           # cut as split_packets does: block b is

    def start(b):                                         # vector[start(b):start(b+1)]
        return b * small + min(b, extra)

    block_words = packet_words(m, p)                      # ceil(m/p): the padded block size
    vector = list(data)
    lo, hi = 0, p                                         # the blocks I am responsible for
    ranges = []
    for i in range(d):                                    # reduce-scatter by recursive halving
        partner, mid = me ^ (1 << i), (lo + hi) // 2
        ranges.append((lo, hi))
        if me & (1 << i):                                 # keep the upper half, send the lower
            send_lo, send_hi, lo = lo, mid, mid
        else:                                             # keep the lower half, send the upper
            send_lo, send_hi, hi = mid, hi, mid
        theirs = yield exchange(partner, vector[start(send_lo):start(send_hi)],
                                words=(send_hi - send_lo) * block_words)
        mine = vector[start(lo):start(hi)]
        vector[start(lo):start(hi)] = op(theirs, mine) if me & (1 << i) else op(mine, theirs)
    for i in range(d - 1, -1, -1):                        # all-gather by recursive doubling
        partner = me ^ (1 << i)
        theirs = yield exchange(partner, vector[start(lo):start(hi)],
                                words=(hi - lo) * block_words)
        whole_lo, whole_hi = ranges.pop()
        their_lo, their_hi = (hi, whole_hi) if lo == whole_lo else (whole_lo, lo)
        vector[start(their_lo):start(their_hi)] = theirs
        lo, hi = whole_lo, whole_hi
    return _like(data, vector)


def _like(data, words):
    """The list ``words`` in the type of the message ``data`` (list, tuple, array, str)."""
    if isinstance(data, np.ndarray):
        return np.asarray(words, dtype=data.dtype)
    if isinstance(data, str):
        return "".join(words)
    return tuple(words) if isinstance(data, tuple) else list(words)


# -- prefix sums on the hypercube ------------------------------------------------------------

def hypercube_prefix_sum_cost(p, m, model, **_):
    """log2 p (alpha + beta m), Sanders Theorem 13.6; exact with full-duplex exchanges."""
    return check_power_of_two("hypercube_prefix_sum", p) * model.transfer_time(m)


def _hypercube_prefix_p(p):
    check_power_of_two("hypercube_prefix_sum", p)


@register(operation="prefix_sum_and_total", cost=hypercube_prefix_sum_cost, exact=True,
          tex=r"(t_s + t_w m) \log_2 p",
          network_for=Hypercube.of_size, valid_p=_hypercube_prefix_p,
          params={"op": add, "exclusive": False}, held={"x": "x", "m": "m"},
          source="Sanders et al. 2019, §13.3, Theorem 13.6, Fig. 13.7; Grama et al. 2003, "
                 "§4.3 (prefix sums on the all-to-all broadcast pattern)")
def hypercube_prefix_sum(me, p, data, op=add, exclusive=False):
    """Prefix sum and total on the hypercube: the all-reduce plus two lines.

    Sanders et al. 2019, §13.3: x := m; for i := 0 to d-1: exchange m with
    PE me XOR 2**i (receiving m'), m := m op m' (the total of the subcube),
    and if bit i of me is 1, x := m' op x (the prefix within the subcube).
    Returns the pair (prefix, total) on every PE (Fig. 13.7: top and bottom
    values).  ``exclusive=True`` starts from x := "nothing" instead of m and
    returns m_0 op ... op m_(me-1), ``None`` on PE 0.  Lower ranks are kept on
    the left, so a non-commutative ``op`` is fine.  p a power of two,
    full-duplex: time log2 p (alpha + beta m) (Theorem 13.6).

    This is also the prefix-sum procedure of Grama et al. 2003, §4.3, on the
    pattern of the all-to-all broadcast: a PE adds a number received into its
    prefix only when it comes from the lower half (a partner of smaller rank).
    """
    d = check_power_of_two("hypercube_prefix_sum", p)
    op = check_operator(op)
    exclusive = check_flag("exclusive", exclusive)
    m = data
    x = None if exclusive else data                       # invariant: x is the prefix in my subcube
    for i in range(d):
        partner = me ^ (1 << i)
        m_prime = yield exchange(partner, m)
        if me & (1 << i):
            m = op(m_prime, m)                            # update the total of the subcube
            x = combine(op, m_prime, x)                   # update the prefix in the subcube
        else:
            m = op(m, m_prime)
    return x, m


# -- prefix sums on the in-order binary tree ------------------------------------------------

def _prefix_root(p):
    """The tree's root: the middle of 0..p-1, where buildTree places a subtree's root."""
    return p // 2


def binary_tree_prefix_sum_cost(p, m, model, **_):
    """4L(alpha + beta m): an upward phase (<= 2L steps) then a downward one (<= 2L)."""
    return 4 * tree_height(p, _prefix_root(p)) * model.transfer_time(m)


@register(operation="prefix_sum", cost=binary_tree_prefix_sum_cost, exact=False,
          tex=r"4L(t_s + t_w m)",
          ports="half-duplex", params={"op": add, "exclusive": False},
          held={"sum": _tree_reduce_held, "prefix": _tree_prefix_down},
          source="Sanders et al. 2019, §13.3, Fig. 13.8, Fig. 13.9, Corollary 13.7 (k = 1)")
def binary_tree_prefix_sum(me, p, data, op=add, exclusive=False):
    """Prefix sums on the in-order binary tree: reduce upwards, then send prefixes down.

    Sanders et al. 2019, §13.3, Fig. 13.8.  Upward phase, as in the
    reduction: receive x (the sum of my left subtree a .. me-1) and z (right
    subtree), send x op m op z to the parent.  Downward phase, like a
    broadcast with different data: receive l (the sum of the PEs 0 .. a-1)
    from the parent, forward l to the left child (whose range also starts at
    a) and l op x op m to the right child (whose range starts at me+1); my
    prefix is l op x op m, the exclusive one l op x.  Fig. 13.9 shows p = 7.

    The tree is the in-order tree of Fig. 13.5 rooted in the middle, p // 2;
    any p; any associative ``op``.  The book's neutral element 0 is ``None``
    here; where the pseudocode sends it (l to the leftmost subtree) we still
    send an m-word message, so the communication is exactly that of a
    reduction followed by a broadcast.  Half-duplex: time at most
    4L(alpha + beta m), L the tree height (each phase at most 2L steps,
    Lemma 13.4 and 13.2 with k = 1).
    """
    op = check_operator(op)
    exclusive = check_flag("exclusive", exclusive)
    node = in_order_node(me, p, _prefix_root(p))
    words = size_in_words(data)
    x = None                                              # upward phase
    if node.left is not None:
        x = yield recv(node.left)
    z = None
    if node.right is not None:
        z = yield recv(node.right)
    if node.parent is not None:
        yield send(node.parent, combine(op, x, data, z))
    ell = None                                            # downward phase
    if node.parent is not None:
        ell = yield recv(node.parent)
    if node.left is not None:
        yield send(node.left, ell, words=words)           # None stands for m words of zeros
    mine = combine(op, ell, x, data)
    if node.right is not None:
        yield send(node.right, mine)
    return combine(op, ell, x) if exclusive else mine


# -- pipelined prefix sums on the in-order binary tree --------------------------------------

def _pipelined_prefix_held(state):
    """The prefix packets known so far, glued; before the downward phase, the packets summed up."""
    prefixes = state.locals.get("prefixes")
    if prefixes and all(x is not None for x in prefixes):
        return join_packets(prefixes)
    return _pipelined_held(state)


def pipelined_binary_tree_prefix_sum_cost(p, m, model, k=1, **_):
    """(4L + 6(k-1))(alpha + beta ceil(m/k)): Lemmas 13.4 (up) and 13.2 (down); an upper bound.

    Each phase is at most 2L + 3(k-1) packet steps on the in-order tree of
    height L rooted at p // 2, and the downward phase starts when the upward
    one has ended, so this bounds the time; it is attained when some PE has a
    parent and two children (complete trees, p >= 7), and the best k gives
    6 beta m + 4 alpha L + O(sqrt(alpha beta m L)) (Sanders Corollary 13.7).
    """
    k = check_positive_int("k", k)
    if p == 1:
        return 0.0
    height = tree_height(p, _prefix_root(p))
    return (4 * height + 6 * (k - 1)) * model.transfer_time(packet_words(m, k))


def pipelined_binary_tree_prefix_sum_optimal_k(p, m, model, **_):
    """The number of packets in 1..m that minimizes :func:`pipelined_binary_tree_prefix_sum_cost`.

    Close to the calculus optimum sqrt(beta m (4L - 6) / (6 alpha)) for long messages.

    >>> from collective_lib import CostModel
    >>> pipelined_binary_tree_prefix_sum_optimal_k(15, 6000, CostModel(ts=100, tw=1))  # L = 3: 7.7
    8
    """
    return best_packet_count(pipelined_binary_tree_prefix_sum_cost, p, m, model)


@register(operation="prefix_sum", cost=pipelined_binary_tree_prefix_sum_cost, exact=False,
          tex=r"(4L + 6(k - 1))\bigl(t_s + t_w \lceil m/k \rceil\bigr)",
          ports="half-duplex", params={"op": add, "exclusive": False, "k": 1},
          valid_m=check_packet_count, held=_pipelined_prefix_held,
          optimal_k=pipelined_binary_tree_prefix_sum_optimal_k,
          source="Sanders et al. 2019, §13.3, Fig. 13.8, Corollary 13.7 (pipelined as in "
                 "Lemmas 13.2 and 13.4)")
def pipelined_binary_tree_prefix_sum(me, p, data, op=add, exclusive=False, k=1):
    """Prefix sums of k packets on the in-order tree: a pipelined reduction, then a broadcast.

    Sanders et al. 2019, §13.3, Fig. 13.8 and Corollary 13.7: the book omits
    the pipelining and notes that the messages are those of a reduction
    followed by a broadcast, which both pipeline.  Every PE cuts its message
    into k packets (``packets.split_packets``); ``op`` must act word by word,
    as any :func:`elementwise` operator does.  Upward, for each packet j as in
    :func:`pipelined_binary_tree_reduce`: receive x_j from the left child,
    z_j from the right child, send x_j op m_j op z_j to the parent.
    Downward, for each packet j as in the pipelined broadcast: receive l_j
    (the packet j of everything left of my range) from the parent, send l_j
    to the left child and l_j op x_j op m_j, my prefix, to the right child.

    The tree is the in-order tree of Fig. 13.5 rooted at p // 2, as in
    :func:`binary_tree_prefix_sum`; any p, any associative ``op``.  The
    neutral element sent to the leftmost subtree still travels as a packet of
    its size.  Half-duplex: time at most (4L + 6(k-1))(alpha + beta ceil(n/k)),
    L the tree height; with the best k, 6 beta n + 4 alpha L +
    O(sqrt(alpha beta n L)) (Corollary 13.7).

    Examples
    --------
    >>> from collective_lib import CostModel, simulate
    >>> run = simulate(pipelined_binary_tree_prefix_sum, 7, [[4, 1], [3, 1], [1, 1], [7, 1],
    ...                [8, 1], [4, 1], [5, 1]], k=2, model=CostModel(ports="half-duplex"))
    >>> run.results                              # Fig. 13.9 in the first word, ranks in the second
    [[4, 1], [7, 2], [8, 3], [15, 4], [23, 5], [27, 6], [32, 7]]
    >>> run.time                                 # 4L + 6(k - 1) steps, L = 2
    14.0
    """
    op = check_operator(op)
    exclusive = check_flag("exclusive", exclusive)
    k = check_positive_int("k", k)
    node = in_order_node(me, p, _prefix_root(p))
    own = split_packets(data, k)                   # my packets m_j
    packets = list(own)                            # then my subtree's sums of them
    left_sums = [None] * k                         # x_j: packet j of my left subtree
    for j in range(k):                             # upward: a pipelined reduction
        if node.left is not None:
            left_sums[j] = yield recv(node.left)
        z = None
        if node.right is not None:
            z = yield recv(node.right)
        packets[j] = combine(op, left_sums[j], own[j], z)
        if node.parent is not None:
            yield send(node.parent, packets[j])
    prefixes = [None] * k
    before = [None] * k                            # l_j op x_j: the exclusive prefix
    for j in range(k):                             # downward: a pipelined broadcast
        ell = None
        if node.parent is not None:
            ell = yield recv(node.parent)
        if node.left is not None:
            # ell is None left of everything: it stands for m_j's zeros
            yield send(node.left, ell, words=size_in_words(own[j]))
        before[j] = combine(op, ell, left_sums[j])
        prefixes[j] = combine(op, before[j], own[j])
        if node.right is not None:
            yield send(node.right, prefixes[j])
    if exclusive:
        return None if before[0] is None else join_packets(before)
    return join_packets(prefixes)


# -- barrier -------------------------------------------------------------------------------

def barrier_cost(p, m, model, **_):
    """ceil(log2 p) alpha: ceil(log2 p) rounds of empty messages (Corollary 13.8); exact."""
    return ceil_log2(p) * model.transfer_time(0)


@register(operation="barrier", cost=barrier_cost, exact=True, held={"heard": "heard"},
          tex=r"\lceil \log_2 p \rceil t_s",
          source="Sanders et al. 2019, §13.4.2, Corollary 13.8; Grama et al. 2003, §4.3; "
                 "Hensgen, Finkel, Manber 1988 (dissemination)")
def barrier(me, p, data=None):
    """A barrier as an all-reduce of nothing: dissemination rounds of empty messages.

    Sanders et al. 2019, §13.4.2: "calling an all-reduce with an empty (or
    dummy) operand" is a barrier (Corollary 13.8, O(alpha log p)); Grama
    §4.3 makes the same remark.  To serve any p we use the dissemination
    pattern (Hensgen, Finkel, Manber 1988), the hypercube all-reduce's
    pattern generalized: in round j a PE sends an empty message to
    me + 2**j and receives one from me - 2**j (mod p).  After round j a PE
    has heard, directly or through others, from the 2**(j+1) - 1 PEs before
    it, so after ceil(log2 p) rounds from all: nobody leaves before everybody
    arrived.  Full-duplex; time ceil(log2 p) alpha.  ``data`` is ignored and
    every PE returns ``None``.
    """
    distance = 1
    while distance < p:
        yield sendrecv((me + distance) % p, None, (me - distance) % p)
        distance *= 2
    return None
