"""Colours, sizes and fonts shared by every picture of :mod:`collective_lib.viz`.

One place for the look of the book's figures: change a colour here and every
drawing follows.  Categorical colours come from the Okabe-Ito palette, which
stays distinct under the common forms of colour blindness, and colour is
never the only carrier: curves also differ in :data:`LINE_STYLES` and
:data:`MARKERS`, filled areas in :data:`HATCHES` (:func:`category_style`).

Figures are readable where the book shows them: a chapter draws at
:data:`BOOK_DPI` dots per inch into a text column :data:`TEXT_COLUMN_PX`
pixels wide, and a wider figure is shrunk to fit.  The default figure sizes
stay within the column and no font is smaller than :data:`MIN_FONT` points,
so no text is shown smaller than :data:`MIN_FONT_PX` pixels;
:func:`smallest_font` measures a figure, and :func:`warn_small_text`, a pyplot
figure hook that the chapters set, holds the figures a chapter draws itself to
the same rule.  :func:`book_figures` is the chapters' set-up of all this.
"""
from __future__ import annotations

import io
import warnings
from typing import NamedTuple

__all__ = ["LINK_COLOUR", "ARROW_COLOUR", "HOLDER_COLOUR", "TREE_EDGE_COLOUR", "NODE_COLOUR",
           "PALETTE", "LINE_STYLES", "MARKERS", "HATCHES", "SECTION_COLOURS",
           "OVERSUBSCRIBED_COLOUR", "MAX_DRAWN_CLIQUE", "MAX_LABELLED", "BOOK_DPI",
           "TEXT_COLUMN_PX", "TEXT_WIDTH", "MIN_FONT", "MIN_FONT_PX", "READABLE_SHARE", "FONT",
           "TITLE_FONT",
           "category_style", "smallest_font", "SmallestFont", "warn_small_text", "book_figures"]

#: Categorical colours (Okabe and Ito, "Color Universal Design", 2008): blue, vermillion,
#: bluish green, orange, reddish purple, sky blue, black, yellow.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#E69F00", "#CC79A7", "#56B4E9", "#000000",
           "#F0E442")
#: Dash patterns of curves, so that curves of equal values (binomial tree and hypercube)
#: and colours a reader cannot tell apart still differ.
LINE_STYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (8, 2)))
#: Marker shapes of curves and point series.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
#: Hatch patterns of filled areas ("" is a plain fill).
HATCHES = ("", "////", "\\\\\\\\", "xxx", "...", "+++", "ooo", "---")

#: Links of a network (light grey, behind everything else).
LINK_COLOUR = "#c8c8c8"
#: Transfers, receivers, cursors and point-to-point waits (vermillion).
ARROW_COLOUR = PALETTE[1]
#: PEs that hold the data (blue).
HOLDER_COLOUR = PALETTE[0]
#: Edges of the trees drawn by :mod:`~collective_lib.viz.trees`.
TREE_EDGE_COLOUR = "0.6"
#: Fill of the nodes of a cube (:mod:`~collective_lib.viz.cubes`).
NODE_COLOUR = "#dbe7f3"
#: Background bands of the sections of a shared-memory run: critical section, readers
#: (the readers' band is also hatched).
SECTION_COLOURS = {"cs": "#f4d03f", "read": "#abebc6"}
#: Background of a measurement whose job had more processes than cores.
OVERSUBSCRIBED_COLOUR = "#ececec"
#: Above this many PEs a fully connected network is drawn without its links.
MAX_DRAWN_CLIQUE = 8
#: Above this many PEs node numbers and arrow labels are left out by default.
MAX_LABELLED = 32

#: CSS pixels per inch of the chapters' figures (:func:`book_figures` sets ``figure.dpi``).
BOOK_DPI = 90
#: Width of the book's text column in CSS pixels (at a window 1366 pixels wide).
TEXT_COLUMN_PX = 757
#: The widest default figure in inches: it fills the column without being shrunk.
TEXT_WIDTH = TEXT_COLUMN_PX / BOOK_DPI
#: The smallest text a reader gets, in pixels once displayed.
MIN_FONT_PX = 9.0
#: The smallest font of any drawing, in points: MIN_FONT_PX at BOOK_DPI, with room for
#: figures a little wider than the column.
MIN_FONT = 8.0
#: The share of a picture's width at which its smallest text (MIN_FONT points, drawn at
#: BOOK_DPI) is shown MIN_FONT_PX high: on a phone no picture is shrunk below it (it
#: scrolls sideways instead; the book's layout.css).
READABLE_SHARE = MIN_FONT_PX / (MIN_FONT * BOOK_DPI / 72)
#: Labels, legends and tick labels.
FONT = 8.5
#: Titles.
TITLE_FONT = 10.0


def category_style(i: int) -> dict:
    """Colour, dash pattern and marker of the i-th category (curve, series, step).

    Any two of the first 24 categories differ in dash pattern or marker, not
    only in colour.

    >>> category_style(0)
    {'color': '#0072B2', 'ls': '-', 'marker': 'o'}
    >>> category_style(9)["marker"], category_style(9)["ls"]
    ('s', ':')
    """
    return {"color": PALETTE[i % len(PALETTE)], "ls": LINE_STYLES[i % len(LINE_STYLES)],
            "marker": MARKERS[i % len(MARKERS)]}


class SmallestFont(NamedTuple):
    """What :func:`smallest_font` found: the text shown smallest and its size."""
    px: float           # displayed size in pixels
    text: str           # the text itself
    points: float       # its font size in points
    shrink: float       # the figure's scale in the column (1: not shrunk)


def smallest_font(fig, *, dpi: float = BOOK_DPI, column: float = TEXT_COLUMN_PX):
    """The smallest text of ``fig`` as the book shows it (None when the figure has no text).

    The figure is saved as a notebook shows it (PNG at ``dpi``, cropped to what
    is drawn); an image wider than ``column`` pixels is scaled down to it.  A
    text of s points is then shown s * dpi / 72 * scale pixels high.  Only
    texts that are drawn count (visible, not empty, not the tick labels of a
    hidden axis).

    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots(figsize=(4, 3))
    >>> _ = ax.set_title("tiny", fontsize=6)
    >>> found = smallest_font(fig)
    >>> found.text, round(found.px, 2)
    ('tiny', 7.5)
    >>> plt.close(fig)
    """
    from matplotlib.text import Text
    drawn = []
    original = Text.draw

    def draw(self, renderer):
        if self.get_visible() and self.get_text().strip():
            drawn.append(self)
        return original(self, renderer)

    Text.draw = draw
    try:
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    finally:
        Text.draw = original
    width = int.from_bytes(buffer.getvalue()[16:20], "big")       # the PNG header's width
    shrink = min(1.0, column / width)
    if not drawn:
        return None
    text = min(drawn, key=lambda t: t.get_fontsize())
    points = float(text.get_fontsize())
    return SmallestFont(points * dpi / 72 * shrink, text.get_text(), points, shrink)


def warn_small_text(fig) -> None:
    """Warn when ``fig``, drawn, shows a text smaller than :data:`MIN_FONT_PX` in the book.

    A pyplot figure hook: the chapters' set-up cells set
    ``plt.rcParams["figure.hooks"] = ["collective_lib.viz.style:warn_small_text"]``,
    so a figure a chapter sizes itself is measured (:func:`smallest_font`) the first
    time it is drawn. The warning goes to the cell's stderr, which the book's build
    test refuses, naming the page.

    >>> import matplotlib.pyplot as plt
    >>> fig = plt.figure(figsize=(16, 3))
    >>> _ = fig.text(0.0, 0.5, "far too wide")
    >>> _ = fig.text(1.0, 0.5, "to read", ha="right")
    >>> warn_small_text(fig)
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     fig.canvas.draw()
    >>> print(caught[0].message)         # doctest: +ELLIPSIS
    the text 'far too wide' shows 6.5 px high in the book (at least 9): ...
    >>> plt.close(fig)
    """
    def measure(event):
        fig.canvas.mpl_disconnect(connection)          # once, and not for its own drawing
        found = smallest_font(fig)
        if found is None or found.px >= MIN_FONT_PX - 1e-9:
            return
        with warnings.catch_warnings():
            warnings.simplefilter("always")            # every figure, even with equal text
            warnings.warn(
                f"the text {found.text!r} shows {found.px:.1f} px high in the book "
                f"(at least {MIN_FONT_PX:g}): the figure is {found.shrink:.2f} of its size "
                f"across the column; make it narrower or its text larger", stacklevel=2)

    connection = fig.canvas.mpl_connect("draw_event", measure)


def book_figures() -> None:
    """Set up pyplot in a chapter: its figures' size, resolution and smallest text.

    A figure is laid out at :data:`BOOK_DPI` CSS pixels per inch, the size
    :data:`TEXT_COLUMN_PX` and the font rules count with, and drawn with twice as
    many pixels each way (IPython's "retina" PNG, which carries its display size):
    at 90 dots per inch a figure was blurred on every screen with two device pixels
    to a CSS pixel (most laptops, every phone), and a reader who zooms into a figure
    on a phone, where the column shrinks it to half its size, found no detail to
    zoom into. The book links each such image to its full-size file (Sphinx's
    ``html_scaled_image_link``). :func:`warn_small_text` becomes every figure's hook.

    Call it once, in a chapter's hidden set-up cell, in an IPython kernel.
    """
    import matplotlib.pyplot as plt
    from matplotlib_inline.backend_inline import set_matplotlib_formats

    plt.rcParams["figure.dpi"] = BOOK_DPI
    plt.rcParams["figure.hooks"] = ["collective_lib.viz.style:warn_small_text"]
    set_matplotlib_formats("retina")
