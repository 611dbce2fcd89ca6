"""choice_map: the selector's winner over p and m, the simulation's, and MPICH's switch points."""
import matplotlib
import matplotlib.pyplot as plt
import pytest
from matplotlib.figure import Figure

from collective_lib import CostModel, viz
from collective_lib.mpi.thresholds import mpich_cvars
from collective_lib.selection import winner_map

CHAPTER_2 = ["hypercube_allreduce", "rabenseifner_allreduce", "reduce_broadcast_allreduce"]
CVARS = {"MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE": 2048}
MODEL = CostModel(ts=100, tw=1)


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_every_cell_carries_the_letter_of_the_selectors_winner():
    ps, ms = [2, 3, 4, 8], [1, 100, 10_000]
    fig = viz.choice_map("allreduce", ps, ms, MODEL, among=CHAPTER_2, mpich=CVARS)
    winners = winner_map("allreduce", ps, ms, MODEL, among=CHAPTER_2)
    letters = {name: chr(ord("A") + i) for i, name in enumerate(
        ["reduce_broadcast_allreduce", "hypercube_allreduce", "rabenseifner_allreduce"])}
    texts = [t.get_text() for t in fig.axes[0].texts if t.get_gid() == "letter"]
    assert texts == [letters[winners[p, m]] for m in ms for p in ps]


def test_mpich_lines_lie_between_the_cells_where_its_rule_changes():
    choices, segments = viz.mpich_boundaries("allreduce", [2, 8], [1, 1000], CVARS)
    assert choices == {(2, 1): "recursive doubling", (2, 1000): "reduce-scatter + allgather",
                       (8, 1): "recursive doubling", (8, 1000): "reduce-scatter + allgather"}
    assert segments == [((-0.5, 0.5), (0.5, 0.5)), ((0.5, 0.5), (1.5, 0.5))]
    # 2048 bytes = 256 words, but never fewer words than the power of two below p
    choices, _ = viz.mpich_boundaries("allreduce", [8], [256, 257], CVARS)
    assert list(choices.values()) == ["recursive doubling", "reduce-scatter + allgather"]


def test_the_description_says_who_wins_where_and_where_mpich_switches():
    fig = viz.choice_map("allreduce", [2, 8], [1, 10_000], MODEL, among=CHAPTER_2,
                         mpich=CVARS)
    assert viz.description(fig) == (
        "Fastest allreduce by the closed forms, ts = 100, tw = 1, p 2-8 across, m 1-10,000 "
        "words up; points won: hypercube_allreduce 3 (p 2-8, m 1-10,000); "
        "rabenseifner_allreduce 1 (p 8, m 10,000). Dashed lines: MPICH's switches "
        "(ALLREDUCE_SHORT_MSG_SIZE 2,048): recursive doubling 2 (p 2-8, m 1); "
        "reduce-scatter + allgather 2 (p 2-8, m 10,000).")
    assert [line.get_gid() for line in fig.axes[0].lines] == ["mpich", "mpich"]


def test_a_simulated_panel_names_where_simulation_and_closed_forms_disagree():
    from collective_lib.networks import Ring
    fig = viz.choice_map("allreduce", [4, 8], [1, 1024], MODEL, network_for=Ring, simulate=True,
                         among=CHAPTER_2, mpich=False)
    assert [ax.get_title() for ax in fig.axes[:2]] == [
        "fastest allreduce, closed forms (ts = 100, tw = 1)",
        "fastest allreduce, simulated (ts = 100, tw = 1)"]
    text = viz.description(fig)
    assert "by simulating every algorithm" in text
    assert "The simulation picks another algorithm than the closed forms at" in text


def test_without_mpich_nothing_is_dashed_and_an_operation_mpich_lacks_draws_none():
    fig = viz.choice_map("allreduce", [2, 4], [1], MODEL, mpich=False)
    assert not [line for line in fig.axes[0].lines if line.get_gid() == "mpich"]
    fig = viz.choice_map("gather", [2, 4], [1], MODEL)      # no MPICH rule here for gather
    assert "MPICH" not in viz.description(fig)


def test_a_grid_point_without_any_algorithm_is_refused():
    with pytest.raises(ValueError, match=r"no algorithm of 'allreduce' runs at \(p, m\) = "
                                         r"\[\(6, 1\)"):
        viz.choice_map("allreduce", [6], [1], MODEL, among=["hypercube_allreduce"])


def test_draws_into_a_given_figure_without_pyplot():
    fig = Figure(layout="constrained")
    assert viz.choice_map("broadcast", [2, 4], [1, 10], MODEL, mpich=False, fig=fig) is fig
    assert viz.description(fig).startswith("Fastest broadcast by the closed forms")


def test_the_installed_mpich_thresholds_are_read_not_typed():
    cvars = mpich_cvars()
    fig = viz.choice_map("broadcast", [4, 8, 16], [1, 10_000, 100_000], MODEL)
    text = viz.description(fig)
    assert f"BCAST_SHORT_MSG_SIZE {cvars['MPIR_CVAR_BCAST_SHORT_MSG_SIZE']:,}" in text
    assert [line for line in fig.axes[0].lines if line.get_gid() == "mpich"]


def test_readable_at_its_size_and_no_colour_alone():
    fig = viz.choice_map("broadcast", [2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64],
                         [1, 10, 100, 1000, 10_000, 100_000], CostModel(ts=1000, tw=1))
    assert viz.smallest_font(fig).px >= viz.MIN_FONT_PX
    assert all(t.get_text().isalpha() for t in fig.axes[0].texts)     # a letter per cell
    [winners, mpich] = fig.legends[:2]
    assert all(h.get_marker().startswith("$") for h in winners.legend_handles)
    assert [t.get_text() for t in mpich.get_texts()] == ["MPICH switches algorithm"]
    assert len(viz.description(fig)) <= 700
