"""The ring all-gather benchmark's two versions agree (results only; speed is not tested here)."""

BENCHMARK = "ring_allgather"   # benchmarks/ring_allgather.py, loaded by the bench fixture


def test_ours_and_simpy_agree_at_p16(bench):
    p = 16
    want = bench.expected_results(p)
    ours, ours_time, ours_msgs = bench.run_ours(p)
    theirs, simpy_time, simpy_msgs = bench.run_simpy(p)
    assert ours == theirs == want
    assert ours_time == simpy_time == p - 1
    assert ours_msgs == simpy_msgs == p * (p - 1)


def test_the_script_reports_its_checks(bench, capsys):
    bench.main(["--p", "16", "--repeat", "1"])
    out = capsys.readouterr().out
    assert "PASS  results agree" in out and "PASS  makespan = p - 1 = 15" in out
