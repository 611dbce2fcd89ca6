"""The cost explorer: closed forms and simulated times of every algorithm of one operation."""
from __future__ import annotations

import time

import ipywidgets as W
import numpy as np
from matplotlib.figure import Figure

from ..catalog import entry_model, entry_params, optimal_params
from ..model import CostModel
from ..collectives import operations
from ..viz.costs import cost_curves, simulated_time
from ..wording import number
from ._demo import PictureDemo, operation_entries

__all__ = ["cost_explorer", "CostExplorer", "MAX_SIMULATED_WORDS", "MAX_SIMULATED_PACKETS",
           "MAX_SIMULATED_P", "SIMULATION_BUDGET"]

#: The cost explorer simulates a point only below these sizes, to answer within a second:
#: words delivered in total (p m), packets forwarded in total (p k) and PEs (an all-to-all
#: exchange on p PEs sends about p * p messages).
MAX_SIMULATED_WORDS = 1_000_000
MAX_SIMULATED_PACKETS = 4_000
MAX_SIMULATED_P = 64
#: Seconds one redraw may spend simulating points it has not simulated before
#: (:func:`~collective_lib.viz.costs.simulated_time` remembers the others).
SIMULATION_BUDGET = 0.3
#: Points whose optimal parameters the explorer remembers (a redraw needs at most a few
#: hundred); it forgets them all when it would hold more.
_OPTIMAL_REMEMBERED = 20_000
#: A first point of m words is estimated from a run of m / _PROBE_SHRINK words (see _probe).
_PROBE_SHRINK = 64


def _small_enough(entry, p, m, params) -> bool:
    """Whether simulating ``entry`` at (p, m) stays within the explorer's size limits."""
    return (p <= MAX_SIMULATED_P
            and operations()[entry.operation].input_words(p, m) <= MAX_SIMULATED_WORDS
            and p * params.get("k", 1) <= MAX_SIMULATED_PACKETS)


def _p_values(p_max: int) -> list:
    """Every p up to 16, then a log-spaced selection that keeps all powers of two."""
    if p_max <= 16:
        return list(range(1, p_max + 1))
    grid = np.unique(np.round(np.geomspace(1, p_max, 24)).astype(int))
    powers = [1 << i for i in range(p_max.bit_length()) if 1 << i <= p_max]
    return sorted(set(grid.tolist()) | set(powers) | {p_max})


def _m_values(m_max: int) -> list:
    return sorted(set(np.unique(np.round(np.geomspace(1, m_max, 12)).astype(int)).tolist()))


def _timed(entry, model, p: int, m: int, params: dict) -> float:
    """Seconds :func:`~collective_lib.viz.costs.simulated_time` takes (about 0 when it remembers)."""
    began = time.perf_counter()
    simulated_time(entry, p, m, model, **params)
    return time.perf_counter() - began


def _probe(entry, model, p: int, m: int):
    """(p0, m0, seconds) of a run much smaller than (p, m), for a first estimate of the run
    at (p, m), whose own time may be far over the budget: on about a quarter of the PEs
    when p > 16, with 1/``_PROBE_SHRINK`` of the words when m is at least that.  None when
    (p, m) is small already or no smaller run is allowed."""
    m0 = m // _PROBE_SHRINK or m
    for p0 in ((p // 4, 1 << max((p // 4).bit_length() - 1, 0)) if p > 16 else (p,)):
        if p0 < 2 or (p0, m0) == (p, m) or not entry.valid(p0):
            continue
        params = entry_params(entry, optimal_params, p0, m0, model)
        if entry.accepts(p0, m0, **params) and _small_enough(entry, p0, m0, params):
            return p0, m0, _timed(entry, model, p0, m0, params)
    return None


def _estimate(last, p: int, m: int) -> float:
    """Seconds a simulation at (p, m) may take, from the last one (p0, m0, seconds) of the
    same algorithm: the time grows at most like p * p (all-to-all messages) times m * m
    (the edge colouring of a non-uniform all-to-all: 0.18 s at m = 1,000 on 2 PEs, 8.4 s
    at m = 10,000)."""
    if last is None:
        return 0.0
    p0, m0, seconds = last
    return seconds * (p / p0) ** 2 * (m / m0) ** 2


class CostExplorer(PictureDemo):
    """Closed forms and simulated times of every algorithm of one operation.

    See :func:`cost_explorer`.  Attributes: ``widget``, ``controls`` (``"ts"``,
    ``"tw"``, ``"p"``, ``"m"``, ``"vary"``, ``"simulate"``), ``image``,
    ``caption``, ``status`` (says "computing..." during a redraw) and
    ``simulated`` (the (algorithm, p, m) of the dots drawn).
    """

    #: Fixed margins (see ``_figure``): one drawing per PNG instead of two.
    TIGHT = False

    def __init__(self, operation="broadcast", *, vary="p", p=32, m=1024, ts=1.0, tw=0.01,
                 simulation_budget=SIMULATION_BUDGET):
        if vary not in ("p", "m"):
            raise ValueError(f"vary must be 'p' or 'm', got {vary!r}")
        if simulation_budget is not None and not simulation_budget >= 0:
            raise ValueError(f"simulation_budget must be None or seconds >= 0, "
                             f"got {simulation_budget!r}")
        self.entries = operation_entries(operation)
        self.operation = operation
        self.no_description = f"Cost curves of {operation}."
        self.simulation_budget = simulation_budget
        self.simulated = set()
        self._optimal = {}
        # Sliders report only where they are let go: every value on the way would redraw.
        self.controls = {
            "ts": W.FloatLogSlider(value=ts, base=10, min=-2, max=3, step=0.1, description="ts",
                                   continuous_update=False),
            "tw": W.FloatLogSlider(value=tw, base=10, min=-4, max=2, step=0.1, description="tw",
                                   continuous_update=False),
            "p": W.IntSlider(value=p, min=2, max=256, description="p", continuous_update=False),
            # the whole number of words a run takes (1,778, not 1.78e+3)
            "m": W.FloatLogSlider(value=m, base=10, min=0, max=5, step=0.25,
                                  description="m (words)", readout_format=",.0f",
                                  continuous_update=False),
            "vary": W.ToggleButtons(options=[("vary p", "p"), ("vary m", "m")], value=vary,
                                    style={"button_width": "90px"}),
            "simulate": W.Checkbox(value=True, description="simulated points"),
        }
        self._start()

    def _settings(self) -> dict:
        c = self.controls
        return dict(model=CostModel(ts=c["ts"].value, tw=c["tw"].value), vary=c["vary"].value,
                    p=c["p"].value, m=max(1, int(round(c["m"].value))),
                    simulate=c["simulate"].value)

    def _optimal_params(self, entry, p, m, model) -> dict:
        """:func:`~collective_lib.viz.costs.optimal_params`, each point's computed once.

        Finding a pipeline's best k tries some sqrt(m) packet counts: at m = 100,000 that
        was half of a redraw, done twice (for the dots and for the lines) and again after
        every move of p or of the axis.
        """
        key = (entry.name, p, m, model)
        if key not in self._optimal:
            if len(self._optimal) >= _OPTIMAL_REMEMBERED:
                self._optimal.clear()
            self._optimal[key] = optimal_params(entry, p, m, model)
        return self._optimal[key]

    def _values(self, s: dict) -> list:
        return _p_values(s["p"]) if s["vary"] == "p" else _m_values(s["m"])

    def _simulate_points(self, s: dict) -> set:
        """Simulate the points worth a dot; return their (algorithm, p, m).

        Every algorithm's points go from the smallest up, the algorithms taking
        turns, so that each gets its small points before any gets its large
        ones; an algorithm stops where its next point would overrun the
        simulation budget (estimated from its last one on more than one PE, or
        for its first from a much smaller run, see :func:`_probe`).
        """
        queues = []
        for entry in self.entries.values():
            model = entry_model(entry, s["model"])
            points = []
            for x in self._values(s):
                p, m = (x, s["m"]) if s["vary"] == "p" else (s["p"], x)
                if not entry.valid(p):
                    continue
                params = entry_params(entry, self._optimal_params, p, m, model)
                if entry.accepts(p, m, **params) and _small_enough(entry, p, m, params):
                    points.append((p, m, params))
            queues.append((entry, model, points))
        done, last, stopped = set(), {}, set()
        start = time.perf_counter()
        for turn in range(max((len(points) for _, _, points in queues), default=0)):
            for entry, model, points in queues:
                if turn >= len(points) or entry.name in stopped:
                    continue
                p, m, params = points[turn]
                if self.simulation_budget is not None:
                    if last.get(entry.name) is None:
                        last[entry.name] = _probe(entry, model, p, m)
                    spent = time.perf_counter() - start
                    if spent + _estimate(last.get(entry.name), p, m) > self.simulation_budget:
                        stopped.add(entry.name)
                        continue
                took = _timed(entry, model, p, m, params)
                # A simulation (not a remembered time) on PEs that talk (one PE sends nothing).
                if took > 1e-3 and p > 1:
                    last[entry.name] = (p, m, took)
                done.add((entry.name, p, m))
        return done

    def _figure(self) -> Figure:
        s = self._settings()
        self.simulated = self._simulate_points(s) if s["simulate"] else set()
        fig = Figure(figsize=(6.8, 4.2))
        # Fixed margins: one drawing per PNG instead of two for a tight bounding box.
        fig.subplots_adjust(left=0.11, right=0.97, bottom=0.12, top=0.92)
        ax = fig.add_subplot()
        fixed = {"m": s["m"]} if s["vary"] == "p" else {"p": s["p"]}
        cost_curves(self.entries.values(), vary=s["vary"], values=self._values(s), **fixed,
                    model=s["model"], params=self._optimal_params,
                    simulate=s["simulate"] and (lambda entry, p, m, params:
                                                (entry.name, p, m) in self.simulated), ax=ax)
        ax.minorticks_off()                  # dozens of minor ticks cost drawing time, say little
        ax.set_title(f"{self.operation}: {ax.get_title()}", fontsize=10)
        return fig

    def _caption_text(self) -> str:
        s = self._settings()
        axis = (f"p from 1 to {s['p']:,} with m = {s['m']:,}" if s["vary"] == "p"
                else f"m from 1 to {s['m']:,} words with p = {s['p']:,}")
        ps = self._values(s) if s["vary"] == "p" else [s["p"]]
        absent = [name for name, entry in self.entries.items()
                  if not any(entry.valid(p) for p in ps)]
        where = f"on p = {s['p']}" if s["vary"] == "m" else f"on any p up to {s['p']}"
        missing = f" Not drawn, as they do not run {where}: {', '.join(absent)}." \
            if absent else ""
        budget = ("" if self.simulation_budget is None else
                  f", and, the smallest points first, as many new ones as one redraw can "
                  f"simulate in {number(self.simulation_budget)} s (times once simulated are "
                  "remembered)")
        dots = (" Dots: simulated times, only where a simulation is quick: p at most "
                f"{MAX_SIMULATED_P}, the PEs' inputs together at most "
                f"{MAX_SIMULATED_WORDS:,} words, p k at most {MAX_SIMULATED_PACKETS:,} "
                f"packets{budget}." if s["simulate"] else "")
        return (f"{self.operation}, {axis}, ts = {number(s['model'].ts)}, "
                f"tw = {number(s['model'].tw)}.{missing} Lines: closed forms; (bound): the "
                "formula is an upper bound. Pipelined algorithms use their optimal number of "
                "packets k at every point; each algorithm keeps its own port model."
                + dots)


def cost_explorer(operation="broadcast", *, vary="p", p=32, m=1024, ts=1.0, tw=0.01,
                  simulation_budget=SIMULATION_BUDGET):
    """Explore how the algorithms of one operation scale with p or with m.

    Sliders for ``ts`` and ``tw`` (log scale), p and m, and a toggle for the
    quantity on the x axis: with "vary p" the curves run over p = 1 .. p at
    message length m, with "vary m" over m = 1 .. m on p PEs.  Lines are
    the closed forms (:func:`~collective_lib.viz.cost_curves`); dots are simulated times
    (switch them off with the check box).  Every pipelined algorithm is drawn
    at its optimal number of packets at each point.  To answer within about a
    second, a redraw simulates only small points (:data:`MAX_SIMULATED_P`,
    :data:`MAX_SIMULATED_WORDS`, :data:`MAX_SIMULATED_PACKETS`), smallest
    first, for at most ``simulation_budget`` seconds; a point once simulated
    is remembered.  While it redraws, the widget says "computing...".

    Parameters
    ----------
    operation : str
    vary : {"p", "m"}
    p, m : int
        Initial maxima (vary p) or fixed values.
    ts, tw : float
        Initial startup and per-word times.
    simulation_budget : float or None
        Seconds a redraw may spend simulating new points; None: no limit
        (every point within the size limits gets its dot).

    Returns
    -------
    CostExplorer
        Displays as the widget in Jupyter and as a picture of the initial
        curves in a page without a kernel.

    Examples
    --------
    >>> explorer = cost_explorer("broadcast", p=8, m=16)
    >>> explorer.controls["vary"].value = "m"
    >>> explorer.caption.value.split(",")[1]
    ' m from 1 to 16 words with p = 8'
    """
    return CostExplorer(operation, vary=vary, p=p, m=m, ts=ts, tw=tw,
                        simulation_budget=simulation_budget)
