"""Trees drawn as the sources draw them: PE i at x = i, one level down per tree edge.

* :func:`draw_in_order_tree` -- the in-order binary tree of Sanders et al. 2019,
  §13.1.3 (Fig. 13.5), with the steps of a pipeline or the values that travel
  up and down written on its edges (Fig. 13.9);
* :func:`draw_binomial_run` -- every message of a run as an arrow on the
  binomial tree of root 0 (Figs. 13.3 and 13.12), labelled with its step.

Nodes are drawn as markers of a fixed size in points, so a tree keeps its look
whatever the width of its Axes.
"""
from __future__ import annotations

from ..trees import in_order_depths, in_order_tree
from .layout import _binomial_positions
from .style import ARROW_COLOUR, HOLDER_COLOUR, TREE_EDGE_COLOUR, _new_axes

__all__ = ["draw_in_order_tree", "draw_binomial_run"]

#: Area of a tree node in points squared (room for a two-digit rank).
_NODE_AREA = 330
_LABEL_BOX = dict(boxstyle="round,pad=0.15", fc="white", ec="none")


def _tree_figsize(p: int, extent: float) -> tuple:
    """About 0.9 inch per PE and 0.55 inch per unit of height, within a page."""
    return (min(9.0, max(3.0, 0.9 * p + 1.0)), 1.4 + 0.55 * extent)


def _draw_tree_nodes(ax, xy: dict, *, filled=(), size=_NODE_AREA) -> None:
    """White circles with the rank inside; ``filled`` PEs dark with a white rank."""
    for v, (x, y) in xy.items():
        dark = v in filled
        ax.scatter([x], [y], s=size, c=HOLDER_COLOUR if dark else "white", edgecolors="0.2",
                   zorder=2, gid="node")
        ax.text(x, y, str(v), ha="center", va="center", fontsize=8, zorder=3,
                color="white" if dark else "black")


def draw_in_order_tree(p, root, *, ax=None, shape="balanced", edge_labels=None, up=None,
                       down=None, below=None, mark_root=True, title=None):
    """Draw the in-order binary tree of p PEs: x = rank, y = minus the depth.

    The tree is :func:`collective_lib.trees.in_order_tree` (Sanders et al.
    2019, §13.1.3): a PE's rank is its position from the left, so the picture
    is Fig. 13.5's.

    Parameters
    ----------
    p, root : int
        Number of PEs and the root.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.
    shape : {"balanced", "golden"}
        As for :func:`~collective_lib.trees.in_order_tree`.
    edge_labels : dict, optional
        ``{(parent, child): text}`` written on the middle of an edge, e.g. the
        steps in which the packets of a pipeline cross it.
    up, down : dict, optional
        ``{child: text}``: the value that travels up the edge to the child's
        parent (blue, left of the edge) and down to the child (red, right of
        it), as in Fig. 13.9.
    below : sequence of str, optional
        A text under every PE (indexed by rank).
    mark_root : bool
        Fill the root's circle.
    title : str, optional
        Default: "p = ..., root = ..., height ...".

    Returns
    -------
    matplotlib.axes.Axes
        Edges have gid ``"edge"``, nodes ``"node"``, the texts on edges
        ``"edge-label"``, ``"up"`` or ``"down"``, the texts under PEs ``"below"``.

    Examples
    --------
    >>> ax = draw_in_order_tree(7, 3, edge_labels={(3, 1): "1, 2"})
    >>> ax.get_title(), len([ln for ln in ax.get_lines() if ln.get_gid() == "edge"])
    ('p = 7, root = 3, height 2', 6)
    >>> [t.get_text() for t in ax.texts if t.get_gid() == "edge-label"]
    ['1, 2']
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    tree, depth = in_order_tree(p, root, shape), in_order_depths(p, root, shape)
    labelled = up is not None or down is not None or below is not None
    spacing = 1.6 if labelled else 1.0           # room for the values on the edges
    y = [-spacing * d for d in depth]
    margin = 0.9 if below is not None else 0.6
    ax = _new_axes(ax, _tree_figsize(p, -min(y) + margin))
    for v in range(p):
        for c in (tree[v].left, tree[v].right):
            if c is None:
                continue
            ax.plot([v, c], [y[v], y[c]], color=TREE_EDGE_COLOUR, lw=1.2, zorder=1, gid="edge")
            xm, ym = (v + c) / 2, (y[v] + y[c]) / 2
            if edge_labels and (v, c) in edge_labels:
                ax.text(xm, ym, edge_labels[(v, c)], fontsize=8, color=ARROW_COLOUR,
                        ha="center", va="center", bbox=_LABEL_BOX, gid="edge-label")
            for text, dx, colour, gid in (((up or {}).get(c), -0.25, HOLDER_COLOUR, "up"),
                                          ((down or {}).get(c), 0.25, ARROW_COLOUR, "down")):
                if text is not None:
                    ax.text(xm + dx, ym, text, fontsize=9, color=colour, ha="center",
                            va="center", bbox=_LABEL_BOX, gid=gid)
    _draw_tree_nodes(ax, dict(enumerate(zip(range(p), y))), filled={root} if mark_root else ())
    if below is not None:
        if len(below) != p:
            raise ValueError(f"below needs one text per PE ({p}), got {len(below)}")
        for v in range(p):
            ax.text(v, y[v] - 0.3, below[v], ha="center", va="top", fontsize=8, zorder=3,
                    gid="below")
    ax.set_xlim(-0.7, p - 0.3)
    ax.set_ylim(min(y) - margin, 0.5 if labelled else 0.6)
    ax.set_axis_off()
    ax.set_title(f"p = {p}, root = {root}, height {max(depth)}" if title is None else title,
                 fontsize=10)
    return ax


def draw_binomial_run(run, *, ax=None, unit=None, title=None):
    """Every message of a run as an arrow on the binomial tree of root 0, labelled by step.

    PE i sits at x = i, one level down per 1 bit of i, so a binomial
    broadcast, reduction, gather or scatter from PE 0 reads top down as in
    Sanders et al. 2019, Figs. 13.3 and 13.12.  Each arrow goes from the
    sender to the receiver and is labelled with its step (:meth:`Run.step`).

    Parameters
    ----------
    run : Run
        A traced run.
    ax : matplotlib Axes, optional
    unit : int, optional
        Words in one message of the source's figure.  When given, a label
        reads "step: length" with the length in those units ("n", "2n", ...)
        and an arrow is wider the longer its message (a gather's messages
        grow towards the root).
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        Arrows have gid ``"message"``, their labels ``"label"``.

    Examples
    --------
    >>> from collective_lib import catalog
    >>> run = catalog()["binomial_gather"].simulate(8, 3)
    >>> ax = draw_binomial_run(run, unit=3)
    >>> sorted(t.get_text() for t in ax.texts if t.get_gid() == "label")[-3:]
    ['2: 2n', '2: 2n', '3: 4n']
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    if not run.messages and run.link_load:
        raise ValueError("the run has no message trace; simulate it with trace=True")
    if unit is not None and (not isinstance(unit, int) or unit < 1):
        raise ValueError(f"unit must be a positive number of words, got {unit!r}")
    starts = run.step_starts()
    xy = {pe: (float(x), float(y)) for pe, (x, y) in enumerate(_binomial_positions(run.p))}
    lowest = min(y for _, y in xy.values())
    ax = _new_axes(ax, _tree_figsize(run.p, -lowest + 0.5))
    for msg in run.messages:
        (x0, y0), (x1, y1) = xy[msg.src], xy[msg.dst]
        step = starts.index(msg.start) + 1
        if unit is None:
            width, shrink, label = 1.4, 10, str(step)
        else:
            size = msg.words // unit
            width, shrink = 0.8 + 0.9 * msg.words / unit, 11
            label = f"{step}: " + ("n" if size == 1 else f"{size}n")
        ax.annotate("", xy=(x1, y1), xytext=(x0, y0), gid="message",
                    arrowprops=dict(arrowstyle="-|>", color=ARROW_COLOUR, lw=width,
                                    shrinkA=shrink, shrinkB=shrink))
        ax.text((x0 + x1) / 2, (y0 + y1) / 2, label, fontsize=8, color=ARROW_COLOUR,
                ha="center", va="center", bbox=_LABEL_BOX, gid="label")
    _draw_tree_nodes(ax, xy, size=_NODE_AREA if unit is None else 360)
    ax.set_xlim(-0.7, run.p - 0.3)
    ax.set_ylim(lowest - 0.5, 0.5)
    ax.set_axis_off()
    if title:
        ax.set_title(title, fontsize=10)
    return ax
