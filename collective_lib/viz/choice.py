"""Which algorithm wins where: the selector's choice over p and m, beside MPICH's switch points.

:func:`choice_map` asks :func:`~collective_lib.selection.winner_map` for the
fastest algorithm of an operation at every (p, m) of a grid, by the closed forms
and, if asked, by simulating every algorithm, and draws the maps with
:func:`~collective_lib.viz.winner_maps` (a letter in every cell).  Dashed lines
mark where the installed MPICH's thresholds switch algorithm
(:func:`~collective_lib.mpi.thresholds.mpich_choice`), read from MPICH itself as
chapter 7 reads them.  Its alt text stays within
:data:`~collective_lib.wording.LONG` characters per panel on a map of any size:
who wins where, MPICH's choices and the points where simulation and closed forms
disagree, each most points first, then how many more.
"""
from __future__ import annotations

from matplotlib.lines import Line2D
from matplotlib.patheffects import withStroke

from ..catalog import catalog
from ..model import CostModel, TwoLevelModel
from ..mpi.thresholds import MPICH_RULES, mpich_choice, mpich_cvars
from ..selection import winner_map
from ..wording import LONG, plural
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


def _span(values) -> str:
    return f"{values[0]:,}" + (f"-{values[-1]:,}" if len(values) > 1 else "")


def _regions(assigned: dict, budget: int | None = None, *, name=str,
             noun: tuple = ("algorithm", "algorithms")) -> str:
    """Each value of ``{(p, m): value}``, most points first, with its number of points and
    the range of p and m they lie in: 'binomial_broadcast 36 (p 4-64, m 1-1,000)'.

    ``name(value)`` says a value, ``noun`` (singular, plural) what one is.  Within
    ``budget`` characters: as many values as fit,
    then how many more there are and at how many points ('; 2 more algorithms at 5
    points'), so that a map of any size is said in words of bounded length.

    >>> cells = {(2, 1): "a", (4, 1): "a", (4, 10): "b", (8, 10): "c"}
    >>> _regions(cells)
    'a 2 (p 2-4, m 1); b 1 (p 4, m 10); c 1 (p 8, m 10)'
    >>> _regions(cells, 48)
    'a 2 (p 2-4, m 1); 2 more algorithms at 2 points'
    >>> _regions(cells, 20)
    '3 algorithms at 4 points'
    """
    by_value: dict = {}
    for point, value in assigned.items():
        by_value.setdefault(value, []).append(point)
    groups = sorted(by_value.items(), key=lambda item: -len(item[1]))
    said = []
    for value, cells in groups:
        ps, ms = sorted({p for p, _ in cells}), sorted({m for _, m in cells})
        said.append(f"{name(value)} {len(cells)} (p {_span(ps)}, m {_span(ms)})")
    for shown in range(len(said), -1, -1):
        rest = groups[shown:]
        points = sum(len(cells) for _, cells in rest)
        more = (plural(len(rest), *(f"more {n}" if shown else n for n in noun))
                + f" at {plural(points, 'point')}")
        text = "; ".join(said[:shown] + ([more] if rest else []))
        if budget is None or len(text) <= budget or not shown:
            return text
    raise AssertionError("unreachable")


def _share(room: int, first, second, *, favour_second: bool = False) -> tuple:
    """``(first(budget), second(budget))`` within ``room`` characters together: each its
    whole text if both fit, else the shorter whole if it fits half, the longer the rest;
    with ``favour_second``, ``second`` whole if it leaves ``first`` its shortest text."""
    a, b = first(None), second(None)
    if len(a) + len(b) <= room:
        return a, b
    if favour_second and len(b) + len(first(0)) <= room:
        return first(room - len(b)), b
    if len(b) <= room // 2:
        return first(room - len(b)), b
    if len(a) <= room // 2:
        return a, second(room - len(a))
    return first(room // 2), second(room - room // 2)


def _times(model) -> str:
    """'ts = 100, tw = 1'."""
    return f"ts = {model.ts:g}, tw = {model.tw:g}"


def _titles(axes, operation, model) -> None:
    """The panels' titles for a TwoLevelModel: the closed forms priced between nodes, the
    simulation with both levels."""
    inside, between = _times(model.inside), _times(model.between)
    for ax, title in zip(axes, (f"closed forms (between nodes: {between})",
                                f"simulated (inside: {inside}; between: {between})")):
        ax.set_title(f"fastest {operation}, {title}")


def _winner_text(operation, panel, ps, ms, model) -> str:
    """The sentence of a panel, with '{}' where its list of winners goes."""
    two = isinstance(model, TwoLevelModel)
    if panel == "simulated":       # the second panel: the first said the grid and the times
        levels = f", {_times(model.inside)} inside a node" if two else ""
        return f"Below, by simulating every algorithm{levels}; points won: {{}}."
    times = ("" if model is None else f", priced between nodes, {_times(model.between)}"
             if two else f", {_times(model)}")
    return (f"Fastest {operation} by {_JUDGED[panel]}{times}, p {ps[0]:,}-{ps[-1]:,} across, "
            f"m {ms[0]:,}-{ms[-1]:,} words up; points won: {{}}.")


def _differ_text(maps, ps, ms) -> tuple:
    """The sentence on where the simulation picks another winner than the closed forms,
    with '{}' where its list goes, and that list as a function of its budget."""
    forms, runs = maps["closed forms"], maps["simulated"]
    differ = {(p, m): (forms[p, m], runs[p, m]) for p in ps for m in ms
              if forms[p, m] != runs[p, m]}
    head = (f"The simulation disagrees with the closed forms at {len(differ)} of "
            f"{len(ps) * len(ms)} points")
    if not differ:
        return head + ".", lambda budget: ""
    return head + ": {}.", lambda budget: _regions(
        differ, budget, name=lambda pair: f"{pair[1]}, not {pair[0]}, at",
        noun=("pair of algorithms", "pairs of algorithms"))


def _mpich_text(operation, cvars) -> str:
    """MPICH's rule in words, with '{}' where the list of its choices goes."""
    names = ", ".join(f"{name.removeprefix('MPIR_CVAR_')} {cvars[name]:,}"
                      for name in MPICH_RULES[operation])
    return f"Dashed lines: MPICH's switches ({names}): {{}}."


def _panel_text(first, first_list, second="", second_list=None, **share) -> str:
    """``first`` with ``first_list`` filled in, then ``second`` with ``second_list``,
    within :data:`~collective_lib.wording.LONG` characters (each list as a function
    of its budget; ``share`` as in :func:`_share`)."""
    room = LONG - len(first.replace("{}", "")) - len(second.replace("{}", "")) - 1
    if second_list is None:
        return first.replace("{}", first_list(room), 1)
    a, b = _share(room, first_list, second_list, **share)
    return f"{first.replace('{}', a, 1)} {second.replace('{}', b, 1)}"


def choice_map(operation: str, ps, ms, model: CostModel | None = None, *, network_for=None,
               simulate: bool = False, mpich: bool | dict = True, among=None, fig=None,
               winners: dict | None = None, **options):
    """The fastest algorithm of ``operation`` at every p (across) and m (up), and MPICH's rule.

    Parameters
    ----------
    operation : str
        An operation of the catalog (:func:`~collective_lib.selection.selectable_operations`).
    ps, ms : sequence of int
        The columns (numbers of PEs) and rows (words) of the map.
    model : CostModel or TwoLevelModel, optional
        The machine's times (default ts = 1, tw = 0); see
        :func:`~collective_lib.selection.predict` for how each entry uses it.  A
        TwoLevelModel (with ``network_for`` building TwoLevel networks) prices
        the closed forms between nodes and the simulation by level; the titles
        and the text name both levels' times.
    network_for : callable, optional
        ``network_for(p)``: simulate on this network instead of each entry's own.
    simulate : bool
        Add a second panel, the fastest by simulating every eligible algorithm
        (:func:`~collective_lib.selection.simulated_winner`); its alt text
        says at how many points the two panels disagree, and which algorithm
        the simulation picks instead of which where (the most points first).
    mpich : bool or dict
        Draw dashed lines where MPICH's thresholds switch algorithm: True reads
        them from the installed MPICH (:func:`~collective_lib.mpi.thresholds.mpich_cvars`),
        a dict gives the control variables; False, or an operation without an
        MPICH rule here, draws none.
    among : iterable of str, optional
        Choose only among these entries (default: the whole catalog).
    fig : matplotlib.figure.Figure, optional
        Draw in this figure (a widget's); default a new pyplot figure.
    winners : dict, optional
        The maps already computed for this grid with these arguments,
        ``{"closed forms": winner_map(...)}`` and with ``simulate=True`` also
        ``"simulated": winner_map(..., simulate=True)``
        (:func:`~collective_lib.selection.winner_map`): drawn instead of
        computed again, so a chapter quotes numbers from the maps it shows.
    **options
        Passed to :func:`~collective_lib.selection.predict` (``ports``, ``root``, ...).

    Returns
    -------
    matplotlib.figure.Figure
        One map per panel (a letter per cell, gid ``"letter"``), MPICH's
        boundaries as lines with gid ``"mpich"``; its description says which
        algorithm wins where, and where MPICH switches (in the first panel's
        text), each panel's text within :data:`~collective_lib.wording.LONG`
        characters however large the map: the algorithms with the most points
        first, then how many more there are.

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
    panels = ["closed forms", "simulated"] if simulate else ["closed forms"]
    if winners is None:
        maps = {"closed forms": winner_map(operation, ps, ms, model, network_for,
                                           among=among, **options)}
        if simulate:
            maps["simulated"] = winner_map(operation, ps, ms, model, network_for,
                                           simulate=True, among=among, **options)
    elif sorted(winners) != sorted(panels):
        raise ValueError(f"winners= holds the maps {sorted(winners)}, but simulate={simulate} "
                         f"draws {panels}")
    else:
        maps = {panel: winners[panel] for panel in panels}
    for panel, winner in maps.items():
        missing = [(p, m) for p in ps for m in ms if (p, m) not in winner]
        if missing:
            raise ValueError(f"no algorithm of {operation!r} runs at (p, m) = {missing[:5]}"
                             + (f" (in the map {panel!r} of winners=)" if winners else "")
                             + "; choose a grid where one does")
    names = [name for name, e in catalog().items() if e.operation == operation
             and (among is None or name in set(among))]
    two = isinstance(model, TwoLevelModel)
    fig = winner_maps(maps, ps, ms, names=names, operation=operation, model=None if two
                      else model, fig=fig, judged=_JUDGED)   # texts replaced below
    axes = fig.axes[:len(maps)]
    if two:
        _titles(axes, operation, model)
    # Each panel's text: who wins where, then (first panel) MPICH's rule or (second) where
    # the simulation disagrees, together within LONG characters however large the map.
    won = {panel: (lambda winner: lambda budget: _regions(
        {(p, m): winner[p, m] for p in ps for m in ms}, budget))(winner)
        for panel, winner in maps.items()}
    seconds = {}
    if simulate:
        seconds["simulated"] = _differ_text(maps, ps, ms)
    if mpich is not False and operation in MPICH_RULES:
        cvars = mpich_cvars() if mpich is True else mpich
        choices, segments = mpich_boundaries(operation, ps, ms, cvars)
        for ax in axes:
            for (x0, y0), (x1, y1) in segments:
                ax.plot([x0, x1], [y0, y1], color="black", ls=(0, (4, 2)), lw=2.2,
                        gid="mpich", solid_capstyle="butt",
                        path_effects=[withStroke(linewidth=4, foreground="white")])
        seconds["closed forms"] = (_mpich_text(operation, cvars),
                                   lambda budget: _regions(choices, budget, noun=("choice", "choices")))
        if segments:
            fig.legend(handles=[Line2D([], [], color="black", ls=(0, (4, 2)), lw=2.2,
                                       label="MPICH switches algorithm")],
                       loc="outside upper center", frameon=False)
    for ax, panel in zip(axes, maps):
        describe(ax, _panel_text(_winner_text(operation, panel, ps, ms, model), won[panel],
                                 *seconds.get(panel, ()), favour_second=panel == "simulated"))
    return fig
