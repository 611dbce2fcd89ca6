"""The h-relation as a bipartite multigraph, and schedules as its edge colourings (chapter 5).

Sanders et al. 2019, §13.6.3: cut the messages of an h-relation into packets
of one word (or ``unit`` words) and draw the bipartite multigraph H with a node
s_i for PE i as a sender, a node r_j for PE j as a receiver, and one edge
(s_i, r_j) per packet from i to j (:func:`h_relation_multigraph`).  A
schedule that delivers every packet directly, with each PE sending at most
one packet and receiving at most one per step, is the same thing as a proper
edge colouring of H (Exercise 13.12): one colour per step.  The two directions
of that equivalence are :func:`schedule_to_coloring` and
:func:`coloring_to_schedule`; each checks its input and names the step or the
edge that breaks the rule.  König's theorem gives a colouring with h colours,
h the maximum degree (:func:`color_bipartite_multigraph`), so h steps
suffice; :func:`coloring_schedule` goes from the message sizes straight to
those h steps.  The program that delivers a schedule in the simulator is
:func:`collective_lib.algorithms.hrelation.deliver_schedule`.

Colours are numbered from 0 and colour c is step c + 1, as the chapters print
the steps (and the errors name them).  Sources: Sanders, Mehlhorn,
Dietzfelbinger, Dementiev, Sequential and Parallel Algorithms and Data
Structures (2019), §13.6.3 and Exercise 13.12; D. König, Über Graphen und
ihre Anwendung auf Determinantentheorie und Mengenlehre, Math. Ann. 77
(1916) (the edge-colouring theorem for bipartite multigraphs).
"""
from __future__ import annotations

from numbers import Integral
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from .validate import check_positive_int

if TYPE_CHECKING:
    # networkx is imported where a graph is built: at the top it cost every process that
    # loads the catalog (a grading checker, a kernel) 0.16 s
    import networkx as nx

__all__ = [
    "check_size_matrix", "h_relation_multigraph", "color_bipartite_multigraph",
    "check_edge_coloring", "pad_to_regular", "Transfer", "coloring_schedule",
    "idle_steps_last", "step_partners", "schedule_to_coloring", "coloring_to_schedule",
]


# -- the message sizes -----------------------------------------------------------------------

def check_size_matrix(sizes) -> np.ndarray:
    """``sizes`` as a p x p array of non-negative ints; a ValueError names a bad entry.

    ``sizes[i][j]`` is the length in words of PE i's message to PE j.

    Examples
    --------
    >>> check_size_matrix([[0, 2], [1, 0]]).tolist()
    [[0, 2], [1, 0]]
    >>> check_size_matrix([[0, 2], [-1, 0]])
    Traceback (most recent call last):
    ...
    ValueError: sizes[1][0] must be a non-negative integer, got -1
    """
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



# -- the h-relation as a bipartite multigraph: Sanders §13.6.3 -------------------------------

def _packets(sizes, unit):
    """The packets of an h-relation as (src, dst) pairs, a message's packets in order."""
    sizes = check_size_matrix(sizes)
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
    import networkx as nx
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


def check_edge_coloring(graph, colouring, colours=None) -> int:
    """Check that ``colouring`` is a proper edge colouring of ``graph`` and return its number of colours.

    Every edge must have a colour in 0 .. k-1 and each colour class must be a
    matching (no two edges of one colour meet at a node).  By default k is
    h, the maximum degree: then a node of degree h uses all h colours, so the
    colouring has exactly h.  Raises a ValueError naming the first violation.

    Parameters
    ----------
    graph : networkx.MultiGraph
        A bipartite multigraph, nodes with ``bipartite`` = 0 or 1.
    colouring : dict
        ``{(left, right, key): colour}``, ``left`` the edge's node on side 0.
    colours : int, optional
        The k allowed; default the maximum degree h.

    Returns
    -------
    int
        k (h by default).

    Examples
    --------
    >>> H = h_relation_multigraph([[0, 2], [0, 0]])
    >>> check_edge_coloring(H, {(("s", 0), ("r", 1), 0): 0, (("s", 0), ("r", 1), 1): 0})
    Traceback (most recent call last):
    ...
    ValueError: colour 0 is used twice at node ('s', 0): ...
    >>> check_edge_coloring(H, {(("s", 0), ("r", 1), 0): 2, (("s", 0), ("r", 1), 1): 0}, colours=3)
    3
    """
    edges = _sides(graph)
    k = _max_degree(graph) if colours is None else check_positive_int("colours", colours, least=0)
    if set(colouring) != set(edges):
        missing = set(edges) - set(colouring)
        raise ValueError(f"the colouring must colour exactly the edges of the graph; "
                         f"missing {sorted(missing)[:3]}, extra {sorted(set(colouring) - set(edges))[:3]}")
    seen = {}
    for edge in edges:
        c = colouring[edge]
        if not isinstance(c, Integral) or isinstance(c, bool) or not 0 <= c < k:
            raise ValueError(f"edge {edge!r} has colour {c!r}, not one of 0..{k - 1}")
        for node in edge[:2]:
            if (node, c) in seen:
                raise ValueError(f"colour {c} is used twice at node {node!r}: edges "
                                 f"{seen[node, c]!r} and {edge!r}")
            seen[node, c] = edge
    return k          # with k = h, a node of degree h sees all of the colours 0 .. h-1


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
        Message lengths in words (see
        :func:`collective_lib.algorithms.hrelation.message_sizes`).
    unit : int, default 1
        Words per packet; the schedule then has as many steps as the largest
        number of packets a PE sends or receives (h for ``unit = 1``).
    pad : bool, default False
        Colour the :func:`pad_to_regular` completion instead, so that every PE
        sends and receives a packet (maybe a dummy) in every step; the steps
        in which one PE would only talk to itself come last (:func:`idle_steps_last`).

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
    return idle_steps_last([sorted(step) for step in steps])



# -- Exercise 13.12: a direct-delivery schedule is an edge colouring, and back ----------------

def _pe_of(graph, node, side) -> int:
    """The PE of an h-relation graph's node ``("s", i)`` (side 0) or ``("r", j)`` (side 1)."""
    tag = "s" if side == 0 else "r"
    if not (isinstance(node, tuple) and len(node) == 2 and node[0] == tag
            and isinstance(node[1], Integral)):
        raise ValueError(f"node {node!r} is not a node ({tag!r}, PE) of an h-relation's "
                         f"multigraph (see h_relation_multigraph)")
    return int(node[1])


def idle_steps_last(steps) -> list:
    """The same steps, those in which some PE is paired with itself (it idles) moved to the end.

    Any order of the steps is a schedule (colours can be renamed), but not
    every order runs in lockstep: sends are eager, so a PE that idles in a
    step goes on to its next packet at once and can take a receiver's port
    that another PE needs in the current step.  Where an idle PE has nothing
    left to do, it cannot run ahead.  The order is otherwise kept.

    Examples
    --------
    >>> steps = [[Transfer(0, 1), Transfer(1, 1, True)], [Transfer(0, 1), Transfer(1, 0, True)]]
    >>> [[(t.src, t.dst) for t in step] for step in idle_steps_last(steps)]
    [[(0, 1), (1, 0)], [(0, 1), (1, 1)]]
    """
    return sorted(steps, key=lambda step: any(Transfer(*t).src == Transfer(*t).dst for t in step))


def step_partners(step, c: int = 0) -> tuple:
    """Who sends to whom in one step of a schedule; a ValueError names a PE that is busy twice.

    Parameters
    ----------
    step : list of Transfer
        The transfers of the step (plain ``(src, dst, dummy)`` tuples do too).
    c : int
        The step's index, its colour (the error message calls it step c + 1).

    Returns
    -------
    (dict, dict)
        ``{src: Transfer}`` and ``{dst: Transfer}``: each PE sends at most one
        packet and receives at most one.  A dummy transfer from a PE to itself
        counts as both (the PE idles in that step).

    Examples
    --------
    >>> sending, receiving = step_partners([Transfer(0, 1), Transfer(1, 0, True)])
    >>> sending[1], sorted(receiving)
    (Transfer(src=1, dst=0, dummy=True), [0, 1])
    >>> step_partners([Transfer(0, 2), Transfer(1, 2)], c=4)
    Traceback (most recent call last):
    ...
    ValueError: step 5 (colour 4): PE 2 receives two packets, from PE 0 and from PE 1
    """
    sending, receiving = {}, {}
    for t in (Transfer(*t) for t in step):
        if t.src in sending:
            raise ValueError(f"step {c + 1} (colour {c}): PE {t.src} sends two packets, to PE "
                             f"{sending[t.src].dst} and to PE {t.dst}")
        if t.dst in receiving:
            raise ValueError(f"step {c + 1} (colour {c}): PE {t.dst} receives two packets, from PE "
                             f"{receiving[t.dst].src} and from PE {t.src}")
        sending[t.src] = receiving[t.dst] = t
    return sending, receiving


def coloring_to_schedule(graph, colouring) -> list:
    """Colouring => schedule: step c delivers the packets whose edges have colour c.

    Exercise 13.12, one direction: the edges of one colour form a matching,
    so in step c every PE sends at most one packet (its node s_i has at most
    one edge of colour c) and receives at most one (r_i likewise).  The
    colouring is checked first (:func:`check_edge_coloring` with as many
    colours as it uses), and a ValueError names an edge that breaks it.

    Parameters
    ----------
    graph : networkx.MultiGraph
        An h-relation's multigraph (:func:`h_relation_multigraph`, maybe
        completed by :func:`pad_to_regular`; edges with ``dummy=True`` become
        dummy transfers).
    colouring : dict
        ``{(("s", i), ("r", j), key): colour}``, colours 0, 1, ...

    Returns
    -------
    list of lists of Transfer
        One sorted list per colour; as many steps as the largest colour + 1.

    Examples
    --------
    >>> H = h_relation_multigraph([[0, 2, 0], [0, 0, 1], [1, 0, 0]])
    >>> colouring = {(("s", 0), ("r", 1), 0): 0, (("s", 0), ("r", 1), 1): 1,
    ...              (("s", 1), ("r", 2), 0): 1, (("s", 2), ("r", 0), 0): 1}
    >>> for step in coloring_to_schedule(H, colouring):
    ...     print([(t.src, t.dst) for t in step])
    [(0, 1)]
    [(0, 1), (1, 2), (2, 0)]
    """
    used = max(colouring.values(), default=-1)
    steps = [[] for _ in range(check_edge_coloring(graph, colouring, colours=used + 1))]
    for (u, v, key), c in colouring.items():
        dummy = bool(graph.edges[u, v, key].get("dummy", False))
        steps[c].append(Transfer(_pe_of(graph, u, 0), _pe_of(graph, v, 1), dummy))
    return [sorted(step) for step in steps]


def schedule_to_coloring(graph, steps) -> dict:
    """Schedule => colouring: the edge of a packet delivered in step c gets colour c.

    Exercise 13.12, the other direction.  ``steps[c]`` lists the transfers
    of step c; the schedule must deliver every packet of ``graph`` exactly
    once, directly, with every PE the ``src`` of at most one transfer and the
    ``dst`` of at most one per step.  Then two edges that meet at s_i are two
    packets PE i sends, hence in different steps, hence of different colours;
    likewise at r_j: the colouring is proper.  The parallel edges of one
    message are interchangeable; the first packet from i to j in step order
    takes the edge of the smallest key.  A ValueError names the step and the
    PE, or the packet, that breaks the rule.

    Parameters
    ----------
    graph : networkx.MultiGraph
        An h-relation's multigraph (:func:`h_relation_multigraph`, maybe
        completed by :func:`pad_to_regular`).
    steps : list of lists of Transfer
        Each transfer ``(src, dst, dummy)``; a dummy transfer stands for an
        edge with ``dummy=True``.

    Returns
    -------
    dict
        ``{(("s", i), ("r", j), key): step}``.

    Examples
    --------
    >>> H = h_relation_multigraph([[0, 2, 0], [0, 0, 1], [1, 0, 0]])
    >>> steps = coloring_schedule([[0, 2, 0], [0, 0, 1], [1, 0, 0]])
    >>> coloring_to_schedule(H, schedule_to_coloring(H, steps)) == steps
    True
    >>> twice = [[Transfer(0, 1), Transfer(0, 1)], [Transfer(1, 2), Transfer(2, 0)]]
    >>> schedule_to_coloring(H, twice)
    Traceback (most recent call last):
    ...
    ValueError: step 1 (colour 0): PE 0 sends two packets, to PE 1 and to PE 1
    """
    free = {}                                     # (i, j, dummy) -> the unused keys, smallest first
    for u, v, key in sorted(_sides(graph), key=lambda e: e[2]):
        dummy = bool(graph.edges[u, v, key].get("dummy", False))
        free.setdefault((_pe_of(graph, u, 0), _pe_of(graph, v, 1), dummy), []).append((u, v, key))
    colouring = {}
    for c, step in enumerate(steps):
        step_partners(step, c)
        for t in (Transfer(*t) for t in step):
            edges = free.get((t.src, t.dst, t.dummy))
            if not edges:
                kind = "dummy packet" if t.dummy else "packet"
                raise ValueError(f"step {c + 1} (colour {c}): the {kind} from PE {t.src} to PE "
                                 f"{t.dst} is not an undelivered edge of the graph (delivered "
                                 f"twice, or never sent)")
            colouring[edges.pop(0)] = c
    left = [edges[0] for edges in free.values() if edges]
    if left:
        raise ValueError(f"the schedule never delivers the packet of edge {left[0]!r} "
                         f"({sum(map(len, free.values()))} packets left)")
    return colouring
