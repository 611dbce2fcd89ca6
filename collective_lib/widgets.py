"""Interactive demos for the chapters: a step player and a cost explorer (ipywidgets).

Both are driven by :func:`collective_lib.catalog`: every algorithm registered
for the chosen operation appears in them.  Each function returns a small
object that Jupyter displays as the live widget; it also carries a static
``text/html`` version (an animation of the steps, or a picture of the
curves) for a page built without a kernel, such as the HTML book.

Figures are drawn on :class:`matplotlib.figure.Figure` objects made here and
sent to an :class:`ipywidgets.Image` as PNG, so this module never touches
pyplot or the notebook's matplotlib backend.
"""
from __future__ import annotations

import base64
import html
import io

import ipywidgets as W
import numpy as np
from matplotlib.figure import Figure

from . import viz
from .catalog import catalog
from .model import CostModel

__all__ = ["step_player", "cost_explorer", "StepPlayer", "CostExplorer"]

MAX_P = 32
#: The cost explorer simulates a point only below these sizes, to answer within a second:
#: words delivered in total (p m) and packets forwarded in total (p k).
MAX_SIMULATED_WORDS = 1_000_000
MAX_SIMULATED_PACKETS = 4_000


#: Operations in which every PE starts with one message per destination (p m words each).
PER_DESTINATION_OPERATIONS = frozenset({"alltoall", "all_to_all_reduction", "alltoallv"})


def _input_words(entry, p: int, m: int) -> int:
    """Words held by all PEs together at the start: p m, or p p m for an all-to-all exchange."""
    return p * p * m if entry.operation in PER_DESTINATION_OPERATIONS else p * m


def _small_enough(entry, p, m, params) -> bool:
    return (_input_words(entry, p, m) <= MAX_SIMULATED_WORDS
            and p * params.get("k", 1) <= MAX_SIMULATED_PACKETS)


def _entries(operation: str) -> dict:
    """The catalog entries of one operation, in catalog order."""
    found = {name: e for name, e in catalog().items() if e.operation == operation}
    if not found:
        ops = sorted({e.operation for e in catalog().values()})
        raise ValueError(f"no algorithm in the catalog implements {operation!r}; "
                         f"operations: {ops}")
    return found


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    return buf.getvalue()


def _img_tag(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt)}">'


def _fmt(t: float) -> str:
    return f"{t:.4g}"


class _Demo:
    """A displayable wrapper: the widget for a live kernel, static HTML for a built page."""

    widget: W.Widget

    def fallback_html(self) -> str:
        """Static HTML for a page without a kernel."""
        raise NotImplementedError

    def _on_setup(self, change):
        """A control that changes the run: simulate again (unless we are setting controls)."""
        if not self._busy:
            self._resimulate()

    def _on_step(self, change):
        """A control that moves within the run: only redraw."""
        if not self._busy:
            self._redraw()

    def _repr_mimebundle_(self, **kwargs):
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/html"] = self.fallback_html()
        return bundle


# -- step player --------------------------------------------------------------------------

class _CatalogPlayer(_Demo):
    """What the players of catalog runs share: choosing the algorithm, p, root and k."""

    def _choose(self, operation, algorithm):
        """Set ``entries`` and return the algorithm to start with (the first by default)."""
        self.entries = _entries(operation)
        names = list(self.entries)
        if algorithm is None:
            return names[0]
        if algorithm not in self.entries:
            raise ValueError(f"{algorithm!r} is not a {operation} algorithm; choose from {names}")
        return algorithm

    def _setup_controls(self, algorithm, p, root, k, *, p_max, k_max) -> dict:
        """The controls that choose a run; each one re-simulates when it changes."""
        controls = {
            "algorithm": W.Dropdown(options=list(self.entries), value=algorithm,
                                    description="algorithm"),
            "p": W.IntSlider(value=p, min=1, max=p_max, description="p"),
            "root": W.IntSlider(value=root, min=0, max=max(p - 1, 0), description="root"),
            "k": W.IntSlider(value=k, min=1, max=k_max, description="packets k"),
        }
        for control in controls.values():
            control.observe(self._on_setup, names="value")
        return controls

    @property
    def entry(self):
        return self.entries[self.controls["algorithm"].value]

    def _params(self) -> dict:
        c, params = self.controls, {}
        if "root" in self.entry.params:
            params["root"] = c["root"].value
        if "k" in self.entry.params:
            params["k"] = c["k"].value
        return params

    def _fit_controls(self, p: int) -> None:
        """Show only the parameters the chosen algorithm takes; keep the root below p."""
        c, entry = self.controls, self.entry
        c["root"].max = max(p - 1, 0)
        c["k"].layout.display = None if "k" in entry.params else "none"
        c["root"].layout.display = None if "root" in entry.params else "none"


class StepPlayer(_CatalogPlayer):
    """Step through one run of a catalog algorithm; see :func:`step_player`.

    Attributes
    ----------
    widget : ipywidgets.VBox
        The whole player.
    controls : dict
        ``"algorithm"``, ``"p"``, ``"root"``, ``"k"``, ``"step"``, ``"play"``.
    info : ipywidgets.HTML
        The line with the simulated time and the closed form, or why the
        configuration cannot run.
    image : ipywidgets.Image
        The current step as a PNG.
    run : Run or None
        The current run (None when the configuration is invalid).
    """

    def __init__(self, operation="broadcast", *, algorithm=None, p=8, root=0, k=1, m=None):
        algorithm = self._choose(operation, algorithm)
        if m is not None and k > m:
            raise ValueError(f"k={k} exceeds m={m}: a packet holds at least one word")
        self.m = m
        self.run, self.error = None, None
        self._busy = False
        c = self.controls = self._setup_controls(algorithm, p, root, k, p_max=MAX_P,
                                                 k_max=min(16, m or 16))
        c["step"] = W.IntSlider(value=1, min=1, max=1, description="step")
        c["play"] = W.Play(value=1, min=1, max=1, interval=1200, description="play")
        W.jslink((c["play"], "value"), (c["step"], "value"))
        self.info = W.HTML()
        self.image = W.Image(format="png")
        c["step"].observe(self._on_step, names="value")
        self.widget = W.VBox([
            W.HBox([c["algorithm"], c["p"]]),
            W.HBox([c["root"], c["k"]]),
            W.HBox([c["play"], c["step"]]),
            self.info, self.image])
        self._resimulate()

    # -- state ---------------------------------------------------------------------------

    def _message_words(self) -> int:
        # One word per packet unless the caller fixed m: every k is then possible.
        if self.m is not None:
            return self.m
        return self.controls["k"].value if "k" in self.entry.params else 1

    def _resimulate(self) -> None:
        """Fit the controls to the algorithm and p, simulate, and redraw."""
        c, entry = self.controls, self.entry
        self._busy = True
        try:
            p = c["p"].value
            self._fit_controls(p)
            self.run, self.error = self._simulate(entry, p)
            steps = len(self.run.step_starts()) if self.run else 0
            for key in ("step", "play"):
                c[key].max = max(steps, 1)
                c[key].disabled = steps == 0
            c["step"].value = min(c["step"].value, max(steps, 1))
        finally:
            self._busy = False
        self.info.value = self._info_text()
        self._redraw()

    def _simulate(self, entry, p):
        try:
            entry.valid_p(p)
            run = entry.simulate(p, self._message_words(), model=entry.default_model(),
                                 **self._params())
        except ValueError as exc:
            return None, f"{entry.name} cannot run on p = {p}: {exc}"
        return run, None

    def _info_text(self) -> str:
        entry = self.entry
        if self.run is None:
            return f'<span style="color:#b03a2e">{html.escape(self.error)}</span>'
        p, m = self.run.p, self._message_words()
        predicted = entry.predict(p, m, entry.default_model(), **self._params())
        kind = "closed form" if entry.exact else "closed-form bound"
        return (f"<b>{entry.name}</b>, p = {p}, m = {m}: simulated time "
                f"<b>{_fmt(self.run.time)}</b>; {kind} {_fmt(predicted)} "
                f"(ts = 1, tw = 0: one unit per message, {entry.ports}). "
                f"<i>{html.escape(entry.source)}</i>")

    # -- pictures ------------------------------------------------------------------------

    def _figure(self) -> Figure:
        return Figure(figsize=(5.2, 4.6))

    def _draw(self, ax, step: int) -> None:
        if self.run is None:
            return
        if not self.run.messages:
            viz.draw_network(self.run.network, ax=ax, title="no transfers (a single PE)")
        else:
            viz.draw_step(self.run, step, ax=ax)

    def _redraw(self) -> None:
        if self.run is None:
            self.image.layout.display = "none"
            return
        fig = self._figure()
        self._draw(fig.add_subplot(), self.controls["step"].value)
        self.image.value = _png(fig)
        self.image.layout.display = None

    def fallback_html(self) -> str:
        """The info line and an animation of every step (JavaScript, no kernel needed)."""
        head = f"<p>{self.info.value}</p>"
        if self.run is None:
            return head
        steps = len(self.run.step_starts())
        if steps <= 1:
            fig = self._figure()
            self._draw(fig.add_subplot(), 1)
            return head + _img_tag(_png(fig), "the only step")
        return head + self._animation(steps)

    def _animation(self, steps: int) -> str:
        from matplotlib.animation import FuncAnimation
        fig = self._figure()
        fig.set_dpi(80)                  # every frame is embedded: keep the page light
        ax = fig.add_subplot()

        def frame(s):
            ax.clear()
            self._draw(ax, s)
            return []
        anim = FuncAnimation(fig, frame, frames=range(1, steps + 1), init_func=lambda: [],
                             interval=1200, repeat=False)
        return anim.to_jshtml(fps=1, default_mode="once")


def step_player(operation="broadcast", *, algorithm=None, p=8, root=0, k=1, m=None):
    """A player that steps through a simulated run, one picture per step.

    Controls: the algorithm (every catalog entry of ``operation``), p (1..32),
    the root, the number of packets k (only for algorithms that take one),
    and a step slider with a play button.  Below them a line gives the
    simulated time and the closed form under ``ts = 1, tw = 0`` (each message
    costs one unit, so the time counts steps).  A configuration that cannot
    run, such as a hypercube algorithm with p not a power of two, shows the
    reason instead of a picture.

    Parameters
    ----------
    operation : str
        Which collective, e.g. ``"broadcast"``.
    algorithm : str, optional
        The entry shown first (default: the first of the operation).
    p, root, k : int
        The initial settings.
    m : int, optional
        Message length in words; by default one word per packet (m = k).

    Returns
    -------
    StepPlayer
        Displays as the widget in Jupyter and as an animation of the initial
        configuration's steps in a page without a kernel.

    Examples
    --------
    >>> player = step_player("broadcast", algorithm="binomial_broadcast", p=8)
    >>> player.run.time
    3.0
    >>> player.controls["p"].value = 16
    >>> player.run.time
    4.0
    """
    return StepPlayer(operation, algorithm=algorithm, p=p, root=root, k=k, m=m)


# -- cost explorer ------------------------------------------------------------------------

def _p_values(p_max: int) -> list:
    """Every p up to 32, then a log-spaced selection that keeps all powers of two."""
    if p_max <= 32:
        return list(range(1, p_max + 1))
    grid = np.unique(np.round(np.geomspace(1, p_max, 40)).astype(int))
    powers = [1 << i for i in range(p_max.bit_length()) if 1 << i <= p_max]
    return sorted(set(grid.tolist()) | set(powers) | {p_max})


def _m_values(m_max: int) -> list:
    return sorted(set(np.unique(np.round(np.geomspace(1, m_max, 16)).astype(int)).tolist()))


class CostExplorer(_Demo):
    """Closed forms and simulated times of every algorithm of one operation.

    See :func:`cost_explorer`.  Attributes: ``widget``, ``controls`` (``"ts"``,
    ``"tw"``, ``"p"``, ``"m"``, ``"vary"``, ``"simulate"``), ``image``,
    ``caption``.
    """

    def __init__(self, operation="broadcast", *, vary="p", p=32, m=1024, ts=1.0, tw=0.01):
        if vary not in ("p", "m"):
            raise ValueError(f"vary must be 'p' or 'm', got {vary!r}")
        self.entries = _entries(operation)
        self.operation = operation
        c = self.controls = {
            "ts": W.FloatLogSlider(value=ts, base=10, min=-2, max=3, step=0.1, description="ts"),
            "tw": W.FloatLogSlider(value=tw, base=10, min=-4, max=2, step=0.1, description="tw"),
            "p": W.IntSlider(value=p, min=2, max=256, description="p"),
            "m": W.FloatLogSlider(value=m, base=10, min=0, max=5, step=0.25,
                                  description="m (words)"),
            "vary": W.ToggleButtons(options=[("vary p", "p"), ("vary m", "m")], value=vary),
            "simulate": W.Checkbox(value=True, description="simulated points"),
        }
        self.caption = W.HTML()
        self.image = W.Image(format="png")
        for control in c.values():
            control.observe(lambda change: self._redraw(), names="value")
        self.widget = W.VBox([W.HBox([c["ts"], c["tw"]]), W.HBox([c["p"], c["m"]]),
                              W.HBox([c["vary"], c["simulate"]]), self.caption, self.image])
        self._redraw()

    def _settings(self) -> dict:
        c = self.controls
        return dict(model=CostModel(ts=c["ts"].value, tw=c["tw"].value), vary=c["vary"].value,
                    p=c["p"].value, m=max(1, int(round(c["m"].value))),
                    simulate=c["simulate"].value)

    def _figure(self) -> Figure:
        s = self._settings()
        fig = Figure(figsize=(7.5, 4.4))
        ax = fig.add_subplot()
        if s["vary"] == "p":
            viz.cost_curves(self.entries.values(), vary="p", values=_p_values(s["p"]), m=s["m"],
                            model=s["model"], params=viz.optimal_params,
                            simulate=s["simulate"] and _small_enough, ax=ax)
        else:
            viz.cost_curves(self.entries.values(), vary="m", values=_m_values(s["m"]), p=s["p"],
                            model=s["model"], params=viz.optimal_params,
                            simulate=s["simulate"] and _small_enough, ax=ax)
        ax.set_title(f"{self.operation}: {ax.get_title()}", fontsize=10)
        return fig

    def _caption_text(self) -> str:
        s = self._settings()
        axis = (f"p from 1 to {s['p']} with m = {s['m']}" if s["vary"] == "p"
                else f"m from 1 to {s['m']} words with p = {s['p']}")
        return (f"{self.operation}, {axis}, ts = {_fmt(s['model'].ts)}, "
                f"tw = {_fmt(s['model'].tw)}. Lines: closed forms; dots: simulated times; "
                "(bound): the formula is an upper bound. Pipelined algorithms use their "
                "optimal number of packets k at every point; each algorithm keeps its own "
                "port model. Dots are left out where the PEs' inputs together exceed "
                f"{MAX_SIMULATED_WORDS:,} words or p k exceeds {MAX_SIMULATED_PACKETS:,} "
                "packets (too slow to simulate here).")

    def _redraw(self) -> None:
        self.caption.value = self._caption_text()
        self.image.value = _png(self._figure())

    def fallback_html(self) -> str:
        """The caption and a PNG of the current curves."""
        # The image widget already holds the PNG of the current settings.
        return f"<p>{self.caption.value}</p>" + _img_tag(self.image.value,
                                                         f"cost curves of {self.operation}")


def cost_explorer(operation="broadcast", *, vary="p", p=32, m=1024, ts=1.0, tw=0.01):
    """Explore how the algorithms of one operation scale with p or with m.

    Sliders for ``ts`` and ``tw`` (log scale), p and m, and a toggle for the
    quantity on the x axis: with "vary p" the curves run over p = 1 .. p at
    message length m, with "vary m" over m = 1 .. m on p PEs.  Lines are
    the closed forms (:func:`viz.cost_curves`); dots are simulated times
    (switch them off with the check box when they are slow).  Every pipelined
    algorithm is drawn at its optimal number of packets at each point.

    Parameters
    ----------
    operation : str
    vary : {"p", "m"}
    p, m : int
        Initial maxima (vary p) or fixed values.
    ts, tw : float
        Initial startup and per-word times.

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
    return CostExplorer(operation, vary=vary, p=p, m=m, ts=ts, tw=tw)


# == Chapter 2: a player for the values held by each PE ====================================

__all__ += ["value_player", "ValuePlayer"]

#: The value player's tables stay readable up to this many PEs.
MAX_VALUE_P = 16


class ValuePlayer(_CatalogPlayer):
    """Step through a reduction or prefix-sum run, one table row per step.

    See :func:`value_player`.  Attributes: ``widget``, ``controls``
    (``"algorithm"``, ``"p"``, ``"root"``, ``"k"``, ``"values"``, ``"step"``,
    ``"play"``), ``info`` (the simulated time and the closed form, or why the
    configuration cannot run), ``table`` (the HTML of the values table with
    the current step marked), ``run`` (a :class:`viz.RecordedRun` or None)
    and ``values`` (its :class:`viz.ValuesTable`).
    """

    def __init__(self, operation="reduce", *, algorithm=None, p=8, root=0, k=1,
                 values="pattern", seed=0):
        algorithm = self._choose(operation, algorithm)
        if values not in ("pattern", "numbers"):
            raise ValueError(f"values must be 'pattern' or 'numbers', got {values!r}")
        if not isinstance(p, int) or not 1 <= p <= MAX_VALUE_P:
            raise ValueError(f"p must be an integer in 1..{MAX_VALUE_P}, got {p!r}")
        self.seed = seed
        self.run, self.values, self.error = None, None, None
        self._busy = False
        c = self.controls = self._setup_controls(algorithm, p, root, k, p_max=MAX_VALUE_P, k_max=8)
        c["values"] = W.ToggleButtons(options=[("pattern x:y", "pattern"),
                                               ("numbers", "numbers")], value=values)
        c["step"] = W.IntSlider(value=0, min=0, max=0, description="after step")
        c["play"] = W.Play(value=0, min=0, max=0, interval=1200, description="play")
        W.jslink((c["play"], "value"), (c["step"], "value"))
        self.info = W.HTML()
        self.table = W.HTML()
        c["values"].observe(self._on_setup, names="value")
        c["step"].observe(self._on_step, names="value")
        self.widget = W.VBox([
            W.HBox([c["algorithm"], c["p"]]),
            W.HBox([c["root"], c["k"]]),
            c["values"],
            W.HBox([c["play"], c["step"]]),
            self.info, self.table])
        self._resimulate()

    def _message_words(self, p: int) -> int:
        """One word per packet; an algorithm that needs more (Rabenseifner: m >= p) gets p."""
        m = self.controls["k"].value if "k" in self.entry.params else 1
        try:
            self.entry.predict(p, m, **self._params())
        except ValueError:
            m = max(m, p)
        return m

    def _inputs(self, p: int, m: int):
        """(inputs, extra parameters): symbolic spans or small random integers."""
        if "op" not in self.entry.params:
            return [None] * p, {}
        if self.controls["values"].value == "pattern":
            return viz.span_inputs(p, m), {"op": viz.span_op}
        rng = np.random.default_rng(self.seed)
        return [rng.integers(0, 10, size=m).tolist() for _ in range(p)], {}

    def _resimulate(self) -> None:
        c, entry = self.controls, self.entry
        self._busy = True
        try:
            p = c["p"].value
            self._fit_controls(p)
            c["values"].layout.display = None if "op" in entry.params else "none"
            self.run, self.values, self.error = None, None, None
            try:
                entry.valid_p(p)
                m = self._message_words(p)
                inputs, extra = self._inputs(p, m)
                self.m = m
                self.run = viz.record_run(entry, p, m, inputs=inputs, **self._params(), **extra)
                self.values = viz.values_table(self.run)
            except ValueError as exc:
                self.error = f"{entry.name} cannot run on p = {p}: {exc}"
            last = len(self.values.rows) - 1 if self.values else 0
            for key in ("step", "play"):
                c[key].max = last
                c[key].disabled = last == 0
            c["step"].value = min(c["step"].value, last)
        finally:
            self._busy = False
        self.info.value = self._info_text()
        self._redraw()

    def _info_text(self) -> str:
        entry = self.entry
        if self.run is None:
            return f'<span style="color:#b03a2e">{html.escape(self.error)}</span>'
        p, m = self.run.p, self.m
        predicted = entry.predict(p, m, entry.default_model(), **self._params())
        kind = "closed form" if entry.exact else "closed-form bound"
        return (f"<b>{entry.name}</b>, p = {p}, m = {m}: simulated time "
                f"<b>{_fmt(self.run.time)}</b>; {kind} {_fmt(predicted)} "
                f"(ts = 1, tw = 0: one unit per message, {entry.ports}). "
                "A cell shows what the PE holds after the step; <i>x:y</i> stands for "
                "m<sub>x</sub> op ... op m<sub>y</sub>, '-' for nothing. "
                f"<i>{html.escape(entry.source)}</i>")

    def _step_line(self, step: int) -> str:
        if step == 0:
            return "<p>Before any communication: every PE holds its own input.</p>"
        sent = html.escape(self.values.transfers_text(step))
        return f"<p><b>Step {step}</b> transfers: {sent}</p>"

    def _redraw(self) -> None:
        if self.values is None:
            self.table.value = ""
            return
        step = self.controls["step"].value
        self.table.value = (self._step_line(step)
                            + self.values.to_html(highlight=step, transfers=False))

    def fallback_html(self) -> str:
        """The info line and the whole table, each step with its transfers."""
        head = f"<p>{self.info.value}</p>"
        if self.values is None:
            return head
        return head + self.values.to_html(transfers=True)


def value_player(operation="reduce", *, algorithm=None, p=8, root=0, k=1, values="pattern",
                 seed=0):
    """A player that shows what every PE holds after each step of a reduction or prefix sum.

    Controls: the algorithm (every catalog entry of ``operation``), p (1..16),
    the root and the number of packets k (for the algorithms that take them),
    the kind of values, and a step slider with a play button.  The table has
    one row per step (the current one marked) and one column per PE, like
    Sanders et al.'s Figs. 13.3, 13.7 and 13.9, and the line above it lists
    the step's transfers.  With ``values="pattern"`` PE i starts with the
    symbol ``i`` and a cell ``x:y`` means m_x op ... op m_y, so an operand
    combined out of rank order shows (e.g. ``2:4,0:1``); with ``"numbers"``
    the PEs hold small random integers and op is +.

    Parameters
    ----------
    operation : str
        ``"reduce"``, ``"allreduce"``, ``"prefix_sum"``, ``"prefix_sum_and_total"``,
        ``"barrier"`` (the barrier shows which PEs each PE has heard from).
    algorithm : str, optional
    p, root, k : int
    values : {"pattern", "numbers"}
    seed : int
        Seed of the random numbers.

    Returns
    -------
    ValuePlayer
        Displays as the widget in Jupyter, and as the complete table with
        every step's transfers in a page without a kernel.

    Examples
    --------
    >>> player = value_player("allreduce", algorithm="hypercube_allreduce", p=4)
    >>> player.values.column(3)
    ['3', '2:3', '0:3']
    >>> player.controls["values"].value = "numbers"
    >>> player.run.results[0] == [sum(x[0] for x in player.run.inputs)]
    True
    """
    return ValuePlayer(operation, algorithm=algorithm, p=p, root=root, k=k, values=values,
                       seed=seed)


# == Chapter 3: the lock player ==========================================================

from .algorithms.sync import LOCKS as _LOCKS, lock_demo as _lock_demo  # noqa: E402
from .shared_memory import (exclusion_violation as _exclusion_violation,  # noqa: E402
                            simulate_shared as _simulate_shared)

LOCK_PLAYER_MAX_P = 16
#: Cursor positions embedded in the static animation of a page without a kernel.
LOCK_PLAYER_FRAMES = 8


def _describe_span(span, inside: bool) -> str:
    if span is None:
        return "done" if not inside else "in the critical section"
    where = "in the critical section: " if inside else ""
    if span.kind == "pause":
        return f"{where}pause (back-off or local work)"
    cost = {"hit": "cache hit", "transfer": "line transfer", "step": "one step"}[span.kind]
    spin = ", spinning" if span.spin else ""
    return f"{where}{span.op} {viz._cell_name(span.cell)} ({cost}{spin})"


class LockPlayer(_Demo):
    """Watch p PEs compete for one lock, on the timeline of :func:`viz.memory_timeline`.

    See :func:`lock_player`.  Attributes: ``widget``, ``controls`` (``"lock"``,
    ``"p"``, ``"rounds"``, ``"hold"``, ``"time"``, ``"play"``), ``info`` (the
    summary line), ``image`` (the picture at the cursor) and ``run`` (the
    current :class:`~collective_lib.shared_memory.SharedRun`).
    """

    def __init__(self, lock="ttas_backoff_lock", *, p=4, rounds=2, hold=30):
        if lock not in _LOCKS:
            raise ValueError(f"unknown lock {lock!r}; choose from {list(_LOCKS)}")
        if not 1 <= p <= LOCK_PLAYER_MAX_P:
            raise ValueError(f"p must be between 1 and {LOCK_PLAYER_MAX_P}, got {p!r}")
        if not 1 <= rounds <= 4:
            raise ValueError(f"rounds must be between 1 and 4, got {rounds!r}")
        if not 0 <= hold <= 200:
            raise ValueError(f"hold must be between 0 and 200, got {hold!r}")
        self._busy = False
        c = self.controls = {
            "lock": W.Dropdown(options=list(_LOCKS), value=lock, description="lock"),
            "p": W.IntSlider(value=p, min=1, max=LOCK_PLAYER_MAX_P, description="p"),
            "rounds": W.IntSlider(value=rounds, min=1, max=4, description="rounds"),
            "hold": W.IntSlider(value=hold, min=0, max=200, step=10,
                                description="hold"),
            "time": W.IntSlider(value=0, min=0, max=1, description="time"),
            "play": W.Play(value=0, min=0, max=1, interval=400, description="play"),
        }
        W.jslink((c["play"], "value"), (c["time"], "value"))
        self.info = W.HTML()
        self.image = W.Image(format="png")
        for key in ("lock", "p", "rounds", "hold"):
            c[key].observe(self._on_setup, names="value")
        c["time"].observe(self._on_step, names="value")
        self.widget = W.VBox([W.HBox([c["lock"], c["p"]]), W.HBox([c["rounds"], c["hold"]]),
                              W.HBox([c["play"], c["time"]]), self.info, self.image])
        self._resimulate()

    # -- state ---------------------------------------------------------------------------

    def _resimulate(self) -> None:
        c = self.controls
        self._busy = True
        try:
            self.run = _simulate_shared(_lock_demo, c["p"].value, lock=_LOCKS[c["lock"].value],
                                       rounds=c["rounds"].value, hold=c["hold"].value)
            self.spans = viz.memory_spans(self.run)
            self.sections = viz.critical_sections(self.run)
            end = max(1, int(np.ceil(self.run.time)))
            for key in ("time", "play"):
                c[key].max = end
            c["play"].step = max(1, end // 40)
            c["time"].value = min(c["time"].value, end)
        finally:
            self._busy = False
        self.info.value = self._info_text()
        self._redraw()

    def _info_text(self) -> str:
        c, run = self.controls, self.run
        name = c["lock"].value
        moves = run.transfers.get(_LOCKS[name].memory(run.p).popitem()[0], 0)
        failed = sum(1 for e in run.trace if e.op == "cas" and e.value is False)
        bad = _exclusion_violation(run.trace)
        if bad is None:
            verdict = '<span style="color:#1e8449">mutual exclusion held</span>'
        else:
            inside = sorted({pe for pe, _, a, b in self.sections
                             if a <= bad.time <= b and pe != bad.pe})
            verdict = (f'<span style="color:#b03a2e"><b>mutual exclusion violated</b>: PE '
                       f'{bad.pe} entered at time {bad.time:g} while PE '
                       f'{", ".join(map(str, inside))} was inside</span>')
        return (f"<b>{name}</b>, p = {run.p}, {c['rounds'].value} round(s) each, "
                f"critical section {c['hold'].value} units: finished at time "
                f"<b>{_fmt(run.time)}</b>; the lock's line moved {moves} times, "
                f"{failed} CAS failed; {verdict}. "
                f"<i>{html.escape(_LOCKS[name].source)}</i>")

    def state_lines(self, t: float) -> list:
        """One line per PE: what it does at time ``t``; then who caches which cell."""
        now = {}
        for s in self.spans:
            if s.start <= t < s.end or (s.start == t == s.end):
                now[s.pe] = s
        inside = {pe for pe, _, a, b in self.sections if a <= t < b}
        lines = []
        for pe in range(self.run.p):
            finished = self.run.finish_times[pe]
            if finished is not None and t >= finished and pe not in now:
                lines.append(f"PE {pe}: done")
            else:
                lines.append(f"PE {pe}: " + _describe_span(now.get(pe), pe in inside))
        held = viz.cache_holders(self.run, t)
        cached = "; ".join(f"{viz._cell_name(cell)} in the caches of PE "
                           f"{', '.join(map(str, pes))}" for cell, pes in held.items() if pes)
        lines.append(f"at time {t:g}: " + (cached or "no line is cached yet"))
        return lines

    # -- pictures ------------------------------------------------------------------------

    def _text_share(self) -> float:
        p = self.run.p
        return 0.16 * (p + 1) / (0.3 * p + 1.9 + 0.16 * (p + 1))

    def _figure(self, t: float) -> Figure:
        p = self.run.p
        fig = Figure(figsize=(9.0, 0.3 * p + 1.9 + 0.16 * (p + 1)))
        self._draw_into(fig, t)
        return fig

    def _redraw(self) -> None:
        self.image.value = _png(self._figure(self.controls["time"].value))

    def fallback_html(self) -> str:
        """The summary line and an animation of the cursor sweeping over the run."""
        from matplotlib.animation import FuncAnimation
        head = f"<p>{self.info.value}</p>"
        times = np.linspace(0, self.run.time, LOCK_PLAYER_FRAMES)
        fig = self._figure(0)
        fig.set_dpi(72)

        def frame(i):
            fig.clear()
            self._draw_into(fig, times[i])
            return []
        anim = FuncAnimation(fig, frame, frames=range(len(times)), init_func=lambda: [],
                             interval=1200, repeat=False)
        return head + anim.to_jshtml(fps=1, default_mode="once")

    def _draw_into(self, fig: Figure, t: float) -> None:
        share = self._text_share()
        ax = fig.add_axes([0.1, share + 0.1, 0.66, 0.88 - share - 0.1])
        viz.memory_timeline(self.run, ax=ax, cursor=t)
        fig.text(0.02, share, "\n".join(self.state_lines(t)), fontsize=7.5, va="top",
                 family="monospace")


def lock_player(lock="ttas_backoff_lock", *, p=4, rounds=2, hold=30):
    """A player for p PEs competing for one lock: who spins, who holds, which line moves.

    Every PE enters the critical section ``rounds`` times (the driver program
    :func:`~collective_lib.algorithms.sync.lock_demo`, timed in the coherence
    model) and stays ``hold`` units inside.  The picture is the run's
    :func:`viz.memory_timeline` with a cursor; below it, what every PE does at
    the cursor and which caches hold each line.  Controls: the lock (every
    lock of :data:`~collective_lib.algorithms.sync.LOCKS`, the broken one
    included), p (1..16), rounds, hold, and a time slider with a play button.
    The summary line gives the finishing time, how often the lock's line
    moved, the failed CAS operations, and whether mutual exclusion held.

    Returns
    -------
    LockPlayer
        Displays as the widget in Jupyter and as an animation of the cursor
        over the initial configuration in a page without a kernel.

    Examples
    --------
    >>> player = lock_player("cas_spin_lock", p=3, rounds=2, hold=10)
    >>> player.run.memory["counter"]
    6
    >>> player.controls["lock"].value = "broken_lock"
    >>> "mutual exclusion violated" in player.info.value
    True
    """
    return LockPlayer(lock, p=p, rounds=rounds, hold=hold)


__all__ += ["lock_player", "LockPlayer"]
