"""Grading a whole class on Dask workers (collective_lib.autograde.classgrade, issue 26).

One generated class of ``cycles_crossover`` (the cheapest assignment to grade), 16
students of four kinds, is graded once sequentially, by one plain ``nbgrader
autograde`` of all students, which gives the reference grades; every parallel run must
give exactly those grades:

* an ``honest`` student hands in the instructor's solution, a ``buggy`` one a wrong
  answer, a ``hostile`` one an answer that kills its parent process and exits its own;
* a ``crash`` student's submission holds a ``timestamp.txt`` nbgrader cannot parse,
  which makes nbgrader itself fail on that student (whatever the notebook holds, it is
  graded: collective_lib/autograde/reading.py): it must cost that student's grade only.

The parallel runs are on a real ``LocalCluster`` of separate worker processes
(through ``--scheduler``, as on a cluster), on the default local cluster of the
command, whose workers are threads of the coordinator (in a coordinator that is
killed mid-run and started again) and with the gradebook on a PostgreSQL server that
the test starts (pgserver's binaries).
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

import nbgrader_harness as h
from collective_lib.autograde import classgrade

ASSIGNMENT = "cycles_crossover"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
HOSTILE = """
import os, signal
try:
    os.kill(os.getppid(), signal.SIGKILL)   # its parent: the sandbox's host, not the grader
finally:
    os._exit(3)                             # and the process that runs it
"""
#: The class: each student's kind of submission (``honest03``: an honest one).
KIND = {f"{kind}{i:02d}": kind for kind, count in
        (("honest", 6), ("buggy", 5), ("hostile", 3), ("crash", 2))
        for i in range(1, count + 1)}
STUDENTS = tuple(sorted(KIND))
GRADED = tuple(s for s in STUDENTS if KIND[s] != "crash")       # nbgrader grades them
CRASH = tuple(s for s in STUDENTS if KIND[s] == "crash")
#: A part of the class for the runs that test one thing other than the class's size.
FEW = ("buggy01", "buggy02", "honest01", "honest02", "hostile01", "hostile02")


def _answers(source):
    """The code answers of each kind, as source notebooks."""
    return {"honest": source,
            "buggy": h.replace_solution(source, "search_solution",
                                        "raise ValueError('I give up')"),
            "hostile": h.replace_solution(source, "predict_solution", HOSTILE, region=0)}


def _submit(course: Path) -> None:
    release = course / "release" / ASSIGNMENT / NOTEBOOK
    source = h.source_notebook(course, ASSIGNMENT, NOTEBOOK)
    notebooks = {kind: h.answered_release(release, answers)
                 for kind, answers in _answers(source).items()}
    for student, kind in KIND.items():
        folder = course / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True, exist_ok=True)
        if kind == "crash":
            nbformat.write(notebooks["honest"], folder / NOTEBOOK)
            (folder / "timestamp.txt").write_text("not a time")
        else:
            nbformat.write(notebooks[kind], folder / NOTEBOOK)


def _grades(course: Path, db_url: str | None = None) -> dict:
    """``{student: {grade_id: score}}`` from the gradebook, for every graded student."""
    from nbgrader.api import Gradebook, MissingEntry
    db_url = db_url or f"sqlite:///{course / 'gradebook.db'}"
    grades = {}
    with Gradebook(db_url) as gb:
        for student in STUDENTS:
            if not (course / "autograded" / student / ASSIGNMENT / NOTEBOOK).is_file():
                continue
            try:
                sub = gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, student)
            except MissingEntry:
                continue
            grades[student] = {g.name: g.score for g in sub.grades}
    return grades


def _copy(base: Path, dest: Path, students=STUDENTS) -> Path:
    """A copy of the released course ``base`` with the submissions of ``students``."""
    import shutil
    shutil.copytree(base, dest, ignore=shutil.ignore_patterns("autograded", "classgrade"))
    for student in set(STUDENTS) - set(students):
        shutil.rmtree(dest / "submitted" / student)
    return dest


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    """A course with ``cycles_crossover`` released and the class's submissions in."""
    course = h.released_copy(tmp_path_factory.mktemp("class") / "released", ASSIGNMENT)
    _submit(course)
    return course


@pytest.fixture(scope="module")
def sequential(released, tmp_path_factory):
    """The grades of one plain, sequential ``nbgrader autograde`` of the whole class."""
    course = _copy(released, tmp_path_factory.mktemp("sequential") / "course")
    with pytest.raises(h.NbgraderError, match="crash"):    # nbgrader fails on `crash` only
        h.run_nbgrader(course, "autograde", ASSIGNMENT, "--force")
    grades = _grades(course)
    assert tuple(sorted(grades)) == GRADED
    return grades


@pytest.fixture(scope="module")
def cluster():
    """A real Dask cluster of two worker processes, as an instructor's would be."""
    from distributed import LocalCluster
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0", memory_limit=0) as cluster:
        yield cluster


def test_the_class_differs_where_it_should(sequential):
    total = {kind: {sum(sequential[s].values()) for s in GRADED if KIND[s] == kind}
             for kind in ("honest", "buggy", "hostile")}
    assert all(len(scores) == 1 for scores in total.values()), total    # a kind, a grade
    assert total["honest"].pop() > max(total["buggy"].pop(), total["hostile"].pop())


def test_the_workers_of_a_scheduler_give_the_grades_of_a_sequential_run(
        released, sequential, cluster, tmp_path, capsys):
    course = _copy(released, tmp_path / "course")
    status = classgrade.main([ASSIGNMENT, "--course", str(course), "--scheduler",
                              cluster.scheduler_address])     # two batches of 8
    out = capsys.readouterr()
    assert status == 1, out                            # the crash is reported as a failure
    assert _grades(course) == sequential
    ledger = [json.loads(line) for line in
              (course / "classgrade" / f"{ASSIGNMENT}.jsonl").read_text().splitlines()]
    by_student = {entry["student"]: entry for entry in ledger}
    assert tuple(sorted(by_student)) == STUDENTS
    assert {s for s, e in by_student.items() if e["status"] == "failed"} == set(CRASH)
    for student in CRASH:
        assert student in by_student[student]["reason"] and f"FAILED {student}:" in out.out
        # the batch with the crashes failed, and its unfinished students were graded
        # again alone, so the reason is the student's own (nbgrader's error about its
        # timestamp)
        reason = by_student[student]["reason"]
        assert reason.startswith("nbgrader autograde exited with status 1 ("), reason
        assert "get_existing_timestamp" in reason, reason
    # graded in the cluster's worker processes, not in this one
    pids = {int(e["worker"].rsplit(":", 1)[1]) for e in ledger}
    assert os.getpid() not in pids and len(pids) >= 1
    assert "done" in out.err and "left 0" in out.err   # the progress bar


def test_a_killed_run_resumes_where_it_stopped(released, sequential, tmp_path):
    course = _copy(released, tmp_path / "course", FEW)
    ledger = course / "classgrade" / f"{ASSIGNMENT}.jsonl"
    env = dict(os.environ, PYTHONPATH=str(h.REPO_ROOT))
    cmd = [sys.executable, "-m", "collective_lib.autograde.classgrade", ASSIGNMENT,
           "--workers", "2", "--no-progress"]
    coordinator = subprocess.Popen(cmd + ["--batch", "1"], cwd=course, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and coordinator.poll() is None:
        if ledger.is_file() and '"graded"' in ledger.read_text():
            break
        time.sleep(0.1)
    coordinator.send_signal(signal.SIGKILL)           # no clean-up of any kind
    coordinator.wait()
    first = {json.loads(line)["student"]: json.loads(line)["status"]
             for line in ledger.read_text().splitlines()}
    assert "graded" in first.values() and len(first) < len(FEW), first
    _wait_for_orphans(course)

    result = subprocess.run(cmd, cwd=course, env=env, stdout=subprocess.PIPE,  # in batches
                            stderr=subprocess.STDOUT, text=True, timeout=300)
    assert result.returncode == 0, result.stdout
    graded_before = sorted(s for s, status in first.items() if status == "graded")
    # a student whose grading ended between the last ledger line and the kill is done
    # too: its autograded notebook and gradebook scores are complete
    skipped = int(re.search(r"(\d+) already graded", result.stdout).group(1))
    assert len(graded_before) <= skipped < len(FEW), result.stdout
    second = [json.loads(line)["student"] for line in ledger.read_text().splitlines()]
    assert not set(graded_before) & set(second[len(first):])   # not graded twice
    assert _grades(course) == {s: sequential[s] for s in FEW}   # as sequentially

    # A resubmission is graded again even when its file carries an old modification
    # time: nbgrader's collect keeps the student's save time (copy2), and a student
    # may set it back on purpose.
    from collective_lib.autograde.classgrade import course_settings, graded_students
    db_url, course_id = course_settings(course)
    student = graded_before[0]
    assert graded_students(course, ASSIGNMENT, [student], db_url, course_id) == {student}
    notebook = course / "submitted" / student / ASSIGNMENT / NOTEBOOK
    saved = notebook.stat().st_mtime - 3600
    notebook.write_text(notebook.read_text() + "\n")
    os.utime(notebook, (saved, saved))
    assert graded_students(course, ASSIGNMENT, [student], db_url, course_id) == set()


def _wait_for_orphans(course: Path, seconds: float = 60) -> None:
    """Every process the killed coordinator left (its workers, their nbgrader runs)
    ends by itself: nothing goes on writing to the gradebook."""
    import psutil
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = [p for p in psutil.process_iter(["cwd", "cmdline"])
                if p.info["cwd"] == str(course) and p.pid != os.getpid()]
        if not left:
            return
        time.sleep(0.2)
    pytest.fail(f"processes outlived their coordinator: {[p.info['cmdline'] for p in left]}")


def test_a_batch_reports_each_student_as_nbgrader_finishes_it(released, cluster, tmp_path):
    course = _copy(released, tmp_path / "course", FEW)
    db_url, course_id = classgrade.course_settings(course)
    batch = [(student, "") for student in ("buggy01", "honest01", "hostile01")]
    from distributed import Client
    with Client(cluster) as client:
        events, task = [], []
        client.subscribe_topic("progress", lambda event: events.append(
            (event[1], task[0].done())))
        task.append(client.submit(classgrade.grade_batch, str(course), ASSIGNMENT, batch,
                                  classgrade.worker_db_url(db_url), course_id,
                                  progress="progress", pure=False))
        outcomes = task[0].result()
    assert [o["status"] for o in outcomes] == ["graded"] * 3, outcomes
    # one event per student, each received while the batch still ran (the worker sends
    # them before its result, on the same ordered streams)
    assert events == [("buggy01", False)] * 3


def test_the_progress_counts_students_as_they_finish_and_settles_each_batch():
    import io
    from tqdm import tqdm
    batches = [[("a", ""), ("b", ""), ("c", "")], [("d", "")]]
    with tqdm(total=4, file=io.StringIO()) as bar:
        tally = classgrade.Tally(bar, batches)
        assert bar.fp.getvalue().endswith("done 0, failed 0, left 4]")    # shown at once
        tally.tick("a")
        tally.tick("a")
        assert (tally.done, tally.failed, tally.left, bar.n) == (2, 0, 2, 2)
        tally.settle("d", [{"status": "failed"}])
        assert (tally.done, tally.failed, tally.left, bar.n) == (2, 1, 1, 3)
        # nbgrader finished a and b; c failed and was graded again alone, in vain
        tally.settle("a", [{"status": "graded"}] * 2 + [{"status": "failed"}])
        assert (tally.done, tally.failed, tally.left, bar.n) == (2, 2, 0, 4)
        tally.tick("a")                                 # late: its batch is settled
        tally.tick("d")
        assert (tally.done, tally.failed, tally.left, bar.n) == (2, 2, 0, 4)
        assert bar.postfix == "done 2, failed 2, left 0"


def test_the_local_workers_are_threads_of_the_coordinator(monkeypatch):
    # a task only waits for its nbgrader subprocess: worker processes would add CPU only
    import io
    import logging
    from distributed import LocalCluster
    # Dask's default logging: a stream handler on its logger that passes everything
    logger, handler = logging.getLogger("distributed"), logging.StreamHandler(io.StringIO())
    closed, close = [], LocalCluster.__exit__

    def close_and_look(cluster, *exc):
        close(cluster, *exc)
        closed.append(handler.level)
    monkeypatch.setattr(LocalCluster, "__exit__", close_and_look)
    logger.addHandler(handler)
    try:
        with classgrade.dask_client(workers=2) as client:
            assert set(client.run(os.getpid).values()) == {os.getpid()}
            assert len(client.scheduler_info()["workers"]) == 2
            assert client.submit(os.getpid, pure=False).result() == os.getpid()
            assert handler.level == logging.WARNING
        # still quiet once the cluster has closed (its shutdown may log a closed comm
        # at INFO, with a traceback), then as before
        assert (closed, handler.level) == ([logging.WARNING], logging.NOTSET)
    finally:
        logger.removeHandler(handler)


def test_the_sqlite_url_of_the_workers_waits_for_the_lock():
    url = classgrade.worker_db_url("sqlite:////course/gradebook.db")
    assert url == f"sqlite:////course/gradebook.db?timeout={classgrade.SQLITE_BUSY_TIMEOUT}"
    assert classgrade.worker_db_url("postgresql://u:p@db/grades") == \
        "postgresql://u:p@db/grades"


def test_the_batches_keep_every_worker_busy():
    assert classgrade.batch_size(8, 2) == 4             # one nbgrader run per worker
    assert classgrade.batch_size(3, 2) == 2
    assert classgrade.batch_size(20, 2) == 10           # 2 runs of 10, not 16 + 4
    assert classgrade.batch_size(80, 2) == 20           # 4 runs of 20, not 32 + 32 + 16
    assert classgrade.batch_size(128, 2) == classgrade.MAX_BATCH == 32
    assert classgrade.batch_size(100, 2) == 25          # 4 runs of 25, not 32 + ... + 4
    assert classgrade.batch_size(300, 8) == 19          # 16 runs of at most 19
    assert classgrade.batch_size(40, 8) == 5
    assert classgrade.batch_size(1, 8) == 1


@pytest.fixture(scope="module")
def postgres(tmp_path_factory):
    """A PostgreSQL server of its own (pgserver's binaries, from PyPI), its URL."""
    pgserver = pytest.importorskip("pgserver", reason="pgserver (requirements.txt) brings "
                                   "the PostgreSQL server binaries; it is not installed")
    from sqlalchemy.engine import make_url
    server = pgserver.get_server(tmp_path_factory.mktemp("pgdata"), cleanup_mode="delete")
    try:
        server.psql("CREATE DATABASE gradebook;")
        yield make_url(server.get_uri("gradebook")).set(
            drivername="postgresql+psycopg2").render_as_string(hide_password=False)
    finally:
        server.cleanup()


def test_a_postgresql_gradebook_with_concurrent_writers(released, sequential, cluster,
                                                        postgres, tmp_path):
    course = _copy(released, tmp_path / "course", FEW)
    (course / "gradebook.db").unlink()
    h.run_nbgrader(course, "generate_assignment", ASSIGNMENT, "--force",
                   f"--CourseDirectory.db_url={postgres}")
    from distributed import Client
    with Client(cluster) as client:
        result = classgrade.run(course, ASSIGNMENT, client, db_url=postgres,
                                progress=False)        # two nbgrader runs at once
    assert result["failed"] == []
    assert tuple(sorted(result["graded"])) == FEW
    assert not (course / "gradebook.db").exists()     # nothing went to SQLite
    assert _grades(course, postgres) == {s: sequential[s] for s in FEW}



def test_a_busy_machine_is_named_before_grading():
    # real-time limits 1.5 times each budget: a process needs 1/1.5 of a core
    assert classgrade.busy_machine_warning(2, load=0.5, cores=2) is None
    assert classgrade.busy_machine_warning(2, load=1.0, cores=2) is None
    warning = classgrade.busy_machine_warning(2, load=4.2, cores=2)
    assert "a load average of 4.2 on 2 cores" in warning
    assert "-- --TrustedVerdict.time_scale=3" in warning
    assert classgrade.busy_machine_warning(8, load=0.0, cores=4) is not None
