"""Gather, scatter and all-gather (Sanders §13.5), each against the simulator."""
import random
from collections import Counter

import pytest

from collective_lib import CostModel, catalog
from collective_lib.trees import ceil_log2

GATHER_SCATTER = ["naive_gather", "binomial_gather", "binomial_scatter", "hypercube_allgather"]
MODELS = [CostModel(ts=1.0, tw=0.0), CostModel(ts=1.0, tw=0.25), CostModel(ts=0.5, tw=1.0),
          CostModel(ts=0.0, tw=1.0)]


def entry(name):
    return catalog()[name]


def cases(name):
    e = entry(name)
    for p in range(1, 65):
        if e.valid(p):
            for root in (range(p) if "root" in e.params else [None]):
                yield p, ({} if root is None else {"root": root})


@pytest.mark.parametrize("name", GATHER_SCATTER)
def test_results_for_every_p_and_root(name):
    e = entry(name)
    rng = random.Random(name)
    for p, params in cases(name):
        m = rng.randint(1, 4)
        inputs = e.make_inputs(p, m, seed=rng.randrange(10**6), **params)
        run = e.simulate(p, m, inputs=inputs, trace=False, **params)
        assert run.results == e.expected(inputs, **params), (name, p, params)


def test_gather_result_is_indexed_by_real_rank():
    p, root = 7, 3
    inputs = [[f"pe{i}", i] for i in range(p)]
    for name in ("naive_gather", "binomial_gather"):
        run = entry(name).simulate(p, 2, inputs=inputs, root=root, trace=False)
        assert run.results[root] == inputs
        assert all(run.results[i] is None for i in range(p) if i != root)


def test_scatter_delivers_message_i_to_pe_i():
    p, root = 6, 4
    messages = [[f"for{i}"] for i in range(p)]
    inputs = [messages if i == root else None for i in range(p)]
    run = entry("binomial_scatter").simulate(p, 1, inputs=inputs, root=root, trace=False)
    assert run.results == messages


@pytest.mark.parametrize("name", GATHER_SCATTER)
def test_time_is_the_closed_form(name):
    e = entry(name)
    for i, (p, params) in enumerate(cases(name)):
        model = MODELS[i % len(MODELS)]
        m = 1 + i % 5
        run = e.simulate(p, m, model=model, trace=False, **params)
        assert e.exact
        assert run.time == pytest.approx(e.predict(p, m, model, **params), abs=1e-12)


@pytest.mark.parametrize("p", [1, 2, 3, 5, 8, 13, 16, 33, 64])
def test_closed_forms_as_in_the_book(p):
    ts, tw, m = 2.0, 0.5, 3
    model = CostModel(ts=ts, tw=tw)
    assert entry("naive_gather").predict(p, m, model) == (p - 1) * (ts + tw * m)
    tree = ceil_log2(p) * ts + (p - 1) * m * tw                       # Theorem 13.9
    assert entry("binomial_gather").predict(p, m, model) == pytest.approx(tree)
    assert entry("binomial_scatter").predict(p, m, model) == pytest.approx(tree)
    if p & (p - 1) == 0:                                              # Corollary 13.10
        assert entry("hypercube_allgather").predict(p, m, model) == pytest.approx(tree)


def test_binomial_gather_messages_grow_as_in_fig_13_12():
    p, m = 8, 3
    run = entry("binomial_gather").simulate(p, m, model=CostModel(ts=1.0, tw=0.0))
    by_step = sorted((t.start, t.words // m) for t in run.messages)
    assert all(t.words % m == 0 for t in run.messages)
    assert [size for _, size in by_step] == [1, 1, 1, 1, 2, 2, 4]
    assert [start for start, _ in by_step] == [0, 0, 0, 0, 1, 1, 2]
    assert Counter((t.src, t.dst) for t in run.messages) == Counter(
        {(1, 0): 1, (3, 2): 1, (5, 4): 1, (7, 6): 1, (2, 0): 1, (6, 4): 1, (4, 0): 1})


def test_binomial_scatter_messages_shrink_and_allgather_doubles():
    p, m = 8, 2
    run = entry("binomial_scatter").simulate(p, m, model=CostModel(ts=1.0, tw=0.0))
    assert sorted((t.start, t.words // m) for t in run.messages) == [
        (0, 4), (1, 2), (1, 2), (2, 1), (2, 1), (2, 1), (2, 1)]
    run = entry("hypercube_allgather").simulate(p, m, model=CostModel(ts=1.0, tw=0.0))
    assert sorted(Counter((t.start, t.words // m) for t in run.messages).items()) == [
        ((0, 1), 8), ((1, 2), 8), ((2, 4), 8)]


@pytest.mark.parametrize("name", ["naive_gather", "binomial_gather", "binomial_scatter"])
@pytest.mark.parametrize("root", [-1, 5, 1.5, True])
def test_bad_root_is_named(name, root):
    with pytest.raises(ValueError, match="root"):
        entry(name).simulate(5, 1, inputs=[[0]] * 5, root=root, trace=False)


@pytest.mark.parametrize("p", [3, 6, 12])
def test_hypercube_allgather_needs_a_power_of_two(p):
    with pytest.raises(ValueError, match=f"power of two, got p={p}"):
        entry("hypercube_allgather").simulate(p, 1, inputs=[[0]] * p, trace=False)


@pytest.mark.parametrize("bad", [None, [[1], [2]], "abcd", [[1]] * 5, 7])
def test_scatter_root_needs_a_list_of_p_messages(bad):
    p, root = 4, 1
    inputs = [bad if i == root else None for i in range(p)]
    with pytest.raises(ValueError, match=r"list of p = 4 messages, got"):
        entry("binomial_scatter").simulate(p, 1, inputs=inputs, root=root, trace=False)


# -- Bruck's all-gather (Bruck et al. 1997) ---------------------------------------------------

BRUCK_P = [*range(1, 65), 100, 127, 129, 255, 1000]


@pytest.mark.parametrize("model", MODELS)
def test_bruck_allgather_is_exact_for_every_p(model):
    e = entry("bruck_allgather")
    rng = random.Random(str(model))
    for p in BRUCK_P:
        m = rng.randint(1, 4)
        inputs = e.make_inputs(p, m, seed=rng.randrange(10**6))
        run = e.simulate(p, m, inputs=inputs, model=model, trace=False)
        assert run.results == e.expected(inputs), p
        closed = ceil_log2(p) * model.ts + (p - 1) * m * model.tw
        assert e.predict(p, m, model) == pytest.approx(closed)
        assert run.time == pytest.approx(closed, abs=1e-9), (p, m, run.time, closed)


@pytest.mark.parametrize("p", [2, 5, 6, 7, 8, 12])
def test_bruck_round_k_sends_min_of_2k_and_p_minus_2k_blocks_to_me_minus_2k(p):
    m = 2
    run = entry("bruck_allgather").simulate(p, m, model=CostModel(ts=1.0, tw=0.0))
    starts = run.step_starts()
    assert len(starts) == ceil_log2(p)
    for k, start in enumerate(starts):
        s = 1 << k
        sent = [t for t in run.messages if t.start == start]
        assert sorted((t.src, t.dst) for t in sent) == sorted((i, (i - s) % p) for i in range(p))
        assert {t.words for t in sent} == {min(s, p - s) * m}


def test_bruck_final_rotation_files_messages_by_sender():
    p = 6
    inputs = [[f"pe{i}"] for i in range(p)]
    run = entry("bruck_allgather").simulate(p, 1, inputs=inputs, trace=False)
    assert all(result == inputs for result in run.results)
