"""The choice explorer: which algorithm the closed forms pick over p and m, beside MPICH's."""
from __future__ import annotations

import ipywidgets as W
from matplotlib.figure import Figure

from ..model import CostModel
from ..selection import predict, selectable_operations
from ..viz.choice import choice_map
from ..wording import number
from ._demo import PictureDemo

__all__ = ["choice_explorer", "ChoiceExplorer", "CHOICE_PS"]

#: The numbers of PEs across the map: powers of two and the numbers between them.
CHOICE_PS = (2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64)


class ChoiceExplorer(PictureDemo):
    """The fastest algorithm of an operation over p and m; see :func:`choice_explorer`.

    Attributes: ``widget``, ``controls`` (``"operation"``, ``"ts"``, ``"tw"``,
    ``"m_max"``, ``"mpich"``), ``image``, ``caption``, ``status``, ``alt_text``.
    """

    no_description = "A map of the fastest algorithm."

    def __init__(self, operation="allreduce", *, ts=1000.0, tw=1.0, m_max=100_000, mpich=True):
        operations = selectable_operations()
        if operation not in operations:
            raise ValueError(f"unknown operation {operation!r}; the catalog's operations are "
                             f"{operations}")
        self.controls = {
            "operation": W.Dropdown(options=operations, value=operation,
                                    description="operation"),
            "ts": W.FloatLogSlider(value=ts, base=10, min=-2, max=4, step=0.25,
                                   description="ts", continuous_update=False),
            "tw": W.FloatLogSlider(value=tw, base=10, min=-3, max=2, step=0.25,
                                   description="tw", continuous_update=False),
            "m_max": W.SelectionSlider(options=[10 ** i for i in range(1, 7)], value=m_max,
                                       description="m up to", continuous_update=False,
                                       layout=W.Layout(width="auto")),
            "mpich": W.Checkbox(value=mpich, description="MPICH's switch points"),
        }
        self._start()

    def _settings(self) -> dict:
        c = self.controls
        m_max = c["m_max"].value
        return dict(operation=c["operation"].value, model=CostModel(ts=c["ts"].value,
                                                                    tw=c["tw"].value),
                    ms=[10 ** i for i in range(len(str(m_max)))], mpich=c["mpich"].value)

    def _ps(self, s: dict) -> list:
        """The p of :data:`CHOICE_PS` at which some algorithm runs for every m (a
        hypercube-only operation keeps the powers of two)."""
        return [p for p in CHOICE_PS
                if all(predict(s["operation"], p, m, s["model"]) for m in s["ms"])]

    def _figure(self) -> Figure:
        self.mpich_note = ""
        s = self._settings()
        ps = self._ps(s)
        fig = Figure(figsize=(7.0, 4.4), layout="constrained")
        try:
            choice_map(s["operation"], ps, s["ms"], s["model"], mpich=s["mpich"], fig=fig)
        except FileNotFoundError as exc:        # no MPICH here: the map without its lines
            fig = Figure(figsize=(7.0, 4.4), layout="constrained")
            choice_map(s["operation"], ps, s["ms"], s["model"], mpich=False, fig=fig)
            self.mpich_note = f" MPICH's switch points are not drawn: {exc}"
        return fig

    def _caption_text(self) -> str:
        s = self._settings()
        return (f"The fastest {s['operation']} by the catalog's closed forms for p from "
                f"{CHOICE_PS[0]} to {CHOICE_PS[-1]} and m from 1 to {s['ms'][-1]:,} words, "
                f"ts = {number(s['model'].ts)}, tw = {number(s['model'].tw)}; "
                "each algorithm on its own port model, a pipeline at its best number of "
                "packets; a letter in every cell names the winner."
                + (" Dashed lines: where the installed MPICH's thresholds switch algorithm."
                   if s["mpich"] else "") + self.mpich_note)


def choice_explorer(operation="allreduce", *, ts=1000.0, tw=1.0, m_max=100_000, mpich=True):
    """Explore which algorithm the closed forms pick for each p and m, beside MPICH's rule.

    A drop-down for the operation (every operation of the catalog), sliders for
    ``ts`` and ``tw`` (log scale) and for the longest message, and a check box
    for MPICH's switch points (:func:`~collective_lib.viz.choice_map`, which
    reads them from the installed MPICH; without one the map is drawn alone and
    the caption says why).  The map is redrawn from the closed forms only, so a
    move answers at once.

    Parameters
    ----------
    operation : str
    ts, tw : float
        Initial startup and per-word times.
    m_max : int
        The longest message, a power of ten from 10 to 10^6 words.
    mpich : bool

    Returns
    -------
    ChoiceExplorer
        Displays as the widget in Jupyter and as a picture of the initial map
        in a page without a kernel.

    Examples
    --------
    >>> explorer = choice_explorer("broadcast", m_max=1000, mpich=False)
    >>> explorer.set_controls(ts=1)
    >>> "m from 1 to 1,000 words, ts = 1, tw = 1;" in explorer.caption.value
    True
    >>> explorer.alt_text.split(";")[0]
    'Fastest broadcast by the closed forms, ts = 1, tw = 1, p 2-64 across, m 1-1,000 words up'
    """
    return ChoiceExplorer(operation, ts=ts, tw=tw, m_max=m_max, mpich=mpich)
