"""The scale benchmark's bare loop agrees with the simulator, and the script prints its table."""

import pytest

from collective_lib import FullyConnected, Ring

BENCHMARK = "scale"   # benchmarks/scale.py, loaded by the bench fixture


@pytest.mark.parametrize("p", [2, 3, 16])
def test_the_bare_loop_and_the_simulator_agree(bench, p):
    bare = bench.run_bare(p)
    assert bench.run_ours(p, FullyConnected(p)) == bare == bench.run_ours(p, Ring(p))
    assert bare[1] == p - 1 and bare[2] == p * (p - 1)


def test_the_script_prints_rates_ratios_and_memory(bench, capsys):
    assert bench.main(["--p", "16", "--repeat", "1", "--broadcast-log-p", "8",
                       "--cm200-d", "3", "--transfer-d", "3"]) == 0
    out = capsys.readouterr().out
    assert "ours/bare" in out and "SimPy/ours" in out and "SimPy/bare" in out and "rows" in out
    assert "interleaved" in out
    assert "trace on (ring all-gather, p = 16, Ring)" in out and "per recorded message" in out
    assert "p = 2**8 = 256" in out and "bytes per PE" in out
    assert "the p generators alone, each at its first operation" in out
    assert "one_cycle_broadcast   3     8" in out and "d_cycles_broadcast    3     8" in out
    assert "reduce" not in out                       # the reductions are cm200_scale.py's
    assert "multi-port path, d = 3: the simulator's own cost per transfer" in out
    assert "(goal 1)" in out
    assert "PASS  ours, the bare loop and SimPy" in out
