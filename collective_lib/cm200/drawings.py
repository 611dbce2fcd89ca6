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

Source: K. K. Mathur and S. L. Johnsson, All-to-All Communication on the
Connection Machine CM-200, Harvard TR-02-93 (1993).
"""
from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..viz.cubes import draw_cube, draw_cube_path
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


def gray_ring_figure():
    """The 3-bit Gray code as a ring on the 3-cube, each hop labelled with the bit it flips."""
    fig, ax = plt.subplots(figsize=(4.2, 3.6))
    draw_cube(ax=ax)
    ring = [int(g) for g in gray_code(3)]
    draw_cube_path(ring, ax=ax, colour="C3",
                   labels=[str(b) for b in transition_sequence(3, cyclic=True)], closed=True)
    ax.set_title("the Gray code ring 000 001 011 010 110 111 101 100", fontsize=9)
    return fig


def shifted_cycles_figure():
    """The paths of slots 0, 1, 2 of node 000 in the d-cycles broadcast on the 3-cube."""
    dims = d_cycles_schedule(3).dims
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.6))
    for i, ax in enumerate(axes):
        draw_cube(ax=ax)
        path = [int(sh(int(g), 3, i)) for g in gray_code(3)]
        draw_cube_path(path, ax=ax, colour=f"C{i}", labels=[str(u) for u in range(7)])
        ax.set_title(f"slot {i} of node 000, dimensions " + " ".join(map(str, dims[:, i])),
                     fontsize=9)
    return fig


def matvec_layout_figure(rows: int, cols: int):
    """Node labels, x pieces before phase 1 and y pieces after phase 3 on a rows x cols array.

    Orange cells are the pieces of y that the final shuffle moves.
    """
    fig, axes = plt.subplots(1, 3, figsize=(12, 2.6))
    titles = ["node label (column-major)", "x piece held before phase 1",
              "y piece held after phase 3"]
    for k, ax in enumerate(axes):
        for r in range(rows):
            for c in range(cols):
                label = c * rows + r
                text = [str(label), f"x[{label}]", f"y[{r * cols + c}]"][k]
                moved = k == 2 and r * cols + c != label
                ax.add_patch(plt.Rectangle((c, -r), 0.92, 0.92, fill=True,
                                           color="#f4c7a1" if moved else "#dbe7f3"))
                ax.text(c + 0.46, -r + 0.46, text, ha="center", va="center", fontsize=11)
        ax.set_xlim(-0.1, cols + 0.1)
        ax.set_ylim(-rows + 0.9, 1.05)
        ax.set_aspect("equal")
        ax.axis("off")
        ax.set_title(titles[k], fontsize=10)
    axes[2].text(cols / 2, -rows + 0.75, "orange: moved by the final shuffle", ha="center",
                 fontsize=9)
    return fig


def model_residuals_figure():
    """Relative residuals of every §6 model against its table, printed and fitted constants."""
    fig, axes = plt.subplots(2, 4, figsize=(13, 5.2), sharey=True)
    for ax, name in zip(axes.flat, MODELS):
        fit = fit_model(name)
        nodes = 2 ** fit.d
        ax.axhline(0, color="grey", lw=0.8)
        ax.scatter(nodes, 100 * fit.relative_residuals, s=18, label="fitted constants")
        ax.scatter(nodes, 100 * fit.printed_relative_residuals, s=22, marker="x",
                   label="printed constants")
        ax.set_xscale("log", base=2)
        ax.set_title(f"{name}\n${fit.model.symbol}$, {len(fit.measured)} points", fontsize=9)
        ax.set_ylim(-70, 70)
        ax.set_xlabel("nodes", fontsize=8)
    axes[0, 0].set_ylabel("(measured - model) / measured, %")
    axes[1, 0].set_ylabel("(measured - model) / measured, %")
    axes.flat[-1].axis("off")
    axes.flat[0].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    return fig


def _nan_for_none(values) -> list:
    return [np.nan if v is None else v for v in values]


def crossover_figure(d: int = 8):
    """Left: Table 9 against the printed and fitted models; right: model times on 2**d nodes."""
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 3.8))
    rows9, refit9 = table9_comparison(), table9_comparison(fitted_constants())
    nodes = [r.nodes for r in rows9]
    for key, colour, label in (("compute", "C0", "indices computed"),
                               ("move", "C1", "indices moved")):
        paper = [getattr(r, f"paper_{key}") for r in rows9]
        model = [getattr(r, f"model_{key}") for r in rows9]
        refit = [getattr(r, f"model_{key}") for r in refit9]
        left.plot(nodes, _nan_for_none(model), "-", color=colour,
                  label=f"{label}: printed models")
        left.plot(nodes, _nan_for_none(refit), ":", color=colour,
                  label=f"{label}: fitted models")
        left.plot(nodes, _nan_for_none(paper), "o", color=colour,
                  mfc="none", label=f"{label}: Table 9")
    left.set_xscale("log", base=2)
    left.set_xlabel("nodes on the axis")
    left.set_ylabel("smallest M' where d cycles win")
    left.legend(fontsize=7)
    left.set_title("Table 9: the crossover", fontsize=10)

    w = np.arange(2, 201)
    right.plot(w, one_cycle_time(d, w) / 1000, label="one cycle")
    right.plot(w, d_cycles_time(d, w, "compute") / 1000, label="d cycles, indices computed")
    right.plot(w, d_cycles_time(d, w, "move") / 1000, label="d cycles, indices moved")
    for key in ("compute", "move"):
        right.axvline(cycles_crossover(d, key), color="grey", lw=0.6, ls="--")
    right.set_xlabel("M' (64-bit elements per node)")
    right.set_ylabel("model time, ms")
    right.set_title(f"{2 ** d} nodes (printed constants)", fontsize=10)
    right.legend(fontsize=8)
    fig.tight_layout()
    return fig


_BROADCASTS = (("one_total", "one cycle", "C0", one_cycle_time, {}),
               ("comp_total", "d cycles, indices computed", "C1", d_cycles_time,
                {"index": "compute"}),
               ("move_total", "d cycles, indices moved", "C2", d_cycles_time, {"index": "move"}))


def broadcast_times_figure(constants: dict | None = None):
    """Left: Fig. 22 (Table 8, 256 elements per node) with the §6.1 models; right: move / compute.

    The model curves use the printed constants unless ``constants`` is given.
    """
    t8 = cm200_table(8)
    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4))
    d = np.arange(1, 10)
    for column, label, colour, model, kwargs in _BROADCASTS:
        left.plot(t8["nodes"], t8[column] / 1000, "o", color=colour, label=f"{label}: Table 8")
        left.plot(2 ** d, [model(int(k), 256, constants=constants, **kwargs) / 1e6 for k in d],
                  "-", color=colour, lw=1, label=f"{label}: model")
    left.set_xscale("log", base=2)
    left.set_yscale("log")
    left.set_xlabel("nodes on the axis")
    left.set_ylabel("time, s")
    left.set_title("all-to-all broadcast of 256 64-bit elements per node (Fig. 22)", fontsize=10)
    left.legend(fontsize=7)
    for number, marker in ((7, "s"), (8, "o"), (17, "^")):
        table = cm200_table(number)
        keep = ~np.isnan(table["comp_total"])
        kind = "reduction" if number == 17 else "broadcast"
        right.plot(table["nodes"][keep], table["move_total"][keep] / table["comp_total"][keep],
                   marker + "-", label=f"Table {number}: {kind}, "
                   f"M' = {table['words_per_node'][0]:.0f}")
    right.axhline(1, color="grey", lw=0.8)
    for _, number, _, nodes in measured_crossovers()[2:]:
        right.axvline(nodes, color="grey", lw=0.6, ls=":")
    right.set_xscale("log", base=2)
    right.set_xlabel("nodes on the axis")
    right.set_ylabel("time with indices moved / computed")
    right.set_title("below 1: moving the indices pays", fontsize=10)
    right.legend(fontsize=8)
    fig.tight_layout()
    return fig


def data_rates_figure():
    """Table 18's printed rates (markers) and the rates its readings imply (lines), per column."""
    t18 = cm200_table(18)
    nodes = t18["nodes"]
    fig, ax = plt.subplots(figsize=(7.5, 4))
    for k, column in enumerate(TABLE18_COLUMNS):
        reading = TABLE18_READINGS[column]
        times = rate_reading_times(reading, nodes)
        implied = bytes_per_node(nodes, reading.words, reading.bytes) / (times / 1000.0)
        ax.plot(nodes, t18[column], "o", color=f"C{k}", mfc="none", label=column)
        ax.plot(nodes, implied / reading.mbyte, "-", color=f"C{k}", lw=1)
    ax.set_xscale("log", base=2)
    ax.set_xlabel("nodes")
    ax.set_ylabel("Mbytes/s per node")
    ax.set_title("Table 18 (circles) and the rates implied by the report's times (lines)",
                 fontsize=10)
    ax.legend(fontsize=8, ncol=2)
    fig.tight_layout()
    return fig


def matvec_rates_figure(constants: dict | None = None):
    """Fig. 23 and its vector-matrix twin: Table 19's Gflop/s (markers) and the fitted model (lines).

    The markers are the printed rates, including the two with no printed time.

    The model is :func:`.matvec.fit_flop_rate` with ``constants`` for the
    communication (printed constants by default).
    """
    fig, axes = plt.subplots(1, 2, figsize=(12, 4), sharey=True)
    P = np.arange(1024, 24577, 512)
    for ax, operation in zip(axes, TABLE19_OPERATIONS):
        fit = fit_flop_rate(operation, constants)
        for k, nodes in enumerate(TABLE19_NODES):
            mine = [q for q in table19_points(operation) if q.nodes == nodes]
            ax.plot([q.P for q in mine], [q.mflops / 1000 for q in mine], "o",
                    color=f"C{k}", label=f"{nodes} nodes")
            sizes = P[P >= min(q.P for q in mine)]
            model_ms = np.array([matvec_comm_time(int(s), nodes, constants) for s in sizes]) \
                + 2.0 * sizes ** 2 / nodes / (fit.mflops_per_node * 1e3)
            ax.plot(sizes, 2.0 * sizes ** 2 / model_ms / 1e6, "-", color=f"C{k}", lw=1)
        ax.set_xlabel("P (the matrix is P x P)")
        ax.set_title(f"{TABLE19_OPERATIONS[operation]}: Table 19 (dots), model (lines), "
                     f"{fit.mflops_per_node:.2f} Mflop/s per node", fontsize=9)
    axes[0].set_ylabel("Gflop/s")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    return fig
