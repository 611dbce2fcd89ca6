"""The per-entry benchmark runs every catalog entry, and its replay agrees with the simulator."""
import pytest

from collective_lib import catalog

BENCHMARK = "catalog_speed"   # benchmarks/catalog_speed.py, loaded by the bench fixture


@pytest.mark.parametrize("name", ["all_to_all_bc_ring", "d_cycles_broadcast", "barrier",
                                  "two_tree_broadcast"])
def test_the_replay_issues_the_simulation_s_operations_and_returns_its_results(bench, name):
    case = bench.Case(catalog()[name], 8)
    run, order, received = case.record()
    results, operations = case.replay(order, received)()
    assert operations == run.operations == len(order) - 8
    assert repr(results) == repr(run.results) == repr(case.simulate().results)


def test_the_script_prints_a_line_per_entry_and_the_goals(bench, capsys):
    assert bench.main(["--seconds", "0.0005", "--repeat", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    names = {line.split()[0] for line in out[2:-2]}
    assert names == set(catalog())
    assert "limit/sim" in out[1] and "traced/sim" in out[1]
    assert out[-2].startswith("goals: limit/sim >= 0.8 and traced/sim <= 1.5; met by")
    assert out[-1].startswith("PASS")
