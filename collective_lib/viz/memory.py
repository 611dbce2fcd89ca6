"""Shared-memory time lines and who waits on whom (locks and barriers).

These read a SharedRun of :mod:`collective_lib.shared_memory`: its trace lists
every memory operation when it took effect, and a PE issues its next operation
when the previous one completes, so each operation's duration can be read back.

* :func:`memory_spans`, :func:`critical_sections`, :func:`cache_holders` --
  the run as data: operations with their cost, stays in critical sections,
  which caches hold each line;
* :func:`memory_timeline` -- one lane per PE, time left to right;
* :func:`waits_on`, :func:`wait_graph` -- who spun until whom changed a cell.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np
from matplotlib.collections import LineCollection, PolyCollection
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Patch, Rectangle

from ..shared_memory.ops import cell_name
from ..trees import binomial_parent
from ..wording import listing, number, plural, ranks, shorten
from .descriptions import describe
from ._drawing import Layout, binomial_positions, draw_nodes, frame_axes, new_axes, pe_font_size
from .style import (ARROW_COLOUR, FONT, HATCHES, LINK_COLOUR, MAX_LABELLED, MIN_FONT, PALETTE,
                    SECTION_COLOURS, TITLE_FONT)

__all__ = ["memory_timeline", "memory_spans", "MemorySpan", "critical_sections",
           "cache_holders", "waits_on", "Wait", "wait_graph"]


class MemorySpan(NamedTuple):
    """One operation of a shared-memory run, as drawn by :func:`memory_timeline`.

    ``kind`` is ``"hit"`` (served by the PE's own cache), ``"transfer"`` (the line
    had to move: a miss or an invalidating write, waiting time included),
    ``"pause"``, or ``"step"`` (an interleaved run, where every operation is one
    step).  ``spin`` marks a read or failed CAS that saw what the PE's previous
    operation on the same cell saw: a poll of a spin loop that found nothing new.
    """
    pe: int
    start: float
    end: float
    op: str
    cell: Any
    value: Any
    kind: str
    spin: bool


class Wait(NamedTuple):
    """One row of :func:`waits_on`: ``waiter`` spun on ``cell`` until ``writer`` changed it."""
    waiter: int
    writer: int
    cell: Any
    times: int


_MEMORY_OP_NAMES = ("read", "write", "cas", "fetch_add")
# Room beside the first and the last bar, as a share of the window, for the marks there.
_END_MARGIN = 0.02


def _cell_group(cell) -> str:
    """Arrays are coloured as one: ``readyEpoch[3]`` belongs to ``readyEpoch[*]``."""
    return f"{cell[0]}[*]" if isinstance(cell, tuple) else str(cell)


def _check_shared_run(run) -> None:
    if not hasattr(run, "finish_times") or not hasattr(run, "spins"):
        raise TypeError(f"expected a SharedRun of simulate_shared or run_with_threads, "
                        f"got {type(run).__name__}")
    if not run.trace and run.operations:
        raise ValueError("the run has no trace; simulate it with trace=True")


def memory_spans(run) -> list:
    """Every operation of a shared-memory run with its start, end and kind.

    Parameters
    ----------
    run : SharedRun
        A traced run of :func:`~collective_lib.shared_memory.simulate_shared`
        (timed or interleaved) or :func:`~collective_lib.shared_memory.run_with_threads`.

    Returns
    -------
    list of MemorySpan
        In trace order.  In a timed run an operation ends when its PE does
        the next thing (or returns); it is a ``"hit"`` when it took no longer
        than the model's ``hit``.  In the other modes every operation is one step.

    Examples
    --------
    >>> from collective_lib.shared_memory import simulate_shared, fetch_add, read
    >>> def count(me, p, data):
    ...     yield fetch_add("c", 1)
    ...     return (yield read("c"))
    >>> for s in memory_spans(simulate_shared(count, 2, memory={"c": 0})):
    ...     print(s.pe, s.start, s.end, s.op, s.kind)
    0 0 10 fetch_add transfer
    1 0 30 fetch_add transfer
    0 10 40 read transfer
    1 30 31 read hit
    """
    _check_shared_run(run)
    timed = run.mode == "timed"
    hit = getattr(run.model, "hit", 1) if timed else None
    events = run.trace
    following = [None] * len(events)          # index of the same PE's next event
    latest = {}
    for i in range(len(events) - 1, -1, -1):
        pe = events[i].pe
        following[i] = latest.get(pe)
        latest[pe] = i
    spans = []
    seen = {}                                  # pe -> (op, cell, value) of its last memory op
    for i, e in enumerate(events):
        if e.op not in _MEMORY_OP_NAMES and e.op != "pause":
            continue
        if not timed:
            end, kind = e.time + 1, "step"
        else:
            j = following[i]
            if j is not None:
                end = events[j].time
            elif run.finish_times[e.pe] is not None:
                end = run.finish_times[e.pe]
            else:
                end = run.time
            if e.op == "pause":
                end, kind = e.time + e.value, "pause"
            else:
                kind = "hit" if end - e.time <= hit else "transfer"
        spin = False
        if e.op == "read" or (e.op == "cas" and e.value is False):
            spin = seen.get(e.pe) == (e.op, e.cell, e.value)
            seen[e.pe] = (e.op, e.cell, e.value)
        elif e.op != "pause":
            seen.pop(e.pe, None)
        spans.append(MemorySpan(e.pe, e.time, end, e.op, e.cell, e.value, kind, spin))
    return spans


def critical_sections(run, sections=("cs", "read")) -> list:
    """``(pe, section, start, end)`` for every stay in a section marked ``enter``/``leave``.

    A section still open when the run ended closes at ``run.time``.

    >>> from collective_lib.shared_memory import simulate_shared
    >>> from collective_lib.algorithms.sync import lock_demo, cas_spin_lock
    >>> run = simulate_shared(lock_demo, 2, lock=cas_spin_lock, rounds=1)
    >>> [(pe, s) for pe, s, start, end in critical_sections(run)]
    [(0, 'cs'), (1, 'cs')]
    """
    _check_shared_run(run)
    open_at, found = {}, []
    for e in run.trace:
        if e.op == "enter" and e.cell in sections:
            open_at[(e.pe, e.cell)] = e.time
        elif e.op == "leave" and (e.pe, e.cell) in open_at:
            found.append((e.pe, e.cell, open_at.pop((e.pe, e.cell)), e.time))
    for (pe, section), start in open_at.items():
        found.append((pe, section, start, run.time))
    return sorted(found, key=lambda s: (s[2], s[0]))


def cache_holders(run, t: float) -> dict:
    """Which PEs' caches hold each cell's line just after time ``t``.

    Replays the coherence rule of the model on the trace: a read adds the
    reader to the holders, a write, CAS or fetch-and-add leaves the writer
    alone.  Cells are reported one by one (each cell has its own line unless
    the run was made with ``line_of``, which the trace does not record).

    >>> from collective_lib.shared_memory import simulate_shared
    >>> from collective_lib.algorithms.sync import lock_demo, ttas_backoff_lock
    >>> run = simulate_shared(lock_demo, 3, lock=ttas_backoff_lock, rounds=1)
    >>> cache_holders(run, 0)["lock"]
    [0, 1, 2]
    """
    _check_shared_run(run)
    holders = {}
    for e in run.trace:
        if e.time > t:
            break
        if e.op == "read":
            holders.setdefault(e.cell, set()).add(e.pe)
        elif e.op in ("write", "cas", "fetch_add"):
            holders[e.cell] = {e.pe}
    return {cell: sorted(pes) for cell, pes in holders.items()}


def _group_colours(spans) -> dict:
    """``{cell group: (colour, hatch)}``: groups differ in hatching as well as in colour."""
    groups = []
    for s in spans:
        if s.kind != "pause":
            g = _cell_group(s.cell)
            if g not in groups:
                groups.append(g)
    return {g: (PALETTE[i % len(PALETTE)], HATCHES[i % len(HATCHES)])
            for i, g in enumerate(groups)}


# Section bands are hatched, so that they differ from each other and from the bars of the
# cells not by colour alone.
_SECTION_HATCH = {"cs": "|", "read": "..."}


def _data_end(run, spans, sections) -> float:
    """When the last thing a timeline draws ends: a bar, a section band or a note."""
    ends = [run.time] + [s.end for s in spans]
    ends += [b for _, _, _, b in critical_sections(run, sections)]
    ends += [e.time for e in run.trace if e.op == "note"]
    end = max(ends)
    return end if end > 0 else 1


def memory_timeline(run, *, ax=None, start=None, stop=None, pes=None, cursor=None,
                    title=None, sections=("cs", "read")):
    """Who touches which cache line when: one lane per PE, time left to right.

    Every memory operation is a bar from its issue to its completion,
    coloured and hatched by the cell (all cells of an array share both).  A **pale**
    bar was served by the PE's own cache (a hit: spinning on a cached copy);
    a **solid** bar made the line move between caches (a miss or an
    invalidating write, including the wait for the line to become free).
    Pauses (back-off, local work) are thin grey lines, a polling operation
    that found nothing new has a dot, and a PE's stay in a critical section
    (``enter("cs")`` .. ``leave("cs")``; ``"read"`` for readers) is a yellow
    band with vertical lines (green, dotted) behind its lane.  ``arrive``/``depart`` notes of barrier
    programs are drawn as triangles, other notes as small ticks.

    Parameters
    ----------
    run : SharedRun
        A traced run (timed, interleaved or threads).
    ax : matplotlib Axes, optional
    start, stop : float, optional
        The time window to draw.  By default the whole run: from 0 to the end
        of the last bar, band or note, with a small margin on each side so
        that the marks at time 0 and at the very end stay inside the axes.  On an axes that shares its x
        axis with others (``plt.subplots(..., sharex=True)``) the default
        window only ever widens the shared limits, so a longer run drawn
        first is not cut off by a shorter one drawn after it.
    pes : iterable of int, optional
        The lanes to draw (default: all PEs).
    cursor : float, optional
        Draw a vertical line at this time (used by :func:`widgets.lock_player`).
    title : str, optional
    sections : tuple of str
        The section names drawn as bands.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from collective_lib.shared_memory import simulate_shared
    >>> from collective_lib.algorithms.sync import lock_demo, cas_spin_lock
    >>> run = simulate_shared(lock_demo, 3, lock=cas_spin_lock, rounds=1)
    >>> ax = memory_timeline(run)
    >>> len([p for p in ax.patches if p.get_gid() == "section"])
    3
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    spans = memory_spans(run)
    lanes = list(range(run.p)) if pes is None else sorted(set(pes))
    row = {pe: i for i, pe in enumerate(lanes)}
    t0 = 0 if start is None else start
    t1 = _data_end(run, spans, sections) if stop is None else stop
    if t1 <= t0:
        raise ValueError(f"the window must have start < stop, got {t0!r} .. {t1!r}")
    ax = new_axes(ax, (6.6, min(9.0, 0.32 * len(lanes) + 1.6)))
    margin = _END_MARGIN * (t1 - t0)
    x_limits = (t0 if start is not None else t0 - margin, t1 if stop is not None else t1 + margin)
    if start is None and stop is None and len(ax.get_shared_x_axes().get_siblings(ax)) > 1 \
            and not ax.get_autoscalex_on():           # a sibling's timeline set the limits
        x_limits = (min(x_limits[0], ax.get_xlim()[0]), max(x_limits[1], ax.get_xlim()[1]))
    colours = _group_colours(spans)
    inside = [s for s in spans if s.pe in row and s.end >= t0 and s.start <= t1]
    for pe, section, a, b in critical_sections(run, sections):
        if pe in row and b >= t0 and a <= t1:
            ax.add_patch(Rectangle((a, row[pe] - 0.46), max(b - a, 1e-9), 0.92, lw=0,
                                   facecolor=SECTION_COLOURS.get(section, "#d6eaf8"),
                                   hatch=_SECTION_HATCH.get(section), edgecolor="0.55",
                                   zorder=0, gid="section"))
    bars = {}
    for s in inside:
        if s.kind == "pause":
            continue
        bars.setdefault((_cell_group(s.cell), s.kind == "hit"), []).append(s)
    for (group, pale), members in sorted(bars.items()):
        verts = [[(s.start, row[s.pe] - 0.3), (s.start, row[s.pe] + 0.3),
                  (s.end, row[s.pe] + 0.3), (s.end, row[s.pe] - 0.3)] for s in members]
        colour, hatch = colours[group]
        ax.add_collection(PolyCollection(verts, facecolors=colour, hatch=hatch or None,
                                         alpha=0.3 if pale else 1.0, edgecolors="white",
                                         linewidths=0 if pale else 0.4, zorder=2,
                                         gid="span:hit" if pale else "span:transfer"))
    pauses = [[(s.start, row[s.pe]), (s.end, row[s.pe])] for s in inside if s.kind == "pause"]
    if pauses:
        ax.add_collection(LineCollection(pauses, colors="0.55", linewidths=1.0, zorder=1,
                                         gid="pause"))
    polls = [((s.start + s.end) / 2, row[s.pe]) for s in inside if s.spin]
    if polls:
        xs, ys = zip(*polls)
        ax.plot(xs, ys, ls="none", marker=".", ms=2.5, color="black", zorder=3, gid="poll")
    for e in run.trace:
        if e.op == "note" and e.pe in row and t0 <= e.time <= t1:
            shape = {"arrive": "v", "depart": "^"}.get(e.cell, "|")
            ax.plot([e.time], [row[e.pe] + (-0.42 if shape == "v" else 0.42)], ls="none",
                    marker=shape, ms=5, color="black", zorder=4, gid=f"note:{e.cell}")
    if cursor is not None:
        ax.axvline(cursor, color=ARROW_COLOUR, lw=1.5, zorder=5, gid="cursor")
    ax.set_xlim(*x_limits)
    ax.set_ylim(len(lanes) - 0.5, -0.5)            # PE 0 at the top
    if len(lanes) <= MAX_LABELLED:
        ax.set_yticks(range(len(lanes)), [f"PE {pe}" for pe in lanes])
    else:
        ax.set_yticks([])
    ax.tick_params(labelsize=FONT)
    ax.set_xlabel("time (units of the coherence model)" if run.mode == "timed"
                  else "step of the interleaving", fontsize=FONT)
    handles = [Patch(facecolor=c, hatch=h or None, edgecolor="white", label=g)
               for g, (c, h) in colours.items()]
    handles += [Patch(color="0.4", alpha=0.3, label="pale: cache hit"),
                Patch(color="0.4", label="solid: transfer"),
                Line2D([], [], color="0.55", lw=1.0, label="pause / back-off"),
                Line2D([], [], ls="none", marker=".", color="black", label="poll, no news")]
    present = {sec for _, sec, _, _ in critical_sections(run, sections)}
    handles += [Patch(facecolor=SECTION_COLOURS.get(sec, "#d6eaf8"), edgecolor="0.55",
                      hatch=_SECTION_HATCH.get(sec), lw=0,
                      label="critical section" if sec == "cs" else f"section {sec!r}")
                for sec in sections if sec in present]
    ax.legend(handles=handles, fontsize=MIN_FONT, loc="upper left", bbox_to_anchor=(1.0, 1.0),
              frameon=False, handlelength=1.2, handletextpad=0.4)
    if title is not None:
        ax.set_title(title, fontsize=TITLE_FONT)
    describe(ax, _timeline_text(run, inside, lanes, (t0, t1), colours, sections))
    return ax


def _timeline_text(run, spans, lanes, window, colours, sections) -> str:
    """Lanes, window, operations by kind and cell, and the stays in each section."""
    memory = [s for s in spans if s.kind != "pause"]
    kinds = {k: sum(1 for s in memory if s.kind == k) for k in ("transfer", "hit", "step")}
    counts = [plural(n, {"transfer": "line transfer", "hit": "cache hit",
                          "step": "step"}[k]) for k, n in kinds.items() if n]
    polls = sum(1 for s in spans if s.spin)
    text = (f"Memory operations of {ranks(lanes)} over time {number(max(window[0], 0))} to "
            f"{number(window[1])}, one lane per PE: {plural(len(memory), 'operation')} on "
            f"{listing(list(colours), 4) if colours else 'no cell'}"
            + (f" ({', '.join(counts)})" if counts else "")
            + (f"; {plural(polls, 'poll')} found nothing new." if polls else "."))
    extra = []
    stays = [(pe, sec, a, b) for pe, sec, a, b in critical_sections(run, sections)
             if pe in set(lanes)]
    for sec in sections:
        mine = [(a, b) for _, s, a, b in stays if s == sec]
        if mine:
            most = max(sum(1 for a, b in mine if a <= t < b) for t, _ in mine)
            name = "the critical section" if sec == "cs" else f"section {sec!r}"
            extra.append(f"{plural(len(mine), 'stay')} in {name}, at most {most} at once.")
    return shorten([text] + extra)


def waits_on(run) -> list:
    """Who waited for whom: every spin on a cell that another PE's write ended.

    PE ``a`` waits on PE ``b`` when ``a`` accessed a cell twice in a row
    (ignoring pauses) and, in between, ``b`` changed it: ``a`` was polling
    the cell and ``b``'s write released it.  A PE that found the value it
    needed at its first look did not wait and is not counted.

    Returns
    -------
    list of Wait
        ``(waiter, writer, cell, times)``, sorted by waiter, writer and cell.

    Examples
    --------
    >>> from collective_lib.shared_memory import simulate_shared
    >>> from collective_lib.algorithms.sync import barrier_demo, binomial_barrier
    >>> run = simulate_shared(barrier_demo, 4, barrier=binomial_barrier, epochs=1)
    >>> sorted({(w.waiter, w.writer) for w in waits_on(run)})
    [(0, 1), (0, 2), (1, 0), (2, 0), (2, 3), (3, 0)]
    """
    _check_shared_run(run)
    last_cell = {}                 # pe -> cell of its previous memory operation
    version = {}                   # cell -> (number of changes, last writer)
    looked = {}                    # pe -> version of its cell when it last looked
    counts = {}
    for e in run.trace:
        if e.op not in _MEMORY_OP_NAMES:
            continue
        changes = e.op in ("write", "fetch_add") or (e.op == "cas" and e.value is True)
        before = version.get(e.cell, (0, None))
        if last_cell.get(e.pe) == e.cell and looked.get(e.pe) != before[0] \
                and before[1] is not None and before[1] != e.pe:
            key = (e.pe, before[1], e.cell)
            counts[key] = counts.get(key, 0) + 1
        if changes:
            before = (before[0] + 1, e.pe)
            version[e.cell] = before
        last_cell[e.pe] = e.cell
        looked[e.pe] = before[0]
    return [Wait(a, b, cell, n) for (a, b, cell), n in
            sorted(counts.items(), key=lambda kv: (kv[0][0], kv[0][1], cell_name(kv[0][2])))]


def wait_graph(run, *, ax=None, layout="binomial", title=None):
    """Draw :func:`waits_on` as arrows from the waiting PE to the PE it waited for.

    A solid red arrow is a wait on a cell that only this PE polled (point to
    point, like a parent waiting for one child); a dashed grey arrow is a
    wait on a cell that several PEs polled at once (a broadcast through one
    cache line, like everyone waiting for the root).  Arrows are wider the
    more often the wait happened.

    Parameters
    ----------
    run : SharedRun
    ax : matplotlib Axes, optional
    layout : {"binomial", "circle"}
        ``"binomial"`` puts PE i at x = i, one level down per 1 bit of i, so
        the binomial tree (thin grey lines) reads top down like Sanders
        et al.'s Fig. 13.2; ``"circle"`` puts the PEs on a circle.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from collective_lib.shared_memory import simulate_shared
    >>> from collective_lib.algorithms.sync import barrier_demo, simple_barrier
    >>> run = simulate_shared(barrier_demo, 4, barrier=simple_barrier, epochs=1)
    >>> ax = wait_graph(run, layout="circle")
    >>> len([a for a in ax.patches if a.get_gid() == "wait:broadcast"])
    3
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    waits = waits_on(run)
    p = run.p
    if layout == "binomial":
        xy = binomial_positions(p)
        xy[:, 1] *= 1.2
    elif layout == "circle":
        angle = np.pi / 2 - 2 * np.pi * np.arange(p) / max(p, 1)
        xy = np.stack([np.cos(angle), np.sin(angle)], axis=1) * max(1.0, p / (2 * np.pi))
    else:
        raise ValueError(f"layout must be 'binomial' or 'circle', got {layout!r}")
    lay = Layout(xy, 0.28, pe_font_size(p))
    depth = int(-xy[:, 1].min() / 1.2) if layout == "binomial" else 0
    ax = new_axes(ax, (max(3.0, 0.75 * p + 1.0) if layout == "binomial" else 4.5,
                        max(2.4, 0.9 * depth + 1.6) if layout == "binomial" else 4.5))
    if layout == "binomial":
        edges = [(xy[binomial_parent(i)], xy[i]) for i in range(1, p)]
        ax.add_collection(LineCollection(edges, colors=LINK_COLOUR, linewidths=1.0, zorder=0,
                                         gid="tree"))
    pollers = {}
    for w in waits:
        pollers.setdefault(w.cell, set()).add(w.waiter)
    most = max((w.times for w in waits), default=1)
    for w in waits:
        broadcast = len(pollers[w.cell]) > 1
        a, b = xy[w.waiter], xy[w.writer]
        bend = 0.25 if (broadcast or layout == "circle") else 0.0
        ax.add_patch(FancyArrowPatch(
            a, b, arrowstyle="-|>", mutation_scale=9, shrinkA=11, shrinkB=11,
            connectionstyle=f"arc3,rad={bend}",
            color="0.6" if broadcast else ARROW_COLOUR, ls="--" if broadcast else "-",
            lw=(0.7 if broadcast else 1.0) + 1.5 * w.times / most, zorder=2 if broadcast else 3,
            gid="wait:broadcast" if broadcast else "wait:single"))
    draw_nodes(ax, lay)
    frame_axes(ax, lay)
    ax.legend(handles=[Line2D([], [], color=ARROW_COLOUR, label="waits for a cell only it polls"),
                       Line2D([], [], color="0.55", ls="--",
                              label="waits for a cell many PEs poll")],
              fontsize=FONT, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=1,
              frameon=False)
    if title is not None:
        ax.set_title(title, fontsize=TITLE_FONT)
    describe(ax, _wait_text(waits, pollers, p))
    return ax


def _wait_text(waits, pollers, p) -> str:
    """Who waited for whom, with the cells many PEs polled named as broadcasts."""
    if not waits:
        return f"{plural(p, 'PE')}: no PE waited for another."
    head = (f"Who waited for whom among {plural(p, 'PE')}: an arrow from each waiting PE to "
            f"the PE whose write ended its wait, {plural(len(waits), 'wait')} in all.")
    single = {}
    for w in waits:
        if len(pollers[w.cell]) == 1:
            single.setdefault(w.waiter, []).append(w.writer)
    broadcast = {}
    for w in waits:
        if len(pollers[w.cell]) > 1:
            broadcast.setdefault(w.writer, set()).add(w.waiter)
    parts = [(f"PE {a} waited for {listing(sorted(set(b)))} alone.",)
             for a, b in sorted(single.items())]
    parts += [(f"{ranks(sorted(who))} waited together (dashed) for PE {b}.",)
              for b, who in sorted(broadcast.items())]
    return shorten([head] + parts)
