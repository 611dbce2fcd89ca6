"""Colours, sizes and fonts shared by every picture of :mod:`collective_lib.viz`.

One place for the look of the book's figures: change a colour here and every
drawing follows.
"""
from __future__ import annotations

import matplotlib
import numpy as np
from matplotlib.colors import ListedColormap

__all__ = ["LINK_COLOUR", "ARROW_COLOUR", "HOLDER_COLOUR", "TREE_EDGE_COLOUR", "NODE_COLOUR",
           "LINE_STYLES", "SECTION_COLOURS", "OVERSUBSCRIBED_COLOUR", "MAX_DRAWN_CLIQUE",
           "MAX_LABELLED"]

#: Links of a network (light grey, behind everything else).
LINK_COLOUR = "#c8c8c8"
#: Transfers, receivers, cursors and point-to-point waits.
ARROW_COLOUR = "#c0392b"
#: PEs that hold the data.
HOLDER_COLOUR = "#2e5d8c"
#: Edges of the trees drawn by :mod:`~collective_lib.viz.trees`.
TREE_EDGE_COLOUR = "0.6"
#: Fill of the nodes of a cube (:mod:`~collective_lib.viz.cubes`).
NODE_COLOUR = "#dbe7f3"
#: Dash patterns cycled through by curves that may coincide.
LINE_STYLES = ("-", "--", "-.", ":")
#: Background bands of the sections of a shared-memory run: critical section, readers.
SECTION_COLOURS = {"cs": "#f4d03f", "read": "#abebc6"}
#: Background of a measurement whose job had more processes than cores.
OVERSUBSCRIBED_COLOUR = "#ececec"
#: Above this many PEs a fully connected network is drawn without its links.
MAX_DRAWN_CLIQUE = 8
#: Above this many PEs node numbers and arrow labels are left out by default.
MAX_LABELLED = 32


def _font_size(p: int) -> float:
    """Font size of the PE numbers for p PEs (0: too many to label)."""
    if p > MAX_LABELLED:
        return 0.0
    return 9.0 if p <= 8 else 8.0 if p <= 16 else 6.5


def _new_axes(ax, figsize):
    """``ax`` itself, or the Axes of a new pyplot figure of ``figsize`` inches."""
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt      # only here: pyplot makes a notebook show the figure
    return plt.subplots(figsize=figsize)[1]


def _load_colours():
    """The colour map of link loads."""
    base = matplotlib.colormaps["YlOrRd"]
    # Drop the palest yellows: a link with load 1 must stay visible on white.
    return ListedColormap(base(np.linspace(0.3, 1.0, 256)), name="link_load")
