"""Exercise 13.12 (Sanders §13.6.3): direct-delivery schedules of h-relations are edge colourings.

collective_lib/coloring.py (the multigraph, König's colouring, the two conversions) and the
program that delivers a schedule, collective_lib.algorithms.hrelation.deliver_schedule.
"""
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collective_lib import CostModel, simulate
from collective_lib.algorithms.hrelation import deliver_schedule, message_sizes
from collective_lib.coloring import (Transfer, check_edge_coloring, color_bipartite_multigraph,
                                     coloring_schedule, coloring_to_schedule,
                                     h_relation_multigraph, idle_steps_last, pad_to_regular,
                                     schedule_to_coloring, step_partners)
from collective_lib.collectives import random_h_relation

sizes_matrices = st.integers(1, 8).flatmap(
    lambda p: st.lists(st.lists(st.integers(0, 5), min_size=p, max_size=p), min_size=p, max_size=p))


def max_degree(graph):
    return max((d for _, d in graph.degree()), default=0)


def multigraph(sizes, pad):
    """H of the sizes, or its h-regular completion with dummy edges."""
    graph = h_relation_multigraph(sizes)
    return pad_to_regular(graph) if pad else graph


def messages_for(sizes):
    """Inputs with the given message lengths; word w of m_ij is the string 'i>j:w'."""
    return [[[f"{i}>{j}:{w}" for w in range(s)] for j, s in enumerate(row)]
            for i, row in enumerate(sizes)]


def expected(inputs):
    return [[list(row[j]) for row in inputs] for j in range(len(inputs))]


def colours_per_message(colouring):
    """The multiset of colours of each (sender, receiver) pair (parallel edges are alike)."""
    per = {}
    for (u, v, _), c in colouring.items():
        per.setdefault((u, v), Counter())[c] += 1
    return per


# -- the equivalence, both ways, on random multigraphs -----------------------------------------

@settings(max_examples=150, deadline=None)
@given(sizes=sizes_matrices, pad=st.booleans())
def test_a_konig_colouring_is_a_schedule_of_h_steps_and_back(sizes, pad):
    graph = multigraph(sizes, pad)
    h = max_degree(graph)
    colouring = color_bipartite_multigraph(graph)
    assert check_edge_coloring(graph, colouring) == h            # proper, exactly h colours
    assert len(set(colouring.values())) == h
    steps = coloring_to_schedule(graph, colouring)
    assert len(steps) == h
    for c, step in enumerate(steps):
        sending, receiving = step_partners(step, c)              # one send, one receive per PE
        assert len(sending) == len(receiving) == len(step)
    back = schedule_to_coloring(graph, steps)
    assert colours_per_message(back) == colours_per_message(colouring)
    assert coloring_to_schedule(graph, back) == steps            # schedule -> colouring -> schedule


@settings(max_examples=100, deadline=None)
@given(sizes=sizes_matrices, pad=st.booleans())
def test_every_schedule_of_coloring_schedule_is_a_colouring_and_back(sizes, pad):
    graph = multigraph(sizes, pad)
    steps = coloring_schedule(sizes, pad=pad)
    colouring = schedule_to_coloring(graph, steps)
    assert check_edge_coloring(graph, colouring) == len(steps) == max_degree(graph)
    assert coloring_to_schedule(graph, colouring) == steps


def test_a_schedule_with_more_steps_than_h_is_a_colouring_with_more_colours():
    # One packet per step: as many colours as packets, still proper.
    sizes = [[0, 2, 1], [1, 0, 0], [0, 1, 0]]
    graph = h_relation_multigraph(sizes)
    steps = [[t] for step in coloring_schedule(sizes) for t in step]
    colouring = schedule_to_coloring(graph, steps)
    assert sorted(colouring.values()) == list(range(5))
    assert check_edge_coloring(graph, colouring, colours=5) == 5
    assert coloring_to_schedule(graph, colouring) == steps


def test_colouring_larger_random_h_relations():
    rng = np.random.default_rng(12)
    for p, h in [(30, 50), (64, 20), (12, 200)]:
        sizes = random_h_relation(p, h, rng)
        graph = h_relation_multigraph(sizes)
        colouring = color_bipartite_multigraph(graph)
        assert check_edge_coloring(graph, colouring) == h
        steps = coloring_to_schedule(graph, colouring)
        assert len(steps) == h
        assert coloring_to_schedule(graph, schedule_to_coloring(graph, steps)) == steps


# -- delivering a schedule in the simulator ---------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(sizes=sizes_matrices, ts=st.sampled_from([0.0, 1.0, 3.0]), tw=st.sampled_from([0.5, 1.0]))
def test_a_complete_colouring_delivers_in_exactly_h_steps(sizes, ts, tw):
    # Pad H to h-regular, colour it, turn the colouring into steps (a PE that idles in a
    # step idles last) and run them.
    graph = multigraph(sizes, pad=True)
    h = max_degree(graph)
    steps = idle_steps_last(coloring_to_schedule(graph, color_bipartite_multigraph(graph)))
    inputs = messages_for(sizes)
    run = simulate(deliver_schedule, len(sizes), inputs, steps=steps,
                   model=CostModel(ts=ts, tw=tw), trace=False)
    assert run.results == expected(inputs)
    assert run.time == pytest.approx(h * (ts + tw))


def test_without_the_dummies_a_pe_can_run_ahead_and_cost_a_step():
    # Sends are eager: a PE with nothing to do in a step sends its next packet early and
    # can take a receiver's port in a step where another PE needs it.
    model = CostModel(ts=1.0, tw=1.0)
    late = 0
    for seed in range(40):
        p = 3 + seed % 6
        sizes = random_h_relation(p, 6, np.random.default_rng(seed))
        inputs = messages_for(sizes)
        steps = coloring_schedule(sizes)
        run = simulate(deliver_schedule, p, inputs, steps=steps, model=model, trace=False)
        assert run.results == expected(inputs)
        assert run.time >= 2 * len(steps)
        late += run.time > 2 * len(steps)
    assert late > 0


def test_an_idle_pe_in_an_early_step_runs_ahead():
    # PE 1 has nothing to send or receive: it pairs with itself in one step and sends a
    # dummy in the other.  If it idles first, its dummy takes PE 0's port out of turn.
    sizes = [[0, 0, 2], [0, 0, 0], [1, 0, 0]]
    steps = coloring_schedule(sizes, pad=True)
    assert [any(t.src == t.dst for t in step) for step in steps] == [False, True]
    inputs = messages_for(sizes)
    model = CostModel(ts=0.0, tw=0.5)
    in_order = simulate(deliver_schedule, 3, inputs, steps=steps, model=model)
    idle_first = simulate(deliver_schedule, 3, inputs, steps=steps[::-1], model=model)
    assert in_order.results == idle_first.results == expected(inputs)
    assert in_order.time == 2 * 0.5 < idle_first.time == 3 * 0.5
    assert idle_steps_last(steps[::-1]) == steps


def test_delivery_follows_the_steps_one_word_per_pe_and_direction():
    sizes = [[0, 2, 0], [0, 0, 1], [1, 0, 0]]
    steps = coloring_schedule(sizes, pad=True)
    run = simulate(deliver_schedule, 3, messages_for(sizes), steps=steps,
                   model=CostModel(ts=1.0, tw=0.0))
    for c, step in enumerate(steps):
        sent = sorted((m.src, m.dst) for m in run.messages if m.start == c)
        assert sent == sorted((t.src, t.dst) for t in step if t.src != t.dst)
        assert all(m.words == 1 for m in run.messages)


# -- errors name the step, the PE or the edge -----------------------------------------------------

def test_schedule_to_coloring_names_what_breaks_the_rules():
    graph = h_relation_multigraph([[0, 2, 0], [0, 0, 1], [1, 0, 0]])
    with pytest.raises(ValueError, match="step 2 \\(colour 1\\): PE 0 sends two packets, "
                                         "to PE 1 and to PE 2"):
        schedule_to_coloring(graph, [[Transfer(0, 1)], [Transfer(0, 1), Transfer(0, 2)]])
    with pytest.raises(ValueError, match="step 1 \\(colour 0\\): PE 0 receives two packets, "
                                         "from PE 2 and from PE 1"):
        schedule_to_coloring(graph, [[Transfer(2, 0), Transfer(1, 0)]])
    with pytest.raises(ValueError, match="step 3 \\(colour 2\\): the packet from PE 0 to "
                                         "PE 1 is not an undelivered edge"):
        schedule_to_coloring(graph, [[Transfer(0, 1)], [Transfer(0, 1)], [Transfer(0, 1)]])
    with pytest.raises(ValueError, match="step 1 \\(colour 0\\): the dummy packet "
                                         "from PE 1 to PE 2"):
        schedule_to_coloring(graph, [[Transfer(1, 2, True)]])
    with pytest.raises(ValueError, match=r"never delivers the packet of edge \(\('s', 1\), "
                                         r"\('r', 2\), 0\)"):
        schedule_to_coloring(graph, [[Transfer(0, 1), Transfer(2, 0)], [Transfer(0, 1)]])


def test_coloring_to_schedule_names_a_bad_edge():
    graph = h_relation_multigraph([[0, 2], [1, 0]])
    good = color_bipartite_multigraph(graph)
    clash = {**good, (("s", 0), ("r", 1), 1): good[("s", 0), ("r", 1), 0]}
    with pytest.raises(ValueError, match=r"colour \d is used twice at node \('s', 0\)"):
        coloring_to_schedule(graph, clash)
    with pytest.raises(ValueError, match=r"edge \(\('s', 1\), \('r', 0\), 0\) has colour -1"):
        coloring_to_schedule(graph, {**good, (("s", 1), ("r", 0), 0): -1})
    wrong = h_relation_multigraph([[0, 1], [0, 0]])
    wrong.add_node("x", bipartite=0)
    wrong.add_edge("x", ("r", 0))
    with pytest.raises(ValueError, match="node 'x' is not a node \\('s', PE\\)"):
        coloring_to_schedule(wrong, color_bipartite_multigraph(wrong))


def test_deliver_schedule_names_what_does_not_fit():
    sizes = [[0, 2], [1, 0]]
    inputs = messages_for(sizes)
    with pytest.raises(ValueError, match="step 1 \\(colour 0\\): PE 1 receives two packets"):
        simulate(deliver_schedule, 2, inputs, steps=[[Transfer(0, 1), Transfer(1, 1, True)]])
    with pytest.raises(ValueError, match="step 2 \\(colour 1\\): PE 0 sends a packet "
                                         "to itself"):
        simulate(deliver_schedule, 2, inputs, steps=[[Transfer(0, 1)], [Transfer(0, 0)]])
    with pytest.raises(ValueError, match=r"step 1 \(colour 0\): the transfer \(0, 5, False\) "
                                         r"names a PE outside 0..1"):
        simulate(deliver_schedule, 2, inputs, steps=[[Transfer(0, 5)]])
    with pytest.raises(ValueError, match="sends 1 packets from PE 0 to PE 1, but its message "
                                         "has 2 words"):
        simulate(deliver_schedule, 2, inputs, steps=[[Transfer(0, 1), Transfer(1, 0)]])
    with pytest.raises(ValueError, match="more packets to PE 0 than its message of 1 words"):
        simulate(deliver_schedule, 2, inputs,
                 steps=[[Transfer(0, 1), Transfer(1, 0)], [Transfer(0, 1), Transfer(1, 0)]])
    with pytest.raises(ValueError, match="deliver_schedule needs steps="):
        simulate(deliver_schedule, 2, inputs, steps=None)


def test_check_edge_coloring_takes_a_number_of_colours():
    graph = h_relation_multigraph([[0, 1], [1, 0]])
    colouring = {(("s", 0), ("r", 1), 0): 3, (("s", 1), ("r", 0), 0): 0}
    with pytest.raises(ValueError, match="has colour 3, not one of 0..0"):
        check_edge_coloring(graph, colouring)
    assert check_edge_coloring(graph, colouring, colours=4) == 4
    with pytest.raises(ValueError, match="colours must be an integer >= 0, got 'x'"):
        check_edge_coloring(graph, colouring, colours="x")


def test_message_sizes_of_the_inputs_give_the_graph():
    inputs = messages_for([[0, 3], [1, 0]])
    assert sorted(h_relation_multigraph(message_sizes(inputs)).edges(keys=True)) == [
        (("s", 0), ("r", 1), 0), (("s", 0), ("r", 1), 1), (("s", 0), ("r", 1), 2),
        (("s", 1), ("r", 0), 0)]
