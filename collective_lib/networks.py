"""Interconnection networks: who is wired to whom, and how a message is routed.

A network maps a transfer from ``src`` to ``dst`` to the directed links it
crosses (:meth:`Network.path`).  The simulator lets one transfer at a time use
a directed link, so two messages routed over the same link in the same
direction are serialized: this is how contention (Grama Fig. 4.12) shows up.

Each directed link also has an integer id in ``range(network.link_count)``
(:meth:`Network.link_id`, :meth:`Network.link_pair`), computed from its ends:
the simulator keeps the state of the links in flat lists indexed by these ids
and routes as tuples of ids (:meth:`Network.link_ids`).

PEs of a mesh are numbered row by row: PE ``r * cols + c`` sits in row ``r``,
column ``c``.  A :class:`TwoLevel` network groups the PEs into nodes; its links
between nodes run from a node's network interface to a switch, vertices
numbered after the PEs.
"""
from __future__ import annotations

import math
from functools import lru_cache

__all__ = ["Network", "FullyConnected", "Ring", "LinearArray", "Mesh", "Hypercube", "TwoLevel",
           "ROUTE_CACHE_SIZE"]

#: Routes each network keeps, least recently used dropped first.  Enough for every
#: neighbour route of a 2048-PE machine; an all-to-all on a large torus (a million
#: distinct routes, each a tuple of links) would otherwise keep gigabytes alive.
ROUTE_CACHE_SIZE = 4096


def _check_count(name: str, value, least: int = 1) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
    return value


def _bounded_cache(walk):
    """``walk(src, dst)`` memoized for the last :data:`ROUTE_CACHE_SIZE` routes."""
    return lru_cache(maxsize=ROUTE_CACHE_SIZE)(walk)


class Network:
    """Base class: ``p`` PEs, directed links, and a routing function."""

    p: int
    #: True when every pair of PEs is joined by a link of its own.
    direct = False

    def __init__(self):
        self._route = _bounded_cache(self._walk)

    def path(self, src: int, dst: int) -> tuple:
        """The directed links ``(u, v)`` a message from ``src`` to ``dst`` crosses."""
        return self._route(src, dst)

    def _walk(self, src, dst):
        return tuple(map(self.link_pair, self.link_ids(src, dst)))

    def link_pairs(self) -> list:
        """Every link's ``(u, v)`` at its id (see :meth:`link_id`), None at ids that
        name no link: read by index, where a dict would compare keys.

        >>> pairs = Hypercube(3).link_pairs()
        >>> pairs[Hypercube(3).link_id(5, 7)], len(pairs)
        ((5, 7), 24)
        """
        pairs, link_id = [None] * self.link_count, self.link_id
        for pair in self.links():
            pairs[link_id(*pair)] = pair
        return pairs

    def link_ids(self, src: int, dst: int) -> tuple:
        """The links of ``path(src, dst)`` as integer ids (see :meth:`link_id`), computed
        afresh on each call: the simulator keeps the routes it uses."""
        raise NotImplementedError

    @property
    def link_count(self) -> int:
        """Link ids lie in ``range(link_count)`` (some ids may name no link)."""
        raise NotImplementedError

    def link_id(self, u: int, v: int) -> int:
        """The integer id of the directed link ``(u, v)``; :meth:`link_pair` inverts it."""
        raise NotImplementedError

    def link_pair(self, link: int) -> tuple:
        """The directed link ``(u, v)`` whose id is ``link``."""
        raise NotImplementedError

    def hops(self, src: int, dst: int) -> int:
        """Number of links between ``src`` and ``dst`` on the routed path."""
        return len(self.path(src, dst))

    def links(self) -> list:
        """Every directed link ``(u, v)`` of the network."""
        raise NotImplementedError

    def positions(self) -> dict:
        """Drawing coordinates ``{pe: (x, y)}`` for the pictures in ``viz``."""
        return {i: (math.cos(2 * math.pi * i / self.p), math.sin(2 * math.pi * i / self.p))
                for i in range(self.p)}

    def __eq__(self, other):
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self):
        return hash((type(self).__name__, self._key()))

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(map(repr, self._key()))})"


class FullyConnected(Network):
    """Every PE has a link to every other PE; no contention between pairs.

    >>> FullyConnected(4).path(0, 3)
    ((0, 3),)
    >>> FullyConnected(4).link_ids(0, 3)
    (3,)
    """
    direct = True

    def __init__(self, p: int):
        self.p = _check_count("p", p)
        super().__init__()          # the cache only lets traced messages share paths

    def _key(self):
        return (self.p,)

    def _walk(self, src, dst):
        return ((src, dst),)

    def link_ids(self, src, dst):
        return (src * self.p + dst,)

    @property
    def link_count(self):
        return self.p * self.p

    def link_id(self, u, v):
        return u * self.p + v

    def link_pair(self, link):
        return divmod(link, self.p)

    def links(self):
        return [(u, v) for u in range(self.p) for v in range(self.p) if u != v]


class LinearArray(Network):
    """PEs ``0 .. p-1`` in a line with bidirectional links between neighbours.

    >>> LinearArray(8).path(1, 4)
    ((1, 2), (2, 3), (3, 4))
    """

    def __init__(self, p: int):
        self.p = _check_count("p", p)
        super().__init__()

    def _key(self):
        return (self.p,)

    def link_ids(self, src, dst):
        if dst > src:
            return tuple(range(2 * src, 2 * dst, 2))
        return tuple(range(2 * src + 1, 2 * dst + 1, -2))

    @property
    def link_count(self):
        return 2 * self.p

    def link_id(self, u, v):
        return 2 * u + (v < u)                 # even: rightwards, odd: leftwards

    def link_pair(self, link):
        u = link >> 1
        return (u, u - 1 if link & 1 else u + 1)

    def links(self):
        return [(u, u + 1) for u in range(self.p - 1)] + [(u + 1, u) for u in range(self.p - 1)]

    def positions(self):
        return {i: (float(i), 0.0) for i in range(self.p)}


class Ring(Network):
    """A linear array with a wrap-around link; messages take the shorter way.

    When both ways are equally long (p even, distance p/2) the message goes
    the increasing way, so routing is deterministic.

    >>> Ring(8).path(6, 1)
    ((6, 7), (7, 0), (0, 1))
    """

    def __init__(self, p: int):
        self.p = _check_count("p", p)
        super().__init__()

    def _key(self):
        return (self.p,)

    def link_ids(self, src, dst):
        p = self.p
        forward = (dst - src) % p
        if forward <= p - forward:
            return tuple(2 * (u % p) for u in range(src, src + forward))
        return tuple(2 * (u % p) + 1 for u in range(src, src - (p - forward), -1))

    @property
    def link_count(self):
        return 2 * self.p

    def link_id(self, u, v):
        return 2 * u + (v != (u + 1) % self.p)  # even: increasing way, odd: decreasing

    def link_pair(self, link):
        u = link >> 1
        return (u, (u - 1 if link & 1 else u + 1) % self.p)

    def links(self):
        if self.p == 1:
            return []
        if self.p == 2:
            return [(0, 1), (1, 0)]
        return [(u, (u + 1) % self.p) for u in range(self.p)] + \
               [((u + 1) % self.p, u) for u in range(self.p)]


class Mesh(Network):
    """A ``rows x cols`` mesh, with wrap-around links when ``wrap=True`` (a torus).

    Messages use XY routing: first along the row to the target column, then
    along the column (Grama §2.6).  With wrap-around each dimension takes its
    shorter way, the increasing one on a tie.

    >>> Mesh(3, 3).path(0, 8)
    ((0, 1), (1, 2), (2, 5), (5, 8))
    """

    def __init__(self, rows: int, cols: int, wrap: bool = False):
        self.rows = _check_count("rows", rows)
        self.cols = _check_count("cols", cols)
        if not isinstance(wrap, bool):
            raise ValueError(f"wrap must be True or False, got {wrap!r}")
        self.wrap = wrap
        self.p = rows * cols
        super().__init__()

    def _key(self):
        return (self.rows, self.cols, self.wrap)

    def _step(self, a, b, size):
        """+1 or -1: the way from coordinate a to b in one dimension."""
        if self.wrap:
            forward = (b - a) % size
            return 1 if forward <= size - forward else -1
        return 1 if b >= a else -1

    def link_ids(self, src, dst):
        cols, rows = self.cols, self.rows
        (r0, c0), (r1, c1) = divmod(src, cols), divmod(dst, cols)
        ids = []
        step = self._step(c0, c1, cols)
        while c0 != c1:                        # along the row: directions 0 and 1
            ids.append(4 * (r0 * cols + c0) + (step < 0))
            c0 = (c0 + step) % cols
        step = self._step(r0, r1, rows)
        while r0 != r1:                        # down or up the column: 2 and 3
            ids.append(4 * (r0 * cols + c1) + 2 + (step < 0))
            r0 = (r0 + step) % rows
        return tuple(ids)

    def _ahead(self, a, size):
        """The coordinate after ``a`` in one dimension (wrapping round on a torus)."""
        return (a + 1) % size if self.wrap else a + 1

    @property
    def link_count(self):
        return 4 * self.p

    def link_id(self, u, v):
        # 4u + direction: 0 along the row ahead, 1 back, 2 down the column, 3 up.
        (r0, c0), (r1, c1) = divmod(u, self.cols), divmod(v, self.cols)
        if r0 == r1:
            return 4 * u + (c1 != self._ahead(c0, self.cols))
        return 4 * u + 2 + (r1 != self._ahead(r0, self.rows))

    def link_pair(self, link):
        u, direction = divmod(link, 4)
        r, c = divmod(u, self.cols)
        if direction == 0:
            c = self._ahead(c, self.cols)
        elif direction == 1:
            c = (c - 1) % self.cols
        elif direction == 2:
            r = self._ahead(r, self.rows)
        else:
            r = (r - 1) % self.rows
        return (u, r * self.cols + c)

    def links(self):
        out = set()
        for u in range(self.p):
            r, c = divmod(u, self.cols)
            for dr, dc in ((0, 1), (1, 0)):
                r2, c2 = r + dr, c + dc
                if self.wrap:
                    r2, c2 = r2 % self.rows, c2 % self.cols
                if r2 < self.rows and c2 < self.cols and (r2, c2) != (r, c):
                    v = r2 * self.cols + c2
                    out.add((u, v))
                    out.add((v, u))
        return sorted(out)

    def positions(self):
        return {i: (float(i % self.cols), -float(i // self.cols)) for i in range(self.p)}


class Hypercube(Network):
    """A ``d``-dimensional hypercube of ``2**d`` PEs with E-cube routing.

    PEs are linked when their numbers differ in one bit.  E-cube routing fixes
    the differing bits from the least significant upwards (Grama §4.5.3).
    ``Hypercube.of_size(p)`` builds one from ``p`` and rejects a ``p`` that is
    not a power of two.

    >>> Hypercube(3).path(0, 7)
    ((0, 1), (1, 3), (3, 7))
    """

    def __init__(self, d: int):
        self.d = _check_count("d", d, least=0)
        self.p = 1 << d
        super().__init__()

    @classmethod
    def of_size(cls, p: int) -> "Hypercube":
        _check_count("p", p)
        if p & (p - 1):
            raise ValueError(f"a hypercube needs p to be a power of two, got p={p}")
        return cls(p.bit_length() - 1)

    def _key(self):
        return (self.d,)

    def link_ids(self, src, dst):
        diff = src ^ dst
        if not diff & (diff - 1):               # neighbours, as in most programs
            return (src * self.d + diff.bit_length() - 1,) if diff else ()
        ids, u, d = [], src, self.d
        while diff:                             # the lowest differing bit first
            low = diff & -diff
            ids.append(u * d + low.bit_length() - 1)
            u ^= low
            diff ^= low
        return tuple(ids)

    @property
    def link_count(self):
        return self.p * self.d

    def link_id(self, u, v):
        return u * self.d + (u ^ v).bit_length() - 1    # d * u + the dimension crossed

    def link_pair(self, link):
        u, i = divmod(link, self.d)
        return (u, u ^ (1 << i))

    def links(self):
        return [(u, u ^ (1 << i)) for u in range(self.p) for i in range(self.d)]

    def positions(self):
        # Each dimension moves a node by its own vector; dimensions 0 and 1 form a
        # square, 2 and 3 a larger square tilted against it, and so on.
        pos = {}
        for u in range(self.p):
            x = y = 0.0
            for i in range(self.d):
                if u >> i & 1:
                    scale = 1.0 + 1.2 * (i // 2)
                    angle = (i % 2) * math.pi / 2 + (i // 2) * math.pi / 7
                    x += scale * math.cos(angle)
                    y += scale * math.sin(angle)
            pos[u] = (x, y)
        return pos


class TwoLevel(Network):
    """``nodes`` nodes of ``per_node`` PEs each, joined by a switch: a cluster of many-core nodes.

    PE ``r`` lives on node ``r // per_node``.  Inside a node every PE has a link
    of its own to every other PE of the node (fully connected, as through
    shared memory).  Between nodes, each node has one external link pair to a
    switch, the *uplink* (node to switch) and the *downlink* (switch to node);
    the switch itself joins every uplink to every downlink without contention
    (a full crossbar).  A message between nodes crosses two links: the uplink
    of its sender's node and the downlink of its receiver's node.  So every
    transfer leaving a node shares the node's uplink, and every transfer
    entering it the downlink: the simulator lets one transfer at a time use
    each, which is where the contention of a node's external link comes from.

    Vertices: PEs ``0 .. p-1``; node ``n``'s network interface
    :meth:`gateway` ``(n) = p + n``; the switch :attr:`switch` ``= p + nodes``.
    A route inside a node has one hop, a route between nodes two; a
    :class:`~collective_lib.model.TwoLevelModel` gives the two levels their own
    ``ts``, ``tw`` and port model (:meth:`level` says which applies).

    Parameters
    ----------
    nodes : int
        Number of nodes (at least 1).
    per_node : int
        PEs in each node (at least 1).

    Examples
    --------
    >>> net = TwoLevel(nodes=3, per_node=4)
    >>> net.p, net.node_of(5), net.level(4, 7), net.level(3, 4)
    (12, 1, 0, 1)
    >>> net.path(4, 7)
    ((4, 7),)
    >>> net.path(1, 9)          # uplink of node 0, downlink of node 2
    ((12, 15), (15, 14))
    """

    def __init__(self, nodes: int, per_node: int):
        self.nodes = _check_count("nodes", nodes)
        self.per_node = _check_count("per_node", per_node)
        self.p = nodes * per_node
        self.switch = self.p + nodes
        self._external = self.p * per_node         # ids below: links inside the nodes
        super().__init__()

    @classmethod
    def of_size(cls, p: int, per_node: int) -> "TwoLevel":
        """The two-level network of ``p`` PEs in nodes of ``per_node``; p must be a multiple."""
        _check_count("p", p)
        _check_count("per_node", per_node)
        if p % per_node:
            raise ValueError(f"a two-level network of nodes of per_node={per_node} PEs needs p "
                             f"to be a multiple of {per_node}, got p={p}")
        return cls(p // per_node, per_node)

    def _key(self):
        return (self.nodes, self.per_node)

    def node_of(self, pe: int) -> int:
        """The node PE ``pe`` lives on."""
        return pe // self.per_node

    def level(self, src: int, dst: int) -> int:
        """0 for a transfer inside a node, 1 for one between nodes."""
        return int(src // self.per_node != dst // self.per_node)

    def gateway(self, node: int) -> int:
        """The vertex of node ``node``'s network interface, where its external links start."""
        return self.p + node

    def link_ids(self, src, dst):
        per_node = self.per_node
        a, b = src // per_node, dst // per_node
        if a == b:
            return (src * per_node + dst - b * per_node,)
        return (self._external + 2 * a, self._external + 2 * b + 1)

    @property
    def link_count(self):
        return self._external + 2 * self.nodes

    def link_id(self, u, v):
        # u * per_node + v's place in its node; then 2 per node: uplink, downlink.
        if v == self.switch:
            return self._external + 2 * (u - self.p)
        if u == self.switch:
            return self._external + 2 * (v - self.p) + 1
        return u * self.per_node + v % self.per_node

    def link_pair(self, link):
        if link < self._external:
            u, j = divmod(link, self.per_node)
            return (u, u - u % self.per_node + j)
        node, down = divmod(link - self._external, 2)
        return (self.switch, self.p + node) if down else (self.p + node, self.switch)

    def links(self):
        inside = [(u, v) for u in range(self.p) for v in range(self.p)
                  if u != v and u // self.per_node == v // self.per_node]
        if self.nodes == 1:
            return inside
        return inside + [pair for node in range(self.nodes) for pair in (
            (self.p + node, self.switch), (self.switch, self.p + node))]

    def positions(self):
        # Each node a row of its PEs, the nodes side by side with a gap between them.
        return {pe: (float(pe + pe // self.per_node), 0.0) for pe in range(self.p)}
