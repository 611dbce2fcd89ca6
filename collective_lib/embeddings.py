"""Binary trees embedded into meshes: how many tree edges share one mesh connection.

A tree on the PEs of a mesh is given by its parent table, ``parent[pe]`` (None for
the root).  A tree edge is *embedded* into the mesh path a message between its two
ends takes, the XY route of :class:`~collective_lib.networks.Mesh`, so the numbers
below are the ones a simulated broadcast along the tree meets.

* :func:`h_tree` -- Sanders et al. 2019, §13.1.4, Fig. 13.6: a spanning binary tree
  of a square mesh with ``p = 4**j`` PEs, of depth ``log2 p``;
* :func:`layered_tree` -- Exercise 13.7: a binary tree of depth O(log p) on a
  ``k x 2**k`` mesh that puts one tree edge on each mesh connection at most;
* :func:`tree_depth`, :func:`dilation`, :func:`congestion`, :func:`link_usage` --
  the measures of an embedding;
* :func:`search_congestion_one_tree` -- a bounded search for the research problem
  of Exercise 13.6 on small meshes;
* :func:`embedded_tree_broadcast` -- the pipelined tree broadcast of Sanders
  §13.1.2 along any such tree.
"""
from __future__ import annotations

import time
from collections import Counter
from functools import lru_cache

from .networks import Mesh
from .ops import recv, send
from .packets import join_packets, split_packets
from .validate import check_positive_int, check_root

__all__ = ["h_tree", "layered_tree", "tree_children", "tree_depth", "link_usage", "congestion",
           "dilation", "search_congestion_one_tree", "embedded_tree_broadcast"]


def _power_of_two_side(side):
    if not isinstance(side, int) or isinstance(side, bool) or side < 1 or side & (side - 1):
        raise ValueError(f"side must be a power of two (the mesh has p = side**2 = 4**j PEs), "
                         f"got side={side!r}")
    return side


def _h_tree_order(side):
    """The cells of a side x side mesh in the in-order sequence of the H-tree.

    A region with target cell t (which must come last) is cut in half across its
    longer side.  The half holding t comes second and keeps t; the other half comes
    first, and its target is a cell next to the region's centre, the one away from
    t along the cut.  The last cell of the first half is the region's middle
    element, hence the root of its subtree: every subtree root sits next to the
    centre of its region, as in an H-tree.
    """
    out = []
    stack = [(0, 0, side, side, (0, 0))]          # the whole mesh ends at PE 0
    while stack:
        r0, c0, rows, cols, t = stack.pop()
        if rows * cols == 1:
            out.append(t)
            continue
        if cols >= rows:                           # cut between two columns
            half = cols // 2
            second_right = t[1] >= c0 + half
            first = (r0, c0, rows, half) if second_right else (r0, c0 + half, rows, half)
            second = (r0, c0 + half, rows, half) if second_right else (r0, c0, rows, half)
            col = c0 + half - 1 if second_right else c0 + half
            near = [(r0, col)] if rows == 1 else [(r0 + rows // 2 - 1, col),
                                                  (r0 + rows // 2, col)]
        else:                                      # cut between two rows
            half = rows // 2
            second_low = t[0] >= r0 + half
            first = (r0, c0, half, cols) if second_low else (r0 + half, c0, half, cols)
            second = (r0 + half, c0, half, cols) if second_low else (r0, c0, half, cols)
            row = r0 + half - 1 if second_low else r0 + half
            near = [(row, c0)] if cols == 1 else [(row, c0 + cols // 2 - 1),
                                                  (row, c0 + cols // 2)]
        target = max(near, key=lambda cell: abs(cell[0] - t[0]) + abs(cell[1] - t[1]))
        stack.append((*second, t))                 # popped after the first half
        stack.append((*first, target))
    return out


def h_tree(side: int) -> tuple:
    """Parent table of the H-tree on a ``side x side`` mesh (Sanders et al. 2019, Fig. 13.6).

    The tree is the perfectly balanced in-order tree (Fig. 13.5) on the first
    ``p - 1`` cells of a recursive order of the mesh, plus the last cell hung
    below its predecessor.  The order halves the mesh alternately across columns
    and rows and places the root of every subtree next to the centre of its
    region, so the edges of a level run along the middle lines of the regions of
    that level, as in an H.  Depth ``log2 p``, the least any binary tree on p
    nodes can have (a tree of depth d has at most ``2**(d+1) - 1`` nodes);
    dilation ``side/4 + 1`` for side >= 4.  Routed XY, at most two tree edges
    cross any directed mesh link (three share some links counted in both
    directions); see :func:`congestion`.

    Parameters
    ----------
    side : int
        A power of two; the mesh is ``Mesh(side, side)`` with ``p = side**2``.

    Returns
    -------
    tuple
        ``parent[pe]`` for every PE (row-major numbering), None for the root.

    Examples
    --------
    >>> parent = h_tree(4)
    >>> tree_depth(parent), parent.index(None)
    (4, 10)
    >>> congestion(parent, Mesh(4, 4), directed=True), dilation(parent, Mesh(4, 4))
    (1, 2)
    """
    _power_of_two_side(side)
    order = [r * side + c for r, c in _h_tree_order(side)]
    n = len(order)
    parent = [None] * n
    stack = [(0, n - 2, None)]                     # buildTree on positions 0..n-2
    while stack:
        a, b, above = stack.pop()
        if a > b:
            continue
        x = (a + b) // 2
        parent[order[x]] = None if above is None else order[above]
        stack.append((a, x - 1, x))
        stack.append((x + 1, b, x))
    if n >= 2:
        parent[order[-1]] = order[-2]              # the spare cell, below a leaf
    return tuple(parent)


def layered_tree(k: int) -> tuple:
    """Parent table of a depth-O(log p) tree on a ``k x 2**k`` mesh, one edge per link.

    Sanders et al. 2019, Exercise 13.7, with its hint: row ("layer") ``i`` uses
    horizontal connections spanning ``2**i`` PEs.  The root is the bottom-left
    PE.  Column 0 is a path upwards from the root.  In row ``i`` every PE whose
    column is a multiple of ``2**(i+1)`` has the PE ``2**i`` columns to its
    right as a child.  A column ``c > 0`` is entered in row ``i = tz(c)`` (the
    number of trailing zero bits of c) from column ``c - 2**i``, and from there
    a path runs up and one runs down the column.  Every PE has at most two
    children (a vertical one and a horizontal one, or one up and one down).

    Depth ``3k - 2`` for ``k >= 1``, while ``log2 p = k + log2 k``: the path
    to column ``c`` climbs ``k - 1 - tz(c)`` rows and takes ``popcount(c)``
    horizontal edges, and the column's bottom PE lies ``k - 1 - tz(c)`` rows
    below the entry, which is deepest, ``2(k - 1) + k``, for ``c = 2**k - 1``.  The horizontal
    edges of a row cover disjoint stretches and every vertical edge joins
    neighbours, so each mesh connection carries one tree edge at most.

    Examples
    --------
    >>> parent = layered_tree(3)
    >>> tree_depth(parent), congestion(parent, Mesh(3, 8))
    (7, 1)
    """
    k = check_positive_int("k", k)
    cols = 1 << k
    parent = [None] * (k * cols)

    def pe(r, c):
        return r * cols + c

    for r in range(k):
        for c in range(cols):
            if c == 0:
                parent[pe(r, c)] = pe(r + 1, 0) if r < k - 1 else None
                continue
            entry = (c & -c).bit_length() - 1      # trailing zeros of c
            if r == entry:
                parent[pe(r, c)] = pe(r, c - (1 << entry))
            else:
                parent[pe(r, c)] = pe(r + 1, c) if r < entry else pe(r - 1, c)
    return tuple(parent)


def tree_children(parent) -> tuple:
    """``children[pe]``: the PEs whose parent is ``pe``, in increasing order."""
    return _children(tuple(parent))


@lru_cache(maxsize=16)
def _children(parent: tuple) -> tuple:
    """:func:`tree_children`, computed once per tree (every PE of a broadcast asks)."""
    children = [[] for _ in parent]
    for v, u in enumerate(parent):
        if u is not None:
            children[u].append(v)
    return tuple(tuple(c) for c in children)


def tree_depth(parent) -> int:
    """Edges on the longest root-to-leaf path; checks that ``parent`` is a binary tree.

    Raises ValueError when there is not exactly one root, when a PE has more
    than two children, or when some PE is not below the root (a cycle).

    >>> tree_depth((None, 0, 0, 1))
    2
    """
    roots = [v for v, u in enumerate(parent) if u is None]
    if len(roots) != 1:
        raise ValueError(f"a tree has exactly one root (parent None), got {len(roots)}: {roots}")
    children = tree_children(parent)
    wide = [v for v, c in enumerate(children) if len(c) > 2]
    if wide:
        raise ValueError(f"PE {wide[0]} has {len(children[wide[0]])} children; "
                         "a binary tree allows two")
    depth, level, seen = -1, [roots[0]], 1
    while level:
        depth += 1
        level = [c for v in level for c in children[v]]
        seen += len(level)
    if seen != len(parent):
        raise ValueError(f"only {seen} of {len(parent)} PEs hang below the root "
                         "(the parent table has a cycle)")
    return depth


def _check_fits(parent, network):
    if len(parent) != network.p:
        raise ValueError(f"the parent table has {len(parent)} entries but {network!r} "
                         f"has p = {network.p} PEs")


def link_usage(parent, network, directed=False) -> Counter:
    """How many tree edges are routed over each mesh link.

    With ``directed=False`` a connection between neighbours ``{u, v}`` counts
    the edges routed over it in both directions (keyed ``(min, max)``);
    with ``directed=True`` each directed link ``(u, v)`` counts alone, as the
    simulator's ``Run.link_load`` does.  A tree edge runs from parent to child
    along ``network.path``.
    """
    _check_fits(parent, network)
    usage = Counter()
    for v, u in enumerate(parent):
        if u is None:
            continue
        for a, b in network.path(u, v):
            usage[(a, b) if directed or a < b else (b, a)] += 1
    return usage


def congestion(parent, network, directed=False) -> int:
    """The most tree edges routed over one mesh connection (see :func:`link_usage`).

    >>> congestion((None, 0, 1, 0), Mesh(2, 2))    # edges 0-1, 1-2 and 0-3 all cross 0-1
    3
    """
    return max(link_usage(parent, network, directed).values(), default=0)


def dilation(parent, network) -> int:
    """The longest mesh route of a tree edge, in links.

    >>> dilation((None, 0, 1, 0), Mesh(2, 2))
    2
    """
    _check_fits(parent, network)
    return max((network.hops(u, v) for v, u in enumerate(parent) if u is not None), default=0)


def search_congestion_one_tree(rows: int, cols: int, max_depth: int, *, root: int = 0,
                               time_limit: float = 2.0):
    """Look for a spanning binary tree of depth <= max_depth using each connection once.

    A depth-first search for Sanders et al. 2019, Exercise 13.6 on a small
    ``rows x cols`` mesh: tree nodes are expanded in breadth-first order, each
    choosing none, one or two children among the PEs not yet in the tree whose
    XY routes use no connection used before.  It gives up after ``time_limit``
    seconds.

    Returns
    -------
    (parent, exhausted) : (tuple or None, bool)
        ``parent`` is a tree found, or None; ``exhausted`` tells whether the
        search space was covered (None then proves that no such tree with this
        root exists).

    Examples
    --------
    >>> parent, exhausted = search_congestion_one_tree(2, 2, 2)
    >>> tree_depth(parent), congestion(parent, Mesh(2, 2))
    (2, 1)
    >>> search_congestion_one_tree(2, 2, 1)
    (None, True)
    """
    net = Mesh(check_positive_int("rows", rows), check_positive_int("cols", cols))
    p = net.p
    root = check_root(root, p)
    if not isinstance(max_depth, int) or isinstance(max_depth, bool) or max_depth < 0:
        raise ValueError(f"max_depth must be an integer >= 0, got {max_depth!r}")
    routes = {(u, v): frozenset((a, b) if a < b else (b, a) for a, b in net.path(u, v))
              for u in range(p) for v in range(p) if u != v}
    deadline = time.monotonic() + time_limit
    parent = [None] * p
    depth = [None] * p
    depth[root] = 0
    used = set()
    links = rows * (cols - 1) + cols * (rows - 1)
    queue = [root]                                 # tree nodes in breadth-first order
    timed_out = False

    def room(start):
        """PEs the not yet expanded nodes queue[start:] can still take below them."""
        return sum((1 << (max_depth - depth[v] + 1)) - 2 for v in queue[start:])

    def expand(index, left):
        nonlocal timed_out
        if left == 0:
            return True
        if index == len(queue) or room(index) < left or len(used) + left > links:
            return False
        if time.monotonic() > deadline:
            timed_out = True
            return False
        u = queue[index]
        if depth[u] == max_depth:
            return expand(index + 1, left)
        free = [v for v in range(p) if depth[v] is None and not routes[u, v] & used]
        free.sort(key=lambda v: len(routes[u, v]))
        options = [(a, b) for i, a in enumerate(free) for b in free[i + 1:]
                   if not routes[u, a] & routes[u, b]]
        options += [(a,) for a in free] + [()]
        for kids in options:
            for v in kids:
                parent[v], depth[v] = u, depth[u] + 1
                used.update(routes[u, v])
                queue.append(v)
            if expand(index + 1, left - len(kids)):
                return True
            for v in kids:
                parent[v] = depth[v] = None
                used.difference_update(routes[u, v])
                queue.pop()
            if timed_out:
                return False
        return False

    found = expand(0, p - 1)
    return (tuple(parent) if found else None), found or not timed_out


def embedded_tree_broadcast(me, p, data, parent, k=1):
    """Pipelined broadcast of k packets down the tree given by ``parent``.

    Sanders et al. 2019, §13.1.2, ``Tree::pipelinedBroadcast``: for each packet,
    receive it from the parent, then send it to each child in turn.  The tree
    can be any parent table of p PEs (an :func:`h_tree`, a :func:`layered_tree`);
    on a ``Mesh`` network each transfer follows the XY route, so tree edges
    that share a link also share its time.  The root is the PE whose parent is
    None; its input is the message.

    Examples
    --------
    >>> from collective_lib import CostModel, simulate
    >>> parent = h_tree(4)
    >>> inputs = ["msg" if up is None else None for up in parent]
    >>> run = simulate(embedded_tree_broadcast, 16, inputs, network=Mesh(4, 4),
    ...                parent=parent, model=CostModel(ts=1, tw=0, ports="half-duplex"))
    >>> run.results[0], run.time, run.max_link_load()
    ('msg', 6.0, 1)
    """
    if len(parent) != p:
        raise ValueError(f"parent must have one entry per PE ({p}), got {len(parent)}")
    k = check_positive_int("k", k)
    up = parent[me]
    children = tree_children(parent)[me]
    packets = split_packets(data, k) if up is None else [None] * k
    for i in range(k):
        if up is not None:
            packets[i] = yield recv(up)
        for c in children:
            yield send(c, packets[i])
    return join_packets(packets)
