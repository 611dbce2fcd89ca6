"""Chapter 5's claims about all-to-all broadcast and reduction (book/ch5_all_to_all, §5.1-5.4).

The chapter's own programs are copied from its visible cells (section named at each).
"""
import math
from collections import Counter

import numpy as np
import pytest

from collective_lib import (CostModel, Hypercube, LinearArray, Mesh, Ring, catalog, compute,
                            exchange, recv, send, sendrecv, simulate)
from collective_lib.algorithms.broadcast import binomial_broadcast
from collective_lib.collectives import operations
from collective_lib.recording import record_run
from collective_lib.spans import Span, span_inputs, span_op
from collective_lib.viz import values_table
from traces import trace

#: Each claim of the chapter's prose and the test that checks it (tests/notebooks/test_prose_claims.py).
PROSE_CLAIMS = {
    "through a single receiving port that takes at least":
        "test_no_one_port_all_to_all_beats_the_receiving_port_bound",
    "the number of PEs that know a given message can at most double per step, so at least":
        "test_the_pes_that_know_a_message_at_most_double_per_step",
    "every PE always has something its neighbour has not seen yet":
        "test_the_ring_always_passes_on_a_message_the_neighbour_lacks",
    "the simulator agrees with them exactly": "test_all_to_all_broadcasts_meet_grama_equations",
    "runs just as fast on a ring with the same number of PEs, because in every step each link "
    "carries at most one message": "test_hypercube_broadcast_runs_as_fast_on_a_ring",
    "a later transfer never jumps into an earlier gap":
        "test_a_later_transfer_never_jumps_into_an_earlier_gap",
    "iteration 3 takes 4 steps, exactly the four transfers": "test_third_iteration_alone_and_paired",
    "has the broadcast's cost exactly": "test_all_to_all_reductions_cost_what_the_broadcasts_cost",
    "`hypercube_allreduce` does exactly that":
        "test_allreduce_adds_the_partners_sum_in_messages_of_m_words",
    "holds the sum over exactly the PEs whose messages the broadcast has collected":
        "test_allreduce_sums_are_the_broadcasts_collections",
    "The prefix itself never travels": "test_the_prefix_itself_never_travels",
    "equals its closed form where the source states an equality and stays below it where the "
    "source states a bound": "test_every_all_to_all_entry_is_correct_and_meets_its_closed_form",
    "`all_to_all_bc_ring` takes exactly $p - 1$ time units":
        "notebooks/test_source_slips.py::test_grama_ring_takes_p_minus_1_steps",
}

MODEL = CostModel(ts=100, tw=1)


def entry(name):
    return catalog()[name]



def sources(payload):
    # The PEs whose messages a payload carries, for inputs of the form [i] (one word per PE).
    if payload is None:
        return []
    if isinstance(payload, list) and len(payload) == 1 and isinstance(payload[0], int):
        return [payload[0]]
    return [s for part in payload for s in sources(part)]


# §5.1
def broadcasts_one_by_one(me, p, data):
    result = []
    for root in range(p):
        got = yield from binomial_broadcast(me, p, data if me == root else None, root=root)
        result.append(got)
    return result


def ring_all_to_all_bc(me, p, my_msg):
    left, right = (me - 1) % p, (me + 1) % p
    result = [None] * p
    result[me] = msg = my_msg
    for i in range(1, p):
        msg = yield sendrecv(right, msg, left)
        result[(me - i) % p] = msg
    return result


# §5.1.3
def hcube_all_to_all_bc(me, p, my_msg):
    d = int(np.log2(p))
    result = [my_msg]
    for i in range(d):
        partner = me ^ (1 << i)
        msg = yield exchange(partner, result, words=len(result) * len(my_msg))
        result = msg + result if me & (1 << i) else result + msg
    return result


# §5.2
def lower_half_to_upper_half(me, p, data):
    half = p // 2
    if me < half:
        yield send(me + half, data)
    else:
        return (yield recv(me - half))


def third_iteration(me, p, data, paired=False):
    if paired:
        yield compute(me % (p // 2))
    return (yield exchange(me ^ (p // 2), data))


# §5.1, Eq. 4.2-4.4 as the chapter writes them
EQ = {"all_to_all_bc_ring": lambda p, m: (MODEL.ts + MODEL.tw * m) * (p - 1),
      "all_to_all_bc_mesh": lambda p, m: 2 * MODEL.ts * (np.sqrt(p) - 1) + MODEL.tw * m * (p - 1),
      "all_to_all_bc_hcube": lambda p, m: MODEL.ts * np.log2(p) + MODEL.tw * m * (p - 1)}
EQ_PS = [p for p in range(1, 71)] + [81, 100, 128, 256, 289]


def test_what_the_operations_expect():
    ops = operations()
    assert ops["allgather"].expected(["a", "b", "c"]) == [["a", "b", "c"]] * 3
    reduce_in = [[f"{s}{j}" for j in range(3)] for s in "abc"]
    assert ops["all_to_all_reduction"].expected(reduce_in) == ["a0b0c0", "a1b1c1", "a2b2c2"]
    personal_in = [[f"{s}{j}" for j in range(3)] for s in "abc"]
    assert ops["alltoall"].expected(personal_in) == [["a0", "b0", "c0"], ["a1", "b1", "c1"],
                                                     ["a2", "b2", "c2"]]


@pytest.mark.parametrize("p", [4, 8, 16, 32])
def test_broadcasts_one_by_one_cost_p_log_p_steps(p):
    ring = entry("all_to_all_bc_ring")
    inputs = ring.make_inputs(p, 1000)
    naive = simulate(broadcasts_one_by_one, p, inputs, model=MODEL, trace=False)
    assert naive.time == p * np.log2(p) * 1100 and naive.results == ring.expected(inputs)


def test_one_by_one_and_ring_numbers_of_the_chapter():
    ring = entry("all_to_all_bc_ring")
    assert simulate(broadcasts_one_by_one, 32, ring.make_inputs(32, 1000), model=MODEL,
                    trace=False).time == 176000
    assert ring.simulate(32, 1000, model=MODEL, trace=False).time == 34100


@pytest.mark.parametrize("p", range(1, 41))
def test_chapter_ring_broadcast_is_the_catalog_entry(p):
    ring = entry("all_to_all_bc_ring")
    inputs = ring.make_inputs(p, 2, seed=p)
    mine = simulate(ring_all_to_all_bc, p, inputs, network=Ring(p), model=MODEL)
    assert trace(mine) == trace(ring.simulate(p, inputs=inputs, model=MODEL))
    assert mine.results == ring.expected(inputs)


def test_ring_steps_of_figure_4_9():
    run = entry("all_to_all_bc_ring").simulate(8, inputs=[[i] for i in range(8)])
    moves = {s: {(m.src, m.dst, sources(m.payload)[0]) for m in run.step(s)} for s in (1, 2, 7)}
    assert moves[1] == {(i, (i + 1) % 8, i) for i in range(8)}
    assert moves[2] == {(i, (i + 1) % 8, (i - 1) % 8) for i in range(8)}
    assert (7, 0, 1) in moves[7] and (0, 1, 2) in moves[7]


def test_ring_collects_one_more_message_per_step():
    collected = lambda result: frozenset(j for j, x in enumerate(result) if x is not None)
    run = record_run(ring_all_to_all_bc, 8, inputs=[[i] for i in range(8)], network=Ring(8))
    t = values_table(run, watch={"collected": lambda s: collected(s.locals.get("result", s.result))})
    for s in range(8):
        for pe in range(8):
            assert t.value(s, pe) == frozenset((pe - k) % 8 for k in range(s + 1))


def test_mesh_collects_rows_then_everything():
    def mesh_collected(state):
        held = state.result if state.done else state.locals.get("rows") or state.locals.get("result")
        return frozenset(sources(held))

    t = values_table(record_run("all_to_all_bc_mesh", 9, inputs=[[i] for i in range(9)]),
                     watch={"collected": mesh_collected})
    for pe in range(9):
        row = frozenset(range(pe - pe % 3, pe - pe % 3 + 3))
        assert t.value(2, pe) == row and t.value(4, pe) == frozenset(range(9))
        assert len(t.value(1, pe)) == 2 and len(t.value(3, pe)) == 6
    run = entry("all_to_all_bc_mesh").simulate(9, inputs=[[i] for i in range(9)])
    assert [m.words for m in run.step(1)] == [1] * 9 and [m.words for m in run.step(3)] == [3] * 9


@pytest.mark.parametrize("d", range(0, 8))
def test_chapter_hypercube_broadcast_is_the_catalog_entry(d):
    p, cube = 2 ** d, entry("all_to_all_bc_hcube")
    inputs = cube.make_inputs(p, 3, seed=d)
    mine = simulate(hcube_all_to_all_bc, p, inputs, network=Hypercube(d), model=MODEL)
    assert trace(mine) == trace(cube.simulate(p, inputs=inputs, model=MODEL))
    assert mine.results == cube.expected(inputs)


def test_hypercube_messages_double_of_figure_4_11():
    run = entry("all_to_all_bc_hcube").simulate(8, inputs=[[i] for i in range(8)])
    assert sorted(len(m.payload) for m in run.step(3)) == [4] * 8
    assert {tuple(sources(m.payload)) for m in run.step(2) if m.src == 0} == {(0, 1)}


@pytest.mark.parametrize("name, p", [(n, p) for n in sorted(EQ) for p in EQ_PS if entry(n).valid(p)])
def test_all_to_all_broadcasts_meet_grama_equations(name, p):
    e = entry(name)
    for m in (1, 7):
        t = e.simulate(p, m, model=MODEL, trace=False).time
        assert t == e.predict(p, m, MODEL) and abs(t - EQ[name](p, m)) < 1e-9


def test_all_to_all_broadcast_numbers_of_the_chapter():
    times = [entry(n).simulate(256, 10, model=MODEL, trace=False).time
             for n in ("all_to_all_bc_ring", "all_to_all_bc_mesh", "all_to_all_bc_hcube")]
    assert times == [28050, 5550, 3350] and 10 * 255 == 2550


def test_hypercube_algorithm_on_a_ring_congests_figure_4_12():
    cube = entry("all_to_all_bc_hcube")
    on_cube, on_ring = cube.simulate(8), cube.simulate(8, network=Ring(8))
    assert on_cube.time == 3 and on_ring.time == 11
    over_34 = [msg for msg in on_ring.messages if (3, 4) in msg.path]
    assert sorted((msg.src, msg.dst) for msg in over_34) == [(0, 4), (1, 5), (2, 6), (3, 7)]
    assert sorted(msg.start for msg in over_34) == [3, 4, 7, 8]
    assert on_ring.link_load[(3, 4)] == 4 and all(msg.src ^ msg.dst == 4 for msg in over_34)
    third = [msg for msg in on_ring.messages if msg.src ^ msg.dst == 4]
    assert max(Counter(link for msg in third for link in msg.path).values()) == 4
    assert min(msg.start for msg in third) == 3 and max(msg.end for msg in third) == 11


def test_half_to_half_takes_four_times_as_long_on_a_ring():
    words = [[i] for i in range(8)]
    ring = simulate(lower_half_to_upper_half, 8, words, network=Ring(8))
    cube = simulate(lower_half_to_upper_half, 8, words, network=Hypercube(3))
    assert cube.time == 1 and ring.time == 4
    assert ring.max_link_load() == 4 and ring.link_load[(3, 4)] == 4
    assert [k for k, v in ring.link_load.items() if v == 4] == [(3, 4)]
    for tw in (0.0, 1.0):
        model, big = CostModel(ts=1.0, tw=tw), [[i] * 8 for i in range(8)]
        assert (simulate(lower_half_to_upper_half, 8, big, network=Ring(8), model=model).time
                == 4 * simulate(lower_half_to_upper_half, 8, big, network=Hypercube(3),
                                model=model).time)


def test_third_iteration_alone_and_paired():
    words = [[i] for i in range(8)]
    assert simulate(third_iteration, 8, words, network=Ring(8)).time == 8
    assert simulate(third_iteration, 8, words, network=Ring(8), paired=True).time == 4
    assert simulate(third_iteration, 8, words, network=Hypercube(3)).time == 1


def test_hypercube_reduction_operands_arrive_bit_reversed():
    spans4 = [[[Span((i,))] for j in range(4)] for i in range(4)]
    run = record_run("all_to_all_red_hcube", 4, inputs=spans4, op=span_op)
    t = values_table(run, watch="msg")
    assert t.column(0) == ["0 0 0 0", "0,2 0,2 0 0", "0,2,1,3 0,2 0 0"]
    assert t.column(3) == ["3 3 3 3", "3 3 3,1 3,1", "3 3 3,1 3,1:2,0"]
    assert run.results[0][0].ranks == (0, 2, 1, 3)
    assert all(e.requires_commutative for e in catalog().values()
               if e.operation == "all_to_all_reduction")


@pytest.mark.parametrize("name, bc", [("all_to_all_red_mesh", "all_to_all_bc_mesh"),
                                      ("all_to_all_red_hcube", "all_to_all_bc_hcube")])
def test_all_to_all_reductions_cost_what_the_broadcasts_cost(name, bc):
    e = entry(name)
    for p in range(1, 70):
        if e.valid(p):
            inputs = e.make_inputs(p, 3, seed=p)
            run = e.simulate(p, 3, inputs=inputs, model=MODEL, trace=False)
            assert run.time == EQ[bc](p, 3) and run.results == e.expected(inputs), (name, p)


def test_allreduce_sums_are_the_broadcasts_collections():
    # Fig. 4.11, cell by cell.
    cube = entry("all_to_all_bc_hcube")
    t = values_table(record_run("hypercube_allreduce", 8, inputs=span_inputs(8, m=None),
                                op=span_op), watch="m")
    bc = values_table(record_run(cube, 8, inputs=[[i] for i in range(8)]),
                      watch={"c": lambda s: frozenset(sources(s.locals.get("result", s.result)))})
    for s in range(4):
        for pe in range(8):
            lo = pe >> s << s
            assert t.value(s, pe).ranks == tuple(range(lo, lo + 2 ** s))
            assert frozenset(t.value(s, pe).ranks) == bc.value(s, pe), (s, pe)
    assert str(t.value(1, 0)) == str(t.value(1, 1)) == "0:1" and bc.value(1, 0) == frozenset({0, 1})


@pytest.mark.parametrize("d", range(0, 7))
def test_allreduce_with_concatenation_is_the_all_to_all_broadcast(d):
    p, cube = 2 ** d, entry("all_to_all_bc_hcube")
    inputs = cube.make_inputs(p, 3, seed=d)
    as_sum = entry("hypercube_allreduce").simulate(p, inputs=inputs, model=MODEL, op=lambda a, b: a + b)
    gossip = cube.simulate(p, inputs=inputs, model=MODEL)
    assert trace(as_sum) == trace(gossip)
    assert as_sum.results == [[w for msg in r for w in msg] for r in gossip.results]


@pytest.mark.parametrize("d", range(0, 9))
@pytest.mark.parametrize("m", [1, 7, 100])
def test_same_pattern_closed_forms(d, m):
    p, step = 2 ** d, MODEL.ts + MODEL.tw * m
    for name, formula in (("hypercube_allreduce", step * d), ("reduce_broadcast_allreduce", 2 * step * d),
                          ("hypercube_prefix_sum", step * d),
                          ("all_to_all_bc_hcube", MODEL.ts * d + MODEL.tw * m * (p - 1))):
        e = entry(name)
        inputs = e.make_inputs(p, m, seed=p + m)
        run = e.simulate(p, m, inputs=inputs, model=MODEL, trace=False)
        assert run.time == formula == e.predict(p, m, MODEL) and run.results == e.expected(inputs)


def test_same_pattern_numbers_of_the_chapter():
    names = ("hypercube_allreduce", "all_to_all_bc_hcube", "reduce_broadcast_allreduce")
    assert [entry(n).simulate(64, 100, model=MODEL, trace=False).time for n in names] == [1200, 6900, 2400]
    two = entry("reduce_broadcast_allreduce")
    assert all(two.predict(p, 5, MODEL) == 2 * (MODEL.ts + 5 * MODEL.tw) * math.ceil(math.log2(p))
               for p in range(1, 70))
    assert all(m.words == 0 for m in entry("barrier").simulate(8).messages)


def test_prefix_sum_walk_of_pe_5():
    run = record_run("hypercube_prefix_sum", 8, inputs=span_inputs(8, m=None), op=span_op)
    x = values_table(run, watch={"prefix": "x", "total": "m"})
    assert [str(x.value(s, 5, "prefix")) for s in range(4)] == ["5", "4:5", "4:5", "0:5"]
    assert {(m.src, str(m.payload)) for m in run.step(1) if m.dst == 5} == {(4, "4")}
    assert {(m.src, str(m.payload)) for m in run.step(2) if m.dst == 5} == {(7, "6:7")}
    assert {(m.src, str(m.payload)) for m in run.step(3) if m.dst == 5} == {(1, "0:3")}
    for pe in range(8):
        assert x.value(3, pe, "prefix").ranks == tuple(range(pe + 1))
        assert str(x.value(3, pe, "total")) == "0:7"


ALL_TO_ALL = ("allgather", "all_to_all_reduction", "alltoall", "alltoallv")


@pytest.mark.parametrize("name, p, m", [(n, p, m) for n, e in catalog().items() if e.operation in ALL_TO_ALL
                                         for p, m in [(16, 64), (8, 5), (9, 3)] if e.valid(p)])
def test_every_all_to_all_entry_is_correct_and_meets_its_closed_form(name, p, m):
    # The chapter's closing table (§5.11), for more p and m.
    e = entry(name)
    model = e.default_model(MODEL.ts, MODEL.tw)
    inputs = e.make_inputs(p, m)
    run = e.simulate(p, m, inputs=inputs, model=model, trace=False)
    assert run.results == e.expected(inputs)
    if e.exact:
        assert run.time == e.predict(p, m, model)
    else:                                   # "stays below" the bound the source states
        assert run.time < e.predict(p, m, model)


def test_the_closing_table_lists_grama_algorithms():
    names = {n for n, e in catalog().items() if e.operation in ALL_TO_ALL and e.valid(16)}
    assert names >= {"all_to_all_bc_ring", "all_to_all_bc_mesh", "all_to_all_bc_hcube",
                     "all_to_all_red_mesh", "all_to_all_red_hcube"}
    # the ring reduction (Algorithm 4.5) is the assignment ring_reduction's answer
    assert "all_to_all_red_ring" not in catalog()


# §5.1: the two lower bounds, on every all-to-all broadcast and reduction with one port per
# direction (the CM-200's all-port programs of Chapter 6 are not bound by them, §5.4)
ONE_PORT = [n for n, e in catalog().items()
            if e.operation in ("allgather", "all_to_all_reduction") and e.ports != "all"]
BOUND_PS = [1, 2, 3, 4, 7, 8, 9, 16, 64, 100]


def originals(payload):
    """The PEs whose messages a payload carries, for inputs [i]."""
    if isinstance(payload, int):
        return {payload}
    return set().union(set(), *map(originals, payload))


@pytest.mark.parametrize("name", ONE_PORT)
def test_no_one_port_all_to_all_beats_the_receiving_port_bound(name):
    e, m = entry(name), 3
    for p in filter(e.valid, BOUND_PS):
        run = e.simulate(p, m, model=CostModel(ts=0, tw=1))
        assert run.time >= (p - 1) * m, (name, p)
        received = Counter()
        for msg in run.messages:
            received[msg.dst] += msg.words
        assert all(received[pe] >= (p - 1) * m for pe in range(p)), (name, p)


@pytest.mark.parametrize("name", [n for n in ONE_PORT if entry(n).operation == "allgather"])
def test_the_pes_that_know_a_message_at_most_double_per_step(name):
    # Unit steps (ts = 1, tw = 0): a PE passes on only what it knew when its message left.
    e = entry(name)
    for p in filter(e.valid, BOUND_PS):
        run = e.simulate(p, inputs=[[i] for i in range(p)], model=CostModel(ts=1, tw=0))
        knows = [{i} for i in range(p)]                   # knows[pe]: the messages PE pe has
        for s in range(1, len(run.step_starts()) + 1):
            step = run.step(s)
            assert all(originals(msg.payload) <= knows[msg.src] for msg in step)
            for msg in step:
                knows[msg.dst] |= originals(msg.payload)
            knowers = Counter(i for held in knows for i in held)
            assert max(knowers.values()) <= 2 ** s, (name, p, s)
        assert all(len(held) == p for held in knows) and run.time >= math.ceil(math.log2(p))


@pytest.mark.parametrize("p", [2, 3, 7, 8, 64])
def test_the_ring_always_passes_on_a_message_the_neighbour_lacks(p):
    run = entry("all_to_all_bc_ring").simulate(p, inputs=[[i] for i in range(p)])
    knows = [{i} for i in range(p)]
    for s in range(1, p):
        step = run.step(s)
        assert sorted((msg.src, msg.dst) for msg in step) == [(i, (i + 1) % p) for i in range(p)]
        for msg in step:
            assert not originals(msg.payload) & knows[msg.dst], (p, s, msg.src)
            knows[msg.dst] |= originals(msg.payload)
    assert len(run.step_starts()) == p - 1


@pytest.mark.parametrize("d", range(0, 8))
def test_hypercube_broadcast_runs_as_fast_on_a_ring(d):
    # Grama's one-to-all broadcast on a hypercube, given a ring of as many PEs (§5.5).
    p, bc = 2 ** d, entry("hypercube_broadcast")
    for model in (CostModel(ts=1, tw=0), MODEL):
        on_cube, on_ring = bc.simulate(p, 5, model=model), bc.simulate(p, 5, model=model,
                                                                         network=Ring(p))
        assert on_ring.time == on_cube.time == d * (model.ts + 5 * model.tw)
        for s in range(1, d + 1):
            load = Counter(link for msg in on_ring.step(s) for link in msg.path)
            assert max(load.values()) == 1, (p, s)


def test_a_later_transfer_never_jumps_into_an_earlier_gap():
    # On a line of five PEs (one time unit a transfer): 0 -> 2 holds link 1 -> 2 in [0, 1],
    # so 1 -> 3 waits and claims 2 -> 3 for [1, 2].  2 -> 4, issued after it, could use the
    # idle 2 -> 3 in [0, 1], but a link is claimed in issue order: it starts at 2.
    def program(me, p, data):
        if me in (0, 1, 2):
            yield send(me + 2, data)
        if me >= 2:
            return (yield recv(me - 2))

    run = simulate(program, 5, [[i] for i in range(5)], network=LinearArray(5),
                   model=CostModel(ts=1, tw=0))
    assert [(msg.src, msg.dst, msg.start) for msg in run.messages] == [(0, 2, 0), (1, 3, 1),
                                                                       (2, 4, 2)]
    assert run.time == 3


@pytest.mark.parametrize("d", range(0, 7))
def test_allreduce_adds_the_partners_sum_in_messages_of_m_words(d):
    p, allreduce = 2 ** d, entry("hypercube_allreduce")
    run = allreduce.simulate(p, inputs=span_inputs(p, m=None), op=span_op)
    for s in range(1, d + 1):
        for msg in run.step(s):
            lo = msg.src >> (s - 1) << (s - 1)             # the sender's subcube so far
            assert msg.payload.ranks == tuple(range(lo, lo + 2 ** (s - 1)))
            assert msg.src ^ msg.dst == 2 ** (s - 1)
    words = allreduce.simulate(p, 7, model=MODEL)
    assert {msg.words for msg in words.messages} <= {7} and len(words.messages) == p * d


@pytest.mark.parametrize("d", range(1, 7))
def test_the_prefix_itself_never_travels(d):
    # Every message carries the sum of the sender's subcube so far, not its prefix.
    p = 2 ** d
    run = record_run("hypercube_prefix_sum", p, inputs=span_inputs(p, m=None), op=span_op)
    t = values_table(run, watch={"prefix": "x", "total": "m"})
    for s in range(1, d + 1):
        for msg in run.step(s):
            lo = msg.src >> (s - 1) << (s - 1)
            assert msg.payload.ranks == tuple(range(lo, lo + 2 ** (s - 1)))
            assert msg.payload.ranks == t.value(s - 1, msg.src, "total").ranks
    prefix_only = [pe for pe in range(p)
                   if t.value(1, pe, "prefix").ranks != t.value(1, pe, "total").ranks]
    assert prefix_only                                     # so the two can be told apart


@pytest.mark.parametrize("algorithm, side", [("all_to_all_bc_mesh", 3),
                                             ("all_to_all_bc_mesh", 8),
                                             ("all_to_all_personal_mesh", 8)])
def test_the_torus_algorithms_without_wrap_around_links(algorithm, side):
    # §5.3: without the wrap-around links the step back to the start of a row crosses the
    # row: free under cut-through routing with t_h = 0, dearer under store-and-forward
    entry = catalog()[algorithm]

    def time(routing, wrap):
        model = CostModel(ts=100, tw=1, routing=routing, ports=entry.ports)
        return entry.simulate(side * side, 10, model=model, network=Mesh(side, side, wrap=wrap),
                              trace=False).time
    assert time("cut-through", False) == time("cut-through", True)
    if algorithm == "all_to_all_bc_mesh":
        assert time("store-and-forward", False) > time("store-and-forward", True)
