"""Chapter 5's claims about the total exchange (book/ch5_all_to_all, §5.5).

The chapter's own programs are copied from its visible cells (section named at each).
"""
import math
from collections import Counter

import numpy as np
import pytest

from collective_lib import CostModel, Hypercube, Ring, catalog, exchange, simulate
from collective_lib.algorithms.personalized import (direct_indirect_crossover, one_factor_partner,
                                                    transpose_by_alltoall)
from collective_lib.collectives import operations
from collective_lib.recording import record_run
from collective_lib.viz import values_table
from traces import trace

#: Each claim of the chapter's prose and the test that checks it (tests/notebooks/test_prose_claims.py).
PROSE_CLAIMS = {
    "which the $p$ links share, at least $t_w m (p - 1) p / 2$ time units":
        "test_one_way_ring_word_hops_share_the_p_links",
    "the rearrangement adds exactly": "test_personalized_exchanges_meet_grama_equations",
    "one receiving port, so the time is at least $t_w m (p - 1)$":
        "test_no_total_exchange_beats_the_receiving_port_bound",
    "do the $p$ messages of a step never meet on a link":
        "test_xor_pairs_and_cyclic_shifts_never_share_a_hypercube_link",
    "That point is $u$ for exactly one source $i$":
        "test_each_link_of_a_crossed_dimension_carries_exactly_one_message_per_step",
    "every directed link carries at most one message per step":
        "test_xor_pairs_and_cyclic_shifts_never_share_a_hypercube_link",
    "Where exactly they cross is the subject of the next section":
        "test_direct_and_indirect_cross_over_at_n_star",
    "every pair meets in exactly one of the 5 rounds":
        "test_one_factor_pairs_every_two_pes_exactly_once",
    "after the second step it holds exactly the messages for itself":
        "test_indirect_exchange_table_of_the_chapter",
    "the two meet at exactly $n^* = 80$ words": "test_crossover_numbers_of_the_chapter",
    "XOR pairs with E-cube routing never put two messages of one step on a link":
        "test_xor_pairs_and_cyclic_shifts_never_share_a_hypercube_link",
}

MODEL = CostModel(ts=100, tw=1)
M, TR = 4, 0.5


def entry(name):
    return catalog()[name]



# §5.5.3
def all_to_all_personal(me, p, msgs):
    result = [None] * p
    result[me] = msgs[me]
    for i in range(1, p):
        partner = me ^ i
        result[partner] = yield exchange(partner, msgs[partner])
    return result


def busiest_link_per_step(run, partner_of_step):
    loads = []
    for j in range(1, run.p):
        moves = [msg for msg in run.messages if msg.dst == partner_of_step(msg.src, j, run.p)]
        loads.append(max(Counter(link for msg in moves for link in msg.path).values()))
    return loads


def xor_pairs(i, j, p):
    return i ^ j


def shifts(i, j, p):
    return (i + j) % p


# §5.5, Grama Eq. 4.7-4.9 as the chapter writes them (formula, rearrangement term t_r)
PERSONAL_EQ = {
    "all_to_all_personal_ring": (lambda p: (MODEL.ts + MODEL.tw * M * p / 2) * (p - 1), lambda p: 0),
    "all_to_all_personal_mesh": (lambda p: (2 * MODEL.ts + MODEL.tw * M * p) * (np.sqrt(p) - 1),
                                 lambda p: TR * M * p),
    "all_to_all_personal_hcube": (lambda p: (MODEL.ts + MODEL.tw * M * p / 2) * np.log2(p),
                                  lambda p: TR * M * p * np.log2(p)),
}


@pytest.mark.parametrize("name, p", [(n, p) for n, e in catalog().items() if e.operation == "alltoall"
                                     for p in (1, 2, 4, 8, 9, 16) if e.valid(p)])
def test_every_total_exchange_transposes_a_matrix(name, p):
    rng = np.random.default_rng(5 + p)
    A = rng.integers(0, 100, size=(2 * p, 3 * p))
    assert np.array_equal(transpose_by_alltoall(A, p, name)[0], A.T)


def test_transpose_numbers_of_the_chapter():
    _, run = transpose_by_alltoall(np.arange(64).reshape(8, 8), 4)
    assert len(run.messages) == 12 and run.messages[0].words == 4 and run.time == 3


def test_personalized_ring_forwards_one_packet_less_each_step():
    packets = [[f"{i}{j}" for j in range(6)] for i in range(6)]
    run = entry("all_to_all_personal_ring").simulate(6, inputs=packets)
    assert [len(run.step(s)[0].payload) for s in range(1, 6)] == [5, 4, 3, 2, 1]
    assert run.results == operations()["alltoall"].expected(packets)
    assert {m.src: m.payload for m in run.step(1)}[0] == ["01", "02", "03", "04", "05"]
    assert {m.src: m.payload for m in run.step(2)}[1] == ["02", "03", "04", "05"]


@pytest.mark.parametrize("name, p", [(n, p) for n in sorted(PERSONAL_EQ)
                                     for p in (1, 2, 3, 4, 5, 8, 9, 16, 25, 32, 36, 64)
                                     if catalog()[n].valid(p)])
def test_personalized_exchanges_meet_grama_equations(name, p):
    e = entry(name)
    formula, rearrange = PERSONAL_EQ[name]
    t = e.simulate(p, M, model=MODEL, trace=False).time
    assert abs(t - formula(p)) < 1e-9 and t == e.predict(p, M, MODEL)
    if "tr" in e.params:
        slow = e.simulate(p, M, model=MODEL, trace=False, tr=TR).time
        assert abs(slow - t - rearrange(p)) < 1e-9


@pytest.mark.parametrize("d", range(0, 7))
def test_chapter_xor_exchange_is_the_catalog_entry(d):
    p, ecube = 2 ** d, entry("all_to_all_personal_hcube_ecube")
    inputs = ecube.make_inputs(p, 2, seed=d)
    mine = simulate(all_to_all_personal, p, inputs, network=Hypercube(d), model=MODEL)
    assert trace(mine) == trace(ecube.simulate(p, inputs=inputs, model=MODEL))
    assert mine.results == ecube.expected(inputs)


@pytest.mark.parametrize("d", range(1, 7))
def test_xor_pairs_and_cyclic_shifts_never_share_a_hypercube_link(d):
    p = 2 ** d
    run = entry("all_to_all_personal_hcube_ecube").simulate(p)
    assert busiest_link_per_step(run, xor_pairs) == [1] * (p - 1) and run.time == p - 1
    run = entry("alltoall_cyclic").simulate(p, network=Hypercube(d))
    assert busiest_link_per_step(run, shifts) == [1] * (p - 1) and run.time == p - 1


def test_xor_pairs_congest_a_ring():
    run = entry("all_to_all_personal_hcube_ecube").simulate(8, network=Ring(8))
    assert busiest_link_per_step(run, xor_pairs) == [1, 2, 2, 4, 2, 2, 2] and run.time == 19


@pytest.mark.parametrize("p", range(2, 40))
def test_one_factor_pairs_every_two_pes_exactly_once(p):
    rounds = p - (p % 2 == 0)
    met = Counter()
    for r in range(rounds):
        partner = [one_factor_partner(i, p, r) for i in range(p)]
        assert all(partner[partner[i]] == i for i in range(p))
        met.update(frozenset((i, partner[i])) for i in range(p) if partner[i] != i)
        assert sum(partner[i] == i for i in range(p)) == p % 2
    assert set(met.values()) == {2} and len(met) == p * (p - 1) // 2


def test_one_factor_partners_of_the_chapter():
    assert [one_factor_partner(3, 6, r) for r in range(5)] == [2, 4, 1, 5, 0]


def test_indirect_exchange_table_of_the_chapter():
    pairs = [[f"{i}{j}" for j in range(4)] for i in range(4)]
    run = record_run("alltoall_hypercube", 4, inputs=pairs)
    t = values_table(run, watch={"M": "M"},
                     fmt=lambda M: "-" if M is None else " ".join(x for _, _, x in M))
    assert t.column(0) == ["00 01 02 03", "20 21 00 01", "30 10 20 00"]


@pytest.mark.parametrize("p", [4, 8, 16, 32, 64, 128])
def test_direct_and_indirect_cross_over_at_n_star(p):
    direct, indirect = entry("alltoall_direct_xor"), entry("alltoall_hypercube")
    star = direct_indirect_crossover(p, MODEL)
    lo, hi = math.ceil(star) - 1, math.floor(star) + 1
    assert (indirect.simulate(p, lo, model=MODEL, trace=False).time
            < direct.simulate(p, lo, model=MODEL, trace=False).time)
    assert (indirect.simulate(p, hi, model=MODEL, trace=False).time
            > direct.simulate(p, hi, model=MODEL, trace=False).time)
    d = np.log2(p)
    assert abs((p - 1) * (100 + star) - d * (100 + star * p / 2)) < 1e-6


def test_crossover_numbers_of_the_chapter():
    assert direct_indirect_crossover(8, MODEL) == 80
    assert round(direct_indirect_crossover(64, MODEL), 2) == 44.19
    assert round(direct_indirect_crossover(64, MODEL)) == 44     # "at about 44 words"


# §5.8: the ring both ways (Grama §4.5.1, the remark after Fig. 4.18)
def test_both_ways_numbers_of_the_chapter():
    one, both = entry("all_to_all_personal_ring"), entry("all_to_all_personal_ring_bidirectional")
    words = CostModel(ts=0, tw=1)

    def ratio(p):
        return (both.simulate(p, M, model=words, trace=False).time
                / one.simulate(p, M, model=words, trace=False).time)

    assert ratio(2) == 1 and ratio(3) == pytest.approx(2 / 3)      # "by a third for p = 3"
    assert round(ratio(64), 3) == 0.508 and ratio(65) < ratio(9) < ratio(8) < ratio(3)
    for p in (2, 3, 8, 9, 64, 65):
        sim = both.simulate(p, M, model=MODEL, trace=False).time
        assert sim == both.predict(p, M, MODEL) == (p - 1) * MODEL.ts + M * (p * p // 4)
        assert (one.simulate(p, M, model=MODEL, trace=False).time - sim
                == M * (p * (p - 1) // 2 - p * p // 4))                # same start-ups


# §5.8: Grama et al. 2003, Fig. 4.19 and Fig. 4.20, transcribed once.  {i,j} is the packet
# from node i for node j; a group in parentheses travels together.  The seed text of §4.5 has
# only the captions and the text around them; the panels are those of the printed figures.

def parse_groups(text):
    """'({0,0},{0,3}) ({0,1},{0,4})' -> [[(0, 0), (0, 3)], [(0, 1), (0, 4)]]."""
    return [[tuple(int(x) for x in label.strip("{}").split(","))
             for label in group.strip("()").replace("},{", "} {").split()]
            for group in text.split(" ")]


# Fig. 4.19(a): the distribution at the beginning of phase 1, grouped by destination column
FIG_4_19_A = {
    0: "({0,0},{0,3},{0,6}) ({0,1},{0,4},{0,7}) ({0,2},{0,5},{0,8})",
    1: "({1,0},{1,3},{1,6}) ({1,1},{1,4},{1,7}) ({1,2},{1,5},{1,8})",
    2: "({2,0},{2,3},{2,6}) ({2,1},{2,4},{2,7}) ({2,2},{2,5},{2,8})",
    3: "({3,0},{3,3},{3,6}) ({3,1},{3,4},{3,7}) ({3,2},{3,5},{3,8})",
    4: "({4,0},{4,3},{4,6}) ({4,1},{4,4},{4,7}) ({4,2},{4,5},{4,8})",
    5: "({5,0},{5,3},{5,6}) ({5,1},{5,4},{5,7}) ({5,2},{5,5},{5,8})",
    6: "({6,0},{6,3},{6,6}) ({6,1},{6,4},{6,7}) ({6,2},{6,5},{6,8})",
    7: "({7,0},{7,3},{7,6}) ({7,1},{7,4},{7,7}) ({7,2},{7,5},{7,8})",
    8: "({8,0},{8,3},{8,6}) ({8,1},{8,4},{8,7}) ({8,2},{8,5},{8,8})",
}
# Fig. 4.19(b): the beginning of phase 2, after the rows, regrouped by destination row
FIG_4_19_B = {
    0: "({0,0},{1,0},{2,0}) ({0,3},{1,3},{2,3}) ({0,6},{1,6},{2,6})",
    1: "({0,1},{1,1},{2,1}) ({0,4},{1,4},{2,4}) ({0,7},{1,7},{2,7})",
    2: "({0,2},{1,2},{2,2}) ({0,5},{1,5},{2,5}) ({0,8},{1,8},{2,8})",
    3: "({3,0},{4,0},{5,0}) ({3,3},{4,3},{5,3}) ({3,6},{4,6},{5,6})",
    4: "({3,1},{4,1},{5,1}) ({3,4},{4,4},{5,4}) ({3,7},{4,7},{5,7})",
    5: "({3,2},{4,2},{5,2}) ({3,5},{4,5},{5,5}) ({3,8},{4,8},{5,8})",
    6: "({6,0},{7,0},{8,0}) ({6,3},{7,3},{8,3}) ({6,6},{7,6},{8,6})",
    7: "({6,1},{7,1},{8,1}) ({6,4},{7,4},{8,4}) ({6,7},{7,7},{8,7})",
    8: "({6,2},{7,2},{8,2}) ({6,5},{7,5},{8,5}) ({6,8},{7,8},{8,8})",
}
# Fig. 4.20, panels (a)-(d): an eight-node hypercube at the start, before steps 2 and 3
# (dimensions 0, 1, 2 in turn) and at the end; the order within a node is the figure's layout
FIG_4_20 = [
    {0: "{0,0},{0,1},{0,2},{0,3},{0,4},{0,5},{0,6},{0,7}",
     1: "{1,0},{1,1},{1,2},{1,3},{1,4},{1,5},{1,6},{1,7}",
     2: "{2,0},{2,1},{2,2},{2,3},{2,4},{2,5},{2,6},{2,7}",
     3: "{3,0},{3,1},{3,2},{3,3},{3,4},{3,5},{3,6},{3,7}",
     4: "{4,0},{4,1},{4,2},{4,3},{4,4},{4,5},{4,6},{4,7}",
     5: "{5,0},{5,1},{5,2},{5,3},{5,4},{5,5},{5,6},{5,7}",
     6: "{6,0},{6,1},{6,2},{6,3},{6,4},{6,5},{6,6},{6,7}",
     7: "{7,0},{7,1},{7,2},{7,3},{7,4},{7,5},{7,6},{7,7}"},
    {0: "{0,0},{0,2},{0,4},{0,6},{1,0},{1,2},{1,4},{1,6}",
     1: "{0,1},{0,3},{0,5},{0,7},{1,1},{1,3},{1,5},{1,7}",
     2: "{2,0},{2,2},{2,4},{2,6},{3,0},{3,2},{3,4},{3,6}",
     3: "{2,1},{2,3},{2,5},{2,7},{3,1},{3,3},{3,5},{3,7}",
     4: "{4,0},{4,2},{4,4},{4,6},{5,0},{5,2},{5,4},{5,6}",
     5: "{4,1},{4,3},{4,5},{4,7},{5,1},{5,3},{5,5},{5,7}",
     6: "{6,0},{6,2},{6,4},{6,6},{7,0},{7,2},{7,4},{7,6}",
     7: "{6,1},{6,3},{6,5},{6,7},{7,1},{7,3},{7,5},{7,7}"},
    {0: "{0,0},{0,4},{1,0},{1,4},{2,0},{2,4},{3,0},{3,4}",
     1: "{0,1},{0,5},{1,1},{1,5},{2,1},{2,5},{3,1},{3,5}",
     2: "{0,2},{0,6},{1,2},{1,6},{2,2},{2,6},{3,2},{3,6}",
     3: "{0,3},{0,7},{1,3},{1,7},{2,3},{2,7},{3,3},{3,7}",
     4: "{4,0},{4,4},{5,0},{5,4},{6,0},{6,4},{7,0},{7,4}",
     5: "{4,1},{4,5},{5,1},{5,5},{6,1},{6,5},{7,1},{7,5}",
     6: "{4,2},{4,6},{5,2},{5,6},{6,2},{6,6},{7,2},{7,6}",
     7: "{4,3},{4,7},{5,3},{5,7},{6,3},{6,7},{7,3},{7,7}"},
    {0: "{0,0},{1,0},{2,0},{3,0},{4,0},{5,0},{6,0},{7,0}",
     1: "{0,1},{1,1},{2,1},{3,1},{4,1},{5,1},{6,1},{7,1}",
     2: "{0,2},{1,2},{2,2},{3,2},{4,2},{5,2},{6,2},{7,2}",
     3: "{0,3},{1,3},{2,3},{3,3},{4,3},{5,3},{6,3},{7,3}",
     4: "{0,4},{1,4},{2,4},{3,4},{4,4},{5,4},{6,4},{7,4}",
     5: "{0,5},{1,5},{2,5},{3,5},{4,5},{5,5},{6,5},{7,5}",
     6: "{0,6},{1,6},{2,6},{3,6},{4,6},{5,6},{6,6},{7,6}",
     7: "{0,7},{1,7},{2,7},{3,7},{4,7},{5,7},{6,7},{7,7}"},
]


def figure_packets(p):
    """The chapter's inputs: node i's message for node j is its label '{i,j}'."""
    return [["{%d,%d}" % (i, j) for j in range(p)] for i in range(p)]


def label(text):
    return tuple(int(x) for x in text.strip("{}").split(","))


def test_fig_4_19_transcription_says_what_grama_section_4_5_2_says():
    # "The first group contains the messages destined for nodes labeled 0, 3, and 6; ...";
    # caption: at the end node i has ({0,i}, ..., {8,i}).
    for i in range(9):
        groups = parse_groups(FIG_4_19_A[i])
        assert [[j for _, j in g] for g in groups] == [[0, 3, 6], [1, 4, 7], [2, 5, 8]]
        assert {s for g in groups for s, _ in g} == {i}
        held = parse_groups(FIG_4_19_B[i])
        assert sum(len(g) for g in held) == 9 and all(len(g) == 3 for g in held)


def test_fig_4_19_holdings_at_the_beginning_of_each_phase():
    run = record_run("all_to_all_personal_mesh", 9, inputs=figure_packets(9))
    table = values_table(run, watch={"groups": "groups", "result": "result"})
    assert len(run.step_starts()) == 4                     # two steps per phase on a 3 x 3 torus
    for pe in range(9):
        for row, figure in ((0, FIG_4_19_A), (2, FIG_4_19_B)):
            got = [[label(x) for x in group] for group in table.value(row, pe, "groups")]
            want = parse_groups(figure[pe])
            assert [sorted(g) for g in got] == [sorted(g) for g in want], f"PE {pe} row {row}"
        assert [label(x) for x in table.value(4, pe, "result")] == [(i, pe) for i in range(9)]


def test_fig_4_20_holdings_before_each_step():
    run = record_run("all_to_all_personal_hcube", 8, inputs=figure_packets(8))
    table = values_table(run, watch="M")
    assert len(table.rows) == len(FIG_4_20) == 4
    for row, panel in enumerate(FIG_4_20):
        for pe in range(8):
            held = [label(x) for _, _, x in table.value(row, pe)]
            assert len(held) == 8                                           # p packets always
            assert sorted(held) == sorted(label(x) for x in panel[pe].replace("},{", "} {").split())
    for s in range(1, 4):                                                   # dimensions 0, 1, 2
        step = run.step(s)
        assert {msg.dst ^ msg.src for msg in step} == {1 << (s - 1)}
        assert {len(msg.payload) for msg in step} == {4}                   # p/2 packets each


def test_chapter_renders_the_figures_as_transcribed():
    # The chapter prints a group as '({0,0},{0,3},{0,6})' and a panel of Fig. 4.20 sorted.
    run = record_run("all_to_all_personal_mesh", 9, inputs=figure_packets(9))
    table = values_table(run, watch="groups",
                         fmt=lambda v: " ".join("(" + ",".join(g) + ")" for g in v))
    assert [table.column(pe)[0] for pe in range(9)] == [FIG_4_19_A[pe] for pe in range(9)]
    assert [table.column(pe)[2] for pe in range(9)] == [FIG_4_19_B[pe] for pe in range(9)]
    cube = values_table(record_run("all_to_all_personal_hcube", 8, inputs=figure_packets(8)),
                        watch="M", fmt=lambda M: ",".join(sorted(x for _, _, x in M)))
    assert [[cube.column(pe)[r] for pe in range(8)] for r in range(4)] == \
        [[panel[pe] for pe in range(8)] for panel in FIG_4_20]


# §5.8: the lower bounds of the total exchange
@pytest.mark.parametrize("p", [2, 3, 7, 8, 64])
def test_one_way_ring_word_hops_share_the_p_links(p):
    # Every packet goes the same way: m(p-1)p^2/2 word-hops, spread evenly over the p
    # clockwise links, so no one-way ring exchange beats t_w m (p-1) p / 2; Eq. 4.7 meets it.
    run = entry("all_to_all_personal_ring").simulate(p, M, model=CostModel(ts=0, tw=1))
    per_link = Counter()
    for msg in run.messages:
        for link in msg.path:
            per_link[link] += msg.words
    assert sum(per_link.values()) * 2 == M * (p - 1) * p * p
    assert per_link == {(i, (i + 1) % p): M * (p - 1) * p // 2 for i in range(p)}
    assert run.time == M * (p - 1) * p / 2


@pytest.mark.parametrize("name", [n for n, e in catalog().items()
                                  if e.operation == "alltoall" and e.ports != "all"])
def test_no_total_exchange_beats_the_receiving_port_bound(name):
    e = entry(name)
    for p in filter(e.valid, [1, 2, 3, 4, 7, 8, 9, 16, 64]):
        run = e.simulate(p, M, model=CostModel(ts=0, tw=1))
        received = Counter()
        for msg in run.messages:
            received[msg.dst] += msg.words
        assert all(received[pe] >= M * (p - 1) for pe in range(p)), (name, p)
        assert run.time >= M * (p - 1), (name, p)


@pytest.mark.parametrize("d", range(1, 7))
def test_hypercube_word_hops_give_the_links_only_about_half_the_bound(d):
    # The direct exchange routes every packet along a shortest path: p m (p log p)/2
    # word-hops, m p / 2 for each of the p log p directed links, against t_w m (p - 1).
    p = 2 ** d
    run = entry("all_to_all_personal_hcube_ecube").simulate(p, M)
    hops = sum(msg.words * len(msg.path) for msg in run.messages)
    links = {link for msg in run.messages for link in msg.path}
    assert len(links) == p * d and hops == M * p * p * d // 2
    assert hops / len(links) == M * p / 2 and M * p / 2 <= M * (p - 1)


@pytest.mark.parametrize("d", range(1, 7))
def test_each_link_of_a_crossed_dimension_carries_exactly_one_message_per_step(d):
    # In step j the messages cross dimension k if bit k of j is set, and then every one of
    # the p directed links of dimension k carries exactly one of them.
    p = 2 ** d
    run = entry("all_to_all_personal_hcube_ecube").simulate(p)
    for j in range(1, p):
        moves = [msg for msg in run.messages if msg.dst == msg.src ^ j]
        assert len(moves) == p
        load = Counter(link for msg in moves for link in msg.path)
        for k in range(d):
            crossing = {link: n for link, n in load.items() if link[0] ^ link[1] == 1 << k}
            assert crossing == ({(u, u ^ 1 << k): 1 for u in range(p)} if j >> k & 1 else {})
