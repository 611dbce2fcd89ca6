"""The pictures show what the run did: arrows, labels, loads, curves and tables are read back."""
import io

import matplotlib.pyplot as plt
import pytest

from collective_lib import CostModel, FullyConnected, Hypercube, Mesh, Ring, catalog, viz


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def by_gid(ax, gid):
    return [a for a in ax.patches if a.get_gid() == gid]


def labels(ax):
    return sorted(t.get_text() for t in ax.texts if t.get_gid() == "label")


def filled_nodes(ax):
    nodes = by_gid(ax, "node")
    return {pe for pe, c in enumerate(nodes) if c.get_facecolor()[:3] != (1.0, 1.0, 1.0)}


def formula_lines(ax):
    return {ln.get_gid().split(":")[0]: ln for ln in ax.get_lines()
            if (ln.get_gid() or "").endswith(":formula")}


def simulated_points(ax):
    return {ln.get_gid().split(":")[0]: ln for ln in ax.get_lines()
            if (ln.get_gid() or "").endswith(":simulated")}


def broadcasts():
    return [e for e in catalog().values() if e.operation == "broadcast"]


# -- draw_step -----------------------------------------------------------------------------

@pytest.mark.parametrize("step, count", [(1, 1), (2, 2), (3, 4)])
def test_binomial_step_has_one_arrow_and_label_per_message(step, count):
    run = catalog()["binomial_broadcast"].simulate(p=8)
    ax = viz.draw_step(run, step)
    assert len(run.step(step)) == count
    assert len(by_gid(ax, "message")) == count
    assert labels(ax) == [f"{step} (0)"] * count
    assert ax.get_title() == f"step {step} of 3"


def test_labels_name_the_root_as_origin():
    run = catalog()["binomial_broadcast"].simulate(p=8, root=5)
    assert labels(viz.draw_step(run, 3)) == ["3 (5)"] * 4


def test_holders_are_filled_and_receivers_ringed():
    run = catalog()["hypercube_broadcast"].simulate(p=8, root=3)
    ax = viz.draw_step(run, 2)
    # Step 1 sent 3 -> 7; in step 2 both of them send.
    assert filled_nodes(ax) == {3, 7}
    ringed = {pe for pe, c in enumerate(by_gid(ax, "node")) if c.get_linewidth() > 1.5}
    assert ringed == {m.dst for m in run.step(2)} == {1, 5}


def test_routed_message_is_one_arrow_along_its_path():
    run = catalog()["naive_broadcast"].simulate(p=8, network=Ring(8))
    ax = viz.draw_step(run, 4)                    # 0 -> 4 crosses four links
    (arrow,) = by_gid(ax, "message")
    assert len(arrow.get_path().vertices) >= 5
    assert labels(ax) == ["4 (0)"]


def test_custom_and_no_labels():
    run = catalog()["binomial_broadcast"].simulate(p=4)
    ax = viz.draw_step(run, 2, label=lambda m, s: f"{m.src}->{m.dst}")
    assert labels(ax) == ["0->1", "2->3"]
    assert labels(viz.draw_step(run, 2, label=False)) == []


def test_draw_step_rejects_bad_step_and_untraced_run():
    entry = catalog()["binomial_broadcast"]
    with pytest.raises(ValueError, match="step must be in 1..3"):
        viz.draw_step(entry.simulate(p=8), 4)
    with pytest.raises(ValueError, match="trace=True"):
        viz.draw_step(entry.simulate(p=8, trace=False), 1)


def test_draw_steps_makes_one_panel_per_step():
    run = catalog()["linear_pipeline_broadcast"].simulate(p=4, m=2, k=2)
    fig = viz.draw_steps(run, cols=2)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == [f"step {s} of 4" for s in range(1, 5)]
    assert len(fig.axes) == 4


def test_pictures_are_deterministic():
    def png():
        run = catalog()["hypercube_broadcast"].simulate(p=16, root=5)
        ax = viz.draw_step(run, 3)
        buf = io.BytesIO()
        ax.figure.savefig(buf, format="png")
        plt.close(ax.figure)
        return buf.getvalue()
    assert png() == png()


def test_drawing_is_silent(capfd):
    run = catalog()["binomial_broadcast"].simulate(p=8)
    viz.draw_steps(run)
    viz.space_time(run)
    viz.link_load_map(run)
    out, err = capfd.readouterr()
    assert out == "" and err == ""


# -- draw_network and link load ------------------------------------------------------------

def segments(ax):
    return sum(len(c.get_segments()) for c in ax.collections)


def test_small_clique_draws_every_link_large_clique_none():
    assert segments(viz.draw_network(FullyConnected(8))) == 28
    ax = viz.draw_network(FullyConnected(16))
    assert segments(ax) == 0 and len(by_gid(ax, "node")) == 16


def test_node_labels_can_be_switched_off():
    ax = viz.draw_network(Hypercube(3), node_labels=False)
    assert not [t for t in ax.texts if t.get_gid() == "node-label"]
    assert len([t for t in viz.draw_network(Hypercube(3)).texts]) == 8


def test_wraparound_links_curve_instead_of_crossing_nodes():
    ax = viz.draw_network(Mesh(3, 3, wrap=True))
    curved = [a for a in ax.patches if a.get_gid() is None]
    assert len(curved) == 6                       # three row and three column wraps
    assert segments(ax) == 12


def test_link_load_map_scale_ends_at_the_largest_load():
    run = catalog()["naive_broadcast"].simulate(p=8, network=Ring(8))
    ax = viz.link_load_map(run)
    colour_bar = ax.figure.axes[-1]
    assert run.max_link_load() == 4
    assert colour_bar.get_ylim() == (0.0, 4.0)
    assert ax.get_title() == "link load: at most 4 transfers on one link"
    assert len(by_gid(ax, "link")) == len(Ring(8).links())


def test_link_load_on_a_clique_draws_only_used_links():
    run = catalog()["binomial_broadcast"].simulate(p=16)
    ax = viz.link_load_map(run)
    assert len(by_gid(ax, "link")) == 15
    assert ax.figure.axes[-1].get_ylim() == (0.0, 1.0)


# -- space-time ----------------------------------------------------------------------------

def test_space_time_draws_every_message_pe0_on_top_and_the_total_time():
    run = catalog()["linear_pipeline_broadcast"].simulate(p=5, m=3, k=3)
    ax = viz.space_time(run)
    arrows = by_gid(ax, "message")
    assert len(arrows) == len(run.messages) == 4 * 3
    bottom, top = ax.get_ylim()
    assert bottom > top                              # y grows downwards: PE 0 at the top
    assert [t.get_text() for t in ax.texts] == [f"T = {run.time:g}"] == ["T = 6"]
    assert ax.get_xlabel() == "time (units of the model)"


# -- cost curves ---------------------------------------------------------------------------

def test_cost_curves_one_line_per_entry_and_exact_points_on_the_line():
    ax = viz.cost_curves(broadcasts(), values=range(1, 17), m=4)
    lines, points = formula_lines(ax), simulated_points(ax)
    assert set(lines) == {e.name for e in broadcasts()}
    for entry in broadcasts():
        xs, predicted = lines[entry.name].get_data()
        sx, simulated = points[entry.name].get_data()
        assert list(sx) == list(xs)
        assert list(predicted) == [entry.predict(int(p), 4) for p in xs]
        if entry.exact:
            assert list(simulated) == list(predicted), entry.name
        else:
            assert all(s <= t for s, t in zip(simulated, predicted)), entry.name
    assert list(lines["hypercube_broadcast"].get_xdata()) == [1, 2, 4, 8, 16]
    assert list(lines["naive_broadcast"].get_ydata())[-1] == 15


def test_cost_curves_skip_entries_without_a_valid_p_and_mark_bounds():
    ax = viz.cost_curves(broadcasts(), values=[3, 5, 6], m=2)
    lines = formula_lines(ax)
    assert "hypercube_broadcast" not in lines
    labels = {ln.get_label() for ln in lines.values()}
    assert "pipelined_binary_tree_broadcast (bound)" in labels
    assert "binomial_broadcast" in labels
    assert ax.get_ylabel() == "time (units of the model)"


def test_cost_curves_over_m_use_each_entrys_port_model():
    model = CostModel(ts=2.0, tw=0.5)
    names = ["linear_pipeline_broadcast", "pipelined_binary_tree_broadcast"]
    ax = viz.cost_curves(names, vary="m", values=[2, 4, 8], p=8, model=model,
                         params={"k": 2, "unused": 1})
    lines, points = formula_lines(ax), simulated_points(ax)
    linear, tree = catalog()[names[0]], catalog()[names[1]]
    assert list(lines[names[0]].get_ydata()) == \
        [linear.predict(8, m, model, k=2) for m in (2, 4, 8)]
    assert list(points[names[0]].get_ydata()) == list(lines[names[0]].get_ydata())
    half = CostModel(ts=2.0, tw=0.5, ports="half-duplex")
    assert list(points[names[1]].get_ydata()) == \
        [tree.simulate(8, m, model=half, k=2, trace=False).time for m in (2, 4, 8)]


def test_cost_curves_at_optimal_k_and_without_simulation():
    model = CostModel(ts=1.0, tw=0.1)
    ax = viz.cost_curves(["linear_pipeline_broadcast"], values=[4, 8], m=64, model=model,
                         params=viz.optimal_params, simulate=False)
    entry = catalog()["linear_pipeline_broadcast"]
    best = [entry.predict(p, 64, model, k=entry.optimal_k(p, 64, model)) for p in (4, 8)]
    assert list(formula_lines(ax)["linear_pipeline_broadcast"].get_ydata()) == best
    assert simulated_points(ax) == {}


def test_cost_curves_reject_bad_arguments():
    with pytest.raises(ValueError, match="vary"):
        viz.cost_curves(broadcasts(), vary="q", values=[2])
    with pytest.raises(ValueError, match="needs the number of PEs"):
        viz.cost_curves(broadcasts(), vary="m", values=[2])
    with pytest.raises(ValueError, match="unknown algorithm"):
        viz.cost_curves(["no_such_broadcast"], values=[2])


# -- holdings ------------------------------------------------------------------------------

def test_holdings_of_a_binomial_broadcast():
    run = catalog()["binomial_broadcast"].simulate(p=8)
    assert viz.holdings_table(run) == [
        (1, 0.0, [0, 4]),
        (2, 1.0, [0, 2, 4, 6]),
        (3, 2.0, [0, 1, 2, 3, 4, 5, 6, 7]),
    ]


def test_holdings_from_another_root_and_for_chosen_pes():
    run = catalog()["hypercube_broadcast"].simulate(p=8, root=3)
    rows = viz.holdings_table(run, pes=[0, 3, 7])
    assert [r.holders for r in rows] == [[3, 7], [3, 7], [0, 3, 7]]
    assert [r.step for r in rows] == [1, 2, 3]


def test_cost_curves_skip_sizes_an_entry_refuses():
    # Rabenseifner's all-reduce needs at least one word per PE: m < p has no point.
    from collective_lib import CostModel
    from collective_lib.viz import cost_curves
    import matplotlib.pyplot as plt
    ax = cost_curves(["rabenseifner_allreduce"], vary="m", values=[1, 4, 8, 16, 64], p=8,
                     model=CostModel(1.0, 0.1), simulate=False)
    (line,) = [l for l in ax.get_lines() if l.get_gid() == "rabenseifner_allreduce:formula"]
    assert list(line.get_xdata()) == [8, 16, 64]
    plt.close(ax.figure)
