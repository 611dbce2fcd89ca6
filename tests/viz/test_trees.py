"""Trees: nodes sit at x = rank, one level down per edge; labels land on the right edges."""
import pytest

from collective_lib import catalog, viz
from collective_lib.trees import in_order_depths, in_order_node, tree_height


def by_gid(ax, gid):
    return [a for a in list(ax.texts) + list(ax.lines) + list(ax.collections)
            if a.get_gid() == gid]


@pytest.mark.parametrize("p, root", [(1, 0), (7, 3), (12, 0), (12, 8), (31, 15)])
def test_in_order_tree_has_one_edge_per_child_at_the_childs_depth(p, root):
    ax = viz.draw_in_order_tree(p, root)
    edges = by_gid(ax, "edge")
    assert len(edges) == p - 1
    depth = in_order_depths(p, root)
    for line in edges:
        (v, c), (yv, yc) = line.get_xdata(), line.get_ydata()
        assert in_order_node(int(c), p, root).parent == v
        assert (yv, yc) == (-depth[int(v)], -depth[int(c)])
    assert ax.get_title() == f"p = {p}, root = {root}, height {tree_height(p, root)}"
    nodes = by_gid(ax, "node")
    assert len(nodes) == p
    filled = [n for n in nodes if tuple(n.get_facecolor()[0][:3]) != (1.0, 1.0, 1.0)]
    assert [tuple(n.get_offsets()[0]) for n in filled] == [(root, 0.0)]


def test_depths_agree_with_the_tree_and_its_height():
    for p in range(1, 40):
        for root in range(p):
            depth = in_order_depths(p, root)
            assert depth[root] == 0 and max(depth) == tree_height(p, root)
            for v in range(p):
                parent = in_order_node(v, p, root).parent
                assert parent is None or depth[v] == depth[parent] + 1


def test_values_travel_up_left_and_down_right_of_their_edge():
    ax = viz.draw_in_order_tree(7, 3, up={1: "0:2"}, down={5: "0:4"}, below=list("abcdefg"),
                                mark_root=False, title="prefix sums")
    (up,), (down,) = by_gid(ax, "up"), by_gid(ax, "down")
    assert up.get_text() == "0:2" and up.get_position()[0] == pytest.approx((3 + 1) / 2 - 0.25)
    assert down.get_text() == "0:4" and down.get_position()[0] == pytest.approx((3 + 5) / 2 + 0.25)
    assert [t.get_text() for t in by_gid(ax, "below")] == list("abcdefg")
    assert ax.get_title() == "prefix sums"
    assert all(tuple(n.get_facecolor()[0][:3]) == (1.0, 1.0, 1.0) for n in by_gid(ax, "node"))
    with pytest.raises(ValueError, match="one text per PE"):
        viz.draw_in_order_tree(7, 3, below=["a"])


def test_binomial_run_labels_every_message_with_its_step():
    run = catalog()["binomial_broadcast"].simulate(p=8)
    ax = viz.draw_binomial_run(run, title="broadcast")
    assert len(by_gid(ax, "message")) == len(run.messages) == 7
    assert sorted(t.get_text() for t in by_gid(ax, "label")) == ["1", "2", "2", "3", "3", "3", "3"]
    (arrow_to_4,) = [a for a in by_gid(ax, "message") if a.xy == (4.0, -1.0)]
    assert arrow_to_4.xyann == (0.0, 0.0)                     # from PE 0 to PE 4 in step 1
    assert ax.get_title() == "broadcast"


def test_binomial_run_in_units_gives_lengths_and_wider_arrows_for_longer_messages():
    run = catalog()["binomial_gather"].simulate(8, 3)
    ax = viz.draw_binomial_run(run, unit=3)
    assert sorted(t.get_text() for t in by_gid(ax, "label")) == \
        ["1: n", "1: n", "1: n", "1: n", "2: 2n", "2: 2n", "3: 4n"]
    widths = {t.get_text(): a.arrow_patch.get_linewidth()
              for t, a in zip(by_gid(ax, "label"), by_gid(ax, "message"))}
    assert widths["1: n"] < widths["2: 2n"] < widths["3: 4n"]
    with pytest.raises(ValueError, match="unit must be a positive"):
        viz.draw_binomial_run(run, unit=0)
    with pytest.raises(ValueError, match="trace=True"):
        viz.draw_binomial_run(catalog()["binomial_gather"].simulate(8, 3, trace=False))
