"""Chapter 8's claims about two-level networks, the all-reduce family and the selector
(book/ch8_todays_machines), against the library.
"""
import functools
from pathlib import Path
import math

import pytest

from collective_lib import (CostModel, FullyConnected, LogGPModel, TwoLevel, TwoLevelModel,
                            catalog, selection)
from collective_lib.networks import Ring
from collective_lib.viz import optimal_params

#: Where each claim of the chapter's prose ("never", "at most", "exactly", ...) is checked
#: (tests/notebooks/test_prose_claims.py).
PROSE_CLAIMS = {
    "A selector priced\nwith $t_s + t_w m$ alone would never choose the flat tree for short messages":
        "test_loggp_turns_the_choice_of_a_short_broadcast",
    "The simulator agrees\nexactly, on a ring network as on a fully connected one, for any $p$":
        "test_ring_allreduce_takes_its_closed_form_on_a_ring_and_fully_connected",
}

MODEL = CostModel(ts=100, tw=1)
LEVELS = TwoLevelModel(inside=CostModel(ts=10, tw=0.1), between=CostModel(ts=100, tw=1))
FAMILY = ["ring_allreduce", "recursive_doubling_allreduce",
          "recursive_halving_doubling_allreduce", "double_binary_tree_allreduce",
          "hierarchical_allreduce"]
PS, MS = [4, 8, 16, 32, 64], [1, 100, 1000, 10_000]


def entry(name):
    return catalog()[name]


def four_per_node(p):
    return TwoLevel.of_size(p, 4)


# -- 8.1: contention on the uplinks ---------------------------------------------------------

@pytest.mark.parametrize("nodes, per_node", [(2, 2), (4, 4), (2, 8), (8, 2), (4, 2), (1, 8)])
@pytest.mark.parametrize("m", [1, 100, 1000])
def test_recursive_doubling_queues_at_the_uplinks(nodes, per_node, m):
    """The steps whose partners share the node cost one; those across nodes per_node."""
    p = nodes * per_node
    doubling = entry("recursive_doubling_allreduce")
    step = MODEL.ts + MODEL.tw * m
    flat = doubling.simulate(p, m, model=MODEL, network=FullyConnected(p), trace=False)
    assert flat.time == doubling.predict(p, m, MODEL) == math.log2(p) * step
    crowded = doubling.simulate(p, m, model=MODEL, network=TwoLevel(nodes, per_node),
                                trace=False)
    assert crowded.time == (math.log2(per_node) + per_node * math.log2(nodes)) * step


def test_the_contention_numbers_of_the_chapter():
    doubling = entry("recursive_doubling_allreduce")
    cluster = TwoLevel(nodes=4, per_node=4)
    run = doubling.simulate(16, 1000, model=MODEL, network=cluster)
    assert run.time == 10 * (MODEL.ts + MODEL.tw * 1000)
    external = {(cluster.gateway(n), cluster.switch) for n in range(4)} | {
        (cluster.switch, cluster.gateway(n)) for n in range(4)}
    assert {run.link_load[link] for link in external} == {8}
    assert sum(cluster.node_of(m.src) != cluster.node_of(m.dst) for m in run.messages) == 32
    inside = [load for (u, v), load in run.link_load.items() if u < 16 and v < 16]
    assert max(inside) == 1


# -- 8.2: the ring all-reduce ---------------------------------------------------------------

@pytest.mark.parametrize("p", [*range(1, 21), 32, 33])
@pytest.mark.parametrize("m", [1, 7, 100, 1000])
def test_ring_allreduce_takes_its_closed_form_on_a_ring_and_fully_connected(p, m):
    ring = entry("ring_allreduce")
    cost = ring.predict(p, m, MODEL)
    assert cost == 2 * (p - 1) * (MODEL.ts + MODEL.tw * math.ceil(m / p))
    for network in (Ring(p), FullyConnected(p)):
        run = ring.simulate(p, m, model=MODEL, network=network, trace=False)
        assert run.time == cost, (p, m, network)


@pytest.mark.parametrize("p", [2, 3, 4, 7, 16])
def test_ring_allreduce_sends_one_block_to_the_right_in_every_step(p):
    m = 3 * p
    run = entry("ring_allreduce").simulate(p, m, model=MODEL, network=Ring(p))
    assert all(msg.dst == (msg.src + 1) % p for msg in run.messages)
    assert all(msg.words == m // p for msg in run.messages)
    assert len(run.messages) == 2 * (p - 1) * p
    if p > 2:
        assert max(run.link_load.values()) == 2 * (p - 1)


def test_the_values_table_of_the_chapter():
    from collective_lib.recording import record_run
    from collective_lib.spans import span_inputs, span_op
    from collective_lib.viz import values_table
    run = record_run("ring_allreduce", 3, inputs=span_inputs(3, m=3), op=span_op)
    rows = str(values_table(run)).splitlines()
    # after step 2 (the reduce-scatter) PE i holds block i complete ...
    assert rows[3].split()[2:] == ["1:2,0", "2,0", "0", "1", "2,0:1", "0:1", "1:2", "2",
                                   "0:2"]
    # ... after step 4 every PE holds all three
    assert rows[5].split()[2:] == ["1:2,0", "2,0:1", "0:2"] * 3


def test_short_vectors_pay_the_rings_start_ups():
    ring, doubling = entry("ring_allreduce"), entry("recursive_doubling_allreduce")
    t_ring = ring.simulate(64, 1, model=MODEL, trace=False).time
    t_doubling = doubling.simulate(64, 1, model=MODEL, trace=False).time
    assert (t_ring, t_doubling) == (2 * 63 * 101, 6 * 101)
    assert round(t_ring / t_doubling) == 21


@pytest.mark.parametrize("name", ["recursive_doubling_allreduce",
                                  "recursive_halving_doubling_allreduce"])
def test_far_partners_leave_their_closed_forms_behind_on_a_ring(name):
    e = entry(name)
    for m in (16, 10_000):
        run = e.simulate(16, m, model=MODEL, network=Ring(16), trace=False)
        assert run.time > 2 * e.predict(16, m, MODEL)


# -- 8.3: the family on two levels ----------------------------------------------------------

def _on_nodes(name, m):
    e = entry(name)
    params = {**optimal_params(e, 32, m, MODEL),
              **({"per_node": 8} if name == "hierarchical_allreduce" else {})}
    run = e.simulate(32, m, model=LEVELS, network=TwoLevel(4, 8), trace=False, **params)
    return run.time, e.predict(32, m, MODEL, **params)


def test_the_two_level_table_of_the_chapter():
    short = {name: _on_nodes(name, 32) for name in FAMILY}
    assert min(FAMILY, key=lambda n: short[n][0]) == "hierarchical_allreduce"
    # the hierarchical closed form, on one level, predicts it slower than recursive doubling
    assert short["hierarchical_allreduce"][1] > short["recursive_doubling_allreduce"][1]
    long = {name: _on_nodes(name, 32_000)
            for name in ("ring_allreduce", "recursive_doubling_allreduce",
                         "recursive_halving_doubling_allreduce", "hierarchical_allreduce")}
    assert min(long, key=lambda n: long[n][0]) == "recursive_halving_doubling_allreduce"
    # the ring runs at the pace of the link between nodes and keeps its closed form
    assert long["ring_allreduce"][0] == long["ring_allreduce"][1]
    assert short["ring_allreduce"][0] == short["ring_allreduce"][1]
    assert long["recursive_doubling_allreduce"][0] > 3 * long["recursive_doubling_allreduce"][1]


@pytest.mark.parametrize("nodes, per_node", [(2, 4), (4, 4), (4, 8), (3, 5)])
@pytest.mark.parametrize("m", [100, 1000])
def test_each_uplink_carries_one_ring_block_per_step(nodes, per_node, m):
    p = nodes * per_node
    ring = entry("ring_allreduce")
    run = ring.simulate(p, m, model=LEVELS, network=TwoLevel(nodes, per_node))
    block = math.ceil(m / p)
    assert run.time == 2 * (p - 1) * LEVELS.transfer_time(block, 2, level=1)
    one = ring.simulate(p, m, model=MODEL, network=TwoLevel(nodes, per_node), trace=False)
    assert one.time == ring.predict(p, m, MODEL)


# -- 8.4: the selector and the map ----------------------------------------------------------

def test_the_selection_table_of_the_chapter():
    choices = selection.simulate_all("allreduce", 32, 100, MODEL, network=four_per_node(32),
                                     per_node=4)
    assert selection.select("allreduce", 32, 100, MODEL).name == "hypercube_allreduce"
    assert selection.simulated_winner("allreduce", 32, 100, MODEL).name == \
        "hypercube_allreduce"
    assert choices[0].name == "hierarchical_allreduce"
    ranked = [c.name for c in sorted(choices, key=lambda c: c.predicted)]
    assert ranked.index("hierarchical_allreduce") > ranked.index("hypercube_allreduce")


@functools.cache
def choice_maps(machine):
    """The chapter's maps on nodes of 4 PEs, (by the closed forms, by simulating), each
    computed once for the tests that read it."""
    return tuple(selection.winner_map("allreduce", PS, MS, machine, four_per_node,
                                      per_node=4, simulate=simulate)
                 for simulate in (False, True))


def test_the_choice_map_of_the_chapter():
    forms, runs = choice_maps(MODEL)
    assert len(set(forms.values())) == 2 and len(set(runs.values())) == 4
    assert all(forms[4, m] == runs[4, m] for m in MS)              # one node
    for p in PS[1:]:                                               # two nodes and more
        assert all(runs[p, m] == "hierarchical_allreduce" for m in (1, 100))
        assert runs[p, 10_000] == "ring_allreduce"
    assert {"hierarchical_allreduce", "ring_allreduce"}.isdisjoint(forms.values())
    for p in PS:                                                   # the boundary
        assert forms[p, 1] == forms[p, 100] == "hypercube_allreduce"
        assert forms[p, 1000] == forms[p, 10_000] == "rabenseifner_allreduce"
    # the row of 1000 words: the ring on 2 and 4 nodes, Rabenseifner's from 8 nodes on
    assert [runs[p, 1000] for p in PS[1:]] == ["ring_allreduce"] * 2 + [
        "rabenseifner_allreduce"] * 2


def test_the_choice_map_on_two_levels_of_the_chapter():
    """Closed forms priced between nodes draw the one-level map again; the simulation on
    two levels disagrees from two nodes on up to 1000 words, always for the hierarchical
    all-reduce, and agrees on Rabenseifner's algorithm for 10^4 words, where on one level
    it chose the ring."""
    forms, runs = choice_maps(LEVELS)
    one_forms, one_runs = choice_maps(MODEL)
    assert forms == one_forms
    differ = {point for point in forms if forms[point] != runs[point]}
    assert differ == {(p, m) for p in PS[1:] for m in (1, 100, 1000)}
    assert {runs[point] for point in differ} == {"hierarchical_allreduce"}
    assert max(m for (p, m), name in runs.items() if name == "hierarchical_allreduce") == 1000
    for p in PS[1:]:
        assert runs[p, 10_000] == forms[p, 10_000] == "rabenseifner_allreduce"
        assert one_runs[p, 10_000] == "ring_allreduce"


def test_the_two_level_point_the_chapter_quotes():
    """On 32 PEs and 100 words the closed forms rank the hierarchical all-reduce behind
    recursive doubling; on two levels it is faster than predicted and recursive doubling,
    queueing at the uplinks, slower."""
    choices = {c.name: c for c in selection.simulate_all(
        "allreduce", 32, 100, LEVELS, network=four_per_node(32), per_node=4)}
    doubling, hierarchical = choices["hypercube_allreduce"], choices["hierarchical_allreduce"]
    assert doubling.predicted < hierarchical.predicted
    assert hierarchical.simulated < hierarchical.predicted
    assert doubling.simulated > doubling.predicted
    assert hierarchical.simulated < doubling.simulated


@pytest.mark.parametrize("p", [8, 16, 64])
def test_rabenseifners_largest_exchanges_stay_on_the_node(p):
    """Nodes of 4: the half and the quarter of the vector go to partners on the same node,
    only smaller blocks cross the uplinks."""
    m = 10_000
    network = four_per_node(p)
    run = entry("rabenseifner_allreduce").simulate(p, m, model=LEVELS, network=network)
    inside = {msg.words for msg in run.messages
              if network.node_of(msg.src) == network.node_of(msg.dst)}
    between = {msg.words for msg in run.messages
               if network.node_of(msg.src) != network.node_of(msg.dst)}
    # a half and a quarter, in blocks of ceil(m/p) words
    assert len(inside) == 2 and min(inside) >= m // 4 and max(inside) >= m // 2
    assert max(between) < min(inside)


def test_mpichs_switch_falls_between_100_and_1000_words():
    from collective_lib.mpi.thresholds import mpich_choice, mpich_cvars
    cvars = mpich_cvars()
    assert cvars["MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE"] // 8 in range(100, 1000)
    for p in PS:
        assert mpich_choice("allreduce", p, 100, cvars) == "recursive doubling"
        assert mpich_choice("allreduce", p, 1000, cvars) == "reduce-scatter + allgather"


def test_the_installed_mpich_chooses_the_all_reduce_by_its_own_table():
    """§8.4: the control variable documents the classic rule, but the installed MPICH picks
    its blocking all-reduce by the table built into its library: recursive doubling up to
    8 bytes per process, or while a process holds fewer elements than the largest power of
    two in p, Rabenseifner's reduce-scatter and all-gather otherwise; so at 100 words, on
    every p of the map, the table takes Rabenseifner's algorithm."""
    import json
    from collective_lib.mpi import find_mpiexec
    library = Path(find_mpiexec()).resolve().parents[1] / "lib" / "libmpi.so.12"
    text = library.read_bytes().decode("latin-1")
    start = text.index('{', text.index(
        '"collective=allreduce":{"comm_type=intra":{"avg_msg_size<=0"') + 22)
    depth = 0
    for end, char in enumerate(text[start:], start):        # the rule's braces, balanced
        depth += {"{": 1, "}": -1}.get(char, 0)
        if depth == 0:
            break
    rules = json.loads(text[start:end + 1])["comm_type=intra"]
    assert rules["avg_msg_size<=8"] == {"algorithm=MPIR_Allreduce_intra_recursive_doubling": {}}
    built_in = rules["avg_msg_size=any"]["is_op_built_in=yes"]
    assert built_in["count<pow2"] == {"algorithm=MPIR_Allreduce_intra_recursive_doubling": {}}
    assert built_in["count=any"] == {
        "algorithm=MPIR_Allreduce_intra_reduce_scatter_allgather": {}}
    assert "2048" not in text[start:end + 1]
    for p in PS:
        assert 100 * 8 > 8 and 100 >= 1 << (p.bit_length() - 1)     # -> Rabenseifner's


# -- 8.5: the LogP family ---------------------------------------------------------------------

LOGGP = LogGPModel(L=10, o=0.5, g=1, G=0.25)


def _broadcast_time(name, m, model, p=8):
    return entry(name).simulate(p, m, model=model, network=FullyConnected(p), trace=False).time


def test_the_mapping_prices_one_message_alike():
    flat = LOGGP.as_cost_model()
    assert (flat.ts, flat.tw) == (2 * LOGGP.o + LOGGP.L - LOGGP.G, LOGGP.G)
    for m in (1, 2, 7, 1000):
        one = [_broadcast_time("naive_broadcast", m, model, p=2) for model in (flat, LOGGP)]
        assert one[0] == one[1] == flat.ts + flat.tw * m


@pytest.mark.parametrize("p", [2, 3, 5, 8, 13, 16])
def test_loggp_turns_the_choice_of_a_short_broadcast(p):
    """Under ts + tw m the binomial tree beats the naive broadcast for one word (from p = 4),
    under LogGP the naive one wins (the root injects every g, the latencies overlap); with
    1000 words both models pick the binomial tree; the chapter's figures at p = 8."""
    flat, o, L, g, G = LOGGP.as_cost_model(), LOGGP.o, LOGGP.L, LOGGP.g, LOGGP.G
    rounds = math.ceil(math.log2(p))
    naive = [_broadcast_time("naive_broadcast", 1, model, p) for model in (flat, LOGGP)]
    binomial = [_broadcast_time("binomial_broadcast", 1, model, p) for model in (flat, LOGGP)]
    assert naive == [(p - 1) * flat.ts + (p - 1) * flat.tw, (p - 2) * g + 2 * o + L]
    assert binomial[0] == rounds * (flat.ts + flat.tw)
    # LogGP: a chain of log2 p forwards of o + L + o; off powers of two a root's later
    # sends start a gap after its first and may end the broadcast sooner
    assert binomial[1] == rounds * (2 * o + L) if p & (p - 1) == 0 else \
        binomial[1] <= rounds * (2 * o + L)
    if p >= 4:
        assert binomial[0] < naive[0] and naive[1] < binomial[1]
    long_naive = [_broadcast_time("naive_broadcast", 1000, model, p) for model in (flat, LOGGP)]
    long_binomial = [_broadcast_time("binomial_broadcast", 1000, model, p)
                     for model in (flat, LOGGP)]
    assert long_naive[1] == (p - 2) * max(g, 999 * G) + 2 * o + 999 * G + L
    if p >= 4:
        assert all(b < n for b, n in zip(long_binomial, long_naive))


def test_the_double_binary_tree_at_p_32_against_doubling_and_rabenseifner():
    # Chapter 8, the one-level table (p = 32, m = 1000, ts = 100, tw = 1, k = 8 as it
    # prints): slower than both, with many more start-ups than either and more words than
    # Rabenseifner's algorithm (though fewer than recursive doubling).
    tree, rd, rab = (entry(n) for n in ("double_binary_tree_allreduce",
                                         "recursive_doubling_allreduce",
                                         "rabenseifner_allreduce"))

    def cost(entry, ts, tw, **params):
        return entry.predict(32, 1000, entry.default_model(ts, tw), **params)

    assert cost(tree, 100, 1, k=8) > max(cost(rd, 100, 1), cost(rab, 100, 1))
    assert cost(tree, 1, 0, k=8) > 2 * max(cost(rd, 1, 0), cost(rab, 1, 0))     # start-ups
    assert cost(rab, 0, 1) < cost(tree, 0, 1, k=8) < cost(rd, 0, 1)              # words
