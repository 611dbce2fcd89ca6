"""Trees drawn as the sources draw them: PE i at x = i, one level down per tree edge.

* :func:`draw_in_order_tree` -- the in-order binary tree of Sanders et al. 2019,
  §13.1.3 (Fig. 13.5), with the steps of a pipeline or the values that travel
  up and down written on its edges (Fig. 13.9); :func:`draw_in_order_run` writes
  them there from a run;
* :func:`draw_binomial_run` -- every message of a run as an arrow on the
  binomial tree of root 0 (Figs. 13.3 and 13.12), labelled with its step;
* :func:`draw_heap_tree` -- the tree numbered layer by layer (Exercise 13.4);
* :func:`draw_mesh_tree` -- a tree embedded into a mesh, its edges along their
  XY routes and coloured by level (the H-tree of Fig. 13.6, Exercise 13.7).

Nodes are drawn as markers of a fixed size in points, so a tree keeps its look
whatever the width of its Axes.
"""
from __future__ import annotations

import matplotlib

from ..embeddings import link_usage, tree_children, tree_depth
from ..networks import Mesh
from ..trees import heap_height, heap_tree, in_order_depths, in_order_tree
from ..wording import listing, pairs, plural, shorten
from .descriptions import describe
from ._drawing import binomial_positions, new_axes
from .style import (ARROW_COLOUR, FONT, HOLDER_COLOUR, LINK_COLOUR, MIN_FONT, TITLE_FONT,
                    TREE_EDGE_COLOUR)

__all__ = ["draw_in_order_tree", "draw_in_order_run", "draw_binomial_run", "draw_heap_tree",
           "draw_mesh_tree"]

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
        ax.text(x, y, str(v), ha="center", va="center", fontsize=FONT, zorder=3,
                color="white" if dark else "black")


def _children_text(children: dict, root) -> str:
    """'Children: 3: 1 and 5; 1: 0 and 2.' in breadth-first order from the root."""
    order, parts = [root], []
    for v in order:
        kids = children.get(v, [])
        order.extend(kids)
        if kids:
            parts.append(f"{v}: {listing(kids)}")
    return "Children: " + "; ".join(parts) + "." if parts else "The root has no children."


def _tree_text(what: str, children: dict, root, height: int, extra=()) -> str:
    """The tree, its root and height, its children when they fit, and ``extra`` sentences."""
    p = len(children)
    head = f"{what} of {plural(p, 'PE')}, root {root}, height {height}."
    return shorten([head, (_children_text(children, root),), *[(e,) for e in extra]])


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
    ax = new_axes(ax, _tree_figsize(p, -min(y) + margin))
    for v in range(p):
        for c in (tree[v].left, tree[v].right):
            if c is None:
                continue
            ax.plot([v, c], [y[v], y[c]], color=TREE_EDGE_COLOUR, lw=1.2, zorder=1, gid="edge")
            xm, ym = (v + c) / 2, (y[v] + y[c]) / 2
            if edge_labels and (v, c) in edge_labels:
                ax.text(xm, ym, edge_labels[(v, c)], fontsize=FONT, color=ARROW_COLOUR,
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
            ax.text(v, y[v] - 0.3, below[v], ha="center", va="top", fontsize=FONT, zorder=3,
                    gid="below")
    ax.set_xlim(-0.7, p - 0.3)
    ax.set_ylim(min(y) - margin, 0.5 if labelled else 0.6)
    ax.set_axis_off()
    ax.set_title(f"p = {p}, root = {root}, height {max(depth)}" if title is None else title,
                 fontsize=TITLE_FONT)
    children = {v: [c for c in (tree[v].left, tree[v].right) if c is not None] for v in range(p)}
    extra = []
    if edge_labels:
        extra.append("On the edges: " + "; ".join(f"{a}-{b}: {t}" for (a, b), t in
                                                  sorted(edge_labels.items())) + ".")
    for values, which in ((up, "Up to the parent (left of each edge)"),
                          (down, "Down from the parent (right of each edge)")):
        if values:
            extra.append(f"{which}: " + "; ".join(f"{c}: {t}" for c, t in
                                                   sorted(values.items())) + ".")
    if below is not None:
        extra.append("Under the PEs: " + "; ".join(below) + ".")
    describe(ax, _tree_text("An in-order binary tree (x = rank)", children, root, max(depth),
                            extra))
    return ax


def draw_in_order_run(run, root, *, what="steps", fmt=str, inputs=None, ax=None,
                      title=None):
    """A run on the in-order binary tree of ``run.p`` PEs, its messages written on the edges.

    Reads the run's messages along the tree's edges: with ``what="steps"`` each
    edge carries the steps (:meth:`Run.step`) in which a message crossed it, so
    a pipeline's rhythm shows (Sanders et al. 2019, Fig. 13.4); with
    ``what="values"`` the payload that went up to the parent (left of the edge)
    and the one that came down (right of it), as in Fig. 13.9.

    Parameters
    ----------
    run : Run
        A traced run whose messages follow the in-order tree of ``root``.
    root : int
    what : {"steps", "values"}
    fmt : callable
        Turns a payload into its text (``what="values"``).
    inputs : sequence, optional
        With ``what="values"``: every PE's input, written under it as
        "input -> result" with its result.
    ax : matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        As :func:`draw_in_order_tree` draws it.

    Examples
    --------
    >>> from collective_lib import catalog
    >>> run = catalog()["pipelined_binary_tree_broadcast"].simulate(3, 2, root=1, k=2)
    >>> ax = draw_in_order_run(run, 1)
    >>> sorted(t.get_text() for t in ax.texts if t.get_gid() == "edge-label")
    ['1, 3', '2, 4']
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    if what not in ("steps", "values"):
        raise ValueError(f"what must be 'steps' or 'values', got {what!r}")
    if not run.messages and run.link_load:
        raise ValueError("the run has no message trace; simulate it with trace=True")
    tree = in_order_tree(run.p, root)
    parent = {c: v for v in range(run.p) for c in (tree[v].left, tree[v].right)
              if c is not None}
    if what == "steps":
        steps: dict = {}
        for s in range(1, len(run.step_starts()) + 1):
            for msg in run.step(s):
                steps.setdefault((msg.src, msg.dst), []).append(str(s))
        return draw_in_order_tree(run.p, root, ax=ax, title=title,
                                  edge_labels={e: ", ".join(v) for e, v in steps.items()})
    up = {m.src: fmt(m.payload) for m in run.messages if parent.get(m.src) == m.dst}
    down = {m.dst: fmt(m.payload) for m in run.messages if parent.get(m.dst) == m.src}
    below = (None if inputs is None else
             [f"{fmt(x)} -> {fmt(r)}" for x, r in zip(inputs, run.results)])
    return draw_in_order_tree(run.p, root, ax=ax, up=up, down=down, below=below,
                              mark_root=False, title=title)


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
    xy = {pe: (float(x), float(y)) for pe, (x, y) in enumerate(binomial_positions(run.p))}
    lowest = min(y for _, y in xy.values())
    ax = new_axes(ax, _tree_figsize(run.p, -lowest + 0.5))
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
        ax.text((x0 + x1) / 2, (y0 + y1) / 2, label, fontsize=FONT, color=ARROW_COLOUR,
                ha="center", va="center", bbox=_LABEL_BOX, gid="label")
    _draw_tree_nodes(ax, xy, size=_NODE_AREA if unit is None else 360)
    ax.set_xlim(-0.7, run.p - 0.3)
    ax.set_ylim(lowest - 0.5, 0.5)
    ax.set_axis_off()
    if title:
        ax.set_title(title, fontsize=TITLE_FONT)
    describe(ax, _binomial_run_text(run, unit))
    return ax


def _binomial_run_text(run, unit) -> str:
    """Who sends to whom in each step, and the lengths in units of n."""
    head = (f"The messages of a run on {plural(run.p, 'PE')} drawn on the binomial tree of "
            f"root 0 (x = rank, one level down per 1 bit), each arrow labelled with its step"
            + (f" and its length in units of n = {unit} words." if unit else "."))
    steps = []
    for s in range(1, len(run.step_starts()) + 1):
        messages = run.step(s)
        text = f"Step {s}: {pairs([(m.src, m.dst) for m in messages], run.p)}"
        sizes = sorted({m.words // unit for m in messages}) if unit else []
        if sizes:
            text += ", " + listing([("n" if k == 1 else f"{k}n") for k in sizes]) + " each"
        steps.append((text + ".",))
    return shorten([head] + steps)


def draw_heap_tree(p, root=0, *, ax=None, title=None):
    """Draw the tree numbered layer by layer (:func:`collective_lib.trees.heap_tree`).

    Layer d is drawn at y = -d; within the tree a node's x is its place in an
    in-order walk, so the picture compares directly with
    :func:`draw_in_order_tree`, where x is the rank itself.  The ranks written
    in the circles show that a subtree is not a range of ranks.

    Returns
    -------
    matplotlib.axes.Axes
        Edges have gid ``"edge"``, nodes ``"node"``.

    Examples
    --------
    >>> ax = draw_heap_tree(12)
    >>> ax.get_title(), len([ln for ln in ax.get_lines() if ln.get_gid() == "edge"])
    ('p = 12, root = 0, layer by layer, height 3', 11)
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    tree = heap_tree(p, root)
    x, stack, v = {}, [], root          # in-order walk without recursion
    while stack or v is not None:
        while v is not None:
            stack.append(v)
            v = tree[v].left
        v = stack.pop()
        x[v] = len(x)
        v = tree[v].right
    xy = {v: (float(x[v]), -float(tree[v].depth)) for v in range(p)}
    height = heap_height(p)
    ax = new_axes(ax, _tree_figsize(p, height + 0.6))
    for v in range(p):
        for c in (tree[v].left, tree[v].right):
            if c is not None:
                ax.plot([xy[v][0], xy[c][0]], [xy[v][1], xy[c][1]], color=TREE_EDGE_COLOUR,
                        lw=1.2, zorder=1, gid="edge")
    _draw_tree_nodes(ax, xy, filled={root})
    ax.set_xlim(-0.7, p - 0.3)
    ax.set_ylim(-height - 0.6, 0.6)
    ax.set_axis_off()
    ax.set_title(f"p = {p}, root = {root}, layer by layer, height {height}"
                 if title is None else title, fontsize=TITLE_FONT)
    children = {v: [c for c in (tree[v].left, tree[v].right) if c is not None] for v in range(p)}
    describe(ax, _tree_text("A binary tree numbered layer by layer", children, root, height))
    return ax


def draw_mesh_tree(parent, rows, cols, *, ax=None, title=None, show_usage=True):
    """A tree embedded into a ``rows x cols`` mesh, each edge along its XY route.

    PE ``r * cols + c`` sits in row r, column c.  An edge is drawn from the
    parent along the route a message takes (:class:`~collective_lib.networks.Mesh`)
    and coloured by the depth of its child, darker and thicker the nearer the
    root, so the levels of an H-tree show as nested H's (Sanders et al.
    2019, Fig. 13.6).  Edges that share a
    connection are drawn side by side; with ``show_usage`` the connections
    used by two or more edges carry that number.

    Returns
    -------
    matplotlib.axes.Axes
        Tree edges have gid ``"edge"`` (one line per edge), the root ``"root"``,
        the usage numbers ``"usage"``.

    Examples
    --------
    >>> from collective_lib.embeddings import h_tree
    >>> ax = draw_mesh_tree(h_tree(4), 4, 4)
    >>> len([ln for ln in ax.get_lines() if ln.get_gid() == "edge"])
    15
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    net = Mesh(rows, cols)
    depth_of_tree = tree_depth(parent)          # also checks that parent is a tree
    depth = [0] * net.p
    level = [parent.index(None)]
    children = tree_children(parent)
    while level:
        nxt = [c for v in level for c in children[v]]
        for c in nxt:
            depth[c] = depth[parent[c]] + 1
        level = nxt
    cell = 0.5 if max(rows, cols) > 16 else 0.7
    ax = new_axes(ax, (min(9.0, 1.0 + cell * cols), min(9.0, 1.0 + cell * rows)))
    for u, v in net.links():
        if u < v:
            (ru, cu), (rv, cv) = divmod(u, cols), divmod(v, cols)
            ax.plot([cu, cv], [-ru, -rv], color=LINK_COLOUR, lw=0.8, zorder=0)
    colours = matplotlib.colormaps["viridis"]
    usage = link_usage(parent, net)
    drawn = {}                                   # how many edges already lie on a connection
    for v in range(net.p):
        u = parent[v]
        if u is None:
            continue
        level = (depth[v] - 1) / max(1, depth_of_tree - 1)
        colour = colours(0.9 * level)
        xs, ys = [], []
        for a, b in net.path(u, v):
            key = (min(a, b), max(a, b))
            shift = 0.12 * (drawn.get(key, 0) - (usage[key] - 1) / 2)
            drawn[key] = drawn.get(key, 0) + 1
            (ra, ca), (rb, cb) = divmod(a, cols), divmod(b, cols)
            dx, dy = (0.0, shift) if ra == rb else (shift, 0.0)
            xs += [ca + dx, cb + dx]
            ys += [-ra + dy, -rb + dy]
        ax.plot(xs, ys, color=colour, lw=3.0 - 1.8 * level, solid_capstyle="round", zorder=1,
                gid="edge")
    rc, cc = divmod(parent.index(None), cols)
    ax.scatter([cc], [-rc], s=90, c=HOLDER_COLOUR, zorder=3, gid="root")
    others = [v for v in range(net.p) if parent[v] is not None]
    ax.scatter([v % cols for v in others], [-(v // cols) for v in others], s=14, c="0.25",
               zorder=2)
    if show_usage:
        for (a, b), n in usage.items():
            if n >= 2:
                (ra, ca), (rb, cb) = divmod(a, cols), divmod(b, cols)
                ax.text((ca + cb) / 2, -(ra + rb) / 2, str(n), fontsize=MIN_FONT, ha="center",
                        va="center", color=ARROW_COLOUR, zorder=4, gid="usage",
                        bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none", alpha=0.8))
    ax.set_xlim(-0.6, cols - 0.4)
    ax.set_ylim(-rows + 0.4, 0.6)
    ax.set_aspect("equal")
    ax.set_axis_off()
    ax.set_title(f"{rows} x {cols} mesh, depth {depth_of_tree}" if title is None else title,
                 fontsize=TITLE_FONT)
    describe(ax, _mesh_tree_text(parent, rows, cols, depth_of_tree, usage))
    return ax


def _mesh_tree_text(parent, rows, cols, depth, usage) -> str:
    """The mesh, the root's place, the depth and how many tree edges share a connection."""
    root = parent.index(None)
    r, c = divmod(root, cols)
    text = (f"A tree of {plural(len(parent), 'PE')} on a {rows} x {cols} mesh, root PE {root} "
            f"(row {r}, column {c}), depth {depth}; each edge follows its message's XY route, "
            f"coloured and thickened by level.")
    top = max(usage.values(), default=0)
    if top >= 2:
        shared = sum(1 for n in usage.values() if n >= 2)
        text += (f" {plural(shared, 'mesh connection')} carry two or more tree edges, "
                 f"at most {top}.")
    else:
        text += " No two tree edges share a mesh connection."
    return text
