"""Measured times beside the model's: oversubscribed jobs are marked, the others not."""
import matplotlib.pyplot as plt
import pytest

from collective_lib import viz
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
    with pytest.raises(ValueError, match="positive whole number"):
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
