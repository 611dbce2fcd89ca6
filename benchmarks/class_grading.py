"""Grading a whole class in parallel against one sequential nbgrader run (issue 26).

Generates a class of ``--students`` submissions of one assignment (the instructor's
solution and a wrong answer, alternately) in a fresh copy of the course, then grades
it twice from the same state:

* sequentially: one ``nbgrader autograde ASSIGNMENT --force`` for the whole class
  (one process, one sandbox template), as an instructor would without classgrade;
* in parallel: ``python -m collective_lib.autograde.classgrade ASSIGNMENT --force
  --workers N`` (a Dask LocalCluster of N worker threads), once per ``--batch``
  setting (``auto``: the command's default, a few students per nbgrader run;
  ``1``: one nbgrader run per student).

It prints each run's wall time, the time per submission, the speed-up over the
sequential run and the goal (0.8 N), and checks that every run gave the same
grades. With ``--rounds R`` the runs take turns R times and the medians count
(the speed of this machine drifts by a fifth between runs a minute apart).

First it measures what the machine itself gives N processes: the same work
(starting Python and importing nbgrader, as every grading run does) alone and
as N copies at once, taking turns (``--ceiling-rounds``); N times the time
alone over the time together is the most any N workers can reach, and each
speed-up is also given as a share of it. Grading needs root (the sandbox); the
script says so and exits with 2 when it cannot grade. It never fails on speed.

    python benchmarks/class_grading.py                       # cycles_crossover, 8 students
    python benchmarks/class_grading.py --assignment gray_codes --students 12 --workers 2
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))          # the harness that drives nbgrader
if str(REPO) not in sys.path:
    sys.path.insert(1, str(REPO))

import nbgrader_harness as h  # noqa: E402

#: A wrong answer for the first solution cell: the submission still runs every check.
WRONG = "raise ValueError('not done')"

#: What every grading run starts with, twice: a Python process that imports nbgrader's
#: applications and preprocessors (reading and unmarshalling files, allocating; about a
#: second each here). Prints its own wall time.
CEILING_WORK = """
import subprocess, sys, time
start = time.perf_counter()
for _ in range(2):
    subprocess.run([sys.executable, "-c", "import nbgrader.apps, nbgrader.preprocessors"],
                   check=True)
print(time.perf_counter() - start)
"""


def machine_ceiling(workers: int, rounds: int) -> tuple:
    """``(ceiling, seconds alone, seconds together)``: :data:`CEILING_WORK` alone and as
    ``workers`` copies at once, ``rounds`` times each taking turns (medians); the ceiling is
    ``workers`` times the time alone over the time the slowest copy took together."""
    def once(copies: int) -> float:
        procs = [subprocess.Popen([sys.executable, "-c", CEILING_WORK], text=True,
                                  stdout=subprocess.PIPE) for _ in range(copies)]
        return max(float(proc.communicate()[0]) for proc in procs)
    alone, together = [], []
    for _ in range(rounds):
        alone.append(once(1))
        together.append(once(workers))
    alone, together = statistics.median(alone), statistics.median(together)
    return workers * alone / together, alone, together


def make_class(course: Path, assignment: str, students: int) -> list[str]:
    """Release ``assignment`` in ``course`` and hand in ``students`` submissions."""
    h.generate_assignment(course, assignment)
    name = f"{assignment}.ipynb"
    source = h.source_notebook(course, assignment, name)
    release = course / "release" / assignment / name
    nb = h.nbformat.read(source, as_version=4)
    first = next(c.metadata["nbgrader"]["grade_id"] for c in nb.cells
                 if c.cell_type == "code" and c.metadata.get("nbgrader", {}).get("solution"))
    regions = h.find_cell(nb, first).source.count("### BEGIN SOLUTION")
    wrong = h.replace_solution(source, first, WRONG, region=0 if regions > 1 else None)
    ids = [f"s{i:03d}" for i in range(students)]
    for i, student in enumerate(ids):
        folder = course / "submitted" / student / assignment
        folder.mkdir(parents=True)
        h.nbformat.write(h.answered_release(release, source if i % 2 == 0 else wrong),
                         folder / name)
    return ids


def grades(course: Path, assignment: str, students) -> dict:
    return {s: h.read_scores(course, assignment, assignment, s)[0] for s in students}


def _timed(cmd, course: Path) -> tuple:
    """``(wall s, cores busy)``: the run's wall time and the CPU time of its processes
    (every descendant its parent reaped) per wall second."""
    env = dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent),
                                                 os.environ.get("PATH", "")]),
               PYTHONPATH=str(REPO))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=course, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stdout}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return seconds, cpu / seconds


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignment", default="cycles_crossover")
    parser.add_argument("--students", type=int, default=8)
    parser.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    parser.add_argument("--batch", action="append", default=None,
                        help="classgrade's --batch settings to time (auto or K; repeatable; "
                        "default: auto and 1)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="times each run is made, taking turns (medians count; "
                        "default 1)")
    parser.add_argument("--ceiling-rounds", type=int, default=3,
                        help="turns of the machine's own ceiling, alone and together "
                        "(default 3)")
    args = parser.parse_args(argv)
    for option in ("rounds", "ceiling_rounds"):
        if getattr(args, option) < 1:
            parser.error(f"--{option.replace('_', '-')} must be at least 1, "
                         f"not {getattr(args, option)}")
    if os.geteuid() != 0:
        print("grading needs root (the sandbox); nothing measured", file=sys.stderr)
        return 2
    batches = args.batch or ["auto", "1"]
    scratch = Path(tempfile.mkdtemp(prefix="class-grading-"))
    try:
        course = h.copy_course(scratch / "course")
        students = make_class(course, args.assignment, args.students)
        print(f"{args.assignment}: {args.students} submissions, {args.workers} workers, "
              f"{os.cpu_count()} cores (load average before: "
              f"{os.getloadavg()[0]:.2f})")
        ceiling, alone, together = machine_ceiling(args.workers, args.ceiling_rounds)
        print(f"machine ceiling: {args.workers} copies of the same work take {together:.2f} s "
              f"against {alone:.2f} s alone: at most {ceiling:.2f} x")
        print(f"{'run':34s} {'wall s':>8s} {'s/submission':>13s} {'speed-up':>9s} "
              f"{'cores busy':>11s}" + ("  speed-up per round" if args.rounds > 1 else ""))
        runs = {"nbgrader autograde (sequential)": [sys.executable, "-m", "nbgrader",
                                                    "autograde", args.assignment, "--force"]}
        for batch in batches:
            runs[f"classgrade --batch {batch}"] = [
                sys.executable, "-m", "collective_lib.autograde.classgrade", args.assignment,
                "--force", "--no-progress", "--workers", str(args.workers),
                *([] if batch == "auto" else ["--batch", str(batch)])]
        walls, busy, reference = {name: [] for name in runs}, {name: [] for name in runs}, None
        for _ in range(args.rounds):            # the runs take turns: the machine's speed drifts
            for name, cmd in runs.items():
                seconds, cores = _timed(cmd, course)
                walls[name].append(seconds)
                busy[name].append(cores)
                graded = grades(course, args.assignment, students)
                reference = reference or graded
                if graded != reference:
                    print(f"{name}: GRADES DIFFER from the first run")
                    return 1
        sequential = walls["nbgrader autograde (sequential)"]
        results = []
        for name in runs:
            wall = statistics.median(walls[name])
            speedup = statistics.median(sequential) / wall
            per_round = [s / w for s, w in zip(sequential, walls[name])]
            if name != "nbgrader autograde (sequential)":
                results.append(speedup)
            print(f"{name:34s} {wall:8.1f} {wall / args.students:13.2f} {speedup:9.2f} "
                  f"{statistics.median(busy[name]):11.2f}"
                  + (f"  {min(per_round):.2f}-{max(per_round):.2f}" if args.rounds > 1 else ""))
        goal = 0.8 * args.workers
        print(f"goal: speed-up >= {goal:.1f} (0.8 x {args.workers} workers); best "
              f"{max(results):.2f}: {'met' if max(results) >= goal else 'missed'}, "
              f"{max(results) / ceiling:.2f} of the machine's ceiling")
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
