"""The selector (collective_lib.selection) against brute-force simulation of every algorithm.

Wherever the closed forms are exact (the entry is registered exact, its k divides m, it
runs on its own network and port model), the algorithm the selector picks is one the
simulator finds fastest.  Where a closed form is only a bound, or the network is not the
one it is stated for, the two may disagree: those points are collected and printed (run
with ``-s``), not asserted, except that each must involve such an entry.
"""
import pytest

from collective_lib import CostModel, TwoLevel, TwoLevelModel, catalog
from collective_lib.collectives import operations
from collective_lib.mpi.thresholds import mpich_choice
from collective_lib.networks import Ring
from collective_lib.selection import (predict, select, selectable_operations, simulate_all,
                                      simulated_winner, winner_map)

PS = [2, 3, 5, 8, 12, 16, 31, 64]
MS = [1, 10, 100, 1000, 10_000, 100_000]
#: ts / tw of 1000 (a cluster's start-up against a word) and of 10.
MODELS = [CostModel(ts=1000, tw=1), CostModel(ts=10, tw=1)]
#: The all-reduce algorithms of chapter 2, which these tests name.
CHAPTER_2 = ["hypercube_allreduce", "rabenseifner_allreduce", "reduce_broadcast_allreduce"]
#: Inputs above this many words (p m for an all-reduce) take seconds to combine, not to time.
MAX_INPUT_WORDS = 200_000


def grid(operation):
    for model in MODELS:
        for p in PS:
            for m in MS:
                if operations()[operation].input_words(p, m) <= MAX_INPUT_WORDS:
                    yield model, p, m


def disagreement(choices, model, p, m):
    chosen = min(choices, key=lambda c: c.predicted)        # what select() returns
    best = choices[0]                                       # fastest simulated
    if chosen.simulated <= best.simulated + 1e-9 * max(1.0, best.simulated):
        return None
    return (f"ts={model.ts:g} tw={model.tw:g} p={p} m={m}: selected {chosen.name} "
            f"(predicted {chosen.predicted:g}, simulated {chosen.simulated:g}), fastest "
            f"simulated {best.name} (predicted {best.predicted:g}, simulated "
            f"{best.simulated:g}, {'exact' if best.exact else 'bound'})")


@pytest.mark.parametrize("operation", ["broadcast", "allreduce"])
def test_the_selector_agrees_with_brute_force_simulation_where_the_closed_forms_are_exact(
        operation):
    found = []
    for model, p, m in grid(operation):
        choices = simulate_all(operation, p, m, model)
        assert choices, (operation, p, m)
        for c in choices:
            if c.exact:
                assert c.simulated == pytest.approx(c.predicted, rel=1e-12), (c, p, m)
            else:
                assert c.simulated <= c.predicted + 1e-9 * c.predicted, (c, p, m)
        exact = [c for c in choices if c.exact]
        if exact:
            # Among the exact closed forms the predicted fastest is the simulated fastest.
            picked = min(exact, key=lambda c: c.predicted)
            assert picked.simulated == min(c.simulated for c in exact), (operation, p, m)
        if all(c.exact for c in choices):
            assert disagreement(choices, model, p, m) is None
            assert select(operation, p, m, model).name in {
                c.name for c in choices if c.simulated == choices[0].simulated}
        else:
            said = disagreement(choices, model, p, m)
            if said:
                # The simulator found something faster than the selector's choice: only a
                # closed form that is a bound (or a pipeline whose k does not divide m) can.
                assert not all(c.exact for c in choices)
                found.append(said)
    print(f"\n{operation}: {len(found)} points where a bound hides the fastest algorithm")
    print("\n".join(found))


def test_on_a_ring_the_closed_forms_and_the_simulation_disagree_about_the_winner():
    model = CostModel(ts=100, tw=1)
    assert select("allreduce", 8, 1024, model, among=CHAPTER_2).name == "rabenseifner_allreduce"
    on_ring = simulate_all("allreduce", 8, 1024, model, network=Ring(8), among=CHAPTER_2)
    times = {c.name: (c.predicted, c.simulated, c.exact) for c in on_ring}
    # Recursive doubling's far partners share the ring's links: second by its closed form,
    # last in the simulation, behind the reduce-then-broadcast it beats on paper.
    assert times["hypercube_allreduce"] == (3372.0, 12364.0, False)
    # Its closed form is stated for a fully connected machine: no promise on a ring.
    assert times["reduce_broadcast_allreduce"] == (6744.0, 6744.0, False)
    assert simulated_winner("allreduce", 8, 1024, model, network=Ring(8),
                            among=CHAPTER_2).name == "rabenseifner_allreduce"
    assert [c.name for c in on_ring][1:] == ["reduce_broadcast_allreduce", "hypercube_allreduce"]


def test_predict_lists_every_eligible_entry_fastest_first():
    model = CostModel(ts=100, tw=1)
    choices = predict("broadcast", 6, 1000, model)
    names = {c.name for c in choices}
    assert "hypercube_broadcast" not in names            # p = 6 is no power of two
    assert names == {e.name for e in catalog().values()
                     if e.operation == "broadcast" and e.valid(6)}
    assert [c.predicted for c in choices] == sorted(c.predicted for c in choices)
    pipelined = [c for c in choices if "k" in c.entry.params]
    assert pipelined and all(c.params["k"] >= 1 for c in pipelined)


def test_a_fixed_k_is_used_and_an_entry_that_refuses_it_is_left_out():
    choices = {c.name: c for c in predict("broadcast", 8, 3, k=4)}
    assert "linear_pipeline_broadcast" not in choices        # 4 packets need m >= 4
    assert "binomial_broadcast" in choices
    assert {c.params["k"] for c in predict("broadcast", 8, 8, k=4)
            if "k" in c.params} == {4}


def test_ports_machine_keeps_the_entries_the_machine_offers():
    half = CostModel(ts=1, tw=1, ports="half-duplex")
    names = {c.name for c in predict("broadcast", 8, 64, half, ports="machine")}
    assert names == {e.name for e in catalog().values()
                     if e.operation == "broadcast" and e.ports == "half-duplex"}
    full = {c.name for c in predict("broadcast", 8, 64, CostModel(ts=1, tw=1), ports="machine")}
    assert "pipelined_binary_tree_broadcast" in full       # one port at a time runs on two


def test_commutative_false_leaves_out_entries_that_need_it():
    needing = {e.name for e in catalog().values()
               if e.operation == "reduce" and e.requires_commutative}
    assert needing
    assert not needing & {c.name for c in predict("reduce", 8, 4, commutative=False)}


def test_the_winner_is_the_same_by_formula_and_by_simulation_on_small_exact_cases():
    model = CostModel(ts=100, tw=1)
    assert select("broadcast", 16, 1, model).name == "binomial_broadcast"
    assert simulated_winner("broadcast", 16, 1, model).simulated == 404.0
    winners = winner_map("allreduce", [4, 6], [1, 4096], model, among=CHAPTER_2)
    assert winners == winner_map("allreduce", [4, 6], [1, 4096], model, simulate=True,
                                 among=CHAPTER_2)


@pytest.mark.parametrize("call, message", [
    (lambda: predict("allredcue", 8, 1), "unknown operation 'allredcue'; the catalog's "
                                          "operations are ['broadcast', "),
    (lambda: predict("broadcast", 0, 1), "p must be"),
    (lambda: predict("broadcast", 8, 0), "m must be"),
    (lambda: predict("broadcast", 8, 1, ports="mine"), "ports must be one of"),
    (lambda: predict("broadcast", 8, 1, among=["binomial_reduce"]),
     "among= names ['binomial_reduce'], which are no algorithms of 'broadcast'"),
    (lambda: predict("broadcast", 8, 1, model="fast"), "model must be a CostModel"),
    (lambda: predict("broadcast", 8, 1, network=Ring(6)), "has 6 PEs, but p=8"),
    (lambda: select("allreduce", 6, 4, k=3, ports="machine",
                    model=CostModel(ports="half-duplex")), "no algorithm of 'allreduce'"),
])
def test_bad_values_are_named(call, message):
    with pytest.raises(ValueError, match=None) as caught:
        call()
    assert message in str(caught.value)


def test_selectable_operations_are_those_the_catalog_implements():
    assert set(selectable_operations()) == {e.operation for e in catalog().values()}


def test_mpich_choice_follows_the_thresholds_it_is_given():
    cvars = {"MPIR_CVAR_BCAST_SHORT_MSG_SIZE": 80, "MPIR_CVAR_BCAST_LONG_MSG_SIZE": 800,
             "MPIR_CVAR_BCAST_MIN_PROCS": 8, "MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE": 16,
             "MPIR_CVAR_ALLGATHER_SHORT_MSG_SIZE": 64, "MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE": 640}
    assert [mpich_choice("broadcast", p, m, cvars) for p, m in
            [(4, 1000), (8, 10), (8, 11), (12, 11), (8, 100)]] == [
        "binomial", "binomial", "scatter + recursive doubling", "scatter + ring",
        "scatter + ring"]
    assert [mpich_choice("allreduce", p, m, cvars) for p, m in [(8, 2), (8, 7), (8, 8)]] == [
        "recursive doubling", "recursive doubling", "reduce-scatter + allgather"]
    assert [mpich_choice("allgather", p, m, cvars) for p, m in [(4, 1), (6, 1), (6, 2), (8, 10)]] \
        == ["recursive doubling", "Bruck", "ring", "ring"]
    with pytest.raises(ValueError, match="lack"):
        mpich_choice("allgather", 4, 1, {})


def test_on_two_levels_the_closed_forms_miss_the_hierarchical_winner():
    # Nodes of 4 PEs, a cheap inside and a dear outside: the closed forms (one level, priced
    # as between nodes) pick a flat algorithm, whose PEs of one node then queue on its
    # uplink; the simulation finds the all-reduce that crosses the nodes once the fastest.
    model = TwoLevelModel(inside=CostModel(ts=1, tw=0.01), between=CostModel(ts=20, tw=1))
    network = TwoLevel(4, 4)
    choices = simulate_all("allreduce", 16, 1, model, network)
    picked = min(choices, key=lambda c: c.predicted)
    assert picked.name != "hierarchical_allreduce" and not picked.exact
    assert picked.simulated > picked.predicted                    # the uplinks' queues
    assert choices[0].name == "hierarchical_allreduce"
    assert choices[0].simulated < picked.simulated / 2
    assert select("allreduce", 16, 1, model, network).name == picked.name


def test_a_two_level_model_needs_a_two_level_network():
    model = TwoLevelModel(inside=CostModel(ts=1, tw=0), between=CostModel(ts=20, tw=1))
    with pytest.raises(ValueError, match="give one as network=, got None"):
        predict("allreduce", 8, 1, model)


def test_a_map_takes_a_function_of_p_and_says_so_when_given_a_network():
    with pytest.raises(ValueError, match="takes network_for=, a function of p"):
        winner_map("allreduce", [4, 8], [1], network=Ring(4))
    assert winner_map("allreduce", [4], [1], network_for=Ring, among=CHAPTER_2) == {
        (4, 1): "hypercube_allreduce"}


def test_a_map_predicts_each_point_once_and_keeps_its_winners(monkeypatch):
    """winner_map asks predict once per point (it asked twice: once to see whether any
    entry runs, once more inside select or simulate_all) and finds the same winners as
    select and simulated_winner point by point."""
    import collective_lib.selection as selection
    ps, ms = [3, 4, 6, 8], [1, 100, 4096]
    model = CostModel(ts=100, tw=1)
    among = CHAPTER_2 + ["ring_allreduce"]
    expected = {simulate: {(p, m): (simulated_winner if simulate else select)(
        "allreduce", p, m, model, Ring(p), among=among).name
        for p in ps for m in ms if predict("allreduce", p, m, among=among)}
        for simulate in (False, True)}
    calls = []
    real_predict = selection.predict

    def counting_predict(operation, p, m, *args, **kwargs):
        calls.append((p, m))
        return real_predict(operation, p, m, *args, **kwargs)

    monkeypatch.setattr(selection, "predict", counting_predict)
    for simulate in (False, True):
        calls.clear()
        winners = winner_map("allreduce", ps, ms, model, Ring, simulate=simulate, among=among)
        assert winners == expected[simulate]
        assert sorted(calls) == sorted((p, m) for p in ps for m in ms)
    assert expected[False] != expected[True]          # the ring's far partners: a real test
    assert (3, 1) in expected[False]                  # a p only some entries run on
