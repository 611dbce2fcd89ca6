"""Tree topologies shared by broadcast, reduction and prefix sums.

* The binomial tree of Sanders §13.1.1 (Fig. 13.2, Fig. 13.3).
* The in-order, perfectly balanced binary tree built by ``buildTree`` (Sanders
  §13.1.3, Fig. 13.5), and its golden-ratio variant (§13.1.4).
* The balanced binary tree numbered layer by layer, as a binary heap is
  (Sanders §6.1), for any root (Exercise 13.4).

All functions work on ranks relative to the root where the source does, and
need only O(log p) local work per PE, like the sources' constructions.
"""
from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple

from .validate import check_positive_int

__all__ = ["ceil_log2", "binomial_parent", "binomial_children",
           "InOrderNode", "in_order_node", "in_order_tree", "in_order_depths", "tree_height",
           "GOLDEN_RATIO", "split_point", "HeapNode", "heap_node", "heap_tree", "heap_height"]

GOLDEN_RATIO = (1 + math.sqrt(5)) / 2


def ceil_log2(p: int) -> int:
    """``ceil(log2 p)`` for a positive integer, exactly (no floating point).

    >>> [ceil_log2(p) for p in (1, 2, 3, 4, 5, 1024, 1025)]
    [0, 1, 2, 2, 3, 10, 11]
    """
    return (check_positive_int("p", p) - 1).bit_length()


def binomial_parent(i: int) -> int | None:
    """Parent of relative rank ``i`` in the binomial tree: ``i`` minus its lowest set bit.

    A rank with k trailing zeros hangs below ``i - 2**k`` (Sanders §13.1.1).

    >>> binomial_parent(6), binomial_parent(5), binomial_parent(0) is None
    (4, 4, True)
    """
    return None if i == 0 else i - (i & -i)


def binomial_children(i: int, p: int) -> list:
    """Children of relative rank ``i`` in the binomial tree on ``p`` PEs, largest first.

    A rank with k trailing zeros has the children ``i + 2**j`` for j = k-1 .. 0;
    the root counts as having ``ceil(log2 p)`` trailing zeros.  Children that
    fall outside ``0 .. p-1`` are dropped, which is how the tree for a power of
    two is cut down to any ``p`` (Sanders §13.1.1).

    >>> binomial_children(0, 8), binomial_children(4, 8), binomial_children(0, 5)
    ([4, 2, 1], [6, 5], [4, 2, 1])
    """
    k = ceil_log2(p) if i == 0 else (i & -i).bit_length() - 1
    return [i + (1 << j) for j in range(k - 1, -1, -1) if i + (1 << j) < p]


class InOrderNode(NamedTuple):
    """One PE's view of an in-order binary tree: its neighbours and its range."""
    parent: int | None
    left: int | None
    right: int | None
    first: int          # the PE's subtree covers the ranks first .. last
    last: int


def split_point(a: int, b: int, shape: str) -> int:
    """Where buildTree puts the root of the range a..b (shape "balanced" or "golden").

    >>> split_point(0, 6, "balanced"), split_point(0, 6, "golden")
    (3, 4)
    """
    if shape == "balanced":
        return (a + b + 1) // 2
    # Golden ratio: the left part gets the larger share, 1 : phi to the right,
    # so that the later-served right subtree is the shallower one.
    n = b - a + 1
    return a + min(n - 1, round((n - 1) / GOLDEN_RATIO))


def _check_shape(shape):
    if shape not in ("balanced", "golden"):
        raise ValueError(f"shape must be 'balanced' or 'golden', got {shape!r}")


def in_order_node(me: int, p: int, root: int, shape: str = "balanced") -> InOrderNode:
    """PE ``me``'s place in the in-order binary tree on ``0 .. p-1`` rooted at ``root``.

    Follows ``buildTree`` of Sanders Fig. 13.5: the root of a range ``a..b``
    has the subranges ``a..x-1`` and ``x+1..b`` below it, each rooted in its
    middle (or at its golden-ratio point for ``shape="golden"``).  Only the
    branch of the recursion that contains ``me`` is followed.

    >>> in_order_node(3, 7, root=3)
    InOrderNode(parent=None, left=1, right=5, first=0, last=6)
    >>> in_order_node(5, 7, root=3)
    InOrderNode(parent=3, left=4, right=6, first=4, last=6)
    """
    _check_shape(shape)
    if not 0 <= root < p:
        raise ValueError(f"root must be in 0..{p - 1}, got {root!r}")
    a, b, x, parent = 0, p - 1, root, None
    while True:
        left = split_point(a, x - 1, shape) if a <= x - 1 else None
        right = split_point(x + 1, b, shape) if x + 1 <= b else None
        if me == x:
            return InOrderNode(parent, left, right, a, b)
        parent = x
        if me < x:
            b, x = x - 1, left
        else:
            a, x = x + 1, right


@lru_cache(maxsize=256)
def in_order_tree(p: int, root: int, shape: str = "balanced") -> tuple:
    """``in_order_node`` for every PE, as a tuple indexed by rank."""
    return tuple(in_order_node(me, p, root, shape) for me in range(p))


def in_order_depths(p: int, root: int, shape: str = "balanced") -> list:
    """The depth of every PE in the in-order tree (the root has depth 0), indexed by rank.

    >>> in_order_depths(7, 3)
    [2, 1, 2, 0, 2, 1, 2]
    """
    tree = in_order_tree(p, root, shape)
    depth = {root: 0}
    stack = [root]
    while stack:
        v = stack.pop()
        for c in (tree[v].left, tree[v].right):
            if c is not None:
                depth[c] = depth[v] + 1
                stack.append(c)
    return [depth[v] for v in range(p)]


@lru_cache(maxsize=256)
def tree_height(p: int, root: int, shape: str = "balanced") -> int:
    """Edges on the longest root-to-leaf path of the in-order tree (Sanders' L).

    >>> tree_height(7, 3), tree_height(8, 0)
    (2, 3)
    """
    return max(in_order_depths(p, root, shape))


# -- layer-by-layer (heap) numbering: Sanders Exercise 13.4 ---------------------------------

class HeapNode(NamedTuple):
    """One PE's view of the layer-numbered tree: its neighbours, depth and subtree size."""
    parent: int | None
    left: int | None
    right: int | None
    depth: int          # edges from the root
    size: int           # PEs in the subtree below and including this PE


def heap_node(me: int, p: int, root: int = 0) -> HeapNode:
    """PE ``me``'s place in the balanced binary tree on ``p`` PEs numbered layer by layer.

    Sanders et al. 2019, Exercise 13.4: number the tree "layer by layer as in
    Sect. 6.1", the implicit binary heap.  We number from 0: the PE at
    position ``i = (me - root) mod p`` has the children at positions
    ``2i + 1`` and ``2i + 2`` and the parent at ``(i - 1) // 2`` (Sanders §6.1
    numbers from 1: children ``2j`` and ``2j + 1``, so ``j = i + 1``).  Taking
    positions relative to ``root`` puts any PE on top.  Every layer is full
    except the last, which is filled from the left, so the height is
    ``floor(log2 p)`` whatever the root, never more than the in-order tree's.

    Parent, children and depth take O(1) local operations (the depth is the
    bit length of ``i + 1``); the size of the subtree takes O(log p): follow
    the leftmost and rightmost paths down to the last layer.  No communication.

    Examples
    --------
    >>> heap_node(0, 12, root=0)
    HeapNode(parent=None, left=1, right=2, depth=0, size=12)
    >>> heap_node(5, 12, root=0)
    HeapNode(parent=2, left=11, right=None, depth=2, size=2)
    >>> heap_node(9, 12, root=4)              # position 5 of the tree rooted at PE 4
    HeapNode(parent=6, left=3, right=None, depth=2, size=2)
    """
    check_positive_int("p", p)
    if not isinstance(root, int) or isinstance(root, bool) or not 0 <= root < p:
        raise ValueError(f"root must be in 0..{p - 1}, got {root!r}")
    if not isinstance(me, int) or isinstance(me, bool) or not 0 <= me < p:
        raise ValueError(f"me must be in 0..{p - 1}, got {me!r}")
    i = (me - root) % p

    def pe(position):
        return None if position is None or position >= p else (position + root) % p

    parent = None if i == 0 else pe((i - 1) // 2)
    size, first, last = 0, i, i           # positions of this subtree's leftmost/rightmost node
    while first < p:                      # one layer of the subtree per iteration
        size += min(last, p - 1) - first + 1
        first, last = 2 * first + 1, 2 * last + 2
    return HeapNode(parent, pe(2 * i + 1), pe(2 * i + 2), (i + 1).bit_length() - 1, size)


@lru_cache(maxsize=256)
def heap_tree(p: int, root: int = 0) -> tuple:
    """``heap_node`` for every PE, as a tuple indexed by rank."""
    return tuple(heap_node(me, p, root) for me in range(p))


def heap_height(p: int) -> int:
    """Edges on the longest root-to-leaf path of the layer-numbered tree: ``floor(log2 p)``.

    The same for every root; it equals ``ceil(log2(p + 1)) - 1``, the least
    height of any binary tree on ``p`` nodes.

    >>> [heap_height(p) for p in (1, 2, 3, 7, 8, 12)]
    [0, 1, 1, 2, 3, 3]
    """
    return check_positive_int("p", p).bit_length() - 1
