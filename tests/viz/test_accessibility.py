"""Every drawing of the book is readable where the book shows it, says what it shows, and
never tells categories apart by colour alone (issue 29, point 2).

The drawings are made as the chapters make them (``grep -o "viz\\.[a-z_]*(" book/*.ipynb``,
and chapter 6's ``drawings.*_figure()``), each at its own default size: the chapters draw at
``BOOK_DPI`` into a text column ``TEXT_COLUMN_PX`` wide.
"""
import functools

import matplotlib
import matplotlib.pyplot as plt
import pytest
from matplotlib.colors import to_rgba
from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from collective_lib import CostModel, TwoLevel, TwoLevelModel, catalog, simulate, viz
from collective_lib.algorithms.hrelation import (color_bipartite_multigraph,
                                                 h_relation_multigraph, message_sizes)
from collective_lib.algorithms.sync import (barrier_demo, binomial_barrier,
                                            lock_demo, simple_barrier, ttas_backoff_lock)
from collective_lib.cm200 import drawings
from collective_lib.embeddings import h_tree
from collective_lib.networks import Hypercube, LinearArray, Mesh, Ring
from collective_lib.ops import recv, send
from collective_lib.selection import winner_map
from collective_lib.shared_memory import simulate_shared

ALGORITHMS = catalog()
MODEL = CostModel(ts=100, tw=1)


def _entries(operation):
    return [e for e in ALGORITHMS.values() if e.operation == operation]


def _half_shift(me, p, data):
    """PE i of the lower half sends to PE i + p/2 (chapter 0's crowded line)."""
    if me < p // 2:
        yield send(me + p // 2, data, words=1)
    else:
        yield recv(me - p // 2)


def _uneven(me, e):
    return 40 * ((3 * me + e) % 4)


def _bipartite():
    sizes = message_sizes(ALGORITHMS["alltoallv_two_phase"].make_inputs(4, 5, seed=3))
    graph = h_relation_multigraph(sizes)
    return graph, color_bipartite_multigraph(graph)


def _timings():
    words = [8, 64, 512, 4096]
    return [viz.Timings("binomial model", words, [1e-5, 2e-5, 8e-5, 5e-4], "model", "C0"),
            viz.Timings("binomial measured", words, [3e-5, 5e-5, 2e-4, 9e-4], "measured", "C0"),
            viz.Timings("pipeline model", words, [2e-5, 3e-5, 6e-5, 3e-4], "model", "C1"),
            viz.Timings("pipeline measured", words, [4e-5, 6e-5, 1e-4, 6e-4], "measured", "C1"),
            viz.Timings("MPI_Bcast", words, [2e-5, 3e-5, 9e-5, 4e-4], "reference", "k")]


#: Chapter 8's maps of the selector: its grid, and the machine of its second map.
CH8_GRID = ([4, 8, 16, 32, 64], [1, 100, 1000, 10_000])
CH8_LEVELS = TwoLevelModel(inside=CostModel(ts=10, tw=0.1), between=MODEL)


def _four_per_node(p):
    return TwoLevel.of_size(p, 4)


@functools.cache
def _ch8_maps(model):
    """The winners of chapter 8's maps on nodes of 4 PEs, simulated once for the three
    tests that draw each map (as the chapter glues its numbers from the maps it draws)."""
    options = dict(network_for=_four_per_node, per_node=4)
    return {"closed forms": winner_map("allreduce", *CH8_GRID, model, **options),
            "simulated": winner_map("allreduce", *CH8_GRID, model, simulate=True, **options)}


def _figure(drawn):
    return drawn if isinstance(drawn, matplotlib.figure.Figure) else drawn.figure


#: name -> how a chapter draws it (each returns an Axes or a Figure).
CHAPTER_DRAWINGS = {
    "ch0 draw_network Hypercube(4)": lambda: viz.draw_network(Hypercube(4), title="Hypercube(4)"),
    "ch0 draw_network Mesh(4, 4, wrap)": lambda: viz.draw_network(Mesh(4, 4, wrap=True)),
    "ch0 link_load_map": lambda: viz.link_load_map(simulate(_half_shift, 8, network=LinearArray(8))),
    "ch0 space_time": lambda: viz.space_time(simulate(_half_shift, 8, network=LinearArray(8))),
    "ch1 space_time naive": lambda: viz.space_time(ALGORITHMS["naive_broadcast"].simulate(8)),
    "ch1 draw_steps binomial": lambda: viz.draw_steps(ALGORITHMS["binomial_broadcast"].simulate(p=8),
                                                      cols=3),
    "ch1 draw_in_order_tree": lambda: viz.draw_in_order_tree(12, 8),
    "ch1 draw_heap_tree": lambda: viz.draw_heap_tree(12, 0),
    "ch1 cost_curves over p": lambda: viz.cost_curves(
        _entries("broadcast"), vary="p", values=[2, 4, 8, 16, 32, 64, 128, 256, 512], m=10_000,
        model=MODEL, params=viz.optimal_params, simulate=False),
    "ch1 draw_mesh_tree 8 x 8": lambda: viz.draw_mesh_tree(h_tree(8), 8, 8),
    "ch1 draw_mesh_tree 16 x 16": lambda: viz.draw_mesh_tree(h_tree(16), 16, 16, show_usage=False),
    "ch2 draw_binomial_run": lambda: viz.draw_binomial_run(
        ALGORITHMS["binomial_broadcast"].simulate(p=8), title="broadcast: step of each message"),
    "ch2 cost_curves reductions": lambda: viz.cost_curves(
        _entries("reduce"), vary="m", values=[1, 10, 100, 1_000, 10_000, 100_000], p=64,
        model=MODEL, params=viz.optimal_params, simulate=False),
    "ch2 in-order tree with values": lambda: viz.draw_in_order_tree(
        7, 3, up={0: "1", 2: "3", 1: "0:2"}, down={0: "0", 2: "0:1"}, mark_root=False,
        below=[f"{v} -> {v}" for v in range(7)]),
    "ch2 space_time pipelined prefix": lambda: viz.space_time(
        ALGORITHMS["linear_pipeline_broadcast"].simulate(7, 3, k=3)),
    "ch3 memory_timeline lock": lambda: viz.memory_timeline(
        simulate_shared(lock_demo, 4, lock=ttas_backoff_lock, rounds=2, hold=100),
        title="ttas_backoff_lock: 4 PEs, 2 sections of 100 units each"),
    "ch3 memory_timeline barrier": lambda: viz.memory_timeline(
        simulate_shared(barrier_demo, 8, barrier=binomial_barrier, epochs=2, work=_uneven),
        title="binomial-tree barrier, p = 8, two epochs with uneven work"),
    "ch3 wait_graph binomial": lambda: viz.wait_graph(
        simulate_shared(barrier_demo, 8, barrier=binomial_barrier, epochs=1),
        title="binomial-tree barrier, p = 8"),
    "ch3 wait_graph circle": lambda: viz.wait_graph(
        simulate_shared(barrier_demo, 8, barrier=simple_barrier, epochs=1), layout="circle"),
    "ch4 draw_binomial_run gather": lambda: viz.draw_binomial_run(
        ALGORITHMS["binomial_gather"].simulate(8, 3), unit=3,
        title="binomial gather, p = 8: step and length of each message"),
    "ch4 space_time gather p = 11": lambda: viz.space_time(
        ALGORITHMS["binomial_gather"].simulate(11, 1, model=CostModel(ts=1, tw=0.25))),
    "ch5 draw_steps ring": lambda: viz.draw_steps(
        ALGORITHMS["all_to_all_bc_ring"].simulate(8, inputs=[[i] for i in range(8)]),
        [1, 2, 7], cols=3, label=viz.sources_label),
    "ch5 draw_steps mesh": lambda: viz.draw_steps(
        ALGORITHMS["all_to_all_bc_mesh"].simulate(9, inputs=[[i] for i in range(9)]), cols=4,
        label=viz.sources_label),
    "ch5 draw_steps hypercube": lambda: viz.draw_steps(
        ALGORITHMS["all_to_all_bc_hcube"].simulate(8, inputs=[[i] for i in range(8)]), cols=3,
        label=viz.sources_label),
    "ch5 draw_steps e-cube": lambda: viz.draw_steps(
        ALGORITHMS["all_to_all_personal_hcube_ecube"].simulate(8), cols=4, label=False),
    "ch5 cost_curves allgather": lambda: viz.cost_curves(
        _entries("allgather"), vary="m", values=[1, 10, 100, 1000, 10_000], p=64, model=MODEL,
        simulate=False),
    "ch5 draw_step and link_load_map": lambda: viz.link_load_map(
        simulate(_half_shift, 8, network=Ring(8))),
    "ch5 draw_bipartite_multigraph": lambda: viz.draw_bipartite_multigraph(
        *_bipartite(), title="H: one edge per word; colour = step"),
    "ch6 cost_curves cycles": lambda: viz.cost_curves(
        ["one_cycle_broadcast", "d_cycles_broadcast", "send_and_spread"], vary="m",
        values=range(1, 41), p=32, model=CostModel(ts=1, tw=0.25), simulate=False),
    "ch6 gray_ring_figure": drawings.gray_ring_figure,
    "ch6 matvec_layout_figure": lambda: drawings.matvec_layout_figure(2, 4),
    "ch6 shifted_cycles_figure": drawings.shifted_cycles_figure,
    "ch6 model_residuals_figure": drawings.model_residuals_figure,
    "ch6 crossover_figure": lambda: drawings.crossover_figure(8),
    "ch6 broadcast_times_figure": drawings.broadcast_times_figure,
    "ch6 data_rates_figure": drawings.data_rates_figure,
    "ch6 matvec_rates_figure": drawings.matvec_rates_figure,
    "ch7 measured_vs_model": lambda: viz.measured_vs_model(_timings(), p=4, cores=2),
    "ch1 draw_in_order_run steps": lambda: viz.draw_in_order_run(
        ALGORITHMS["pipelined_binary_tree_broadcast"].simulate(7, 3, root=3, k=3), 3),
    "ch1 cost_per_word": lambda: viz.cost_per_word(
        "pipelined_binary_tree_broadcast", [16, 64, 1024], [10, 1000, 10 ** 5, 10 ** 7], MODEL,
        bound=3),
    "ch1 winner_maps": lambda: viz.winner_maps(
        {"all": {(p, m): "binomial_broadcast" if m < 1000 else "two_tree_broadcast"
                 for p in (4, 8, 16) for m in (1, 1000)}}, [4, 8, 16], [1, 1000],
        names=["binomial_broadcast", "two_tree_broadcast"], operation="broadcast",
        model=MODEL),
    "ch5 draw_multigraph_steps": lambda: viz.draw_multigraph_steps(*_bipartite()),
    "ch6 space_time_stack": lambda: viz.space_time_stack(
        [ALGORITHMS[n].simulate(p=8) for n in ("naive_broadcast", "binomial_broadcast")],
        titles=["naive", "binomial"]),
    "ch7 ping_pong_fit": lambda: viz.ping_pong_fit([1, 1000, 10 ** 5], [2e-5, 2.2e-5, 2e-4],
                                                   CostModel(ts=2e-5, tw=2e-9)),
    "ch8 draw_two_level": lambda: viz.draw_two_level(
        ALGORITHMS["recursive_doubling_allreduce"].simulate(16, 1000, network=TwoLevel(4, 4),
                                                            model=MODEL)),
    "ch8 draw_two_level two models": lambda: viz.draw_two_level(
        ALGORITHMS["all_to_all_bc_ring"].simulate(
            12, network=TwoLevel(3, 4), model=TwoLevelModel(inside=CostModel(ts=1, tw=0.1),
                                                            between=CostModel(ts=10, tw=1)))),
    "ch8 draw_steps ring all-reduce": lambda: viz.draw_steps(
        ALGORITHMS["ring_allreduce"].simulate(4, 4, network=Ring(4)), cols=3,
        label=lambda msg, step: f"{step}: block {(msg.src - step) % 4}"),
    "ch8 choice_map on nodes": lambda: viz.choice_map(
        "allreduce", *CH8_GRID, MODEL, simulate=True, per_node=4,
        winners=_ch8_maps(MODEL), network_for=_four_per_node,
        mpich={"MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE": 2048}),
    "ch8 choice_map on two levels": lambda: viz.choice_map(
        "allreduce", *CH8_GRID, CH8_LEVELS, simulate=True, per_node=4,
        winners=_ch8_maps(CH8_LEVELS), network_for=_four_per_node,
        mpich={"MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE": 2048}),
}


@pytest.mark.parametrize("name", sorted(CHAPTER_DRAWINGS))
def test_every_chapter_drawing_is_readable_at_its_displayed_size(name):
    fig = _figure(CHAPTER_DRAWINGS[name]())
    smallest = viz.smallest_font(fig)
    assert smallest is not None
    assert smallest.px >= viz.MIN_FONT_PX, (
        f"{name}: {smallest.text!r} is shown {smallest.px:.1f} px high "
        f"({smallest.points} pt, figure scaled by {smallest.shrink:.2f})")


@pytest.mark.parametrize("name", sorted(CHAPTER_DRAWINGS))
def test_every_chapter_drawing_says_what_it_shows(name):
    fig = _figure(CHAPTER_DRAWINGS[name]())
    text = viz.description(fig)
    assert text and text.endswith((".", ")")), (name, text)
    assert ".png" not in text and "_images" not in text
    panels = sum(1 for ax in fig.axes if viz.descriptions._SENTENCES.get(ax))
    assert len(text) <= 420 * panels, (name, len(text), text)


def _rgb(colour):
    return tuple(round(c, 3) for c in to_rgba(colour)[:3])


def _carriers(handle):
    """What tells a legend entry apart besides its colour."""
    if isinstance(handle, Line2D):
        ls = handle.get_linestyle() if handle.get_linestyle() not in ("None", "none", "") \
            else None
        dashes = tuple(handle._dash_pattern[1] or ()) if ls else None
        marker = handle.get_marker() if handle.get_marker() not in ("None", "none", "") \
            else None
        return ("line", ls, dashes, marker)
    if isinstance(handle, Patch):
        return ("patch", handle.get_hatch())
    return (type(handle).__name__, getattr(handle, "get_paths", lambda: None)() and
            tuple(p.vertices.tobytes() for p in handle.get_paths()))


def _colour_of(handle):
    if isinstance(handle, Line2D):
        return _rgb(handle.get_color())
    if isinstance(handle, Patch):
        return _rgb(handle.get_facecolor())
    return _rgb(handle.get_facecolor()[0]) if len(handle.get_facecolor()) else None


def _hue(rgb) -> bool:
    """A colour with a hue (not a grey, whose lightness a colour-blind reader sees)."""
    return rgb is not None and max(rgb) - min(rgb) > 0.02


@pytest.mark.parametrize("name", sorted(CHAPTER_DRAWINGS))
def test_no_two_legend_entries_differ_by_colour_alone(name):
    fig = _figure(CHAPTER_DRAWINGS[name]())
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend()] + list(fig.legends)
    for legend in legends:
        entries = [(t.get_text(), h) for t, h in zip(legend.get_texts(), legend.legend_handles)]
        for i, (label, handle) in enumerate(entries):
            for other, second in entries[i + 1:]:
                a, b = _colour_of(handle), _colour_of(second)
                if a == b or not (_hue(a) and _hue(b)):     # greys differ in lightness
                    continue
                assert _carriers(handle) != _carriers(second), \
                    f"{name}: {label!r} and {other!r} differ only in colour"


def test_the_palette_is_colour_blind_safe_and_categories_differ_in_shape():
    assert viz.PALETTE[:3] == ("#0072B2", "#D55E00", "#009E73")      # Okabe-Ito
    styles = [viz.category_style(i) for i in range(24)]
    assert len({(s["ls"], s["marker"]) for s in styles}) == 24


def test_matvec_layout_marks_the_moved_pieces_by_hatching():
    fig = drawings.matvec_layout_figure(2, 4)
    cells = [r for r in fig.axes[2].patches]
    hatched = [r for r in cells if r.get_hatch()]
    assert len(hatched) == 6 and {_rgb(r.get_facecolor()) for r in hatched} == {
        _rgb("#f4c7a1")}
    assert not any(r.get_hatch() for r in fig.axes[0].patches)


def test_space_time_tells_sending_from_receiving_by_hatching_and_place():
    ax = viz.space_time(ALGORITHMS["binomial_broadcast"].simulate(p=4))
    hatches = [c.get_hatch() for c in ax.collections]
    assert None in hatches and viz.HATCHES[1] in hatches


def test_the_smallest_font_counts_the_shrinking_of_a_wide_figure():
    fig, ax = plt.subplots(figsize=(2 * viz.TEXT_WIDTH, 3))
    ax.set_axis_off()
    fig.text(0.0, 0.5, "wide", fontsize=10)
    fig.text(1.0, 0.5, "wider", fontsize=12, ha="right")
    ax.text(0.1, 0.1, "", fontsize=2)                    # empty: not drawn
    hidden = ax.text(0.2, 0.2, "hidden", fontsize=3)
    hidden.set_visible(False)
    found = viz.smallest_font(fig)
    assert found.text == "wide" and found.points == 10
    assert 0.45 < found.shrink < 0.52
    assert found.px == pytest.approx(10 * viz.BOOK_DPI / 72 * found.shrink)
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.set_axis_off()
    assert viz.smallest_font(fig) is None
