"""The 3-cube in perspective, and paths on it (Gray-code rings, the d paths of a broadcast).

:func:`draw_cube` draws the eight nodes of a 3-dimensional hypercube labelled
with their bits, bit 0 to the right, bit 1 up and bit 2 into the page;
:func:`draw_cube_path` draws a path (or a ring) of nodes on it as arrows
labelled hop by hop, as in Ho and Johnsson's pictures of the CM-200's
broadcast paths.
"""
from __future__ import annotations

import math

from matplotlib.patches import Circle

from ..wording import listing
from .descriptions import describe
from ._drawing import new_axes
from .style import ARROW_COLOUR, FONT, NODE_COLOUR

__all__ = ["draw_cube", "draw_cube_path", "CUBE_POSITIONS"]

#: Where :func:`draw_cube` puts node u of the 3-cube: bit 0 right, bit 1 up, bit 2 into the
#: page (drawn up and to the right, shorter).
CUBE_POSITIONS = {u: (2.0 * (u & 1) + 1.1 * (u >> 2 & 1), 2.0 * (u >> 1 & 1) + 0.9 * (u >> 2 & 1))
                  for u in range(8)}


def draw_cube(*, ax=None, title=None):
    """Draw the 3-cube: its twelve edges in light grey, its nodes labelled ``000`` .. ``111``.

    Parameters
    ----------
    ax : matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        Nodes have gid ``"node"``, edges ``"edge"``; node u is at
        :data:`CUBE_POSITIONS` ``[u]``.

    Examples
    --------
    >>> ax = draw_cube()
    >>> len([ln for ln in ax.get_lines() if ln.get_gid() == "edge"])
    12
    >>> sorted(t.get_text() for t in ax.texts)[:3]
    ['000', '001', '010']
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    ax = new_axes(ax, (4.2, 3.6))
    pos = CUBE_POSITIONS
    for u in range(8):
        for c in range(3):
            v = u ^ (1 << c)
            if u < v:
                ax.plot(*zip(pos[u], pos[v]), color="0.85", lw=1, zorder=0, gid="edge")
    for u, (x, y) in pos.items():
        ax.add_patch(Circle((x, y), 0.26, color=NODE_COLOUR, ec="0.3", zorder=3, gid="node"))
        ax.text(x, y, format(u, "03b"), ha="center", va="center", fontsize=FONT, zorder=4)
    ax.set_aspect("equal")
    ax.axis("off")
    ax.set_xlim(-0.5, 3.6)
    ax.set_ylim(-0.5, 3.4)
    if title is not None:
        ax.set_title(title, fontsize=FONT)
    describe(ax, "The 3-cube: nodes 000 to 111 (bit 0 to the right, bit 1 up, bit 2 into the "
                 "page), an edge between every two nodes one bit apart.")
    return ax


def draw_cube_path(path, *, ax, colour=ARROW_COLOUR, labels=None, closed=False):
    """Draw a path of 3-cube nodes as arrows, each hop labelled on its left.

    Parameters
    ----------
    path : sequence of int
        Nodes 0..7, each a neighbour of the one before (one bit apart).
    ax : matplotlib Axes
        The Axes of a :func:`draw_cube`.
    colour : matplotlib colour
    labels : sequence of str, optional
        One text per hop (e.g. the dimension crossed, or the hop's number).
    closed : bool
        Also draw the hop from the last node back to the first (a ring).

    Returns
    -------
    matplotlib.axes.Axes
        One arrow per hop, gid ``"hop"``.

    Examples
    --------
    >>> ax = draw_cube()
    >>> ax = draw_cube_path([0, 1, 3, 2, 6, 7, 5, 4], ax=ax, labels="01020102", closed=True)
    >>> len([a for a in ax.texts if a.get_gid() == "hop"])
    8
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    path = [int(u) for u in path]
    bad = [u for u in path if not 0 <= u < 8]
    if bad:
        raise ValueError(f"a 3-cube has nodes 0..7, got {bad}")
    hops = list(zip(path, path[1:] + path[:1] if closed else path[1:]))
    for u, v in hops:
        if bin(u ^ v).count("1") != 1:
            raise ValueError(f"{u} and {v} are not neighbours in the cube (differ in one bit)")
    labels = [""] * len(hops) if labels is None else list(labels)
    if len(labels) < len(hops):
        raise ValueError(f"{len(hops)} hops need {len(hops)} labels, got {len(labels)}")
    pos = CUBE_POSITIONS
    for (u, v), label in zip(hops, labels):
        (x0, y0), (x1, y1) = pos[u], pos[v]
        length = math.hypot(x1 - x0, y1 - y0)
        nx, ny = -(y1 - y0) / length, (x1 - x0) / length       # to the left of the arrow
        ax.annotate("", xy=(x1 + 0.08 * nx, y1 + 0.08 * ny), gid="hop",
                    xytext=(x0 + 0.08 * nx, y0 + 0.08 * ny), zorder=2,
                    arrowprops=dict(arrowstyle="-|>", color=colour, lw=2, shrinkA=11,
                                    shrinkB=11))
        ax.text(0.65 * x0 + 0.35 * x1 + 0.3 * nx, 0.65 * y0 + 0.35 * y1 + 0.3 * ny, label,
                color=colour, fontsize=FONT, ha="center", va="center", zorder=5)
    describe(ax, _path_text(path, closed, labels[:len(hops)]), append=True)
    return ax


def _path_text(path, closed, labels) -> str:
    """'A ring 000 -> 001 -> ... -> 000, hops labelled 0, 1, ...'."""
    nodes = [format(u, "03b") for u in path] + ([format(path[0], "03b")] if closed else [])
    text = f"{'A ring' if closed else 'A path'} along arrows: {' -> '.join(nodes)}"
    if any(str(label) for label in labels):
        text += f", hops labelled {listing(labels, 8)}"
    return text + "."
