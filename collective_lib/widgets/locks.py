"""The lock player: p PEs compete for one lock, on a shared-memory time line."""
from __future__ import annotations

import html

import ipywidgets as W
import numpy as np
from matplotlib.figure import Figure

from ..algorithms.sync import LOCKS, lock_demo
from ..shared_memory import cell_name, exclusion_violation, simulate_shared
from ..viz.memory import cache_holders, critical_sections, memory_spans, memory_timeline
from ..viz.descriptions import description
from ..wording import number
from ._demo import (animation_html, Demo, MAX_PICTURE_HEIGHT, PICTURE_DPI, Picture,
                   play_button, png_bytes, show_png, html_text)

__all__ = ["lock_player", "LockPlayer", "LOCK_PLAYER_MAX_P", "LOCK_PLAYER_FRAMES"]

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
    return f"{where}{span.op} {cell_name(span.cell)} ({cost}{spin})"


class LockPlayer(Demo):
    """Watch p PEs compete for one lock, on a :func:`~collective_lib.viz.memory_timeline`.

    See :func:`lock_player`.  Attributes: ``widget``, ``controls`` (``"lock"``,
    ``"p"``, ``"rounds"``, ``"hold"``, ``"time"``, ``"play"``), ``info`` (the
    summary line), ``image`` (the time line with the cursor, at its natural
    size), ``state`` (what every PE does at the cursor, as text beside the
    controls), ``status`` (says "computing..." during a redraw) and ``run``
    (the current :class:`~collective_lib.shared_memory.SharedRun`).
    """

    def __init__(self, lock="ttas_backoff_lock", *, p=4, rounds=2, hold=30):
        if lock not in LOCKS:
            raise ValueError(f"unknown lock {lock!r}; choose from {list(LOCKS)}")
        if not 1 <= p <= LOCK_PLAYER_MAX_P:
            raise ValueError(f"p must be between 1 and {LOCK_PLAYER_MAX_P}, got {p!r}")
        if not 1 <= rounds <= 4:
            raise ValueError(f"rounds must be between 1 and 4, got {rounds!r}")
        if not 0 <= hold <= 200:
            raise ValueError(f"hold must be between 0 and 200, got {hold!r}")
        self._busy = False
        c = self.controls = {
            "lock": W.Dropdown(options=list(LOCKS), value=lock, description="lock"),
            "p": W.IntSlider(value=p, min=1, max=LOCK_PLAYER_MAX_P, description="p",
                             continuous_update=False),
            "rounds": W.IntSlider(value=rounds, min=1, max=4, description="rounds",
                                  continuous_update=False),
            "hold": W.IntSlider(value=hold, min=0, max=200, step=10,
                                description="hold", continuous_update=False),
            "time": W.IntSlider(value=0, min=0, max=1, description="time",
                                continuous_update=False),
        }
        c["play"], self.player = play_button(c["time"], interval=400)
        self.info = W.HTML()
        self.image = Picture(format="png")
        self.status = self._status_label()
        self.state = W.HTML()
        for key in ("lock", "p", "rounds", "hold"):
            c[key].observe(self._on_setup, names="value")
        c["time"].observe(self._on_step, names="value")
        self.widget = self._layout([*c.values(), self.player], self.image, self.info,
                                   notes=self.state)
        with self._computing():
            self._resimulate()

    # -- state ---------------------------------------------------------------------------

    def _resimulate(self) -> None:
        c = self.controls
        self._busy = True
        try:
            self.run = simulate_shared(lock_demo, c["p"].value, lock=LOCKS[c["lock"].value],
                                       rounds=c["rounds"].value, hold=c["hold"].value)
            self.spans = memory_spans(self.run)
            self.sections = critical_sections(self.run)
            end = max(1, int(np.ceil(self.run.time)))
            c["time"].max = self.player.max = end
            self.player.step = max(1, end // 40)
            c["time"].value = min(c["time"].value, end)
        finally:
            self._busy = False
        self.info.value = self._info_text()
        self._redraw()

    def _info_text(self) -> str:
        c, run = self.controls, self.run
        name = c["lock"].value
        moves = run.transfers.get(LOCKS[name].memory(run.p).popitem()[0], 0)
        failed = sum(1 for e in run.trace if e.op == "cas" and e.value is False)
        bad = exclusion_violation(run.trace)
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
                f"<b>{number(run.time)}</b>; the lock's line moved {moves} times, "
                f"{failed} CAS failed; {verdict}. "
                f"<i>{html.escape(LOCKS[name].source)}</i>")

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
        held = cache_holders(self.run, t)
        cached = "; ".join(f"{cell_name(cell)} in the caches of PE "
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

    def live_figure(self, t: float) -> Figure:
        """The live picture: the time line with its cursor at ``t``.

        Live, the lines of text stand beside the picture: inside it they would make it
        taller than a screen at p = 16.  6.4 inches (about 610 pixels with the legend) fit
        beside the 300-pixel column in JupyterLab on a 1366-pixel screen; 6.8 ran past it.
        The rows get thinner rather than the picture taller than ``MAX_PICTURE_HEIGHT``:
        :func:`png_bytes` would shrink it whole, its text below 9 pixels from p = 16.
        """
        height = min(0.3 * self.run.p + 1.9, MAX_PICTURE_HEIGHT / PICTURE_DPI)
        fig = Figure(figsize=(6.4, height))
        memory_timeline(self.run, ax=fig.add_subplot(), cursor=t)
        return fig

    def _redraw(self) -> None:
        t = self.controls["time"].value
        fig = self.live_figure(t)
        show_png(self.image, png_bytes(fig), description(fig) or "the memory timeline")
        # word-break: JupyterLab breaks a <pre> anywhere, even inside a word.
        self.state.value = ('<pre style="font-size:11px;line-height:1.3;white-space:pre-wrap;'
                            'word-break:normal">'
                            + html.escape("\n".join(self.state_lines(t))) + "</pre>")

    def fallback_html(self) -> str:
        """The summary line and an animation of the cursor sweeping over the run."""
        head = f"<p>{self.info.value}</p>"
        times = np.linspace(0, self.run.time, LOCK_PLAYER_FRAMES)
        fig = self._figure(0)
        fig.set_dpi(72)
        texts = {}

        def draw(i):
            fig.clear()
            self._draw_into(fig, times[i])
            *doing, cached = self.state_lines(times[i])     # the cursor's state, not the run's
            texts[i] = f"{cached[0].upper()}{cached[1:]}. {'; '.join(doing)}."
        alt = (f"An animation of the run, a cursor sweeping its time in {len(times)} frames. "
               f"{html_text(self.info.value)}")
        return head + animation_html(fig, draw, range(len(times)), alt, texts)

    def _draw_into(self, fig: Figure, t: float) -> None:
        share = self._text_share()
        ax = fig.add_axes([0.1, share + 0.1, 0.66, 0.88 - share - 0.1])
        memory_timeline(self.run, ax=ax, cursor=t)
        fig.text(0.02, share, "\n".join(self.state_lines(t)), fontsize=7.5, va="top",
                 family="monospace")


def lock_player(lock="ttas_backoff_lock", *, p=4, rounds=2, hold=30):
    """A player for p PEs competing for one lock: who spins, who holds, which line moves.

    Every PE enters the critical section ``rounds`` times (the driver program
    :func:`~collective_lib.algorithms.sync.lock_demo`, timed in the coherence
    model) and stays ``hold`` units inside.  The picture is the run's
    :func:`~collective_lib.viz.memory_timeline` with a cursor; below it, what every PE does at
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
