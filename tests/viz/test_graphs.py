"""draw_bipartite_multigraph: every packet is an arc, coloured by its step (Sanders §13.6.3)."""
import networkx as nx
import pytest

from collective_lib import viz


def multigraph(sizes):
    """Sanders' H: one edge (("s", i), ("r", j), key) per word from PE i to PE j."""
    graph = nx.MultiGraph()
    p = len(sizes)
    graph.add_nodes_from((("s", i) for i in range(p)), bipartite=0)
    graph.add_nodes_from((("r", j) for j in range(p)), bipartite=1)
    for i in range(p):
        for j in range(p):
            graph.add_edges_from((("s", i), ("r", j), k) for k in range(sizes[i][j]))
    return graph


def greedy_colouring(graph):
    """A proper colouring (not minimal): the smallest colour free at both ends."""
    used, colours = {}, {}
    for u, v, key in graph.edges(keys=True):
        c = 0
        while c in used.get(u, set()) or c in used.get(v, set()):
            c += 1
        colours[(u, v, key)] = c
        used.setdefault(u, set()).add(c)
        used.setdefault(v, set()).add(c)
    return colours


def edges(ax):
    return [a for a in ax.patches if (a.get_gid() or "").startswith("edge:")]


SIZES = [[0, 2, 1], [1, 0, 0], [0, 3, 0]]


def test_one_arc_per_packet_with_its_colour():
    graph = multigraph(SIZES)
    colours = greedy_colouring(graph)
    ax = viz.draw_bipartite_multigraph(graph, colours)
    assert len(edges(ax)) == graph.number_of_edges() == 7
    assert sorted(a.get_gid() for a in edges(ax)) == sorted(f"edge:{c}" for c in colours.values())
    assert len([a for a in ax.patches if a.get_gid() == "node"]) == 6
    labels = sorted(t.get_text() for t in ax.texts)
    assert labels == ["r0", "r1", "r2", "s0", "s1", "s2"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert legend == [f"step {c + 1}" for c in sorted(set(colours.values()))]


def test_parallel_edges_are_bent_apart():
    graph = multigraph([[0, 3], [0, 0]])
    ax = viz.draw_bipartite_multigraph(graph)
    paths = [tuple(map(tuple, a.get_path().vertices.round(3))) for a in edges(ax)]
    assert len(paths) == 3 and len(set(paths)) == 3
    assert {a.get_gid() for a in edges(ax)} == {"edge:none"}


def test_only_highlights_one_step():
    graph = multigraph(SIZES)
    colours = greedy_colouring(graph)
    ax = viz.draw_bipartite_multigraph(graph, colours, only=[0])
    strong = [a for a in edges(ax) if a.get_linewidth() > 1]
    assert len(strong) == sum(c == 0 for c in colours.values())
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["step 1"]


def test_colouring_in_either_orientation():
    graph = multigraph([[0, 1], [0, 0]])
    ax = viz.draw_bipartite_multigraph(graph, {(("r", 1), ("s", 0), 0): 2})
    assert [a.get_gid() for a in edges(ax)] == ["edge:2"]


def test_bad_input_is_named():
    graph = nx.MultiGraph()
    graph.add_node("x")
    with pytest.raises(ValueError, match="'x'"):
        viz.draw_bipartite_multigraph(graph)
    graph = multigraph([[0, 1], [0, 0]])
    with pytest.raises(ValueError, match="no colour"):
        viz.draw_bipartite_multigraph(graph, {})
