"""Chapter 2's claims (reduce, all-reduce, prefix sums, barrier), each against the simulator."""
import operator
import random
from functools import reduce as fold

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collective_lib import CostModel, catalog, compute, simulate
from collective_lib.algorithms.reduce import (add, barrier, binary_tree_prefix_sum,
                                              binomial_reduce, combine, elementwise,
                                              hypercube_prefix_sum,
                                              pipelined_binary_tree_prefix_sum)
from collective_lib.trees import ceil_log2, tree_height

CHAPTER_2 = ["binomial_reduce", "binary_tree_reduce", "pipelined_binary_tree_reduce",
             "reduce_broadcast_allreduce", "hypercube_allreduce", "rabenseifner_allreduce",
             "hypercube_prefix_sum", "binary_tree_prefix_sum", "pipelined_binary_tree_prefix_sum",
             "barrier"]
COMBINING = [n for n in CHAPTER_2 if n != "barrier"]


def entry(name):
    return catalog()[name]


# Two associative, non-commutative operators on words, lifted to messages.
concat = elementwise(operator.add)                       # on strings: concatenation


def matmul2(a, b):
    """The product of 2x2 integer matrices stored as (a11, a12, a21, a22)."""
    return (a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
            a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3])


matrix_product = elementwise(matmul2)


def joined(lo, hi):
    """Interval concatenation: (a, b) op (b+1, c) = (a, c); anything else is a reordering."""
    if lo[1] + 1 != hi[0]:
        raise AssertionError(f"operands out of order: {lo} op {hi}")
    return (lo[0], hi[1])


def string_inputs(p, m):
    return [[f"<{i}.{w}>" for w in range(m)] for i in range(p)]


def matrix_inputs(p, m, seed):
    rng = random.Random(seed)
    return [[tuple(rng.randint(-3, 3) for _ in range(4)) for _ in range(m)] for _ in range(p)]


def run_with(name, p, inputs, m, **params):
    e = entry(name)
    run = e.simulate(p, m, inputs=inputs, trace=False, **params)
    return run.results, e.expected(inputs, **params)


def message_size(name, p, m):
    return max(m, p) if name == "rabenseifner_allreduce" else m


# -- operand order -------------------------------------------------------------------

def test_only_the_rotated_binomial_reduction_needs_a_commutative_operator():
    flagged = {n for n in CHAPTER_2 if entry(n).requires_commutative}
    assert flagged == {"binomial_reduce"}


@pytest.mark.parametrize("name", COMBINING)
def test_non_commutative_operator_every_p_and_every_root(name):
    e = entry(name)
    if e.requires_commutative:
        pytest.skip(f"{name} combines out of rank order for some roots; see the root-0 test")
    for p in range(1, 65):
        if not e.valid(p):
            continue
        for root in (range(p) if "root" in e.params else [None]):
            m = message_size(name, p, 2)
            params = {"op": concat}
            if root is not None:
                params["root"] = root
            if "k" in e.params:
                params["k"] = 1 + (p + (root or 0)) % 2
            got, want = run_with(name, p, string_inputs(p, m), m, **params)
            assert got == want, f"{name} p={p} {params}"


@pytest.mark.parametrize("name", COMBINING)
def test_matrix_products_in_rank_order(name):
    e = entry(name)
    for p in [1, 2, 3, 5, 8, 13, 16, 31, 32]:
        if not e.valid(p):
            continue
        roots = sorted({0, p // 2, p - 1}) if "root" in e.params else [None]
        for root in roots:
            if e.requires_commutative and root:
                continue
            m = message_size(name, p, 3)
            params = {"op": matrix_product}
            if root is not None:
                params["root"] = root
            if "k" in e.params:
                params["k"] = 3
            got, want = run_with(name, p, matrix_inputs(p, m, seed=p), m, **params)
            assert got == want, f"{name} p={p} {params}"


@pytest.mark.parametrize("p", range(1, 65))
def test_binomial_reduce_to_pe_0_combines_in_rank_order(p):
    inputs = string_inputs(p, 1)
    run = simulate(binomial_reduce, p, inputs, op=concat)
    assert run.results[0] == ["".join(f"<{i}.0>" for i in range(p))]
    assert run.results[1:] == [None] * (p - 1)


def test_binomial_reduce_to_another_root_combines_in_rotated_order():
    # Relative ranks 0..p-1 are the PEs root, root+1, ..., root-1: right only if op commutes.
    run = simulate(binomial_reduce, 5, [[str(i)] for i in range(5)], root=2, op=concat)
    assert run.results[2] == ["23401"]
    run = simulate(binomial_reduce, 5, [[i] for i in range(5)], root=2)
    assert run.results[2] == [10]


# -- figures ------------------------------------------------------------------------

def test_fig_13_3_binomial_reduction_of_eight_pes():
    # Fig. 13.3 (right): step 1 pairs 1->0, 3->2, 5->4, 7->6; step 2 2->0, 6->4; step 3 4->0.
    run = simulate(binomial_reduce, 8, [(i, i) for i in range(8)], op=joined)
    assert run.time == 3 == ceil_log2(8)
    steps = [{(m.src, m.dst): m.payload for m in run.step(s)} for s in (1, 2, 3)]
    assert steps[0] == {(1, 0): (1, 1), (3, 2): (3, 3), (5, 4): (5, 5), (7, 6): (7, 7)}
    assert steps[1] == {(2, 0): (2, 3), (6, 4): (6, 7)}
    assert steps[2] == {(4, 0): (4, 7)}
    assert run.results == [(0, 7)] + [None] * 7


def test_fig_13_7_hypercube_prefix_sum_pattern_for_eight_pes():
    """Fig. 13.7 with x:y for m_x op ... op m_y.

    In iteration i PE me sends the total of its i-dimensional subcube (the PEs
    that agree with it in bits i..d-1): in iteration 0 its own m_me, in
    iteration 1 the pair (2j):(2j+1), in iteration 2 the quadruple.  At the
    end every PE holds its prefix 0:me (top values) and the total 0:7
    (bottom values).
    """
    run = simulate(hypercube_prefix_sum, 8, [(i, i) for i in range(8)], op=joined)
    for i in range(3):
        sent = {m.src: m.payload for m in run.step(i + 1)}
        assert sent == {me: (me >> i << i, (me >> i << i) + (1 << i) - 1) for me in range(8)}
        assert all(m.dst == m.src ^ (1 << i) for m in run.step(i + 1))
    assert run.results == [((0, me), (0, 7)) for me in range(8)]
    assert run.time == 3


def test_fig_13_7_exclusive_prefix():
    run = simulate(hypercube_prefix_sum, 8, [(i, i) for i in range(8)], op=joined, exclusive=True)
    assert run.results == [(None, (0, 7))] + [((0, me - 1), (0, 7)) for me in range(1, 8)]


FIG_13_9 = [4, 3, 1, 7, 8, 4, 5]


def test_fig_13_9_tree_prefix_sums_of_seven_pes():
    run = simulate(binary_tree_prefix_sum, 7, FIG_13_9, model=CostModel(ports="half-duplex"))
    assert run.results == [4, 7, 8, 15, 23, 27, 32]
    # The in-order tree rooted at 3: 1 and 5 below it, the leaves 0, 2, 4, 6.
    up = {(m.src, m.dst): m.payload for m in run.messages if m.dst in (1, 3, 5) and m.src != 3}
    assert up == {(0, 1): 4, (2, 1): 1, (1, 3): 8, (4, 5): 8, (6, 5): 5, (5, 3): 17}
    # Downward: l (the sum of 0..a-1) to the left child, l + x + m to the right one;
    # None is the book's neutral element 0, still sent as a 1-word message.
    down = {(m.src, m.dst): m.payload for m in run.messages
            if (m.src, m.dst) in {(3, 1), (3, 5), (1, 0), (1, 2), (5, 4), (5, 6)}}
    assert down == {(3, 1): None, (3, 5): 15, (1, 0): None, (1, 2): 7, (5, 4): 15, (5, 6): 27}
    assert all(m.words == 1 for m in run.messages)
    assert run.time == 8 == 4 * tree_height(7, 3)


def test_fig_13_9_exclusive_and_other_operators():
    run = simulate(binary_tree_prefix_sum, 7, FIG_13_9, exclusive=True)
    assert run.results == [None, 4, 7, 8, 15, 23, 27]
    run = simulate(binary_tree_prefix_sum, 7, FIG_13_9, op=max)
    assert run.results == [4, 4, 4, 7, 8, 8, 8]


# -- times against the closed forms -----------------------------------------------------

EXACT = [n for n in CHAPTER_2 if entry(n).exact]


def test_which_closed_forms_are_exact():
    assert set(EXACT) == {"binomial_reduce", "reduce_broadcast_allreduce", "hypercube_allreduce",
                          "rabenseifner_allreduce", "hypercube_prefix_sum", "barrier"}


costs = st.sampled_from([0.0, 0.25, 1.0, 3.0])


@settings(max_examples=120, deadline=None)
@given(name=st.sampled_from(CHAPTER_2), p=st.integers(1, 100), m=st.integers(1, 40),
       ts=costs, tw=costs, data=st.data())
def test_simulated_time_meets_the_closed_form(name, p, m, ts, tw, data):
    e = entry(name)
    if not e.valid(p):
        p = 1 << (p.bit_length() - 1)
    params = {}
    if "root" in e.params:
        params["root"] = data.draw(st.integers(0, p - 1))
    if "k" in e.params:
        params["k"] = data.draw(st.integers(1, m))
    if name == "rabenseifner_allreduce":
        m = data.draw(st.integers(p, 4 * p))
    model = CostModel(ts=ts, tw=tw, ports=e.ports)
    run = e.simulate(p, m, model=model, trace=False, **params)
    assert run.results == e.expected(e.make_inputs(p, m, **params), **params)
    predicted = e.predict(p, m, model, **params)
    if e.exact:
        assert run.time == pytest.approx(predicted, abs=1e-9)
    else:
        assert run.time <= predicted + 1e-9


@pytest.mark.parametrize("p", [1, 2, 3, 5, 8, 17, 64, 100])
def test_binomial_reduce_takes_ceil_log_p_steps_with_either_port_model(p):
    for ports in ("half-duplex", "full-duplex"):
        model = CostModel(ts=2.0, tw=0.5, ports=ports)
        for root in sorted({0, p // 3, p - 1}):
            run = entry("binomial_reduce").simulate(p, 6, model=model, root=root)
            assert run.time == ceil_log2(p) * (2.0 + 0.5 * 6)


def test_all_reduce_by_reduce_and_broadcast_pays_twice_the_latency_of_the_hypercube():
    model = CostModel(ts=1.0, tw=0.0)
    for p in (2, 8, 64):
        two_phase = entry("reduce_broadcast_allreduce").simulate(p, 1, model=model).time
        cube = entry("hypercube_allreduce").simulate(p, 1, model=model).time
        assert two_phase == 2 * cube == 2 * ceil_log2(p)


@pytest.mark.parametrize("h", [3, 4, 5])
def test_lemma_13_4_is_attained_on_complete_trees(h):
    p = 2 ** h - 1
    tree = entry("binary_tree_reduce")
    assert tree.simulate(p, 4, root=p // 2).time == 2 * h - 2 == tree.predict(p, 4, root=p // 2)
    piped = entry("pipelined_binary_tree_reduce")
    for k in (1, 2, 3, 5):
        run = piped.simulate(p, 2 * k, root=p // 2, k=k)
        assert run.time == 2 * (h - 1) + 3 * (k - 1) == piped.predict(p, 2 * k, root=p // 2, k=k)
    prefix = entry("binary_tree_prefix_sum")
    assert prefix.simulate(p, 2).time == 4 * (h - 1) == prefix.predict(p, 2)


def test_three_pes_pipeline_faster_than_lemma_13_4():
    # With leaves only below the root, a packet costs 2 steps, not 3: the bound is not tight.
    piped = entry("pipelined_binary_tree_reduce")
    assert piped.simulate(3, 6, root=1, k=3).time == 6 < piped.predict(3, 6, root=1, k=3) == 8


def test_pipelined_reduction_beats_the_binomial_tree_for_long_messages():
    # Corollary 13.5: about 3 beta m + 2 alpha log p instead of log p (alpha + beta m).
    model = CostModel(ts=1.0, tw=0.01, ports="half-duplex")
    p, m = 64, 10_000
    piped = entry("pipelined_binary_tree_reduce")
    k = piped.optimal_k(p, m, model)
    assert 1 < k < m
    t_piped = piped.simulate(p, m, model=model, k=k, trace=False).time
    t_binomial = entry("binomial_reduce").simulate(p, m, model=model, trace=False).time
    assert t_piped <= piped.predict(p, m, model, k=k)
    assert 3 * 0.01 * m < t_piped < 0.7 * t_binomial


@pytest.mark.parametrize("p", [1, 2, 4, 8, 32])
def test_rabenseifner_moves_2_m_p_minus_1_over_p_words(p):
    m = 3 * p
    model = CostModel(ts=1.0, tw=1.0)
    run = entry("rabenseifner_allreduce").simulate(p, m, model=model)
    d = ceil_log2(p)
    assert run.time == 2 * d * 1.0 + 2 * m * (p - 1) / p
    # Every PE sends log p messages of halving length, then log p of doubling length.
    sent = sorted(msg.words for msg in run.messages if msg.src == 0)
    assert sum(sent) == 2 * m * (p - 1) // p and len(sent) == 2 * d
    if p >= 8:            # long messages: fewer words than the hypercube's m log p
        cube = entry("hypercube_allreduce").simulate(p, m, model=model).time
        assert run.time < 0.7 * cube


def test_rabenseifner_charges_uneven_blocks_as_ceil_m_over_p_words():
    model = CostModel(ts=0.0, tw=1.0)
    run = entry("rabenseifner_allreduce").simulate(8, 12, model=model)
    assert run.time == 2 * 7 * 2 == entry("rabenseifner_allreduce").predict(8, 12, model)


def test_rabenseifner_keeps_the_message_type():
    inputs = [np.arange(8) * (i + 1) for i in range(4)]
    run = simulate(entry("rabenseifner_allreduce").program, 4, inputs, op=np.add)
    for got in run.results:
        assert isinstance(got, np.ndarray) and got.tolist() == (np.arange(8) * 10).tolist()
    run = simulate(entry("rabenseifner_allreduce").program, 2, ["ab", "cd"], op=concat)
    assert run.results == ["acbd", "acbd"]


# -- the pipelined prefix sum (Corollary 13.7) ------------------------------------------------

def test_one_packet_sends_what_the_unpipelined_prefix_sum_sends():
    for p in range(1, 40):
        inputs = string_inputs(p, 3)
        one = simulate(pipelined_binary_tree_prefix_sum, p, inputs, op=concat, k=1)
        plain = simulate(binary_tree_prefix_sum, p, inputs, op=concat)
        assert [(m.src, m.dst, m.start, m.words, m.payload) for m in one.messages] == \
            [(m.src, m.dst, m.start, m.words, m.payload) for m in plain.messages]
        assert one.results == plain.results


@settings(max_examples=60, deadline=None)
@given(p=st.integers(1, 70), m=st.integers(1, 12), data=st.data(), exclusive=st.booleans(),
       matrices=st.booleans())
def test_pipelined_prefix_sum_is_in_rank_order_for_non_commutative_operators(p, m, data,
                                                                             exclusive, matrices):
    k = data.draw(st.integers(1, m))
    seed = data.draw(st.integers(0, 10 ** 6))
    inputs = matrix_inputs(p, m, seed) if matrices else [
        [random.Random(seed + i).choice("abcdefgh") * (w % 3 + 1) for w in range(m)]
        for i in range(p)]
    op = matrix_product if matrices else concat
    e = entry("pipelined_binary_tree_prefix_sum")
    run = e.simulate(p, m, inputs=inputs, op=op, k=k, exclusive=exclusive, trace=False)
    assert run.results == e.expected(inputs, op=op, exclusive=exclusive)


@pytest.mark.parametrize("h", [3, 4, 5])
def test_corollary_13_7_schedule_is_attained_on_complete_trees(h):
    # The reduction's 2L + 3(k-1) steps, then the broadcast's 2L + 3(k-1).
    p = 2 ** h - 1
    e = entry("pipelined_binary_tree_prefix_sum")
    for k in (1, 2, 3, 5):
        run = e.simulate(p, 2 * k, k=k, trace=False)
        assert run.time == 4 * (h - 1) + 6 * (k - 1) == e.predict(p, 2 * k, k=k)


@pytest.mark.parametrize("p, per_packet", [(2, 2), (3, 4), (4, 4), (6, 6), (100, 6)])
def test_steps_per_packet_where_no_pe_has_a_parent_and_two_children(p, per_packet):
    # Each added packet costs 6 steps only where some PE receives twice and sends once in
    # each phase; on 2 to 5 PEs the bound 4L + 6(k-1) is loose.
    e = entry("pipelined_binary_tree_prefix_sum")
    times = [e.simulate(p, 12, k=k, trace=False).time for k in (4, 5)]
    assert times[1] - times[0] == per_packet


def corollary_13_7_ratio(p, n, model):
    e = entry("pipelined_binary_tree_prefix_sum")
    k = e.optimal_k(p, n, model)
    inputs = [np.full(n, i, dtype=np.int64) for i in range(p)]
    run = e.simulate(p, n, model=model, inputs=inputs, op=np.add, k=k, trace=False)
    assert all(np.array_equal(x, np.full(n, i * (i + 1) // 2)) for i, x in enumerate(run.results))
    assert run.time <= e.predict(p, n, model, k=k)
    return run.time / (6 * model.tw * n + 4 * model.ts * np.log2(p))


@pytest.mark.parametrize("p", [7, 16, 100])
def test_corollary_13_7_ratio_tends_to_one_as_the_message_grows(p):
    # At the best k the time is 6 beta n + 4 alpha log p + O(sqrt(alpha beta n log p)).
    model = CostModel(ts=10.0, tw=1.0, ports="half-duplex")
    ratios = [corollary_13_7_ratio(p, n, model) for n in (100, 1_000, 10_000, 100_000)]
    assert ratios == sorted(ratios, reverse=True)
    assert 1.0 <= ratios[-1] < 1.04


def test_corollary_13_7_optimal_k_is_near_the_calculus_optimum():
    model = CostModel(ts=100.0, tw=1.0, ports="half-duplex")
    for p, n in [(15, 6000), (255, 100_000), (1000, 10 ** 6)]:
        L = tree_height(p, p // 2)
        calculus = (n * (4 * L - 6) / (6 * 100.0)) ** 0.5
        k = entry("pipelined_binary_tree_prefix_sum").optimal_k(p, n, model)
        assert abs(k - calculus) <= 1 + 0.03 * calculus       # k is an integer, ceil(n/k) too


def test_a_bad_number_of_packets_is_named_for_the_prefix_sum():
    e = entry("pipelined_binary_tree_prefix_sum")
    with pytest.raises(ValueError, match="k must be an integer >= 1, got 0"):
        e.simulate(4, 4, k=0)
    with pytest.raises(ValueError, match="k must be an integer >= 1, got 0"):
        e.predict(4, 4, k=0)
    with pytest.raises(ValueError, match="cannot cut a message of 3 words into k=5 packets"):
        e.simulate(4, 3, k=5)


# -- barrier -------------------------------------------------------------------------

def late_arrivals(me, p, data, delays):
    yield compute(delays[me])
    yield from barrier(me, p)
    return None


@settings(max_examples=60, deadline=None)
@given(p=st.integers(1, 80), seed=st.integers(0, 10 ** 6))
def test_nobody_leaves_the_barrier_before_the_last_arrives(p, seed):
    rng = random.Random(seed)
    delays = [rng.choice([0.0, 0.5, 3.0, 10.0 * rng.random()]) for _ in range(p)]
    run = simulate(late_arrivals, p, delays=delays)
    assert min(run.finish_times) >= max(delays)


@pytest.mark.parametrize("p", [1, 2, 3, 7, 8, 100])
def test_barrier_is_log_p_empty_messages(p):
    run = entry("barrier").simulate(p, model=CostModel(ts=2.0, tw=5.0))
    assert run.time == 2.0 * ceil_log2(p)
    assert all(m.words == 0 for m in run.messages)
    assert run.results == [None] * p


# -- operators --------------------------------------------------------------------------

def test_elementwise_lifts_word_functions():
    assert add([1, 2], [3, 4]) == [4, 6] and add(1, 2) == 3
    assert add((1, 2), (3, 4)) == (4, 6)
    assert elementwise(max)(np.array([1, 5]), np.array([4, 2])).tolist() == [4, 5]
    assert matrix_product([(1, 1, 0, 1)], [(1, 0, 1, 1)]) == [(2, 1, 1, 1)]
    assert matrix_product([(1, 0, 1, 1)], [(1, 1, 0, 1)]) == [(1, 1, 1, 2)]   # not commutative
    assert combine(concat, None, ["a"], None, ["b"]) == ["ab"]
    with pytest.raises(ValueError, match="cannot combine messages of 2 and 3 words"):
        add([1, 2], [1, 2, 3])
    with pytest.raises(ValueError, match="elementwise needs a callable binary function, got 3"):
        elementwise(3)


def test_reference_results_fold_in_rank_order():
    inputs = string_inputs(4, 1)
    assert entry("binary_tree_reduce").expected(inputs, root=2, op=concat)[2] == \
        [fold(operator.add, (x[0] for x in inputs))]
    assert entry("hypercube_prefix_sum").expected([[1], [2]], exclusive=True) == \
        [(None, [3]), ([1], [3])]


# -- bad input ---------------------------------------------------------------------------

@pytest.mark.parametrize("name", COMBINING)
def test_a_non_callable_operator_is_named(name):
    p = 4
    with pytest.raises(ValueError, match="op must be a callable binary operator .* got op='sum'"):
        entry(name).simulate(p, message_size(name, p, 4), op="sum")


@pytest.mark.parametrize("name", ["hypercube_allreduce", "rabenseifner_allreduce",
                                  "hypercube_prefix_sum"])
def test_hypercube_algorithms_need_a_power_of_two(name):
    with pytest.raises(ValueError, match=f"{name} needs p to be a power of two, got p=6"):
        entry(name).simulate(6, 12)
    with pytest.raises(ValueError, match=f"{name} needs p to be a power of two, got p=12"):
        simulate(entry(name).program, 12, [[1]] * 12)
    assert not entry(name).valid(6)


@pytest.mark.parametrize("name", ["binomial_reduce", "binary_tree_reduce",
                                  "pipelined_binary_tree_reduce"])
@pytest.mark.parametrize("root", [-1, 4, 2.5])
def test_a_root_out_of_range_is_named(name, root):
    with pytest.raises(ValueError, match=f"root must be a rank in 0..3, got root={root}"):
        entry(name).program(0, 4, [1], root=root).send(None)


@pytest.mark.parametrize("k", [0, -2])
def test_a_bad_number_of_packets_is_named(k):
    e = entry("pipelined_binary_tree_reduce")
    with pytest.raises(ValueError, match=f"k must be an integer >= 1, got {k}"):
        e.simulate(4, 4, k=k)
    with pytest.raises(ValueError, match=f"k must be an integer >= 1, got {k}"):
        e.predict(4, 4, k=k)
    with pytest.raises(ValueError, match="cannot cut a message of 3 words into k=5 packets"):
        e.simulate(4, 3, k=5)


def test_rabenseifner_needs_at_least_p_words():
    e = entry("rabenseifner_allreduce")
    with pytest.raises(ValueError, match="needs m >= p words, got m=7 for p=8"):
        e.simulate(8, 7)
    with pytest.raises(ValueError, match="needs m >= p words, got m=3 for p=4"):
        e.predict(4, 3)


@pytest.mark.parametrize("name", ["hypercube_prefix_sum", "binary_tree_prefix_sum",
                                  "pipelined_binary_tree_prefix_sum"])
def test_exclusive_must_be_a_bool(name):
    with pytest.raises(ValueError, match="exclusive must be True or False, got exclusive='yes'"):
        entry(name).simulate(4, 2, exclusive="yes")
