"""What grading one submission costs, phase by phase (issue 26, point 1).

For one honest submission (the instructor's solution) and one endless one
(the same notebook with one answer replaced by a loop that never returns),
this script grades each with ``nbgrader autograde`` in a fresh copy of the
course and prints where the time goes:

* the whole command (wall and CPU seconds of nbgrader and every process it
  waited for), the CPU the trusted checker's cgroup and the submission's
  cgroup used (nbgrader's own debug log), and what nbgrader itself spends
  outside the checker;
* one exchange between the checker and a student's process (a call of a
  student's function), with both on one CPU, as grading places them, and on
  two: waking a process on another CPU of a virtual machine costs some
  ten times more than on the same one;
* one step of a student's lock replayed by the lock checks' searches, and one start
  of a replay (a history of 100 steps), as ``_RemoteReplayer`` asks them;
* the start of a student process (forked by the student host, its cells run), with
  nothing forbidden and with the library's programs forbidden, and the poisoning
  alone, looked up in the forked process and prepared before the fork, as the host
  does (``poison.prepare``);
* the start-up of each kind of process, each in a new interpreter: nbgrader
  (importing ``nbgrader.apps``) and the part of it that is ``jsonschema`` (which
  imports ``rfc3987_syntax``, whose grammar is built at import time), the
  trusted checker (one per notebook) and the template that forks the student
  hosts (one per ``nbgrader autograde`` run);
* the same job run again by the checker's code in this process, phase by
  phase: the student host, and for every graded cell the student processes'
  start (fork and the student's cells) and the checks themselves; then the
  requests it asked of the student's processes, by kind, and how many of those
  processes it started.

Grading needs root (the sandbox); the script says so and exits with 2 when
it cannot grade. It never fails on speed.

    python benchmarks/grading_cost.py                       # reading_a_run
    python benchmarks/grading_cost.py --assignment gray_codes --answer gray_solution
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
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

ENDLESS = '''
while True:                   # never returns
    pass
'''

# Runs `nbgrader autograde` with TrustedVerdict._check wrapped: the checker's wall time
# and the job it was given go to the file named by the first argument.
_CAPTURE = '''
import json, sys, time
from collective_lib.autograde import verdict
capture = sys.argv[1]
original = verdict.TrustedVerdict._check
def _check(self, job):
    start = time.perf_counter()
    try:
        return original(self, job)
    finally:
        with open(capture, "w") as handle:
            json.dump({"job": job, "wall": time.perf_counter() - start}, handle)
verdict.TrustedVerdict._check = _check
from nbgrader.apps.nbgraderapp import main
sys.argv = ["nbgrader", *sys.argv[2:]]
main()
'''
_GROUP_CPU = re.compile(r"collective-(sandbox|checker)-\d+-\S*: peak memory \d+ bytes, "
                        r"([\d.]+) CPU s")


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed_process(cmd: list, **kwargs) -> tuple:
    """(wall s, CPU s of it and the processes it waited for, completed process)."""
    cpu, start = _children_cpu(), time.perf_counter()
    proc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, **kwargs)
    return time.perf_counter() - start, _children_cpu() - cpu, proc


def start_up() -> list:
    """Rows for the start-up of each kind of process, each in a new interpreter."""
    rows = []
    for what, code in (
            ("nbgrader start-up (import nbgrader.apps)", "import nbgrader.apps"),
            ("  of it: import jsonschema (rfc3987_syntax)", "import jsonschema"),
            ("checker start-up, per notebook (its imports)",
             "import collective_lib.autograde.checker"),
            ("host template start-up, per autograde run (its imports)",
             "from collective_lib.autograde import student; student._preload()")):
        wall, cpu, _ = timed_process([sys.executable, "-c", code])
        rows.append((what, wall, cpu))
    return rows


def autograde(course: Path, assignment: str, student: str, capture: Path) -> list:
    """Rows for one `nbgrader autograde` of ``student``; the checker's job goes to ``capture``."""
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(course.parent / ".jupyter-config"),
               PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ["PATH"]]))
    wall, cpu, proc = timed_process(
        [sys.executable, "-c", _CAPTURE, str(capture), "autograde", assignment, "--force",
         f"--student={student}", "--log-level=DEBUG"], cwd=course, env=env)
    if proc.returncode != 0:
        raise SystemExit(f"nbgrader autograde failed:\n{proc.stdout}")
    groups = {kind: float(cpu_s) for kind, cpu_s in _GROUP_CPU.findall(proc.stdout)}
    checker = json.loads(capture.read_text())["wall"]
    return [("nbgrader autograde, whole command", wall, cpu),
            ("  of it: the checker and its processes", checker,
             groups.get("checker", 0.0) + groups.get("sandbox", 0.0)),
            ("    the checker's cgroup", None, groups.get("checker")),
            ("    the submission's cgroup (host, student processes)", None,
             groups.get("sandbox")),
            ("  of it: nbgrader outside the checker", wall - checker, None)]


#: The row of a student process's start in :func:`phases`, which also counts them.
_PROCESS_ROW = "  a student process (fork, the student's cells)"


def phases(job: dict) -> list:
    """Rows for the checker's phases, the job run again in this process (wall; CPU here),
    then what it asked of the student's processes: its requests by kind (a call of a
    student's function, a resumed PE, a lock's replay started or stepped, ...) and the
    processes started."""
    from collective_lib.autograde import checker, remote
    from collective_lib.autograde.sandbox import SandboxUser

    rows = []
    asked: dict = {}
    request = remote.StudentProcess.request

    def counted(process, message, *args, **kwargs):
        kind = message.get("kind")
        asked[kind] = asked.get(kind, 0) + 1
        return request(process, message, *args, **kwargs)

    def timed(owner, name, label, once=False):
        original = getattr(owner, name)

        def wrapper(*args, **kwargs):
            wall, cpu = time.perf_counter(), time.process_time()
            try:
                return original(*args, **kwargs)
            finally:
                text = label(args)
                if not (once and any(row[0] == text for row in rows)):
                    rows.append((text, time.perf_counter() - wall,
                                 time.process_time() - cpu))
        setattr(owner, name, wrapper)
        return original

    originals = {
        (remote.Host, "__init__"): timed(
            remote.Host, "__init__",
            lambda a: "student host (here: its template's start and imports, then the fork)"),
        (remote.Host, "_wait_ready"): timed(
            remote.Host, "_wait_ready", lambda a: "  waiting until the host can fork",
            once=True),
        (remote.StudentProcess, "__init__"): timed(
            remote.StudentProcess, "__init__",
            lambda a: _PROCESS_ROW),
        (checker, "_grade"): timed(checker, "_grade", lambda a: f"  {a[0]['id']}: checks"),
        (remote.Host, "close"): timed(remote.Host, "close", lambda a: "student host closed"),
        (remote.StudentProcess, "request"): request,
    }
    remote.StudentProcess.request = counted
    job = {**job, "limits": {k: v for k, v in job["limits"].items() if k != "group"}}
    job.pop("template_fd", None)
    try:
        with SandboxUser() as user:
            job["uid"] = user.uid
            checker.check_notebook(job)
    finally:
        for (owner, name), original in originals.items():
            setattr(owner, name, original)
    started = sum(row[0] == _PROCESS_ROW for row in rows)
    return rows + [(f"requests: {kind} {count:,}", None, None)
                   for kind, count in sorted(asked.items())] + [
        (f"student processes started: {started}", None, None)]


def round_trips(calls: int = 5000) -> list:
    """Rows for one call of a student's function from the checker (unconfined), with the
    student's process on the checker's CPU and on another one (``verdict.notebook_cpu``)."""
    from collective_lib.autograde.remote import Host, Sandbox

    allowed = sorted(os.sched_getaffinity(0))
    placements = [("on the checker's CPU", allowed[0])]
    if len(allowed) > 1:
        placements.append(("on another CPU", allowed[1]))
    rows = []
    try:
        os.sched_setaffinity(0, {allowed[0]})
        for where, cpu in placements:
            cells = ["def gray(i):\n    return i ^ (i >> 1)\n"]
            host = Host(cells, [], None, {}, cpu=cpu)
            sandbox = Sandbox(host, {}, cells)
            try:
                gray = sandbox.bind(["gray"])["gray"]
                gray(0)                                      # the process starts
                wall, cpu_s = time.perf_counter(), time.process_time()
                for i in range(calls):
                    gray(i)
                rows.append((f"one call of a student's function, its process {where} (us)",
                             (time.perf_counter() - wall) / calls * 1e6,
                             (time.process_time() - cpu_s) / calls * 1e6))
            finally:
                sandbox.end_cell()
                host.close()
    finally:
        os.sched_setaffinity(0, allowed)
    return rows


def replay_steps(steps: int = 5000, history: int = 100) -> list:
    """Rows for a student's lock replayed by the checker's searches (us; its process on the
    checker's CPU, as grading places it): one step more of the object a replay started, and
    one start that plays a history of ``history`` steps (the searches of ``broken_lock``'s
    solution ask some 40,000 steps and 2,700 starts of about 120 steps each)."""
    from collective_lib.autograde.remote import Host, Sandbox

    cpu = sorted(os.sched_getaffinity(0))[0]
    cells = ["from collective_lib.algorithms.sync import cas_spin_lock\n"]
    # its acquire tries its CAS again each time it is told False: a step per CAS
    played = [("call", "acquire")] + [("send", False)] * history
    rows = []
    allowed = os.sched_getaffinity(0)
    host = Host(cells, [], None, {}, cpu=cpu)
    sandbox = Sandbox(host, {}, cells)
    try:
        os.sched_setaffinity(0, {cpu})
        replayer = sandbox.bind(["cas_spin_lock"])["cas_spin_lock"].replayer()
        replayer.start((0, 2), played[:1])                  # the process starts
        for what, count, ask in (
                ("one step of a student's lock replayed", steps,
                 lambda: replayer.step((0, 2), ("send", False))),
                (f"one start of its replay, a history of {history} steps", steps // 50,
                 lambda: replayer.start((0, 2), played))):
            wall, cpu_s = time.perf_counter(), time.process_time()
            for _ in range(count):
                ask()
            rows.append((f"{what}, its process on the checker's CPU (us)",
                         (time.perf_counter() - wall) / count * 1e6,
                         (time.process_time() - cpu_s) / count * 1e6))
    finally:
        os.sched_setaffinity(0, allowed)
        sandbox.end_cell()
        host.close()
    return rows


def process_starts(starts: int = 20) -> list:
    """Rows for the start of a student process (ms): forked by the host with the cells of a
    notebook, with nothing forbidden and with every program of the catalog and the tree
    helpers forbidden (as the scatter and broadcast exercises forbid them); then the
    poisoning alone in a process forked from this one, looked up there and prepared here
    before the fork (``poison.prepare``, what the host does), side by side."""
    from collective_lib.autograde import poison, student
    from collective_lib.autograde.remote import Host
    from collective_lib.grading import TREE_HELPERS, library_programs

    forbidden = sorted({*library_programs(), *TREE_HELPERS})
    cells = ["import math\nfrom collective_lib import recv, send\n",
             "def gray(i):\n    return i ^ (i >> 1)\n"]
    rows = []
    host = Host(cells, [], None, {}, cpu=sorted(os.sched_getaffinity(0))[0])
    try:
        host.fork().kill()                                   # the host is ready
        for what, names in (("nothing forbidden", []), ("the library's programs forbidden",
                                                        forbidden)):
            wall = time.perf_counter()
            for _ in range(starts):
                host.fork(names).kill()
            rows.append((f"a student process's start, {what} (ms)",
                         (time.perf_counter() - wall) / starts * 1e3, None))
    finally:
        host.close()
    student._preload()
    for what, prepared in (("looked up in the forked process", False),
                           ("prepared before the fork", True)):
        if prepared:
            poison.prepare(forbidden)
        took = []
        for _ in range(starts):
            read, write = os.pipe()
            pid = os.fork()
            if pid == 0:                     # the child: poison, report, leave
                start = time.perf_counter()
                poison.poison(forbidden)
                os.write(write, f"{time.perf_counter() - start}".encode())
                os._exit(0)
            os.close(write)
            took.append(float(os.read(read, 64)))
            os.close(read)
            os.waitpid(pid, 0)
        poison._PREPARED.clear()
        rows.append((f"poisoning alone, {what} (ms)", sum(took) / starts * 1e3, None))
    return rows


def _print(rows: list) -> None:
    for what, wall, cpu in rows:
        wall_s = "" if wall is None else f"{wall:8.2f}"
        cpu_s = "" if cpu is None else f"{cpu:8.2f}"
        print(f"{what:66s} {wall_s:>8s} {cpu_s:>8s}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--assignment", default="reading_a_run")
    parser.add_argument("--answer", default="half_duplex_solution",
                        help="the solution cell the endless submission replaces")
    args = parser.parse_args(argv)
    if os.geteuid() != 0:
        print("grading needs root (the sandbox); nothing measured", file=sys.stderr)
        return 2
    scratch = Path(tempfile.mkdtemp(prefix="grading-cost-"))
    try:
        course = h.copy_course(scratch / "course")
        h.generate_assignment(course, args.assignment)
        name = f"{args.assignment}.ipynb"
        source = h.source_notebook(course, args.assignment, name)
        submissions = {"honest": h.nbformat.read(source, as_version=4),
                       "endless": h.replace_solution(source, args.answer, ENDLESS)}
        print(f"{'phase':66s} {'wall s':>8s} {'CPU s':>8s}")
        _print(start_up())
        _print(round_trips())
        _print(replay_steps())
        _print(process_starts())
        for student, notebook in submissions.items():
            target = course / "submitted" / student / args.assignment
            target.mkdir(parents=True)
            h.nbformat.write(notebook, target / name)
            print(f"-- {student} submission ({args.assignment}"
                  + (f", {args.answer} loops forever)" if student == "endless" else ")"))
            capture = scratch / f"{student}.json"
            _print(autograde(course, args.assignment, student, capture))
            print("  the checker's phases, run again here (CPU: the checker's own)")
            _print(phases(json.loads(capture.read_text())["job"]))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
