"""choice_map: the selector's winner over p and m, the simulation's, and MPICH's switch points."""
import re

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
    assert "The simulation disagrees with the closed forms at" in text


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


def _panel_texts(fig):
    return [viz.descriptions._SENTENCES[ax] for ax in fig.axes
            if ax in viz.descriptions._SENTENCES]


def test_the_disagreements_are_said_by_pair_of_algorithms_and_range():
    ps, ms = [4, 8, 16], [1, 100, 10_000]
    forms = {(p, m): "hypercube_allreduce" if m < 10_000 else "rabenseifner_allreduce"
             for p in ps for m in ms}
    runs = {**forms, (8, 1): "ring_allreduce", (16, 1): "ring_allreduce",
            (16, 100): "ring_allreduce", (16, 10_000): "hierarchical_allreduce"}
    fig = viz.choice_map("allreduce", ps, ms, MODEL, simulate=True, mpich=False,
                         winners={"closed forms": forms, "simulated": runs})
    # The disagreements are said in full; the winners, most points first, as far as the
    # room of one panel's text allows.
    assert _panel_texts(fig)[1] == (
        "Below, by simulating every algorithm; points won: hypercube_allreduce 3 "
        "(p 4-8, m 1-100); ring_allreduce 3 (p 8-16, m 1-100); 2 more algorithms at 3 "
        "points. The simulation disagrees with the closed forms at 4 of 9 points: "
        "ring_allreduce, not hypercube_allreduce, at 3 (p 8-16, m 1-100); "
        "hierarchical_allreduce, not rabenseifner_allreduce, at 1 (p 16, m 10,000).")


def test_the_alt_text_of_a_large_map_stays_short_and_still_says_the_disagreements():
    # Every broadcast of the catalog wins somewhere, in both panels, and the two disagree
    # almost everywhere: 11 x 8 points said in words of bounded length.
    import random
    from collective_lib import catalog
    from collective_lib.wording import LONG
    ps = [2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64]
    ms = [1, 10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000]
    names = [name for name, e in catalog().items() if e.operation == "broadcast"]
    rng = random.Random(1)
    forms = {(p, m): rng.choice(names) for p in ps for m in ms}
    runs = {(p, m): rng.choice(names) for p in ps for m in ms}
    differ = sum(forms[point] != runs[point] for point in forms)
    fig = viz.choice_map("broadcast", ps, ms, MODEL, simulate=True, mpich=CVARS | {
        "MPIR_CVAR_BCAST_SHORT_MSG_SIZE": 12288, "MPIR_CVAR_BCAST_LONG_MSG_SIZE": 524288,
        "MPIR_CVAR_BCAST_MIN_PROCS": 8}, winners={"closed forms": forms, "simulated": runs})
    texts = _panel_texts(fig)
    assert len(texts) == 2 and all(len(text) <= LONG for text in texts), texts
    assert "Dashed lines: MPICH's switches" in texts[0]
    assert f"The simulation disagrees with the closed forms at {differ} of 88 points: " \
        in texts[1]
    pairs = {}
    for point in forms:
        if forms[point] != runs[point]:
            pairs[runs[point], forms[point]] = pairs.get((runs[point], forms[point]), 0) + 1
    (top_run, top_form), top = max(pairs.items(), key=lambda item: item[1])
    assert f"{top_run}, not {top_form}, at {top} (p " in texts[1]     # the most points first
    assert re.search(r"; (\d+) more pairs of algorithms at (\d+) points\.$", texts[1])


def test_winners_given_are_drawn_and_must_match_the_panels():
    forms = {(2, 1): "hypercube_allreduce", (4, 1): "hypercube_allreduce"}
    fig = viz.choice_map("allreduce", [2, 4], [1], MODEL, mpich=False,
                         winners={"closed forms": forms})
    assert [t.get_text() for t in fig.axes[0].texts if t.get_gid() == "letter"] == ["B", "B"]
    with pytest.raises(ValueError, match=r"winners= holds the maps \['closed forms'\], but "
                                         r"simulate=True draws"):
        viz.choice_map("allreduce", [2, 4], [1], MODEL, simulate=True,
                       winners={"closed forms": forms})
    with pytest.raises(ValueError, match=r"\(p, m\) = \[\(8, 1\)\] \(in the map 'closed "
                                         r"forms' of winners=\)"):
        viz.choice_map("allreduce", [2, 4, 8], [1], MODEL, winners={"closed forms": forms})


def test_on_two_levels_the_titles_and_text_name_each_levels_times():
    from collective_lib import TwoLevel, TwoLevelModel
    levels = TwoLevelModel(inside=CostModel(ts=10, tw=0.1), between=MODEL)
    ps, ms = [4, 8], [1]
    forms = {(4, 1): "hypercube_allreduce", (8, 1): "hypercube_allreduce"}
    runs = {(4, 1): "hypercube_allreduce", (8, 1): "hierarchical_allreduce"}
    fig = viz.choice_map("allreduce", ps, ms, levels, network_for=lambda p: TwoLevel.of_size(
        p, 4), simulate=True, mpich=False, winners={"closed forms": forms, "simulated": runs})
    assert [ax.get_title() for ax in fig.axes[:2]] == [
        "fastest allreduce, closed forms (between nodes: ts = 100, tw = 1)",
        "fastest allreduce, simulated (inside: ts = 10, tw = 0.1; between: ts = 100, tw = 1)"]
    first, second = _panel_texts(fig)
    assert first.startswith("Fastest allreduce by the closed forms, priced between nodes, "
                            "ts = 100, tw = 1, p 4-8 across")
    assert second.startswith("Below, by simulating every algorithm, ts = 10, tw = 0.1 inside "
                             "a node; points won:")
