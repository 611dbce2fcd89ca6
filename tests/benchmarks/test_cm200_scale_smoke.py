"""The CM-200 scale benchmark runs, and its event simulation agrees with numpy, at small d."""

BENCHMARK = "cm200_scale"   # benchmarks/cm200_scale.py, loaded by the bench fixture


def test_the_script_prints_one_agreeing_line_per_program_and_d(bench, capsys):
    assert bench.main(["--d", "2", "4", "--reduce-max-d", "2"]) == 0
    out = capsys.readouterr().out
    assert "PASS  the event simulator, the numpy executors" in out
    rows = [line.split() for line in out.splitlines() if line.startswith(("one_cycle", "d_cycles"))]
    assert [(row[0], row[1]) for row in rows] == [
        ("one_cycle_broadcast", "2"), ("one_cycle_broadcast", "4"), ("d_cycles_broadcast", "2"),
        ("d_cycles_broadcast", "4"), ("one_cycle_reduce", "2"), ("d_cycles_reduce", "2")]
    assert all(row[6] == "yes" for row in rows)
    assert rows[3][3:6] == ["30", "30", "30"]           # (2**4 - 1)(ts + tw ceil(4/4))
