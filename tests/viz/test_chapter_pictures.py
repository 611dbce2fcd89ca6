"""The pictures that used to be drawn in the chapters' hidden cells (issue 25, point 5):
what each draws, read back from the figure."""
import pytest

from collective_lib import CostModel, catalog, simulate, viz
from collective_lib.algorithms.hrelation import (color_bipartite_multigraph,
                                                 h_relation_multigraph, message_sizes)
from collective_lib.networks import Ring
from collective_lib.ops import recv, send
from collective_lib.trees import in_order_node

ALGORITHMS = catalog()


def texts(ax, gid):
    return sorted(t.get_text() for t in ax.texts if t.get_gid() == gid)


def test_draw_in_order_run_writes_the_steps_of_each_edge():
    run = ALGORITHMS["pipelined_binary_tree_broadcast"].simulate(7, 3, root=3, k=3)
    ax = viz.draw_in_order_run(run, 3, title="steps")
    expected = {}
    for s in range(1, len(run.step_starts()) + 1):
        for msg in run.step(s):
            expected.setdefault((msg.src, msg.dst), []).append(str(s))
    assert texts(ax, "edge-label") == sorted(", ".join(v) for v in expected.values())
    assert "1, 4, 7" in texts(ax, "edge-label") and ax.get_title() == "steps"
    assert "3-1: 1, 4, 7" in viz.description(ax.figure)


def _up_and_down(me, p, data):
    """PE 1 (a leaf of the in-order tree of 3 PEs, root 1) ... a two-message exchange."""
    node = in_order_node(me, p, 1)
    if node.parent is None:
        left, right = (yield recv(node.left)), (yield recv(node.right))
        yield send(node.left, data)
        yield send(node.right, left + data)
        return left + data + right
    yield send(node.parent, data)
    return (yield recv(node.parent)) + data


def test_draw_in_order_run_writes_values_up_and_down_and_input_to_result():
    run = simulate(_up_and_down, 3, [1, 10, 100])
    ax = viz.draw_in_order_run(run, 1, what="values", fmt=lambda v: f"<{v}>", inputs=[1, 10, 100])
    assert texts(ax, "up") == ["<100>", "<1>"]
    assert texts(ax, "down") == ["<10>", "<11>"]
    assert texts(ax, "below") == ["<100> -> <111>", "<10> -> <111>", "<1> -> <11>"]
    with pytest.raises(ValueError, match="'steps' or 'values'"):
        viz.draw_in_order_run(run, 1, what="sizes")


def test_cost_per_word_divides_the_best_closed_form_by_tw_m():
    model = CostModel(ts=100, tw=1)
    entry = ALGORITHMS["pipelined_binary_tree_broadcast"]
    ax = viz.cost_per_word(entry, [16, 64], [10, 10 ** 4], model, bound=3,
                           bound_label="3 beta n", ylabel="ratio")
    emodel = entry.default_model(100, 1)
    for p in (16, 64):
        [line] = [ln for ln in ax.lines if ln.get_gid() == f"p={p}"]
        assert list(line.get_ydata()) == pytest.approx(
            [entry.predict(p, m, emodel, k=entry.optimal_k(p, m, emodel)) / m
             for m in (10, 10 ** 4)])
        assert line.get_label() == f"p = {p}"
    [bound] = [ln for ln in ax.lines if ln.get_gid() == "bound"]
    assert list(bound.get_ydata()) == [3, 3] and bound.get_linestyle() == ":"
    assert (ax.get_xscale(), ax.get_yscale(), ax.get_ylabel()) == ("log", "log", "ratio")
    assert ax.get_title() == "pipelined_binary_tree_broadcast, ts = 100, tw = 1"
    dashes = {ln.get_linestyle() for ln in ax.lines if ln.get_gid().startswith("p=")}
    assert len(dashes) == 2                          # not told apart by colour alone
    assert "with a dotted line at 3" in viz.description(ax.figure)


def test_winner_maps_letter_every_cell_and_name_the_winners():
    names = ["binomial_broadcast", "linear_pipeline_broadcast", "two_tree_broadcast"]
    ps, ms = [4, 8, 16], [1, 1000]
    first = {(p, m): names[0] if m == 1 else names[1] for p in ps for m in ms}
    second = {(p, m): names[0] if m == 1 else names[2 if p > 4 else 1] for p in ps for m in ms}
    fig = viz.winner_maps({"basic": first, "all": second}, ps, ms, names=names,
                          operation="broadcast", model=CostModel(ts=100, tw=1))
    top, bottom = fig.axes
    assert top.get_title() == "fastest broadcast, basic (ts = 100, tw = 1)"
    assert [t.get_text() for t in top.texts] == ["A"] * 3 + ["B"] * 3    # row m = 1 first
    assert [t.get_text() for t in bottom.texts] == ["A"] * 3 + ["B", "C", "C"]
    assert bottom.images[0].get_array().tolist() == [[0, 0, 0], [1, 2, 2]]
    assert [t.get_text() for t in top.get_yticklabels()] == ["1", "1,000"]   # rows, not a log axis
    [legend] = fig.legends
    assert [t.get_text() for t in legend.get_texts()] == [
        "A: binomial_broadcast", "B: linear_pipeline_broadcast", "C: two_tree_broadcast"]
    text = viz.description(fig)
    assert "m = 1: binomial_broadcast at p = 4 to 16" in text
    assert "linear_pipeline_broadcast at p = 4; two_tree_broadcast at p = 8 to 16" in text


def test_mark_value_draws_a_dotted_line_and_says_so():
    ax = viz.cost_curves(["binomial_broadcast"], values=[2, 4, 8], simulate=False)
    viz.mark_value(ax, 5, "n*", "A dotted line marks 5.")
    [line] = [ln for ln in ax.lines if ln.get_gid() == "mark"]
    assert list(line.get_xdata()) == [5, 5] and line.get_linestyle() == ":"
    assert texts(ax, "mark") == [" n*"]
    assert viz.description(ax.figure).endswith("A dotted line marks 5.")
    viz.mark_value(ax, 6, None, "And 6.")
    assert texts(ax, "mark") == [" n*"]


def test_the_titles_and_labels_the_chapters_give():
    run = ALGORITHMS["naive_broadcast"].simulate(p=4, network=Ring(4))
    assert viz.link_load_map(run, name="naive").get_title().startswith("naive, link load:")
    assert viz.draw_step(run, 1, title="first").get_title() == "first"
    assert viz.draw_step(run, 1).get_title() == "step 1 of 3"
    assert viz.space_time(run, title="naive").get_title() == "naive"
    ax = viz.cost_curves(["binomial_broadcast"], values=[2, 4], title="t", xlabel="M'")
    assert (ax.get_title(), ax.get_xlabel()) == ("t", "M'")


def test_space_time_stack_shares_the_time_axis_of_the_longest_run():
    runs = [ALGORITHMS[n].simulate(p=8) for n in ("naive_broadcast", "binomial_broadcast")]
    fig = viz.space_time_stack(runs, titles=["naive", "binomial"])
    top, bottom = fig.axes
    assert [top.get_title(), bottom.get_title()] == ["naive", "binomial"]
    assert top.get_xlim() == bottom.get_xlim() == pytest.approx((0, runs[0].time * 1.08))
    text = viz.description(fig)
    assert "This is the naive, drawn on top." in text
    assert "This is the binomial, drawn at the bottom, on the same time axis." in text
    with pytest.raises(ValueError, match="one title per run"):
        viz.space_time_stack(runs, titles=["one"])


def test_draw_multigraph_steps_draws_each_step_strongly_in_its_own_panel():
    sizes = message_sizes(ALGORITHMS["alltoallv_two_phase"].make_inputs(4, 5, seed=3))
    graph = h_relation_multigraph(sizes)
    colours = color_bipartite_multigraph(graph)
    fig = viz.draw_multigraph_steps(graph, colours, cols=3)
    steps = sorted(set(colours.values()))
    assert [ax.get_title() for ax in fig.axes] == [f"step {c + 1}" for c in steps]
    for ax, c in zip(fig.axes, steps):
        strong = [p for p in ax.patches if p.get_gid() == f"edge:{c}"]
        assert len(strong) == sum(1 for v in colours.values() if v == c)
        assert strong[0].get_linewidth() > max(
            p.get_linewidth() for p in ax.patches
            if (p.get_gid() or "").startswith("edge:") and p.get_gid() != f"edge:{c}")
        assert ax.get_legend() is None
