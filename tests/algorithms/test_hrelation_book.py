"""Chapter 5's claims about non-uniform all-to-all (book/ch5_all_to_all, §5.6)."""
import itertools
from collections import Counter

import numpy as np
import pytest

from collective_lib import CostModel, catalog, simulate
from collective_lib.algorithms.hrelation import deliver_schedule
from collective_lib.coloring import (Transfer, coloring_to_schedule, idle_steps_last,
                                     pad_to_regular, schedule_to_coloring)
from collective_lib.collectives import operations
from collective_lib.recording import record_run
from collective_lib.algorithms.hrelation import (bottleneck_volume, color_bipartite_multigraph,
                                                 coloring_schedule, eq_13_5_bound,
                                                 h_relation_multigraph, message_sizes,
                                                 two_phase_bundle_words)

#: Each claim of the chapter's prose and the test that checks it (tests/notebooks/test_prose_claims.py).
PROSE_CLAIMS = {
    "makes random inputs with exactly that bottleneck":
        "test_alltoallv_inputs_have_exactly_the_bottleneck_h",
    "Each message of either phase has at most $h/p + 2p$ words, whatever the lengths were":
        "test_two_phase_messages_stay_below_h_over_p_plus_2p_for_any_lengths",
    "the padded phase sizes stay below $h/p + 2p$":
        "test_two_phase_messages_stay_below_h_over_p_plus_2p_for_any_lengths",
    "The phases stay within $h/p + 2p$ words and the simulated time within the library's bound":
        "test_two_phase_is_correct_and_within_its_bound",
    "the pieces it kept, which never travel": "test_fig_13_15_two_phases_for_three_pes",
    "stay within $h/p + 2p = 9$": "test_fig_13_15_example_of_the_chapter",
    "one packet per step is exactly an **edge colouring**":
        "core/test_coloring.py::test_a_konig_colouring_is_a_schedule_of_h_steps_and_back",
    "node has at most $h$ edges":
        "algorithms/test_hrelation.py::test_colouring_is_proper_with_exactly_h_colours",
    "a PE sends at most one word and receives at most one":
        "test_colouring_schedule_sends_every_word_once_one_per_port",
    "in one transfer, never forwarded":
        "core/test_coloring.py::test_delivery_follows_the_steps_one_word_per_pe_and_direction",
    "every PE sends at most one packet and receives at most one":
        "core/test_coloring.py::test_schedule_to_coloring_names_what_breaks_the_rules",
    "PE $i$ sends at most one packet per step, so":
        "core/test_coloring.py::test_every_schedule_of_coloring_schedule_is_a_colouring_and_back",
    "Every packet gets exactly one step, since every edge has exactly one colour":
        "core/test_coloring.py::test_a_konig_colouring_is_a_schedule_of_h_steps_and_back",
    "at most one, because the colouring is proper. Likewise PE $j$ receives at most one":
        "core/test_coloring.py::test_a_konig_colouring_is_a_schedule_of_h_steps_and_back",
    "so at least the maximum degree $h$":
        "test_no_colouring_has_fewer_colours_than_the_maximum_degree",
    "is proper and has exactly $h$ colours":
        "core/test_coloring.py::test_a_konig_colouring_is_a_schedule_of_h_steps_and_back",
    "every receiver has exactly $h$ edges":
        "algorithms/test_hrelation.py::test_padding_is_regular_and_only_one_pe_talks_to_itself",
    "every node has exactly 5 edges, one of each colour":
        "test_the_simulated_steps_colour_the_completion_of_the_chapter_example",
    "With dummies the simulated time is exactly $h(\\alpha + \\beta)$ in every row":
        "test_delivery_with_dummies_takes_h_steps_in_every_row_of_the_chapter",
}

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


# §5.10: Sanders et al. 2019, Fig. 13.15, the two-phase non-uniform all-to-all for p = 3.  The
# seed text holds only the caption, "Two-phase nonuniform all-to-all for p = 3"; what is checked
# is what the caption and §13.6.3 state: piece m_ijk (ceil(|m_ij|/p) words) goes from PE i to
# PE k in phase 1 and from PE k to PE j in phase 2, every message carries p header fields, and
# |m_i*k|, |m_*jk| <= h/p + 2p.
CHAPTER_LENGTHS = [[0, 5, 1], [2, 0, 0], [3, 4, 0]]


def labelled_words(lengths):
    """Word w of m_ij is 'ijw' with w a letter, as in the chapter."""
    return [[[f"{i}{j}{chr(97 + w)}" for w in range(n)] for j, n in enumerate(row)]
            for i, row in enumerate(lengths)]


def pieces_of(word_label, lengths, p):
    """Which piece k a word belongs to: the message cut into p pieces of ceil(|m|/p) words."""
    i, j, w = int(word_label[0]), int(word_label[1]), ord(word_label[2]) - 97
    return w // -(-lengths[i][j] // p)


def phase_states(run):
    """The states of each PE at the end of phase 1 and of phase 2 (after its bundles arrived)."""
    ends = [max(msg.end for msg in run.messages if hasattr(msg.payload, "pieces")
                and msg.start < cut) for cut in (run.step_starts()[4], run.time + 1)]
    return [[run.state(pe, t) for pe in range(run.p)] for t in ends]


@pytest.mark.parametrize("lengths", [CHAPTER_LENGTHS, [[1, 7, 0], [0, 0, 3], [6, 2, 5]],
                                     [[0, 0, 0], [9, 0, 1], [0, 0, 0]]])
def test_fig_13_15_two_phases_for_three_pes(lengths):
    p = 3
    inputs = labelled_words(lengths)
    h = bottleneck_volume(message_sizes(inputs))
    run = record_run("alltoallv_two_phase", p, inputs=inputs)
    assert run.results == entry("alltoallv_two_phase").expected(inputs)
    bundles = [msg for msg in run.messages if hasattr(msg.payload, "pieces")]
    assert len(bundles) == 2 * p * (p - 1)                    # two uniform exchanges
    phase1, phase2 = bundles[:p * (p - 1)], bundles[p * (p - 1):]
    assert max(m.end for m in phase1) <= min(m.start for m in phase2)
    n1, n2 = two_phase_bundle_words(message_sizes(inputs))
    for phase, n in ((phase1, n1), (phase2, n2)):
        assert {m.words for m in phase} == {n} and n <= h / p + 2 * p
    for msg in phase1:          # PE i -> PE k: the pieces m_ijk, filed under j
        for j, piece in msg.payload.pieces.items():
            assert all(w[0] == str(msg.src) and w[1] == str(j)
                       and pieces_of(w, lengths, p) == msg.dst for w in piece)
    for msg in phase2:          # PE k -> PE j: the pieces m_ijk, filed under i
        for i, piece in msg.payload.pieces.items():
            assert all(w[0] == str(i) and w[1] == str(msg.dst)
                       and pieces_of(w, lengths, p) == msg.src for w in piece)
    # a kept piece never travels: m_iik stays on PE i, and m_ijk with k = i (phase 1) or
    # k = j (phase 2) skips that phase
    for msg in phase1:
        assert all(pieces_of(w, lengths, p) != msg.src for x in msg.payload.pieces.values()
                   for w in x)
    for msg in phase2:
        assert all(pieces_of(w, lengths, p) != msg.dst for x in msg.payload.pieces.values()
                   for w in x)
    assert not any(w[0] == w[1] for msg in phase1 + phase2
                   for x in msg.payload.pieces.values() for w in x)
    for msg in phase1 + phase2:  # p header fields plus the pieces fit in the padded size
        assert p + sum(len(x) for x in msg.payload.pieces.values()) <= msg.words
    # what each PE holds after phase 1: exactly the pieces m_ijk with k = itself, i != j
    after1, after2 = phase_states(run)
    for k, state in enumerate(after1):
        held = sorted(w for b in state.locals["arrived"] for x in b.pieces.values() for w in x)
        assert held == sorted(w for row in inputs for j, msg in enumerate(row) for w in msg
                              if w[0] != str(j) and pieces_of(w, lengths, p) == k)
    for j, state in enumerate(after2):
        held = sorted(w for b in state.locals["arrived"] for x in b.pieces.values() for w in x)
        assert held == sorted(w for i in range(p) if i != j for w in inputs[i][j])


def test_fig_13_15_example_of_the_chapter():
    inputs = labelled_words(CHAPTER_LENGTHS)
    assert bottleneck_volume(message_sizes(inputs)) == 9
    run = record_run("alltoallv_two_phase", 3, inputs=inputs)
    bundles = [msg for msg in run.messages if hasattr(msg.payload, "pieces")]
    assert [b.words for b in bundles] == [6] * 6 + [7] * 6 and 7 <= 9 / 3 + 2 * 3
    assert len(run.step_starts()) == 8                     # agree, phase 1, agree, phase 2
    assert {b.start for b in bundles[:6]} == set(run.step_starts()[2:4])
    assert {b.start for b in bundles[6:]} == set(run.step_starts()[6:8])
    empty = [(b.src, b.dst) for b in bundles[:6] if not b.payload.pieces]
    assert empty == [(1, 2)]                               # "only the header", in phase 1


# §5.10: what the prose claims of h-relations, their two-phase exchange and their colourings
@pytest.mark.parametrize("p", [1, 2, 3, 7, 8, 64, 100])
def test_alltoallv_inputs_have_exactly_the_bottleneck_h(p):
    op = operations()["alltoallv"]
    for h in (1, 5, 50):
        sizes = message_sizes(op.make_inputs(p, h, np.random.default_rng(p + h)))
        assert bottleneck_volume(sizes) == (h if p > 1 else 0)


def test_two_phase_messages_stay_below_h_over_p_plus_2p_for_any_lengths():
    # Lengths that waste the most in the rounding up (|m_ij| = 1 mod p), empty messages and
    # long messages to oneself (which stay local), and the chapter's table.
    two_phase, rng = entry("alltoallv_two_phase"), np.random.default_rng(7)
    cases = []
    for p in (2, 3, 5, 7, 8):
        for _ in range(4):
            lengths = rng.integers(0, 5, size=(p, p)) * p + 1
            lengths[rng.random((p, p)) < 0.25] = 0
            np.fill_diagonal(lengths, rng.integers(0, 300, size=p))
            cases.append([[[0] * int(n) for n in row] for row in lengths])
    cases += [two_phase.make_inputs(p, h, seed=p) for p, h in ((4, 40), (8, 200), (16, 1000),
                                                               (16, 4000))]
    for inputs in cases:
        p, sizes = len(inputs), message_sizes(inputs)
        h = bottleneck_volume(sizes)
        run = two_phase.simulate(p, max(h, 1), inputs=inputs, model=MODEL)
        assert run.results == two_phase.expected(inputs)
        words = {msg.words for msg in run.messages if hasattr(msg.payload, "pieces")}
        assert words == set(two_phase_bundle_words(sizes))
        assert max(words) < h / p + 2 * p, (p, h, words)


@pytest.mark.parametrize("sizes", [[[0, 2, 1], [1, 0, 0], [0, 1, 0]],
                                   [[0, 1, 1], [1, 0, 1], [1, 1, 0]],
                                   [[0, 2, 0], [0, 0, 2], [2, 0, 0]],
                                   [[0, 3, 1], [0, 0, 1], [1, 1, 0]]])
def test_no_colouring_has_fewer_colours_than_the_maximum_degree(sizes):
    # Every assignment of h - 1 colours puts one colour twice at a node of degree h; the
    # library's colouring uses exactly h.
    graph = h_relation_multigraph(sizes)
    h = bottleneck_volume(sizes)
    edges = list(graph.edges(keys=True))
    assert max(d for _, d in graph.degree()) == h

    def proper(colours):
        at = Counter((node, c) for (u, v, _), c in zip(edges, colours) for node in (u, v))
        return max(at.values()) == 1

    assert not any(proper(colours) for colours in itertools.product(range(h - 1),
                                                                    repeat=len(edges)))
    colouring = color_bipartite_multigraph(graph)
    assert proper([colouring[e] for e in edges]) and len(set(colouring.values())) == h


def test_the_simulated_steps_colour_the_completion_of_the_chapter_example():
    # The chapter's run: H padded to h-regular, its colouring delivered in the simulator,
    # the steps read back as a colouring; every node has h = 5 edges, one of each colour.
    skewed = entry("alltoallv_two_phase").make_inputs(4, 5, seed=3)
    padded = pad_to_regular(h_relation_multigraph(message_sizes(skewed)))
    steps = idle_steps_last(coloring_to_schedule(padded, color_bipartite_multigraph(padded)))
    run = simulate(deliver_schedule, 4, skewed, steps=steps, model=CostModel(ts=1, tw=0))
    ran = [[Transfer(m.src, m.dst, m.payload is None) for m in run.messages if m.start == s]
           for s in range(int(run.time))]
    seen = schedule_to_coloring(padded, ran)
    assert run.time == 5
    for node in padded.nodes:
        colours = [seen[e] if e in seen else seen[(e[1], e[0], e[2])]
                   for e in padded.edges(node, keys=True)]
        assert sorted(colours) == list(range(5)), node


def colouring_steps(inputs, pad):
    """The chapter's schedule (§5.10): a colouring of H, padded to h-regular or not."""
    graph = h_relation_multigraph(message_sizes(inputs))
    if pad:
        graph = pad_to_regular(graph)
    return idle_steps_last(coloring_to_schedule(graph, color_bipartite_multigraph(graph)))


@pytest.fixture(scope="module")
def colouring_table():
    """The chapter's table of §5.10, one dict per row: ts, tw, p, h, the simulated times of
    the colouring with dummies ("padded") and without ("plain") and of the two-phase
    algorithm, and Sanders' estimate of its cost as printed (§13.6.3)."""
    two_phase = entry("alltoallv_two_phase")
    rows = []
    for p, h in ((4, 20), (8, 100), (16, 400)):
        inputs = two_phase.make_inputs(p, h, seed=5)
        steps = {pad: colouring_steps(inputs, pad) for pad in (True, False)}
        for ts, tw in ((1, 1), (100, 1)):
            model = CostModel(ts=ts, tw=tw)
            runs = {pad: simulate(deliver_schedule, p, inputs, steps=steps[pad], model=model,
                                  trace=False) for pad in (True, False)}
            assert all(run.results == two_phase.expected(inputs) for run in runs.values())
            rows.append(dict(
                ts=ts, tw=tw, p=p, h=h, padded=runs[True].time, plain=runs[False].time,
                two_phase=two_phase.simulate(p, h, inputs=inputs, model=model,
                                             trace=False).time,
                printed=2 * p * ts + (2 * h + 4 * p) * tw))
    return rows


def test_delivery_with_dummies_takes_h_steps_in_every_row_of_the_chapter(colouring_table):
    assert len(colouring_table) == 6
    for row in colouring_table:
        assert row["padded"] == row["h"] * (row["ts"] + row["tw"]), row


def test_without_dummies_the_colouring_loses_more_than_15_percent_on_16_pes(colouring_table):
    assert all(row["plain"] >= row["padded"] for row in colouring_table)
    assert all(row["plain"] > 1.15 * row["padded"] for row in colouring_table if row["p"] == 16)


def test_the_colouring_beats_two_phase_exactly_when_a_start_up_costs_a_word(colouring_table):
    assert all((row["padded"] < row["two_phase"]) == (row["ts"] == 1) for row in colouring_table)
    # at ts = 100 the two-phase algorithm wins by a factor of 2 to 8, growing with h
    factors = [row["padded"] / row["two_phase"] for row in colouring_table if row["ts"] == 100]
    assert factors == sorted(factors) and 1.8 < factors[0] and factors[-1] < 8


def test_the_simulated_two_phase_time_is_above_the_estimate_as_printed(colouring_table):
    # the note on the two-phase estimate: in every row of the table
    assert all(row["two_phase"] > row["printed"] for row in colouring_table)
