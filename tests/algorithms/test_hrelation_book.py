"""Chapter 5's claims about non-uniform all-to-all (book/ch5_all_to_all, §5.6)."""
from collections import Counter

import pytest

from collective_lib import CostModel, catalog
from collective_lib.algorithms.hrelation import (bottleneck_volume, color_bipartite_multigraph,
                                                 coloring_schedule, eq_13_5_bound,
                                                 h_relation_multigraph, message_sizes,
                                                 two_phase_bundle_words)

MODEL = CostModel(ts=100, tw=1)


def entry(name):
    return catalog()[name]


# §5.6
def padded_cyclic_time(inputs, model):
    longest = max(len(x) for row in inputs for x in row)
    padded = [[list(x) + [0] * (longest - len(x)) for x in row] for row in inputs]
    return entry("alltoall_cyclic").simulate(len(inputs), longest, inputs=padded, model=model,
                                             trace=False).time


def chapter_sizes():
    return message_sizes(entry("alltoallv_two_phase").make_inputs(4, 5, seed=3))


def test_skewed_example_of_the_chapter():
    sizes = chapter_sizes()
    assert bottleneck_volume(sizes) == 5
    assert 0 in [sizes[i][j] for i in range(4) for j in range(4) if i != j]


@pytest.mark.parametrize("p", [2, 3, 4, 5, 8, 13, 16])
@pytest.mark.parametrize("h", [1, 7, 50, 300])
def test_two_phase_is_correct_and_within_its_bound(p, h):
    two_phase = entry("alltoallv_two_phase")
    inputs = two_phase.make_inputs(p, h, seed=p + h)
    run = two_phase.simulate(p, h, inputs=inputs, model=MODEL, trace=False)
    assert run.results == two_phase.expected(inputs)
    assert run.time <= two_phase.predict(p, h, MODEL) + 1e-9
    assert max(two_phase_bundle_words(message_sizes(inputs))) <= h / p + 2 * p
    assert run.time > eq_13_5_bound(p, h, MODEL)


@pytest.mark.parametrize("seed", range(4))
def test_edge_colouring_uses_h_colours_and_no_clash(seed):
    sizes = (chapter_sizes() if seed == 0
             else message_sizes(entry("alltoallv_two_phase").make_inputs(5, 9, seed=seed)))
    graph = h_relation_multigraph(sizes)
    colours = color_bipartite_multigraph(graph)
    h = max(d for _, d in graph.degree())
    assert len(set(colours.values())) == h
    for v in graph.nodes:
        at = [colours.get((u, w, k), colours.get((w, u, k))) for u, w, k in graph.edges(v, keys=True)]
        assert len(at) == len(set(at))
    n = len(sizes)
    assert graph.number_of_edges() == sum(sizes[i][j] for i in range(n) for j in range(n) if i != j)
    if seed == 0:
        assert h == 5


@pytest.mark.parametrize("seed", range(4))
def test_colouring_schedule_sends_every_word_once_one_per_port(seed):
    sizes = (chapter_sizes() if seed == 0
             else message_sizes(entry("alltoallv_two_phase").make_inputs(5, 9, seed=seed)))
    steps = coloring_schedule(sizes)
    assert len(steps) == bottleneck_volume(sizes)
    for step in steps:
        assert len({t.src for t in step}) == len(step) == len({t.dst for t in step})
    n = len(sizes)
    assert Counter((t.src, t.dst) for s in steps for t in s) == Counter(
        {(i, j): sizes[i][j] for i in range(n) for j in range(n) if i != j and sizes[i][j]})


@pytest.mark.parametrize("p", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("h", [1, 6, 30])
def test_edge_colouring_entry_is_correct_and_exact(p, h):
    colouring = entry("alltoallv_edge_coloring")
    inputs = colouring.make_inputs(p, h, seed=h)
    run = colouring.simulate(p, h, inputs=inputs, model=MODEL, trace=False)
    assert run.results == colouring.expected(inputs) and run.time == colouring.predict(p, h, MODEL)


def test_who_wins_where_of_the_chapter():
    two_phase, colouring = entry("alltoallv_two_phase"), entry("alltoallv_edge_coloring")
    unit = CostModel(ts=1, tw=1)
    inputs16 = two_phase.make_inputs(16, 2000, seed=1)
    assert (two_phase.simulate(16, 2000, inputs=inputs16, model=MODEL, trace=False).time
            < padded_cyclic_time(inputs16, MODEL))
    inputs8 = two_phase.make_inputs(8, 2000, seed=1)
    assert (two_phase.simulate(8, 2000, inputs=inputs8, model=unit, trace=False).time
            < colouring.simulate(8, 2000, inputs=inputs8, model=unit, trace=False).time)
    small = two_phase.make_inputs(8, 64, seed=1)
    assert padded_cyclic_time(small, MODEL) < min(
        e.simulate(8, 64, inputs=small, model=MODEL, trace=False).time for e in (two_phase, colouring))
    assert (colouring.simulate(16, 2000, inputs=inputs16, model=unit, trace=False).time
            < two_phase.simulate(16, 2000, inputs=inputs16, model=unit, trace=False).time)
