"""Measured times beside the model's: oversubscribed jobs are marked, the others not."""
import matplotlib.pyplot as plt
import pytest

from collective_lib import CostModel, catalog, viz
from collective_lib.viz import Timings, measured_vs_model, oversubscribed

WORDS = [16, 256, 4096]


def panel(p, cores):
    fig, ax = plt.subplots()
    measured_vs_model([Timings("ring model", WORDS, [1e-5, 2e-5, 9e-5], "model", "C0"),
                       Timings("ring measured", WORDS, [3e-5, 5e-5, 2e-4], "measured", "C0"),
                       Timings("MPI_Allgather", WORDS, [2e-5, 3e-5, 1e-4], "reference", "k")],
                      p=p, cores=cores, ax=ax)
    return ax


def by_gid(ax, gid):
    return [line for line in ax.lines if line.get_gid() == gid]


@pytest.mark.parametrize("p, cores, expected", [(1, 1, False), (2, 2, False), (4, 2, True),
                                                (8, 2, True), (8, 8, False), (3, 64, False)])
def test_oversubscribed_means_more_processes_than_cores(p, cores, expected):
    assert oversubscribed(p, cores) is expected


@pytest.mark.parametrize("p, cores", [(0, 2), (2, 0), (2.5, 2), (True, 2), (4, None)])
def test_oversubscribed_rejects_what_is_not_a_count(p, cores):
    with pytest.raises(ValueError, match="must be an integer >= 1"):
        oversubscribed(p, cores)


def test_a_job_with_a_core_per_process_is_drawn_plainly():
    ax = panel(2, cores=2)
    assert ax.get_title() == "p = 2"
    assert ax.patch.get_gid() != "oversubscribed"
    assert all(line.get_markerfacecolor() != "none"
               for line in by_gid(ax, "measured") + by_gid(ax, "reference"))
    assert "oversubscribed: p > cores" not in [t.get_text() for t in ax.get_legend().get_texts()]
    plt.close(ax.figure)


@pytest.mark.parametrize("p", [4, 8])
def test_an_oversubscribed_job_is_shaded_hollow_and_explained(p):
    ax = panel(p, cores=2)
    assert ax.get_title() == f"p = {p}\noversubscribed: {p} processes on 2 cores"
    assert ax.patch.get_gid() == "oversubscribed"
    assert ax.patch.get_facecolor() != plt.matplotlib.colors.to_rgba("white")
    measured = by_gid(ax, "measured") + by_gid(ax, "reference")
    assert measured and all(line.get_markerfacecolor() == "none" for line in measured)
    [model] = by_gid(ax, "model")                      # the model line is drawn as usual
    assert model.get_linestyle() == "-" and list(model.get_xdata()) == WORDS
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {"ring model", "ring measured", "oversubscribed: p > cores"} <= set(legend)
    plt.close(ax.figure)


def test_bad_timings_are_refused_by_name():
    with pytest.raises(ValueError, match="'x' has kind 'guess'"):
        measured_vs_model([Timings("x", [1], [1.0], "guess")], p=2, cores=2)
    with pytest.raises(ValueError, match="'y' has 2 sizes but 1 times"):
        measured_vs_model([Timings("y", [1, 2], [1.0], "measured")], p=2, cores=2)
    plt.close("all")


def test_viz_exports_it():
    assert viz.measured_vs_model is measured_vs_model


def job(cores, algorithm="binomial_broadcast"):
    return [{"algorithm": algorithm, "words": w, "time": t, "mpi_time": t / 2, "cores": cores}
            for w, t in zip(WORDS, [3e-5, 5e-5, 2e-4])]


def test_jobs_vs_model_stacks_one_panel_per_job_with_the_catalog_s_model():
    machine = CostModel(ts=1e-5, tw=1e-8)
    fig = viz.jobs_vs_model({2: job(2), 4: job(2)}, [("binomial_broadcast", "binomial", {})],
                            machine=machine, reference="MPI_Bcast", title="Broadcast")
    top, bottom = fig.axes
    assert fig._suptitle.get_text() == "Broadcast"
    assert [top.get_title(), bottom.get_title()] == [
        "p = 2", "p = 4\noversubscribed: 4 processes on 2 cores"]
    assert [line.get_label() for line in top.lines] == [
        "binomial model", "binomial measured", "MPI_Bcast"]
    entry = catalog()["binomial_broadcast"]
    model = CostModel(ts=1e-5, tw=1e-8, ports=entry.ports)
    [line] = by_gid(bottom, "model")
    assert list(line.get_ydata()) == pytest.approx(
        [entry.predict(4, w, model) * 1e6 for w in WORDS])
    [measured] = by_gid(top, "measured")
    assert list(measured.get_ydata()) == pytest.approx([30, 50, 200])
    [reference] = by_gid(top, "reference")
    assert list(reference.get_ydata()) == pytest.approx([15, 25, 100])
    assert top.get_legend() is None and bottom.get_legend() is not None
    assert [ax.get_ylabel() for ax in fig.axes] == ["time (µs)", "time (µs)"]


def test_jobs_vs_model_needs_a_job():
    with pytest.raises(ValueError, match="at least one job"):
        viz.jobs_vs_model({}, [], machine=CostModel(ts=1, tw=1), reference="x", title="t")


def test_ping_pong_fit_draws_the_times_and_the_line_in_microseconds():
    ax = viz.ping_pong_fit([1, 100, 10_000], [3e-6, 5e-6, 3e-5], CostModel(ts=2e-6, tw=2e-9))
    [measured] = by_gid(ax, "measured")
    [fit] = by_gid(ax, "fit")
    assert list(measured.get_ydata()) == pytest.approx([3, 5, 30])
    assert list(fit.get_ydata()) == pytest.approx([2.002, 2.2, 22])
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    assert [t.get_text() for t in ax.get_legend().get_texts()] == [
        "measured (one way)", "fit $t_s + t_w m$"]
    text = viz.description(ax.figure)
    assert "3 message lengths from 1 to 10,000 words" in text
    assert "t_s = 2.0 µs and t_w = 2.00 ns per word" in text
    assert "1.36 to 2.27 times the fit" in text
    with pytest.raises(ValueError, match="one time per message length"):
        viz.ping_pong_fit([1, 2], [1e-6], CostModel(ts=1e-6, tw=1e-9))
