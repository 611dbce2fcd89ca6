"""The per-transfer benchmark runs, and its lock-step loop agrees with simulate, at small d."""

BENCHMARK = "transfer_cost"   # benchmarks/transfer_cost.py, loaded by the bench fixture


def test_the_lock_step_loop_returns_what_simulate_returns(bench):
    program = bench.catalog()["d_cycles_broadcast"].program
    inputs = [[10 * me + k for k in range(3)] for me in range(8)]
    results, transfers = bench.lock_step(program, 8, inputs)
    assert transfers == 8 * 7 * 3
    assert results == bench.simulate(program, 8, inputs, network=bench.Hypercube(3),
                                     model=bench.MODEL).results


def test_the_script_prints_both_programs_and_the_ratio(bench, capsys):
    assert bench.main(["--d", "3", "4", "--repeat", "1"]) == 0
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines() if line.strip()[:1].isdigit()]
    assert [(row[0], row[1], row[2]) for row in rows] == [
        ("3", "one_cycle_broadcast", "56"), ("3", "d_cycles_broadcast", "168"),
        ("4", "one_cycle_broadcast", "240"), ("4", "d_cycles_broadcast", "960")]
    assert len(rows[1]) == len(rows[0]) + 1                 # the ratio, on the d-cycles row
    assert out.splitlines()[-1].startswith("PASS")
