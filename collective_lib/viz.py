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
        try:                     # some entries refuse some sizes (Rabenseifner needs m >= p)
            kw = _entry_params(entry, params, pp, mm, model)
            time = entry.predict(pp, mm, model, **kw)
        except ValueError:
            continue
        xs.append(x)
        predicted.append(time)
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


# == Chapter 2: what each PE holds after each step ========================================
#
# record_run() simulates a program with a recording wrapper that copies the PE's local
# variables whenever it issues an operation and when it returns; values_table() turns the
# record into a table "value held by PE i after step s", as in Sanders et al. 2019,
# Figs. 13.3, 13.7 and 13.9.  Span, span_inputs and span_op give the symbolic operands
# "x:y" (the combination of m_x .. m_y) those figures are drawn with.

import copy as _copy
import html as _html
import inspect as _inspect
import sys as _sys
from collections import defaultdict as _defaultdict
from dataclasses import dataclass as _dataclass, field as _field

from .simulator import Run as _Run

__all__ += ["Span", "span_inputs", "span_op", "record_run", "RecordedRun", "PEState",
            "values_table", "ValuesTable", "HELD_VALUES"]


def _ranges(ranks) -> str:
    """Ranks as maximal ascending runs: (0, 1, 2, 5, 3) -> '0:2,5,3'."""
    pieces, start, prev = [], None, None
    for r in ranks:
        if start is not None and r == prev + 1:
            prev = r
            continue
        if start is not None:
            pieces.append(f"{start}" if start == prev else f"{start}:{prev}")
        start = prev = r
    if start is not None:
        pieces.append(f"{start}" if start == prev else f"{start}:{prev}")
    return ",".join(pieces)


class Span:
    """A symbolic operand: the ranks whose inputs it combines, in the order combined.

    ``Span((3,))`` stands for m_3, and ``Span((0, 1, 2, 3))`` for
    m_0 op m_1 op m_2 op m_3, written ``0:3`` as in Sanders et al.'s figures.
    Combining concatenates (:func:`span_op`), which is associative but not
    commutative, so a span that is not one ascending run, such as ``2:4,0:1``,
    shows operands combined out of rank order.  A span is one word of a message.

    >>> print(Span((0, 1, 2, 3)), Span((2, 3, 4, 0, 1)), Span((5,)))
    0:3 2:4,0:1 5
    """
    __slots__ = ("ranks",)

    def __init__(self, ranks):
        self.ranks = tuple(int(r) for r in ranks)
        if not self.ranks:
            raise ValueError("a Span combines at least one rank")

    def __eq__(self, other):
        return isinstance(other, Span) and other.ranks == self.ranks

    def __hash__(self):
        return hash(("Span", self.ranks))

    def __str__(self):
        return _ranges(self.ranks)

    def __repr__(self):
        return f"Span({str(self)!r})"

    @property
    def in_order(self) -> bool:
        """True when the ranks form one ascending run of consecutive ranks."""
        return list(self.ranks) == list(range(self.ranks[0], self.ranks[0] + len(self.ranks)))


def _join_spans(a, b):
    if not (isinstance(a, Span) and isinstance(b, Span)):
        raise TypeError(f"span_op combines Span words, got {a!r} and {b!r}")
    return Span(a.ranks + b.ranks)


def span_op(a, b):
    """Combine two symbolic messages word by word (lists, tuples or single Spans).

    >>> print(span_op(Span((0,)), Span((1, 2))))
    0:2
    >>> [str(s) for s in span_op([Span((4,)), Span((4,))], [Span((0,)), Span((0,))])]
    ['4,0', '4,0']
    """
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            raise ValueError(f"cannot combine messages of {len(a)} and {len(b)} words")
        words = [_join_spans(x, y) for x, y in zip(a, b)]
        return tuple(words) if isinstance(a, tuple) else words
    return _join_spans(a, b)


def span_inputs(p: int, m: int | None = 1) -> list:
    """Symbolic inputs: PE i holds ``[Span((i,))] * m`` (``m=None``: the bare Span).

    >>> [str(x) for x in span_inputs(3, m=None)]
    ['0', '1', '2']
    """
    if m is None:
        return [Span((i,)) for i in range(p)]
    return [[Span((i,))] * m for i in range(p)]


class PEState(NamedTuple):
    """What one PE had at one moment of a recorded run (see :func:`record_run`).

    ``locals`` are the program's local variables (for a program that delegates
    with ``yield from``, the variables of every generator in the chain, the
    innermost winning); ``received`` is the payload of the last message that
    had arrived (None before the first); ``heard`` the PEs from which some
    message chain had reached this PE, itself included; ``done``/``result``
    tell whether the program had returned, and what.
    """
    time: float
    locals: dict
    done: bool
    result: object
    received: object
    heard: frozenset


@_dataclass
class RecordedRun(_Run):
    """A :class:`~collective_lib.simulator.Run` with the states of every PE over time.

    ``states[pe]`` lists :class:`PEState` records in time order: one when the
    PE issued each operation (its state after the previous one completed) and
    one when it returned.  ``inputs`` are the inputs the PEs started with and
    ``name`` the program's name.
    """
    inputs: list = _field(default_factory=list)
    states: list = _field(default_factory=list)
    name: str = ""

    def state(self, pe: int, time: float) -> PEState:
        """PE ``pe``'s last recorded state at or before ``time``."""
        self._check_pe(pe)
        found = self.states[pe][0]
        for st in self.states[pe]:
            if st.time > time:
                break
            found = st
        return found


def _frozen(value):
    """A copy that later in-place changes of the program cannot alter."""
    if isinstance(value, (list, dict, set, np.ndarray, tuple)):
        try:
            return _copy.deepcopy(value)
        except Exception:
            return value
    return value


def _snapshot(frame_locals: dict) -> dict:
    return {k: _frozen(v) for k, v in frame_locals.items()}


def _chain_locals(gen) -> dict:
    """Locals of a generator and of every generator it delegates to (innermost wins)."""
    merged = {}
    while gen is not None and _inspect.isgenerator(gen) and gen.gi_frame is not None:
        merged.update(_snapshot(gen.gi_frame.f_locals))
        gen = gen.gi_yieldfrom
    return merged


_CO_GENERATOR = _inspect.CO_GENERATOR


class _ReturnLocals:
    """Trace generator frames during one resumption, keeping each frame's last locals.

    The locals of a generator are gone once it has returned, and a program
    often combines its last operand just before ``return``; this catches them
    from the 'return' trace event.  The previous trace function (a debugger,
    a coverage tool) is restored afterwards.
    """

    def __init__(self):
        self.last = {}

    def _local(self, frame, event, arg):
        if event == "return":
            self.last.pop(id(frame), None)
            self.last[id(frame)] = _snapshot(frame.f_locals)
        return self._local

    def _global(self, frame, event, arg):
        if event == "call" and frame.f_code.co_flags & _CO_GENERATOR:
            frame.f_trace_lines = False
            return self._local
        return None

    def __enter__(self):
        self._old = _sys.gettrace()
        _sys.settrace(self._global)
        return self

    def __exit__(self, *exc):
        _sys.settrace(self._old)
        return False

    def merged(self) -> dict:
        """The returned frames' locals, outermost first (it returned last), innermost winning."""
        out = {}
        for frame_locals in reversed(list(self.last.values())):
            out.update(frame_locals)
        return out


def _recorder(program, log):
    """``program`` wrapped so that ``log[me]`` gets (operation, locals) per step and the end."""
    def recorded(me, p, data, **params):
        gen = program(me, p, data, **params)
        if not _inspect.isgenerator(gen):
            raise TypeError(f"{getattr(program, '__name__', program)!r} is not a generator "
                            "function: an SPMD program must yield its operations")
        entries = log[me] = []
        value = None
        while True:
            tracer = _ReturnLocals()
            try:
                with tracer:
                    op = gen.send(value)
            except StopIteration as stop:
                entries.append((None, tracer.merged(), stop.value))
                return stop.value
            entries.append((op, _chain_locals(gen), None))
            value = yield op
    recorded.__name__ = getattr(program, "__name__", "program")
    return recorded


def _op_parts(op):
    """(destinations of sends, sources of receives, compute time) of one operation."""
    from .ops import Compute, Multi, Recv, Send, SendRecv
    if isinstance(op, Send):
        return [op.dst], [], 0.0
    if isinstance(op, Recv):
        return [], [op.src], 0.0
    if isinstance(op, SendRecv):
        return [op.dst], [op.src], 0.0
    if isinstance(op, Multi):
        return [d for d, _, _ in op.sends], list(op.recvs), 0.0
    if isinstance(op, Compute):
        return [], [], float(op.time)
    raise TypeError(f"not an operation: {op!r}")


def _heard_timelines(run) -> list:
    """Per PE, [(time, frozenset of PEs heard from)], from the message trace.

    A message carries what its sender had heard when it started; the receiver
    knows it when the message has arrived.
    """
    timeline = [[(0.0, frozenset([pe]))] for pe in range(run.p)]

    def at(pe, t):
        found = timeline[pe][0][1]
        for when, known in timeline[pe]:
            if when > t:
                break
            found = known
        return found

    for msg in sorted(run.messages, key=lambda m: (m.end, m.start)):
        known = at(msg.dst, msg.end) | at(msg.src, msg.start)
        timeline[msg.dst].append((msg.end, known))
    return timeline


def _states(run, inputs, log) -> list:
    """Turn the wrapper's log into timed :class:`PEState` lists (times from the trace)."""
    pairs = _defaultdict(list)                         # (src, dst) -> messages, FIFO order
    for msg in run.messages:
        pairs[msg.src, msg.dst].append(msg)
    sent, got = _defaultdict(int), _defaultdict(int)
    heard = _heard_timelines(run)
    states = []
    for pe in range(run.p):
        t, received, out = 0.0, None, []
        arrivals = []                                  # (arrival time, payload), by receive order
        for op, frame_locals, result in log.get(pe, []):
            known = frozenset([pe])
            for when, k in heard[pe]:
                if when <= t:
                    known = k
            for when, payload in arrivals:
                if when <= t:
                    received = payload
            if op is None:
                out.append(PEState(t, frame_locals, True, result, received, known))
                break
            out.append(PEState(t, frame_locals, False, None, received, known))
            dsts, srcs, work = _op_parts(op)
            end = t + work
            for dst in dsts:
                msg = pairs[pe, dst][sent[pe, dst]]
                sent[pe, dst] += 1
                end = max(end, msg.end)
            for src in srcs:
                msg = pairs[src, pe][got[src, pe]]
                got[src, pe] += 1
                end = max(end, msg.end)
                arrivals.append((max(t, msg.end), msg.payload))
            t = end
        states.append(out)
    return states


def record_run(algorithm, p: int, m: int = 1, *, inputs=None, model=None, network=None,
               seed: int = 0, **params) -> RecordedRun:
    """Simulate ``algorithm`` and record what every PE holds over time.

    Parameters
    ----------
    algorithm : catalog entry, its name, or a generator function
        An entry runs with its own defaults (parameters, network, port model,
        random inputs of ``m`` words), as :meth:`Algorithm.simulate` does.
    p, m : int
        PEs and words per message (``m`` only matters without ``inputs``).
    inputs : list or callable, optional
        As for :func:`~collective_lib.simulate`; required for a bare program.
        :func:`span_inputs` with ``op=span_op`` gives the symbolic "x:y" pattern.
    model, network, seed, **params :
        As for :meth:`Algorithm.simulate` / :func:`~collective_lib.simulate`.

    Returns
    -------
    RecordedRun
        The run (always traced) plus ``states``: each PE's local variables
        whenever it issued an operation and when it returned, with times taken
        from the message trace.  Read it with :func:`values_table`.

    Examples
    --------
    >>> run = record_run("binomial_reduce", 4, inputs=[[1], [2], [3], [4]])
    >>> run.results[0], run.state(0, 1.0).locals["x"], run.state(0, 2.0).locals["x"]
    ([10], [3], [10])
    """
    from .simulator import simulate
    from .catalog import resolve_program
    program, entry = resolve_program(algorithm)
    if entry is not None:
        entry.valid_p(p)
        params = {**entry.params, **params}
        if inputs is None:
            inputs = entry.make_inputs(p, m, seed, **params)
        network = entry.network(p) if network is None else network
        model = entry.default_model() if model is None else model
    if callable(inputs):
        inputs = [inputs(i) for i in range(p)]
    inputs = [None] * p if inputs is None else list(inputs)
    log = {}
    run = simulate(_recorder(program, log), p, inputs, network=network, model=model,
                   trace=True, **params)
    fields = {name: getattr(run, name) for name in run.__dataclass_fields__}
    return RecordedRun(**fields, inputs=inputs, states=_states(run, inputs, log),
                       name=entry.name if entry is not None else getattr(program, "__name__", ""))


# -- which value a PE "holds" ---------------------------------------------------------------

def _combined(state, *names):
    """``op`` folded over the named locals that are bound and not None (None is neutral)."""
    from .algorithms.reduce import combine
    env = state.locals
    return combine(env.get("op"), *[env.get(n) for n in names]) if "op" in env else None


def _tree_reduce_held(state):
    return _combined(state, "x", "data", "z")


def _pipelined_held(state):
    from .packets import join_packets
    packets = state.locals.get("packets")
    return join_packets(packets) if packets else state.locals.get("data")


def _reduce_then_broadcast_held(state):
    env = state.locals
    if "total" in env:                     # the broadcast phase: its `data` is the result
        return env.get("data")
    return env.get("x", env.get("data"))


def _tree_prefix_up(state):
    return _combined(state, "x", "data", "z")


def _tree_prefix_down(state):
    return state.locals.get("mine")


def _received_or_result(state):
    if state.done:
        return state.result
    return state.received if state.received is not None else state.locals.get("data")


#: What values_table shows by default for the library's programs: a local variable's
#: name, a function of the PEState, or a dict of several (one sub-row each).  Any other
#: program shows its last received payload (its input before that) and then its result.
HELD_VALUES = {
    "binomial_reduce": "x",
    "binary_tree_reduce": _tree_reduce_held,
    "pipelined_binary_tree_reduce": _pipelined_held,
    "reduce_broadcast_allreduce": _reduce_then_broadcast_held,
    "hypercube_allreduce": "m",
    "rabenseifner_allreduce": "vector",
    "hypercube_prefix_sum": {"x": "x", "m": "m"},
    "binary_tree_prefix_sum": {"sum": _tree_prefix_up, "prefix": _tree_prefix_down},
    "barrier": {"heard": "heard"},
}


def _watch_items(run, watch) -> list:
    """[(label, function of a PEState)] for a watch specification."""
    if watch is None:
        watch = HELD_VALUES.get(run.name, _received_or_result)
    if isinstance(watch, dict):
        specs = list(watch.items())
    elif isinstance(watch, (list, tuple)):
        specs = [(w if isinstance(w, str) else getattr(w, "__name__", "value"), w)
                 for w in watch]
    else:
        specs = [("", watch)]
    items = []
    for label, spec in specs:
        if isinstance(spec, str):
            items.append((label, _named(spec)))
        elif callable(spec):
            items.append((label, spec))
        else:
            raise ValueError(f"watch must name a local variable or be a function of a "
                             f"PEState, got {spec!r}")
    return items


def _named(name):
    def read(state):
        if name in state.locals:
            return state.locals[name]
        if name in ("result", "received", "heard"):
            return getattr(state, name)
        return None
    read.__name__ = name
    return read


def _format_held(value) -> str:
    """Short text for a held value: '-' for None, one-word messages unwrapped."""
    if value is None:
        return "-"
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (frozenset, set)):
        return _ranges(sorted(value))
    if isinstance(value, (list, tuple)):
        if len(value) == 1:
            return _format_held(value[0])
        return " ".join(_format_held(v) for v in value)
    if isinstance(value, (float, np.floating)):
        return f"{float(value):.6g}"
    return str(value)


class ValuesTable:
    """The values each PE holds after each step; see :func:`values_table`.

    Attributes
    ----------
    pes : list of int
        The PEs shown (columns).
    rows : list of str
        ``"start"``, then ``"step 1"``, ``"step 2"``, ...
    items : list of str
        The labels of the watched values (one sub-row each; ``[""]`` for one).
    values : list
        ``values[row][item][column]``, the raw values.
    cells : list
        The same, formatted as text.
    transfers : list
        ``transfers[row]``: the messages that started in that step (none for "start").
    """

    def __init__(self, pes, rows, items, values, cells, transfers, title=""):
        self.pes, self.rows, self.items = pes, rows, items
        self.values, self.cells, self.transfers = values, cells, transfers
        self.title = title

    def value(self, step: int, pe: int, item: int | str = 0):
        """The raw value PE ``pe`` holds after ``step`` (0 = start) for one watched item."""
        if isinstance(item, str):
            item = self.items.index(item)
        return self.values[step][item][self.pes.index(pe)]

    def column(self, pe: int, item: int | str = 0) -> list:
        """PE ``pe``'s formatted values, from the start to the last step."""
        if isinstance(item, str):
            item = self.items.index(item)
        col = self.pes.index(pe)
        return [row[item][col] for row in self.cells]

    def transfers_text(self, row: int, fmt=None) -> str:
        """'src->dst: payload' for the messages of one step."""
        fmt = fmt or _format_held
        return ", ".join(f"{m.src}->{m.dst}: {fmt(m.payload)}" for m in self.transfers[row])

    def _labels(self):
        multi = len(self.items) > 1
        out = []
        for r, row in enumerate(self.rows):
            for i, item in enumerate(self.items):
                first = row if i == 0 else ""
                out.append((r, i, f"{first:<7} {item}".rstrip() if multi else row))
        return out

    def __str__(self):
        labels = self._labels()
        width0 = max(len(text) for _, _, text in labels)
        widths = [max(len(f"PE {pe}"), *(len(self.cells[r][i][c]) for r, i, _ in labels))
                  for c, pe in enumerate(self.pes)]
        lines = [" " * width0 + "".join(f"  {f'PE {pe}':>{w}}" for pe, w in zip(self.pes, widths))]
        for r, i, text in labels:
            lines.append(f"{text:<{width0}}" + "".join(
                f"  {self.cells[r][i][c]:>{w}}" for c, w in enumerate(widths)))
        return "\n".join(lines)

    def __repr__(self):
        return str(self)

    def to_html(self, highlight: int | None = None, transfers: bool = True) -> str:
        """An HTML table; ``highlight`` marks one step's row(s); ``transfers`` adds a column
        with the messages of each step."""
        esc = _html.escape
        head = "".join(f"<th>PE {pe}</th>" for pe in self.pes)
        extra = "<th style='text-align:left'>transfers in this step</th>" if transfers else ""
        body = []
        for r, row in enumerate(self.rows):
            style = " style='background:#fdebd0'" if r == highlight else ""
            for i, item in enumerate(self.items):
                cells = "".join(f"<td style='text-align:center'>{esc(c)}</td>"
                                for c in self.cells[r][i])
                label = f"<th style='text-align:left'>{esc(row)}</th>" if i == 0 else ""
                if i == 0 and len(self.items) > 1:
                    label = (f"<th rowspan='{len(self.items)}' style='text-align:left'>"
                             f"{esc(row)}</th>")
                sub = f"<td><i>{esc(item)}</i></td>" if len(self.items) > 1 else ""
                tail = ""
                if transfers and i == 0:
                    span = f" rowspan='{len(self.items)}'" if len(self.items) > 1 else ""
                    tail = (f"<td{span} style='text-align:left;font-size:85%'>"
                            f"{esc(self.transfers_text(r))}</td>")
                body.append(f"<tr{style}>{label}{sub}{cells}{tail}</tr>")
        corner = "<th></th><th></th>" if len(self.items) > 1 else "<th></th>"
        caption = f"<caption>{esc(self.title)}</caption>" if self.title else ""
        return (f"<table class='values-table'>{caption}<thead><tr>{corner}{head}{extra}</tr>"
                f"</thead><tbody>{''.join(body)}</tbody></table>")

    def _repr_html_(self):
        return self.to_html()


def values_table(run, watch=None, *, fmt=None, pes=None) -> ValuesTable:
    """What each PE holds at the start and after each step of a recorded run.

    The end of step s is when the last transfer that started in step s ends
    (:meth:`Run.step`); a PE's value then is read from its last recorded
    state at or before that time.

    Parameters
    ----------
    run : RecordedRun
        From :func:`record_run`.
    watch : optional
        What to show: the name of a local variable of the program (``"x"``),
        one of the :class:`PEState` fields ``"result"``, ``"received"``,
        ``"heard"`` (the PEs it has heard from), a function of a
        :class:`PEState`, or a dict ``{label: spec}`` / list of those for
        several values per PE (one sub-row each, as the top and bottom values
        of Fig. 13.7).  Default: :data:`HELD_VALUES` for the library's
        programs, else the last payload received (the input before that) and
        finally the result.
    fmt : callable, optional
        ``fmt(value) -> str``; default: ``-`` for None, a one-word message
        without brackets, a set of ranks as ranges, a Span as ``x:y``.
    pes : iterable of int, optional
        The PEs to show (all by default).

    Returns
    -------
    ValuesTable
        Prints as a text table and shows as an HTML table in a notebook.

    Examples
    --------
    >>> run = record_run("hypercube_allreduce", 4, inputs=span_inputs(4), op=span_op)
    >>> print(values_table(run))
            PE 0  PE 1  PE 2  PE 3
    start      0     1     2     3
    step 1   0:1   0:1   2:3   2:3
    step 2   0:3   0:3   0:3   0:3
    """
    if not isinstance(run, RecordedRun):
        raise ValueError("values_table needs the states of the PEs: simulate with "
                         "viz.record_run(algorithm, p, ...) instead of simulate()")
    fmt = fmt or _format_held
    pes = list(range(run.p)) if pes is None else [int(pe) for pe in pes]
    for pe in pes:
        run._check_pe(pe)
    items = _watch_items(run, watch)
    ends, rows, transfers = [0.0], ["start"], [[]]
    for s in range(1, len(run.step_starts()) + 1):
        messages = run.step(s)
        ends.append(max(msg.end for msg in messages))
        rows.append(f"step {s}")
        transfers.append(messages)
    values = [[[f(run.state(pe, t) if r else run.states[pe][0]) for pe in pes]
               for _, f in items] for r, t in enumerate(ends)]
    cells = [[[fmt(v) for v in item] for item in row] for row in values]
    return ValuesTable(pes, rows, [label for label, _ in items], values, cells, transfers,
                       title=run.name)


# == Chapter 3: shared-memory timelines and who waits on whom ===========================
#
# These read a SharedRun of collective_lib.shared_memory (locks and barriers): its trace
# lists every memory operation when it took effect, and a PE issues its next operation
# when the previous one completes, so each operation's duration can be read back.

from typing import Any as _Any  # noqa: E402  (imports of this section, kept next to it)

from matplotlib.collections import PolyCollection as _PolyCollection  # noqa: E402
from matplotlib.patches import Rectangle as _Rectangle  # noqa: E402

from .trees import binomial_parent as _binomial_parent  # noqa: E402

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
    cell: _Any
    value: _Any
    kind: str
    spin: bool


class Wait(NamedTuple):
    """One row of :func:`waits_on`: ``waiter`` spun on ``cell`` until ``writer`` changed it."""
    waiter: int
    writer: int
    cell: _Any
    times: int


_MEMORY_OP_NAMES = ("read", "write", "cas", "fetch_add")
SECTION_COLOURS = {"cs": "#f4d03f", "read": "#abebc6"}


def _cell_name(cell) -> str:
    return f"{cell[0]}[{cell[1]}]" if isinstance(cell, tuple) else str(cell)


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
    groups = []
    for s in spans:
        if s.kind != "pause":
            g = _cell_group(s.cell)
            if g not in groups:
                groups.append(g)
    palette = ["C0", "C3", "C2", "C4", "C1", "C5", "C6", "C8", "C9", "C7"]
    return {g: palette[i % len(palette)] for i, g in enumerate(groups)}


def memory_timeline(run, *, ax=None, start=None, stop=None, pes=None, cursor=None,
                    title=None, sections=("cs", "read")):
    """Who touches which cache line when: one lane per PE, time left to right.

    Every memory operation is a bar from its issue to its completion,
    coloured by the cell (all cells of an array share a colour).  A **pale**
    bar was served by the PE's own cache (a hit: spinning on a cached copy);
    a **solid** bar made the line move between caches (a miss or an
    invalidating write, including the wait for the line to become free).
    Pauses (back-off, local work) are thin grey lines, a polling operation
    that found nothing new has a dot, and a PE's stay in a critical section
    (``enter("cs")`` .. ``leave("cs")``; ``"read"`` for readers) is a yellow
    (green) band behind its lane.  ``arrive``/``depart`` notes of barrier
    programs are drawn as triangles, other notes as small ticks.

    Parameters
    ----------
    run : SharedRun
        A traced run (timed, interleaved or threads).
    ax : matplotlib Axes, optional
    start, stop : float, optional
        The time window to draw (default: the whole run).
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
    t1 = (run.time if run.time > 0 else 1) if stop is None else stop
    if t1 <= t0:
        raise ValueError(f"the window must have start < stop, got {t0!r} .. {t1!r}")
    ax = _new_axes(ax, (9.0, min(9.0, 0.32 * len(lanes) + 1.6)))
    colours = _group_colours(spans)
    inside = [s for s in spans if s.pe in row and s.end >= t0 and s.start <= t1]
    for pe, section, a, b in critical_sections(run, sections):
        if pe in row and b >= t0 and a <= t1:
            ax.add_patch(_Rectangle((a, row[pe] - 0.46), max(b - a, 1e-9), 0.92, lw=0,
                                   facecolor=SECTION_COLOURS.get(section, "#d6eaf8"),
                                   zorder=0, gid="section"))
    bars = {}
    for s in inside:
        if s.kind == "pause":
            continue
        bars.setdefault((_cell_group(s.cell), s.kind == "hit"), []).append(s)
    for (group, pale), members in sorted(bars.items()):
        verts = [[(s.start, row[s.pe] - 0.3), (s.start, row[s.pe] + 0.3),
                  (s.end, row[s.pe] + 0.3), (s.end, row[s.pe] - 0.3)] for s in members]
        ax.add_collection(_PolyCollection(verts, facecolors=colours[group],
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
    ax.set_xlim(t0, t1)
    ax.set_ylim(len(lanes) - 0.5, -0.5)            # PE 0 at the top
    if len(lanes) <= MAX_LABELLED:
        ax.set_yticks(range(len(lanes)), [f"PE {pe}" for pe in lanes])
    else:
        ax.set_yticks([])
    ax.tick_params(labelsize=8)
    ax.set_xlabel("time (units of the coherence model)" if run.mode == "timed"
                  else "step of the interleaving")
    handles = [Patch(color=c, label=g) for g, c in colours.items()]
    handles += [Patch(color="0.4", alpha=0.3, label="cache hit"),
                Patch(color="0.4", label="line transfer"),
                Line2D([], [], color="0.55", lw=1.0, label="pause / back-off"),
                Line2D([], [], ls="none", marker=".", color="black", label="poll, no news")]
    present = {sec for _, sec, _, _ in critical_sections(run, sections)}
    handles += [Patch(color=SECTION_COLOURS.get(sec, "#d6eaf8"),
                      label="critical section" if sec == "cs" else f"section {sec!r}")
                for sec in sections if sec in present]
    ax.legend(handles=handles, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              frameon=False)
    if title is not None:
        ax.set_title(title, fontsize=10)
    return ax


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
            sorted(counts.items(), key=lambda kv: (kv[0][0], kv[0][1], _cell_name(kv[0][2])))]


def _binomial_positions(p: int) -> np.ndarray:
    """x = rank, y = minus the depth in the binomial tree (the number of 1 bits)."""
    return np.array([(i, -bin(i).count("1")) for i in range(p)], dtype=float)


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
        xy = _binomial_positions(p)
        xy[:, 1] *= 1.2
    elif layout == "circle":
        angle = np.pi / 2 - 2 * np.pi * np.arange(p) / max(p, 1)
        xy = np.stack([np.cos(angle), np.sin(angle)], axis=1) * max(1.0, p / (2 * np.pi))
    else:
        raise ValueError(f"layout must be 'binomial' or 'circle', got {layout!r}")
    lay = _Layout(xy, 0.28, _font_size(p))
    depth = int(-xy[:, 1].min() / 1.2) if layout == "binomial" else 0
    ax = _new_axes(ax, (max(3.0, 0.75 * p + 1.0) if layout == "binomial" else 4.5,
                        max(2.4, 0.9 * depth + 1.6) if layout == "binomial" else 4.5))
    if layout == "binomial":
        edges = [(xy[_binomial_parent(i)], xy[i]) for i in range(1, p)]
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
    _draw_nodes(ax, lay)
    _frame(ax, lay)
    ax.legend(handles=[Line2D([], [], color=ARROW_COLOUR, label="waits for a cell only it polls"),
                       Line2D([], [], color="0.55", ls="--",
                              label="waits for a cell many PEs poll")],
              fontsize=7, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=2,
              frameon=False)
    if title is not None:
        ax.set_title(title, fontsize=10)
    return ax


__all__ += ["memory_timeline", "memory_spans", "MemorySpan", "critical_sections",
            "cache_holders", "waits_on", "Wait", "wait_graph"]


# == Chapter 5: the bipartite multigraph of an h-relation ==================================
#
# Sanders et al. 2019, §13.6.3: node s_i is PE i as a sender, node r_j PE j as a receiver,
# and every packet from i to j is an edge (s_i, r_j).  An edge colouring in which no two
# edges at a node share a colour is a schedule: the edges of one colour form one step.

def _edge_colour_of(colouring, u, v, key):
    """The colour of edge (u, v, key) in ``colouring``, stored in either orientation."""
    if (u, v, key) in colouring:
        return colouring[(u, v, key)]
    if (v, u, key) in colouring:
        return colouring[(v, u, key)]
    raise ValueError(f"the colouring has no colour for the edge {(u, v, key)!r}")


def draw_bipartite_multigraph(graph, colouring=None, *, only=None, ax=None, title=None):
    """Draw a bipartite multigraph: side 0 on the left, side 1 on the right, one arc per edge.

    Parallel edges are drawn as arcs bent by different amounts so that each
    shows.  With a colouring, each edge gets its colour's hue and a legend
    names the colours "step c + 1" (Sanders et al. 2019, §13.6.3: the edges
    of one colour are the packets of one step).

    Parameters
    ----------
    graph : networkx.MultiGraph
        Every node has the attribute ``bipartite`` = 0 or 1 (as from
        :func:`collective_lib.algorithms.hrelation.h_relation_multigraph`).
        A node ``(tag, i)`` is labelled ``tag + str(i)``, e.g. ``s0``.
    colouring : dict, optional
        ``{(u, v, key): colour}``, colours 0, 1, ...; either orientation of
        an edge may be used.  Without it every edge is grey.
    only : iterable of int, optional
        Draw only the edges of these colours (the others faintly), to show
        one step of the schedule.
    ax : matplotlib Axes, optional
    title : str, optional

    Returns
    -------
    matplotlib.axes.Axes
        The arcs have gid ``"edge:<colour>"`` (``"edge:none"`` without a
        colouring), the nodes gid ``"node"``.

    Examples
    --------
    >>> import networkx as nx
    >>> H = nx.MultiGraph()
    >>> H.add_nodes_from([("s", 0), ("s", 1)], bipartite=0)
    >>> H.add_nodes_from([("r", 0), ("r", 1)], bipartite=1)
    >>> keys = H.add_edges_from([(("s", 0), ("r", 1), 0), (("s", 0), ("r", 1), 1),
    ...                          (("s", 1), ("r", 0), 0)])
    >>> colours = {(("s", 0), ("r", 1), 0): 0, (("s", 0), ("r", 1), 1): 1, (("s", 1), ("r", 0), 0): 0}
    >>> ax = draw_bipartite_multigraph(H, colours)
    >>> sorted(a.get_gid() for a in ax.patches if a.get_gid().startswith("edge"))
    ['edge:0', 'edge:0', 'edge:1']
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    sides = {0: [], 1: []}
    for v, s in graph.nodes(data="bipartite"):
        if s not in (0, 1):
            raise ValueError(f"node {v!r} needs the attribute bipartite = 0 or 1, got {s!r}")
        sides[s].append(v)
    for s in sides:
        sides[s].sort()
    width = 2.4                                 # distance between the two columns
    pos = {v: (width * s, -float(row)) for s in sides for row, v in enumerate(sides[s])}
    rows = max(len(sides[0]), len(sides[1]), 1)
    ax = _new_axes(ax, (4.6, 0.5 * rows + 1.0))
    keep = None if only is None else set(only)
    palette = [f"C{i}" for i in range(10)]
    used = set()
    for u, v, key in graph.edges(keys=True):
        if graph.nodes[u]["bipartite"] == 1:
            u, v = v, u
        colour = None if colouring is None else _edge_colour_of(colouring, u, v, key)
        faint = keep is not None and colour not in keep
        if colour is not None and not faint:
            used.add(colour)
        # Parallel edges fan out: key 0 straight, then alternately above and below.
        bend = 0.0 if key == 0 else (0.12 * ((key + 1) // 2)) * (1 if key % 2 else -1)
        ax.add_patch(FancyArrowPatch(
            pos[u], pos[v], arrowstyle="-", connectionstyle=f"arc3,rad={bend}",
            shrinkA=12, shrinkB=12, lw=0.6 if faint else 1.8, zorder=1,
            color="0.88" if faint else ("0.45" if colour is None else palette[colour % 10]),
            gid=f"edge:{'none' if colour is None else colour}"))
    for v, (x, y) in pos.items():
        ax.add_patch(Circle((x, y), 0.2, facecolor="white", edgecolor="0.2", lw=1.0, zorder=2,
                            gid="node"))
        text = f"{v[0]}{v[1]}" if isinstance(v, tuple) and len(v) == 2 else str(v)
        ax.text(x, y, text, ha="center", va="center", fontsize=8, zorder=3)
    ax.set_xlim(-0.4, width + 0.4)
    ax.set_ylim(-rows + 0.5, 0.6)
    ax.set_aspect("equal")
    ax.set_axis_off()
    if used:
        ax.legend(handles=[Line2D([], [], color=palette[c % 10], lw=2, label=f"step {c + 1}")
                           for c in sorted(used)],
                  fontsize=7, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    if title:
        ax.set_title(title, fontsize=10)
    return ax


__all__ += ["draw_bipartite_multigraph"]
