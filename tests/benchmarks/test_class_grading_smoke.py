"""The class-grading benchmark runs end to end on a class of two and compares the grades."""
import os
import re

import pytest

BENCHMARK = "class_grading"   # benchmarks/class_grading.py, loaded by the bench fixture


@pytest.mark.skipif(os.geteuid() != 0, reason="grading needs root (the sandbox)")
def test_the_script_times_both_runs_and_checks_the_grades(bench, capsys):
    assert bench.main(["--students", "2", "--workers", "2", "--batch", "auto",
                       "--ceiling-rounds", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("cycles_crossover: 2 submissions, 2 workers")
    ceiling = re.fullmatch(r"machine ceiling: 2 copies of the same work take ([\d.]+) s "
                           r"against ([\d.]+) s alone: at most ([\d.]+) x", out[1])
    together, alone, most = map(float, ceiling.groups())
    # recomputed from the printed figures, each rounded to 0.01 s
    assert together > 0 and alone > 0 and most == pytest.approx(2 * alone / together, abs=0.05)
    assert out[3].startswith("nbgrader autograde (sequential)")
    assert out[4].startswith("classgrade --batch auto") and "GRADES DIFFER" not in out[4]
    assert re.fullmatch(r"goal: speed-up >= 1\.6 \(0\.8 x 2 workers\); best [\d.]+: "
                        r"(met|missed), [\d.]+ of the machine's ceiling", out[-1])
