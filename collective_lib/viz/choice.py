"""Which algorithm wins where: the selector's choice over p and m, beside MPICH's switch points.

:func:`choice_map` asks :func:`~collective_lib.selection.winner_map` for the
fastest algorithm of an operation at every (p, m) of a grid, by the closed forms
and, if asked, by simulating every algorithm, and draws the maps with
:func:`~collective_lib.viz.winner_maps` (a letter in every cell).  Dashed lines
mark where the installed MPICH's thresholds switch algorithm
(:func:`~collective_lib.mpi.thresholds.mpich_choice`), read from MPICH itself as
chapter 7 reads them.
"""
from __future__ import annotations

from matplotlib.lines import Line2D
from matplotlib.patheffects import withStroke

from ..catalog import catalog
from ..model import CostModel
from ..mpi.thresholds import MPICH_RULES, mpich_choice, mpich_cvars
from ..selection import winner_map
from .costs import winner_maps
from .descriptions import describe

__all__ = ["choice_map", "mpich_boundaries"]

#: What the panels' winners were judged by, for their alt text.
_JUDGED = {"closed forms": "the closed forms", "simulated": "simulating every algorithm"}


def mpich_boundaries(operation, ps, ms, cvars=None) -> tuple:
    """``(choices, segments)``: MPICH's algorithm at every (p, m), and the cell edges between
    cells where it changes.

    ``choices[p, m]`` is :func:`~collective_lib.mpi.thresholds.mpich_choice`; a
    segment ``((x0, y0), (x1, y1))`` is in the map's cell coordinates (column i
    of ``ps[i]`` at x = i, row j of ``ms[j]`` at y = j).

    >>> cvars = {"MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE": 2048}
    >>> choices, segments = mpich_boundaries("allreduce", [8], [1, 1000], cvars)
    >>> choices[8, 1000], segments
    ('reduce-scatter + allgather', [((-0.5, 0.5), (0.5, 0.5))])
    """
    cvars = mpich_cvars() if cvars is None else cvars
    choices = {(p, m): mpich_choice(operation, p, m, cvars) for p in ps for m in ms}
    segments = []
    for i, p in enumerate(ps):
        for j, m in enumerate(ms):
            if i + 1 < len(ps) and choices[p, m] != choices[ps[i + 1], m]:
                segments.append(((i + 0.5, j - 0.5), (i + 0.5, j + 0.5)))
            if j + 1 < len(ms) and choices[p, m] != choices[p, ms[j + 1]]:
                segments.append(((i - 0.5, j + 0.5), (i + 0.5, j + 0.5)))
    return choices, segments


def _regions(assigned: dict) -> str:
    """Each name of ``{(p, m): name}``, most points first, with its number of points and the
    range of p and m they lie in: 'binomial_broadcast 36 (p 4-64, m 1-1,000)'."""
    by_name: dict = {}
    for point, name in assigned.items():
        by_name.setdefault(name, []).append(point)
    said = []
    for name, cells in sorted(by_name.items(), key=lambda item: -len(item[1])):
        ps, ms = sorted({p for p, _ in cells}), sorted({m for _, m in cells})
        span = (lambda v: f"{v[0]:,}" + (f"-{v[-1]:,}" if len(v) > 1 else ""))
        said.append(f"{name} {len(cells)} (p {span(ps)}, m {span(ms)})")
    return "; ".join(said)


def _winner_text(operation, panel, winners, ps, ms, model) -> str:
    times = "" if model is None else f", ts = {model.ts:g}, tw = {model.tw:g}"
    return (f"Fastest {operation} by {_JUDGED[panel]}{times}, p {ps[0]}-{ps[-1]} across, "
            f"m {ms[0]:,}-{ms[-1]:,} words up; points won: {_regions(winners)}.")


def _mpich_text(operation, choices, cvars) -> str:
    """MPICH's rule in words: its thresholds, and where each of its choices holds."""
    names = ", ".join(f"{name.removeprefix('MPIR_CVAR_')} {cvars[name]:,}"
                      for name in MPICH_RULES[operation])
    return f"Dashed lines: MPICH's switches ({names}): {_regions(choices)}."


def choice_map(operation: str, ps, ms, model: CostModel | None = None, *, network_for=None,
               simulate: bool = False, mpich: bool | dict = True, among=None, fig=None,
               **options):
    """The fastest algorithm of ``operation`` at every p (across) and m (up), and MPICH's rule.

    Parameters
    ----------
    operation : str
        An operation of the catalog (:func:`~collective_lib.selection.selectable_operations`).
    ps, ms : sequence of int
        The columns (numbers of PEs) and rows (words) of the map.
    model : CostModel, optional
        The machine's times (default ts = 1, tw = 0); see
        :func:`~collective_lib.selection.predict` for how each entry uses it.
    network_for : callable, optional
        ``network_for(p)``: simulate on this network instead of each entry's own.
    simulate : bool
        Add a second panel, the fastest by simulating every eligible algorithm
        (:func:`~collective_lib.selection.simulated_winner`); its alt text
        names the points where the two panels disagree.
    mpich : bool or dict
        Draw dashed lines where MPICH's thresholds switch algorithm: True reads
        them from the installed MPICH (:func:`~collective_lib.mpi.thresholds.mpich_cvars`),
        a dict gives the control variables; False, or an operation without an
        MPICH rule here, draws none.
    among : iterable of str, optional
        Choose only among these entries (default: the whole catalog).
    fig : matplotlib.figure.Figure, optional
        Draw in this figure (a widget's); default a new pyplot figure.
    **options
        Passed to :func:`~collective_lib.selection.predict` (``ports``, ``root``, ...).

    Returns
    -------
    matplotlib.figure.Figure
        One map per panel (a letter per cell, gid ``"letter"``), MPICH's
        boundaries as lines with gid ``"mpich"``; its description says which
        algorithm wins where, and where MPICH switches.

    Examples
    --------
    >>> from collective_lib import CostModel
    >>> fig = choice_map("allreduce", [2, 4, 8], [1, 10_000], CostModel(ts=100, tw=1),
    ...                  among=["hypercube_allreduce", "rabenseifner_allreduce"],
    ...                  mpich={"MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE": 2048})
    >>> [t.get_text() for t in fig.axes[0].texts]
    ['A', 'A', 'A', 'A', 'B', 'B']
    >>> len([line for line in fig.axes[0].lines if line.get_gid() == "mpich"])
    3
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    ps, ms = [int(p) for p in ps], [int(m) for m in ms]
    maps = {"closed forms": winner_map(operation, ps, ms, model, network_for, among=among,
                                       **options)}
    if simulate:
        maps["simulated"] = winner_map(operation, ps, ms, model, network_for, simulate=True,
                                       among=among, **options)
    missing = [(p, m) for p in ps for m in ms if (p, m) not in maps["closed forms"]]
    if missing:
        raise ValueError(f"no algorithm of {operation!r} runs at (p, m) = {missing[:5]}; "
                         "choose a grid where one does")
    names = [name for name, e in catalog().items() if e.operation == operation
             and (among is None or name in set(among))]
    fig = winner_maps(maps, ps, ms, names=names, operation=operation, model=model, fig=fig,
                      judged=_JUDGED)     # its texts are replaced by shorter ones below
    axes = fig.axes[:len(maps)]
    for ax, (panel, winners) in zip(axes, maps.items()):
        describe(ax, _winner_text(operation, panel, winners, ps, ms, model))
    if simulate:
        differ = [(p, m) for p in ps for m in ms
                  if maps["closed forms"][p, m] != maps["simulated"][p, m]]
        where = ", ".join(f"(p = {p}, m = {m:,})" for p, m in differ[:6])
        more = f" and {len(differ) - 6} more" if len(differ) > 6 else ""
        describe(axes[1], f"The simulation picks another algorithm than the closed forms at "
                 f"{len(differ)} of {len(ps) * len(ms)} points"
                 + (f": {where}{more}." if differ else "."), append=True)
    if mpich is not False and operation in MPICH_RULES:
        cvars = mpich_cvars() if mpich is True else mpich
        choices, segments = mpich_boundaries(operation, ps, ms, cvars)
        for ax in axes:
            for (x0, y0), (x1, y1) in segments:
                ax.plot([x0, x1], [y0, y1], color="black", ls=(0, (4, 2)), lw=2.2,
                        gid="mpich", solid_capstyle="butt",
                        path_effects=[withStroke(linewidth=4, foreground="white")])
        describe(axes[-1], _mpich_text(operation, choices, cvars), append=True)
        if segments:
            fig.legend(handles=[Line2D([], [], color="black", ls=(0, (4, 2)), lw=2.2,
                                       label="MPICH switches algorithm")],
                       loc="outside upper center", frameon=False)
    return fig
