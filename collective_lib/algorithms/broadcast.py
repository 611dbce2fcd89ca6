"""One-to-all broadcast (chapter 1).

The root PE holds a message of m words; afterwards every PE holds it.  Every
program here returns the message on every PE.  Sources: Sanders et al.,
Sequential and Parallel Algorithms and Data Structures (2019), §13.1;
Grama et al., Introduction to Parallel Computing (2003), §4.1, Eq. 4.1.
"""
from __future__ import annotations

import math
from functools import lru_cache
from numbers import Integral
from typing import NamedTuple

from ..catalog import register
from ..networks import Hypercube
from ..ops import recv, send, sendrecv, size_in_words
from ..packets import (best_packet_count, check_packet_count, cut_evenly, join_packets,
                       packet_words, split_packets)
from ..trees import (binomial_children, binomial_parent, ceil_log2, in_order_node, split_point,
                     tree_height)
from ..validate import check_positive_int, check_power_of_two, check_root

__all__ = [
    "naive_broadcast_cost", "naive_broadcast", "binomial_broadcast_cost",
    "binomial_broadcast", "hypercube_broadcast_cost", "hypercube_broadcast",
    "pipelined_binary_tree_broadcast_cost", "pipelined_binary_tree_optimal_k", "sanders_optimal_k",
    "pipelined_binary_tree_broadcast", "linear_pipeline_broadcast_cost",
    "linear_pipeline_optimal_k", "linear_pipeline_broadcast", "duplex_tree_first_packet_steps",
    "fibonacci_tree_size", "golden_tree_broadcast_cost", "golden_tree_optimal_k",
    "golden_tree_broadcast", "TwoTreePlan", "two_tree_plan", "two_tree_latency_bound",
    "two_tree_broadcast_cost", "two_tree_optimal_k", "two_tree_broadcast",
]

#: Where this module's entries stand in the catalog (chapter 1; see collective_lib.algorithms).
CATALOG_POSITION = 10


# -- naive ------------------------------------------------------------------------------

def naive_broadcast_cost(p, m, model, **_):
    """(p - 1)(ts + tw m): the root sends p - 1 times in a row (Sanders §13.1)."""
    return (p - 1) * model.transfer_time(m)


@register(operation="broadcast", cost=naive_broadcast_cost, exact=True, params={"root": 0},
          tex=r"(p - 1)(t_s + t_w m)",
          source="Sanders et al. 2019, §13.1 (the for-loop of p-1 sends)")
def naive_broadcast(me, p, data, root=0):
    """The root sends the message to each other PE in turn.

    Sanders et al. 2019, §13.1: "a for-loop and p - 1 send operations".  Any
    network, any port model; the root's port is the bottleneck, so the time is
    (p - 1)(ts + tw m).
    """
    root = check_root(root, p)
    if me == root:
        for i in range(1, p):
            yield send((root + i) % p, data)
        return data
    return (yield recv(root))


# -- binomial tree ------------------------------------------------------------------------

def binomial_broadcast_cost(p, m, model, **_):
    """ceil(log2 p)(ts + tw m), Sanders Theorem 13.1; exact for every p and root."""
    return ceil_log2(p) * model.transfer_time(m)


@register(operation="broadcast", cost=binomial_broadcast_cost, exact=True,
          tex=r"\lceil \log_2 p \rceil (t_s + t_w m)",
          params={"root": 0},
          source="Sanders et al. 2019, §13.1.1, Fig. 13.3, Theorem 13.1")
def binomial_broadcast(me, p, data, root=0):
    """Broadcast down the binomial tree, largest subtree first.

    Sanders et al. 2019, §13.1.1, ``Tree::broadcast``: receive from the parent
    (nothing on the root), then send to each child.  Ranks are taken relative
    to the root, ``(me - root) mod p``; a relative rank with k trailing zeros
    has children ``i + 2**j`` for j = k-1 down to 0, so any p works (Fig. 13.3).
    One port suffices (half- or full-duplex); time ceil(log2 p)(ts + tw m)
    (Theorem 13.1).  The order matters: served smallest subtree first, the
    broadcast takes Theta(log^2 p) steps (Exercise 13.1, the course's
    assignment ``reverse_send_order``).
    """
    root = check_root(root, p)
    i = (me - root) % p
    parent = binomial_parent(i)
    if parent is not None:
        data = yield recv((parent + root) % p)
    for c in binomial_children(i, p):
        yield send((c + root) % p, data)
    return data


# -- hypercube (Grama) -------------------------------------------------------------------

def hypercube_broadcast_cost(p, m, model, **_):
    """(ts + tw m) log p, Grama Eq. 4.1."""
    return ceil_log2(p) * model.transfer_time(m)


def _hypercube_p(p):
    check_power_of_two("hypercube_broadcast", p)


@register(operation="broadcast", cost=hypercube_broadcast_cost, exact=True,
          tex=r"(t_s + t_w m) \log_2 p",
          network_for=Hypercube.of_size, valid_p=_hypercube_p, params={"root": 0},
          source="Grama et al. 2003, §4.1.3, Algorithms 4.1-4.2, Eq. 4.1")
def hypercube_broadcast(me, p, data, root=0):
    """One-to-all broadcast on a d-dimensional hypercube from any root.

    Grama et al. 2003, ``GENERAL_ONE_TO_ALL_BC`` (Algorithm 4.2): work with the
    virtual id ``me XOR root``; in iteration i (from d-1 down to 0) the PEs
    whose lower i bits are zero pair up across dimension i, and the one that
    already has the message sends it.  p must be a power of two; on a
    hypercube network every transfer is between neighbours, so the time is
    (ts + tw m) log p (Eq. 4.1).
    """
    d = check_power_of_two("hypercube_broadcast", p)
    root = check_root(root, p)
    virtual = me ^ root
    mask = p - 1
    for i in range(d - 1, -1, -1):
        mask ^= 1 << i                            # clear bit i: the PEs with low bits zero take part
        if virtual & mask == 0:
            partner = (virtual ^ (1 << i)) ^ root
            if virtual & (1 << i) == 0:
                yield send(partner, data)
            else:
                data = yield recv(partner)
    return data


# -- pipelined binary tree --------------------------------------------------------------

def pipelined_binary_tree_broadcast_cost(p, m, model, root=0, k=1, **_):
    """(2L + 3(k-1))(ts + tw ceil(m/k)), Sanders Lemma 13.2; L = the tree's height."""
    if p == 1:
        return 0.0
    height = tree_height(p, root)
    return (2 * height + 3 * (k - 1)) * model.transfer_time(packet_words(m, k))


def pipelined_binary_tree_optimal_k(p, m, model, root=0, **_):
    """The number of packets that minimizes Lemma 13.2's bound (an integer in 1..m)."""
    return best_packet_count(pipelined_binary_tree_broadcast_cost, p, m, model, root=root)


def sanders_optimal_k(p, m, model, root=0):
    """Sanders' calculus optimum sqrt(beta n (2L - 3) / (3 alpha)) (§13.1.2), as a float."""
    height = tree_height(p, root)
    if model.ts == 0:
        return float(m)
    return math.sqrt(max(0.0, model.tw * m * (2 * height - 3)) / (3 * model.ts))


@register(operation="broadcast", cost=pipelined_binary_tree_broadcast_cost, exact=False,
          tex=r"(2L + 3(k - 1))\bigl(t_s + t_w \lceil m/k \rceil\bigr)",
          ports="half-duplex", params={"root": 0, "k": 1}, valid_m=check_packet_count,
          optimal_k=pipelined_binary_tree_optimal_k,
          source="Sanders et al. 2019, §13.1.2-13.1.3, Fig. 13.4-13.5, Lemma 13.2, Theorem 13.3")
def pipelined_binary_tree_broadcast(me, p, data, root=0, k=1):
    """Pipeline k packets down the in-order binary tree of Fig. 13.5.

    Sanders et al. 2019, ``Tree::pipelinedBroadcast`` (§13.1.2): for each
    packet, receive it from the parent, then send it to the left and the right
    child.  The tree is the perfectly balanced in-order tree built by
    ``buildTree`` (§13.1.3).  Half-duplex model: a PE sends or receives one
    packet at a time.  Time at most (2L + 3(k-1))(alpha + beta ceil(n/k)),
    L the tree height (Lemma 13.2).
    """
    root = check_root(root, p)
    k = check_positive_int("k", k)
    node = in_order_node(me, p, root)
    children = [c for c in (node.left, node.right) if c is not None]
    packets = split_packets(data, k) if me == root else [None] * k
    for i in range(k):
        if node.parent is not None:
            packets[i] = yield recv(node.parent)
        for c in children:
            yield send(c, packets[i])
    return join_packets(packets)


# -- linear pipeline ------------------------------------------------------------------

def linear_pipeline_broadcast_cost(p, m, model, k=1, **_):
    """(p + k - 2)(ts + tw ceil(m/k)): the last packet leaves the root in step k and
    needs p - 2 more hops (Sanders §13.1.4 counts p + k - 1 steps, one more)."""
    if p == 1:
        return 0.0
    return (p + k - 2) * model.transfer_time(packet_words(m, k))


def linear_pipeline_optimal_k(p, m, model, **_):
    """The number of packets that minimizes the linear pipeline's time."""
    return best_packet_count(linear_pipeline_broadcast_cost, p, m, model)


@register(operation="broadcast", cost=linear_pipeline_broadcast_cost, exact=True,
          tex=r"(p + k - 2)\bigl(t_s + t_w \lceil m/k \rceil\bigr)",
          params={"root": 0, "k": 1}, valid_m=check_packet_count,
          optimal_k=linear_pipeline_optimal_k,
          source="Sanders et al. 2019, §13.1.4 (Path::pipelinedBroadcast)")
def linear_pipeline_broadcast(me, p, data, root=0, k=1):
    """Pipeline k packets along the path root, root+1, ..., root-1 (mod p).

    Sanders et al. 2019, ``Path::pipelinedBroadcast`` (§13.1.4): receive the
    first packet, then receive packet i while forwarding packet i-1
    (``receive || send``), then forward the last.  Needs full-duplex ports.
    Time (p + k - 2)(alpha + beta ceil(n/k)) when k divides n.
    """
    root = check_root(root, p)
    k = check_positive_int("k", k)
    position = (me - root) % p
    parent = (me - 1) % p if position > 0 else None
    child = (me + 1) % p if position < p - 1 else None
    packets = split_packets(data, k) if me == root else [None] * k
    if parent is not None:
        packets[0] = yield recv(parent)
    for i in range(1, k):
        if parent is not None and child is not None:
            packets[i] = yield sendrecv(child, packets[i - 1], parent)
        elif parent is not None:                   # the last PE only receives
            packets[i] = yield recv(parent)
        elif child is not None:                    # the root only sends
            yield send(child, packets[i - 1])
    if child is not None:
        yield send(child, packets[k - 1])
    return join_packets(packets)


# -- full-duplex tree broadcast on the golden-ratio tree ------------------------------------
#
# Exercise 13.5 and Fig. 13.4 (bottom) of Sanders et al.: with full-duplex ports a PE
# can forward a packet to one child while the next packet comes in from its parent.
# Each interior PE then handles a packet every two steps instead of three.  Per
# packet i a PE first hands packet i to its "first" child with a plain send, and then
# hands it to its "second" child while receiving packet i+1 (a sendrecv).  The first
# child hears a packet one step after its parent, the second child two steps after.
# Putting the bigger (deeper) subtree first and splitting every range at its
# golden-ratio point (the ``"golden"`` shape of trees.in_order_node) balances the two
# delays, so that in the ideal case every leaf gets the first packet at the same step.


def _check_tree_shape(shape):
    if shape not in ("golden", "balanced"):
        raise ValueError(f"shape must be 'golden' or 'balanced', got shape={shape!r}")
    return shape


@lru_cache(maxsize=None)
def duplex_tree_first_packet_steps(n: int, shape: str = "golden") -> int:
    """Steps until every PE of an ``n``-PE duplex tree holds packet 1 (the ``D`` of the cost).

    The tree is the in-order tree on ``n`` PEs whose root sits at the split
    point of the whole range, as :func:`golden_tree_broadcast` builds it.
    A subtree root reaches its first (left, larger) child one step after it
    got the packet and its second (right) child two steps after, so
    ``D(1) = 0`` and ``D(n) = max(1 + D(left), 2 + D(right))``.

    For ``shape="golden"`` this is the least ``T`` with ``F(T+3) - 1 >= n``
    (Fibonacci numbers, ``F(1) = F(2) = 1``): a tree that informs everyone
    within T steps holds at most ``N(T) = 1 + N(T-1) + N(T-2)`` PEs, and the
    golden split reaches that optimum (checked in the tests for n < 10**5).

    >>> [duplex_tree_first_packet_steps(n) for n in (1, 2, 4, 7, 12, 20)]
    [0, 1, 2, 3, 4, 5]
    >>> duplex_tree_first_packet_steps(7, "balanced")
    4
    """
    _check_tree_shape(shape)
    check_positive_int("n", n)
    if n == 1:
        return 0
    left = split_point(0, n - 1, shape)            # PEs 0..left-1 form the left subtree
    right = n - 1 - left
    steps = 1 + duplex_tree_first_packet_steps(left, shape) if left else 0
    if right:
        steps = max(steps, 2 + duplex_tree_first_packet_steps(right, shape))
    return steps


def fibonacci_tree_size(steps: int) -> int:
    """The most PEs a full-duplex tree broadcast informs in ``steps`` steps: F(steps+3) - 1.

    These are the p for which the golden tree is perfectly skewed and every
    leaf receives the first packet in the same step.

    >>> [fibonacci_tree_size(t) for t in range(8)]
    [1, 2, 4, 7, 12, 20, 33, 54]
    """
    a, b = 1, 2                               # F(3) - 1 = 1 and F(4) - 1 = 2
    for _ in range(steps):
        a, b = b, a + b + 1
    return a


def golden_tree_broadcast_cost(p, m, model, k=1, shape="golden", **_):
    """(D(p) + 2(k-1))(ts + tw ceil(m/k)) for p >= 3; k(ts + tw ceil(m/k)) for p = 2.

    ``D(p)`` is :func:`duplex_tree_first_packet_steps`, the step in which the
    last PE receives packet 1 (for the golden tree, the least T with
    F(T+3) - 1 >= p).  After that every PE gets a packet every second step.
    Exact when k divides m; with uneven packets the simulated time is at most this.
    """
    _check_tree_shape(shape)
    if p == 1:
        return 0.0
    step = model.transfer_time(packet_words(m, k))
    if p == 2:                                # the root's only child: one packet per step
        return k * step
    return (duplex_tree_first_packet_steps(p, shape) + 2 * (k - 1)) * step


def golden_tree_optimal_k(p, m, model, shape="golden", **_):
    """The number of packets (1..m) that minimizes :func:`golden_tree_broadcast_cost`; exact."""
    return best_packet_count(golden_tree_broadcast_cost, p, m, model, shape=shape)


def _duplex_tree_place(me, p, root, shape):
    """(parent, first child, second child) of PE ``me``, or None where there is none.

    The ranks are rotated so that the root sits at the split point of the
    whole range ``0..p-1``; subtrees are then contiguous modulo p.
    """
    centre = split_point(0, p - 1, shape)
    shift = centre - root
    node = in_order_node((me + shift) % p, p, centre, shape)
    back = [None if v is None else (v - shift) % p for v in (node.parent, node.left, node.right)]
    parent, left, right = back
    if left is None:                          # never happens for either shape; be safe
        left, right = right, None
    return parent, left, right


@register(operation="broadcast", cost=golden_tree_broadcast_cost, exact=True,
          tex=(r"\bigl(D(p) + 2(k - 1)\bigr)\bigl(t_s + t_w \lceil m/k \rceil\bigr)"
               r"\text{; for } p = 2\text{: } k\bigl(t_s + t_w \lceil m/k \rceil\bigr)"),
          params={"root": 0, "k": 1, "shape": "golden"}, valid_m=check_packet_count,
          optimal_k=golden_tree_optimal_k,
          source="Sanders et al. 2019, §13.1.4 (golden-ratio buildTree), Exercise 13.5, "
                 "Fig. 13.4 bottom")
def golden_tree_broadcast(me, p, data, root=0, k=1, shape="golden"):
    """Pipelined full-duplex broadcast down the golden-ratio in-order tree.

    Sanders et al. 2019, §13.1.4: ``buildTree`` (Fig. 13.5) with each range
    split at its golden-ratio point instead of its middle, and the pipelined
    tree broadcast of Exercise 13.5, which uses full duplex towards one child
    (Fig. 13.4 bottom: p = 7, k = 3 in 7 steps).  Model: full-duplex ports, one
    send and one receive at a time.  For each packet a PE first sends it to its
    left child (the larger subtree), then sends it to its right child while
    receiving the next packet from its parent.  The left child therefore hears
    each packet one step after its parent, the right child two steps after;
    with the golden split both subtrees finish packet 1 in the same step, and
    for p = F(T+3) - 1 (1, 2, 4, 7, 12, 20, 33, ...) every leaf receives packet
    1 in step T.  The ranks are rotated so that ``root`` is the tree's root.

    Time (D(p) + 2(k-1))(alpha + beta ceil(n/k)) for p >= 3, where D(p) is the
    least T with F(T+3) - 1 >= p, about 1.44 log2 p (k steps for p = 2); exact
    when k divides n.  ``shape="balanced"`` runs the same schedule on the
    perfectly balanced tree for comparison (D(p) about 2 log2 p there).
    """
    root = check_root(root, p)
    k = check_positive_int("k", k)
    _check_tree_shape(shape)
    parent, first, second = _duplex_tree_place(me, p, root, shape)
    packets = split_packets(data, k) if me == root else [None] * k
    if parent is not None:
        packets[0] = yield recv(parent)
    for i in range(k):
        more = parent is not None and i + 1 < k
        if first is not None:
            yield send(first, packets[i])
        if second is not None:
            if more:
                packets[i + 1] = yield sendrecv(second, packets[i], parent)
            else:
                yield send(second, packets[i])
        elif more:
            packets[i + 1] = yield recv(parent)
    return join_packets(packets)


# -- two-tree broadcast ---------------------------------------------------------------------
#
# Sanders, Speck and Träff (2009) broadcast each half of the message down its own
# binary tree.  Both trees span the q = p - 1 PEs other than the root, and a PE that
# is interior in one tree is a leaf in the other, so every PE receives two packets
# and sends at most two per round of two steps: the load that overwhelms the
# interior PEs of a single tree is spread evenly.
#
# Our construction (the paper's idea, our own details):
# * Virtual ranks: PE me is v = (me - root - 1) mod p, so the root is v = q and the
#   others are 0..q-1.
# * Tree 1 is an in-order *full* binary tree on an odd number q' of PEs: its leaves
#   are exactly the even positions.  Tree 2 is tree 1 shifted by one modulo q', which
#   turns the odd (interior) positions into even ones, so no PE is interior twice;
#   position 0 is a leaf in both trees.
# * When q is even, q' = q - 1 and the last PE (v = q - 1) hangs below position 0 in
#   both trees: that PE, otherwise idle as a sender, forwards both halves to it.
# * Edge colours: draw each PE as a sender node and a receiver node and every tree
#   edge (with the root's two edges) between them.  Every node has degree 2 (or 0),
#   so the graph is a union of even cycles and has a 2-colouring.  In a step of
#   colour c every PE sends on its out-edge of colour c and receives on its in-edge
#   of colour c: at most one send and one receive per step, as full duplex allows.
# * Packet j of tree T crosses edge (u, w) in step s_T(w) + 2j, where s_T(w) is the
#   first step after s_T(u) that has the edge's colour (s_T of a tree root is the
#   colour of the root's edge to it).
#
# Why the simulator reproduces that step-synchronous schedule exactly: every packet is
# charged ceil(n/k) words, so every transfer lasts one step, tau.  A PE with two
# children sends in every step from s_T(u)+1 to s_T(u)+2K, the root in every step
# 0..k-1, and PE 0 (when it feeds the extra PE) right after each receive, so no send
# follows a step in which its PE did nothing.  By induction on the step s: the PE's
# operation of step s-1 ends at s*tau, so its send of step s is issued at s*tau; the
# transfers issued before it belong to steps <= s and, the colouring giving each port
# one transfer per step, those on its two ports have ended by s*tau.  So it runs in
# [s*tau, (s+1)*tau].  (Receives posted early just wait.)  With uneven packets this
# breaks: a PE could run ahead and take a port out of turn.  Hence the time is
# (max s_T(w) + k - 1) steps, and since s_T grows by at most 2 per level,
# max s_T(w) <= 1 + 2H (+1 for the extra PE), H the height of tree 1.

def _check_two_tree_k(k):
    if not isinstance(k, Integral) or isinstance(k, bool) or k < 2 or k % 2:
        raise ValueError("two_tree_broadcast needs an even number of packets k >= 2 "
                         f"(k/2 for each tree), got k={k!r}")
    return int(k)


def _two_tree_packets(p, m, k=2, **_):
    """valid_m: any m (a tree may get empty packets), but an even k >= 2."""
    _check_two_tree_k(k)


def _full_in_order_tree(first, last, up, parent):
    """Fill ``parent`` for an in-order full binary tree on first..last (an odd count)."""
    stack = [(first, last, up)]
    while stack:
        a, b, above = stack.pop()
        leaves = (b - a + 2) // 2
        if leaves == 1:
            parent[a] = above
            continue
        x = a + 2 * ((leaves + 1) // 2) - 1   # the left subtree gets ceil(leaves/2) leaves
        parent[x] = above
        stack.append((a, x - 1, x))
        stack.append((x + 1, b, x))


class TwoTreePlan(NamedTuple):
    """The two trees and their step-synchronous schedule for p PEs (virtual ranks).

    ``parent[t][v]`` is v's parent in tree t (``q = p - 1`` stands for the root PE);
    ``first[t][v]`` the step (counted from 0) in which v receives packet 0 of tree t;
    ``children[v]`` lists ``(child, t)`` for every edge leaving v (the root is v = q);
    ``height`` is H, the height of the trees; ``latency`` the largest ``first``, so
    that the schedule takes ``latency + k - 1`` steps for k packets.
    """
    parent: tuple
    first: tuple
    children: tuple
    height: int
    latency: int


@lru_cache(maxsize=64)
def two_tree_plan(p: int) -> TwoTreePlan:
    """Build the two trees, colour their edges and derive the first-packet steps.

    Global work O(p), done once per p and cached (the paper shows how each PE can
    compute its own share in O(log p) time; we do not reproduce that here).
    """
    check_positive_int("p", p, least=2)
    q = p - 1
    core = q if q % 2 else q - 1               # PEs 0..core-1 are in the two trees
    extra = None if q % 2 else q - 1           # hangs below PE 0 in both trees
    par1 = [None] * q
    _full_in_order_tree(0, core - 1, q, par1)
    par2 = [None] * q
    for v in range(core):
        up = par1[v]
        par2[(v + 1) % core] = q if up == q else (up + 1) % core
    if extra is not None:
        par1[extra] = par2[extra] = 0
    parents = (par1, par2)

    # Edges (sender, receiver, tree) and a proper 2-colouring of the sender/receiver graph.
    edges = [(parents[t][w], w, t) for t in (0, 1) for w in range(q)]
    at_sender, at_receiver = {}, {}
    for e, (u, w, _) in enumerate(edges):
        at_sender.setdefault(u, []).append(e)
        at_receiver.setdefault(w, []).append(e)
    colour = [None] * len(edges)
    for start in range(len(edges)):
        if colour[start] is not None:
            continue
        e, c, on_sender = start, 0, True       # walk the cycle through start
        while colour[e] is None:
            colour[e] = c
            u, w, _ = edges[e]
            ends = at_receiver[w] if on_sender else at_sender[u]
            e = ends[0] if ends[1] == e else ends[1]
            c, on_sender = 1 - c, not on_sender
    if extra is not None:
        # PE 0 forwards each half one step after receiving it: give its edge to the
        # extra PE in tree t the colour opposite to PE 0's own in-edge in tree t.
        into0 = {edges[e][2]: colour[e] for e in at_receiver[0]}
        for e in at_sender[0]:
            colour[e] = 1 - into0[edges[e][2]]

    colour_of = {(u, w, t): colour[e] for e, (u, w, t) in enumerate(edges)}
    first = ([None] * q, [None] * q)
    children = [[] for _ in range(p)]
    latest = 0
    for t in (0, 1):
        for w in range(q):
            children[parents[t][w]].append((w, t))
    stack = [(q, t) for t in (0, 1)]
    while stack:                               # top-down over both trees
        u, t = stack.pop()
        start = -1 if u == q else first[t][u]
        for w, tw in children[u]:
            if tw != t:
                continue
            s = start + 1
            if s % 2 != colour_of[(u, w, t)]:
                s += 1
            first[t][w] = s
            stack.append((w, t))
            latest = max(latest, s)
    leaves = (core + 1) // 2
    height = ceil_log2(leaves)
    return TwoTreePlan(parent=(tuple(par1), tuple(par2)),
                       first=(tuple(first[0]), tuple(first[1])),
                       children=tuple(tuple(c) for c in children),
                       height=height, latency=latest)


def two_tree_latency_bound(p: int) -> int:
    """Steps the closed form adds to k: 2H, plus 1 when p - 1 is even.

    H = ceil(log2 ceil(q'/2)) is the height of the full binary trees on q' PEs,
    where q' is p - 1 rounded down to an odd number; H <= ceil(log2 p) - 1.

    >>> [two_tree_latency_bound(p) for p in (1, 2, 3, 4, 5, 8, 16, 17, 1024)]
    [0, 0, 1, 2, 3, 4, 6, 7, 18]
    """
    if p <= 1:
        return 0
    q = p - 1
    core = q if q % 2 else q - 1
    return 2 * ceil_log2((core + 1) // 2) + (0 if q % 2 else 1)


def two_tree_broadcast_cost(p, m, model, k=2, **_):
    """(k + 2H + [p odd])(ts + tw ceil(m/k)), an upper bound (Sanders, Speck, Träff 2009).

    H <= ceil(log2 p) - 1 is the height of each tree, so this is about
    beta m + (k + 2 log2 p) alpha.  The simulated time is exactly the length
    of the step-synchronous schedule, ``two_tree_plan(p).latency + k - 1``
    steps (every packet is charged ceil(m/k) words), which this bounds.
    """
    _check_two_tree_k(k)
    if p == 1:
        return 0.0
    return (k + two_tree_latency_bound(p)) * model.transfer_time(packet_words(m, k, allow_empty=True))


def two_tree_optimal_k(p, m, model, **_):
    """The even k in 2..max(2, m) that minimizes :func:`two_tree_broadcast_cost`; exact.

    More packets than words (k > m) would be allowed but are not offered,
    except k = 2 for a one-word message.
    """
    return best_packet_count(two_tree_broadcast_cost, p, m, model, even=True)


@register(operation="broadcast", cost=two_tree_broadcast_cost, exact=False,
          tex=r"(k + 2H + [p \text{ odd}])\bigl(t_s + t_w \lceil m/k \rceil\bigr)",
          params={"root": 0, "k": 2}, valid_m=_two_tree_packets, optimal_k=two_tree_optimal_k,
          source="Sanders, Speck, Träff 2009, Two-tree algorithms for full bandwidth broadcast, "
                 "reduction and scan (Sanders et al. 2019, §13.1.4, ref. [277])")
def two_tree_broadcast(me, p, data, root=0, k=2):
    """Broadcast each half of the message down one of two complementary binary trees.

    Sanders, Speck and Träff, Parallel Computing 35 (2009), cited as [277] in
    Sanders et al. 2019, §13.1.4.  The k packets are split into two halves;
    half t is pipelined down tree t.  Both trees span the p - 1 non-root PEs;
    tree 2 is tree 1 shifted by one, so a PE interior in one tree is a leaf in
    the other (with an even number of non-root PEs the last one hangs below
    the PE that is a leaf in both trees, which forwards both halves to it).
    The root feeds the two tree roots alternately.  A 2-colouring of the
    edges tells each PE, in every step, which edge it sends on and which it
    receives on, so every PE sends and receives at most once per step.

    Model: full-duplex ports.  Time at most
    (k + 2H + [p odd])(alpha + beta ceil(n/k)) with H <= ceil(log2 p) - 1, about
    beta n + 2 alpha log2 p + O(sqrt(alpha beta n log p)) at the best k.  k must
    be even.  As in Sanders' analysis every packet occupies ceil(n/k) words on
    the wire, also the shorter ones when k does not divide n (and the empty ones
    when k > n), so that all transfers take equally long.
    The trees and colours are computed once per p for all PEs (see
    :func:`two_tree_plan`).
    """
    root = check_root(root, p)
    k = _check_two_tree_k(k)
    if p == 1:
        return data
    half = k // 2
    plan = two_tree_plan(p)
    q = p - 1
    v = (me - root - 1) % p                   # virtual rank; the root is q

    def pe(u):
        return (u + root + 1) % p

    # Every packet travels as (width, chunk) in a buffer of width = ceil(n/k) words,
    # as in Sanders' analysis: equal transfers keep all PEs in step (with uneven
    # packets a PE could run ahead and take a port out of turn).
    if me == root:
        chunks = cut_evenly(data, k)
        width = max(size_in_words(c) for c in chunks)
        packets = [(width, c) for c in chunks]
    else:
        packets = [None] * k
    # steps[s] = [what to send, what to receive]; (peer, index of the packet)
    steps = {}
    for w, t in plan.children[v]:
        for j in range(half):
            steps.setdefault(plan.first[t][w] + 2 * j, [None, None])[0] = (pe(w), t * half + j)
    if v != q:
        for t in (0, 1):
            for j in range(half):
                steps.setdefault(plan.first[t][v] + 2 * j, [None, None])[1] = \
                    (pe(plan.parent[t][v]), t * half + j)
    for s in sorted(steps):
        out, into = steps[s]
        if out is not None:
            packet = packets[out[1]]
            if into is not None:
                packets[into[1]] = yield sendrecv(out[0], packet, into[0], words=packet[0])
            else:
                yield send(out[0], packet, words=packet[0])
        else:
            packets[into[1]] = yield recv(into[0])
    return join_packets([chunk for _, chunk in packets])
