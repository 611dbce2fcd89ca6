"""The two broadcasts beyond the book's text: the golden-ratio duplex tree and the two trees.

Each is checked against the simulator: every PE ends with the root's message
(p = 1..64, every root, random data, several k and m, uneven packets too), the
simulated time equals or respects the registered closed form, and the claims in
the docstrings (leaves that hear the first packet together, two trees whose
interiors are disjoint) hold.
"""
import random

import pytest

from collective_lib import CostModel, catalog, simulate
from collective_lib.algorithms.broadcast import (
    _duplex_tree_place, duplex_tree_first_packet_steps, fibonacci_tree_size,
    golden_tree_broadcast, two_tree_broadcast, two_tree_latency_bound, two_tree_plan)
from collective_lib.packets import packet_words
from collective_lib.trees import ceil_log2

MODELS = [CostModel(ts=1.0, tw=0.0), CostModel(ts=1.0, tw=0.25), CostModel(ts=0.5, tw=1.0),
          CostModel(ts=0.3, tw=0.7)]


def entry(name):
    return catalog()[name]


def run_case(name, p, root, k, m, model, seed):
    """Simulate one case, check every PE's result, return (run, closed form)."""
    algo = entry(name)
    inputs = algo.make_inputs(p, m, seed=seed, root=root)
    run = algo.simulate(p, m, inputs=inputs, model=model, trace=False, root=root, k=k)
    for pe, got in enumerate(run.results):
        assert got == inputs[root], f"{name} p={p} root={root} k={k} m={m}: PE {pe} got {got!r}"
    return run, algo.predict(p, m, model, root=root, k=k)


def step(model, m, k):
    return model.transfer_time(packet_words(m, k, allow_empty=True))   # two-tree: k > m allowed


# -- correctness and time, p = 1..64, every root ----------------------------------------------

@pytest.mark.parametrize("p", range(1, 65))
def test_golden_tree_is_correct_and_meets_its_closed_form(p):
    rng = random.Random(1000 + p)
    for root in range(p):
        k = rng.choice([1, 2, 3, 5, 8])
        m = rng.choice([k, 2 * k, 3 * k, k + 1, 2 * k + 3])        # some uneven packets
        model = rng.choice(MODELS)
        run, predicted = run_case("golden_tree_broadcast", p, root, k, m, model, seed=root)
        if m % k == 0:
            assert run.time == pytest.approx(predicted, abs=1e-9), (p, root, k, m)
        else:
            assert run.time <= predicted + 1e-9, (p, root, k, m)


@pytest.mark.parametrize("p", range(1, 65))
def test_two_tree_is_correct_and_meets_its_bound(p):
    rng = random.Random(2000 + p)
    for root in range(p):
        k = rng.choice([2, 4, 6, 10, 16])
        m = rng.choice([k, 3 * k, k + 1, 2 * k + 3, 5, 37])        # uneven, and k > m
        model = rng.choice(MODELS)
        run, bound = run_case("two_tree_broadcast", p, root, k, m, model, seed=root)
        assert run.time <= bound + 1e-9, (p, root, k, m)
        # The simulator reproduces the step-synchronous schedule exactly.
        schedule = 0 if p == 1 else (two_tree_plan(p).latency + k - 1) * step(model, m, k)
        assert run.time == pytest.approx(schedule, abs=1e-9), (p, root, k, m)


@pytest.mark.parametrize("name, ks", [("golden_tree_broadcast", (1, 2, 4, 7)),
                                      ("two_tree_broadcast", (2, 4, 8, 12))])
@pytest.mark.parametrize("p", [2, 3, 5, 8, 13, 31, 33, 64])
def test_several_k_and_m_on_a_few_p(name, ks, p):
    model = CostModel(ts=1.0, tw=0.5)
    for k in ks:
        for m in (k, 4 * k, 4 * k + 1, 50):
            for root in {0, p // 2, p - 1}:
                run, predicted = run_case(name, p, root, k, m, model, seed=k * m + root)
                assert run.time <= predicted + 1e-9, (p, root, k, m)


def test_large_p_powers_of_two_and_neighbours():
    model = CostModel(ts=1.0, tw=0.1)
    for p in (127, 128, 129, 256, 1000, 1024):
        for name, k in (("golden_tree_broadcast", 6), ("two_tree_broadcast", 6)):
            run, predicted = run_case(name, p, p // 3, k, 30, model, seed=p)
            assert run.time == pytest.approx(predicted, abs=1e-9) or \
                (not entry(name).exact and run.time <= predicted + 1e-9)


# -- the golden tree -----------------------------------------------------------------------

def test_fig_13_4_bottom_seven_steps_for_p7_k3():
    assert simulate(golden_tree_broadcast, 7, [[1, 2, 3]] + [None] * 6, k=3).time == 7
    # The same full-duplex schedule on the balanced tree needs one step more.
    assert simulate(golden_tree_broadcast, 7, [[1, 2, 3]] + [None] * 6, k=3,
                    shape="balanced").time == 8


def first_packet_arrivals_at_leaves(p, shape, root=0):
    run = simulate(golden_tree_broadcast, p, lambda i: [1, 2] if i == root else None,
                   root=root, k=2, shape=shape)
    first = {}
    for msg in run.messages:
        first.setdefault(msg.dst, msg.end)
    leaves = [pe for pe in range(p)
              if pe != root and _duplex_tree_place(pe, p, root, shape)[1] is None]
    return [first[pe] for pe in leaves]


def test_all_leaves_hear_the_first_packet_together_exactly_for_fibonacci_sizes():
    sizes = {fibonacci_tree_size(t) for t in range(1, 12)}       # 2, 4, 7, 12, 20, 33, 54, ...
    for p in range(2, 150):
        arrivals = first_packet_arrivals_at_leaves(p, "golden", root=p // 3)
        spread = max(arrivals) - min(arrivals)
        if p in sizes:
            assert spread == 0, f"p={p}: leaves hear packet 1 at {sorted(set(arrivals))}"
        else:
            assert spread == 1, f"p={p}: leaves hear packet 1 at {sorted(set(arrivals))}"
        assert max(arrivals) == duplex_tree_first_packet_steps(p)


def test_the_balanced_tree_spreads_its_leaves_further():
    assert max(first_packet_arrivals_at_leaves(7, "balanced")) - \
        min(first_packet_arrivals_at_leaves(7, "balanced")) == 2
    spreads = [max(a) - min(a) for a in (first_packet_arrivals_at_leaves(p, "balanced")
                                        for p in (100, 128, 149))]
    assert min(spreads) >= 5


def test_golden_split_reaches_the_fibonacci_optimum_and_beats_balanced():
    t = 0
    for n in range(1, 100_000):
        while fibonacci_tree_size(t) < n:
            t += 1
        assert duplex_tree_first_packet_steps(n, "golden") == t, n
    for n in range(1, 2049):
        assert duplex_tree_first_packet_steps(n, "golden") <= \
            duplex_tree_first_packet_steps(n, "balanced")
    # about 1.44 log2 p against about 2 log2 p
    assert duplex_tree_first_packet_steps(1024, "golden") == 14
    assert duplex_tree_first_packet_steps(1024, "balanced") == 18


def test_golden_optimal_k_minimizes_the_closed_form():
    algo = entry("golden_tree_broadcast")
    model = CostModel(ts=1.0, tw=0.01)
    for p, m in ((16, 500), (100, 3000), (7, 1)):
        k = algo.optimal_k(p, m, model)
        best = min(algo.predict(p, m, model, k=j) for j in range(1, m + 1))
        assert algo.predict(p, m, model, k=k) == best


# -- the two trees -------------------------------------------------------------------------

def tree_roots_reached(parent, q):
    """Every non-root PE's chain of parents reaches the root (q) without a cycle."""
    for v in range(q):
        seen, u = set(), v
        while u != q:
            assert u not in seen, f"cycle through PE {u}"
            seen.add(u)
            u = parent[u]
    return True


@pytest.mark.parametrize("p", list(range(2, 80)) + [255, 256, 257, 1024])
def test_two_trees_span_have_disjoint_interiors_and_one_transfer_per_port_and_step(p):
    plan = two_tree_plan(p)
    q = p - 1
    for t in (0, 1):
        assert tree_roots_reached(plan.parent[t], q)
    interior = [{u for u in plan.parent[t] if u != q} for t in (0, 1)]
    # PE 0 forwards both halves to the extra PE when q is even; nobody else is interior twice.
    assert interior[0] & interior[1] <= ({0} if q % 2 == 0 else set())
    for v in range(p):
        sends = [plan.first[t][w] % 2 for w, t in plan.children[v]]
        assert len(sends) == len(set(sends)) <= 2, f"PE {v} sends twice in a step"
        if v < q:
            assert plan.first[0][v] % 2 != plan.first[1][v] % 2, f"PE {v} receives twice"
            for t in (0, 1):
                up = plan.parent[t][v]
                start = -1 if up == q else plan.first[t][up]
                assert start < plan.first[t][v] <= start + 2
    assert plan.height <= max(0, ceil_log2(p) - 1)
    if p % 2 == 0:
        assert plan.height == ceil_log2(p) - 1
    assert plan.latency - 1 <= two_tree_latency_bound(p)


def test_two_tree_bound_is_beta_n_plus_2_alpha_log_p_for_long_messages():
    algo = entry("two_tree_broadcast")
    model = CostModel(ts=1.0, tw=1e-3)
    p, n = 1024, 10**9
    k = algo.optimal_k(p, n, model)
    assert k % 2 == 0
    time = algo.predict(p, n, model, k=k)
    ideal = model.tw * n + 2 * model.ts * ceil_log2(p)
    assert time < 1.02 * ideal
    golden = entry("golden_tree_broadcast")
    assert time < 0.6 * golden.predict(p, n, model, k=golden.optimal_k(p, n, model))
    # and the optimum really is the smallest the closed form gets over even k
    near = [algo.predict(p, n, model, k=j) for j in range(max(2, k - 200), k + 202, 2)]
    assert time == min(near)


def test_two_tree_optimal_k_on_short_messages():
    algo = entry("two_tree_broadcast")
    model = CostModel(ts=1.0, tw=0.05)
    for p, m in ((2, 1), (9, 7), (64, 1000)):
        k = algo.optimal_k(p, m, model)
        best = min(algo.predict(p, m, model, k=j) for j in range(2, max(2, m) + 1, 2))
        assert k % 2 == 0 and algo.predict(p, m, model, k=k) == best


# -- invalid use ---------------------------------------------------------------------------

@pytest.mark.parametrize("k", [0, 1, 3, -2, 2.0, True, "4"])
def test_two_tree_rejects_a_bad_k_and_names_it(k):
    with pytest.raises(ValueError, match=rf"even number of packets k >= 2 .*got k={k!r}"):
        two_tree_broadcast(0, 4, [1, 2, 3, 4], k=k).send(None)
    with pytest.raises(ValueError, match="got k="):
        entry("two_tree_broadcast").predict(4, 4, k=k)


@pytest.mark.parametrize("k", [0, -1])
def test_golden_tree_rejects_a_bad_k_and_names_it(k):
    with pytest.raises(ValueError, match=f"k must be an integer >= 1, got {k}"):
        golden_tree_broadcast(0, 4, [1, 2, 3, 4], k=k).send(None)


def test_golden_tree_rejects_an_unknown_shape_and_a_bad_root():
    with pytest.raises(ValueError, match="shape must be 'golden' or 'balanced', got shape='fib'"):
        golden_tree_broadcast(0, 4, [1], shape="fib").send(None)
    for program in (golden_tree_broadcast, two_tree_broadcast):
        with pytest.raises(ValueError, match="root must be a rank in 0..3, got root=4"):
            program(0, 4, None, root=4).send(None)
