"""The four cycle programs in the event simulator against the numpy executors (§4.1-§4.2).

Random data, several elements per node, every d from 1 to 8 (p up to 256):
the results and the simulated times must be identical.  The machine's own
d = 11 is left to benchmarks/cm200_scale.py (minutes in the event simulator).
"""
import numpy as np
import pytest

from collective_lib import CostModel, Hypercube, simulate
from collective_lib.algorithms.cm200 import (d_cycles_broadcast, d_cycles_reduce,
                                             one_cycle_broadcast, one_cycle_reduce)
from collective_lib.cm200.schedules import (execute_d_cycles_broadcast, execute_d_cycles_reduce,
                                            execute_one_cycle_broadcast, execute_one_cycle_reduce)

PROGRAMS = [(one_cycle_broadcast, execute_one_cycle_broadcast, False),
            (d_cycles_broadcast, execute_d_cycles_broadcast, False),
            (one_cycle_reduce, execute_one_cycle_reduce, True),
            (d_cycles_reduce, execute_d_cycles_reduce, True)]
MODEL = CostModel(ts=3.0, tw=0.5, ports="all")


def message_length(d):
    """M' = d + 1 (every link busy, slots of unequal length) up to d = 6; then M' = 2, as
    2**d (2**d - 1) M' transfers would otherwise take seconds."""
    return d + 1 if d <= 6 else 2


@pytest.mark.parametrize("program, executor, reduction", PROGRAMS,
                         ids=[program.__name__ for program, _, _ in PROGRAMS])
def test_event_simulator_agrees_with_numpy(program, executor, reduction):
    rng = np.random.default_rng(11)
    for d in range(1, 9):
        p, m = 1 << d, message_length(d)
        data = rng.integers(-10**6, 10**6, size=(p, p, m) if reduction else (p, m))
        run = simulate(program, p, data.tolist(), network=Hypercube(d), model=MODEL,
                       trace=False)
        executed = executor(data)
        assert np.array_equal(np.asarray(run.results), executed.results), (program.__name__, d)
        assert run.time == executed.time(MODEL), (program.__name__, d)
        want = data.sum(axis=0) if reduction else np.broadcast_to(data, (p, p, m))
        assert np.array_equal(executed.results, want), (program.__name__, d)


def test_executors_refuse_a_non_cube():
    with pytest.raises(ValueError, match="2\\*\\*d nodes.*got 3 rows"):
        execute_d_cycles_broadcast(np.zeros((3, 2)))
