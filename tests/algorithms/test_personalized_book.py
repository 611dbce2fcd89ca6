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
from collective_lib.operations import operations
from collective_lib.recording import record_run
from collective_lib.viz import values_table
from traces import trace

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
