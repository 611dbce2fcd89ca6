"""Pictures of the layer-numbered tree and of trees embedded into meshes."""
from collective_lib import viz
from collective_lib.embeddings import h_tree, layered_tree, link_usage
from collective_lib.networks import Mesh
from collective_lib.trees import heap_tree


def by_gid(ax, gid):
    return [a for a in list(ax.texts) + list(ax.lines) + list(ax.collections)
            if a.get_gid() == gid]


def test_heap_tree_draws_each_layer_one_level_down():
    for p, root in [(1, 0), (12, 0), (12, 5), (31, 30)]:
        ax = viz.draw_heap_tree(p, root)
        tree = heap_tree(p, root)
        edges = by_gid(ax, "edge")
        assert len(edges) == p - 1
        levels = sorted(tuple(line.get_ydata()) for line in edges)
        assert levels == sorted((-float(tree[tree[c].parent].depth), -float(tree[c].depth))
                                for c in range(p) if tree[c].parent is not None)


def test_mesh_tree_draws_every_edge_and_marks_shared_connections():
    for parent, rows, cols in [(h_tree(8), 8, 8), (layered_tree(3), 3, 8), (h_tree(2), 2, 2)]:
        ax = viz.draw_mesh_tree(parent, rows, cols)
        assert len(by_gid(ax, "edge")) == rows * cols - 1
        shared = sorted(n for n in link_usage(parent, Mesh(rows, cols)).values() if n >= 2)
        assert sorted(int(t.get_text()) for t in by_gid(ax, "usage")) == shared
        r, c = divmod(parent.index(None), cols)
        assert [tuple(o) for o in by_gid(ax, "root")[0].get_offsets()] == [(c, -r)]
