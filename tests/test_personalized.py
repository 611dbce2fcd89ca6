"""All-to-all personalized exchange (Grama §4.5, Sanders §13.6, Bruck et al. 1997)."""
import random
from collections import Counter

import pytest

from collective_lib import CostModel, catalog, simulate
from collective_lib.algorithms.personalized import alltoall_cyclic


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
