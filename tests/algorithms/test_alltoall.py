"""All-to-all broadcast and reduction (Grama §4.2, Algorithms 4.4-4.8, Eqs. 4.2-4.4)."""
import math
import operator
import random
from collections import Counter

import pytest

from collective_lib import CostModel, catalog, simulate
from collective_lib.algorithms.reduce import elementwise
from collective_lib.networks import Hypercube, Mesh, Ring

BROADCASTS = ["all_to_all_bc_ring", "all_to_all_bc_mesh", "all_to_all_bc_hcube"]
# The ring reduction (Algorithm 4.5) is not in the library: it is the answer of the assignment
# ring_reduction (tests/exercises/test_ring_reduction.py checks its reference answer).
REDUCTIONS = ["all_to_all_red_mesh", "all_to_all_red_hcube"]
MODELS = [CostModel(ts=1.0, tw=0.0), CostModel(ts=2.0, tw=0.25), CostModel(ts=0.5, tw=1.5)]


def entry(name):
    return catalog()[name]


def valid_ps(name, ps=range(1, 65)):
    return [p for p in ps if entry(name).valid(p)]


# -- what the catalog says about them ---------------------------------------------------------

def test_operations_networks_and_flags():
    for name in BROADCASTS:
        assert entry(name).operation == "allgather"
        assert not entry(name).requires_commutative
    for name in REDUCTIONS:
        assert entry(name).operation == "all_to_all_reduction"
        assert entry(name).requires_commutative
        assert entry(name).params == {"op": entry(name).params["op"]}
    assert entry("all_to_all_bc_ring").network_for(6) == Ring(6)
    assert entry("all_to_all_red_mesh").network_for(9) == Mesh(3, 3, wrap=True)
    assert entry("all_to_all_bc_hcube").network_for(16) == Hypercube(4)


def test_valid_p():
    assert valid_ps("all_to_all_bc_ring") == list(range(1, 65))
    assert valid_ps("all_to_all_red_mesh") == [1, 4, 9, 16, 25, 36, 49, 64]
    assert valid_ps("all_to_all_red_hcube") == [1, 2, 4, 8, 16, 32, 64]


# -- results -------------------------------------------------------------------------------

@pytest.mark.parametrize("name", BROADCASTS)
def test_broadcast_returns_every_message_by_source(name):
    rng = random.Random(name)
    for p in valid_ps(name):
        m = rng.randint(1, 4)
        inputs = [[rng.randint(0, 999) for _ in range(m)] for _ in range(p)]
        run = entry(name).simulate(p, m, inputs=inputs, trace=False)
        assert run.results == [inputs] * p, f"{name} p={p}"


@pytest.mark.parametrize("name", REDUCTIONS)
def test_reduction_combines_what_is_destined_for_each_pe(name):
    rng = random.Random(name)
    ops = [elementwise(operator.add), elementwise(max), elementwise(operator.xor)]
    for i, p in enumerate(valid_ps(name)):
        m = rng.randint(1, 4)
        op = ops[i % len(ops)]
        inputs = [[[rng.randint(0, 999) for _ in range(m)] for _ in range(p)] for _ in range(p)]
        run = entry(name).simulate(p, m, inputs=inputs, trace=False, op=op)
        for j in range(p):
            column = [inputs[i][j] for i in range(p)]
            total = column[0]
            for x in column[1:]:
                total = op(total, x)
            assert run.results[j] == total, f"{name} p={p} PE {j}"


def _labels(p):
    """PE i contributes the one-word message "<i>." to every destination."""
    return [[[f"{i}."] for _ in range(p)] for i in range(p)]


def test_hypercube_reduction_combines_in_bit_reversed_order():
    # Algorithm 4.8 pairs the PEs across dimension d-1 first, so PE 0 gets 0, 4, 2, 6, 1, 5, 3, 7.
    run = entry("all_to_all_red_hcube").simulate(8, 1, inputs=_labels(8),
                                                 op=elementwise(operator.add))
    assert run.results[0] == ["0.4.2.6.1.5.3.7."]


# -- times: Eqs. 4.2-4.4 ---------------------------------------------------------------------

def eq_4_2(p, m, ts, tw):
    return (ts + tw * m) * (p - 1)


def eq_4_3(p, m, ts, tw):
    return 2 * ts * (math.isqrt(p) - 1) + tw * m * (p - 1)


def eq_4_4(p, m, ts, tw):
    return ts * (p.bit_length() - 1) + tw * m * (p - 1)


EQUATIONS = {"ring": eq_4_2, "mesh": eq_4_3, "hcube": eq_4_4}


@pytest.mark.parametrize("name", BROADCASTS + REDUCTIONS)
def test_simulated_time_is_the_books_equation(name):
    equation = EQUATIONS[name.rsplit("_", 1)[1]]
    for i, p in enumerate(valid_ps(name, [*range(1, 65), 81, 100, 128, 256])):
        model = MODELS[i % len(MODELS)]
        m = 1 + i % 3
        run = entry(name).simulate(p, m, model=model, trace=False)
        assert run.time == pytest.approx(equation(p, m, model.ts, model.tw)), f"{name} p={p}"
        assert entry(name).predict(p, m, model) == pytest.approx(run.time)


def test_hypercube_messages_double_and_reduction_messages_halve():
    m = 3
    bc = entry("all_to_all_bc_hcube").simulate(16, m)
    red = entry("all_to_all_red_hcube").simulate(16, m)
    assert [bc.step(s)[0].words for s in (1, 2, 3, 4)] == [m, 2 * m, 4 * m, 8 * m]
    assert [red.step(s)[0].words for s in (1, 2, 3, 4)] == [8 * m, 4 * m, 2 * m, m]
    assert [red.step(1)[0].src, red.step(1)[0].dst] in ([0, 8], [8, 0])   # dimension d-1 first


def test_mesh_phases_send_m_then_m_sqrt_p_words():
    run = entry("all_to_all_bc_mesh").simulate(16, 2)
    assert [len(run.step(s)) for s in range(1, 7)] == [16] * 6
    assert {msg.words for s in (1, 2, 3) for msg in run.step(s)} == {2}
    assert {msg.words for s in (4, 5, 6) for msg in run.step(s)} == {8}
    assert all(len(msg.path) == 1 for msg in run.messages)       # torus neighbours only
    red = entry("all_to_all_red_mesh").simulate(16, 2)
    assert {msg.words for s in (1, 2, 3) for msg in red.step(s)} == {8}
    assert {(msg.src - msg.dst) % 16 for s in (1, 2, 3) for msg in red.step(s)} == {4}   # up
    assert {msg.words for s in (4, 5, 6) for msg in red.step(s)} == {2}


# -- Fig. 4.9: the ring, steps 1, 2 and 7 ------------------------------------------------------

def test_fig_4_9_labels():
    # An arrow labelled "s (k)" from PE i to PE i+1: in step s PE i sends the message
    # that PE k owned before the broadcast.  In step s that is k = i - (s - 1).
    p = 8
    inputs = [[100 + i] for i in range(p)]
    run = entry("all_to_all_bc_ring").simulate(p, 1, inputs=inputs)
    assert len(run.step_starts()) == p - 1
    owner = {100 + i: i for i in range(p)}
    for s in (1, 2, 7):
        arrows = {(msg.src, msg.dst, owner[msg.payload[0]]) for msg in run.step(s)}
        assert arrows == {(i, (i + 1) % p, (i - s + 1) % p) for i in range(p)}
    assert (5, 6, 5) in {(m.src, m.dst, owner[m.payload[0]]) for m in run.step(1)}   # "1 (5)"
    assert (0, 1, 7) in {(m.src, m.dst, owner[m.payload[0]]) for m in run.step(2)}   # "2 (7)"


# -- Fig. 4.12: the hypercube procedure on a ring ------------------------------------------

def test_fig_4_12_hypercube_broadcast_on_a_ring_congests_links():
    p, m = 8, 1
    e = entry("all_to_all_bc_hcube")
    on_ring = e.simulate(p, m, network=Ring(p))
    assert on_ring.results == e.expected(e.make_inputs(p, m))
    third = [msg for msg in on_ring.messages if msg.words == 4 * m]     # Fig. 4.11(c)
    assert sorted((msg.src, msg.dst) for msg in third) == sorted((u, u ^ 4) for u in range(p))
    load = Counter(link for msg in third for link in msg.path)
    # Distance 4 ties go the increasing way, so all eight transfers run clockwise:
    # each clockwise link carries four of them, e.g. 3 -> 4 those of PEs 0..3 (Fig. 4.12).
    assert max(load.values()) == 4
    assert load == {(u, (u + 1) % p): 4 for u in range(p)}
    assert sorted(msg.src for msg in third if (3, 4) in msg.path) == [0, 1, 2, 3]
    # Over the whole run, steps 1 and 2 stay inside the blocks 0..3 and 4..7 and add
    # 1 + 1 or 0 + 2 transfers to each link there; the links 3 -> 4 and 7 -> 0 carry only
    # the four of step 3, and 4 -> 3 and 0 -> 7 none.
    inside = [(u, u + 1) for u in (0, 1, 2, 4, 5, 6)]
    assert on_ring.max_link_load() == 6
    assert on_ring.link_load == {**{link: 6 for link in inside},
                                 **{(v, u): 2 for u, v in inside},
                                 (3, 4): 4, (7, 0): 4}
    # With ts = 1, tw = 0: step 1 takes 1, step 2 takes 2 (0->2 and 1->3 share 1->2), and
    # the eight transfers of step 3 overlap pairwise around the ring and run one after another.
    assert on_ring.time == 1 + 2 + 8
    assert e.simulate(p, m).time == 3                                   # on the hypercube


# -- invalid p -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name, p", [("all_to_all_bc_mesh", 8), ("all_to_all_red_mesh", 12),
                                     ("all_to_all_bc_hcube", 12), ("all_to_all_red_hcube", 6)])
def test_invalid_p_is_rejected_naming_p(name, p):
    e = entry(name)
    assert not e.valid(p)
    with pytest.raises(ValueError, match=f"p={p}"):
        e.simulate(p, 1)
    with pytest.raises(ValueError, match=f"p={p}"):
        e.predict(p, 1)
    with pytest.raises(ValueError, match=f"p={p}"):
        e.network_for(p)
    data = [[1]] * p if "bc" in name else [[[1]] * p] * p
    with pytest.raises(ValueError, match=f"p={p}"):
        simulate(e.program, p, data)


def test_reduction_input_must_hold_p_messages():
    with pytest.raises(ValueError, match="p=4"):
        simulate(entry("all_to_all_red_mesh").program, 4, [[[1]] * 3] * 4)
