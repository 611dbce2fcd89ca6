"""The layer-numbered tree of Sanders Exercise 13.4: a balanced spanning tree for any root."""
import pytest

from collective_lib.embeddings import tree_depth
from collective_lib.trees import ceil_log2, heap_height, heap_node, heap_tree, tree_height


def cases():
    for p in range(1, 201):
        roots = range(p) if p <= 40 else sorted({0, 1 % p, p // 2, p - 1})
        for root in roots:
            yield p, root


def test_every_root_gives_a_balanced_spanning_tree_numbered_layer_by_layer():
    for p, root in cases():
        tree = heap_tree(p, root)
        parent = tuple(node.parent for node in tree)
        height = tree_depth(parent)                      # raises unless a binary spanning tree
        assert height == heap_height(p) == ceil_log2(p + 1) - 1, (p, root)
        assert height <= tree_height(p, root), (p, root)  # never deeper than the in-order tree
        # breadth-first, left before right, visits the ranks root, root+1, ... (mod p)
        order, level = [], [root]
        while level:
            order += level
            level = [c for v in level for c in (tree[v].left, tree[v].right) if c is not None]
        assert order == [(root + i) % p for i in range(p)], (p, root)
        for v, node in enumerate(tree):
            for c in (node.left, node.right):
                if c is not None:
                    assert tree[c].parent == v and tree[c].depth == node.depth + 1
            kids = [tree[c].size for c in (node.left, node.right) if c is not None]
            assert node.size == 1 + sum(kids), (p, root, v)


def test_heights_of_both_numberings_for_small_p():
    # layer by layer: floor(log2 p) for every root; in order: up to ceil(log2 p)
    assert [heap_height(p) for p in range(1, 10)] == [0, 1, 1, 2, 2, 2, 2, 3, 3]
    assert max(tree_height(7, r) for r in range(7)) == 3 > heap_height(7) == 2


def test_subtrees_are_not_ranges_of_ranks():
    # what the in-order tree has and this one lacks: PE 1's subtree for p = 12, root 0
    tree = heap_tree(12, 0)
    below, todo = [], [1]
    while todo:
        v = todo.pop()
        below.append(v)
        todo += [c for c in (tree[v].left, tree[v].right) if c is not None]
    assert sorted(below) == [1, 3, 4, 7, 8, 9, 10]


@pytest.mark.parametrize("args, word", [((0, 0, 0), "p"), ((0, 5, 5), "root"),
                                        ((7, 5, 0), "me"), ((0, 5, -1), "root")])
def test_bad_arguments_are_named(args, word):
    with pytest.raises(ValueError, match=word):
        heap_node(*args)
