"""The analysis of the d-cycles schedules (Mathur and Johnsson 1993, §4.1-§4.2, Table 2).

* the index formulas of §4.1, §4.2.1 and §4.2.3 against the simulated data
  movement, for every node, memory slot and step;
* the numpy path: d-cycles broadcast and reduction correct and edge-disjoint
  per step for d = 0..11 (the real machine's 2048 nodes);
* element transfers in sequence, counted by the simulator;
* the layout of an array in blocks and subblocks (Fig. 20).
"""
import math

import numpy as np
import pytest

from collective_lib import CostModel, Hypercube, catalog, simulate
from collective_lib.algorithms.cm200 import d_cycles_broadcast, d_cycles_reduce, one_cycle_broadcast
from collective_lib.algorithms.reduce import elementwise
from collective_lib.cm200.gray import gray, gray_inverse, sh
from collective_lib.cm200.schedules import (
    block_bounds, memory_partition, d_cycles_broadcast_index, d_cycles_reduce_blocks, d_cycles_reduce_nodes,
    d_cycles_reduce_start, d_cycles_schedule, d_cycles_source,
    one_cycle_index, run_d_cycles_broadcast, run_d_cycles_reduce)
from collective_lib.cm200.transfers import element_transfers

UNIT = CostModel(ts=1.0, tw=0.0, ports="all")
concat = elementwise(lambda a, b: f"{a}+{b}")


def run(program, d, inputs, model=UNIT, **params):
    return simulate(program, 1 << d, inputs, network=Hypercube(d), model=model, **params)


# -- index formulas against the simulated movement ----------------------------------------------

@pytest.mark.parametrize("d", range(1, 7))
def test_one_cycle_index_formula(d):
    """Fig. 7 (binary node order) and Fig. 5 (Gray code node order), every node and address."""
    p = 1 << d
    binary = run(one_cycle_broadcast, d, list(range(p)), reorder=False).results
    graycoded = run(one_cycle_broadcast, d, lambda pa: gray_inverse(pa), reorder=False).results
    s = np.arange(p)
    for pa in range(p):
        assert binary[pa] == one_cycle_index(pa, s, d).tolist()
        assert graycoded[pa] == one_cycle_index(pa, s, d, order="gray").tolist()
        assert graycoded[pa] == ((s + gray_inverse(pa)) % p).tolist()   # s <- (s - j) mod N


@pytest.mark.parametrize("d", range(1, 6))
@pytest.mark.parametrize("order", ["binary", "gray"])
def test_d_cycles_broadcast_index_formula(d, order):
    """§4.2.1: local address s = j M' + k d + i holds the predicted global index."""
    p = 1 << d
    for m in sorted({1, d, 2 * d, 2 * d + 1}):
        def label(pa):
            node = pa if order == "binary" else gray_inverse(pa)
            return [node * m + a for a in range(m)]
        memory = run(d_cycles_broadcast, d, label, reorder=False).results
        s = np.arange(p * m)
        for pa in range(p):
            got = [x for row in memory[pa] for x in row]
            assert got == d_cycles_broadcast_index(pa, s, d, m, order).tolist(), (pa, m)


@pytest.mark.parametrize("d", range(1, 6))
def test_d_cycles_reduce_block_formulas(d):
    """§4.2.3: the block each node sends from and adds into, every node, slot and step."""
    p = 1 << d
    results = run(d_cycles_reduce, d, lambda pa: [[f"{i}.{j}.{pa}" for i in range(d)]
                                                   for j in range(p)], op=concat,
                  history=True).results
    for pa, (_, history) in enumerate(results):
        for u in range(p - 1):
            before, after = history[u], history[u + 1]
            for i in range(d):
                sent = [j for j in range(p) if before[j][i] is not None and after[j][i] is None]
                added = [j for j in range(p) if after[j][i] not in (None, before[j][i])]
                assert (sent[0], added[0]) == d_cycles_reduce_blocks(pa, u, i, d), (pa, u, i)
                assert len(sent) == len(added) == 1
                j = sent[0]
                assert d_cycles_reduce_nodes(j, i, u, d)[0] == pa
                if u == 0:
                    assert d_cycles_reduce_start(j, i, d) == pa


def test_the_papers_receiving_formula_is_off_by_two():
    """§4.2.3 prints the receiver of step u as j XOR sh^i(G(2^d - u)); the movement needs 2^d - 2 - u."""
    d = 3
    n = 1 << d
    for u in range(n - 1):
        sender, receiver = d_cycles_reduce_nodes(0, 0, u, d)
        assert receiver == d_cycles_reduce_nodes(0, 0, u + 1, d)[0] if u < n - 2 else receiver == 0
        printed = sh(gray(n - u) % n, d, 0)
        assert printed != receiver, u


@pytest.mark.parametrize("d", range(1, 6))
def test_gray_code_order_reduction_blocks(d):
    """§4.2.3, nodes in Gray code order: the Gray-code block indices are G^-1 of the binary ones."""
    p = 1 << d
    for pa in range(p):
        for u in range(p - 1):
            for i in range(d):
                send, recv = d_cycles_reduce_blocks(pa, u, i, d)
                assert d_cycles_reduce_blocks(pa, u, i, d, "gray") == \
                    (gray_inverse(send), gray_inverse(recv))


def test_the_schedule_is_what_the_programs_do():
    d, p = 4, 16
    sched = d_cycles_schedule(d)
    result = catalog()["d_cycles_broadcast"].simulate(p, d, model=UNIT)
    starts = result.step_starts()
    for msg in result.messages:
        u = starts.index(msg.start)
        dim = (msg.src ^ msg.dst).bit_length() - 1
        assert dim in sched.dims[u]
    assert np.array_equal(sched.arrival[:, 0], gray(np.arange(p)))
    assert all(d_cycles_source(5, j, i, d) == 5 ^ int(sched.arrival[j, i])
               for j in range(p) for i in range(d))


# -- the numpy path at the CM-200's size ------------------------------------------------------------

@pytest.mark.parametrize("d", range(0, 12))
def test_numpy_d_cycles_broadcast(d):
    check = run_d_cycles_broadcast(d)
    assert check.ok, check
    assert check.steps == (1 << d) - 1 and check.link_uses == check.steps


@pytest.mark.parametrize("d", range(0, 12))
def test_numpy_d_cycles_reduce(d):
    check = run_d_cycles_reduce(d)
    assert check.ok, check
    assert check.steps == (1 << d) - 1 and check.link_uses == check.steps


# -- element transfers in sequence (Table 2) ---------------------------------------------------

def test_element_transfers_match_table_2_as_counted():
    for d in range(1, 6):
        p = 1 << d
        for m in (1, 3, 2 * d, 7 * d + 1):
            assert element_transfers("one_cycle_broadcast", d, m) == (p - 1) * m
            assert element_transfers("d_cycles_broadcast", d, m) == (p - 1) * math.ceil(m / d)
            assert element_transfers("d_cycles_reduce", d, m) == (p - 1) * math.ceil(m / d)
            assert element_transfers("one_cycle_broadcast", d, m, channels=2) == \
                (p - 1) * math.ceil(m / 2)
            assert element_transfers("d_cycles_broadcast", d, m, channels=2) == \
                (p - 1) * math.ceil(m / (2 * d))
            assert element_transfers("reduce_and_spread", d, m) == d * math.ceil(p * m / d)
    with pytest.raises(ValueError, match="'ring'"):
        element_transfers("ring", 3, 4)


def test_two_channel_counts_are_refused_when_the_nodes_drift_out_of_lock_step():
    # send_and_spread's trees drift apart when M' is not a multiple of d; the
    # one-channel run then cannot be rescaled step by step.
    with pytest.raises(ValueError, match="lock step"):
        element_transfers("send_and_spread", 3, 7, channels=2)
    one, two = (element_transfers("send_and_spread", 3, 12, channels=c) for c in (1, 2))
    assert one / 2 <= two < one           # two channels at most halve every step


# -- Fig. 20: blocks and subblocks ---------------------------------------------------------------

@pytest.mark.parametrize("d", range(0, 6))
def test_blocks_are_consecutive_full_then_the_rest(d):
    for M in range(0, 200):
        bounds = block_bounds(M, d)
        sizes = [stop - start for start, stop in bounds]
        assert len(bounds) == 2 ** d and sum(sizes) == M
        assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
        full = -(-M // 2 ** d)
        assert sizes == sorted(sizes, reverse=True) and set(sizes) <= {full, M % full if full else 0, 0}


def test_node_j_ends_with_block_j_of_the_layout():
    """d_cycles_reduce of 2**d blocks of M' elements: node j's result is block j of the layout."""
    d, per_block = 3, 7
    M = 2 ** d * per_block
    partition = memory_partition(M, d)
    inputs = [[[f"{pa}.{x}" for x in range(j * per_block, (j + 1) * per_block)]
               for j in range(2 ** d)] for pa in range(2 ** d)]
    results = run(d_cycles_reduce, d, inputs, op=concat).results
    for j, result in enumerate(results):
        addresses = [x for start, stop in partition[j] for x in range(start, stop)]
        assert [set(s.split("+")) for s in result] == \
            [{f"{pa}.{x}" for pa in range(2 ** d)} for x in addresses]


@pytest.mark.parametrize("call", [lambda: block_bounds(-1, 2), lambda: block_bounds(4, -1),
                                  lambda: memory_partition(4, 0), lambda: block_bounds(2.5, 1)])
def test_layout_rejects_bad_sizes(call):
    with pytest.raises(ValueError):
        call()
