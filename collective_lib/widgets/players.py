"""Players that step through one run of a catalog algorithm.

* :func:`step_player` -- one picture per step (the transfers as arrows);
* :func:`value_player` -- one table row per step: what every PE holds after
  it, for reductions, prefix sums and barriers.

Both offer every algorithm :func:`collective_lib.catalog` registers for the
chosen operation.
"""
from __future__ import annotations

import html

import ipywidgets as W
import numpy as np
from matplotlib.figure import Figure

from ..recording import record_run
from ..spans import span_inputs, span_op
from ..viz.descriptions import description
from ..viz.tables import values_table
from ..viz.topology import draw_network, draw_step
from ..wording import number
from ._demo import (CONTROLS_WIDTH, animation_html, Demo, operation_entries, img_tag,
                   Picture, play_button, png_bytes, show_png, html_text, SNAPSHOT_SCALE,
                   wrapping_row)

__all__ = ["step_player", "StepPlayer", "value_player", "ValuePlayer", "MAX_P", "MAX_VALUE_P"]

#: The step player's pictures stay readable up to this many PEs.
MAX_P = 32
#: The value player's tables stay readable up to this many PEs.
MAX_VALUE_P = 16
#: What a cell of the value player's table means.
_LEGEND = ("A cell shows what the PE holds after the step; <i>x:y</i> stands for "
           "m<sub>x</sub> op ... op m<sub>y</sub>, '-' for nothing. ")

#: A box that scrolls a table of 16 PEs sideways on a phone instead of running past the
#: output, which JupyterLab cuts off.  Without a width of its own the box took the table's
#: and so did the output around it; at width 0 it stretches to the output (min-width).
_SIDEWAYS = '<div style="overflow-x:auto;width:0;min-width:100%">'


class _CatalogPlayer(Demo):
    """What the players of catalog runs share: choosing the algorithm, p, root and k."""

    def _choose(self, operation, algorithm):
        """Set ``entries`` and return the algorithm to start with (the first by default)."""
        self.entries = operation_entries(operation)
        names = list(self.entries)
        if algorithm is None:
            return names[0]
        if algorithm not in self.entries:
            raise ValueError(f"{algorithm!r} is not a {operation} algorithm; choose from {names}")
        return algorithm

    def _setup_controls(self, algorithm, p, root, k, *, p_max, k_max) -> dict:
        """The controls that choose a run; each one re-simulates when it changes.

        Sliders report only where they are let go: every value on the way would
        simulate again.
        """
        controls = {
            # Named by its description, which a screen reader reads (a label widget above
            # it was only text).  The label takes what it needs ("initial"), not the
            # sliders' fixed width, so the catalog's longest names (31 characters) keep
            # the about 190 pixels they need in JupyterLab's 300-pixel column.
            "algorithm": W.Dropdown(options=list(self.entries), value=algorithm,
                                    description="algorithm",
                                    style={"description_width": "initial"},
                                    layout=W.Layout(width=CONTROLS_WIDTH, margin="2px 0")),
            "p": W.IntSlider(value=p, min=1, max=p_max, description="p",
                             continuous_update=False),
            "root": W.IntSlider(value=root, min=0, max=max(p - 1, 0), description="root",
                                continuous_update=False),
            "k": W.IntSlider(value=k, min=1, max=k_max, description="packets k",
                             continuous_update=False),
        }
        self._k_max = k_max
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

    def _words(self, p: int, k: int) -> int:
        """The message length in words of a run with ``k`` packets on ``p`` PEs."""
        raise NotImplementedError

    def _fit_controls(self, p: int) -> None:
        """Show only the parameters the chosen algorithm takes; keep the root below p and
        the number of packets among those the algorithm accepts."""
        c, entry = self.controls, self.entry
        c["root"].max = max(p - 1, 0)
        c["k"].layout.display = None if "k" in entry.params else "none"
        c["root"].layout.display = None if "root" in entry.params else "none"
        if "k" in entry.params:
            self._fit_k(p)

    def _fit_k(self, p: int) -> None:
        """Let the k slider offer only packet counts the algorithm accepts on p PEs.

        Where these are every ``step``-th count from the smallest (the two-tree broadcast
        takes an even k: 2, 4, ...), the slider starts there and moves by ``step``, and
        its value goes to the nearest of them.  Otherwise the slider offers 1 .. its
        maximum and a refused k is explained instead of drawn.
        """
        slider = self.controls["k"]
        params = self._params()
        fits = [k for k in range(1, self._k_max + 1)
                if self.entry.accepts(p, self._words(p, k), **{**params, "k": k})]
        step = fits[1] - fits[0] if len(fits) > 1 else 1
        if not fits or fits != list(range(fits[0], fits[-1] + 1, step)):
            fits, step = list(range(1, self._k_max + 1)), 1
        slider.step = step
        # One bound at a time, in the order that keeps min <= max.
        if fits[0] > slider.max:
            slider.max, slider.min = fits[-1], fits[0]
        else:
            slider.min, slider.max = fits[0], fits[-1]
        slider.value = min(fits, key=lambda k: (abs(k - slider.value), k))

    def _info_text(self, m: int, legend: str = "") -> str:
        """The line above the picture: the run's time beside its closed form on ``m``
        words, then ``legend`` and the source; or why the algorithm cannot run."""
        entry = self.entry
        if self.run is None:
            return f'<span style="color:#b03a2e">{html.escape(self.error)}</span>'
        p = self.run.p
        predicted = entry.predict(p, m, entry.default_model(), **self._params())
        kind = "closed form" if entry.exact else "closed-form bound"
        return (f"<b>{entry.name}</b>, p = {p:,}, m = {m:,}: simulated time "
                f"<b>{number(self.run.time)}</b>; {kind} {number(predicted)} "
                f"(ts = 1, tw = 0: one unit per message, {entry.ports}). {legend}"
                f"<i>{html.escape(entry.source)}</i>")


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
        The current step as a PNG, at its natural size.
    status : ipywidgets.HTML
        Says "computing..." while the player simulates or draws.
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
        c["step"] = W.IntSlider(value=1, min=1, max=1, description="step",
                                continuous_update=False)
        c["play"], self.player = play_button(c["step"], interval=1200)
        self.info = W.HTML()
        self.image = Picture(format="png")
        self.status = self._status_label()
        c["step"].observe(self._on_step, names="value")
        self.widget = self._layout([c["algorithm"], c["p"], c["root"], c["k"], c["step"],
                                    c["play"], self.player], self.image, self.info)
        with self._computing():
            self._resimulate()

    # -- state ---------------------------------------------------------------------------

    def _words(self, p: int, k: int) -> int:
        # One word per packet unless the caller fixed m: every k is then possible.
        return k if self.m is None else self.m

    def _message_words(self) -> int:
        return self._words(self.controls["p"].value, self._params().get("k", 1))

    def _resimulate(self) -> None:
        """Fit the controls to the algorithm and p, simulate, and redraw."""
        c, entry = self.controls, self.entry
        self._busy = True
        try:
            p = c["p"].value
            self._fit_controls(p)
            self.run, self.error = self._simulate(entry, p)
            steps = len(self.run.step_starts()) if self.run else 0
            c["step"].max = self.player.max = max(steps, 1)
            c["step"].disabled = c["play"].disabled = steps == 0
            c["step"].value = min(c["step"].value, max(steps, 1))
        finally:
            self._busy = False
        self.info.value = self._info_text(self._message_words())
        self._redraw()

    def _simulate(self, entry, p):
        try:
            entry.valid_p(p)
            run = entry.simulate(p, self._message_words(), model=entry.default_model(),
                                 **self._params())
        except ValueError as exc:
            return None, f"{entry.name} cannot run on p = {p}: {exc}"
        return run, None

    # -- pictures ------------------------------------------------------------------------

    def _figure(self) -> Figure:
        return Figure(figsize=(5.2, 4.6))

    def _draw(self, ax, step: int) -> None:
        if self.run is None:
            return
        if not self.run.messages:
            draw_network(self.run.network, ax=ax, title="no transfers (a single PE)")
        else:
            draw_step(self.run, step, ax=ax)

    def _redraw(self) -> None:
        if self.run is None:
            self.image.layout.display = "none"
            return
        fig = self._figure()
        self._draw(fig.add_subplot(), self.controls["step"].value)
        show_png(self.image, png_bytes(fig), description(fig) or "the step's transfers")
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
            png = png_bytes(fig, scale=SNAPSHOT_SCALE)
            return head + img_tag(png, description(fig) or "the only step of the run",
                                  scale=SNAPSHOT_SCALE)
        return head + self._animation(steps)

    def _animation(self, steps: int) -> str:
        fig = self._figure()
        fig.set_dpi(80)                  # every frame is embedded: keep the page light
        ax = fig.add_subplot()
        texts = {}

        def draw(s):
            ax.clear()
            self._draw(ax, s)
            texts[s] = description(fig)
        alt = f"An animation of the run, one frame per step ({steps} steps). {html_text(self.info.value)}"
        return animation_html(fig, draw, range(1, steps + 1), alt, texts)


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


# -- value player -----------------------------------------------------------------------

class ValuePlayer(_CatalogPlayer):
    """Step through a reduction or prefix-sum run, one table row per step.

    See :func:`value_player`.  Attributes: ``widget``, ``controls``
    (``"algorithm"``, ``"p"``, ``"root"``, ``"k"``, ``"values"``, ``"step"``,
    ``"play"``), ``info`` (the simulated time and the closed form, or why the
    configuration cannot run), ``table`` (the HTML of the values table with
    the current step marked), ``run`` (a :class:`~collective_lib.recording.RecordedRun` or None)
    and ``values`` (its :class:`~collective_lib.viz.ValuesTable`).
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
        c["step"] = W.IntSlider(value=0, min=0, max=0, description="after step",
                                continuous_update=False)
        c["play"], self.player = play_button(c["step"], interval=1200)
        self.info = W.HTML()
        self.table = W.HTML()
        self.status = self._status_label()
        c["values"].observe(self._on_setup, names="value")
        c["step"].observe(self._on_step, names="value")
        # Each row goes on in a second line where the output is too narrow (a phone):
        # JupyterLab cuts off what runs past its edge, there the p and step sliders.
        first = wrapping_row()
        first.align_items = "flex-end"                          # p beside the drop-down
        c["algorithm"].layout.max_width = "100%"
        self.widget = W.VBox([
            W.HBox([c["algorithm"], c["p"]], layout=first),
            W.HBox([c["root"], c["k"]], layout=wrapping_row()),
            c["values"],
            W.HBox([c["play"], self.player, c["step"], self.status], layout=wrapping_row()),
            self.info, self.table])
        with self._computing():
            self._resimulate()

    def _words(self, p: int, k: int) -> int:
        """One word per packet; an algorithm that needs more (Rabenseifner: m >= p) gets p."""
        params = self._params()
        if "k" in params:
            params["k"] = k
        return k if self.entry.accepts(p, k, **params) else max(k, p)

    def _message_words(self, p: int) -> int:
        return self._words(p, self._params().get("k", 1))

    def _inputs(self, p: int, m: int):
        """(inputs, extra parameters): symbolic spans or small random integers."""
        if "op" not in self.entry.params:
            return [None] * p, {}
        if self.controls["values"].value == "pattern":
            return span_inputs(p, m), {"op": span_op}
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
                self.run = record_run(entry, p, m, inputs=inputs,
                                      max_ops=entry.max_ops(p, m, **self._params()),
                                      **self._params(), **extra)
                self.values = values_table(self.run)
            except ValueError as exc:
                self.error = f"{entry.name} cannot run on p = {p}: {exc}"
            last = len(self.values.rows) - 1 if self.values else 0
            c["step"].max = self.player.max = last
            c["step"].disabled = c["play"].disabled = last == 0
            c["step"].value = min(c["step"].value, last)
        finally:
            self._busy = False
        self.info.value = self._info_text(self.m, _LEGEND)
        self._redraw()

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
        self.table.value = (self._step_line(step) + _SIDEWAYS
                            + self.values.to_html(highlight=step, transfers=False) + "</div>")

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
