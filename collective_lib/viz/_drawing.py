"""How the pictures of :mod:`collective_lib.viz` draw: axes, where the PEs go, nodes and links.

Internal to :mod:`collective_lib.viz` (not re-exported, imported by no other package).
:func:`new_axes` gives a drawing its Axes; a :class:`Layout` scales a network's own positions so that neighbours sit
about one unit apart; the helpers here draw links as light lines, PEs as
numbered circles, and give polylines offset to the right of their direction
(so that opposite transfers over one link never overlap).  :mod:`~collective_lib.viz.topology`, :mod:`~collective_lib.viz.memory`
and the tree and cube pictures build on it.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import matplotlib
from matplotlib.collections import LineCollection
from matplotlib.colors import ListedColormap
from matplotlib.patches import Circle, FancyArrowPatch

from ..networks import TwoLevel
from .style import (ARROW_COLOUR, HOLDER_COLOUR, LINK_COLOUR, MAX_DRAWN_CLIQUE, MAX_LABELLED,
                    MIN_FONT, TEXT_WIDTH)

__all__ = ["pe_font_size", "new_axes", "load_colour_map", "Layout", "network_layout",
           "binomial_positions", "layout_figsize", "frame_axes", "draws_links", "draw_links",
           "draw_nodes", "offset_path", "point_along"]


class Layout(NamedTuple):
    xy: np.ndarray      # (p, 2) drawing coordinates, typical neighbour distance 1
    radius: float       # node radius in the same units
    font: float         # node-label font size in points (0: no labels)


def _nearest_distances(xy: np.ndarray) -> np.ndarray:
    """Distance from each point to its nearest other point (in row blocks, to bound memory)."""
    out = np.empty(len(xy))
    for lo in range(0, len(xy), 256):
        block = xy[lo:lo + 256]
        d = np.hypot(block[:, None, 0] - xy[None, :, 0], block[:, None, 1] - xy[None, :, 1])
        d[np.arange(len(block)), np.arange(lo, lo + len(block))] = np.inf
        out[lo:lo + 256] = d.min(axis=1)
    return out


def network_layout(network) -> Layout:
    """Scale the network's own positions so that neighbours sit about one unit apart.

    A :class:`~collective_lib.networks.TwoLevel` network has vertices besides its
    PEs (each node's network interface, the switch), which this layout has no
    place for: it is refused with a pointer to :func:`~collective_lib.viz.draw_two_level`.
    """
    if isinstance(network, TwoLevel):
        raise ValueError(f"{network!r} has a switch and network interfaces besides its PEs, "
                         "which this drawing cannot place; draw it with viz.draw_two_level")
    pos = network.positions()
    xy = np.array([pos[i] for i in range(network.p)], dtype=float).reshape(-1, 2)
    if network.p == 1:
        return Layout(xy, 0.3, pe_font_size(1))
    near = _nearest_distances(xy)
    scale = 1.0 / float(np.median(near))
    return Layout(xy * scale, min(0.3, 0.45 * float(near.min()) * scale), pe_font_size(network.p))


def binomial_positions(p: int) -> np.ndarray:
    """x = rank, y = minus the depth in the binomial tree of root 0 (the number of 1 bits)."""
    return np.array([(i, -bin(i).count("1")) for i in range(p)], dtype=float)


def layout_figsize(lay: Layout, extra_width: float = 0.0) -> tuple:
    """A figure size that keeps about 0.9 inch per unit, within a page."""
    dx, dy = np.ptp(lay.xy, axis=0) + 1.2
    inch = min(0.9, 9.0 / dx, 7.0 / dy)
    return (max(2.8, dx * inch) + extra_width, max(2.4, dy * inch + 0.4))


def frame_axes(ax, lay: Layout) -> None:
    """Equal aspect, no axis lines, and room for the nodes at the border."""
    pad = 0.6
    (x0, y0), (x1, y1) = lay.xy.min(axis=0) - pad, lay.xy.max(axis=0) + pad
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_aspect("equal", adjustable="box")
    ax.set_axis_off()


# -- nodes and links ----------------------------------------------------------------------

def draws_links(network) -> bool:
    return not (getattr(network, "direct", False) and network.p > MAX_DRAWN_CLIQUE)


def _undirected(network) -> list:
    """Each link once, as a sorted pair, in a fixed order."""
    return sorted({(min(u, v), max(u, v)) for u, v in network.links()})


def _crosses_a_node(lay: Layout, u: int, v: int) -> bool:
    """Whether the straight line from u to v passes through another PE's circle."""
    a, b = lay.xy[u], lay.xy[v]
    d = b - a
    t = np.clip((lay.xy - a) @ d / max(float(d @ d), 1e-12), 0.0, 1.0)
    gap = np.hypot(*(lay.xy - (a + t[:, None] * d)).T)
    gap[[u, v]] = np.inf
    return bool(gap.min() < lay.radius)


def draw_links(ax, network, lay: Layout) -> None:
    """Light lines for the links; a link that would run through a PE (wrap-around) curves."""
    if not draws_links(network):
        return
    straight = []
    for u, v in _undirected(network):
        if _crosses_a_node(lay, u, v):
            ax.add_patch(FancyArrowPatch(lay.xy[u], lay.xy[v], arrowstyle="-",
                                         connectionstyle="arc3,rad=0.25", color=LINK_COLOUR,
                                         lw=1.0, zorder=0))
        else:
            straight.append((lay.xy[u], lay.xy[v]))
    ax.add_collection(LineCollection(straight, colors=LINK_COLOUR, linewidths=1.0, zorder=0))


def draw_nodes(ax, lay: Layout, *, filled=(), ringed=(), labels=True) -> None:
    """Circles with the PE numbers; ``filled`` PEs dark, ``ringed`` PEs with a red edge."""
    filled, ringed = set(filled), set(ringed)
    for pe, (x, y) in enumerate(lay.xy):
        dark = pe in filled
        edge = ARROW_COLOUR if pe in ringed else "#333333"
        ax.add_patch(Circle((x, y), lay.radius, facecolor=HOLDER_COLOUR if dark else "white",
                            edgecolor=edge, lw=1.8 if pe in ringed else 1.0, zorder=4,
                            gid="node"))
        if labels and lay.font:
            ax.text(x, y, str(pe), ha="center", va="center", fontsize=lay.font, zorder=5,
                    color="white" if dark else "black", gid="node-label")


def offset_path(points: np.ndarray, offset: float, shrink: float) -> np.ndarray:
    """The polyline through ``points`` moved ``offset`` to the right of its direction.

    Two transfers in opposite directions over the same link thus never overlap.
    Both ends are pulled in by ``shrink`` so that the line stops at the node circles.
    """
    seg = np.diff(points, axis=0)
    seg /= np.maximum(np.hypot(seg[:, 0], seg[:, 1]), 1e-12)[:, None]
    right = np.stack([seg[:, 1], -seg[:, 0]], axis=1)
    normals = np.vstack([right[:1], (right[:-1] + right[1:]) / 2, right[-1:]])
    out = points + offset * normals
    out[0] += shrink * seg[0]
    out[-1] -= shrink * seg[-1]
    return out


def point_along(verts: np.ndarray, fraction: float) -> tuple:
    """The point at ``fraction`` of the polyline's length, and the direction there."""
    seg = np.diff(verts, axis=0)
    lengths = np.hypot(seg[:, 0], seg[:, 1])
    target = fraction * lengths.sum()
    for i, ell in enumerate(lengths):
        if target <= ell or i == len(lengths) - 1:
            t = min(target / ell, 1.0) if ell else 0.0
            return verts[i] + t * seg[i], seg[i] / (ell or 1.0)
        target -= ell


def pe_font_size(p: int) -> float:
    """Font size of the PE numbers for p PEs (0: too many to label)."""
    if p > MAX_LABELLED:
        return 0.0
    return 9.0 if p <= 8 else MIN_FONT


def new_axes(ax, figsize):
    """``ax`` itself, or the Axes of a new pyplot figure of ``figsize`` inches.

    A new figure is never wider than the text column (:data:`TEXT_WIDTH`): a
    wider one would be shrunk, and its text with it.
    """
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt      # only here: pyplot makes a notebook show the figure
    width, height = figsize
    scale = min(1.0, TEXT_WIDTH / width)
    return plt.subplots(figsize=(width * scale, height * scale))[1]


def load_colour_map():
    """The colour map of link loads."""
    base = matplotlib.colormaps["YlOrRd"]
    # Drop the palest yellows: a link with load 1 must stay visible on white.
    return ListedColormap(base(np.linspace(0.3, 1.0, 256)), name="link_load")
