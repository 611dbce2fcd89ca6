"""cost_curves: closed forms as lines, simulated times as markers, read back from the plot."""
import pytest

from collective_lib import CostModel, catalog, viz


def formula_lines(ax):
    return {ln.get_gid().split(":")[0]: ln for ln in ax.get_lines()
            if (ln.get_gid() or "").endswith(":formula")}


def simulated_points(ax):
    return {ln.get_gid().split(":")[0]: ln for ln in ax.get_lines()
            if (ln.get_gid() or "").endswith(":simulated")}


def broadcasts():
    return [e for e in catalog().values() if e.operation == "broadcast"]


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


def test_cost_curves_skip_sizes_an_entry_refuses():
    # Rabenseifner's all-reduce needs at least one word per PE: m < p has no point.
    ax = viz.cost_curves(["rabenseifner_allreduce"], vary="m", values=[1, 4, 8, 16, 64], p=8,
                         model=CostModel(1.0, 0.1), simulate=False)
    (line,) = [l for l in ax.get_lines() if l.get_gid() == "rabenseifner_allreduce:formula"]
    assert list(line.get_xdata()) == [8, 16, 64]


def test_cost_curves_say_so_when_no_algorithm_runs_at_all():
    reductions = [e for e in catalog().values() if e.operation == "all_to_all_reduction"]
    assert not any(e.valid(15) for e in reductions)
    ax = viz.cost_curves(reductions, vary="m", values=[1, 10, 100], p=15)
    assert not ax.get_lines()
    assert [t.get_text() for t in ax.texts] == ["none of these algorithms runs on p = 15"]
    assert list(ax.get_yticks()) == []


def test_a_log_axis_within_one_decade_still_labels_several_ticks():
    # 3 (100 + 0.01 m) for m up to 1000: 300 to 330, no power of ten in view
    ax = viz.cost_curves(["binomial_broadcast"], vary="m", values=[1, 10, 100, 1000], p=8,
                         model=CostModel(ts=100, tw=0.01), simulate=False)
    assert ax.get_yscale() == "log"
    ax.figure.canvas.draw()
    low, high = ax.get_ylim()
    shown = [label.get_text() for label in ax.get_yticklabels()
             if low <= label.get_position()[1] <= high and label.get_text()]
    assert len(shown) >= 2 and all(text.isdigit() for text in shown), shown


def test_a_log_axis_labels_a_value_below_and_above_every_curve():
    # binomial_broadcast, 3 (ts + m) with tw = 1: for m = 1 to 3000, 123 to 9120 for ts = 40
    # (100, 1000 and 10000 in view) and 213 to 9210 for ts = 70, labelled 1000 and 10000
    # alone before; for m = 1 to 1000 and ts = 100, 303 to 3300, labelled 500, 1000 and
    # 2000 alone (the chapter's alltoallv curves, 215 to 5000, had no label below 500)
    for ts, last in ((40, 3000), (70, 3000), (100, 1000)):
        ax = viz.cost_curves(["binomial_broadcast"], vary="m", values=[1, 10, 100, last],
                             p=8, model=CostModel(ts=ts, tw=1), simulate=False)
        ax.figure.canvas.draw()
        low, high = ax.get_ylim()
        times = ax.lines[0].get_ydata()
        labelled = [label.get_position()[1] for label in ax.get_yticklabels()
                    if low <= label.get_position()[1] <= high and label.get_text()]
        assert labelled[0] <= min(times) and labelled[-1] >= max(times) / 1.5, (
            ts, labelled, min(times), max(times))


def test_large_times_on_a_linear_axis_get_short_labels_and_an_exponent():
    ax = viz.cost_curves(["naive_broadcast"], values=range(1, 33), m=100_000,
                         model=CostModel(ts=100, tw=1), simulate=False)
    assert ax.get_yscale() == "linear"
    ax.figure.canvas.draw()
    labels = [label.get_text() for label in ax.get_yticklabels() if label.get_text()]
    assert max(len(text) for text in labels) <= 4, labels
    assert ax.yaxis.get_offset_text().get_text() == "1e6"
