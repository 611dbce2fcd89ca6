"""Measured times next to the model's, with oversubscribed jobs shown as such.

:func:`measured_vs_model` draws one job size p of a measurement such as
Chapter 7's (``collective_lib.mpi``): the model's predictions as lines, the
measured times as markers.  A job with more processes than cores
(:func:`oversubscribed`) measures the scheduler as much as the messages, and
the model, which assumes a processor per PE, has no term for that; such a
panel is shaded, its markers are hollow and its title says why.
:func:`jobs_vs_model` stacks one such panel per job size, straight from the
records of ``collective_lib.mpi``; :func:`ping_pong_fit` draws the calibration
of a machine, its measured ping-pong times beside the fitted ``ts + tw m``.
"""
from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from ..catalog import catalog
from ..model import CostModel
from ..validate import check_positive_int
from ..wording import number, shorten
from .descriptions import describe
from ._drawing import new_axes
from .style import FONT, LINE_STYLES, OVERSUBSCRIBED_COLOUR, TEXT_WIDTH, TITLE_FONT

__all__ = ["Timings", "measured_vs_model", "oversubscribed", "jobs_vs_model", "ping_pong_fit"]

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
    return check_positive_int("p", p) > check_positive_int("cores", cores)


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
    ax = new_axes(ax, (4.2, 3.6))
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
        sentences[0] += f" Message lengths from {number(words[0])} to {number(words[-1])} words."
    models = {s.colour: s for s in series if s.kind == "model"}
    for s in series:
        if not len(s.seconds):
            continue
        micro = np.asarray(s.seconds, dtype=float) * 1e6
        text = f"{s.label}: {number(micro.min())} to {number(micro.max())} µs"
        model = models.get(s.colour)
        if s.kind == "measured" and model is not None:
            mine = dict(zip(map(float, model.words), model.seconds))
            ratios = [t / mine[float(w)] for w, t in zip(s.words, s.seconds)
                      if mine.get(float(w))]
            if ratios:
                text += (f", {number(min(ratios))} to {number(max(ratios))} times "
                         f"{model.label}")
        sentences.append((text + ".",))
    return shorten(sentences)


def _job_curves(records, p, pairs, machine, reference) -> list:
    """The Timings of one job: per (name, label, params) its model and measurement, and
    the MPI library's own collective."""
    curves = []
    for (name, label, params), colour in zip(pairs, ("C0", "C1", "C2", "C3")):
        rows = sorted((r["words"], r["time"]) for r in records if r["algorithm"] == name)
        words = [w for w, _ in rows]
        entry = catalog()[name]
        model = CostModel(ts=machine.ts, tw=machine.tw, ports=entry.ports)
        curves += [Timings(f"{label} model", words,
                           [entry.predict(p, int(w), model, **params) for w in words],
                           "model", colour),
                   Timings(f"{label} measured", words, [t for _, t in rows], "measured",
                           colour)]
    rows = sorted({(r["words"], r["mpi_time"]) for r in records})
    curves.append(Timings(reference, [w for w, _ in rows], [t for _, t in rows],
                          "reference", "k"))
    return curves


def jobs_vs_model(results, pairs, *, machine, reference, title):
    """One :func:`measured_vs_model` panel per job size, stacked on a common m axis.

    Stacked, not side by side: side by side the panels would be shrunk below
    readable text.  The legend is drawn once, beside the last panel.

    Parameters
    ----------
    results : dict
        ``{p: records}``: the records ``collective_lib.mpi.launch`` returned for
        a job of p processes (keys ``algorithm``, ``words``, ``time``,
        ``mpi_time``, ``cores``).
    pairs : sequence of (name, label, params)
        The catalog algorithms measured, their label in the legend and the
        parameters their closed form takes (``{"k": 8}``).
    machine : CostModel
        The fitted machine (``collective_lib.mpi.load_model``); each algorithm's
        model keeps its own port model.
    reference : str
        The label of the MPI library's own collective (``"MPI_Bcast"``).
    title : str

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> records = [{"algorithm": "binomial_broadcast", "words": w, "time": 2e-6 * w,
    ...             "mpi_time": 1e-6 * w, "cores": 2} for w in (8, 64)]
    >>> fig = jobs_vs_model({2: records}, [("binomial_broadcast", "binomial", {})],
    ...                     machine=CostModel(ts=1e-6, tw=1e-8), reference="MPI_Bcast",
    ...                     title="Broadcast")
    >>> [line.get_label() for line in fig.axes[0].lines]
    ['binomial model', 'binomial measured', 'MPI_Bcast']
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    import matplotlib.pyplot as plt      # only here: pyplot makes a notebook show the figure
    results = dict(results)
    if not results:
        raise ValueError("jobs_vs_model needs the records of at least one job")
    fig, axes = plt.subplots(len(results), 1, figsize=(min(8.2, TEXT_WIDTH),
                                                       2.9 * len(results)),
                             sharex=True, squeeze=False)
    axes = list(axes[:, 0])
    for ax, (p, records) in zip(axes, results.items()):
        [cores] = {r["cores"] for r in records}     # one value per job
        measured_vs_model(_job_curves(records, p, pairs, machine, reference), p=p,
                          cores=cores, ax=ax, legend=ax is axes[-1])
        ax.set_ylabel("time (µs)")
    fig.suptitle(title)
    fig.tight_layout()
    return fig


def ping_pong_fit(words, seconds, machine, *, ax=None):
    """A machine's calibration, log-log: measured one-way times and the fitted line.

    Parameters
    ----------
    words : sequence of int
        The message lengths of the ping-pong, in words of 8 bytes.
    seconds : sequence of float
        The one-way time of each (seconds).
    machine : CostModel
        The fit: ``ts`` and ``tw`` in seconds (``collective_lib.mpi.load_model``).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes
        The measured markers have gid ``"measured"``, the fit ``"fit"``, both in µs.

    Examples
    --------
    >>> ax = ping_pong_fit([1, 1000], [2e-6, 4e-6], CostModel(ts=2e-6, tw=2e-9))
    >>> [[round(float(t), 2) for t in line.get_ydata()] for line in ax.lines]
    [[2.0, 4.0], [2.0, 4.0]]
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    words = np.asarray(words)
    measured = np.asarray(seconds, dtype=float) * 1e6
    if len(words) != len(measured) or not len(words):
        raise ValueError(f"ping_pong_fit needs one time per message length, got "
                         f"{len(words)} lengths and {len(measured)} times")
    fit = (machine.ts + machine.tw * words) * 1e6
    ax = new_axes(ax, (6.5, 3.6))
    ax.loglog(words, measured, "o", label="measured (one way)", gid="measured")
    ax.loglog(words, fit, "-", label="fit $t_s + t_w m$", gid="fit")
    ax.set_xlabel("message length m (words of 8 bytes)")
    ax.set_ylabel("time per message (µs)")
    ax.set_title("Ping-pong between two processes on this machine")
    ax.legend()
    ratio = measured / fit
    describe(ax, f"Ping-pong between two processes, log-log: the one-way time of "
             f"{len(words)} message lengths from {words.min():,} to {words.max():,} words "
             f"(markers), {measured.min():.1f} to {measured.max():,.1f} µs, and the fitted "
             f"line t_s + t_w m with t_s = {machine.ts * 1e6:.1f} µs and "
             f"t_w = {machine.tw * 1e9:.2f} ns per word (solid). The measured times are "
             f"{ratio.min():.2f} to {ratio.max():.2f} times the fit.")
    return ax
