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

__all__ = ["describe", "description", "curve_comparison"]

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


def _forget(ax) -> None:
    """Drop the text of ``ax`` (a panel that another panel's text speaks for)."""
    _SENTENCES.pop(ax, None)


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


# -- phrases shared by the drawings' descriptions ---------------------------------------------

#: Above this many characters a description summarises instead of listing.
_LONG = 400


def _plural(n: int, word: str, many: str | None = None) -> str:
    """'1 transfer', '3 transfers' ('many' when the plural is not word + 's')."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def _listing(items, most: int = 6) -> str:
    """'a', 'a and b', 'a, b and c', or the first ``most`` and 'k more'."""
    items = [str(i) for i in items]
    if len(items) > most:
        items = items[:most] + [f"{len(items) - most} more"]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _ranks(pes) -> str:
    """A set of PEs as ranges: 'PEs 0 to 3 and 6', 'PE 2'.

    >>> _ranks([6, 0, 1, 2, 3]), _ranks([2, 3]), _ranks([5])
    ('PEs 0 to 3 and 6', 'PEs 2 and 3', 'PE 5')
    """
    pes = sorted(set(pes))
    if not pes:
        return "no PE"
    runs, start = [], pes[0]
    for a, b in zip(pes, pes[1:] + [None]):
        if b != a + 1:
            runs += [f"{start} to {a}"] if a > start + 1 else list(map(str, range(start, a + 1)))
            start = b
    return ("PE " if len(pes) == 1 else "PEs ") + _listing(runs, 4)


def _network_phrase(network) -> str:
    """'a ring of 8 PEs', 'a 4 x 4 mesh with wrap-around (16 PEs)', ..."""
    kind = type(network).__name__
    p = network.p
    if kind == "Mesh":
        wrap = " with wrap-around links (a torus)" if network.wrap else ""
        return f"a {network.rows} x {network.cols} mesh{wrap} of {p} PEs"
    if kind == "Hypercube":
        article = "an" if str(network.d).startswith("8") or network.d in (11, 18) else "a"
        return f"{article} {network.d}-dimensional hypercube of {p} PEs"
    names = {"Ring": "a ring", "LinearArray": "a linear array",
             "FullyConnected": "a fully connected network"}
    return f"{names.get(kind, 'a network')} of {_plural(p, 'PE')}"


def _pairs(pairs, p: int) -> str:
    """Who sends to whom: every pair when few, else the rule they follow.

    >>> _pairs([(0, 4), (1, 5)], 8)
    '0 -> 4 and 1 -> 5'
    >>> _pairs([(i, (i + 1) % 8) for i in range(8)], 8)
    'each of PEs 0 to 7 sends to PE i + 1 mod 8'
    >>> _pairs([(i, i ^ 2) for i in range(8)], 8)
    'each of PEs 0 to 7 sends to PE i XOR 2 (across dimension 1)'
    """
    pairs = sorted(pairs)
    if len(pairs) <= 6:
        return _listing([f"{s} -> {d}" for s, d in pairs])
    senders = _ranks(s for s, _ in pairs)
    gaps = {d - s for s, d in pairs}
    if len(gaps) == 1:
        gap = gaps.pop()
        return f"each of {senders} sends to PE i {'+' if gap > 0 else '-'} {abs(gap)}"
    flips = {s ^ d for s, d in pairs}
    if len(flips) == 1:
        flip = flips.pop()
        dim = f" (across dimension {flip.bit_length() - 1})" if flip & (flip - 1) == 0 else ""
        return f"each of {senders} sends to PE i XOR {flip}{dim}"
    gaps = {(d - s) % p for s, d in pairs}
    if len(gaps) == 1:
        return f"each of {senders} sends to PE i + {gaps.pop()} mod {p}"
    return (f"{_plural(len({s for s, _ in pairs}), 'sender')} ({senders}) send to "
            f"{_plural(len({d for _, d in pairs}), 'receiver')}")


def _busiest_link(messages) -> str:
    """'the busiest link, 3 -> 4, carries 4' (ties: the first in link order), or that no link
    carries two of the messages."""
    load = {}
    for msg in messages:
        for link in msg.path:
            load[link] = load.get(link, 0) + 1
    if not load:
        return ""
    top = max(load.values())
    if top == 1:
        return "no two of them share a link" if len(messages) > 1 else ""
    u, v = min(link for link, n in load.items() if n == top)
    others = sum(1 for n in load.values() if n == top) - 1
    tie = f" (and {_plural(others, 'other link')} as many)" if others else ""
    return f"the busiest link, {u} -> {v}, carries {top}{tie}"


def _number(x) -> str:
    return f"{float(x):.4g}"


def _shorten(sentences: list, limit: int = _LONG) -> str:
    """Join sentences, dropping the later optional ones beyond ``limit`` characters.

    ``sentences`` are strings (always kept) or ``(text,)`` tuples (kept while room is left).
    """
    kept = [s for s in sentences if isinstance(s, str)]
    room = limit - len(" ".join(kept))
    out, left_out = [], 0
    for s in sentences:
        if isinstance(s, str):
            out.append(s)
        elif len(s[0]) + 1 <= room - 30:
            out.append(s[0])
            room -= len(s[0]) + 1
        else:
            left_out += 1
    if left_out:
        out.append(f"({left_out} more not described.)")
    return " ".join(out)


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
        who = _listing(winners, 3) + (" (equal)" if len(winners) > 1 else "")
        where = f"at {x} = {lo:g}" if lo == hi else f"from {x} = {lo:g} to {hi:g}"
        parts.append(f"{who} {where}")
    text = "Lowest: " + "; ".join(parts) + "."
    if len(text) > _LONG - 100:
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
    same = [_listing(names, 3) + " coincide." for names, _ in classes if len(names) > 1]
    return " ".join([text] + same)
