"""Pictures of networks, runs and costs (matplotlib).

* :func:`draw_network` -- a topology, optionally coloured by link load;
* :func:`draw_step`, :func:`draw_steps` -- the transfers of one step as arrows
  labelled "step (source)", in the style of Grama Fig. 4.9;
* :func:`space_time` -- who sends to whom and when, PE by PE;
* :func:`link_load_map` -- how many transfers crossed each directed link;
* :func:`cost_curves` -- closed forms as lines, simulated times as markers;
* :func:`holdings_table` -- which PEs hold the data after each step.

Every drawing function takes an optional ``ax``; without one it opens a new
figure through pyplot (so that a notebook shows it) and returns the Axes.
Nothing is shown or printed here.  Drawings depend only on their arguments,
so the same run always gives the same picture.
"""
from __future__ import annotations

from numbers import Number
from typing import NamedTuple

import numpy as np
from matplotlib.collections import LineCollection
from matplotlib.colors import ListedColormap, Normalize
from matplotlib.lines import Line2D
from matplotlib.patches import Circle, FancyArrowPatch, Patch
from matplotlib.path import Path

__all__ = ["draw_network", "draw_step", "draw_steps", "space_time", "link_load_map",
           "cost_curves", "holdings_table", "Holding", "optimal_params"]

LINK_COLOUR = "#c8c8c8"
ARROW_COLOUR = "#c0392b"
HOLDER_COLOUR = "#2e5d8c"
LINE_STYLES = ("-", "--", "-.", ":")
#: Above this many PEs a fully connected network is drawn without its links.
MAX_DRAWN_CLIQUE = 8
#: Above this many PEs node numbers and arrow labels are left out by default.
MAX_LABELLED = 32


# -- layout -------------------------------------------------------------------------------

class _Layout(NamedTuple):
    xy: np.ndarray      # (p, 2) drawing coordinates, typical neighbour distance 1
    radius: float       # node radius in the same units
    font: float         # node-label font size in points (0: no labels)


def _nearest_distances(xy: np.ndarray) -> np.ndarray:
    """Distance from each point to its nearest other point (in row blocks, to bound memory)."""
    out = np.empty(len(xy))
    for lo in range(0, len(xy), 256):
        block = xy[lo:lo + 256]
        d = np.hypot(block[:, None, 0] - xy[None, :, 0], block[:, None, 1] - xy[None, :, 1])
        d[np.arange(len(block)), np.arange(lo, lo + len(block))] = np.inf
        out[lo:lo + 256] = d.min(axis=1)
    return out


def _font_size(p: int) -> float:
    if p > MAX_LABELLED:
        return 0.0
    return 9.0 if p <= 8 else 8.0 if p <= 16 else 6.5


def _layout(network) -> _Layout:
    """Scale the network's own positions so that neighbours sit about one unit apart."""
    pos = network.positions()
    xy = np.array([pos[i] for i in range(network.p)], dtype=float).reshape(-1, 2)
    if network.p == 1:
        return _Layout(xy, 0.3, _font_size(1))
    near = _nearest_distances(xy)
    scale = 1.0 / float(np.median(near))
    return _Layout(xy * scale, min(0.3, 0.45 * float(near.min()) * scale), _font_size(network.p))


def _figsize(lay: _Layout, extra_width: float = 0.0) -> tuple:
    """A figure size that keeps about 0.9 inch per unit, within a page."""
    dx, dy = np.ptp(lay.xy, axis=0) + 1.2
    inch = min(0.9, 9.0 / dx, 7.0 / dy)
    return (max(2.8, dx * inch) + extra_width, max(2.4, dy * inch + 0.4))


def _new_axes(ax, figsize):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt      # only here: pyplot makes a notebook show the figure
    return plt.subplots(figsize=figsize)[1]


def _frame(ax, lay: _Layout) -> None:
    """Equal aspect, no axis lines, and room for the nodes at the border."""
    pad = 0.6
    (x0, y0), (x1, y1) = lay.xy.min(axis=0) - pad, lay.xy.max(axis=0) + pad
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_aspect("equal", adjustable="box")
    ax.set_axis_off()


# -- nodes and links ----------------------------------------------------------------------

def _draws_links(network) -> bool:
    return not (getattr(network, "direct", False) and network.p > MAX_DRAWN_CLIQUE)


def _undirected(network) -> list:
    """Each link once, as a sorted pair, in a fixed order."""
    return sorted({(min(u, v), max(u, v)) for u, v in network.links()})


def _crosses_a_node(lay: _Layout, u: int, v: int) -> bool:
    """Whether the straight line from u to v passes through another PE's circle."""
    a, b = lay.xy[u], lay.xy[v]
    d = b - a
    t = np.clip((lay.xy - a) @ d / max(float(d @ d), 1e-12), 0.0, 1.0)
    gap = np.hypot(*(lay.xy - (a + t[:, None] * d)).T)
    gap[[u, v]] = np.inf
    return bool(gap.min() < lay.radius)


def _draw_links(ax, network, lay: _Layout) -> None:
    """Light lines for the links; a link that would run through a PE (wrap-around) curves."""
    if not _draws_links(network):
        return
    straight = []
    for u, v in _undirected(network):
        if _crosses_a_node(lay, u, v):
            ax.add_patch(FancyArrowPatch(lay.xy[u], lay.xy[v], arrowstyle="-",
                                         connectionstyle="arc3,rad=0.25", color=LINK_COLOUR,
                                         lw=1.0, zorder=0))
        else:
            straight.append((lay.xy[u], lay.xy[v]))
    ax.add_collection(LineCollection(straight, colors=LINK_COLOUR, linewidths=1.0, zorder=0))


def _draw_nodes(ax, lay: _Layout, *, filled=(), ringed=(), labels=True) -> None:
    """Circles with the PE numbers; ``filled`` PEs dark, ``ringed`` PEs with a red edge."""
    filled, ringed = set(filled), set(ringed)
    for pe, (x, y) in enumerate(lay.xy):
        dark = pe in filled
        edge = ARROW_COLOUR if pe in ringed else "#333333"
        ax.add_patch(Circle((x, y), lay.radius, facecolor=HOLDER_COLOUR if dark else "white",
                            edgecolor=edge, lw=1.8 if pe in ringed else 1.0, zorder=4,
                            gid="node"))
        if labels and lay.font:
            ax.text(x, y, str(pe), ha="center", va="center", fontsize=lay.font, zorder=5,
                    color="white" if dark else "black", gid="node-label")


def _offset_path(points: np.ndarray, offset: float, shrink: float) -> np.ndarray:
    """The polyline through ``points`` moved ``offset`` to the right of its direction.

    Two transfers in opposite directions over the same link thus never overlap.
    Both ends are pulled in by ``shrink`` so that the line stops at the node circles.
    """
    seg = np.diff(points, axis=0)
    seg /= np.maximum(np.hypot(seg[:, 0], seg[:, 1]), 1e-12)[:, None]
    right = np.stack([seg[:, 1], -seg[:, 0]], axis=1)
    normals = np.vstack([right[:1], (right[:-1] + right[1:]) / 2, right[-1:]])
    out = points + offset * normals
    out[0] += shrink * seg[0]
    out[-1] -= shrink * seg[-1]
    return out


def _point_along(verts: np.ndarray, fraction: float) -> tuple:
    """The point at ``fraction`` of the polyline's length, and the direction there."""
    seg = np.diff(verts, axis=0)
    lengths = np.hypot(seg[:, 0], seg[:, 1])
    target = fraction * lengths.sum()
    for i, ell in enumerate(lengths):
        if target <= ell or i == len(lengths) - 1:
            t = min(target / ell, 1.0) if ell else 0.0
            return verts[i] + t * seg[i], seg[i] / (ell or 1.0)
        target -= ell


# -- draw_network -------------------------------------------------------------------------

def _load_colours():
    import matplotlib
    base = matplotlib.colormaps["YlOrRd"]
    # Drop the palest yellows: a link with load 1 must stay visible on white.
    return ListedColormap(base(np.linspace(0.3, 1.0, 256)), name="link_load")


def _draw_link_load(ax, network, lay: _Layout, link_load: dict) -> None:
    """Each directed link as an arrow on the right of its direction, coloured by load."""
    top = max(link_load.values(), default=0)
    norm, cmap = Normalize(vmin=0, vmax=max(top, 1)), _load_colours()
    direct = getattr(network, "direct", False)
    links = sorted(link_load) if direct else sorted(set(network.links()) | set(link_load))
    for u, v in links:
        load = link_load.get((u, v), 0)
        if load == 0 and direct:
            continue
        verts = _offset_path(lay.xy[[u, v]], 0.35 * lay.radius, lay.radius)
        if load:
            style = dict(color=cmap(norm(load)), lw=1.2 + 2.0 * load / norm.vmax,
                         arrowstyle="-|>", mutation_scale=8, zorder=2)
        else:
            style = dict(color=LINK_COLOUR, lw=0.8, arrowstyle="-", zorder=1)
        ax.add_patch(FancyArrowPatch(path=Path(verts), gid="link", **style))
    from matplotlib.cm import ScalarMappable
    from matplotlib.ticker import MaxNLocator
    bar = ax.figure.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, shrink=0.8, pad=0.02)
    bar.set_label("transfers over the link")
    bar.locator = MaxNLocator(integer=True)
    bar.update_ticks()


def draw_network(network, *, ax=None, node_labels=True, link_load=None, title=None):
    """Draw a network: PEs as numbered circles, links as light lines.

    Parameters
    ----------
    network : Network
        Any network of :mod:`collective_lib.networks`; PEs go to
        ``network.positions()``, rescaled so that neighbours are about one unit
        apart.  A fully connected network with more than 8 PEs is drawn
        without its links (they would hide everything else).
    ax : matplotlib Axes, optional
        Where to draw; a new figure when omitted.
    node_labels : bool
        Write the PE numbers in the circles (always off above 32 PEs).
    link_load : dict, optional
        ``{(u, v): count}`` such as ``Run.link_load``.  Each directed link is
        then an arrow drawn slightly to the right of its direction, so both
        directions of a link show, coloured by its count; a colour bar gives
        the scale, from 0 to the largest count.  Links never used are grey.
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from collective_lib import Hypercube
    >>> ax = draw_network(Hypercube(3), title="3-cube")
    >>> len([c for c in ax.patches if c.get_gid() == "node"])
    8
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    lay = _layout(network)
    ax = _new_axes(ax, _figsize(lay, 1.2 if link_load is not None else 0.0))
    if link_load is None:
        _draw_links(ax, network, lay)
    else:
        _draw_link_load(ax, network, lay, link_load)
    _draw_nodes(ax, lay, labels=node_labels)
    _frame(ax, lay)
    if title:
        ax.set_title(title, fontsize=10)
    return ax


# -- steps --------------------------------------------------------------------------------

def _is_value(payload) -> bool:
    """Payloads compared by value, not identity (small ints and strings are shared objects)."""
    return payload is None or isinstance(payload, (Number, str, bytes))


def _origin_finder(run):
    """A function giving, for a message, the PE that first sent that same payload object.

    A broadcast forwards the root's object unchanged, so its origin is the root;
    a payload that is a plain value (number, string, None) or a new object is
    credited to its own sender.
    """
    first = {}
    for msg in sorted(run.messages, key=lambda m: m.start):    # stable: issue order on ties
        if not _is_value(msg.payload):
            first.setdefault(id(msg.payload), msg.src)

    def origin(msg):
        return msg.src if _is_value(msg.payload) else first.get(id(msg.payload), msg.src)
    return origin


def _check_traced(run) -> int:
    """The number of steps; a run simulated without its trace has nothing to show."""
    if not run.messages and run.link_load:
        raise ValueError("the run has no message trace; simulate it with trace=True")
    return len(run.step_starts())


def _holders_at(run, t: float, senders) -> set:
    """PEs holding data at time t: who sent or received before t, plus ``senders``."""
    return set(run.informed(by=t)) | set(senders)


def draw_step(run, step, *, ax=None, label=None):
    """Draw the transfers that start in step ``step`` of a run, as in Grama Fig. 4.9.

    Each transfer is an arrow along its routed path, drawn a little to the
    right of its direction so that opposite transfers over one link stay
    apart, and labelled "step (origin)": ``origin`` is the PE that first sent
    that payload object (for a broadcast: the root), else the sender.  PEs
    that hold data when the step starts are filled; the receivers of this
    step have a red edge.

    Parameters
    ----------
    run : Run
        A traced run (``simulate(..., trace=True)``).
    step : int
        From 1 to ``len(run.step_starts())``; see :meth:`Run.step`.
    ax : matplotlib Axes, optional
    label : callable or False, optional
        ``label(message, step) -> str`` replaces the default label; ``False``
        draws no labels.  Above 32 PEs the default is no labels.

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from collective_lib import catalog
    >>> run = catalog()["binomial_broadcast"].simulate(p=8)
    >>> ax = draw_step(run, 2)
    >>> sorted(t.get_text() for t in ax.texts if t.get_gid() == "label")
    ['2 (0)', '2 (0)']
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    total = _check_traced(run)
    messages = run.step(step)
    lay = _layout(run.network)
    ax = _new_axes(ax, _figsize(lay))
    if label is None and run.p <= MAX_LABELLED:
        origin = _origin_finder(run)
        label = lambda msg, s: f"{s} ({origin(msg)})"    # noqa: E731
    _draw_links(ax, run.network, lay)
    holders = _holders_at(run, messages[0].start, (m.src for m in messages))
    _draw_nodes(ax, lay, filled=holders, ringed={m.dst for m in messages})
    font = max(lay.font - 1, 5.5)
    for msg in messages:
        _draw_transfer(ax, lay, msg, label(msg, step) if label else None, font)
    _frame(ax, lay)
    ax.set_title(f"step {step} of {total}", fontsize=10)
    return ax


def _draw_transfer(ax, lay: _Layout, msg, text, font) -> None:
    """One arrow along the message's path, and its label beside the arrow."""
    nodes = [msg.src] + [v for _, v in msg.path]
    verts = _offset_path(lay.xy[nodes], 0.35 * lay.radius, lay.radius)
    ax.add_patch(FancyArrowPatch(path=Path(verts), arrowstyle="-|>", mutation_scale=11,
                                 color=ARROW_COLOUR, lw=1.5, zorder=3, gid="message"))
    if text:
        # Slightly before the middle and further right: labels of opposite transfers separate.
        (x, y), d = _point_along(verts, 0.45)
        x, y = x + 0.3 * lay.radius * d[1], y - 0.3 * lay.radius * d[0]
        ax.text(x, y, text, fontsize=font, ha="center", va="center", zorder=6, gid="label",
                color=ARROW_COLOUR,
                bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.85))


def draw_steps(run, steps=None, *, cols=4, label=None):
    """A grid of :func:`draw_step` panels, one per step (all steps by default).

    Parameters
    ----------
    run : Run
        A traced run.
    steps : iterable of int, optional
    cols : int
        Panels per row.
    label : callable or False, optional
        As in :func:`draw_step`.

    Returns
    -------
    matplotlib.figure.Figure

    Examples
    --------
    >>> from collective_lib import catalog
    >>> run = catalog()["binomial_broadcast"].simulate(p=4)
    >>> fig = draw_steps(run)
    >>> [ax.get_title() for ax in fig.axes if ax.get_title()]
    ['step 1 of 2', 'step 2 of 2']
    >>> import matplotlib.pyplot as plt; plt.close(fig)
    """
    import matplotlib.pyplot as plt
    total = _check_traced(run)
    steps = list(range(1, total + 1) if steps is None else steps)
    if not steps:
        raise ValueError("the run has no steps to draw (no message was sent)")
    if not isinstance(cols, int) or cols < 1:
        raise ValueError(f"cols must be a positive integer, got {cols!r}")
    cols = min(cols, len(steps))
    rows = -(-len(steps) // cols)
    w, h = _figsize(_layout(run.network))
    scale = min(1.0, 3.2 / w)                   # panels about 3 inches wide
    fig, axes = plt.subplots(rows, cols, figsize=(cols * w * scale, rows * h * scale),
                             squeeze=False)
    for ax in axes.flat[len(steps):]:
        ax.set_axis_off()
    for ax, s in zip(axes.flat, steps):
        draw_step(run, s, ax=ax, label=label)
    fig.tight_layout()
    return fig


# -- space-time ---------------------------------------------------------------------------

def space_time(run, *, ax=None):
    """A space-time diagram: PEs top to bottom, time left to right.

    Every transfer is an arrow from (start, sender) to (end, receiver).  Above
    each PE's line a blue bar marks when its send port is busy, below it an
    orange bar when its receive port is; a dashed line marks the total time.

    Parameters
    ----------
    run : Run
        A traced run.
    ax : matplotlib Axes, optional

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
    _check_traced(run)
    ax = _new_axes(ax, (7.0, min(9.0, max(2.6, 0.28 * run.p + 1.4))))
    _busy_bars(ax, run)
    _message_lines(ax, run)
    end = run.time if run.time > 0 else 1.0
    ax.axvline(run.time, color="black", ls="--", lw=1, zorder=1)
    ax.text(run.time, 1.01, f"T = {run.time:g}", fontsize=8, va="bottom", ha="center",
            transform=ax.get_xaxis_transform())
    ax.set_xlim(0, end * 1.08)
    ax.set_ylim(run.p - 0.5, -0.9)            # PE 0 at the top
    if run.p <= MAX_LABELLED:
        ax.set_yticks(range(run.p))
    ax.tick_params(labelsize=8)
    ax.set_xlabel("time (units of the model)")
    ax.set_ylabel("PE")
    ax.legend(handles=[Patch(color="C0", alpha=0.35, label="sending"),
                       Patch(color="C1", alpha=0.35, label="receiving"),
                       Line2D([], [], color="0.25", lw=0.8, marker=">", ms=4,
                              markevery=[1], label="transfer")],
              fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    return ax


def _busy_bars(ax, run) -> None:
    sends = [[] for _ in range(run.p)]
    recvs = [[] for _ in range(run.p)]
    for m in run.messages:
        sends[m.src].append((m.start, m.end - m.start))
        recvs[m.dst].append((m.start, m.end - m.start))
    for pe in range(run.p):
        ax.axhline(pe, color="0.85", lw=0.6, zorder=0)
        if sends[pe]:
            ax.broken_barh(sends[pe], (pe - 0.34, 0.3), color="C0", alpha=0.35, lw=0, zorder=1)
        if recvs[pe]:
            ax.broken_barh(recvs[pe], (pe + 0.04, 0.3), color="C1", alpha=0.35, lw=0, zorder=1)


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


# -- link load ----------------------------------------------------------------------------

def link_load_map(run, *, ax=None):
    """The run's network with every directed link coloured by how many transfers crossed it.

    Parameters
    ----------
    run : Run
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.axes.Axes

    Examples
    --------
    >>> from collective_lib import catalog, Ring
    >>> run = catalog()["naive_broadcast"].simulate(p=8, network=Ring(8))
    >>> ax = link_load_map(run)
    >>> ax.get_title()
    'link load: at most 4 transfers on one link'
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    top = run.max_link_load()
    return draw_network(run.network, ax=ax, link_load=run.link_load,
                        title=f"link load: at most {top} transfer{'s' * (top != 1)} on one link")


# -- cost curves --------------------------------------------------------------------------

def optimal_params(entry, p, m, model) -> dict:
    """``{"k": entry.optimal_k(...)}`` for a pipelined entry, ``{}`` for any other.

    Pass it as ``params=`` to :func:`cost_curves` to draw every pipelined
    algorithm at its best number of packets.
    """
    if entry.optimal_k is None:
        return {}
    return {"k": entry.optimal_k(p, m, model)}


def _entry_model(entry, model):
    """The entry's own port model, with the times (and routing) of ``model`` when given."""
    from .model import CostModel
    if model is None:
        return entry.default_model()
    return CostModel(model.ts, model.tw, model.th, ports=entry.ports, routing=model.routing)


def _entry_params(entry, params, p, m, model) -> dict:
    given = params(entry, p, m, model) if callable(params) else dict(params or {})
    # An entry only gets the parameters its program takes (k means nothing to a binomial tree).
    return {key: value for key, value in given.items() if key in entry.params}


def _curve(entry, vary, values, m, p, model, params, simulate, seed):
    """(xs, predicted, simulated xs, simulated times) for one entry."""
    xs, predicted, sim_x, sim_t = [], [], [], []
    for x in values:
        pp, mm = (x, m) if vary == "p" else (p, x)
        if not entry.valid(pp):
            continue
        kw = _entry_params(entry, params, pp, mm, model)
        xs.append(x)
        predicted.append(entry.predict(pp, mm, model, **kw))
        if simulate is True or (callable(simulate) and simulate(entry, pp, mm, kw)):
            sim_t.append(entry.simulate(pp, mm, model=model, seed=seed, trace=False, **kw).time)
            sim_x.append(x)
    return xs, predicted, sim_x, sim_t


def _resolve(entries) -> list:
    from .catalog import catalog
    if isinstance(entries, str):
        entries = [entries]
    table = catalog()
    out = []
    for e in entries:
        if isinstance(e, str):
            if e not in table:
                raise ValueError(f"unknown algorithm {e!r}; the catalog has {sorted(table)}")
            e = table[e]
        out.append(e)
    return out


def cost_curves(entries, *, vary="p", values, m=1, p=None, model=None, params=None,
                simulate=True, ax=None, seed=0):
    """Closed-form costs as lines and simulated times as markers of the same colour.

    Parameters
    ----------
    entries : iterable of catalog entries or names
    vary : {"p", "m"}
        The quantity on the x axis.
    values : iterable of int
        The values of p (or of m).  An entry is drawn only at the values of p
        it is valid for (a hypercube algorithm only at powers of two), and not
        at all when there is none.
    m : int
        Message length in words when ``vary="p"``.
    p : int
        Number of PEs when ``vary="m"`` (required then).
    model : CostModel, optional
        Its ``ts``, ``tw``, ``th`` and routing are used for every entry, but
        each entry keeps **its own port model** (``entry.ports``), the one its
        closed form assumes.  Default: each entry's ``default_model()``
        (ts = 1, tw = 0, so times count steps).
    params : dict or callable, optional
        Extra program parameters, e.g. ``{"k": 4}``; an entry receives only
        those it takes.  A callable ``params(entry, p, m, model) -> dict`` is
        asked at every point, e.g. :func:`optimal_params`.
    simulate : bool or callable
        Also simulate every point (untraced) and draw the times as markers.
        A callable ``simulate(entry, p, m, params) -> bool`` picks the points
        worth simulating (to keep interactive use fast).
    ax : matplotlib Axes, optional
    seed : int
        Seed of the random inputs.

    Returns
    -------
    matplotlib.axes.Axes
        One line per drawn entry (``gid`` ``"<name>:formula"``) and one marker
        series (``gid`` ``"<name>:simulated"``).  An entry whose formula is an
        upper bound, not an equality, has "(bound)" in its legend label.

    Examples
    --------
    >>> ax = cost_curves(["binomial_broadcast", "naive_broadcast"], values=range(1, 9))
    >>> [line.get_label() for line in ax.get_lines() if line.get_gid().endswith("formula")]
    ['binomial_broadcast', 'naive_broadcast']
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    if vary not in ("p", "m"):
        raise ValueError(f"vary must be 'p' or 'm', got {vary!r}")
    if vary == "m" and p is None:
        raise ValueError("cost_curves(vary='m') needs the number of PEs p")
    values = [int(v) for v in values]
    ax = _new_axes(ax, (7.0, 4.2))
    for i, entry in enumerate(_resolve(entries)):
        emodel = _entry_model(entry, model)
        xs, predicted, sim_x, sim_t = _curve(entry, vary, values, m, p, emodel, params,
                                             simulate, seed)
        if not xs:
            continue
        colour = f"C{i % 10}"
        name = entry.name if entry.exact else f"{entry.name} (bound)"
        # Dashes differ too, so that equal formulas (binomial tree, hypercube) both show.
        ax.plot(xs, predicted, LINE_STYLES[i % len(LINE_STYLES)], color=colour, lw=1.5,
                label=name, gid=f"{entry.name}:formula")
        if simulate:
            ax.plot(sim_x, sim_t, "o", color=colour, ms=4, label="_nolegend_",
                    gid=f"{entry.name}:simulated")
    _finish_cost_axes(ax, vary, values, m, p, model, simulate)
    return ax


def _finish_cost_axes(ax, vary, values, m, p, model, simulate) -> None:
    if values and min(values) > 0 and max(values) / min(values) >= 100:
        # Over two decades a log-log plot shows the growth rates (log p, p, ...) best;
        # a time of 0 (one PE) is left out there.
        ax.set_xscale("log", base=2 if vary == "p" else 10)
        ax.set_yscale("log", nonpositive="mask")
    ax.set_xlabel("p (number of PEs)" if vary == "p" else "m (words)")
    ax.set_ylabel("time (units of the model)")
    times = "ts = 1, tw = 0" if model is None else f"ts = {model.ts:g}, tw = {model.tw:g}"
    fixed = f"m = {m}" if vary == "p" else f"p = {p}"
    ax.set_title(f"{fixed}, {times}", fontsize=10)
    handles, labels = ax.get_legend_handles_labels()
    if simulate and handles:
        handles.append(Line2D([], [], ls="none", marker="o", color="0.3", ms=4))
        labels.append("simulated")
    if handles:
        ax.legend(handles, labels, fontsize=8, frameon=False)
    ax.grid(alpha=0.3)


# -- holdings -----------------------------------------------------------------------------

class Holding(NamedTuple):
    """One row of :func:`holdings_table`."""
    step: int
    start: float
    holders: list


def holdings_table(run, *, pes=None) -> list:
    """Which PEs hold the data at the end of each step (for one-to-all patterns).

    A PE holds the data once it has sent anything (so the root holds it from
    the start) or once a message to it has arrived; the end of a step is when
    its last transfer ends.  For a pipelined broadcast "holds" means "holds at
    least one packet".

    Parameters
    ----------
    run : Run
        A traced run.
    pes : iterable of int, optional
        Report only these PEs (all by default).

    Returns
    -------
    list of Holding
        ``(step, start_time, sorted list of holders)`` per step, a named tuple.

    Examples
    --------
    >>> from collective_lib import catalog
    >>> run = catalog()["binomial_broadcast"].simulate(p=8)
    >>> for row in holdings_table(run):
    ...     print(row.step, row.start, row.holders)
    1 0.0 [0, 4]
    2 1.0 [0, 2, 4, 6]
    3 2.0 [0, 1, 2, 3, 4, 5, 6, 7]
    """
    total = _check_traced(run)
    keep = None if pes is None else set(pes)
    rows = []
    for s in range(1, total + 1):
        messages = run.step(s)
        end = max(m.end for m in messages)
        holders = sorted(_holders_at(run, end, ()) | {m.src for m in messages})
        if keep is not None:
            holders = [pe for pe in holders if pe in keep]
        rows.append(Holding(s, messages[0].start, holders))
    return rows
