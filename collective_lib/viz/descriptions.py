"""What a picture shows, in words: the text alternative of every drawing.

A reader who cannot see a figure (a screen reader, a text browser, a slow
link) gets its *alt text* instead, so every drawing function of :mod:`viz`
says what it drew: who sends to whom in each step, which link is busiest,
which curve is lowest where.  :func:`describe` attaches such a sentence to the
Axes it drew on; :func:`description` reads back the text of a whole figure, the
sentences of its Axes in order.

In a notebook the figure's PNG then carries the text as output metadata
(``{"image/png": {"alt": ...}}``), which the book's build turns into the
image's ``alt`` attribute (``_ext/figures.py``).

>>> import matplotlib
>>> matplotlib.use("Agg")
>>> import matplotlib.pyplot as plt
>>> fig, (left, right) = plt.subplots(1, 2)
>>> describe(left, "A ring of 4 PEs.")
>>> describe(right, "A hypercube of 8 PEs.")
>>> description(fig)
'A ring of 4 PEs. A hypercube of 8 PEs.'
>>> plt.close(fig)
"""
from __future__ import annotations

import math
import weakref

import numpy as np

from ..wording import LONG, listing, number

__all__ = ["describe", "description", "forget_description", "curve_comparison"]

# Axes -> its sentence; an Axes that is gone takes its sentence with it.
_SENTENCES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def describe(ax, text: str, *, append: bool = False) -> None:
    """Say in words what ``ax`` shows (one or more sentences, ending with a full stop).

    A later call for the same Axes replaces the text, or with ``append`` adds
    to it (a drawing made on top of another, such as a path on a cube).
    """
    text = " ".join(str(text).split())
    if not text:
        raise ValueError("a description needs words: got an empty text")
    if append and ax in _SENTENCES:
        text = f"{_SENTENCES[ax]} {text}"
    _SENTENCES[ax] = text
    _carry_in_notebook_output()


def forget_description(ax) -> None:
    """Drop the text of ``ax`` (a panel that another panel's text speaks for).

    A drawing made of panels says in one text what they show together, and
    drops the texts its panels gave themselves.
    """
    _SENTENCES.pop(ax, None)


def description(fig) -> str | None:
    """The text of ``fig``: the descriptions of its Axes in drawing order (None if none)."""
    texts = [_SENTENCES[ax] for ax in fig.axes if ax in _SENTENCES]
    return " ".join(texts) or None


def _png_with_description(png_formatter):
    """The notebook's PNG formatter for figures, adding the figure's description to the
    metadata the formatter gives (IPython's "retina" PNG gives its display size)."""
    def png(fig):
        data = png_formatter(fig)
        text = description(fig)
        if text is None or data is None:
            return data
        data, metadata = data if isinstance(data, tuple) else (data, {})
        return data, {**metadata, "alt": text}
    png.adds_description = True
    return png


def _carry_in_notebook_output() -> None:
    """Make the notebook's display of a figure carry its description, once per kernel.

    Under IPython with matplotlib's inline backend, figures are shown through
    the ``image/png`` display formatter; its function for ``Figure`` is
    wrapped so that it returns ``(png, {"alt": text})``, which IPython stores
    as the output's metadata.  Outside IPython nothing happens.
    """
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    from matplotlib.figure import Figure
    formatter = shell.display_formatter.formatters["image/png"]
    try:
        current = formatter.lookup_by_type(Figure)
    except KeyError:            # no inline backend: figures are not shown as PNG
        return
    if not getattr(current, "adds_description", False):
        formatter.for_type(Figure, _png_with_description(current))


def curve_comparison(curves, *, x: str = "x") -> str:
    """Which curve is lowest over which range of the x axis, and where the order changes.

    The words a reader who cannot see a plot of curves needs; computed from the
    plotted values themselves.

    Parameters
    ----------
    curves : iterable of (name, xs, ys)
        The plotted points of each curve (NaN or None: no point).
    x : str
        The name of the x axis, as in "p = 4".

    Examples
    --------
    >>> curve_comparison([("ring", [2, 4, 8], [1, 3, 7]),
    ...                   ("tree", [2, 4, 8], [1, 2, 3])], x="p")
    'Lowest: ring and tree (equal) at p = 2; tree from p = 4 to 8.'
    >>> curve_comparison([("a", [1, 2, 3], [1, 2, 3]), ("b", [1, 2, 3], [3, 2, 1]),
    ...                   ("c", [1, 2, 3], [1, 2, 3])], x="m")
    'Lowest: a and c (equal) at m = 1; a, b and c (equal) at m = 2; b at m = 3. a and c coincide.'
    """
    points = []
    for name, xs, ys in curves:
        pts = {float(a): float(b) for a, b in zip(xs, ys)
               if b is not None and np.isfinite(float(b))}
        points.append((name, pts))
    grid = sorted({a for _, pts in points for a in pts})
    if not grid:
        return "No curve has a point."
    segments = []                                   # [winners, first x, last x]
    for a in grid:
        here = {name: pts[a] for name, pts in points if a in pts}
        low = min(here.values())
        winners = tuple(n for n, v in here.items() if math.isclose(v, low, rel_tol=1e-9,
                                                                   abs_tol=1e-12))
        if segments and segments[-1][0] == winners:
            segments[-1][2] = a
        else:
            segments.append([winners, a, a])
    parts = []
    for winners, lo, hi in segments:
        who = listing(winners, 3) + (" (equal)" if len(winners) > 1 else "")
        where = (f"at {x} = {number(lo)}" if lo == hi
                 else f"from {x} = {number(lo)} to {number(hi)}")
        parts.append(f"{who} {where}")
    text = "Lowest: " + "; ".join(parts) + "."
    if len(text) > LONG - 100:
        text = "Lowest: " + "; ".join(parts[:4]) + f"; then {len(parts) - 4} more changes."
    classes = []                                    # curves equal wherever both have points
    for name, pts in points:
        for group in classes:
            other = group[1]
            common = set(pts) & set(other)
            if len(common) >= 2 and all(math.isclose(pts[c], other[c], rel_tol=1e-9,
                                                     abs_tol=1e-12) for c in common):
                group[0].append(name)
                break
        else:
            classes.append(([name], pts))
    same = [listing(names, 3) + " coincide." for names, _ in classes if len(names) > 1]
    return " ".join([text] + same)
