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

import weakref

__all__ = ["describe", "description"]

# Axes -> its sentence; an Axes that is gone takes its sentence with it.
_SENTENCES: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def describe(ax, text: str) -> None:
    """Say in words what ``ax`` shows (one or more sentences, ending with a full stop).

    A later call for the same Axes replaces the text.
    """
    text = " ".join(str(text).split())
    if not text:
        raise ValueError("a description needs words: got an empty text")
    _SENTENCES[ax] = text
    _carry_in_notebook_output()


def description(fig) -> str | None:
    """The text of ``fig``: the descriptions of its Axes in drawing order (None if none)."""
    texts = [_SENTENCES[ax] for ax in fig.axes if ax in _SENTENCES]
    return " ".join(texts) or None


def _png_with_description(png_formatter):
    """The notebook's PNG formatter for figures, adding the figure's description."""
    def png(fig):
        data = png_formatter(fig)
        text = description(fig)
        return data if text is None or data is None else (data, {"alt": text})
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
