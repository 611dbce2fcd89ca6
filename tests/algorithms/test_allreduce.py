"""The all-reduce family of chapter 8 (collective_lib/algorithms/allreduce.py).

Every entry on many p (powers of two and not), random data, against the sequential
reduction; the simulated time equal to the closed form where the entry (or the case)
is exact, within it where it is a bound; rank order kept where the entry promises it
(word-wise string concatenation, associative but not commutative).  The catalog-wide
tests (tests/core/test_catalog.py) check the entries once more with their defaults.
"""
import functools
import random

import pytest

from collective_lib import CostModel, catalog, simulate
from collective_lib.algorithms.allreduce import (
    double_tree_reduction_plan, hierarchical_allreduce, recursive_doubling_allreduce,
    recursive_halving_doubling_allreduce, ring_allreduce)
from collective_lib.algorithms.broadcast import two_tree_plan
from collective_lib.algorithms.reduce import hypercube_allreduce, rabenseifner_allreduce
from collective_lib.collectives import add
from collective_lib.grading import forbid_library_calls, forbid_library_execution
from collective_lib.networks import Hypercube, Ring

PS = [1, 2, 3, 5, 6, 7, 8, 12, 16, 31, 64, 200]
MODELS = [CostModel(ts=1.0, tw=0.0), CostModel(ts=1.0, tw=0.25), CostModel(ts=0.5, tw=1.0),
          CostModel(ts=20.0, tw=0.01)]
NAMES = ["ring_allreduce", "recursive_doubling_allreduce",
         "recursive_halving_doubling_allreduce", "double_binary_tree_allreduce",
         "hierarchical_allreduce"]


def _power_of_two(p):
    return p & (p - 1) == 0


def _words(p, m, seed):
    rng = random.Random(seed)
    return [[rng.randint(-99, 99) for _ in range(m)] for _ in range(p)]


def _letters(p, m):
    """Word j of PE i is one letter of PE i: word-wise + concatenates in rank order."""
    return [[chr(ord("a") + i % 26) + str(i) for _ in range(m)] for i in range(p)]


def _run_and_check(name, p, m, model, inputs=None, **params):
    entry = catalog()[name]
    inputs = _words(p, m, seed=p * 1000 + m) if inputs is None else inputs
    run = entry.simulate(p, m, inputs=inputs, model=model, trace=False, **params)
    want = functools.reduce(add, inputs)
    for pe, got in enumerate(run.results):
        assert got == want, f"{name} p={p} m={m} {params}: PE {pe} returned {got!r}"
    return run, entry.predict(p, m, model, **params)


def _exact_case(name, p, params):
    """Whether the simulated time must equal the closed form for this p and these params."""
    if name in ("ring_allreduce", "recursive_doubling_allreduce"):
        return True
    if name == "recursive_halving_doubling_allreduce":
        return _power_of_two(p)
    if name == "hierarchical_allreduce":
        return p % min(params["per_node"], p) == 0
    return False


def _cases(name, p):
    """(m, params) cases for an entry on p PEs: short and long messages, its parameters."""
    least = 1 << (p.bit_length() - 1) if name == "recursive_halving_doubling_allreduce" else 1
    ms = sorted({max(least, m) for m in (1, 3, p + 1, 2 * p + 3)})
    if name == "double_binary_tree_allreduce":
        return [(m, {"k": k}) for m in ms for k in (2, 4, 8)]
    if name == "hierarchical_allreduce":
        return [(m, {"per_node": n}) for m in ms[:2] for n in (1, 2, 3, 4, 8)]
    return [(m, {}) for m in ms]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("p", PS)
def test_results_and_closed_form(name, p):
    for i, (m, params) in enumerate(_cases(name, p)):
        model = MODELS[(i + p) % len(MODELS)]
        run, predicted = _run_and_check(name, p, m, model, **params)
        if _exact_case(name, p, params):
            assert run.time == pytest.approx(predicted, rel=1e-12, abs=1e-12), \
                f"{name} p={p} m={m} {params}: simulated {run.time}, closed form {predicted}"
        else:
            assert run.time <= predicted + 1e-9, \
                f"{name} p={p} m={m} {params}: simulated {run.time} above the bound {predicted}"


@pytest.mark.parametrize("name", ["recursive_doubling_allreduce",
                                  "recursive_halving_doubling_allreduce",
                                  "hierarchical_allreduce"])
@pytest.mark.parametrize("p", [2, 3, 5, 6, 7, 12, 13, 31])
def test_rank_order_is_kept_for_a_non_commutative_operator(name, p):
    assert not catalog()[name].requires_commutative
    m = 1 << (p.bit_length() - 1)
    params = {"per_node": 3} if name == "hierarchical_allreduce" else {}
    _run_and_check(name, p, m, CostModel(ts=1.0, tw=0.5), inputs=_letters(p, m), **params)


@pytest.mark.parametrize("name", ["ring_allreduce", "double_binary_tree_allreduce"])
def test_the_ring_and_the_trees_say_they_need_a_commutative_operator(name):
    entry = catalog()[name]
    assert entry.requires_commutative
    # and indeed they combine out of rank order: concatenation comes out rotated somewhere
    inputs = _letters(7, 4)
    run = entry.simulate(7, 4, inputs=inputs, model=CostModel(ts=1.0, tw=0.0), trace=False)
    assert run.results[0] != functools.reduce(add, inputs)


def test_large_p_powers_of_two_and_not():
    model = CostModel(ts=1.0, tw=0.5)
    for name in NAMES:
        for p in (256, 300):
            m = 300 if name == "recursive_halving_doubling_allreduce" else 8
            params = {"k": 4} if name == "double_binary_tree_allreduce" else {}
            params = {"per_node": 10} if name == "hierarchical_allreduce" else params
            run, predicted = _run_and_check(name, p, m, model, **params)
            if _exact_case(name, p, params):
                assert run.time == pytest.approx(predicted, rel=1e-12)
            else:
                assert run.time <= predicted + 1e-9


@pytest.mark.parametrize("p", [1, 2, 4, 8, 16, 64])
def test_for_a_power_of_two_recursive_doubling_is_the_hypercube_all_reduce(p):
    # the same exchanges in the same order: the same messages, and the same time
    inputs = _words(p, 3, seed=p)
    model = CostModel(ts=1.0, tw=0.5)
    mine = simulate(recursive_doubling_allreduce, p, inputs, model=model)
    cube = simulate(hypercube_allreduce, p, inputs, network=Hypercube.of_size(p), model=model)
    assert mine.results == cube.results and mine.time == cube.time
    assert ([(x.src, x.dst, x.start, x.words) for x in mine.messages]
            == [(x.src, x.dst, x.start, x.words) for x in cube.messages])


@pytest.mark.parametrize("p", [1, 2, 4, 8, 32])
def test_for_a_power_of_two_halving_doubling_is_rabenseifner(p):
    m = 3 * p + 1
    inputs = _words(p, m, seed=p)
    model = CostModel(ts=1.0, tw=0.5)
    mine = simulate(recursive_halving_doubling_allreduce, p, inputs, model=model)
    theirs = simulate(rabenseifner_allreduce, p, inputs, network=Hypercube.of_size(p), model=model)
    assert mine.results == theirs.results and mine.time == theirs.time


@pytest.mark.parametrize("p", [3, 5, 6, 7, 12])
def test_folding_adds_two_steps_of_the_whole_vector(p):
    # recursive doubling for p not a power of two: one step in, log2 p' rounds, one step out
    model = CostModel(ts=1.0, tw=0.0)
    run = simulate(recursive_doubling_allreduce, p, _words(p, 2, seed=p), model=model)
    assert run.time == (p.bit_length() - 1) + 2


def test_the_ring_is_bandwidth_optimal():
    # Patarasuk and Yuan: every PE sends 2(p - 1) m / p words when p divides m
    p, m = 8, 64
    run = simulate(ring_allreduce, p, _words(p, m, seed=1), network=Ring(p))
    sent = [0] * p
    for x in run.messages:
        sent[x.src] += x.words
        assert (x.dst - x.src) % p == 1                   # neighbours only, to the right
    assert sent == [2 * (p - 1) * m // p] * p


def test_the_ring_sends_no_empty_blocks_and_keeps_its_time():
    p, m = 12, 5                                          # 7 of the 12 blocks are empty
    model = CostModel(ts=1.0, tw=1.0)
    run = simulate(ring_allreduce, p, _words(p, m, seed=2), network=Ring(p), model=model)
    assert len(run.messages) == 2 * (p - 1) * m
    assert run.time == 2 * (p - 1) * (1.0 + 1.0)


def test_hierarchical_with_one_pe_per_node_is_recursive_doubling():
    p, model = 13, CostModel(ts=1.0, tw=0.25)
    inputs = _words(p, 4, seed=3)
    flat = simulate(recursive_doubling_allreduce, p, inputs, model=model)
    nodes = simulate(hierarchical_allreduce, p, inputs, model=model, per_node=1)
    assert nodes.results == flat.results and nodes.time == flat.time


def test_hierarchical_only_leaders_talk_between_nodes():
    p, per_node = 24, 6
    run = simulate(hierarchical_allreduce, p, _words(p, 2, seed=4), per_node=per_node)
    across = {(x.src, x.dst) for x in run.messages if x.src // per_node != x.dst // per_node}
    assert across and all(s % per_node == 0 and d % per_node == 0 for s, d in across)


def test_invalid_parameters_are_refused_with_a_clear_message():
    entries = catalog()
    assert "m >= p'" in entries["recursive_halving_doubling_allreduce"].refusal(12, 7)
    assert "even number of packets" in entries["double_binary_tree_allreduce"].refusal(5, 8, k=3)
    assert "per_node" in entries["hierarchical_allreduce"].refusal(5, 8, per_node=0)


# -- the double binary tree keeps its schedule: 2(latency + k - 1) steps, for every p and k ----
#
# Every transfer of the entry is ceil(m/k) words (fillers too), so its simulated time is a
# number of steps times ts + tw ceil(m/k), and so is its closed form: the step count under
# ts=1, tw=0 with one word per packet decides the bound for every m and model.  An early
# send that takes a port out of turn shows as steps beyond the schedule, growing with k
# (it did at p = 16, 25, 27, 41, 48, ...: up to five steps per four packets).

STEPS = CostModel(ts=1.0, tw=0.0)
SELECTOR_MODELS = [CostModel(ts=10.0, tw=1.0), CostModel(ts=1000.0, tw=1.0)]


def _one_word_add(a, b):
    """add on one-word packets, without elementwise's checks (this test runs ~70 000 of them)."""
    return [a[0] + b[0]]


def _double_tree_ks(p):
    """Fixed packet counts, small to large, and the optimal k at m = 1e4, 1e5 under both models."""
    entry = catalog()["double_binary_tree_allreduce"]
    best = {entry.optimal_k(p, m, model) for m in (10_000, 100_000) for model in SELECTOR_MODELS}
    return sorted({2, 8, 32, 64, 100, 128} | best)


@pytest.mark.parametrize("p", [*range(2, 34), 37, 45, 48, 59, 63, 64])
def test_double_tree_keeps_its_schedule_and_its_bound_for_many_k(p):
    entry = catalog()["double_binary_tree_allreduce"]
    latency = two_tree_plan(p).latency
    for k in _double_tree_ks(p):
        inputs = [[i + 1] * k for i in range(p)]          # one word per packet
        run = entry.simulate(p, k, inputs=inputs, model=STEPS, k=k, op=_one_word_add,
                             trace=False)
        assert run.results == [[p * (p + 1) // 2] * k] * p, f"p={p} k={k}"
        assert run.time == 2 * (latency + k - 1), \
            f"p={p} k={k}: {run.time} steps, the two schedules take {2 * (latency + k - 1)}"
        assert run.time <= entry.predict(p, k, STEPS, k=k), f"p={p} k={k}: above the bound"


@pytest.mark.parametrize("p, m, model", [(16, 10_000, CostModel(ts=1.0, tw=0.0)),
                                         (16, 10_000, CostModel(ts=10.0, tw=1.0)),
                                         (25, 100_000, CostModel(ts=10.0, tw=1.0)),
                                         (41, 10_000, CostModel(ts=1000.0, tw=1.0)),
                                         (7, 1_000, CostModel(ts=0.5, tw=0.25))])
def test_double_tree_within_its_bound_at_the_selectors_k(p, m, model):
    # the selector's choice (tests/core/test_selection.py failed at p = 16, m = 1e4, k = 100)
    entry = catalog()["double_binary_tree_allreduce"]
    k = 100 if model == STEPS else entry.optimal_k(p, m, model)
    run = entry.simulate(p, m, model=model, k=k, trace=False)
    steps = 2 * (two_tree_plan(p).latency + k - 1)
    width = -(-m // k)
    assert run.time == pytest.approx(steps * model.transfer_time(width), rel=1e-12)
    assert run.time <= entry.predict(p, m, model, k=k) + 1e-9


@pytest.mark.parametrize("p, k", [(2, 2), (4, 2), (7, 4), (16, 8), (16, 100), (33, 6), (54, 32)])
def test_double_tree_reduction_keeps_every_pe_busy_up_to_its_last_send(p, k):
    # the condition under which no send is issued before its step; ports used once per step
    plan = double_tree_reduction_plan(p, k)
    for me, mine in enumerate(plan):
        sends = [s for s, out, _ in mine if out is not None]
        if sends:
            assert [s for s, _, _ in mine if s <= sends[-1]] == list(range(sends[-1] + 1)), me
    for step in {s for mine in plan for s, _, _ in mine}:
        into = [out[0] for mine in plan for s, out, _ in mine if s == step and out is not None]
        assert len(into) == len(set(into)), f"step {step}: a port receives twice"
    real = sum(out is not None and out[1] is not None for mine in plan for _, out, _ in mine)
    assert real == (p - 1) * k                        # every non-root PE sends each packet once


def test_optimal_k_of_the_double_tree_is_even_and_best():
    entry = catalog()["double_binary_tree_allreduce"]
    model = CostModel(ts=10.0, tw=0.1)
    best = entry.optimal_k(31, 400, model)
    assert best % 2 == 0
    assert entry.predict(31, 400, model, k=best) == min(
        entry.predict(31, 400, model, k=k) for k in range(2, 401, 2))


# -- ring_reduction: the library's ring all-reduce holds that assignment's answer -------------
#
# The assignment's hidden tests forbid, by name and at run time, every catalog program of
# the operations all_to_all_reduction and allreduce (exercises/source/ring_reduction). These
# tests run the same checks on submissions that lean on ring_allreduce; the nbgrader round
# trip (tests/exercises/test_ring_reduction.py) runs them in the sandbox.

def _forbidden(names=()):
    return [n for n, e in catalog().items()
            if e.operation in ("all_to_all_reduction", "allreduce")] + list(names)


def calls_the_ring(me, p, data, op=add):
    """An all-to-all reduction from the library's ring all-reduce: the answer handed out."""
    vector = [word for message in data for word in message]
    total = yield from ring_allreduce(me, p, vector, op)
    width = len(data[0])
    return total[me * width:(me + 1) * width]


def drives_the_ring(me, p, data, op=add):
    """Runs only the reduce-scatter half of the library's generator, then reads its blocks."""
    import importlib
    module = importlib.import_module(".".join(["collective_lib", "algorithms", "allreduce"]))
    program = getattr(module, "_".join(["ring", "allreduce"]))
    vector = [word for message in data for word in message]
    gen = program(me, p, vector, op)
    reply = None
    for _ in range(p - 1):
        reply = yield gen.send(reply)
    return None


def test_ring_reduction_forbids_the_library_ring_by_name():
    assert "ring_allreduce" in _forbidden()
    with pytest.raises(AssertionError, match=r"calls_the_ring uses the library's `ring_allreduce`"):
        forbid_library_calls(calls_the_ring, _forbidden(["catalog"]))


@pytest.mark.parametrize("program", [calls_the_ring, drives_the_ring])
def test_ring_reduction_catches_the_library_ring_when_it_runs(program):
    inputs = [[[i, j] for j in range(5)] for i in range(5)]
    with pytest.raises(AssertionError, match=rf"{program.__name__} runs the library's "
                                             r"`ring_allreduce`"):
        forbid_library_execution(program, _forbidden(), 5, inputs, network=Ring(5),
                                 time_limit_s=3)


def test_ring_reduction_catches_a_copy_of_the_library_ring():
    # the source compiled again under another name runs the same code: caught as it runs
    import inspect
    import textwrap
    namespace = dict(vars(__import__("collective_lib.algorithms.allreduce",
                                     fromlist=["ring_allreduce"])))
    source = textwrap.dedent(inspect.getsource(ring_allreduce))
    source = source[source.index("def ring_allreduce"):]
    exec(compile(source, "<student>", "exec"), namespace)
    copy = namespace["ring_allreduce"]
    assert copy is not ring_allreduce

    def copied(me, p, data, op=add):
        vector = [word for message in data for word in message]
        total = yield from copy(me, p, vector, op)
        return total[me * 2:(me + 1) * 2]

    inputs = [[[i, j] for j in range(4)] for i in range(4)]
    with pytest.raises(AssertionError, match=r"copied runs the library's `ring_allreduce`"):
        forbid_library_execution(copied, _forbidden(), 4, inputs, network=Ring(4), time_limit_s=3)
