"""Cost curves: closed forms as lines, simulated times as markers of the same colour.

Each algorithm has its own colour, dash pattern and marker shape
(:func:`~collective_lib.viz.style.category_style`), so curves stay apart for a
reader who cannot tell the colours apart, and curves that coincide keep
every legend entry visible.

:func:`cost_curves` draws the catalog's algorithms over p or over m;
:func:`cost_per_word` one algorithm's time per word of the message, against m;
:func:`winner_maps` the fastest of several algorithms for every p and m;
:func:`mark_value` marks one value of the x axis (a crossover, a turning point);
:func:`optimal_params` gives every pipelined algorithm its best number of
packets at each point; :func:`simulated_time` simulates a point once and
remembers its time, so that redrawing the same curves costs no simulation.
"""
from __future__ import annotations

import math

from itertools import groupby

import numpy as np
from matplotlib.colors import ListedColormap
from matplotlib.lines import Line2D
from matplotlib.patheffects import withStroke
from matplotlib.ticker import FuncFormatter, LogLocator

from ..catalog import catalog, entry_model, entry_params, optimal_params
from ..model import CostModel
from ..wording import LONG
from .descriptions import curve_comparison, describe
from ._drawing import new_axes
from .style import FONT, TEXT_WIDTH, TITLE_FONT, category_style

__all__ = ["cost_curves", "optimal_params", "simulated_time", "forget_simulated_times",
           "cost_per_word", "winner_maps", "mark_value"]

#: Simulated times by point: see :func:`simulated_time`.
_SIMULATED: dict = {}


def simulated_time(entry, p: int, m: int, model: CostModel, *, seed: int = 0, **params) -> float:
    """The time of ``entry``'s untraced run on p PEs with m words, each point simulated once.

    A run is determined by the entry's program, p, m, the model, the seed of
    the random inputs and the parameters, so its time is remembered under them
    (the cost explorer asks for the same points after every slider move).

    Examples
    --------
    >>> from collective_lib import catalog
    >>> simulated_time(catalog()["binomial_broadcast"], 8, 4, CostModel(ts=1, tw=0))
    3.0
    """
    key = (entry.name, entry.program, p, m, model, seed, tuple(sorted(params.items())))
    if key not in _SIMULATED:
        _SIMULATED[key] = entry.simulate(p, m, model=model, seed=seed, trace=False,
                                         **params).time
    return _SIMULATED[key]


def forget_simulated_times() -> None:
    """Empty the memory of :func:`simulated_time` (to time redraws from scratch)."""
    _SIMULATED.clear()


def _curve(entry, vary, values, m, p, model, params, simulate, seed):
    """(xs, predicted, simulated xs, simulated times) for one entry."""
    xs, predicted, sim_x, sim_t = [], [], [], []
    for x in values:
        pp, mm = (x, m) if vary == "p" else (p, x)
        if not entry.valid(pp):
            continue
        kw = entry_params(entry, params, pp, mm, model)
        if not entry.accepts(pp, mm, **kw):      # e.g. Rabenseifner needs m >= p
            continue
        time = entry.predict(pp, mm, model, **kw)
        xs.append(x)
        predicted.append(time)
        if simulate is True or (callable(simulate) and simulate(entry, pp, mm, kw)):
            sim_t.append(simulated_time(entry, pp, mm, model, seed=seed, **kw))
            sim_x.append(x)
    return xs, predicted, sim_x, sim_t


def _resolve(entries) -> list:
    if isinstance(entries, str):
        entries = [entries]
    table = catalog()
    out = []
    for e in entries:
        if isinstance(e, str):
            if e not in table:
                raise ValueError(f"unknown algorithm {e!r}; the catalog has {sorted(table)}")
            e = table[e]
        out.append(e)
    return out


def cost_curves(entries, *, vary="p", values, m=1, p=None, model=None, params=None,
                simulate=True, ax=None, seed=0, title=None, xlabel=None):
    """Closed-form costs as lines and simulated times as markers of the same colour.

    Parameters
    ----------
    entries : iterable of catalog entries or names
    vary : {"p", "m"}
        The quantity on the x axis.
    values : iterable of int
        The values of p (or of m).  An entry is drawn only at the values of p
        it is valid for (a hypercube algorithm only at powers of two), and not
        at all when there is none.
    m : int
        Message length in words when ``vary="p"``.
    p : int
        Number of PEs when ``vary="m"`` (required then).
    model : CostModel, optional
        Its ``ts``, ``tw``, ``th`` and routing are used for every entry, but
        each entry keeps **its own port model** (``entry.ports``), the one its
        closed form assumes.  Default: each entry's ``default_model()``
        (ts = 1, tw = 0, so times count steps).
    params : dict or callable, optional
        Extra program parameters, e.g. ``{"k": 4}``; an entry receives only
        those it takes.  A callable ``params(entry, p, m, model) -> dict`` is
        asked at every point, e.g. :func:`optimal_params`.
    simulate : bool or callable
        Also simulate every point (untraced) and draw the times as markers.
        A callable ``simulate(entry, p, m, params) -> bool`` picks the points
        worth simulating (to keep interactive use fast).
    ax : matplotlib Axes, optional
    seed : int
        Seed of the random inputs.
    title, xlabel : str, optional
        Replace the default title ("m = ..., ts = ..., tw = ...") and x label
        (what m stands for in a chapter, say).

    Returns
    -------
    matplotlib.axes.Axes
        One line per drawn entry (``gid`` ``"<name>:formula"``) and one marker
        series (``gid`` ``"<name>:simulated"``).  An entry whose formula is an
        upper bound, not an equality, has "(bound)" in its legend label.  When
        no entry runs at any of the points, the axes say so in their middle.

    Examples
    --------
    >>> ax = cost_curves(["binomial_broadcast", "naive_broadcast"], values=range(1, 9))
    >>> [line.get_label() for line in ax.get_lines() if line.get_gid().endswith("formula")]
    ['binomial_broadcast', 'naive_broadcast']
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    if vary not in ("p", "m"):
        raise ValueError(f"vary must be 'p' or 'm', got {vary!r}")
    if vary == "m" and p is None:
        raise ValueError("cost_curves(vary='m') needs the number of PEs p")
    values = [int(v) for v in values]
    ax = new_axes(ax, (7.0, 4.2))
    drawn = []
    for i, entry in enumerate(_resolve(entries)):
        emodel = entry_model(entry, model)
        xs, predicted, sim_x, sim_t = _curve(entry, vary, values, m, p, emodel, params,
                                             simulate, seed)
        if not xs:
            continue
        style = category_style(i)
        name = entry.name if entry.exact else f"{entry.name} (bound)"
        # Dashes and markers differ too, so that equal formulas (binomial tree,
        # hypercube) both show; without simulated points the line carries the markers.
        ax.plot(xs, predicted, color=style["color"], ls=style["ls"], lw=1.5, label=name,
                marker="none" if simulate else style["marker"], mfc="none", ms=5,
                gid=f"{entry.name}:formula")
        if simulate:
            ax.plot(sim_x, sim_t, ls="none", marker=style["marker"], color=style["color"],
                    mfc="none", ms=5, label="_nolegend_", gid=f"{entry.name}:simulated")
        drawn.append((name, xs, predicted, style))
    _finish_cost_axes(ax, vary, values, m, p, model, simulate, drawn)
    if title is not None:
        ax.set_title(title, fontsize=TITLE_FONT)
    if xlabel is not None:
        ax.set_xlabel(xlabel, fontsize=FONT)
    if not ax.get_lines():
        where = (f"on p = {p:,}" if vary == "m" else
                 f"for p from {min(values):,} to {max(values):,}" if values else "at these points")
        ax.text(0.5, 0.5, f"none of these algorithms runs {where}", ha="center",
                va="center", transform=ax.transAxes, color="0.3")
        ax.set(xticks=[], yticks=[])
        ax.minorticks_off()
        describe(ax, f"No curve: none of these algorithms runs {where}.")
        return ax
    describe(ax, _cost_text(drawn, vary, m, p, model, simulate))
    return ax


def _cost_text(drawn, vary, m, p, model, simulate) -> str:
    """The curves, the fixed quantities, which curve is lowest where."""
    times = "ts = 1, tw = 0" if model is None else f"ts = {model.ts:g}, tw = {model.tw:g}"
    fixed = _span("m", [m]) if vary == "p" else _span("p", [p])
    names = ", ".join(name for name, *_ in drawn)
    dots = " (lines: closed forms; markers: simulated times)" if simulate else ""
    lowest = curve_comparison([d[:3] for d in drawn], x=vary)
    head = f"Time against {vary} ({fixed}, {times}) of {names}{dots}."
    if len(head) + len(lowest) > LONG:
        head = f"Time against {vary} ({fixed}, {times}) of {len(drawn)} algorithms{dots}."
    return f"{head} {lowest}"


def _finish_cost_axes(ax, vary, values, m, p, model, simulate, drawn) -> None:
    if values and min(values) > 0 and max(values) / min(values) >= 100:
        # Over two decades a log-log plot shows the growth rates (log p, p, ...) best;
        # a time of 0 (one PE) is left out there.
        ax.set_xscale("log", base=2 if vary == "p" else 10)
        ax.set_yscale("log", nonpositive="mask")
    if ax.get_yscale() == "log":
        _label_enough_log_ticks(ax)
    else:
        # Times of 10^5 and more as "1e5" beside the axis, not as six-digit labels
        # that push the axis title off the figure.
        ax.ticklabel_format(axis="y", style="sci", scilimits=(-3, 4))
    ax.set_xlabel("p (number of PEs)" if vary == "p" else "m (words)", fontsize=FONT)
    ax.set_ylabel("time (units of the model)", fontsize=FONT)
    ax.tick_params(labelsize=FONT)
    ax.yaxis.get_offset_text().set_fontsize(FONT)
    times = "ts = 1, tw = 0" if model is None else f"ts = {model.ts:g}, tw = {model.tw:g}"
    fixed = _span("m", [m]) if vary == "p" else _span("p", [p])
    ax.set_title(f"{fixed}, {times}", fontsize=TITLE_FONT)
    # Every legend entry shows its line with its marker, whether or not they coincide.
    handles = [Line2D([], [], color=style["color"], ls=style["ls"], marker=style["marker"],
                      mfc="none", ms=5, lw=1.5) for *_, style in drawn]
    labels = [name for name, *_ in drawn]
    if simulate and handles:
        handles.append(Line2D([], [], ls="none", marker="o", color="0.3", mfc="none", ms=5))
        labels.append("markers alone: simulated")
    if handles:
        ax.legend(handles, labels, fontsize=FONT, frameon=False)
    ax.grid(alpha=0.3)


def _label_enough_log_ticks(ax) -> None:
    """Label 1, 2 and 5 in each decade when fewer than three powers of ten are in view,
    and label a value at or beyond each end of the curves.

    Curves that span two decades or less would otherwise show one or two labelled
    ticks on a log axis, and few values could be read off. Where a curve runs
    beyond the outermost label by more than half a step (a factor of 1.5 between
    1, 2 and 5, of about 3 between powers of ten), the view reaches to the next
    label: curves from 213 to 9210 were read against 1000 and 10000 alone.
    """
    low, high = ax.get_ylim()
    if low <= 0:
        return
    few = math.floor(math.log10(high)) - math.ceil(math.log10(low)) < 2
    subs, half_step = ((1.0, 2.0, 5.0), 1.5) if few else ((1.0,), math.sqrt(10))
    if few:
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=subs))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    steps = [step * 10.0 ** power for power in range(math.floor(math.log10(low)),
                                                     math.ceil(math.log10(high)) + 1)
             for step in subs]
    labelled = [step for step in steps if low <= step <= high]
    if len(labelled) < 2:               # matplotlib labels evenly spaced values instead
        return
    if labelled[0] / low > half_step:
        low = max(step for step in steps if step <= low)
    if high / labelled[-1] > half_step:
        high = min(step for step in steps if step >= high)
    ax.set_ylim(low, high)


def cost_per_word(entry, ps, ms, model, *, bound=None, bound_label=None, ylabel=None,
                  title=None, ax=None):
    """An algorithm's closed form at its best parameters divided by ``tw m``, against m.

    One curve per number of PEs (log axes), each in its own colour, dash pattern
    and marker; ``bound`` adds a dotted horizontal line, the factor the time per
    word approaches (3 for the pipelined binary tree, Sanders et al. 2019,
    Theorem 13.3).

    Parameters
    ----------
    entry : catalog entry or name
    ps : iterable of int
        One curve per p.
    ms : iterable of int
        The message lengths (words).
    model : CostModel
        Its times; the entry keeps its own port model.
    bound : float, optional
    bound_label, ylabel, title : str, optional
        Default: "bound", "time / (t_w m)", "<name>, ts = ..., tw = ...".
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        One line per p (gid ``"p=<p>"``), the bound with gid ``"bound"``.

    Examples
    --------
    >>> ax = cost_per_word("linear_pipeline_broadcast", [4], [10, 1000],
    ...                    CostModel(ts=10, tw=1), bound=1)
    >>> [[round(float(y), 2) for y in line.get_ydata()] for line in ax.lines]
    [[6.0, 1.3], [1.0, 1.0]]
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    [entry] = _resolve([entry])
    emodel = entry_model(entry, model)
    ms = [int(m) for m in ms]
    ax = new_axes(ax, (7.0, 3.6))
    said = []
    for i, p in enumerate(ps):
        ratio = [entry.predict(p, m, emodel, **entry_params(entry, optimal_params, p, m,
                                                             emodel)) / (emodel.tw * m)
                 for m in ms]
        style = category_style(i)
        ax.plot(ms, ratio, color=style["color"], ls=style["ls"], marker=style["marker"],
                ms=3.5, markevery=max(1, len(ms) // 8), label=f"p = {p}", gid=f"p={p}")
        said.append(f"p = {p}: {ratio[0]:.3g} at m = {ms[0]:,}, {ratio[-1]:.3g} at "
                    f"m = {ms[-1]:,}")
    times = f"ts = {model.ts:g}, tw = {model.tw:g}"
    if bound is not None:
        ax.axhline(bound, color="k", ls=":", label=bound_label or "bound", gid="bound")
    ax.set(xscale="log", yscale="log")
    ax.set_xlabel("message length m (words)")
    ax.set_ylabel(ylabel or "time / (t_w m)")
    ax.set_title(title or f"{entry.name}, {times}")
    ax.legend()
    line = f", with a dotted line at {bound:g}" if bound is not None else ""
    describe(ax, f"The closed form of {entry.name} at its best parameters divided by "
             f"tw m, against the message length m (log axes; {times}){line}. "
             + "; ".join(said) + ".")
    return ax


def _span(name, values) -> str:
    """'p = 4' or 'p = 4 to 64', for the alt text."""
    last = f" to {values[-1]:,}" if len(values) > 1 else ""
    return f"{name} = {values[0]:,}{last}"


def winner_maps(maps, ps, ms, *, names, operation="algorithm", model=None, fig=None,
                judged="the closed forms"):
    """For every p (across) and m (up), the fastest algorithm: one map per panel, stacked.

    Every cell carries its winner's letter as well as its colour, so the
    regions do not rely on colour alone; one legend below names the letters.

    Parameters
    ----------
    maps : dict
        ``{panel: winner}``, ``winner[p, m]`` the name of the fastest algorithm
        (e.g. ``{"whole catalog": {(2, 1): "binomial_broadcast", ...}}``).
    ps, ms : sequence of int
        The columns and rows of every map.
    names : sequence of str
        All algorithms that may win, in the order of their letters A, B, ...
    operation : str
        Named in the titles: "fastest <operation>, <panel> (ts = ..., tw = ...)".
    model : CostModel, optional
        The times the winners were judged by, for the titles and the alt text.
    fig : matplotlib.figure.Figure, optional
        The figure to draw in (a widget's, which never touches pyplot); default
        a new pyplot figure.
    judged : str or dict
        What the winners were judged by, for the alt text ("the closed
        forms"), or ``{panel: that}``, e.g. "simulating every algorithm".

    Returns
    -------
    matplotlib.figure.Figure
        Each Axes holds one image of winner indices (into ``names``) and one
        text per cell, its winner's letter (gid ``"letter"``).

    Examples
    --------
    >>> fig = winner_maps({"all": {(2, 1): "a", (4, 1): "b"}}, [2, 4], [1], names=["a", "b"])
    >>> [t.get_text() for t in fig.axes[0].texts], fig.axes[0].get_title()
    (['A', 'B'], 'fastest algorithm, all')
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    if fig is None:
        import matplotlib.pyplot as plt  # only here: pyplot makes a notebook show the figure
    names = list(names)
    colours = {n: category_style(i)["color"] for i, n in enumerate(names)}
    letters = {n: chr(ord("A") + i) for i, n in enumerate(names)}
    times = "" if model is None else f" (ts = {model.ts:g}, tw = {model.tw:g})"
    size = (min(8.2, TEXT_WIDTH), 3.8 * len(maps))
    if fig is None:
        fig = plt.figure(figsize=size, layout="constrained")
    axes = fig.subplots(len(maps), 1, squeeze=False)
    for ax, (panel, winner) in zip(axes[:, 0], maps.items()):
        grid = np.array([[names.index(winner[p, m]) for p in ps] for m in ms])
        ax.imshow(grid, cmap=ListedColormap([colours[n] for n in names]), aspect="auto",
                  origin="lower", vmin=-0.5, vmax=len(names) - 0.5)
        for (row, col), k in np.ndenumerate(grid):
            ax.text(col, row, letters[names[k]], ha="center", va="center", fontsize=9,
                    fontweight="bold", gid="letter",
                    path_effects=[withStroke(linewidth=2.5, foreground="white")])
        ax.set_xticks(range(len(ps)), [str(p) for p in ps], fontsize=9)
        # the rows are evenly spaced whatever the lengths: plain numbers, not powers of ten
        # that a reader would take for a log axis with a row missing
        ax.set_yticks(range(len(ms)), [f"{m:,}" for m in ms])
        ax.set(xlabel="p", ylabel="m (words)", title=f"fastest {operation}, {panel}{times}")
        rows = [(m, "; ".join(f"{n} at {_span('p', list(g))}"
                              for n, g in groupby(ps, key=lambda p: winner[p, m])))
                for m in ms]
        said = [f"{_span('m', [row[0] for row in g])}: {text}"
                for text, g in groupby(rows, key=lambda row: row[1])]
        basis = judged.get(panel, "the closed forms") if isinstance(judged, dict) else judged
        describe(ax, f"The fastest {operation}, {panel}, by {basis}{times}, for p "
                 f"from {ps[0]:,} to {ps[-1]:,} across and m from {ms[0]:,} to {ms[-1]:,} "
                 "words up. " + ". ".join(said) + ".")
    used = {n for winner in maps.values() for n in winner.values()}
    # Each entry shows its letter in its colour, as the cells do.
    fig.legend(handles=[Line2D([], [], ls="none", marker=f"$\\mathbf{{{letters[n]}}}$", ms=11,
                               color=colours[n], label=f"{letters[n]}: {n}")
                        for n in names if n in used],
               loc="outside lower center", ncol=2, frameon=False)
    return fig


def mark_value(ax, x, label, text):
    """A dotted vertical line at ``x`` with a short ``label`` (or none), and ``text`` for its
    alt text.

    For what a plot of :func:`cost_curves` or :func:`~collective_lib.viz.space_time`
    shows at one value of its x axis: a crossover length n*, the moment a
    pipeline turns from going up a tree to going down.

    Examples
    --------
    >>> ax = cost_curves(["binomial_broadcast"], values=[2, 4, 8], simulate=False)
    >>> mark_value(ax, 4, "p = 4", "A dotted line marks p = 4.")
    >>> [line.get_xdata()[0] for line in ax.lines if line.get_gid() == "mark"]
    [4]
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    ax.axvline(x, color="0.4", ls=":", lw=1.2, gid="mark")
    low, high = ax.get_ylim()
    y = low * (high / low) ** 0.05 if ax.get_yscale() == "log" else low + 0.05 * (high - low)
    if label:
        ax.text(x, y, f" {label}", fontsize=9, color="0.3", ha="left", va="bottom",
                gid="mark")
    describe(ax, text, append=True)
