"""The class-grading benchmark runs end to end on a class of two and compares the grades."""
import os

import pytest

BENCHMARK = "class_grading"   # benchmarks/class_grading.py, loaded by the bench fixture


@pytest.mark.skipif(os.geteuid() != 0, reason="grading needs root (the sandbox)")
def test_the_script_times_both_runs_and_checks_the_grades(bench, capsys):
    assert bench.main(["--students", "2", "--workers", "2", "--batch", "auto"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("cycles_crossover: 2 submissions, 2 workers")
    assert out[2].startswith("nbgrader autograde (sequential)")
    assert out[3].startswith("classgrade --batch auto") and "GRADES DIFFER" not in out[3]
    assert out[-1].startswith("goal: speed-up >= 1.6 (0.8 x 2 workers)")
