"""All-to-all personalized exchange (Grama §4.5, Sanders §13.6, Bruck et al. 1997)."""
import math
import random
from collections import Counter

import pytest

import numpy as np

from collective_lib import CostModel, FullyConnected, Hypercube, Mesh, Ring, catalog, simulate
from collective_lib.algorithms.personalized import (
    alltoall_cyclic, bruck_alltoall_bound, direct_indirect_crossover, one_factor_partner,
    rearranged_words_hcube, rearranged_words_mesh, transpose_by_alltoall)


def entry(name):
    return catalog()[name]


def labelled(p):
    """PE i's message for PE j is the one-word message [(i, j)]."""
    return [[[(i, j)] for j in range(p)] for i in range(p)]


# -- the operation ---------------------------------------------------------------------------

def test_operation_transposes_the_matrix_of_messages():
    e = entry("alltoall_cyclic")
    assert e.operation == "alltoall"
    inputs = labelled(3)
    assert e.expected(inputs) == [[[(i, j)] for i in range(3)] for j in range(3)]


def test_messages_of_different_sizes_are_rejected():
    data = [[[1], [2, 3]], [[4], [5]]]
    with pytest.raises(ValueError, match="one size"):
        simulate(alltoall_cyclic, 2, data)
    data = [[[1, 1], [2, 2]], [[4], [5]]]          # uniform per PE, not across PEs
    with pytest.raises(ValueError, match="one size"):
        simulate(alltoall_cyclic, 2, data)


# -- Sanders §13.6.1: direct delivery along cycles (Exercise 13.10) -------------------------------

def test_exercise_13_10_cyclic_rounds_deliver_every_pair_once():
    for p in range(1, 34):
        run = entry("alltoall_cyclic").simulate(p, 1, inputs=labelled(p))
        assert run.results == [[[(i, j)] for i in range(p)] for j in range(p)], f"p={p}"
        assert len(run.step_starts()) == max(p - 1, 0)
        pairs = Counter()
        for k in range(1, p):
            sent = {(msg.src, msg.dst) for msg in run.step(k)}
            # round k: every PE i sends to i + k, so every PE receives from i - k
            assert sent == {(i, (i + k) % p) for i in range(p)}, f"p={p} round {k}"
            for msg in run.step(k):
                assert msg.payload == [(msg.src, msg.dst)]      # m_ij goes straight to j
            pairs.update(sent)
        assert pairs == Counter({(i, j): 1 for i in range(p) for j in range(p) if i != j})


def test_cyclic_time_is_eq_13_3():
    rng = random.Random(3)
    for p in [1, 2, 3, 5, 8, 13, 64, 100]:
        ts, tw, m = rng.choice([0.5, 1.0, 3.0]), rng.choice([0.0, 0.25, 2.0]), rng.randint(1, 5)
        run = entry("alltoall_cyclic").simulate(p, m, model=CostModel(ts, tw), trace=False)
        assert run.time == pytest.approx((p - 1) * (ts + tw * m)), f"p={p}"


NAMES = ["alltoall_cyclic", "alltoall_direct_xor", "alltoall_one_factor", "alltoall_hypercube",
         "all_to_all_personal_ring", "all_to_all_personal_ring_bidirectional",
         "all_to_all_personal_mesh", "all_to_all_personal_hcube",
         "all_to_all_personal_hcube_ecube", "bruck_alltoall"]
# ts and tw separately: (1, 0) counts startups, (0, 1) counts words, then a mix.
SEPARATE = [CostModel(ts=1.0, tw=0.0), CostModel(ts=0.0, tw=1.0), CostModel(ts=2.0, tw=0.25)]


def valid_ps(name, ps=range(1, 65)):
    return [p for p in ps if entry(name).valid(p)]


def log2(p):
    return p.bit_length() - 1


def test_catalog_entries_networks_and_valid_p():
    for name in NAMES:
        assert entry(name).operation == "alltoall"
        assert entry(name).exact
        assert entry(name).ports == "full-duplex"
    assert entry("all_to_all_personal_ring").network_for(6) == Ring(6)
    assert entry("all_to_all_personal_ring_bidirectional").network_for(7) == Ring(7)
    assert entry("all_to_all_personal_mesh").network_for(9) == Mesh(3, 3, wrap=True)
    assert entry("all_to_all_personal_hcube_ecube").network_for(8) == Hypercube(3)
    assert entry("alltoall_hypercube").network_for(16) == Hypercube(4)
    assert entry("alltoall_direct_xor").network_for(8) == FullyConnected(8)
    for name in ["alltoall_cyclic", "alltoall_one_factor", "all_to_all_personal_ring",
                 "all_to_all_personal_ring_bidirectional", "bruck_alltoall"]:
        assert valid_ps(name) == list(range(1, 65))
    assert valid_ps("all_to_all_personal_mesh") == [1, 4, 9, 16, 25, 36, 49, 64]
    for name in ["alltoall_direct_xor", "alltoall_hypercube", "all_to_all_personal_hcube",
                 "all_to_all_personal_hcube_ecube"]:
        assert valid_ps(name) == [1, 2, 4, 8, 16, 32, 64]


@pytest.mark.parametrize("name", NAMES)
def test_every_pe_gets_the_message_of_every_pe(name):
    for p in valid_ps(name, range(1, 40)):
        run = entry(name).simulate(p, 1, inputs=labelled(p), trace=False)
        assert run.results == [[[(i, j)] for i in range(p)] for j in range(p)], f"{name} p={p}"


@pytest.mark.parametrize("name, p", [("alltoall_direct_xor", 6), ("alltoall_hypercube", 12),
                                     ("all_to_all_personal_hcube", 10),
                                     ("all_to_all_personal_hcube_ecube", 24),
                                     ("all_to_all_personal_mesh", 8)])
def test_invalid_p_is_rejected_naming_p(name, p):
    e = entry(name)
    assert not e.valid(p)
    calls = [lambda: e.simulate(p, 1), lambda: e.predict(p, 1),
             lambda: simulate(e.program, p, [[[1]] * p] * p)]
    if e.network_for is not FullyConnected:
        calls.append(lambda: e.network_for(p))
    for call in calls:
        with pytest.raises(ValueError, match=f"p={p}"):
            call()


def test_input_must_hold_p_messages_and_tr_must_be_a_time():
    with pytest.raises(ValueError, match="p=4"):
        simulate(entry("bruck_alltoall").program, 4, [[[1]] * 3] * 4)
    with pytest.raises(ValueError, match="tr=-1"):
        entry("all_to_all_personal_mesh").simulate(4, 1, tr=-1)


# -- Sanders §13.6.1: the telephone model --------------------------------------------------------

def test_direct_xor_pairs_me_with_me_xor_k_in_step_k():
    p = 16
    run = entry("alltoall_direct_xor").simulate(p, 1, inputs=labelled(p))
    for k in range(1, p):
        assert {(msg.src, msg.dst) for msg in run.step(k)} == {(i, i ^ k) for i in range(p)}


def test_fig_13_13_speed_dating_partners_of_pe_3():
    assert [one_factor_partner(3, 6, r) for r in range(5)] == [2, 4, 1, 5, 0]
    run = entry("alltoall_one_factor").simulate(6, 1, inputs=labelled(6))
    assert [msg.dst for msg in sorted(run.messages, key=lambda x: x.start) if msg.src == 3] \
        == [2, 4, 1, 5, 0]
    # "the index of the partner grows by two modulo p - 1" for the PEs at the table
    for i in range(5):
        seq = [one_factor_partner(i, 6, r) for r in range(5)]
        at_table = [(j, r) for r, j in enumerate(seq) if j != 5]
        assert all((j - 2 * r) % 5 == (-i) % 5 for j, r in at_table)


@pytest.mark.parametrize("p", [*range(1, 21), 31, 64])
def test_one_factor_rounds_are_perfect_pairings(p):
    rounds = p - (p % 2 == 0)
    met = Counter()
    for r in range(rounds):
        partner = [one_factor_partner(i, p, r) for i in range(p)]
        assert all(partner[partner[i]] == i for i in range(p)), f"p={p} round {r}"
        idle = [i for i in range(p) if partner[i] == i]
        assert idle == ([] if p % 2 == 0 else [r])         # odd p: PE r sits out round r
        met.update((i, partner[i]) for i in range(p) if partner[i] != i)
    assert met == Counter({(i, j): 1 for i in range(p) for j in range(p) if i != j})


def test_one_factor_time_and_the_half_duplex_price():
    for p in [*range(1, 20), 33, 48]:
        for model in SEPARATE:
            m = 3
            rounds = 0 if p == 1 else p - (p % 2 == 0)
            run = entry("alltoall_one_factor").simulate(p, m, model=model, trace=False)
            assert run.time == pytest.approx(rounds * (model.ts + model.tw * m)), f"p={p}"
            # the exchange of a pair needs both directions at once; one port takes twice as long
            half = CostModel(model.ts, model.tw, ports="half-duplex")
            run = entry("alltoall_one_factor").simulate(p, m, model=half, trace=False)
            assert run.time == pytest.approx(2 * rounds * (model.ts + model.tw * m)), f"p={p}"


@pytest.mark.parametrize("name", ["alltoall_cyclic", "alltoall_direct_xor",
                                  "all_to_all_personal_hcube_ecube"])
def test_direct_delivery_is_eq_13_3_and_eq_4_10(name):
    for p in valid_ps(name, [1, 2, 3, 4, 7, 8, 16, 31, 32, 64]):
        for model in SEPARATE:
            run = entry(name).simulate(p, 5, model=model, trace=False)
            assert run.time == pytest.approx((model.ts + model.tw * 5) * (p - 1)), f"p={p}"


# -- Sanders §13.6.2 and Grama §4.5.3: indirect delivery on the hypercube ----------------------

@pytest.mark.parametrize("name", ["alltoall_hypercube", "all_to_all_personal_hcube"])
def test_hypercube_indirect_is_eq_13_4_and_eq_4_9(name):
    for p in [1, 2, 4, 8, 32, 128]:
        for model in SEPARATE:
            m = 3
            run = entry(name).simulate(p, m, model=model, trace=False)
            assert run.time == pytest.approx(log2(p) * (model.ts + model.tw * m * p / 2)), f"p={p}"
            # neighbours only: every directed link once, in the step of its dimension
            assert run.link_load == {link: 1 for link in Hypercube.of_size(p).links()}


def test_fig_13_14_highest_dimension_first():
    p = 4
    run = entry("alltoall_hypercube").simulate(p, 1, inputs=labelled(p))
    first = {msg.src: msg for msg in run.step(1)}
    assert first[0].dst == 2                                  # across dimension d - 1 = 1
    assert sorted((i, j) for i, j, _ in first[0].payload) == [(0, 2), (0, 3)]
    second = {msg.src: msg for msg in run.step(2)}
    assert second[0].dst == 1
    assert sorted((i, j) for i, j, _ in second[0].payload) == [(0, 1), (2, 1)]
    assert [len(run.step(s)[0].payload) for s in (1, 2)] == [p // 2, p // 2]
    grama = entry("all_to_all_personal_hcube").simulate(8, 1, inputs=labelled(8))
    assert {(msg.src ^ msg.dst) for msg in grama.step(1)} == {1}     # dimension 0 first
    assert {(msg.src ^ msg.dst) for msg in grama.step(3)} == {4}


def test_hypercube_rearrangement_time():
    p, m, tr = 16, 2, 0.125
    model = CostModel(ts=1.0, tw=0.5)
    e = entry("all_to_all_personal_hcube")
    assert rearranged_words_hcube(p, m) == m * p * 4
    run = e.simulate(p, m, model=model, tr=tr, trace=False)
    assert run.time == pytest.approx(4 * (1.0 + 0.5 * m * p / 2) + tr * m * p * 4)
    assert e.predict(p, m, model, tr=tr) == pytest.approx(run.time)


# -- Grama Algorithm 4.10: E-cube routing is congestion-free ---------------------------------------

@pytest.mark.parametrize("p", [2, 4, 8, 16, 32])
def test_algorithm_4_10_no_directed_link_carries_two_transfers_at_once(p):
    run = entry("all_to_all_personal_hcube_ecube").simulate(p, 2, model=CostModel(1.0, 0.5))
    cube = Hypercube.of_size(p)
    assert len(run.step_starts()) == p - 1
    for j in range(1, p):
        step = run.step(j)
        assert {(msg.src, msg.dst) for msg in step} == {(i, i ^ j) for i in range(p)}
        # routed E-cube: through the dimensions of the bits of j, lowest first
        for msg in step:
            assert msg.path == cube.path(msg.src, msg.dst)
            assert len(msg.path) == bin(j).count("1")
        use = Counter(link for msg in step for link in msg.path)
        assert set(use.values()) == {1}, f"p={p} step {j}: a link carries two messages"
    # over the run, link (u, u ^ 2**b) serves the p/2 steps j with bit b set, one at a time
    assert run.link_load == {link: p // 2 for link in cube.links()}
    busy = {}
    for msg in run.messages:
        for link in msg.path:
            busy.setdefault(link, []).append((msg.start, msg.end))
    for intervals in busy.values():
        intervals.sort()
        assert all(a_end <= b_start for (_, a_end), (b_start, _) in zip(intervals, intervals[1:]))


def test_algorithm_4_10_charges_cut_through_hops():
    # ts + th l + tw m per transfer, l = popcount(j) in step j: th is paid (p/2) log p times
    e = entry("all_to_all_personal_hcube_ecube")
    for p in [2, 8, 32]:
        model = CostModel(ts=1.0, tw=0.5, th=0.25)
        run = e.simulate(p, 3, model=model, trace=False)
        assert run.time == pytest.approx((1.0 + 0.5 * 3) * (p - 1) + 0.25 * (p // 2) * log2(p))
        assert e.predict(p, 3, model) == pytest.approx(run.time)
        saf = CostModel(ts=1.0, tw=0.5, th=0.25, routing="store-and-forward")
        assert e.simulate(p, 3, model=saf, trace=False).time == pytest.approx(e.predict(p, 3, saf))


def test_the_pairwise_schedule_congests_a_ring():
    # The same partners routed on a ring of 8 share links: slower than on the hypercube.
    e = entry("all_to_all_personal_hcube_ecube")
    on_ring = e.simulate(8, 1, network=Ring(8))
    assert on_ring.results == e.expected(e.make_inputs(8, 1))
    assert on_ring.time > e.simulate(8, 1).time == 7


# -- Grama §4.5.1 and §4.5.2: ring and mesh ----------------------------------------------------

def test_ring_is_eq_4_7_and_its_messages_shrink_by_m():
    for p in [1, 2, 3, 6, 9, 16, 33]:
        for model in SEPARATE:
            m = 2
            run = entry("all_to_all_personal_ring").simulate(p, m, model=model, trace=False)
            assert run.time == pytest.approx((model.ts + model.tw * m * p / 2) * (p - 1)), f"p={p}"
    run = entry("all_to_all_personal_ring").simulate(6, 2)
    assert [run.step(i)[0].words for i in range(1, 6)] == [2 * (6 - i) for i in range(1, 6)]
    assert all(len(msg.path) == 1 and msg.dst == (msg.src + 1) % 6 for msg in run.messages)


def test_fig_4_18_labels_on_six_nodes():
    # Step 1: PE 0 sends ({0,1}, {0,2}, ..., {0,5}); step 2: PE 1 forwards ({0,2}, ..., {0,5}).
    run = entry("all_to_all_personal_ring").simulate(6, 1, inputs=labelled(6))
    sent = {(s, msg.src): [x[0] for x in msg.payload] for s in range(1, 6) for msg in run.step(s)}
    assert sent[1, 0] == [(0, j) for j in range(1, 6)]
    assert sent[2, 1] == [(0, j) for j in range(2, 6)]
    assert sent[5, 4] == [(0, 5)]
    assert sent[3, 5] == [(3, 0), (3, 1), (3, 2)]


# -- Grama §4.5.1's remark: half of the packets each way ------------------------------------------

BOTH_WAYS_P = [*range(1, 41), 63, 64, 65, 100, 128, 255]


@pytest.mark.parametrize("p", BOTH_WAYS_P)
def test_ring_both_ways_meets_its_closed_form_and_delivers(p):
    both = entry("all_to_all_personal_ring_bidirectional")
    right, left = -(-(p - 1) // 2), (p - 1) // 2          # packets sent each way
    for i, model in enumerate(SEPARATE):
        m = 1 + i
        inputs = both.make_inputs(p, m, seed=p + i)
        run = both.simulate(p, m, inputs=inputs, model=model, trace=False)
        assert run.results == both.expected(inputs), f"p={p}"
        by_hand = sum(model.ts + model.tw * m * k
                      for n in (right, left) for k in range(1, n + 1))
        assert run.time == pytest.approx(by_hand) == both.predict(p, m, model), f"p={p}"
    words = both.simulate(p, 1, model=CostModel(ts=0.0, tw=1.0), trace=False).time
    assert words == p * p // 4                               # floor(p^2 / 4)


@pytest.mark.parametrize("p", BOTH_WAYS_P)
def test_ring_both_ways_halves_only_the_tw_term(p):
    both, one_way = entry("all_to_all_personal_ring_bidirectional"), entry("all_to_all_personal_ring")
    m = 3

    def time(e, ts, tw):
        return e.simulate(p, m, model=CostModel(ts=ts, tw=tw), trace=False).time

    assert time(both, 1.0, 0.0) == time(one_way, 1.0, 0.0) == p - 1      # same start-ups
    tw_both, tw_one = time(both, 0.0, 1.0), time(one_way, 0.0, 1.0)
    assert tw_one == m * p * (p - 1) / 2                                   # Eq. 4.7's t_w term
    if p > 2:
        assert tw_both < tw_one
        # half of Eq. 4.7's t_w term, plus m p/4 for even p and m (p - 1)/4 for odd p
        assert tw_both - tw_one / 2 == pytest.approx(m * (p // 2) / 2 if p % 2 == 0
                                                     else m * (p - 1) / 4)
    else:
        assert tw_both == tw_one                                           # one packet or none
    if p >= 64:
        assert tw_both / tw_one < 0.51


def test_ring_both_ways_alternates_directions_between_neighbours():
    p = 7
    run = entry("all_to_all_personal_ring_bidirectional").simulate(p, 1, inputs=labelled(p))
    assert all(len(msg.path) == 1 for msg in run.messages)
    steps = len(run.step_starts())
    assert steps == p - 1
    for s in range(1, steps + 1):
        shift = {(msg.dst - msg.src) % p for msg in run.step(s)}
        assert shift == ({1} if s % 2 else {p - 1})        # right, left, right, ...
        assert len(run.step(s)) == p
    sizes = [run.step(s)[0].words for s in range(1, steps + 1)]
    assert sizes == [3, 3, 2, 2, 1, 1]
    # PE 0's first messages: its packets for PEs 1, 2, 3 to the right, for 6, 5, 4 to the left
    first = {(msg.src, (msg.dst - msg.src) % p): [x[0] for x in msg.payload] for msg in run.step(1)}
    assert first[0, 1] == [(0, 1), (0, 2), (0, 3)]
    second = {msg.src: [x[0] for x in msg.payload] for msg in run.step(2)}
    assert second[0] == [(0, 6), (0, 5), (0, 4)]


def test_ring_both_ways_rejects_messages_of_different_sizes():
    with pytest.raises(ValueError, match="all_to_all_personal_ring_bidirectional"):
        simulate(entry("all_to_all_personal_ring_bidirectional").program, 3,
                 [[[1], [2, 3], [4]]] * 3)


def test_mesh_is_eq_4_8():
    for p in [1, 4, 9, 16, 36, 64, 100]:
        for model in SEPARATE:
            m = 2
            side = int(p ** 0.5)
            run = entry("all_to_all_personal_mesh").simulate(p, m, model=model, trace=False)
            assert run.time == pytest.approx((2 * model.ts + model.tw * m * p) * (side - 1)), \
                f"p={p}"


def test_mesh_phases_and_rearrangement():
    p, m, side = 9, 2, 3
    run = entry("all_to_all_personal_mesh").simulate(p, m, inputs=None)
    assert all(len(msg.path) == 1 for msg in run.messages)        # torus neighbours only
    phase1, phase2 = run.messages[:2 * p], run.messages[2 * p:]
    assert all(msg.src // side == msg.dst // side for msg in phase1)   # along rows
    assert all(msg.src % side == msg.dst % side for msg in phase2)     # along columns
    assert [msg.words for msg in phase1[::p]] == [side * m * 2, side * m]
    # Fig. 4.19(b): after the rows, PE 4 holds the groups for column 1 of PEs 3, 4, 5
    labels = entry("all_to_all_personal_mesh").simulate(p, 1, inputs=labelled(p))
    kept = [msg.payload[0] for msg in labels.messages[:2 * p] if msg.dst == 4]   # first group
    assert sorted(x[0] for group in kept for x in group) == \
        [(3, 1), (3, 4), (3, 7), (5, 1), (5, 4), (5, 7)]
    # t_r m p for the rearrangement between the phases
    tr, model = 0.5, CostModel(ts=1.0, tw=0.25)
    timed = entry("all_to_all_personal_mesh").simulate(p, m, model=model, tr=tr, trace=False)
    assert rearranged_words_mesh(p, m) == m * p
    assert timed.time == pytest.approx((2 + 0.25 * m * p) * (side - 1) + tr * m * p)


# -- Bruck et al. 1997 ---------------------------------------------------------------------------

def test_bruck_rounds_blocks_and_bound():
    e = entry("bruck_alltoall")
    for p in [*range(1, 41), 63, 64, 65]:
        run = e.simulate(p, 1, inputs=labelled(p))
        rounds = (p - 1).bit_length()
        assert len(run.step_starts()) == rounds
        for k in range(rounds):
            step = run.step(k + 1)
            assert {(msg.src, msg.dst) for msg in step} == {(i, (i + 2 ** k) % p) for i in range(p)}
            blocks = sum(1 for j in range(p) if j >> k & 1)
            assert {len(msg.payload) for msg in step} == {blocks} and blocks <= p // 2
        for model in SEPARATE:
            exact = e.predict(p, 3, model)
            assert e.simulate(p, 3, model=model, trace=False).time == pytest.approx(exact)
            bound = bruck_alltoall_bound(p, 3, model)
            assert exact <= bound + 1e-12
            if p & (p - 1) == 0:
                assert exact == pytest.approx(bound)
                assert exact == pytest.approx(log2(p) * (model.ts + model.tw * 3 * p / 2))


# -- Example 4.2: the transpose ------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_transpose_matches_numpy(name):
    rng = np.random.default_rng(1)
    for p, shape in [(1, (3, 5)), (2, (4, 6)), (4, (4, 4)), (4, (8, 12)), (8, (16, 8)),
                     (9, (9, 18)), (16, (32, 16)), (3, (6, 3)), (5, (10, 5))]:
        if not entry(name).valid(p):
            continue
        A = rng.integers(0, 100, size=shape)
        AT, run = transpose_by_alltoall(A, p, name)
        assert AT.shape == A.T.shape and (AT == A.T).all(), f"{name} p={p} {shape}"
        assert run.p == p


def test_fig_4_17_transpose_of_4_by_4_moves_single_elements():
    A = np.arange(16).reshape(4, 4)
    AT, run = transpose_by_alltoall(A, 4, "alltoall_cyclic", model=CostModel(ts=1.0, tw=1.0))
    assert (AT == A.T).all()
    assert {msg.words for msg in run.messages} == {1} and len(run.messages) == 12
    assert run.time == 3 * 2.0


def test_transpose_rejects_bad_arguments():
    with pytest.raises(ValueError, match="p=3"):
        transpose_by_alltoall(np.zeros((4, 4)), 3)
    with pytest.raises(ValueError, match="p=6"):
        transpose_by_alltoall(np.zeros((12, 12)), 6, "alltoall_direct_xor")
    with pytest.raises(ValueError, match="2-D"):
        transpose_by_alltoall(np.zeros(4), 2)
    with pytest.raises(ValueError, match="all_to_all_bc_ring"):
        transpose_by_alltoall(np.zeros((4, 4)), 2, "all_to_all_bc_ring")


# -- direct vs indirect ------------------------------------------------------------------------

@pytest.mark.parametrize("p, ts, tw", [(4, 10.0, 1.0), (16, 100.0, 1.0), (64, 500.0, 0.5),
                                       (8, 30.0, 0.25)])
def test_crossover_separates_the_simulated_winners(p, ts, tw):
    model = CostModel(ts=ts, tw=tw)
    d = log2(p)
    m_star = direct_indirect_crossover(p, model)
    assert (p - 1) * (ts + tw * m_star) == pytest.approx(d * (ts + tw * m_star * p / 2))
    direct, indirect = entry("alltoall_direct_xor"), entry("alltoall_hypercube")
    below, above = math.ceil(m_star) - 1, math.floor(m_star) + 1
    assert below >= 1
    assert indirect.simulate(p, below, model=model, trace=False).time \
        < direct.simulate(p, below, model=model, trace=False).time
    assert indirect.simulate(p, above, model=model, trace=False).time \
        > direct.simulate(p, above, model=model, trace=False).time


def test_crossover_edge_cases():
    assert direct_indirect_crossover(2, CostModel(1.0, 1.0)) == 0.0     # the same single exchange
    assert direct_indirect_crossover(1, CostModel(1.0, 1.0)) == 0.0
    assert direct_indirect_crossover(16, CostModel(1.0, 0.0)) == math.inf
    with pytest.raises(ValueError, match="p=12"):
        direct_indirect_crossover(12, CostModel())
