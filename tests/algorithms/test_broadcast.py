"""Chapter 1's claims, each against the simulator."""
import pytest

from collective_lib import CostModel, Hypercube, catalog
from collective_lib.algorithms.broadcast import sanders_optimal_k
from collective_lib.packets import join_packets, packet_words, split_packets
from collective_lib.trees import (binomial_children, binomial_parent, ceil_log2, in_order_node,
                                  in_order_tree, tree_height)


def bcast(name):
    return catalog()[name]


@pytest.mark.parametrize("p", list(range(1, 65)) + [100, 1000, 1024])
def test_binomial_broadcast_takes_ceil_log_p_steps_for_every_p(p):
    model = CostModel(ts=2.0, tw=0.5)
    for root in sorted({0, 1 % p, p // 2, p - 1}):
        run = bcast("binomial_broadcast").simulate(p, 6, model=model, root=root, trace=False)
        assert run.time == ceil_log2(p) * (2.0 + 0.5 * 6)


def test_nobody_can_beat_the_doubling_bound():
    # One transfer informs one more PE, so after s steps at most 2**s PEs know m.
    for p in (5, 8, 33):
        run = bcast("binomial_broadcast").simulate(p, 1)
        for s in range(1, ceil_log2(p) + 1):
            assert len(run.informed(by=float(s))) <= 2 ** s
        assert len(run.informed(by=float(ceil_log2(p)))) == p


def test_naive_broadcast_serializes_at_the_root():
    run = bcast("naive_broadcast").simulate(10, 4, model=CostModel(ts=1, tw=1))
    assert run.time == 9 * 5
    assert {m.src for m in run.messages} == {0}


def test_hypercube_broadcast_needs_a_power_of_two_and_uses_only_neighbours():
    with pytest.raises(ValueError, match="hypercube_broadcast needs p to be a power of two, got p=6"):
        bcast("hypercube_broadcast").simulate(6, 1)
    run = bcast("hypercube_broadcast").simulate(16, 3, root=5, network=Hypercube(4))
    assert all(len(m.path) == 1 for m in run.messages)
    assert run.time == 4 and run.max_link_load() == 1


def test_sanders_fig_13_4_ten_steps_on_the_complete_tree():
    # p = 7, k = 3, half-duplex, complete binary tree rooted at 3: 10 steps.
    entry = bcast("pipelined_binary_tree_broadcast")
    assert tree_height(7, 3) == 2
    assert entry.simulate(7, 3, root=3, k=3).time == 10 == entry.predict(7, 3, root=3, k=3)


def test_linear_pipeline_takes_p_plus_k_minus_2_steps():
    entry = bcast("linear_pipeline_broadcast")
    for p in (2, 3, 8, 17):
        for k in (1, 2, 5):
            assert entry.simulate(p, 10 * k, k=k).time == p + k - 2


def test_pipelining_beats_the_binomial_tree_for_long_messages():
    model = CostModel(ts=1.0, tw=0.01, ports="half-duplex")
    p, m = 64, 10_000
    tree = bcast("pipelined_binary_tree_broadcast")
    k = tree.optimal_k(p, m, model)
    piped = tree.simulate(p, m, model=model, k=k, trace=False).time
    binomial = bcast("binomial_broadcast").simulate(p, m, model=model, trace=False).time
    assert piped < 0.7 * binomial
    # Minimizing Lemma 13.2's bound over k gives
    # 3 beta n + (2L - 3) alpha + 2 sqrt(3 (2L - 3) alpha beta n), up to rounding k.
    L, alpha, beta = tree_height(p, 0), 1.0, 0.01
    calculus = 3 * beta * m + (2 * L - 3) * alpha + 2 * (3 * (2 * L - 3) * alpha * beta * m) ** 0.5
    assert 3 * beta * m + 2 * alpha * 6 < piped <= calculus + alpha + beta


def test_sanders_continuous_optimum_is_near_the_integer_one():
    model = CostModel(ts=1.0, tw=0.01, ports="half-duplex")
    entry = bcast("pipelined_binary_tree_broadcast")
    k_int = entry.optimal_k(64, 10_000, model)
    k_real = sanders_optimal_k(64, 10_000, model)
    assert abs(k_int - k_real) <= 0.1 * k_real + 1


@pytest.mark.parametrize("name, k", [("pipelined_binary_tree_broadcast", 0),
                                     ("linear_pipeline_broadcast", -1)])
def test_a_bad_number_of_packets_is_named(name, k):
    with pytest.raises(ValueError, match=f"k must be an integer >= 1, got {k}"):
        bcast(name).simulate(4, 4, k=k)


def test_more_packets_than_words_is_refused():
    with pytest.raises(ValueError, match="cannot cut a message of 3 words into k=5 packets"):
        bcast("linear_pipeline_broadcast").simulate(4, 3, k=5)


@pytest.mark.parametrize("name", ["naive_broadcast", "binomial_broadcast", "hypercube_broadcast",
                                  "pipelined_binary_tree_broadcast", "linear_pipeline_broadcast"])
def test_a_root_out_of_range_is_named(name):
    with pytest.raises(ValueError, match="root must be a rank in 0..3, got root=4"):
        bcast(name).program(0, 4, None, root=4).send(None)


# -- trees and packets -----------------------------------------------------------

@pytest.mark.parametrize("p", range(1, 65))
def test_in_order_tree_is_in_order_balanced_and_spanning(p):
    for root in range(p):
        tree = in_order_tree(p, root)
        assert tree_height(p, root) <= ceil_log2(p)             # Sanders Exercise 13.3
        for v, node in enumerate(tree):
            assert node.first <= v <= node.last
            if node.left is not None:
                assert tree[node.left].parent == v
                assert node.first <= tree[node.left].first and tree[node.left].last == v - 1
            if node.right is not None:
                assert tree[node.right].parent == v
                assert tree[node.right].first == v + 1 and tree[node.right].last <= node.last
        assert sum(node.parent is None for node in tree) == 1 and tree[root].parent is None


def test_in_order_node_matches_the_paper_example():
    assert in_order_node(3, 7, root=3)[:3] == (None, 1, 5)
    assert in_order_node(0, 7, root=3)[:3] == (1, None, None)


@pytest.mark.parametrize("p", [1, 2, 5, 8, 13, 64])
def test_binomial_tree_parent_and_children_agree(p):
    for i in range(p):
        for c in binomial_children(i, p):
            assert binomial_parent(c) == i
        assert binomial_children(i, p) == sorted(binomial_children(i, p), reverse=True)
    assert sum(len(binomial_children(i, p)) for i in range(p)) == p - 1


@pytest.mark.parametrize("n, k", [(10, 1), (10, 3), (10, 10), (7, 4)])
def test_packets_round_trip(n, k):
    message = list(range(n))
    packets = split_packets(message, k)
    assert len(packets) == k and all(packets)
    assert max(map(len, packets)) == packet_words(n, k)
    assert join_packets(packets) == message
    assert join_packets(split_packets("abcdefg", 3)) == "abcdefg"


@pytest.mark.parametrize("name", ["linear_pipeline_broadcast", "pipelined_binary_tree_broadcast"])
def test_a_pipelined_closed_form_refuses_more_packets_than_words_as_the_program_does(name):
    entry = catalog()[name]
    with pytest.raises(ValueError, match="k=3"):
        entry.predict(4, 1, k=3)
    with pytest.raises(ValueError, match="k=3"):
        entry.simulate(4, 1, k=3)
    time, formula = entry.simulate(4, 3, k=3).time, entry.predict(4, 3, k=3)
    assert time == formula if entry.exact else time <= formula
