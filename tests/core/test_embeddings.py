"""Trees embedded into meshes: the H-tree (Fig. 13.6), Exercise 13.7's tree, Exercise 13.6's search."""
import math

import pytest

from collective_lib import CostModel, simulate
from collective_lib.embeddings import (congestion, dilation, embedded_tree_broadcast, h_tree,
                                       layered_tree, link_usage, search_congestion_one_tree,
                                       tree_children, tree_depth)
from collective_lib.networks import Mesh


@pytest.mark.parametrize("side", [1, 2, 4, 8, 16, 32, 64])
def test_h_tree_has_depth_log_p_and_two_edges_per_directed_link(side):
    parent, mesh = h_tree(side), Mesh(side, side)
    p = side * side
    assert tree_depth(parent) == p.bit_length() - 1          # log2 p, the least possible
    assert congestion(parent, mesh, directed=True) <= 2
    assert congestion(parent, mesh) <= 3
    if side >= 8:                                            # the numbers the chapter states
        assert congestion(parent, mesh, directed=True) == 2 and congestion(parent, mesh) == 3
    if side >= 4:
        assert dilation(parent, mesh) == side // 4 + 1
        r, c = divmod(parent.index(None), side)              # the root is next to the centre
        assert {r, c} <= {side // 2 - 1, side // 2}


@pytest.mark.parametrize("k", [1, 2, 3, 4, 5, 6, 7])
def test_layered_tree_has_depth_3k_minus_2_and_one_edge_per_connection(k):
    parent, mesh = layered_tree(k), Mesh(k, 2 ** k)
    assert tree_depth(parent) == 3 * k - 2
    # Chapter 1, §1.10: below three times log p, of p = k 2^k PEs, approaching it as k grows
    assert 3 * k - 2 < 3 * math.log2(k * 2 ** k)
    assert congestion(parent, mesh) == 1
    assert dilation(parent, mesh) == 2 ** (k - 1)
    assert parent.index(None) == (k - 1) * 2 ** k            # bottom-left PE
    for v, u in enumerate(parent):                           # row i spans 2**i or is vertical
        if u is not None:
            (ru, cu), (rv, cv) = divmod(u, 2 ** k), divmod(v, 2 ** k)
            assert (ru == rv and cv - cu == 2 ** ru) or (cu == cv and abs(ru - rv) == 1)


def test_broadcast_along_the_h_tree_loads_links_as_the_embedding_says():
    side, k = 8, 3
    parent, mesh = h_tree(side), Mesh(side, side)
    inputs = [list(range(6)) if up is None else None for up in parent]
    run = simulate(embedded_tree_broadcast, side * side, inputs, network=mesh, parent=parent,
                   k=k, model=CostModel(ts=1, tw=0, ports="half-duplex"))
    assert all(r == list(range(6)) for r in run.results)
    usage = link_usage(parent, mesh, directed=True)
    assert run.link_load == {link: k * n for link, n in usage.items()}


def test_tree_depth_rejects_what_is_not_a_binary_tree():
    with pytest.raises(ValueError, match="exactly one root"):
        tree_depth((None, None, 0))
    with pytest.raises(ValueError, match="PE 0 has 3 children"):
        tree_depth((None, 0, 0, 0))
    with pytest.raises(ValueError, match="cycle"):
        tree_depth((None, 2, 1))
    with pytest.raises(ValueError, match="p = 4"):
        congestion((None, 0), Mesh(2, 2))
    assert tree_children((None, 0, 0, 1)) == ((1, 2), (3,), (), ())


def test_search_finds_congestion_one_trees_of_depth_log_p_on_small_meshes():
    for side in (2, 4):
        depth = (side * side).bit_length() - 1
        parent, exhausted = search_congestion_one_tree(side, side, depth, time_limit=5)
        assert exhausted and tree_depth(parent) <= depth
        assert congestion(parent, Mesh(side, side)) == 1
    assert search_congestion_one_tree(2, 2, 1) == (None, True)   # 3 PEs fit below depth 1


@pytest.mark.parametrize("bad, word", [(dict(side=6), "power of two"), (dict(side=0), "side")])
def test_h_tree_refuses_a_mesh_it_cannot_cover(bad, word):
    with pytest.raises(ValueError, match=word):
        h_tree(**bad)


def test_layered_tree_and_search_name_bad_values():
    with pytest.raises(ValueError, match="k must be"):
        layered_tree(0)
    with pytest.raises(ValueError, match="max_depth"):
        search_congestion_one_tree(2, 2, -1)
    with pytest.raises(ValueError, match="root"):
        search_congestion_one_tree(2, 2, 2, root=4)
