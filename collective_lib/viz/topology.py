"""Pictures of a network and of the steps of a run on it.

* :func:`draw_network` -- a topology, optionally coloured by link load;
* :func:`draw_step`, :func:`draw_steps` -- the transfers of one step as arrows
  labelled "step (source)", in the style of Grama Fig. 4.9;
* :func:`link_load_map` -- how many transfers crossed each directed link.

Every drawing function takes an optional ``ax``; without one it opens a new
figure through pyplot (so that a notebook shows it) and returns the Axes.
Nothing is shown or printed here.  Drawings depend only on their arguments,
so the same run always gives the same picture.
"""
from __future__ import annotations

from functools import lru_cache
from numbers import Number
from weakref import WeakKeyDictionary, ref

import numpy as np

from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.patches import FancyArrowPatch
from matplotlib.path import Path
from matplotlib.font_manager import FontProperties
from matplotlib.textpath import text_to_path
from matplotlib.ticker import MaxNLocator

from ..validate import check_positive_int
from ..wording import LONG, busiest_link, listing, network_phrase, pairs, plural, ranks, shorten
from .descriptions import describe, forget_description
from ._runs import check_traced, holders_at
from ._drawing import (Layout, draw_links, draw_nodes, draws_links, frame_axes, layout_figsize,
                       load_colour_map, network_layout, new_axes, offset_path, point_along)
from .style import (ARROW_COLOUR, FONT, LINK_COLOUR, MAX_LABELLED, MIN_FONT, TEXT_WIDTH,
                    TITLE_FONT)

__all__ = ["draw_network", "draw_step", "draw_steps", "link_load_map", "payload_sources",
           "sources_label"]


# -- draw_network -------------------------------------------------------------------------

def _draw_link_load(ax, network, lay: Layout, link_load: dict) -> None:
    """Each directed link as an arrow on the right of its direction, coloured by load."""
    top = max(link_load.values(), default=0)
    norm, cmap = Normalize(vmin=0, vmax=max(top, 1)), load_colour_map()
    direct = getattr(network, "direct", False)
    links = sorted(link_load) if direct else sorted(set(network.links()) | set(link_load))
    for u, v in links:
        load = link_load.get((u, v), 0)
        if load == 0 and direct:
            continue
        verts = offset_path(lay.xy[[u, v]], 0.35 * lay.radius, lay.radius)
        if load:
            style = dict(color=cmap(norm(load)), lw=1.2 + 2.0 * load / norm.vmax,
                         arrowstyle="-|>", mutation_scale=8, zorder=2)
        else:
            style = dict(color=LINK_COLOUR, lw=0.8, arrowstyle="-", zorder=1)
        ax.add_patch(FancyArrowPatch(path=Path(verts), gid="link", **style))
    bar = ax.figure.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, shrink=0.8, pad=0.02)
    bar.set_label("transfers over the link", fontsize=FONT)
    bar.ax.tick_params(labelsize=FONT)
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
    lay = network_layout(network)
    ax = new_axes(ax, layout_figsize(lay, 1.2 if link_load is not None else 0.0))
    if link_load is None:
        draw_links(ax, network, lay)
    else:
        _draw_link_load(ax, network, lay, link_load)
    draw_nodes(ax, lay, labels=node_labels)
    frame_axes(ax, lay)
    if title:
        ax.set_title(title, fontsize=TITLE_FONT)
    describe(ax, _network_text(network, link_load))
    return ax


def _network_text(network, link_load=None) -> str:
    """'A ring of 8 PEs with 8 links.', and with loads the busiest directed link."""
    what = network_phrase(network)
    links = len({(min(u, v), max(u, v)) for u, v in network.links()})
    text = f"{what[0].upper()}{what[1:]}, {plural(links, 'link')}"
    text += "." if draws_links(network) else " (not drawn)."
    if link_load is None:
        return text
    used = {link: n for link, n in link_load.items() if n}
    if not used:
        return text + " No transfer crossed any link."
    top = max(used.values())
    busiest = sorted(link for link, n in used.items() if n == top)
    where = listing([f"{u} -> {v}" for u, v in busiest], 3)
    return (f"{text} Each directed link is drawn by how many transfers crossed it "
            f"(colour and width): {plural(len(used), 'directed link')} carried traffic, "
            f"the most, {plural(top, 'transfer')}, on {where}.")


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


def draw_step(run, step, *, ax=None, label=None, title=None):
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
    title : str, optional
        Default: "step s of S".

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
    total = check_traced(run)
    messages = run.step(step)
    lay = network_layout(run.network)
    ax = new_axes(ax, layout_figsize(lay))
    if label is None and run.p <= MAX_LABELLED:
        origin = _origin_finder(run)
        label = lambda msg, s: f"{s} ({origin(msg)})"    # noqa: E731
    draw_links(ax, run.network, lay)
    holders = holders_at(run, messages[0].start, (m.src for m in messages))
    draw_nodes(ax, lay, filled=holders, ringed={m.dst for m in messages})
    font = max(lay.font - 1, MIN_FONT)
    frame_axes(ax, lay)                  # the scale first: labels keep clear of each other
    _draw_transfers(ax, lay, messages, [label(msg, step) if label else None
                                        for msg in messages], font)
    ax.set_title(f"step {step} of {total}" if title is None else title, fontsize=TITLE_FONT)
    describe(ax, f"{_step_text(run, step, total)} {ranks(holders)} "
                 f"hold{'s' * (len(holders) == 1)} data as it starts; the receivers have a "
                 f"thick red edge.")
    return ax


def _step_text(run, step, total) -> str:
    """'Step 2 of 3 on a ring of 8 PEs: 2 transfers, 0 -> 2 and 4 -> 6; the busiest link ...'."""
    messages = run.step(step)
    senders = pairs([(m.src, m.dst) for m in messages], run.p)
    busiest = busiest_link(messages)
    return (f"Step {step} of {total} on {network_phrase(run.network)}: "
            f"{plural(len(messages), 'transfer')}, {senders}" + (f"; {busiest}." if busiest
                                                                 else "."))


def _draw_transfers(ax, lay: Layout, messages, texts, font) -> None:
    """The messages' arrows, each along its path, then their labels (``texts``, None for
    none), each beside its own arrow where it covers the least of the other labels,
    the nodes and the other arrows. The labels of the shortest arrows, which have the
    least room, are placed first."""
    arrows = []
    for msg in messages:
        nodes = [msg.src] + [v for _, v in msg.path]
        verts = offset_path(lay.xy[nodes], 0.35 * lay.radius, lay.radius)
        ax.add_patch(FancyArrowPatch(path=Path(verts), arrowstyle="-|>", mutation_scale=11,
                                     color=ARROW_COLOUR, lw=1.5, zorder=3, gid="message"))
        arrows.append(verts)
    # points along every arrow, and whose they are, to see what a label covers
    dots = np.array([point_along(verts, f)[0] for verts in arrows
                     for f in np.linspace(0.0, 1.0, 9)]).reshape(-1, 2)
    owner = np.repeat(np.arange(len(arrows)), 9)
    # What the figure's other panels drew or will draw, in this panel's data units: their
    # labels and nodes (a label may reach into the gap between panels); and the figure's
    # edges, beyond which a label is cut off.
    ax.apply_aspect()
    to_data = ax.transData.inverted().transform
    neighbours = _PANELS.setdefault(ax.figure, {"nodes": [], "labels": []})
    # a panel drawn again (a player's next frame) forgets its own earlier labels
    neighbours["labels"] = [label for label in neighbours["labels"] if label[0]() is not ax]
    nodes = np.vstack([lay.xy] + [to_data(other.transData.transform(xy))
                                  for other, xy in _alive(neighbours["nodes"])
                                  if other is not ax])
    placed = [(*to_data(centre), *np.abs(to_data(centre + size) - to_data(centre)))
              for _, centre, size in neighbours["labels"]]
    frame = to_data(ax.figure.bbox.get_points()).T
    order = [i for i in sorted(range(len(arrows)), key=lambda i: _length(arrows[i]))
             if texts[i]]
    sizes = {i: _text_size(ax, texts[i], font) for i in order}
    spots = {}
    # each label where it covers least of those placed so far; then, twice, each label
    # again where it covers least of all the others (the first ones had the most choice)
    for _ in range(_LABEL_ROUNDS):
        for i in order:
            others = placed + [spots[j] for j in order if j in spots and j != i]
            x, y = _label_spot(nodes, lay.radius, arrows[i], sizes[i], others,
                               dots[owner != i], frame)
            spots[i] = (x, y, *sizes[i])
    for i in order:
        x, y, *size = spots[i]
        corner = ax.transData.transform([(x, y), (x + size[0], y + size[1])])
        neighbours["labels"].append((ref(ax), corner[0], corner[1] - corner[0]))
        ax.text(x, y, texts[i], fontsize=font, ha="center", va="center", zorder=6,
                gid="label", color=ARROW_COLOUR,
                bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none", alpha=0.85))


#: Per figure, the panels of :func:`draw_steps` (each axes and its nodes) and the labels
#: drawn so far (their axes, centre and size in display pixels), which later labels in
#: other panels keep clear of. The axes are held by weak references: an axes refers to
#: its figure, which would never be let go otherwise.
_PANELS: WeakKeyDictionary = WeakKeyDictionary()


def _alive(panels):
    """The (axes, nodes) of ``panels`` whose axes still exist."""
    return [(axes, xy) for axes, xy in ((weak(), xy) for weak, xy in panels)
            if axes is not None]


_LABEL_ROUNDS = 3


def _length(verts) -> float:
    return float(np.hypot(*np.diff(verts, axis=0).T).sum())


# Where a label may go, as (fraction of the arrow, gap between the arrow and the label's
# box in node radii, side: 1 to the arrow's right): near the middle and close to it first.
_LABEL_SPOTS = [(fraction, gap, side) for gap in (0.15, 0.4, 0.8, 1.2, 1.8, 2.6)
                for fraction in (0.5, 0.4, 0.6, 0.3, 0.7, 0.2, 0.8, 0.1, 0.9, 0.0, 1.0)
                for side in (1, -1)]
_SPOT_FRACTIONS, _SPOT_GAPS, _SPOT_SIDES = (np.array(column, dtype=float)
                                            for column in zip(*_LABEL_SPOTS))


def _text_size(ax, text: str, font: float) -> tuple:
    """How wide and high ``text`` with its label box is drawn on ``ax`` (framed: equal
    aspect), in data units: the glyphs' advance and the box's padding of 0.15 font
    sizes on every side, with a little room."""
    fig = ax.figure
    box = ax.get_position()
    (x0, x1), (y0, y1) = ax.get_xlim(), ax.get_ylim()
    per_point = max((x1 - x0) / (box.width * fig.get_figwidth()),
                    (y1 - y0) / (box.height * fig.get_figheight())) / 72
    return (_text_width(text, font) + 0.6 * font) * per_point, 1.5 * font * per_point


@lru_cache(maxsize=4096)
def _text_width(text: str, font: float) -> float:
    """The advance of ``text`` in the default font at size ``font``, in points."""
    width, _, _ = text_to_path.get_text_width_height_descent(
        text, FontProperties(size=font), ismath=False)
    return width


def _label_spot(nodes, radius: float, verts, size: tuple, placed: list, dots: np.ndarray,
                frame) -> tuple:
    """The spot beside the arrow ``verts`` for a label of ``size`` that covers none of the
    ``nodes`` (centres of circles of ``radius``) and stays within the figure's ``frame``
    (its x and y limits) if there is one, then covers the least of the labels ``placed``
    before it (boxes); among those, the one over the fewest points of other arrows
    (``dots``), nearest its own arrow and its middle.

    On a crowded ring an arrow passes close to the PEs between its ends, and a label at
    its middle would hide one of them; on a cube the labels of parallel arrows meet.
    """
    half = np.divide(size, 2)
    fraction, gap, side = _SPOT_FRACTIONS, _SPOT_GAPS, _SPOT_SIDES
    along = {f: point_along(verts, f) for f in set(_SPOT_FRACTIONS)}
    point = np.array([along[f][0] for f in fraction])
    d = np.array([along[f][1] for f in fraction])
    normal = side[:, None] * np.stack([d[:, 1], -d[:, 0]], axis=1)   # right, or left
    reach = np.abs(normal) @ half
    spot = point + ((gap * radius + reach)[:, None]) * normal
    low, high = spot - half, spot + half
    # the area each spot's box shares with the labels placed before it
    on_labels = np.zeros(len(spot))
    if placed:
        px, py, pw, ph = np.array(placed, dtype=float).T
        on_labels = (np.clip((size[0] + pw) / 2 - np.abs(spot[:, :1] - px), 0, None) *
                     np.clip((size[1] + ph) / 2 - np.abs(spot[:, 1:] - py), 0, None)).sum(1)
    nearest = np.clip(nodes[None], low[:, None], high[:, None])    # of each box, to each node
    on_node = np.hypot(*(nodes[None] - nearest).transpose(2, 0, 1)).min(1) < radius
    bounds = np.asarray(frame, dtype=float)
    outside = ((low < bounds[:, 0]) | (high > bounds[:, 1])).any(1)
    xy = dots[None]
    arrows = ((xy >= low[:, None]) & (xy <= high[:, None])).all(2).sum(1)
    best = np.lexsort((arrows + 2 * gap + np.abs(fraction - 0.5), on_labels,
                       on_node | outside))[0]
    return tuple(spot[best])


def payload_sources(payload) -> list:
    """The PEs whose messages a payload carries, when PE i's input is ``[i]``.

    All-to-all broadcasts forward and concatenate such one-word inputs;
    this reads them back out of any nesting of lists, in order.

    >>> payload_sources([[3], [[0], [1]]])
    [3, 0, 1]
    >>> payload_sources(None)
    []
    """
    if payload is None:
        return []
    if isinstance(payload, list) and len(payload) == 1 and isinstance(payload[0], int):
        return [payload[0]]
    return [s for part in payload for s in payload_sources(part)]


def sources_label(msg, step) -> str:
    """"step (sources)" for a message, as in Grama Figs. 4.9 and 4.11: pass as ``label=``.

    The sources are those of :func:`payload_sources`, so every PE's input
    must be ``[i]``; three or more consecutive PEs are written as a range,
    ``3 (4–7)`` for ``3 (4,5,6,7)``, so that the labels of a busy step fit.

    Examples
    --------
    >>> from collective_lib import catalog
    >>> run = catalog()["all_to_all_bc_ring"].simulate(4, inputs=[[i] for i in range(4)])
    >>> sorted(sources_label(m, 2) for m in run.step(2))
    ['2 (0)', '2 (1)', '2 (2)', '2 (3)']
    """
    return f"{step} ({_ranges(payload_sources(msg.payload))})"


def _ranges(pes: list) -> str:
    """``[4, 5, 6, 7, 0, 2]`` as ``"4–7,0,2"``: runs of three or more as ranges.

    >>> _ranges([4, 5, 6, 7, 0, 2]), _ranges([2, 3])
    ('4–7,0,2', '2,3')
    """
    parts, start = [], 0
    for end in range(1, len(pes) + 1):
        if end == len(pes) or pes[end] != pes[end - 1] + 1:
            run = pes[start:end]
            parts.append(f"{run[0]}–{run[-1]}" if len(run) >= 3 else ",".join(map(str, run)))
            start = end
    return ",".join(parts)


def draw_steps(run, steps=None, *, cols=4, label=None):
    """A grid of :func:`draw_step` panels, one per step (all steps by default).

    Parameters
    ----------
    run : Run
        A traced run.
    steps : iterable of int, optional
    cols : int
        Panels per row; at most as many as fit the book's text column at
        about 2.7 inches each (three).
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
    total = check_traced(run)
    steps = list(range(1, total + 1) if steps is None else steps)
    if not steps:
        raise ValueError("the run has no steps to draw (no message was sent)")
    check_positive_int("cols", cols)
    # No more panels to a row than fit the text column at a readable size.
    cols = min(cols, len(steps), max(1, int(TEXT_WIDTH // _MIN_PANEL)))
    rows = -(-len(steps) // cols)
    w, h = layout_figsize(network_layout(run.network))
    # Panels about 3 inches wide, and the figure within the text column.
    scale = min(1.0, 3.2 / w, TEXT_WIDTH / (cols * w))
    fig, axes = plt.subplots(rows, cols, figsize=(cols * w * scale, rows * h * scale),
                             squeeze=False)
    for ax in axes.flat[len(steps):]:
        ax.set_axis_off()
    # The panels' final size first: labels are placed clear of each other at the size
    # they are drawn (a layout after them shrank the panels, and the labels met).
    lay = network_layout(run.network)
    for ax, s in zip(axes.flat, steps):
        frame_axes(ax, lay)
        ax.set_title(f"step {s} of {total}", fontsize=TITLE_FONT)
    fig.tight_layout()
    _PANELS[fig] = {"nodes": [(ref(ax), lay.xy) for ax in axes.flat[:len(steps)]],
                    "labels": []}
    for ax, s in zip(axes.flat, steps):
        draw_step(run, s, ax=ax, label=label)
    for ax in axes.flat[1:len(steps)]:
        forget_description(ax)
    describe(axes.flat[0], _steps_text(run, steps, total))
    return fig


def _steps_text(run, steps, total) -> str:
    """One sentence per group of consecutive steps with the same transfers' rule."""
    head = (f"{plural(len(steps), 'step')} of {total} of a run on "
            f"{network_phrase(run.network)}, one panel each.")
    head = head[0].upper() + head[1:]
    for brief in (False, True):                  # brief: who sends to whom, nothing else
        groups = []                              # [first, last, rule]
        for s in steps:
            messages = run.step(s)
            rule = pairs([(m.src, m.dst) for m in messages], run.p)
            if not brief:
                busiest = busiest_link(messages)
                rule = f"{plural(len(messages), 'transfer')}, {rule}" + (
                    f"; {busiest}" if busiest else "")
            if groups and groups[-1][2] == rule and groups[-1][1] == s - 1:
                groups[-1][1] = s
            else:
                groups.append([s, s, rule])
        sentences = [f"Step {a}: {rule}." if a == b else f"Steps {a} to {b}, each: {rule}."
                     for a, b, rule in groups]
        if len(" ".join([head] + sentences)) <= LONG:
            break
    return shorten([head] + [(s,) for s in sentences])


#: The narrowest panel of :func:`draw_steps` in inches, for labels that stay apart.
_MIN_PANEL = 2.7


# -- link load ----------------------------------------------------------------------------

def link_load_map(run, *, ax=None, name=None):
    """The run's network with every directed link coloured by how many transfers crossed it.

    Parameters
    ----------
    run : Run
    ax : matplotlib Axes, optional
    name : str, optional
        What ran, put before the title ("H-tree, link load: ..."), to tell maps
        side by side apart.

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
    >>> link_load_map(run, ax=ax, name="naive").get_title()
    'naive, link load: at most 4 transfers on one link'
    >>> import matplotlib.pyplot as plt; plt.close(ax.figure)
    """
    top = run.max_link_load()
    title = f"link load: at most {top} transfer{'s' * (top != 1)} on one link"
    return draw_network(run.network, ax=ax, link_load=run.link_load,
                        title=title if name is None else f"{name}, {title}")
