"""Non-uniform all-to-all (Sanders §13.6.3): the two-phase algorithm and the edge-colouring schedule."""
import random
from collections import Counter

import networkx as nx
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collective_lib import CostModel, catalog, simulate
from collective_lib.algorithms.hrelation import (
    alltoallv_edge_coloring, alltoallv_two_phase, bottleneck_volume, check_edge_coloring,
    color_bipartite_multigraph, coloring_schedule, eq_13_5_bound, h_relation_multigraph,
    message_sizes, pad_to_regular, random_h_relation, two_phase_bundle_words)
from collective_lib.trees import ceil_log2

MODELS = [CostModel(ts=1.0, tw=0.0), CostModel(ts=1.0, tw=0.25), CostModel(ts=0.5, tw=1.0),
          CostModel(ts=0.0, tw=1.0)]
NAMES = ["alltoallv_two_phase", "alltoallv_edge_coloring"]


def entry(name):
    return catalog()[name]


def messages_for(sizes, seed=0):
    """Inputs with the given message lengths; word w of m_ij is the string 'i>j:w'."""
    return [[[f"{i}>{j}:{w}" for w in range(s)] for j, s in enumerate(row)]
            for i, row in enumerate(sizes)]


def expected(inputs):
    return [[list(row[j]) for row in inputs] for j in range(len(inputs))]


def agreement(p, model):
    return ceil_log2(p) * model.ts + (p - 1) * model.tw


def two_phase_exact(p, sizes, model):
    """Two one-word agreements and two direct exchanges of the padded bundles."""
    n1, n2 = two_phase_bundle_words(sizes)
    return 2 * agreement(p, model) + (p - 1) * (2 * model.ts + (n1 + n2) * model.tw)


def edge_coloring_exact(p, h, model):
    return ceil_log2(p) * model.ts + (p - 1) * p * model.tw + h * (model.ts + model.tw)


def hot_receiver(p, words=3):
    """Every PE sends ``words`` words to PE p - 1 and nothing else."""
    return [[words if j == p - 1 and i != j else 0 for j in range(p)] for i in range(p)]


# -- the catalog entries on many p -----------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_results_time_and_bound_on_every_small_p(name):
    e = entry(name)
    rng = random.Random(name)
    for p in range(1, 65):
        h = rng.randint(1, p + 4)
        model = MODELS[p % len(MODELS)]
        inputs = e.make_inputs(p, h, seed=p)
        sizes = message_sizes(inputs)
        assert bottleneck_volume(sizes) == (h if p > 1 else 0)
        run = e.simulate(p, h, inputs=inputs, model=model, trace=False)
        assert run.results == e.expected(inputs) == expected(inputs), (name, p)
        predicted = e.predict(p, h, model)
        if name == "alltoallv_edge_coloring":
            assert run.time == pytest.approx(predicted, abs=1e-9), (p, h, run.time, predicted)
            assert predicted == pytest.approx(edge_coloring_exact(p, h if p > 1 else 0, model))
        else:
            assert run.time == pytest.approx(two_phase_exact(p, sizes, model), abs=1e-9), (p, h)
            assert run.time <= predicted + 1e-9, (p, h, run.time, predicted)


@pytest.mark.parametrize("p", [100, 128, 256])
def test_large_p(p):
    model = CostModel(ts=1.0, tw=0.5)
    for name in NAMES:
        e = entry(name)
        h = p // 10 + 3
        inputs = e.make_inputs(p, h, seed=p)
        run = e.simulate(p, h, inputs=inputs, model=model, trace=False)
        assert run.results == expected(inputs), (name, p)
        if e.exact:
            assert run.time == pytest.approx(e.predict(p, h, model))
        else:
            assert run.time <= e.predict(p, h, model) + 1e-9


@pytest.mark.parametrize("p", [2, 3, 7, 16, 33])
def test_one_hot_receiver(p):
    sizes = hot_receiver(p, words=5)
    h = bottleneck_volume(sizes)
    assert h == 5 * (p - 1)
    inputs = messages_for(sizes)
    for name, model in zip(NAMES, MODELS[1:]):
        run = entry(name).simulate(p, h, inputs=inputs, model=model, trace=False)
        assert run.results == expected(inputs)
        if name == "alltoallv_edge_coloring":
            assert run.time == pytest.approx(edge_coloring_exact(p, h, model))
        else:
            assert run.time == pytest.approx(two_phase_exact(p, sizes, model))
            assert run.time <= entry(name).predict(p, h, model) + 1e-9


def test_empty_exchange_and_self_messages_stay_local():
    p = 5
    sizes = [[3 if i == j else 0 for j in range(p)] for i in range(p)]   # only self-messages
    inputs = messages_for(sizes)
    assert bottleneck_volume(sizes) == 0
    for program in (alltoallv_two_phase, alltoallv_edge_coloring):
        run = simulate(program, p, inputs, model=CostModel(ts=1.0, tw=1.0))
        assert run.results == expected(inputs)
        assert all(">" not in repr(msg.payload) for msg in run.messages)   # no word travels


@pytest.mark.parametrize("seed", range(6))
def test_two_phase_bundles_respect_the_bound_of_eq_13_5(seed):
    rng = np.random.default_rng(seed)
    for p in (2, 3, 5, 8, 13, 31):
        h = int(rng.integers(1, 10 * p))
        sizes = random_h_relation(p, h, rng)
        n1, n2 = two_phase_bundle_words(sizes)
        assert max(n1, n2) <= h / p + 2 * p
        model = CostModel(ts=1.0, tw=1.0)
        assert eq_13_5_bound(p, h, model) == pytest.approx(2 * (p - 1) * (1 + h / p + 2 * p))


def test_two_phase_sends_pieces_through_every_pe_as_in_fig_13_15():
    p = 3
    sizes = [[0, 6, 0], [0, 0, 3], [0, 0, 0]]                 # h = 6: PE 0 sends 6 words to PE 1
    inputs = messages_for(sizes)
    run = simulate(alltoallv_two_phase, p, inputs, model=CostModel(ts=1.0, tw=0.0))
    assert run.results == expected(inputs)
    carried = Counter()
    for msg in run.messages:
        pieces = getattr(msg.payload, "pieces", None)
        for piece in (pieces or {}).values():
            for word in piece:
                if word.startswith("0>1"):
                    carried[msg.src, msg.dst] += 1
    # pieces of 2 words: via PE 1 (phase 1 only), via PE 2 (both phases), PE 0 keeps one
    assert carried == {(0, 1): 4, (0, 2): 2, (2, 1): 2}
    # every bundle is padded to p header words + the 2 words of the largest piece
    assert {msg.words for msg in run.messages if hasattr(msg.payload, "pieces")} == {p + 2}
    assert two_phase_bundle_words(sizes) == (p + 2, p + 2)


# -- edge colouring ---------------------------------------------------------------------------

def assert_proper(graph, colouring):
    h = max((d for _, d in graph.degree()), default=0)
    seen = set()
    for (u, v, key), c in colouring.items():
        assert 0 <= c < h
        assert (u, c) not in seen and (v, c) not in seen, f"colour {c} twice at {u} or {v}"
        seen |= {(u, c), (v, c)}
    assert len(colouring) == graph.number_of_edges()
    assert len(set(colouring.values())) == h


sizes_matrices = st.integers(1, 7).flatmap(
    lambda p: st.lists(st.lists(st.integers(0, 6), min_size=p, max_size=p), min_size=p, max_size=p))


@settings(max_examples=150, deadline=None)
@given(sizes=sizes_matrices, unit=st.integers(1, 3))
def test_colouring_is_proper_with_exactly_h_colours(sizes, unit):
    graph = h_relation_multigraph(sizes, unit)
    colouring = color_bipartite_multigraph(graph)
    assert_proper(graph, colouring)
    assert check_edge_coloring(graph, colouring) == max((d for _, d in graph.degree()), default=0)
    if unit == 1:
        assert max((d for _, d in graph.degree()), default=0) == bottleneck_volume(sizes)


@settings(max_examples=150, deadline=None)
@given(sizes=sizes_matrices)
def test_padding_is_regular_and_only_one_pe_talks_to_itself(sizes):
    p, h = len(sizes), bottleneck_volume(sizes)
    padded = pad_to_regular(h_relation_multigraph(sizes))
    assert all(d == h for _, d in padded.degree())
    selfish = {u[1] for u, v, dummy in padded.edges(data="dummy") if dummy and u[1] == v[1]}
    assert len(selfish) <= 1
    real = Counter((u[1], v[1]) for u, v, dummy in padded.edges(data="dummy") if not dummy)
    assert real == Counter({(i, j): sizes[i][j] for i in range(p) for j in range(p)
                            if i != j and sizes[i][j]})


@settings(max_examples=100, deadline=None)
@given(sizes=sizes_matrices, pad=st.booleans())
def test_schedule_steps_are_matchings_that_carry_every_word(sizes, pad):
    p, h = len(sizes), bottleneck_volume(sizes)
    steps = coloring_schedule(sizes, pad=pad)
    assert len(steps) == h
    for step in steps:
        assert len({t.src for t in step}) == len(step) == len({t.dst for t in step})
        if pad:
            assert len(step) == p
    real = Counter((t.src, t.dst) for step in steps for t in step if not t.dummy)
    assert real == Counter({(i, j): sizes[i][j] for i in range(p) for j in range(p)
                            if i != j and sizes[i][j]})


def test_colouring_on_random_larger_multigraphs():
    rng = np.random.default_rng(3)
    for p, h in [(20, 40), (50, 7), (64, 64)]:
        sizes = random_h_relation(p, h, rng)
        graph = h_relation_multigraph(sizes)
        assert check_edge_coloring(graph, color_bipartite_multigraph(graph)) == h
        padded = pad_to_regular(graph)
        assert check_edge_coloring(padded, color_bipartite_multigraph(padded)) == h


def test_delivery_takes_h_lockstep_steps_after_the_size_exchange():
    p, h = 9, 11
    e = entry("alltoallv_edge_coloring")
    model = CostModel(ts=1.0, tw=0.0)
    run = e.simulate(p, h, model=model, seed=4)
    starts = run.step_starts()
    assert len(starts) == ceil_log2(p) + h
    delivery = [m for m in run.messages if m.start >= ceil_log2(p)]
    assert all(m.words == 1 for m in delivery)
    for t in starts[ceil_log2(p):]:
        step = [m for m in delivery if m.start == t]
        assert len({m.src for m in step}) == len(step) == len({m.dst for m in step})


def test_random_h_relation_has_h_a_hot_receiver_and_empty_messages():
    for p, h in [(2, 1), (3, 5), (10, 4), (40, 100)]:
        sizes = np.array(random_h_relation(p, h, rng=p))
        off = sizes - np.diag(np.diag(sizes))
        assert bottleneck_volume(sizes) == h
        assert off.sum(axis=0).max() == h                    # a receiver takes h words
        assert off.sum(axis=1).max() <= h and (off >= 0).all()
        if p > 2:
            assert (off[~np.eye(p, dtype=bool)] == 0).any()
    assert len(set(np.array(random_h_relation(30, 60, rng=0)).ravel().tolist())) > 3   # uneven


# -- bad input ---------------------------------------------------------------------------------

@pytest.mark.parametrize("program", [alltoallv_two_phase, alltoallv_edge_coloring])
def test_bad_messages_are_named(program):
    with pytest.raises(ValueError, match="list of p=3 messages"):
        simulate(program, 3, [[[1], [2]]] * 3)
    with pytest.raises(ValueError, match="message for PE 1 must be a list of words.*7"):
        simulate(program, 2, [[[1], 7], [[], []]])


@pytest.mark.parametrize("bad, match", [
    ([[0, -1], [0, 0]], r"sizes\[0\]\[1\].*-1"),
    ([[0, 1.5], [0, 0]], r"sizes\[0\]\[1\].*1.5"),
    ([[0, 1], [True, 0]], r"sizes\[1\]\[0\].*True"),
    ([[0, 1], [0]], "p x p matrix"),
    ([[0, 1, 2], [0, 0, 1]], "p x p matrix"),
])
def test_bad_sizes_are_named(bad, match):
    for f in (bottleneck_volume, h_relation_multigraph, coloring_schedule, two_phase_bundle_words):
        with pytest.raises(ValueError, match=match):
            f(bad)


def test_bad_unit_pad_and_h_are_named():
    with pytest.raises(ValueError, match="unit must be an integer >= 1, got 0"):
        h_relation_multigraph([[0, 1], [1, 0]], unit=0)
    with pytest.raises(ValueError, match="pad must be True or False, got 'yes'"):
        coloring_schedule([[0, 1], [1, 0]], pad="yes")
    with pytest.raises(ValueError, match="h must be an integer >= 0, got -2"):
        random_h_relation(4, -2)
    with pytest.raises(ValueError, match="m must be an integer >= 1, got 0"):
        entry("alltoallv_two_phase").make_inputs(4, 0)


def test_bad_colourings_and_graphs_are_named():
    graph = h_relation_multigraph([[0, 2], [1, 0]])
    good = color_bipartite_multigraph(graph)
    clash = dict(good)
    clash[("s", 0), ("r", 1), 1] = clash[("s", 0), ("r", 1), 0]
    with pytest.raises(ValueError, match=r"colour \d is used twice at node \('s', 0\)"):
        check_edge_coloring(graph, clash)
    with pytest.raises(ValueError, match="has colour 5, not one of 0..1"):
        check_edge_coloring(graph, {**good, (("s", 1), ("r", 0), 0): 5})
    missing = dict(good)
    missing.pop((("s", 1), ("r", 0), 0))
    with pytest.raises(ValueError, match="missing"):
        check_edge_coloring(graph, missing)
    odd = nx.MultiGraph()
    odd.add_nodes_from(["a", "b"], bipartite=0)
    odd.add_edge("a", "b")
    with pytest.raises(ValueError, match="joins two nodes of side 0"):
        color_bipartite_multigraph(odd)
    unlabelled = nx.MultiGraph([(1, 2)])
    with pytest.raises(ValueError, match="node 1 needs the attribute bipartite"):
        color_bipartite_multigraph(unlabelled)
