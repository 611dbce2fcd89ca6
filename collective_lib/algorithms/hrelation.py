"""All-to-all with non-uniform message sizes: routing an h-relation (chapter 5).

The operation ``"alltoallv"``: PE i holds a list of p messages, ``data[j]``
being its message m_ij for PE j, a list of words whose length varies from
message to message (it may be empty); PE j returns the list of the p messages
destined for it, indexed by source: ``result[i]`` is PE i's ``data[j]``.

How hard such an exchange is depends on its bottleneck volume (Sanders
§13.6.3)

    h = max_i max(sum_j |m_ij|, sum_j |m_ji|),

the most words one PE must send or receive; the problem is called an
*h-relation*.  A PE's message to itself never leaves its memory, so here the
sums run over j != i (:func:`bottleneck_volume`).  Full-duplex, one word per
time beta, every exchange needs at least ``h beta``.

Two ways to route it:

* :func:`alltoallv_two_phase`, Sanders' reduction to two uniform all-to-all
  exchanges (Eq. 13.5, Fig. 13.15): cut every message into p pieces, send
  piece k to PE k, and let PE k forward it;
* :func:`alltoallv_edge_coloring`, Sanders' scheduling view: the packets form
  a bipartite multigraph of maximum degree h (:func:`h_relation_multigraph`),
  whose h-edge-colouring (König; :func:`color_bipartite_multigraph`) is a
  schedule of h steps in which every PE sends and receives at most one packet
  (:func:`coloring_schedule`).

Catalog convention: for ``"alltoallv"`` the catalog's ``m`` is h.  Its random
inputs (:func:`~collective_lib.operations.random_h_relation`, declared with
the operation in :mod:`collective_lib.operations` and importable from here
too) have h = m exactly on p >= 2 PEs, with
messages of very different lengths, many empty ones and a hot receiver that
takes m words.  Costs are communication only (alpha = ts, beta = tw).

Sources: Sanders, Mehlhorn, Dietzfelbinger, Dementiev, Sequential and Parallel
Algorithms and Data Structures (2019), §13.6 (Eq. 13.5) and §13.6.3
(Fig. 13.15, the bipartite multigraph H and its edge colouring); König's
edge-colouring theorem for bipartite multigraphs; Bruck et al., IEEE TPDS
8(11), 1997 for the all-gather the programs use to agree on sizes.
"""
from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral
from typing import NamedTuple

import networkx as nx
import numpy as np

from ..catalog import register
from ..operations import random_h_relation
from ..ops import recv, send, sendrecv, size_in_words
from ..trees import ceil_log2
from ..validate import check_positive_int
from .gather import bruck_allgather
from .personalized import alltoall_cyclic

__all__ = [
    "alltoallv_two_phase", "alltoallv_edge_coloring", "message_sizes", "bottleneck_volume",
    "random_h_relation", "h_relation_multigraph", "color_bipartite_multigraph",
    "check_edge_coloring", "pad_to_regular", "Transfer", "coloring_schedule",
    "two_phase_bundle_words", "eq_13_5_bound", "alltoallv_edge_coloring_cost",
    "alltoallv_two_phase_cost", "edge_coloring_delivery_cost",
]

#: Where this module's entries stand in the catalog (chapter 5; see collective_lib.algorithms).
CATALOG_POSITION = 52


# -- sizes and h ---------------------------------------------------------------------------

def _check_sizes(sizes) -> np.ndarray:
    """``sizes`` as a p x p array of non-negative ints; a ValueError names a bad entry."""
    try:
        a = np.array(sizes)
    except ValueError:                                 # ragged rows
        a = np.array(None)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        lengths = [len(row) for row in sizes] if a.ndim != 2 else list(a.shape)
        raise ValueError(f"sizes must be a p x p matrix of word counts, got rows of "
                         f"lengths {lengths[:8]}")
    if a.dtype.kind not in "iu" or (a < 0).any() or any(
            type(s) is bool for row in sizes for s in row):
        for i, row in enumerate(sizes):
            for j, s in enumerate(row):
                if not isinstance(s, Integral) or isinstance(s, bool) or s < 0:
                    raise ValueError(f"sizes[{i}][{j}] must be a non-negative integer, "
                                     f"got {s!r}")
    return a.astype(np.int64)


def _check_unit(unit) -> int:
    return check_positive_int("unit", unit)


def message_sizes(inputs) -> list:
    """The p x p matrix of message lengths in words: ``sizes[i][j] = |m_ij|``.

    Examples
    --------
    >>> message_sizes([[[7], [1, 2, 3]], [[], [4]]])
    [[1, 3], [0, 1]]
    """
    p = len(inputs)
    return [[size_in_words(x) for x in _check_messages("message_sizes", row, p)]
            for row in inputs]


def bottleneck_volume(sizes) -> int:
    """h, the most words one PE sends or receives (Sanders §13.6.3), self-messages excluded.

    Parameters
    ----------
    sizes : p x p matrix of non-negative ints
        ``sizes[i][j]`` words go from PE i to PE j (see :func:`message_sizes`).

    Examples
    --------
    >>> bottleneck_volume([[9, 2, 1],
    ...                    [0, 0, 4],
    ...                    [3, 0, 0]])     # PE 2 receives 1 + 4 words; the 9 stay on PE 0
    5
    """
    a = _check_sizes(sizes)
    np.fill_diagonal(a, 0)
    if a.size == 0:
        return 0
    return int(max(a.sum(axis=1).max(), a.sum(axis=0).max()))


# -- checking an input --------------------------------------------------------------------------

def _check_messages(algorithm, data, p) -> list:
    """A PE's input: p messages, each a list (or tuple) of words."""
    if not isinstance(data, (list, tuple)) or len(data) != p:
        raise ValueError(f"{algorithm} needs a list of p={p} messages on every PE (one per "
                         f"destination), got {data!r:.80}")
    for j, message in enumerate(data):
        if not isinstance(message, (list, tuple)):
            raise ValueError(f"{algorithm}: the message for PE {j} must be a list of words "
                             f"(maybe empty), got {message!r:.80}")
    return list(data)


def _agreement_cost(p, model):
    """Bruck's all-gather of one word per PE: ceil(log2 p) alpha + (p - 1) beta."""
    return ceil_log2(p) * model.ts + (p - 1) * model.tw


# -- two phases of uniform all-to-all: Sanders §13.6.3 ------------------------------------------

@dataclass(frozen=True)
class _Bundle:
    """One message of a phase: pieces by the index they are filed under, charged ``size`` words.

    ``size`` is what the simulator charges (``size_in_words`` reads it): the
    exchange is uniform, so every bundle of a phase is padded to the same size.
    """
    pieces: dict
    size: int


def _pieces(message, p) -> list:
    """Cut a message into p pieces of ceil(|m| / p) words (the last ones may be short or empty).

    >>> _pieces(list(range(7)), 3)
    [[0, 1, 2], [3, 4, 5], [6]]
    """
    width = -(-len(message) // p)
    return [list(message[k * width:(k + 1) * width]) for k in range(p)]


def _bundle_words(pieces, p) -> int:
    """p header fields (where the pieces begin) plus the pieces' words, Sanders §13.6.3."""
    return p + sum(len(x) for x in pieces.values())


def two_phase_bundle_words(sizes) -> tuple:
    """The padded message sizes (N1, N2) of the two uniform exchanges of :func:`alltoallv_two_phase`.

    N1 is the largest |m_i*k| = p + sum_j |m_ijk| over all i, k, and N2 the
    largest |m_*jk| = p + sum_i |m_ijk| over all j, k; both are at most
    h/p + 2p (Sanders §13.6.3).

    Examples
    --------
    >>> two_phase_bundle_words([[0, 7, 0], [0, 0, 0], [2, 0, 0]])   # p = 3, h = 7
    (6, 6)
    """
    a = _check_sizes(sizes)
    p = len(a)
    np.fill_diagonal(a, 0)
    width = -(-a // p)                                       # ceil(|m_ij| / p)
    k = np.arange(p)
    piece = np.clip(a[:, :, None] - width[:, :, None] * k, 0, width[:, :, None])  # |m_ijk|
    return p + int(piece.sum(axis=1).max(initial=0)), p + int(piece.sum(axis=0).max(initial=0))


def eq_13_5_bound(p, h, model) -> float:
    """Sanders Eq. 13.5 with direct delivery: 2 T_all->all(h/p + 2p) = 2 (p - 1)(alpha + (h/p + 2p) beta).

    Examples
    --------
    >>> from collective_lib import CostModel
    >>> eq_13_5_bound(4, 8, CostModel(ts=1.0, tw=1.0))    # 2 * 3 * (1 + 2 + 8)
    66.0
    """
    return 2 * (p - 1) * (model.ts + (h / p + 2 * p) * model.tw)


def alltoallv_two_phase_cost(p, m, model, **_):
    """Eq. 13.5 plus two size agreements: 2 (ceil(log p) alpha + (p-1) beta) + 2 (p-1)(alpha + (h/p + 2p) beta).

    A bound, with h = m (0 for p = 1).  Each phase is the direct-delivery all-to-all
    (Eq. 13.3) on messages padded to the phase's largest one, at most
    h/p + 2p words; before each phase the PEs agree on that size with an
    all-gather of one word.
    """
    return 2 * _agreement_cost(p, model) + eq_13_5_bound(p, m if p > 1 else 0, model)


def _largest(me, p, words):
    """Every PE learns the largest of the p values ``words`` (an all-gather of one word)."""
    return max((yield from bruck_allgather(me, p, words)))


@register(operation="alltoallv", cost=alltoallv_two_phase_cost, exact=False,
          source="Sanders et al. 2019, §13.6.3, Eq. 13.5, Fig. 13.15")
def alltoallv_two_phase(me, p, data):
    """Non-uniform all-to-all as two uniform all-to-all exchanges through intermediate PEs.

    Sanders et al. 2019, §13.6.3 and Fig. 13.15.  Cut every message m_ij
    (j != i) into p pieces m_ijk of ceil(|m_ij| / p) words.  Phase 1: PE i
    sends to every PE k the message m_i*k, the pieces m_ijk for all j behind
    p header fields.  Phase 2: PE k sends to every PE j the message m_*jk,
    the pieces m_ijk for all i, again behind p header fields.  PE j then
    joins the pieces m_ij0, m_ij1, ... back into m_ij.  A message to oneself
    stays local.  Both phases run :func:`~collective_lib.algorithms.personalized.alltoall_cyclic`,
    which exchanges messages of one size, so each phase pads its messages to
    the largest one, whose size the PEs first agree on with a one-word
    all-gather (:func:`~collective_lib.algorithms.gather.bruck_allgather`).
    Every message of a phase has at most h/p + 2p words, so each phase costs
    at most T_all->all(h/p + 2p) (Eq. 13.5).  Any p, full-duplex, fully
    connected; time at most 2 (ceil(log p) alpha + (p-1) beta)
    + 2 (p - 1)(alpha + (h/p + 2p) beta) (:func:`two_phase_bundle_words`
    gives the padded sizes, which make it exact).

    Examples
    --------
    >>> from collective_lib import simulate
    >>> data = [[[], [1, 2, 3, 4]], [[5], []]]
    >>> simulate(alltoallv_two_phase, 2, data).results
    [[[], [5]], [[1, 2, 3, 4], []]]
    """
    messages = _check_messages("alltoallv_two_phase", data, p)
    # Phase 1: piece m_ijk travels to PE k, filed under its destination j.
    outgoing = [{} for _ in range(p)]
    for j, message in enumerate(messages):
        if j != me and message:
            for k, piece in enumerate(_pieces(message, p)):
                if piece:
                    outgoing[k][j] = piece
    width = yield from _largest(me, p, max(_bundle_words(x, p) for x in outgoing))
    arrived = yield from alltoall_cyclic(me, p, [_Bundle(x, width) for x in outgoing])
    # Phase 2: PE k forwards piece m_ijk to PE j, filed under its source i.
    forward = [{} for _ in range(p)]
    for i, bundle in enumerate(arrived):
        for j, piece in bundle.pieces.items():
            forward[j][i] = piece
    width = yield from _largest(me, p, max(_bundle_words(x, p) for x in forward))
    arrived = yield from alltoall_cyclic(me, p, [_Bundle(x, width) for x in forward])
    # Join m_ij0, m_ij1, ..., m_ij(p-1) back into m_ij.
    result = [[] for _ in range(p)]
    for bundle in arrived:                                   # k = 0, 1, ..., p - 1
        for i, piece in bundle.pieces.items():
            result[i] += piece
    result[me] = list(messages[me])
    return result


# -- the h-relation as a bipartite multigraph: Sanders §13.6.3 -------------------------------

def _packets(sizes, unit):
    """The packets of an h-relation as (src, dst) pairs, a message's packets in order."""
    sizes = _check_sizes(sizes)
    unit = _check_unit(unit)
    np.fill_diagonal(sizes, 0)
    counts = -(-sizes // unit)
    return [(int(i), int(j)) for i, j in zip(*np.nonzero(counts))
            for _ in range(counts[i, j])]


def h_relation_multigraph(sizes, unit: int = 1) -> nx.MultiGraph:
    """Sanders' bipartite multigraph H of an h-relation: one edge per packet.

    Node ``("s", i)`` is PE i as a sender, node ``("r", j)`` PE j as a
    receiver (attribute ``bipartite`` 0 and 1).  A message of ``sizes[i][j]``
    words, cut into packets of ``unit`` words, gives ceil(sizes[i][j] / unit)
    parallel edges between ``("s", i)`` and ``("r", j)``, with keys 0, 1, ...
    (the packets' order in the message).  Messages to oneself stay local and
    give no edge.  With ``unit = 1`` the maximum degree is h.

    Examples
    --------
    >>> H = h_relation_multigraph([[0, 2], [1, 0]])
    >>> sorted(H.edges(keys=True))
    [(('s', 0), ('r', 1), 0), (('s', 0), ('r', 1), 1), (('s', 1), ('r', 0), 0)]
    >>> max(d for _, d in H.degree())
    2
    """
    packets = _packets(sizes, unit)
    p = len(sizes)
    graph = nx.MultiGraph()
    graph.add_nodes_from((("s", i) for i in range(p)), bipartite=0)
    graph.add_nodes_from((("r", j) for j in range(p)), bipartite=1)
    graph.add_edges_from((("s", i), ("r", j)) for i, j in packets)
    return graph


def _sides(graph):
    """The edges of a bipartite multigraph as (left, right, key), left on side 0.

    Raises a ValueError naming a node without side or an edge inside one side.
    """
    side = {}
    for v, s in graph.nodes(data="bipartite"):
        if s not in (0, 1):
            raise ValueError(f"node {v!r} needs the attribute bipartite = 0 or 1, got {s!r}")
        side[v] = s
    edges = []
    for u, v, key in graph.edges(keys=True):
        if side[u] == side[v]:
            raise ValueError(f"edge {(u, v, key)!r} joins two nodes of side {side[u]}; "
                             f"the multigraph is not bipartite")
        edges.append((u, v, key) if side[u] == 0 else (v, u, key))
    return edges


def _max_degree(graph) -> int:
    return max((d for _, d in graph.degree()), default=0)


def _color_edges(ends, nodes, h) -> list:
    """König's alternating-path colouring of the edges ``ends`` = [(u, v), ...], u on side 0.

    Nodes are the integers 0 .. nodes-1; returns one colour in 0 .. h-1 per edge.
    """
    at = [{} for _ in range(nodes)]              # at[x][colour] = the edge of that colour at x
    free = [set(range(h)) for _ in range(nodes)]
    colour = [None] * len(ends)

    def paint(e, c):
        u, v = ends[e]
        colour[e] = c
        at[u][c] = at[v][c] = e
        free[u].discard(c)
        free[v].discard(c)

    def scrape(e):
        u, v = ends[e]
        c = colour[e]
        del at[u][c], at[v][c]
        free[u].add(c)
        free[v].add(c)
        return c

    for e, (u, v) in enumerate(ends):
        a = min(free[u])                         # free at u: fewer than h edges coloured there
        if a not in free[v]:
            b = min(free[v])
            path, x, c = [], v, a                # the path from v coloured a, b, a, ...
            while c in at[x]:
                f = at[x][c]
                path.append(f)
                x = ends[f][0] if ends[f][1] == x else ends[f][1]
                c = b if c == a else a
            swapped = [(f, b if scrape(f) == a else a) for f in path]
            for f, c in swapped:
                paint(f, c)
        paint(e, a)
    return colour


def color_bipartite_multigraph(graph) -> dict:
    """An edge colouring of a bipartite multigraph with exactly as many colours as its maximum degree.

    König's theorem: a bipartite multigraph of maximum degree h has a proper
    h-edge-colouring (no two edges at a node share a colour).  The proof is
    the algorithm: colour the edges one at a time.  For an edge (u, v), some
    colour a is free at u and some colour b at v, since fewer than h of their
    edges are coloured yet.  If a is free at v too, use it.  Otherwise follow
    the path from v whose edges alternate a, b, a, ... and swap the two
    colours along it; the path cannot end at u (it enters u's side only along
    a-edges, and u has none), so afterwards a is free at both ends.  Time
    O(|E| (h + |V|)).

    Parameters
    ----------
    graph : networkx.MultiGraph
        Nodes carry ``bipartite`` = 0 or 1, as from :func:`h_relation_multigraph`.

    Returns
    -------
    dict
        ``{(left, right, key): colour}`` with colours 0 .. h-1, ``left`` the
        edge's node on side 0.

    Examples
    --------
    >>> H = h_relation_multigraph([[0, 2, 1], [1, 0, 1], [1, 1, 0]])
    >>> colours = color_bipartite_multigraph(H)
    >>> sorted(set(colours.values()))          # h = 3
    [0, 1, 2]
    >>> check_edge_coloring(H, colours)
    3
    """
    edges = _sides(graph)
    number = {v: k for k, v in enumerate(graph.nodes)}
    colours = _color_edges([(number[u], number[v]) for u, v, _ in edges], len(number),
                           _max_degree(graph))
    return dict(zip(edges, colours))


def check_edge_coloring(graph, colouring) -> int:
    """Check that ``colouring`` is a proper edge colouring of ``graph`` with exactly h colours.

    Every edge must have a colour in 0 .. h-1 (h the maximum degree) and
    each colour class must be a matching (no two edges of one colour meet at
    a node); then a node of degree h uses all h colours, so the colouring has
    exactly h.  Returns h; raises a ValueError naming the first violation.

    Examples
    --------
    >>> H = h_relation_multigraph([[0, 2], [0, 0]])
    >>> check_edge_coloring(H, {(("s", 0), ("r", 1), 0): 0, (("s", 0), ("r", 1), 1): 0})
    Traceback (most recent call last):
    ...
    ValueError: colour 0 is used twice at node ('s', 0): ...
    """
    edges = _sides(graph)
    h = _max_degree(graph)
    if set(colouring) != set(edges):
        missing = set(edges) - set(colouring)
        raise ValueError(f"the colouring must colour exactly the edges of the graph; "
                         f"missing {sorted(missing)[:3]}, extra {sorted(set(colouring) - set(edges))[:3]}")
    seen = {}
    for edge in edges:
        c = colouring[edge]
        if not isinstance(c, Integral) or not 0 <= c < h:
            raise ValueError(f"edge {edge!r} has colour {c!r}, not one of 0..{h - 1}")
        for node in edge[:2]:
            if (node, c) in seen:
                raise ValueError(f"colour {c} is used twice at node {node!r}: edges "
                                 f"{seen[node, c]!r} and {edge!r}")
            seen[node, c] = edge
    return h          # a node of degree h sees all of the colours 0 .. h-1


def _dummy_pairs(lack_out, lack_in) -> list:
    """(src, dst) dummy packets that give every PE the missing sends and receives.

    ``lack_out[i]`` and ``lack_in[i]`` are what PE i lacks of h as a sender
    and as a receiver (both sum to D).  A PE k with lack_out[k] + lack_in[k]
    > D first gets the excess as packets to itself (at most one PE can have
    it); then the sender and the receiver of different PEs with the largest
    lack_out + lack_in are paired, as many times as keeps every PE's
    lack_out + lack_in <= D, which therefore never runs out of partners.
    """
    d = np.array(lack_out, dtype=np.int64)
    e = np.array(lack_in, dtype=np.int64)
    pairs = []

    def add(i, j, count):
        pairs.extend([(i, j)] * int(count))
        d[i] -= count
        e[j] -= count

    total = int(d.sum())
    if total:
        k = int(np.argmax(d + e))
        if d[k] + e[k] > total:                 # only PE k can take these: it idles
            excess = int(d[k] + e[k]) - total
            add(k, k, excess)
            total -= excess
    ranks = np.arange(len(d))
    while total:
        score = d + e
        i = int(np.argmax(np.where(d > 0, score, -1)))
        j = int(np.argmax(np.where((e > 0) & (ranks != i), score, -1)))
        rest = np.delete(score, [i, j])
        count = min(int(d[i]), int(e[j]), total - int(rest.max(initial=0)))
        add(i, j, count)
        total -= count
    return pairs


def pad_to_regular(graph) -> nx.MultiGraph:
    """Complete an h-relation's multigraph to an h-regular one with dummy edges (h its maximum degree).

    The step of König's proof that turns an edge colouring into perfect
    matchings: sender i lacks h - deg(s_i) edges, receiver j lacks
    h - deg(r_j), and both lacks add up to the same D.  Dummy edges
    (attribute ``dummy=True``) fill them, between ``("s", i)`` and
    ``("r", j)`` of different PEs i != j whenever that is possible; only a
    PE whose two lacks together exceed D (at most one PE can) gets the
    excess as dummy edges to itself, and in those steps it idles while every
    other PE is busy.

    Parameters
    ----------
    graph : networkx.MultiGraph
        From :func:`h_relation_multigraph` (nodes ``("s", i)``, ``("r", i)``).

    Examples
    --------
    >>> H = pad_to_regular(h_relation_multigraph([[0, 2, 0], [0, 0, 0], [0, 0, 0]]))
    >>> sorted(d for _, d in H.degree())          # every node now has degree h = 2
    [2, 2, 2, 2, 2, 2]
    >>> sorted((u[1], v[1]) for u, v, dummy in H.edges(data="dummy") if dummy)
    [(1, 2), (1, 2), (2, 0), (2, 0)]
    >>> H = pad_to_regular(h_relation_multigraph([[0, 1, 0], [1, 0, 0], [0, 0, 0]]))
    >>> sorted((u[1], v[1]) for u, v, dummy in H.edges(data="dummy") if dummy)   # PE 2 idles
    [(2, 2)]
    """
    _sides(graph)
    p = graph.number_of_nodes() // 2
    if set(graph.nodes) != {(side, i) for side in "sr" for i in range(p)}:
        raise ValueError("pad_to_regular needs the nodes ('s', i) and ('r', i), i = 0..p-1, "
                         "of h_relation_multigraph")
    h = _max_degree(graph)
    pairs = _dummy_pairs([h - graph.degree(("s", i)) for i in range(p)],
                         [h - graph.degree(("r", i)) for i in range(p)])
    padded = graph.copy()
    padded.add_edges_from((("s", i), ("r", j), {"dummy": True}) for i, j in pairs)
    return padded


class Transfer(NamedTuple):
    """One packet of a schedule step: from PE ``src`` to PE ``dst``; ``dummy`` pads a step."""
    src: int
    dst: int
    dummy: bool = False


def coloring_schedule(sizes, unit: int = 1, pad: bool = False) -> list:
    """The h-relation as h communication steps, from an h-edge-colouring of its multigraph.

    Step c holds the packets (edges) of colour c: every PE is the ``src`` of
    at most one and the ``dst`` of at most one, so in one step each PE sends
    at most one packet and receives at most one (Sanders §13.6.3).  The
    packets of one message are numbered in step order, so a receiver that
    appends them as they come rebuilds the message.  Same colouring as
    :func:`color_bipartite_multigraph` on :func:`h_relation_multigraph`
    (or its :func:`pad_to_regular` completion).

    Parameters
    ----------
    sizes : p x p matrix of non-negative ints
        Message lengths in words (see :func:`message_sizes`).
    unit : int, default 1
        Words per packet; the schedule then has as many steps as the largest
        number of packets a PE sends or receives (h for ``unit = 1``).
    pad : bool, default False
        Colour the :func:`pad_to_regular` completion instead, so that every PE
        sends and receives a packet (maybe a dummy) in every step; the steps
        in which one PE would only talk to itself come last.

    Returns
    -------
    list of lists of Transfer
        One sorted list per step.

    Examples
    --------
    >>> steps = coloring_schedule([[0, 2, 0], [0, 0, 1], [1, 0, 0]])
    >>> len(steps)                              # h = 2
    2
    >>> sorted((t.src, t.dst) for step in steps for t in step)
    [(0, 1), (0, 1), (1, 2), (2, 0)]
    >>> [len(step) for step in coloring_schedule([[0, 2, 0], [0, 0, 1], [1, 0, 0]], pad=True)]
    [3, 3]
    """
    if not isinstance(pad, bool):
        raise ValueError(f"pad must be True or False, got {pad!r}")
    p = len(sizes)
    packets = [Transfer(i, j) for i, j in _packets(sizes, unit)]
    out_degree = np.bincount([t.src for t in packets], minlength=p)
    in_degree = np.bincount([t.dst for t in packets], minlength=p)
    h = int(max(out_degree.max(initial=0), in_degree.max(initial=0)))
    if pad:
        packets += [Transfer(i, j, True) for i, j in _dummy_pairs(h - out_degree, h - in_degree)]
    colours = _color_edges([(t.src, p + t.dst) for t in packets], 2 * p, h)
    steps = [[] for _ in range(h)]
    for t, c in zip(packets, colours):
        steps[c].append(t)
    steps = [sorted(step) for step in steps]
    return sorted(steps, key=lambda step: any(t.src == t.dst for t in step))   # idle steps last


# -- delivering the schedule: alltoallv_edge_coloring ---------------------------------------

_last_plan = {"rows": None, "plan": None}


def _shared_plan(rows):
    """Per PE, the (dst, dst_is_dummy, src, src_is_dummy) of each step of the padded schedule.

    Every PE computes the same schedule from the same gathered rows.  The
    simulator runs all PEs in one process and they hold the very same row
    objects (immutable tuples), so the plan of the last call is reused when
    the rows are identical, instead of colouring the multigraph p times.
    """
    last = _last_plan["rows"]
    if last is not None and len(last) == len(rows) and all(a is b for a, b in zip(last, rows)):
        return _last_plan["plan"]
    p = len(rows)
    plan = [[] for _ in range(p)]
    for step in coloring_schedule(rows, pad=True):
        sends, recvs = {}, {}
        for t in step:
            if t.src != t.dst:                  # a PE paired with itself idles
                sends[t.src] = (t.dst, t.dummy)
                recvs[t.dst] = (t.src, t.dummy)
        for pe in set(sends) | set(recvs):
            plan[pe].append((*sends.get(pe, (None, True)), *recvs.get(pe, (None, True))))
    _last_plan.update(rows=rows, plan=plan)
    return plan


def edge_coloring_delivery_cost(h, model) -> float:
    """h (alpha + beta): the h one-word steps of the colouring schedule."""
    return h * (model.ts + model.tw)


def alltoallv_edge_coloring_cost(p, m, model, **_):
    """ceil(log p) alpha + (p - 1) p beta + h (alpha + beta), h = m, packets of one word; exact.

    The first two terms are Bruck's all-gather of the p x p size matrix (p
    words per PE), the last the h steps of the schedule.  A single PE has
    nothing to send (h = 0).
    """
    h = m if p > 1 else 0
    return ceil_log2(p) * model.ts + (p - 1) * p * model.tw + edge_coloring_delivery_cost(h, model)


@register(operation="alltoallv", cost=alltoallv_edge_coloring_cost, exact=True,
          source="Sanders et al. 2019, §13.6.3 (edge colouring of the bipartite multigraph H); "
                 "König's theorem")
def alltoallv_edge_coloring(me, p, data):
    """Route an h-relation in h steps of one-word packets, scheduled by an edge colouring.

    Sanders et al. 2019, §13.6.3: with packets of one word, the edges of the
    bipartite multigraph H (:func:`h_relation_multigraph`) coloured with h
    colours (:func:`color_bipartite_multigraph`) give h steps in which every
    PE sends at most one packet and receives at most one
    (:func:`coloring_schedule`).  The schedule needs every message length,
    so the PEs first all-gather their rows of the size matrix
    (:func:`~collective_lib.algorithms.gather.bruck_allgather`, p words per
    PE); each PE then computes the same schedule and runs its part of it.
    The schedule colours the h-regular completion of H
    (:func:`pad_to_regular`), so in every step each PE sends one packet and
    receives one, real or a one-word dummy: no PE runs ahead and takes a
    port another PE needs in the current step, and the h steps run in
    lockstep.  A message to oneself stays local.  Any p, full-duplex, fully connected; time
    ceil(log p) alpha + (p - 1) p beta + h (alpha + beta), which meets the
    lower bound h beta for the delivery itself but pays p^2 words to learn
    the sizes.

    Examples
    --------
    >>> from collective_lib import simulate, CostModel
    >>> data = [[[], [1, 2], [3]], [[4], [], []], [[5, 6], [], []]]
    >>> run = simulate(alltoallv_edge_coloring, 3, data, model=CostModel(ts=1, tw=0))
    >>> run.results[0], run.time               # 2 rounds to learn the sizes, h = 3 steps
    ([[], [4], [5, 6]], 5.0)
    """
    messages = _check_messages("alltoallv_edge_coloring", data, p)
    row = tuple(0 if j == me else size_in_words(x) for j, x in enumerate(messages))
    rows = yield from bruck_allgather(me, p, row)           # every PE learns every size
    next_word = [0] * p
    result = [[] for _ in range(p)]
    for dst, dst_dummy, src, src_dummy in _shared_plan(rows)[me]:
        word = None
        if not dst_dummy:
            word = messages[dst][next_word[dst]]
            next_word[dst] += 1
        if dst is not None and src is not None:
            got = yield sendrecv(dst, word, src, words=1)
        elif dst is not None:
            got = yield send(dst, word, words=1)
        else:
            got = yield recv(src)
        if not src_dummy:
            result[src].append(got)
    result[me] = list(messages[me])
    return result
