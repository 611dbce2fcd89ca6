"""The cost explorer: closed forms and simulated times of every algorithm of one operation."""
from __future__ import annotations

import ipywidgets as W
import numpy as np
from matplotlib.figure import Figure

from ..model import CostModel
from ..operations import operations
from ..viz.costs import cost_curves, optimal_params
from .base import _Demo, _entries, _fmt, _img_tag, _png

__all__ = ["cost_explorer", "CostExplorer", "MAX_SIMULATED_WORDS", "MAX_SIMULATED_PACKETS"]

#: The cost explorer simulates a point only below these sizes, to answer within a second:
#: words delivered in total (p m) and packets forwarded in total (p k).
MAX_SIMULATED_WORDS = 1_000_000
MAX_SIMULATED_PACKETS = 4_000


def _small_enough(entry, p, m, params) -> bool:
    """Whether simulating ``entry`` at (p, m) stays within the explorer's input and packet limits."""
    return (operations()[entry.operation].input_words(p, m) <= MAX_SIMULATED_WORDS
            and p * params.get("k", 1) <= MAX_SIMULATED_PACKETS)


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
            cost_curves(self.entries.values(), vary="p", values=_p_values(s["p"]), m=s["m"],
                            model=s["model"], params=optimal_params,
                            simulate=s["simulate"] and _small_enough, ax=ax)
        else:
            cost_curves(self.entries.values(), vary="m", values=_m_values(s["m"]), p=s["p"],
                            model=s["model"], params=optimal_params,
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
    the closed forms (:func:`~collective_lib.viz.cost_curves`); dots are simulated times
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
