"""Prefix sums on two in-order trees (chapter 2, Sanders §13.3), with a bound the simulator keeps.

Sanders et al. 2019, §13.3, last paragraph: with two binary trees that are both
numbered in order, the prefix sum takes 2 beta n + 4 alpha log p +
O(sqrt(alpha beta n log p)), citing Sanders, Speck and Träff 2009 ([277]).
(Their Exercise 13.5, 2 beta n + 2 alpha log p, is for the broadcast.)  This
module builds the two trees and a step-synchronous schedule for them
(:func:`two_tree_prefix_plan`), T + 2k - 4 steps of alpha + beta ceil(n/k) for k
packets (T the schedule's latency, about 6 log2 p steps, at most 8H for trees of
height H), and a program that computes correct prefix sums in the schedule's
order (:func:`two_tree_prefix_sum`).

Why the simulator does not keep to the schedule.  A transfer claims the
receiver's port when its sender issues it, and ports serve transfers in the
order they were claimed (collective_lib/simulator.py).  A PE issues an
operation when its previous one completes; a PE that has nothing to do in
the steps before a send (a leaf of one tree at the start, the few PEs with
fewer than four messages per pair of packets, every PE while the pipeline
fills and drains) issues that send early, and when the receiver has another
transfer scheduled in between, the early one takes its turn.  Only an order
of the operations could prevent that, since a program never looks at a
clock: a send is exactly on time only if the same PE has an operation in the
step before it (an idle step before a send is the whole problem, one before a
receive is harmless).  The 4-colouring leaves such idle steps (a PE with three
sends and three receives per pair of packets may leave one step of four free
before a send), and choosing a colouring and start steps without them, for
every p and through the start and the end of the pipeline, is an open design
problem here.  As the simulator runs it, the pipeline then settles at five
steps per pair of packets instead of four for many p (2.5 beta n instead of
2 beta n), at four for the others (e.g. 16, 256, 300 PEs).

So the catalog entry's closed form is an upper bound, not an equality: 5/4
of the schedule's steps plus five, (5/4)(T + 2k)(alpha + beta ceil(n/k)).  It
is a measured bound, not a proven one: the tests check it for every p up to
300 and for larger ones with many packet counts, where the simulated time
stays below it and comes within a few per cent of it for long messages
(p = 5, 22; 189 PEs come within half a step of 5/4 of the schedule alone).
Against Sanders: the word term 2.5 beta n is a quarter above his 2 beta n,
and the start-up term (5/4) T alpha is about 7.5 alpha log2 p against his
4 alpha log p (and the exercise's 2 alpha log p).
"""
from __future__ import annotations

from functools import lru_cache
from numbers import Integral
from typing import NamedTuple

from ..catalog import register
from ..coloring import color_bipartite_multigraph
from ..collectives import add, combine
from ..ops import recv, send, sendrecv, size_in_words
from ..packets import best_packet_count, cut_evenly, join_packets, packet_words
from ..validate import check_flag, check_operator, check_positive_int

__all__ = ["TwoTreePrefixPlan", "two_tree_prefix_plan", "two_tree_prefix_sum",
           "two_tree_prefix_sum_cost", "two_tree_prefix_sum_optimal_k"]

CATALOG_POSITION = 21          # after chapter 2's reductions and prefix sums (20)


# A prefix sum needs no root: each tree runs
# the scan of Fig. 13.8 (up, as a reduction; down, as a broadcast of prefixes) on its half
# of every message, so the two trees never exchange data.  What couples them is the ports.
#
# Our construction (the idea of [277], our own details):
# * Tree 1 is an in-order tree on the PEs 0..q-1 (q = p rounded down to even) whose
#   leaves are exactly the even ranks: every range starts at an even rank, a range of
#   one PE is a leaf, and a longer one is split at an odd rank, as near its middle as the
#   leaves allow.  Tree 2 is its mirror image, rank v <-> q-1-v: still contiguous
#   subtrees, low and high child swapped, and the leaves are now the odd ranks.  So a PE
#   has two children in at most one tree, and no PE has more than two children in all.
#   For odd p the last PE, p-1, sits on top of both trees (a root with one low child).
# * Per packet a PE with c children in a tree receives c + 1 messages there and sends
#   c + 1 (c up and 1 down, 1 up and c down): at most four of each per pair of packets.
#   Draw PE i as a sender node and a receiver node and every directed tree edge (up and
#   down, both trees) between them: a bipartite graph of degree at most 4, which has a
#   4-edge-colouring (König; collective_lib.coloring).  Packet j of an edge of colour c
#   crosses it in step first + 4j, first = c (mod 4): every PE sends at most once and
#   receives at most once per step, as full-duplex ports allow.
# * ``first`` of an edge is the earliest step of its colour after the steps that bring
#   its data: an up edge waits for both children's up messages, a down edge to the low
#   child for the parent's down message, one to the high child also for the low child's
#   up message.  Each wait is at most 3 steps, so the up messages reach the root of a tree
#   of height H within 4H steps and the last down message arrives within 8H; with k/2
#   packets per tree the schedule has at most 8H + 2k - 4 steps.


def _check_two_tree_prefix_k(k):
    if not isinstance(k, Integral) or isinstance(k, bool) or k < 2 or k % 2:
        raise ValueError("two_tree_prefix_sum needs an even number of packets k >= 2 "
                         f"(k/2 for each tree), got k={k!r}")
    return int(k)


def _even_leaf_tree(last, parent, low, high):
    """Fill parent/low/high for the in-order tree on 0..last whose leaves are the even ranks."""
    stack = [(0, last, None, None)]
    while stack:
        a, b, above, side = stack.pop()
        x = min(b, a + 2 * ((b - a) // 2 // 2 + 1) - 1) if b > a else a
        parent[x] = above
        if side is not None:
            side[above] = x
        if a < x:
            stack.append((a, x - 1, x, low))
        if x < b:
            stack.append((x + 1, b, x, high))


class TwoTreePrefixPlan(NamedTuple):
    """The two in-order trees of :func:`two_tree_prefix_sum` and their schedule for p PEs.

    ``parent[t][v]``, ``low[t][v]``, ``high[t][v]``: v's parent and its children
    with lower and higher ranks in tree t (None where there is none);
    ``first[(src, dst, t)]`` the step (from 0) in which packet 0 of tree t
    crosses the tree edge from src to dst, packet j four steps per packet later;
    ``height`` the trees' height H; ``latency`` the steps that packet 0 takes,
    so that k/2 packets per tree take ``latency + 2k - 4`` steps.
    """
    parent: tuple
    low: tuple
    high: tuple
    first: dict
    height: int
    latency: int


@lru_cache(maxsize=32)
def two_tree_prefix_plan(p: int) -> TwoTreePrefixPlan:
    """Build the two mirrored in-order trees, colour their edges and derive the steps.

    Global work O(p^2) at most (the colouring), done once per p and cached.

    >>> plan = two_tree_prefix_plan(6)
    >>> plan.low[0], plan.high[0]                 # tree 1: leaves 0, 2, 4
    ((None, 0, None, 1, None, 4), (None, 2, None, 5, None, None))
    >>> plan.parent[1]                            # tree 2, its mirror: leaves 1, 3, 5
    (2, 0, None, 4, 2, 4)
    >>> plan.height, plan.latency
    (2, 12)
    """
    check_positive_int("p", p)
    q = p - p % 2
    parent, low, high = ([[None] * p, [None] * p] for _ in range(3))
    if q:
        _even_leaf_tree(q - 1, parent[0], low[0], high[0])
        for v in range(q):                            # the mirror image
            w = q - 1 - v
            parent[1][v] = None if parent[0][w] is None else q - 1 - parent[0][w]
            low[1][v] = None if high[0][w] is None else q - 1 - high[0][w]
            high[1][v] = None if low[0][w] is None else q - 1 - low[0][w]
    if p % 2 and p > 1:                               # p - 1 on top of both trees
        for t in (0, 1):
            top = parent[t].index(None)
            parent[t][top], low[t][p - 1] = p - 1, top
    edges = [(v, parent[t][v], t) for t in (0, 1) for v in range(p) if parent[t][v] is not None]
    edges += [(u, v, t) for v, u, t in list(edges)]     # up edges, then down edges
    import networkx as nx     # here, not at the top: see collective_lib.coloring
    graph = nx.MultiGraph()
    graph.add_nodes_from((("s", v) for v in range(p)), bipartite=0)
    graph.add_nodes_from((("r", v) for v in range(p)), bipartite=1)
    graph.add_edges_from((("s", u), ("r", v), t) for u, v, t in edges)
    colours = color_bipartite_multigraph(graph)
    colour = {(u, v, t): colours[("s", u), ("r", v), t] for u, v, t in edges}

    first = {}

    def at(edge, ready):                              # the first step of its colour >= ready
        first[edge] = ready + (colour[edge] - ready) % 4
        return first[edge] + 1                        # the step its message has arrived by

    height = 0
    for t in (0, 1):
        order, depth = [parent[t].index(None)] if p > 1 else [], {}
        for v in order:                               # top-down (grows while we walk it)
            depth[v] = 0 if parent[t][v] is None else depth[parent[t][v]] + 1
            order += [c for c in (low[t][v], high[t][v]) if c is not None]
        height = max(height, max(depth.values(), default=0))
        up = {}
        for v in reversed(order):                     # upward: after both children
            if parent[t][v] is not None:
                up[v] = at((v, parent[t][v], t),
                           max((up[c] for c in (low[t][v], high[t][v]) if c is not None),
                               default=0))
        down = {}
        for v in order:                               # downward: after the parent
            ell = down.get(v, 0)
            if low[t][v] is not None:
                down[low[t][v]] = at((v, low[t][v], t), ell)
            if high[t][v] is not None:
                down[high[t][v]] = at((v, high[t][v], t), max(ell, up.get(low[t][v], 0)))
    latency = max(first.values(), default=-1) + 1
    return TwoTreePrefixPlan(parent=tuple(map(tuple, parent)), low=tuple(map(tuple, low)),
                             high=tuple(map(tuple, high)), first=first, height=height,
                             latency=latency)


def _two_tree_prefix_m(p, m, k=2, **_):
    """The ``valid_m`` of :func:`two_tree_prefix_sum`: k even and >= 2, any m (k > m too)."""
    _check_two_tree_prefix_k(k)


def two_tree_prefix_sum_cost(p, m, model, k=2, **_):
    """(5/4)(T + 2k)(ts + tw ceil(m/k)), T = two_tree_prefix_plan(p).latency; a bound.

    The schedule of :func:`two_tree_prefix_plan` takes T + 2k - 4 steps of one
    packet of ceil(m/k) words (every transfer is charged that much).  The
    simulator runs the program slower than its schedule, by up to a quarter
    (see the module's docstring), so this bound is 5/4 of the schedule's
    steps plus five, measured rather than proven:
    tests/algorithms/test_two_tree_prefix.py checks it for every p up to 300
    and for larger p, for many k.  For k dividing m it is
    2.5 tw m + 2.5 ts k + (5/4) T (ts + tw m/k), against Sanders'
    2 beta n + 4 alpha log p (§13.3); T is about 6 log2 p.

    >>> from collective_lib import CostModel
    >>> two_tree_prefix_plan(7).latency, two_tree_prefix_sum_cost(7, 20, CostModel(), k=4)
    (12, 25.0)
    """
    k = _check_two_tree_prefix_k(k)
    if p == 1:
        return 0.0
    steps = two_tree_prefix_plan(p).latency + 2 * k
    return 1.25 * steps * model.transfer_time(packet_words(m, k, allow_empty=True))


def two_tree_prefix_sum_optimal_k(p, m, model, **_):
    """The even number of packets that minimizes :func:`two_tree_prefix_sum_cost`.

    >>> from collective_lib import CostModel
    >>> two_tree_prefix_sum_optimal_k(15, 6000, CostModel(ts=100, tw=1))
    24
    """
    return best_packet_count(two_tree_prefix_sum_cost, p, m, model, even=True)


def _two_tree_prefix_held(state):
    """Per packet, the prefix combined so far (what came from below the PE's range, its low
    subtree's part, its own), glued; the PE's message before the trees are built."""
    env = state.locals
    if "ell" not in env:
        return env.get("data")
    return join_packets([combine(env["op"], below, low, mine)
                         for below, low, mine in zip(env["ell"], env["left"], env["own"])])


@register(operation="prefix_sum", cost=two_tree_prefix_sum_cost, exact=False,
          tex=r"\frac{5}{4}(T + 2k)\bigl(t_s + t_w \lceil m/k \rceil\bigr)",
          params={"op": add, "exclusive": False, "k": 2}, valid_m=_two_tree_prefix_m,
          optimal_k=two_tree_prefix_sum_optimal_k, held=_two_tree_prefix_held,
          source="Sanders et al. 2019, §13.3 (last paragraph, two in-order trees as in "
                 "§13.1.4; Sanders, Speck and Träff 2009)")
def two_tree_prefix_sum(me, p, data, op=add, exclusive=False, k=2):
    """Prefix sums on two mirrored in-order trees, half of every message on each.

    Sanders et al. 2019, §13.3 (last paragraph): two compatibly numbered
    trees, as in the two-tree broadcast of §13.1.4 (Sanders, Speck and Träff
    2009, cited as [277]), give prefix sums in 2 beta n + 4 alpha log p +
    O(sqrt(alpha beta n log p)).  Every PE cuts its message into k packets
    (k even); packets 0..k/2-1 are summed in tree 1, the others in tree 2,
    each tree running the scan of Fig. 13.8 packet by packet: upwards, receive
    x from the low child and z from the high child and send x op m op z to
    the parent; downwards, receive l from the parent, send l to the low child
    and l op x op m, my prefix, to the high child.  Both trees are numbered in
    order (tree 2 is tree 1 mirrored), so the operands stay in rank order and
    ``op`` need not commute; it must act word by word, as any
    :func:`elementwise` operator does.  A PE with two children in one tree is
    a leaf in the other, and a 4-edge-colouring of the tree edges gives every
    PE at most one send and one receive per step (:func:`two_tree_prefix_plan`).

    Model: full-duplex ports.  As in Sanders' analysis every transfer is
    charged ceil(n/k) words, also the neutral element sent down the leftmost
    path and the shorter (or, for k > n, empty) packets.  The schedule takes
    ``two_tree_prefix_plan(p).latency + 2k - 4`` steps of alpha + beta ceil(n/k),
    2 beta n for the words, a third of the single tree's 6 beta n.  The
    simulator's eager sends do not always keep to it (see the module's
    docstring): it takes up to a quarter longer, which
    :func:`two_tree_prefix_sum_cost`, the catalog's bound, allows for.

    Examples
    --------
    >>> from collective_lib import CostModel, simulate
    >>> run = simulate(two_tree_prefix_sum, 7, [[4, 1], [3, 1], [1, 1], [7, 1],
    ...                [8, 1], [4, 1], [5, 1]], k=2, model=CostModel())
    >>> run.results                              # Fig. 13.9 in the first word, ranks in the second
    [[4, 1], [7, 2], [8, 3], [15, 4], [23, 5], [27, 6], [32, 7]]
    >>> run.time <= two_tree_prefix_sum_cost(7, 2, CostModel(), k=2)
    True
    """
    op = check_operator(op)
    exclusive = check_flag("exclusive", exclusive)
    k = _check_two_tree_prefix_k(k)
    own = cut_evenly(data, k, "two_tree_prefix_sum")
    if p == 1:
        return None if exclusive else data
    width = packet_words(size_in_words(data), k, allow_empty=True)
    half = k // 2
    plan = two_tree_prefix_plan(p)
    left = [None] * k                              # x: the packet of my low subtree
    right = [None] * k                             # z: the packet of my high subtree
    ell = [None] * k                               # l: the packet of everything below my range
    # steps[s] = [what to send, what to receive], each (peer, tree, packet, role)
    steps = {}
    for t in (0, 1):
        kids = ((plan.low[t][me], "low"), (plan.high[t][me], "high"))
        up = plan.parent[t][me]
        for j in range(half):
            if up is not None:
                steps.setdefault(plan.first[me, up, t] + 4 * j, [None, None])[0] = (up, t, j, "up")
                steps.setdefault(plan.first[up, me, t] + 4 * j, [None, None])[1] = (up, t, j, "l")
            for kid, role in kids:
                if kid is not None:
                    steps.setdefault(plan.first[me, kid, t] + 4 * j, [None, None])[0] = \
                        (kid, t, j, role)
                    steps.setdefault(plan.first[kid, me, t] + 4 * j, [None, None])[1] = \
                        (kid, t, j, role)

    def outgoing(t, j, role):
        i = t * half + j
        if role == "up":
            return combine(op, left[i], own[i], right[i])
        if role == "low":
            return ell[i]
        return combine(op, ell[i], left[i], own[i])  # to the high child: my prefix

    for s in sorted(steps):
        out, into = steps[s]
        if out is not None:
            packet = outgoing(*out[1:])
            if into is not None:
                got = yield sendrecv(out[0], packet, into[0], words=width)
            else:
                yield send(out[0], packet, words=width)
        else:
            got = yield recv(into[0])
        if into is not None:
            _, t, j, role = into
            {"l": ell, "low": left, "high": right}[role][t * half + j] = got
    if exclusive:
        return None if me == 0 else join_packets([combine(op, ell[i], left[i])
                                                  for i in range(k)])
    return join_packets([combine(op, ell[i], left[i], own[i]) for i in range(k)])
