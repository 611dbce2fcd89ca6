"""Time lines of a run: who sends to whom and when, PE by PE.

:func:`space_time` draws the space-time diagram of a traced run: PEs top to
bottom, time left to right, every transfer an arrow; :func:`space_time_stack`
draws several runs one above the other on a common time axis.
"""
from __future__ import annotations

from matplotlib.collections import LineCollection
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch, Patch

from ..wording import number, plural, ranks
from .descriptions import describe
from ._drawing import new_axes
from .style import FONT, HATCHES, MAX_LABELLED, PALETTE, TEXT_WIDTH, TITLE_FONT
from ._runs import check_traced

__all__ = ["space_time", "space_time_stack"]


def space_time(run, *, ax=None, title=None):
    """A space-time diagram: PEs top to bottom, time left to right.

    Every transfer is an arrow from (start, sender) to (end, receiver).  Above
    each PE's line a blue bar marks when its send port is busy, below it a
    hatched orange bar when its receive port is; a dashed line marks the total
    time.

    Parameters
    ----------
    run : Run
        A traced run.
    ax : matplotlib Axes, optional
    title : str, optional
        Above the diagram (none by default).

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from collective_lib import catalog
    >>> run = catalog()["linear_pipeline_broadcast"].simulate(p=4, m=3, k=3)
    >>> ax = space_time(run)
    >>> len([a for a in ax.patches if a.get_gid() == "message"]) == len(run.messages)
    True
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    check_traced(run)
    ax = new_axes(ax, (7.0, min(9.0, max(2.6, 0.28 * run.p + 1.4))))
    _busy_bars(ax, run)
    _message_lines(ax, run)
    end = run.time if run.time > 0 else 1.0
    ax.axvline(run.time, color="black", ls="--", lw=1, zorder=1)
    ax.text(run.time, 1.01, f"T = {run.time:g}", fontsize=FONT, va="bottom", ha="center",
            transform=ax.get_xaxis_transform())
    ax.set_xlim(0, end * 1.08)
    ax.set_ylim(run.p - 0.5, -0.9)            # PE 0 at the top
    if run.p <= MAX_LABELLED:
        ax.set_yticks(range(run.p))
    ax.tick_params(labelsize=FONT)
    ax.set_xlabel("time (units of the model)", fontsize=FONT)
    ax.set_ylabel("PE", fontsize=FONT)
    ax.legend(handles=[Patch(facecolor=_SEND, alpha=0.35, label="sending (above)"),
                       Patch(facecolor=_RECEIVE, alpha=0.35, hatch=_RECEIVE_HATCH,
                             label="receiving (below)"),
                       Line2D([], [], color="0.25", lw=0.8, marker=">", ms=4,
                              markevery=[1], label="transfer")],
              fontsize=FONT, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    if title is not None:
        ax.set_title(title, fontsize=TITLE_FONT, pad=16)      # above the "T = ..."
    describe(ax, _space_time_text(run))
    return ax


def space_time_stack(runs, *, titles):
    """The space-time diagrams of several runs, one above the other, on one time axis.

    So that the runs' times compare by eye: every panel gets the time axis of
    the longest run.  Each panel's description says which it is.

    Parameters
    ----------
    runs : sequence of Run
        Traced runs.
    titles : sequence of str
        One per run.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from collective_lib import catalog
    >>> runs = [catalog()[name].simulate(p=4) for name in ("naive_broadcast",
    ...                                                     "binomial_broadcast")]
    >>> fig = space_time_stack(runs, titles=["naive", "binomial"])
    >>> [ax.get_title() for ax in fig.axes[:2]], fig.axes[0].get_xlim() == fig.axes[1].get_xlim()
    (['naive', 'binomial'], True)
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    import matplotlib.pyplot as plt      # only here: pyplot makes a notebook show the figure
    runs, titles = list(runs), list(titles)
    if not runs or len(runs) != len(titles):
        raise ValueError(f"space_time_stack needs one title per run, got {len(runs)} runs "
                         f"and {len(titles)} titles")
    fig, axes = plt.subplots(len(runs), 1, figsize=(min(8.0, TEXT_WIDTH), 3.0 * len(runs)),
                             squeeze=False)
    axes = list(axes[:, 0])
    for i, (ax, run, title) in enumerate(zip(axes, runs, titles)):
        space_time(run, ax=ax, title=title)
        where = ("on top" if i == 0 else "at the bottom" if i == len(runs) - 1
                 else f"panel {i + 1} from the top")
        describe(ax, f"This is the {title}, drawn {where}"
                 + (", on the same time axis." if i else "."), append=True)
    longest = max(axes, key=lambda ax: ax.get_xlim()[1])
    for ax in axes:
        ax.set_xlim(longest.get_xlim())
    fig.tight_layout()
    return fig


_SEND, _RECEIVE, _RECEIVE_HATCH = PALETTE[0], PALETTE[3], HATCHES[1]


def _space_time_text(run) -> str:
    """Messages, makespan and who finishes last."""
    text = (f"Space-time diagram of {plural(len(run.messages), 'message')} among "
            f"{plural(run.p, 'PE')}, time to the right; the run takes T = {number(run.time)}.")
    if run.finish_times and run.time > 0:
        last = [pe for pe, t in enumerate(run.finish_times) if t == max(run.finish_times)]
        text += f" {ranks(last)} finish{'es' * (len(last) == 1)} last."
    if run.messages:
        final = max(run.messages, key=lambda m: (m.end, -m.dst))
        text += (f" The last transfer, {final.src} -> {final.dst}, ends at "
                 f"{number(final.end)}.")
    return text


def _busy_bars(ax, run) -> None:
    sends = [[] for _ in range(run.p)]
    recvs = [[] for _ in range(run.p)]
    for m in run.messages:
        sends[m.src].append((m.start, m.end - m.start))
        recvs[m.dst].append((m.start, m.end - m.start))
    for pe in range(run.p):
        ax.axhline(pe, color="0.85", lw=0.6, zorder=0)
        if sends[pe]:
            ax.broken_barh(sends[pe], (pe - 0.34, 0.3), facecolor=_SEND, alpha=0.35, lw=0,
                           zorder=1)
        if recvs[pe]:
            ax.broken_barh(recvs[pe], (pe + 0.04, 0.3), facecolor=_RECEIVE, alpha=0.35, lw=0,
                           hatch=_RECEIVE_HATCH, zorder=1)


def _message_lines(ax, run) -> None:
    """Arrows for up to 400 messages; beyond that plain lines, which draw much faster."""
    if len(run.messages) > 400:
        ax.add_collection(LineCollection([[(m.start, m.src), (m.end, m.dst)]
                                          for m in run.messages], colors="0.25", lw=0.6))
        return
    for m in run.messages:
        ax.add_patch(FancyArrowPatch((m.start, m.src), (m.end, m.dst), arrowstyle="-|>",
                                     mutation_scale=8, color="0.25", lw=0.8, zorder=2,
                                     shrinkA=0, shrinkB=0, gid="message"))
