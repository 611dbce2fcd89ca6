"""The 3-cube: nodes labelled by their bits, paths drawn hop by hop between neighbours."""
import math

import pytest

from collective_lib import viz


def hops(ax):
    return [a for a in ax.texts if a.get_gid() == "hop"]


def test_cube_has_eight_labelled_nodes_and_twelve_edges():
    ax = viz.draw_cube(title="3-cube")
    assert sorted(t.get_text() for t in ax.texts) == [format(u, "03b") for u in range(8)]
    assert len([a for a in ax.patches if a.get_gid() == "node"]) == 8
    edges = [ln for ln in ax.get_lines() if ln.get_gid() == "edge"]
    assert len(edges) == 12
    for line in edges:               # every edge joins two nodes one bit apart
        ends = list(zip(line.get_xdata(), line.get_ydata()))
        u, v = [next(w for w, xy in viz.CUBE_POSITIONS.items() if xy == e) for e in ends]
        assert bin(u ^ v).count("1") == 1
    assert ax.get_title() == "3-cube"


def test_a_ring_closes_and_a_path_does_not():
    ring = [0, 1, 3, 2, 6, 7, 5, 4]
    ax = viz.draw_cube_path(ring, ax=viz.draw_cube(), labels="01020102", closed=True)
    assert len(hops(ax)) == 8
    assert [t.get_text() for t in ax.texts if t.get_gid() is None and len(t.get_text()) == 1] \
        == list("01020102")
    last = hops(ax)[-1]                      # 4 -> 0, drawn 0.08 to the left of the edge
    (x0, y0), (x1, y1) = viz.CUBE_POSITIONS[4], viz.CUBE_POSITIONS[0]
    length = math.hypot(x1 - x0, y1 - y0)
    left = (-(y1 - y0) / length, (x1 - x0) / length)
    assert last.xy == pytest.approx((x1 + 0.08 * left[0], y1 + 0.08 * left[1]))
    assert last.xyann == pytest.approx((x0 + 0.08 * left[0], y0 + 0.08 * left[1]))
    assert len(hops(viz.draw_cube_path(ring, ax=viz.draw_cube()))) == 7


def test_bad_paths_are_named():
    ax = viz.draw_cube()
    with pytest.raises(ValueError, match="0 and 3 are not neighbours"):
        viz.draw_cube_path([0, 3], ax=ax)
    with pytest.raises(ValueError, match=r"nodes 0..7, got \[8\]"):
        viz.draw_cube_path([0, 8], ax=ax)
    with pytest.raises(ValueError, match="2 hops need 2 labels"):
        viz.draw_cube_path([0, 1, 3], ax=ax, labels=["a"])
