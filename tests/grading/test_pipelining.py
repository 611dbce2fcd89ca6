"""Tests of collective_lib.grading.pipelining: pipelined_broadcast_time."""
import pytest

from collective_lib import CostModel, catalog
from collective_lib.grading import pipelined_broadcast_time


# -- pipelined_broadcast_time -------------------------------------------------------------

def test_pipelined_broadcast_time_is_the_half_duplex_simulation():
    entry = catalog()["pipelined_binary_tree_broadcast"]
    model = CostModel(ts=1.0, tw=0.1, ports="half-duplex")
    for k in (1, 2, 4):
        assert pipelined_broadcast_time(64, 7, 1.0, 0.1, k) == \
            entry.simulate(7, m=64, model=model, k=k).time
    assert pipelined_broadcast_time(64, 7, 1.0, 0.1, 2) == pytest.approx(29.4)
