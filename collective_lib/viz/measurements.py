"""Measured times next to the model's, with oversubscribed jobs shown as such.

:func:`measured_vs_model` draws one job size p of a measurement such as
Chapter 7's (``collective_lib.mpi``): the model's predictions as lines, the
measured times as markers.  A job with more processes than cores
(:func:`oversubscribed`) measures the scheduler as much as the messages, and
the model, which assumes a processor per PE, has no term for that; such a
panel is shaded, its markers are hollow and its title says why.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from .descriptions import _listing, _number, _shorten, describe
from .style import FONT, LINE_STYLES, OVERSUBSCRIBED_COLOUR, TITLE_FONT, _new_axes

__all__ = ["Timings", "measured_vs_model", "oversubscribed"]

_KINDS = ("model", "measured", "reference")


class Timings(NamedTuple):
    """One curve of :func:`measured_vs_model`.

    ``kind`` is ``"model"`` (a prediction, drawn as a line), ``"measured"`` (our
    program's times, markers) or ``"reference"`` (the MPI library's own
    collective, measured: triangles on a dotted line).  ``seconds[i]`` is the
    time for ``words[i]`` words.
    """
    label: str
    words: Sequence[float]
    seconds: Sequence[float]
    kind: str
    colour: str = "C0"


def oversubscribed(p: int, cores: int) -> bool:
    """True when a job of ``p`` processes had fewer than ``p`` cores to run on.

    >>> oversubscribed(2, cores=2), oversubscribed(4, cores=2)
    (False, True)
    """
    for name, value in (("p", p), ("cores", cores)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive whole number, got {value!r}")
    return p > cores


def measured_vs_model(series, *, p: int, cores: int, ax=None, legend: bool = True):
    """One job size p: model lines and measured markers, log-log, times in microseconds.

    When the job was oversubscribed (``p > cores``) the panel is shaded, every
    measured marker is hollow, and the title says so, with p and the cores;
    the model lines stay as they are (what p processors would take).

    Parameters
    ----------
    series : iterable of Timings
    p : int
        Processes of the job.
    cores : int
        Cores the job ran on (``collective_lib.mpi`` records them as ``cores``).
    ax : matplotlib Axes, optional
    legend : bool
        Add a legend (with an entry for the shading when the panel has it).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> ax = measured_vs_model([Timings("ring model", [8, 64], [1e-5, 2e-5], "model"),
    ...                         Timings("ring measured", [8, 64], [2e-4, 9e-4], "measured")],
    ...                        p=4, cores=2)
    >>> ax.get_title().splitlines(), ax.lines[1].get_markerfacecolor()
    (['p = 4', 'oversubscribed: 4 processes on 2 cores'], 'none')
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    crowded = oversubscribed(p, cores)
    ax = _new_axes(ax, (4.2, 3.6))
    series = list(series)
    # Curves of one colour belong together (an algorithm's model and measurement); the
    # groups also differ in dash pattern and marker shape, not only in colour.
    groups = list(dict.fromkeys(s.colour for s in series))
    for s in series:
        if s.kind not in _KINDS:
            raise ValueError(f"Timings {s.label!r} has kind {s.kind!r}; choose one of {_KINDS}")
        if len(s.words) != len(s.seconds):
            raise ValueError(f"Timings {s.label!r} has {len(s.words)} sizes but "
                             f"{len(s.seconds)} times")
        micro = np.asarray(s.seconds, dtype=float) * 1e6
        g = groups.index(s.colour)
        if s.kind == "model":
            ax.loglog(s.words, micro, color=s.colour, ls=LINE_STYLES[g % len(LINE_STYLES)],
                      label=s.label, gid="model")
            continue
        marker = _MEASURED_MARKERS[g % len(_MEASURED_MARKERS)] if s.kind == "measured" else "^"
        ax.loglog(s.words, micro, marker=marker, ls="none" if s.kind == "measured" else ":",
                  color=s.colour, label=s.label, gid=s.kind,
                  markerfacecolor="none" if crowded else s.colour)
    # The reason goes into the title, where it cannot hide a marker.
    ax.set_title(f"p = {p}" + (f"\noversubscribed: {p} processes on {cores} cores" if crowded
                               else ""), fontsize=TITLE_FONT)
    ax.set_xlabel("m (words)", fontsize=FONT)
    ax.tick_params(labelsize=FONT)
    if crowded:
        ax.set_facecolor(OVERSUBSCRIBED_COLOUR)
        ax.patch.set_gid("oversubscribed")
    if legend:
        handles, _ = ax.get_legend_handles_labels()
        if crowded:
            handles += [Line2D([], [], ls="none", marker="o", color="0.3", markerfacecolor="none",
                               label="measured, oversubscribed"),
                        Patch(facecolor=OVERSUBSCRIBED_COLOUR, edgecolor="0.6",
                              label="oversubscribed: p > cores")]
        ax.legend(handles=handles, fontsize=FONT, loc="upper left", bbox_to_anchor=(1.02, 1.0),
                  frameon=False)
    describe(ax, _measured_text(series, p, cores, crowded))
    return ax


# Markers of measured series, one per colour group ("^" is the reference's).
_MEASURED_MARKERS = ("o", "s", "D", "v", "P")


def _measured_text(series, p, cores, crowded) -> str:
    """The job, each curve's range of times, and measured against model for each colour."""
    head = f"Measured and model times for p = {p}"
    head += (f", oversubscribed: {p} processes on {cores} cores (shaded, hollow markers)."
             if crowded else f" on {cores} cores.")
    sentences = [head]
    words = sorted({float(w) for s in series for w in s.words})
    if words:
        sentences[0] += f" Message lengths from {_number(words[0])} to {_number(words[-1])} words."
    models = {s.colour: s for s in series if s.kind == "model"}
    for s in series:
        if not len(s.seconds):
            continue
        micro = np.asarray(s.seconds, dtype=float) * 1e6
        text = f"{s.label}: {_number(micro.min())} to {_number(micro.max())} µs"
        model = models.get(s.colour)
        if s.kind == "measured" and model is not None:
            mine = dict(zip(map(float, model.words), model.seconds))
            ratios = [t / mine[float(w)] for w, t in zip(s.words, s.seconds)
                      if mine.get(float(w))]
            if ratios:
                text += (f", {_number(min(ratios))} to {_number(max(ratios))} times "
                         f"{model.label}")
        sentences.append((text + ".",))
    return _shorten(sentences)
