"""The pictures of the CM-200 chapter: Gray-code paths on the 3-cube, the y = A x layout, the fitted models.

Each ``*_figure`` function draws one figure of chapter 6 on a new matplotlib
figure and returns it; the caller shows or saves it.

* :func:`gray_ring_figure`: the Gray code ring (Mathur and Johnsson §3);
* :func:`shifted_cycles_figure`: the d cycles ``sh^i(G)`` of node 000 (§4.2.1);
* :func:`matvec_layout_figure`: node labels and the pieces of x and y on a
  two-dimensional nodal array (§2);
* :func:`model_residuals_figure`: the residuals of the §6 models, printed and
  fitted constants;
* :func:`crossover_figure`: Table 9's crossover and the model times of one
  and d cycles (§6.1);
* :func:`broadcast_times_figure`: Fig. 22, Table 8's measured totals with the
  model curves, and moved over computed indices in Tables 7, 8 and 17;
* :func:`data_rates_figure`: Table 18's printed rates and the rates the
  report's timings imply (§7);
* :func:`matvec_rates_figure`: Fig. 23, Table 19's Gflop/s with the
  communication model plus one fitted flop rate (§7).

Every figure fits the book's text column (:data:`~collective_lib.viz.style.TEXT_WIDTH`),
separates its series by marker or dash pattern as well as by colour, and says in
words what it shows (:func:`~collective_lib.viz.descriptions.describe`).

Source: K. K. Mathur and S. L. Johnsson, All-to-All Communication on the
Connection Machine CM-200, Harvard TR-02-93 (1993).
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..viz.cubes import draw_cube, draw_cube_path
from ..viz.descriptions import curve_comparison, describe
from ..viz.style import (FONT, HATCHES, LINE_STYLES, MARKERS, PALETTE, TEXT_WIDTH, TITLE_FONT,
                         category_style)
from ..wording import listing, shorten
from .gray import gray_code, sh, transition_sequence
from .matvec import (TABLE19_NODES, TABLE19_OPERATIONS, fit_flop_rate, matvec_comm_time,
                     table19_points)
from .models import (MODELS, cm200_table, cycles_crossover, d_cycles_time, fit_model,
                     fitted_constants, one_cycle_time, table9_comparison)
from .rates import (TABLE18_COLUMNS, TABLE18_READINGS, bytes_per_node, measured_crossovers,
                    rate_reading_times)
from .schedules import d_cycles_schedule

__all__ = ["gray_ring_figure", "shifted_cycles_figure",
           "matvec_layout_figure", "model_residuals_figure", "crossover_figure",
           "broadcast_times_figure", "data_rates_figure", "matvec_rates_figure"]


def _bits(u: int) -> str:
    return format(u, "03b")


def gray_ring_figure():
    """The 3-bit Gray code as a ring on the 3-cube, each hop labelled with the bit it flips."""
    fig, ax = plt.subplots(figsize=(4.2, 3.6))
    draw_cube(ax=ax)
    ring = [int(g) for g in gray_code(3)]
    flips = [str(b) for b in transition_sequence(3, cyclic=True)]
    draw_cube_path(ring, ax=ax, colour=PALETTE[1], labels=flips, closed=True)
    ax.set_title("the Gray code ring\n" + " ".join(map(_bits, ring)), fontsize=FONT)
    describe(ax, f"The 3-bit Gray code as a ring on the 3-cube: {' -> '.join(map(_bits, ring))}"
                 f" -> {_bits(ring[0])}; each hop flips one bit, in turn bits "
                 f"{listing(flips, 8)}.")
    return fig


def shifted_cycles_figure():
    """The paths of slots 0, 1, 2 of node 000 in the d-cycles broadcast on the 3-cube."""
    dims = d_cycles_schedule(3).dims
    fig, axes = plt.subplots(1, 3, figsize=(TEXT_WIDTH, 3.0))
    for i, ax in enumerate(axes):
        draw_cube(ax=ax)
        path = [int(sh(int(g), 3, i)) for g in gray_code(3)]
        draw_cube_path(path, ax=ax, colour=PALETTE[i], labels=[str(u) for u in range(7)])
        crossed = " ".join(map(str, dims[:, i]))
        ax.set_title(f"slot {i} of node 000\ndimensions {crossed}", fontsize=FONT)
        describe(ax, f"Slot {i} of node 000: {' -> '.join(map(_bits, path))}, crossing "
                     f"dimensions {crossed}.")
    fig.tight_layout()
    return fig


def matvec_layout_figure(rows: int, cols: int):
    """Node labels, x pieces before phase 1 and y pieces after phase 3 on a rows x cols array.

    Orange cells are the pieces of y that the final shuffle moves.
    """
    fig, axes = plt.subplots(1, 3, figsize=(TEXT_WIDTH, 0.6 * rows + 1.3))
    titles = ["node label (column-major)", "x piece before phase 1",
              "y piece after phase 3"]
    moved = []
    for k, ax in enumerate(axes):
        for r in range(rows):
            for c in range(cols):
                label = c * rows + r
                text = [str(label), f"x[{label}]", f"y[{r * cols + c}]"][k]
                shuffled = k == 2 and r * cols + c != label
                if shuffled:
                    moved.append((label, r * cols + c))
                ax.add_patch(plt.Rectangle((c, -r), 0.92, 0.92, fill=True, ec="0.4", lw=0.5,
                                           hatch=HATCHES[1] if shuffled else None,
                                           fc="#f4c7a1" if shuffled else "#dbe7f3"))
                ax.text(c + 0.46, -r + 0.46, text, ha="center", va="center", fontsize=FONT,
                        bbox=dict(boxstyle="round,pad=0.1", fc="white", ec="none")
                        if shuffled else None)
        ax.set_xlim(-0.1, cols + 0.1)
        ax.set_ylim(-rows + 0.9, 1.05)
        ax.set_aspect("equal")
        ax.axis("off")
        ax.set_title(titles[k], fontsize=FONT)
    axes[2].text(cols / 2, -rows + 0.75, "hatched: moved by the final shuffle", ha="center",
                 va="top", fontsize=FONT)
    describe(axes[0], shorten([
        f"A {rows} x {cols} array of nodes, labelled in column-major order; node i holds "
        f"x[i] before phase 1, and the node in row r, column c holds y[{cols} r + c] after "
        f"phase 3. The final shuffle moves the y pieces of {len(moved)} of {rows * cols} "
        f"nodes (hatched).",
        ("Moved: " + ", ".join(f"node {a} holds y[{b}]" for a, b in moved) + ".",)]))
    fig.tight_layout()
    return fig


def model_residuals_figure():
    """Relative residuals of every §6 model against its table, printed and fitted constants."""
    fig, axes = plt.subplots(4, 2, figsize=(TEXT_WIDTH, 9.0), sharey=True)
    sentences = ["Residuals (measured - model) / measured of the report's seven models, one "
                 "panel each, printed constants as crosses, fitted as dots."]
    for ax, name in zip(axes.flat, MODELS):
        fit = fit_model(name)
        nodes = 2 ** fit.d
        fitted, printed = 100 * fit.relative_residuals, 100 * fit.printed_relative_residuals
        ax.axhline(0, color="grey", lw=0.8)
        ax.scatter(nodes, fitted, s=18, color=PALETTE[0], label="fitted constants")
        ax.scatter(nodes, printed, s=22, marker="x", color=PALETTE[1],
                   label="printed constants")
        ax.set_xscale("log", base=2)
        ax.set_title(f"{name}: ${fit.model.symbol}$, {len(fit.measured)} points",
                     fontsize=FONT)
        ax.set_ylim(-70, 70)
        ax.set_xlabel("nodes", fontsize=FONT)
        ax.tick_params(labelsize=FONT)
        sentences.append((f"{name}: printed {printed.min():.1f} to {printed.max():.1f}%, "
                          f"fitted {fitted.min():.1f} to {fitted.max():.1f}%.",))
    for ax in axes[:, 0]:
        ax.set_ylabel("residual, %", fontsize=FONT)
    axes.flat[-1].axis("off")
    axes.flat[0].legend(fontsize=FONT, loc="lower right")
    describe(axes.flat[0], shorten(sentences))
    fig.tight_layout()
    return fig


def _nan_for_none(values) -> list:
    return [np.nan if v is None else v for v in values]


def crossover_figure(d: int = 8):
    """Left: Table 9 against the printed and fitted models; right: model times on 2**d nodes."""
    fig, (left, right) = plt.subplots(2, 1, figsize=(TEXT_WIDTH, 7.6))
    rows9, refit9 = table9_comparison(), table9_comparison(fitted_constants())
    nodes = [r.nodes for r in rows9]
    left_text = ["Top: the smallest M' at which d cycles beat one cycle against the nodes; "
                 "Table 9 as markers, models as lines."]
    for i, (key, label) in enumerate((("compute", "indices computed"),
                                      ("move", "indices moved"))):
        colour, marker = PALETTE[i], MARKERS[i]
        paper = [getattr(r, f"paper_{key}") for r in rows9]
        model = [getattr(r, f"model_{key}") for r in rows9]
        refit = [getattr(r, f"model_{key}") for r in refit9]
        left.plot(nodes, _nan_for_none(model), ls=LINE_STYLES[i], color=colour,
                  label=f"{label}: printed models")
        left.plot(nodes, _nan_for_none(refit), ":", color=colour, marker=marker, ms=3,
                  label=f"{label}: fitted models")
        left.plot(nodes, _nan_for_none(paper), ls="none", marker=marker, color=colour,
                  mfc="none", ms=7, label=f"{label}: Table 9")
        printed = [(n, v) for n, v in zip(nodes, paper) if v is not None]
        if printed:
            left_text.append((f"{label.capitalize()}: Table 9 "
                              + ", ".join(f"{v:g} at {n}" for n, v in printed)
                              + " nodes.",))
    left.set_xscale("log", base=2)
    left.set_xlabel("nodes on the axis", fontsize=FONT)
    left.set_ylabel("smallest M' where d cycles win", fontsize=FONT)
    left.legend(fontsize=FONT, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    left.set_title("Table 9: the crossover", fontsize=TITLE_FONT)
    describe(left, shorten(left_text, 260))

    w = np.arange(2, 201)
    curves = [("one cycle", one_cycle_time(d, w) / 1000),
              ("d cycles, indices computed", d_cycles_time(d, w, "compute") / 1000),
              ("d cycles, indices moved", d_cycles_time(d, w, "move") / 1000)]
    for i, (label, ms) in enumerate(curves):
        right.plot(w, ms, color=PALETTE[i], ls=LINE_STYLES[i], label=label)
    crossings = [cycles_crossover(d, key) for key in ("compute", "move")]     # whole blocks
    first_moved = cycles_crossover(d, "move", step="1")
    for x in crossings:
        right.axvline(x, color="grey", lw=0.6, ls="--")
    right.set_xlabel("M' (64-bit elements per node)", fontsize=FONT)
    right.set_ylabel("model time, ms", fontsize=FONT)
    right.set_title(f"{2 ** d} nodes (printed constants)", fontsize=TITLE_FONT)
    right.legend(fontsize=FONT, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    describe(right, f"Bottom: model times on {2 ** d} nodes against M' up to 200. "
                    + curve_comparison([(label, w, ms) for label, ms in curves], x="M'")
                    + f" Dashed: the first whole blocks of 2d elements at which the d cycles "
                      f"win, M' = {crossings[0]:g} (computed) and {crossings[1]:g} (moved); "
                      f"with moved indices they win first at M' = {first_moved:g}.")
    for ax in (left, right):
        ax.tick_params(labelsize=FONT)
    fig.tight_layout()
    return fig


_BROADCASTS = (("one_total", "one cycle", 0, one_cycle_time, {}),
               ("comp_total", "d cycles, indices computed", 1, d_cycles_time,
                {"index": "compute"}),
               ("move_total", "d cycles, indices moved", 2, d_cycles_time, {"index": "move"}))


def broadcast_times_figure(constants: dict | None = None):
    """Left: Fig. 22 (Table 8, 256 elements per node) with the §6.1 models; right: move / compute.

    The model curves use the printed constants unless ``constants`` is given.
    """
    t8 = cm200_table(8)
    fig, (left, right) = plt.subplots(2, 1, figsize=(TEXT_WIDTH, 7.6))
    d = np.arange(1, 10)
    measured = []
    for column, label, i, model, kwargs in _BROADCASTS:
        style = category_style(i)
        left.plot(t8["nodes"], t8[column] / 1000, ls="none", marker=style["marker"],
                  color=style["color"], label=f"{label}: Table 8")
        left.plot(2 ** d, [model(int(k), 256, constants=constants, **kwargs) / 1e6 for k in d],
                  ls=style["ls"], color=style["color"], lw=1, label=f"{label}: model")
        measured.append((label, t8["nodes"], t8[column]))
    left.set_xscale("log", base=2)
    left.set_yscale("log")
    left.set_xlabel("nodes on the axis", fontsize=FONT)
    left.set_ylabel("time, s", fontsize=FONT)
    left.set_title("all-to-all broadcast of 256 64-bit elements per node (Fig. 22)",
                   fontsize=TITLE_FONT)
    left.legend(fontsize=FONT, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    lowest = curve_comparison(measured, x="nodes")
    describe(left, "Top: Fig. 22, Table 8's times (markers) and the models (lines). In Table 8, "
                   + lowest[0].lower() + lowest[1:])
    ratios = []
    for i, table_no in enumerate((7, 8, 17)):
        table = cm200_table(table_no)
        keep = ~np.isnan(table["comp_total"])
        kind = "reduction" if table_no == 17 else "broadcast"
        ratio = table["move_total"][keep] / table["comp_total"][keep]
        right.plot(table["nodes"][keep], ratio, marker=MARKERS[i], ls=LINE_STYLES[i],
                   color=PALETTE[i], label=f"Table {table_no}: {kind}, "
                   f"M' = {table['words_per_node'][0]:.0f}")
        below = table["nodes"][keep][ratio < 1]
        ratios.append(f"Table {table_no} {ratio.min():.2f} to {ratio.max():.2f}"
                      + (f", below 1 from {below.min():.0f} nodes" if len(below) else ""))
    right.axhline(1, color="grey", lw=0.8)
    for _, table_no, _, nodes in measured_crossovers()[2:]:
        right.axvline(nodes, color="grey", lw=0.6, ls=":")
    right.set_xscale("log", base=2)
    right.set_xlabel("nodes on the axis", fontsize=FONT)
    right.set_ylabel("indices moved / computed", fontsize=FONT)
    right.set_title("below 1: moving the indices pays", fontsize=TITLE_FONT)
    right.legend(fontsize=FONT, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    describe(right, "Bottom: time with indices moved over computed: " + "; ".join(ratios) + ".")
    for ax in (left, right):
        ax.tick_params(labelsize=FONT)
    fig.tight_layout()
    return fig


def data_rates_figure():
    """Table 18's printed rates (markers) and the rates its readings imply (lines), per column."""
    t18 = cm200_table(18)
    nodes = t18["nodes"]
    fig, ax = plt.subplots(figsize=(6.2, 4))
    gaps = []
    for k, column in enumerate(TABLE18_COLUMNS):
        reading = TABLE18_READINGS[column]
        times = rate_reading_times(reading, nodes)
        implied = bytes_per_node(nodes, reading.words, reading.bytes) / (times / 1000.0)
        style = category_style(k)
        ax.plot(nodes, t18[column], ls="none", marker=style["marker"], color=style["color"],
                mfc="none", label=column)
        ax.plot(nodes, implied / reading.mbyte, ls=style["ls"], color=style["color"], lw=1)
        gap = np.nanmax(np.abs(t18[column] / (implied / reading.mbyte) - 1))
        gaps.append(f"{column} within {100 * gap:.0f}%")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("nodes", fontsize=FONT)
    ax.set_ylabel("Mbytes/s per node", fontsize=FONT)
    ax.tick_params(labelsize=FONT)
    ax.set_title("Table 18 (markers) and the rates\nimplied by the report's times (lines)",
                 fontsize=TITLE_FONT)
    ax.legend(fontsize=FONT, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
    describe(ax, f"Table 18's printed data rates per node (markers) for "
                 f"{len(TABLE18_COLUMNS)} columns against the nodes, with the rates the "
                 f"report's times imply (lines of the same style); printed against implied: "
                 + ", ".join(gaps) + ".")
    fig.tight_layout()
    return fig


def matvec_rates_figure(constants: dict | None = None):
    """Fig. 23 and its vector-matrix twin: Table 19's Gflop/s (markers) and the fitted model (lines).

    The markers are the printed rates, including the two with no printed time.

    The model is :func:`.matvec.fit_flop_rate` with ``constants`` for the
    communication (printed constants by default).
    """
    fig, axes = plt.subplots(2, 1, figsize=(TEXT_WIDTH, 7.4), sharex=True)
    P = np.arange(1024, 24577, 512)
    for ax, operation in zip(axes, TABLE19_OPERATIONS):
        fit = fit_flop_rate(operation, constants)
        best = []
        for k, nodes in enumerate(TABLE19_NODES):
            style = category_style(k)
            mine = [q for q in table19_points(operation) if q.nodes == nodes]
            ax.plot([q.P for q in mine], [q.mflops / 1000 for q in mine], ls="none",
                    marker=style["marker"], color=style["color"], gid="table19",
                    label=f"{nodes} nodes")
            sizes = P[P >= min(q.P for q in mine)]
            model_ms = np.array([matvec_comm_time(int(s), nodes, constants) for s in sizes]) \
                + 2.0 * sizes ** 2 / nodes / (fit.mflops_per_node * 1e3)
            ax.plot(sizes, 2.0 * sizes ** 2 / model_ms / 1e6, ls=style["ls"],
                    color=style["color"], lw=1)
            top = max(mine, key=lambda q: q.mflops)
            best.append(f"{nodes}: {top.mflops / 1000:.1f} at P = {top.P:,}")
        ax.set_ylabel("Gflop/s", fontsize=FONT)
        ax.tick_params(labelsize=FONT)
        ax.set_title(f"{TABLE19_OPERATIONS[operation]}: Table 19 (markers), model (lines), "
                     f"{fit.mflops_per_node:.2f} Mflop/s per node", fontsize=FONT)
        ax.legend(fontsize=FONT, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        describe(ax, f"{TABLE19_OPERATIONS[operation].capitalize()}: Table 19's Gflop/s "
                     f"(markers) against P with the model (lines); the most per node count: "
                     + "; ".join(best) + ".")
    axes[-1].set_xlabel("P (the matrix is P x P)", fontsize=FONT)
    fig.tight_layout()
    return fig
