"""Graphs of the book that are not networks: the bipartite multigraph of an h-relation.

Sanders et al. 2019, §13.6.3: node s_i is PE i as a sender, node r_j PE j as a receiver,
and every packet from i to j is an edge (s_i, r_j).  An edge colouring in which no two
edges at a node share a colour is a schedule: the edges of one colour form one step.  :func:`draw_bipartite_multigraph` draws the graph (a step
of it strongly, the rest faintly); :func:`draw_multigraph_steps` one panel per step.
"""
from __future__ import annotations

from matplotlib.lines import Line2D
from matplotlib.patches import Circle, FancyArrowPatch

from ..wording import plural, shorten
from .descriptions import describe
from ._drawing import new_axes
from .style import FONT, TEXT_WIDTH, TITLE_FONT, category_style

__all__ = ["draw_bipartite_multigraph", "draw_multigraph_steps"]


def _edge_colour_of(colouring, u, v, key):
    """The colour of edge (u, v, key) in ``colouring``, stored in either orientation."""
    if (u, v, key) in colouring:
        return colouring[(u, v, key)]
    if (v, u, key) in colouring:
        return colouring[(v, u, key)]
    raise ValueError(f"the colouring has no colour for the edge {(u, v, key)!r}")


def draw_bipartite_multigraph(graph, colouring=None, *, only=None, ax=None, title=None):
    """Draw a bipartite multigraph: side 0 on the left, side 1 on the right, one arc per edge.

    Parallel edges are drawn as arcs bent by different amounts so that each
    shows.  With a colouring, each edge gets its colour's hue and dash
    pattern (:func:`~collective_lib.viz.style.category_style`) and a legend
    names them "step c + 1" (Sanders et al. 2019, §13.6.3: the edges of one
    colour are the packets of one step).

    Parameters
    ----------
    graph : networkx.MultiGraph
        Every node has the attribute ``bipartite`` = 0 or 1 (as from
        :func:`collective_lib.algorithms.hrelation.h_relation_multigraph`).
        A node ``(tag, i)`` is labelled ``tag + str(i)``, e.g. ``s0``.
    colouring : dict, optional
        ``{(u, v, key): colour}``, colours 0, 1, ...; either orientation of
        an edge may be used.  Without it every edge is grey.
    only : iterable of int, optional
        Draw only the edges of these colours (the others faintly), to show
        one step of the schedule.
    ax : matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        The arcs have gid ``"edge:<colour>"`` (``"edge:none"`` without a
        colouring), the nodes gid ``"node"``.

    Examples
    --------
    >>> import networkx as nx
    >>> H = nx.MultiGraph()
    >>> H.add_nodes_from([("s", 0), ("s", 1)], bipartite=0)
    >>> H.add_nodes_from([("r", 0), ("r", 1)], bipartite=1)
    >>> keys = H.add_edges_from([(("s", 0), ("r", 1), 0), (("s", 0), ("r", 1), 1),
    ...                          (("s", 1), ("r", 0), 0)])
    >>> colours = {(("s", 0), ("r", 1), 0): 0, (("s", 0), ("r", 1), 1): 1, (("s", 1), ("r", 0), 0): 0}
    >>> ax = draw_bipartite_multigraph(H, colours)
    >>> sorted(a.get_gid() for a in ax.patches if a.get_gid().startswith("edge"))
    ['edge:0', 'edge:0', 'edge:1']
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    sides = {0: [], 1: []}
    for v, s in graph.nodes(data="bipartite"):
        if s not in (0, 1):
            raise ValueError(f"node {v!r} needs the attribute bipartite = 0 or 1, got {s!r}")
        sides[s].append(v)
    for s in sides:
        sides[s].sort()
    width = 2.4                                 # distance between the two columns
    pos = {v: (width * s, -float(row)) for s in sides for row, v in enumerate(sides[s])}
    rows = max(len(sides[0]), len(sides[1]), 1)
    ax = new_axes(ax, (4.6, 0.5 * rows + 1.0))
    keep = None if only is None else set(only)
    used = set()
    steps = {}                                  # colour -> [(sender, receiver)]
    for u, v, key in graph.edges(keys=True):
        if graph.nodes[u]["bipartite"] == 1:
            u, v = v, u
        colour = None if colouring is None else _edge_colour_of(colouring, u, v, key)
        faint = keep is not None and colour not in keep
        if colour is not None and not faint:
            used.add(colour)
            steps.setdefault(colour, []).append((_node_name(u), _node_name(v)))
        style = category_style(colour) if colour is not None else {"ls": "-", "color": "0.45"}
        # Parallel edges fan out: key 0 straight, then alternately above and below.
        bend = 0.0 if key == 0 else (0.12 * ((key + 1) // 2)) * (1 if key % 2 else -1)
        ax.add_patch(FancyArrowPatch(
            pos[u], pos[v], arrowstyle="-", connectionstyle=f"arc3,rad={bend}",
            shrinkA=12, shrinkB=12, lw=0.6 if faint else 1.8, zorder=1,
            color="0.88" if faint else style["color"], ls="-" if faint else style["ls"],
            gid=f"edge:{'none' if colour is None else colour}"))
    for v, (x, y) in pos.items():
        ax.add_patch(Circle((x, y), 0.2, facecolor="white", edgecolor="0.2", lw=1.0, zorder=2,
                            gid="node"))
        ax.text(x, y, _node_name(v), ha="center", va="center", fontsize=FONT, zorder=3)
    ax.set_xlim(-0.4, width + 0.4)
    ax.set_ylim(-rows + 0.5, 0.6)
    ax.set_aspect("equal")
    ax.set_axis_off()
    if used:
        ax.legend(handles=[Line2D([], [], color=category_style(c)["color"],
                                  ls=category_style(c)["ls"], lw=2, label=f"step {c + 1}")
                           for c in sorted(used)],
                  fontsize=FONT, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    if title:
        ax.set_title(title, fontsize=TITLE_FONT)
    describe(ax, _multigraph_text(sides, graph.number_of_edges(), steps, colouring, keep))
    return ax


def _node_name(v) -> str:
    """``("s", 0)`` as ``s0``; any other node as its text."""
    return f"{v[0]}{v[1]}" if isinstance(v, tuple) and len(v) == 2 else str(v)


def _multigraph_text(sides, edges, steps, colouring, keep) -> str:
    """The two sides, the edges, and the edges of each drawn step."""
    head = (f"A bipartite multigraph: {plural(len(sides[0]), 'node')} on the left, "
            f"{plural(len(sides[1]), 'node')} on the right, {plural(edges, 'edge')}.")
    if colouring is not None:
        count = len(set(colouring.values()))
        head += f" The edges are coloured into {plural(count, 'step')}"
        head += (f"; drawn strongly: step{'s' * (len(keep) > 1)} "
                 f"{', '.join(str(c + 1) for c in sorted(keep))}, the others faint."
                 if keep is not None else ".")
    return shorten([head] + [(f"Step {c + 1}: " + ", ".join(f"{u}-{v}" for u, v in sorted(
        steps[c])) + ".",) for c in sorted(steps)])


def draw_multigraph_steps(graph, colouring, *, cols=3):
    """One panel per colour of ``colouring``: the edges of that step strong, the others faint.

    The schedule of an h-relation step by step (Sanders et al. 2019, §13.6.3),
    ``cols`` panels a row, each titled "step c + 1"; the title says which step
    a panel shows, so the panels need no legend.

    Parameters
    ----------
    graph : networkx.MultiGraph
        As for :func:`draw_bipartite_multigraph`.
    colouring : dict
        ``{(u, v, key): colour}``, colours 0, 1, ...
    cols : int

    Returns
    -------
    matplotlib.figure.Figure
        One Axes per step, in step order.

    Examples
    --------
    >>> import networkx as nx
    >>> H = nx.MultiGraph()
    >>> H.add_nodes_from([("s", 0), ("s", 1)], bipartite=0)
    >>> H.add_nodes_from([("r", 0), ("r", 1)], bipartite=1)
    >>> keys = [H.add_edge(("s", 0), ("r", 1)), H.add_edge(("s", 1), ("r", 0)),
    ...         H.add_edge(("s", 0), ("r", 0))]
    >>> fig = draw_multigraph_steps(H, {(("s", 0), ("r", 1), 0): 0, (("s", 1), ("r", 0), 0): 0,
    ...                                 (("s", 0), ("r", 0), 0): 1})
    >>> [ax.get_title() for ax in fig.axes]
    ['step 1', 'step 2']
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    import matplotlib.pyplot as plt      # only here: pyplot makes a notebook show the figure
    if cols < 1:
        raise ValueError(f"cols must be at least 1, got {cols!r}")
    steps = sorted(set(colouring.values()))
    rows = max(1, -(-len(steps) // cols))
    fig, axes = plt.subplots(rows, cols, figsize=(min(8.0, TEXT_WIDTH), 2.9 * rows),
                             squeeze=False)
    for i, ax in enumerate(axes.flat):
        if i >= len(steps):
            ax.remove()
            continue
        draw_bipartite_multigraph(graph, colouring, only=[steps[i]], ax=ax,
                                  title=f"step {steps[i] + 1}")
        ax.get_legend().remove()
    return fig
