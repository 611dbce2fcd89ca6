"""A two-level network: nodes of PEs, each with its external link pair to a switch.

* :func:`draw_two_level` -- the nodes as boxes holding their PEs, the switch as a
  bar, every node's uplink and downlink as arrows between them; with a run's link
  loads, each link drawn by how many transfers crossed it (colour, width and the
  count written beside the external links), so the contention on a node's
  external link shows.
"""
from __future__ import annotations

import math

from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.patches import Circle, FancyArrowPatch, FancyBboxPatch, Rectangle
from matplotlib.ticker import MaxNLocator

from ..model import CostModel, TwoLevelModel
from ..networks import TwoLevel
from ..runs import Run
from ..wording import number, plural
from .descriptions import describe
from ._drawing import load_colour_map, new_axes
from .style import (FONT, LINK_COLOUR, MAX_DRAWN_CLIQUE, MAX_LABELLED, MIN_FONT, NODE_COLOUR,
                    TEXT_WIDTH, TITLE_FONT)

__all__ = ["draw_two_level"]

_RADIUS = 0.3           # a PE's circle, in units of the distance between PEs
_PAD = 0.6              # from a node's outer PEs to its box
_GAP = 0.9              # between boxes
_LINK = 1.5             # from the switch to a box


def _node_grid(per_node: int) -> tuple:
    """(columns, rows) of the PEs in a node's box: at most four to a row."""
    cols = min(per_node, 4)
    return cols, math.ceil(per_node / cols)


def _places(network: TwoLevel) -> tuple:
    """Each PE's centre, each node's box (x, y, width, height) and whether it hangs below
    the switch (y = 0): up to four nodes in one row below it, more in a row above and one
    below."""
    cols, rows = _node_grid(network.per_node)
    width, height = cols - 1 + 2 * _PAD, rows - 1 + 2 * _PAD
    above = network.nodes // 2 if network.nodes > 4 else 0
    pes, boxes = {}, []
    for node in range(network.nodes):
        upper = node < above
        row = list(range(above)) if upper else list(range(above, network.nodes))
        k = row.index(node) - (len(row) - 1) / 2        # centred on x = 0
        x = k * (width + _GAP) - width / 2
        y = _LINK if upper else -_LINK - height
        boxes.append((x, y, width, height, not upper))
        for j in range(network.per_node):
            r, c = divmod(j, cols)
            pes[node * network.per_node + j] = (x + _PAD + c, y + height - _PAD - r)
    return pes, boxes


def _level_lines(model) -> list:
    """['inside a node: ts = 1, tw = 0.1 (full-duplex)', 'between nodes: ...']"""
    def costs(m):
        return f"ts = {number(m.ts)}, tw = {number(m.tw)} ({m.ports})"
    if isinstance(model, TwoLevelModel):
        return [f"inside a node: {costs(model.inside)}", f"between nodes: {costs(model.between)}"]
    return [f"both levels: {costs(model)}, one set of ports per PE"]


def draw_two_level(network, *, link_load=None, model=None, ax=None, title=None):
    """Draw a two-level network: nodes as boxes of PEs, the switch, the external links.

    Each node is a shaded box holding its PEs (numbered circles), linked to each
    other inside the box (light lines, left out above 8 PEs a node).  A bar is
    the switch; each node's uplink (up arrow, on the left) and downlink (down
    arrow, on the right) join its box to the bar.  Given link loads, every link
    is drawn by how many transfers crossed it, in colour and width, and the
    external links carry their count as a number, so the busiest (the node
    whose PEs send most to other nodes) stands out without colour.

    Parameters
    ----------
    network : TwoLevel or Run
        The network, or a run on one (its link loads and model are then drawn).
    link_load : dict, optional
        ``{(u, v): count}`` such as ``Run.link_load``.
    model : TwoLevelModel or CostModel, optional
        Its costs per level are written under the drawing.
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from collective_lib import CostModel, TwoLevel, TwoLevelModel, catalog
    >>> model = TwoLevelModel(inside=CostModel(ts=1), between=CostModel(ts=10))
    >>> run = catalog()["all_to_all_bc_ring"].simulate(8, network=TwoLevel(2, 4), model=model)
    >>> ax = draw_two_level(run)
    >>> sorted(t.get_text() for t in ax.texts if t.get_gid() == "load")
    ['7', '7', '7', '7']
    >>> from collective_lib.viz import description
    >>> print(description(ax.figure))  # doctest: +NORMALIZE_WHITESPACE
    A two-level network, 2 nodes of 4 PEs: the PEs of a node (a box) are all linked; each
    node has an uplink to a switch and a downlink from it. Inside a node: ts = 1, tw = 0
    (full-duplex); between nodes: ts = 10, tw = 0 (full-duplex). Link loads in colour and
    width, external ones also as numbers: 14 transfers went between nodes; the most on one
    link, 7, on node 0's uplink and 3 others.
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    if isinstance(network, Run):
        run = network
        network = run.network
        link_load = run.link_load if link_load is None else link_load
        model = run.model if model is None else model
    if not isinstance(network, TwoLevel):
        raise TypeError(f"draw_two_level draws a TwoLevel network (or a run on one), "
                        f"got {network!r}")
    if model is not None and not isinstance(model, (CostModel, TwoLevelModel)):
        raise TypeError(f"model must be a TwoLevelModel or a CostModel, got {model!r}")
    pes, boxes = _places(network)
    xs = [x for x, _, w, _, _ in boxes] + [x + w for x, _, w, _, _ in boxes]
    ys = [y for _, y, _, _, _ in boxes] + [y + h for _, y, _, h, _ in boxes]
    x0, x1, y0, y1 = min(xs) - 0.4, max(xs) + 0.4, min(ys) - 0.9, max(ys + [0.3] * (network.nodes > 1)) + 0.9
    inch = min(0.7, TEXT_WIDTH / (x1 - x0 + (1.5 if link_load is not None else 0)))
    ax = new_axes(ax, (max(3.0, (x1 - x0) * inch + (1.5 if link_load is not None else 0)),
                       max(2.4, (y1 - y0) * inch + (0.6 if model is not None else 0.3))))
    loads = dict(link_load or {})
    top = max(loads.values(), default=0)
    norm, cmap = Normalize(vmin=0, vmax=max(top, 1)), load_colour_map()

    def style(load):
        if link_load is None or not load:
            return dict(color=LINK_COLOUR if link_load is not None else "#777777", lw=1.0)
        return dict(color=cmap(norm(load)), lw=1.2 + 2.5 * load / norm.vmax)

    font = 9.0 if network.p <= 8 else MIN_FONT
    for node, (x, y, w, h, below) in enumerate(boxes):
        ax.add_patch(FancyBboxPatch((x, y), w, h, boxstyle="round,pad=0,rounding_size=0.25",
                                    facecolor=NODE_COLOUR, edgecolor="#333333", lw=1.0,
                                    zorder=1, gid="box"))
        ax.text(x + w / 2, y - 0.12 if below else y + h + 0.12, f"node {node}",
                ha="center", va="top" if below else "bottom", fontsize=FONT, gid="node-name")
        first = node * network.per_node
        if network.per_node <= MAX_DRAWN_CLIQUE:
            for u in range(first, first + network.per_node):
                for v in range(u + 1, first + network.per_node):
                    load = loads.get((u, v), 0) + loads.get((v, u), 0)
                    (ux, uy), (vx, vy) = pes[u], pes[v]
                    # PEs of a row beyond neighbours: an arc over the PEs between them
                    bend = 0.9 / abs(ux - vx) if uy == vy and abs(ux - vx) > 1 else 0.0
                    ax.add_patch(FancyArrowPatch(pes[u], pes[v], arrowstyle="-", zorder=2,
                                                 connectionstyle=f"arc3,rad={bend}",
                                                 shrinkA=0, shrinkB=0, gid="inside",
                                                 **style(load)))
        if network.nodes > 1:
            edge = y + h if below else y                 # the box's side facing the switch
            for side, (u, v) in ((-1, (network.gateway(node), network.switch)),
                                 (1, (network.switch, network.gateway(node)))):
                lx = x + w / 2 + side * 0.22
                up = side < 0
                ends = ((lx, edge), (lx, -0.25 if below else 0.25))
                start, end = ends if (up == below) else ends[::-1]
                load = loads.get((u, v), 0)
                ax.add_patch(FancyArrowPatch(start, end, arrowstyle="-|>", mutation_scale=10,
                                             zorder=2, gid="external", **style(load)))
                if link_load is not None:
                    ax.text(lx + side * 0.2, (edge + (-0.25 if below else 0.25)) / 2,
                            str(load), ha="right" if up else "left", va="center",
                            fontsize=FONT, gid="load")
    if network.nodes > 1:
        ax.add_patch(Rectangle((min(xs), -0.25), max(xs) - min(xs), 0.5, facecolor="white",
                               edgecolor="#333333", lw=1.2, zorder=3, gid="switch"))
        ax.text(0, 0, "switch", ha="center", va="center", fontsize=FONT, zorder=4)
    for pe, (x, y) in pes.items():
        ax.add_patch(Circle((x, y), _RADIUS, facecolor="white", edgecolor="#333333", lw=1.0,
                            zorder=4, gid="node"))
        if network.p <= MAX_LABELLED:
            ax.text(x, y, str(pe), ha="center", va="center", fontsize=font, zorder=5,
                    gid="node-label")
    if link_load is not None:
        bar = ax.figure.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, shrink=0.8,
                                 pad=0.02)
        bar.set_label("transfers over the link", fontsize=FONT)
        bar.ax.tick_params(labelsize=FONT)
        bar.locator = MaxNLocator(integer=True)
        bar.update_ticks()
    if model is not None:
        ax.text(0.5, 0.0, "\n".join(_level_lines(model)), transform=ax.transAxes,
                ha="center", va="top", fontsize=FONT, gid="levels")
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_aspect("equal", adjustable="box")
    ax.set_axis_off()
    if title:
        ax.set_title(title, fontsize=TITLE_FONT)
    describe(ax, _two_level_text(network, link_load, model))
    return ax


def _two_level_text(network, link_load, model) -> str:
    """What :func:`draw_two_level` drew, from the network, the loads and the model."""
    if network.nodes == 1:
        text = f"A single node of {plural(network.p, 'PE')}, all linked; no link leaves it."
    else:
        text = (f"A two-level network, {network.nodes} nodes of "
                f"{plural(network.per_node, 'PE')}: the PEs of a node (a box) are all linked; "
                f"each node has an uplink to a switch and a downlink from it.")
    if model is not None:
        lines = _level_lines(model)
        text += f" {lines[0][0].upper()}{lines[0][1:]}{'; ' if lines[1:] else ''}" \
            f"{'; '.join(lines[1:])}."
    if link_load is None:
        return text
    used = {link: n for link, n in link_load.items() if n}
    if not used:
        return text + " No transfer crossed any link."
    external = {link: n for link, n in used.items() if network.switch in link}
    if not external:
        inside = max(used.values())
        return text + (f" Link loads in colour and width: no transfer left a node; the "
                       f"busiest link carried {inside}.")
    most = max(external.values())
    busiest = sorted(link for link, n in external.items() if n == most)

    def name(link):
        u, v = link
        return f"node {u - network.p}'s uplink" if v == network.switch else \
            f"node {v - network.p}'s downlink"
    where = name(busiest[0]) + (f" and {plural(len(busiest) - 1, 'other')}"
                                if len(busiest) > 1 else "")
    between = sum(n for (u, v), n in external.items() if v == network.switch)
    return text + (f" Link loads in colour and width, external ones also as numbers: "
                   f"{plural(between, 'transfer')} went between nodes; the most on one link, "
                   f"{most}, on {where}.")
