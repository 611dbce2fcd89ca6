"""Grade an assignment for the whole class on N workers (issue 26, points 1 and 2).

Run in the course directory (``exercises/`` or a copy)::

    python -m collective_lib.autograde.classgrade ASSIGNMENT              # all cores
    python -m collective_lib.autograde.classgrade ASSIGNMENT --workers 4
    python -m collective_lib.autograde.classgrade ASSIGNMENT --scheduler tcp://host:8786
    python -m collective_lib.autograde.classgrade ASSIGNMENT --retry-failed
    python -m collective_lib.autograde.classgrade ASSIGNMENT -- --TrustedVerdict.cell_timeout=60

What it does, and why so:

* **Each task an ordinary ``nbgrader autograde``.** A task runs ``nbgrader autograde
  ASSIGNMENT --force`` as a subprocess, in the course directory, for one student
  (``--student=ID``) or a batch of a few (``--student='*'`` with every other student in
  ``--CourseDirectory.student_id_exclude``), so every submission takes exactly
  nbgrader's own path with the course's configuration: ``TrustedVerdict``, its trusted
  checker and its sandboxed student processes (``exercises/SANDBOX.md``). Nothing is
  graded in the worker's own process; the grades are those of a sequential run because
  each is computed by the same command on the same files (the tests compare them cell
  by cell). Batches (:func:`batch_size`, ``--batch``) pay nbgrader's start and the
  sandbox's template once for several students.
* **Workers come from an existing engine, Dask distributed.** By default a
  ``LocalCluster`` of worker *threads* in this process, one per core: a task only waits
  for its ``nbgrader autograde`` subprocess, where all the grading happens, so worker
  processes would only add two Python processes per worker (the worker and its
  nanny) and their CPU: 4 to 8 CPU seconds more for a class of 32 short submissions
  on two workers, and a speed-up of 1.38-1.43 instead of 1.59-1.67
  (``benchmarks/README.md``). With ``--scheduler ADDRESS`` the workers of a running
  Dask cluster, separate processes on other machines or this one: started on
  a Slurm, PBS or SGE cluster with dask-jobqueue, on a JupyterHub with Dask Gateway, or
  by hand (``dask scheduler`` / ``dask worker ADDRESS --nthreads CORES``). A worker there
  needs the course directory at the same path (a shared file system), this
  environment, and root (the sandbox; see the README, "Grading a class on many
  workers"). Dask rather than a home-made pool: it already schedules, balances,
  reports worker deaths (a task whose worker dies is retried elsewhere, then reported
  as failed) and runs on the clusters instructors have.
* **One crash costs one grade.** nbgrader goes on with a batch's other students when
  one fails; the students a failed batch left unfinished are graded again alone. A
  student whose own ``nbgrader autograde`` exits non-zero, runs past ``--timeout`` (its
  whole process tree is killed) or whose worker dies is recorded as failed with its
  reason (the error nbgrader raised and its last lines) and the others go on. The
  subprocess gets ``PR_SET_PDEATHSIG``, so it dies with its worker (the local
  cluster's workers are threads of the coordinator, so with a killed coordinator
  too): no orphan goes on writing to the gradebook after a run was stopped. A
  trusted checker and sandbox host that such an nbgrader had started end by
  themselves within seconds (seen: under 10 s) and never write the gradebook.
* **Resumption.** A student is skipped (without ``--force``) when the work is already
  done: every notebook of the assignment is in ``autograded/ID/ASSIGNMENT/`` and newer
  than the submission, and the gradebook holds that submission with a score for every
  autograded cell (``nbgrader autograde`` writes the notebook after its grades, and
  ``--force`` removes the old folder first, so a run stopped half-way never looks
  done). Every finished task is appended to the ledger
  ``classgrade/ASSIGNMENT.jsonl`` of the course (one JSON line, written and flushed by
  the coordinator alone; a torn last line is ignored). A student whose last entry
  there is a failure of the same submission (same SHA-256 of its files) is not tried
  again unless ``--retry-failed`` is given: a crash that is the submission's own would
  crash again. A lock file keeps two coordinators of one assignment apart.
* **The gradebook with concurrent writers.** nbgrader opens the gradebook many times
  per run, each time briefly (``init_assignment``, ``OverwriteCells``,
  ``SaveAutoGrades``, ``FlagForReview``): nothing holds a transaction while the
  checker grades (seconds to minutes); each write is a short transaction that touches
  only that student's rows. On SQLite those transactions take the database-wide write
  lock, and Python's sqlite3 gives up with "database is locked" after 5 s of waiting.
  The tasks therefore get the course's SQLite URL with ``?timeout=600`` (the busy
  timeout of Python's sqlite3, which SQLAlchemy's pysqlite dialect takes from the URL):
  a writer waits its turn instead of failing. Serialising the DB-writing part would
  need changes inside nbgrader, and per-task copies merged afterwards would have to
  re-implement nbgrader's gradebook logic; a busy timeout changes nothing else. Before
  any task starts, the coordinator opens the gradebook once, which creates its tables
  and the course's row (two first writers would otherwise race to insert the same
  course). Measured on the 2-core machine under load from other work (load average
  7): 8 processes, each opening nbgrader's ``Gradebook`` 15 times in a row and writing
  a student, a submission and its grades (far more often than grading writes) took
  0.9 to 1.0 s per round on average, 3.6 s at most, and met no lock error, with
  Python's 5 s or with 600 s; the 600 s leave room for a busier machine or a slow
  disk. No lock error either in the tests and ``benchmarks/class_grading.py``. SQLite
  is for workers on one machine (its locks do not work over NFS); with workers on
  several machines, use a server database that nbgrader supports, such as
  PostgreSQL: ``--db-url postgresql://user@host/gradebook`` or
  ``c.CourseDirectory.db_url`` in the course configuration, as for every nbgrader
  command of the course. Its row locks let the writers of different students proceed
  at once.
* **Progress.** A tqdm bar on stderr: done / failed / left, and tqdm's estimate of the
  time to go. It moves for each student, not each batch: a batch's task reads
  nbgrader's output as it comes and, for every student nbgrader has finished (the line
  it logs after writing that student's notebooks), logs a Dask event that the
  coordinator subscribes to (:class:`Tally`); the batch's result settles its failures.
  Dask's events work for remote workers alike, and a worker sends them before its
  result on the same ordered streams. A student cannot forge that line (a student's
  process has /dev/null for its stdio, ``exercises/SANDBOX.md``), and a tick only moves
  the bar: the grades, the ledger and the final counts come from the batch's result.

Exit status: 0 when every submission is graded, 1 when some failed (they are listed
with their reasons), 2 when nothing could be started.
"""
from __future__ import annotations

import argparse
import contextlib
import fcntl
import glob
import hashlib
import json
import logging
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .plain_text import terminal_text

__all__ = ["main", "run", "dask_client", "default_workers", "batch_size",
           "busy_machine_warning", "plan", "Plan",
           "grade_batch", "grade_student", "Outcome", "Ledger", "graded_students",
           "submitted_students", "fingerprint", "course_settings", "worker_db_url",
           "prepare_gradebook", "SQLITE_BUSY_TIMEOUT", "TASK_TIMEOUT", "LEDGER_DIR",
           "MAX_BATCH", "REASON_LINES", "Tally"]

#: Seconds an SQLite writer waits for the lock before it fails (Python's default is 5).
SQLITE_BUSY_TIMEOUT = 600
#: Seconds one task (one student's ``nbgrader autograde``) may take by default: more than
#: the course's notebook limit (``TrustedVerdict.notebook_timeout``, 1800 s) per notebook.
TASK_TIMEOUT = 3600
LEDGER_DIR = "classgrade"
#: Most students graded by one ``nbgrader autograde`` run (see :func:`batch_size`): for a
#: class of 128 on 2 workers, 32 gave a speed-up of 1.71-2.00 and 16 1.56-1.85, taking
#: turns (benchmarks/README.md); the bar moves for each student whatever the batch.
MAX_BATCH = 32
#: Lines of nbgrader's output kept as a failure's reason.
REASON_LINES = 12

# The last line of this form in nbgrader's output names the error (put first in a reason).
_EXCEPTION = re.compile(r"^\s*[\w.]*(Error|Exception|Exit|Interrupt)\b[^:]*: ")
# What nbgrader logs once for every student it has finished, after writing the student's
# notebooks and grades (its converter's ``set_permissions``): a batch's live progress.
_FINISHED = "Setting destination file permissions"

# The launcher of every task: it asks the kernel to kill nbgrader when the worker that
# started it dies (PR_SET_PDEATHSIG survives exec; it follows the thread that started it,
# which waits for it to the end), then becomes nbgrader.
_LAUNCH = ("import ctypes, os, sys\n"
           "ctypes.CDLL(None, use_errno=True).prctl(1, 9, 0, 0, 0)\n"
           "if os.getppid() != int(sys.argv[1]): os._exit(70)\n"
           "os.execv(sys.executable, [sys.executable, '-m', 'nbgrader'] + sys.argv[2:])\n")


@dataclass
class Outcome:
    """What one task did: a line of the ledger."""

    student: str
    status: str                 # "graded" or "failed"
    fingerprint: str
    seconds: float
    reason: str = ""
    worker: str = ""
    finished: float = field(default_factory=time.time)


# --------------------------------------------------------------------------- the task


def grade_student(course: str, assignment: str, student: str, db_url: str,
                  fingerprint: str = "", timeout: float = TASK_TIMEOUT,
                  extra_args: tuple = ()) -> dict:
    """Autograde one student's submission with ``nbgrader autograde``; never raises.

    Runs on a Dask worker (or anywhere): a subprocess in the course directory, in a
    session of its own, killed with its whole process tree after ``timeout`` seconds.
    Returns an :class:`Outcome` as a dict.
    """
    start = time.monotonic()
    code, reason = _autograde(course, assignment, [f"--student={glob.escape(student)}"],
                              db_url, timeout, extra_args)
    return asdict(Outcome(student, "graded" if code == 0 else "failed", fingerprint,
                          round(time.monotonic() - start, 3), reason, _worker_name()))


def grade_batch(course: str, assignment: str, batch: list, db_url: str, course_id: str,
                timeout: float = TASK_TIMEOUT, extra_args: tuple = (),
                progress: str | None = None) -> list:
    """Autograde the students of ``batch`` (``[(student, fingerprint)]``) in one
    ``nbgrader autograde`` run; never raises. Returns one :class:`Outcome` dict each.

    One run for several students pays nbgrader's start and the sandbox's template
    process once (seconds: most of a short assignment's cost). nbgrader goes on with
    the other students when one fails; a student whose grading is not complete after
    the run (failed, or the run was stopped) is graded again alone by
    :func:`grade_student`, so a crash costs its own grade only and its reason is its own.

    With ``progress`` (a Dask event topic; the task must run on a Dask worker), the
    batch logs its first student's id under that topic each time nbgrader has finished
    one of its students, so that the coordinator's bar moves before the batch ends.
    """
    if len(batch) == 1 or any("," in student for student, _ in batch):
        return [grade_student(course, assignment, s, db_url, fp, timeout, extra_args)
                for s, fp in batch]
    start = time.monotonic()
    names = {student for student, _ in batch}
    others = [s for s in submitted_students(Path(course), assignment) if s not in names]
    selection = ["--student=*"] + ([f"--CourseDirectory.student_id_exclude={','.join(others)}"]
                                   if others else [])
    code, _ = _autograde(course, assignment, selection, db_url, timeout * len(batch),
                         extra_args, _reporter(progress, batch[0][0]))
    done = names if code == 0 else graded_students(Path(course), assignment, sorted(names),
                                                   db_url, course_id)
    share = round((time.monotonic() - start) / len(batch), 3)
    return [asdict(Outcome(s, "graded", fp, share, "", _worker_name())) if s in done
            else grade_student(course, assignment, s, db_url, fp, timeout, extra_args)
            for s, fp in batch]


def _worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def _reporter(topic: str | None, batch_id: str):
    """None, or a function of nbgrader's output lines that logs ``batch_id`` under the Dask
    event ``topic`` for every student nbgrader has finished (read by :class:`Tally`)."""
    if topic is None:
        return None
    from distributed import get_worker
    worker = get_worker()

    def report(line: str) -> None:
        if _FINISHED in line:
            worker.log_event(topic, batch_id)
    return report


def _autograde(course: str, assignment: str, selection: list, db_url: str, timeout: float,
               extra_args, on_line=None) -> tuple[int | None, str]:
    """Run ``nbgrader autograde``: ``(exit status or None, reason of a failure)``; each
    line of its output goes to ``on_line`` as it comes, when given."""
    cmd = [sys.executable, "-c", _LAUNCH, str(os.getpid()), "autograde", assignment,
           *selection, "--force", f"--CourseDirectory.db_url={db_url}", *extra_args]
    env = dict(os.environ)
    # nbgrader runs helper programs (alembic) by name: find them beside this interpreter.
    env["PATH"] = os.pathsep.join([os.path.dirname(sys.executable), env.get("PATH", "")])
    try:
        proc = subprocess.Popen(cmd, cwd=course, env=env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, errors="replace", start_new_session=True)
    except OSError as exc:
        return None, f"could not start nbgrader: {exc}"
    out = []
    reader = threading.Thread(target=_drain, args=(proc.stdout, out, on_line), daemon=True)
    reader.start()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_tree(proc.pid)
        proc.wait()
        code, reason = None, f"nbgrader autograde ran past {timeout:g} s and was stopped"
    else:
        code = proc.returncode
        reason = "" if code == 0 else f"nbgrader autograde exited with status {code}"
    reader.join()           # to the end of its output, as communicate() would
    if code != 0:
        lines = [line.rstrip("\n") for line in out if line.strip()]
        errors = [line.strip() for line in lines if _EXCEPTION.match(line)]
        reason += (f" ({errors[-1]})" if errors else "") + (
            ":\n" + "\n".join(lines[-REASON_LINES:]) if lines else "")
    return code, reason


def _drain(stream, out: list, on_line) -> None:
    """Read ``stream`` to its end into ``out``, handing each line to ``on_line``."""
    for line in stream:
        out.append(line)
        if on_line is not None:
            try:
                on_line(line)
            except Exception:       # the pipe must still be read, or nbgrader blocks on it
                logging.getLogger(__name__).exception("live progress stopped")
                on_line = None
    stream.close()


def _kill_tree(pid: int) -> None:
    """SIGKILL ``pid`` and every process below it (checkers run in sessions of their own)."""
    import psutil
    try:
        parent = psutil.Process(pid)
        family = parent.children(recursive=True) + [parent]
    except psutil.NoSuchProcess:
        return
    for proc in family:
        with contextlib.suppress(psutil.NoSuchProcess):
            proc.kill()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


# ------------------------------------------------------------------ the course's state


def course_settings(course: Path) -> tuple[str, str]:
    """``(db_url, course_id)`` of the course, from its ``nbgrader_config.py``."""
    from traitlets.config.loader import PyFileConfigLoader
    db_url, course_id = f"sqlite:///{course / 'gradebook.db'}", "default_course"
    if (course / "nbgrader_config.py").is_file():
        config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
        directory = config.get("CourseDirectory", {})
        if directory.get("db_url"):
            db_url = directory["db_url"]
        elif directory.get("root"):
            db_url = f"sqlite:///{Path(directory['root']).resolve() / 'gradebook.db'}"
        course_id = directory.get("course_id") or course_id
    return db_url, course_id


def worker_db_url(db_url: str, busy_timeout: float = SQLITE_BUSY_TIMEOUT) -> str:
    """``db_url`` with a busy timeout when it is SQLite (see the module's docstring)."""
    from sqlalchemy.engine import make_url
    url = make_url(db_url)
    if url.get_backend_name() == "sqlite" and "timeout" not in url.query:
        url = url.update_query_dict({"timeout": f"{busy_timeout:g}"})
    return url.render_as_string(hide_password=False)


def submitted_students(course: Path, assignment: str) -> list[str]:
    """The students with a folder ``submitted/ID/ASSIGNMENT``, sorted."""
    return sorted(p.parent.name for p in (course / "submitted").glob(f"*/{assignment}")
                  if p.is_dir())


def _submitted_files(course: Path, assignment: str, student: str) -> list[Path]:
    folder = course / "submitted" / student / assignment
    return sorted(p for p in folder.rglob("*")
                  if p.is_file() and ".ipynb_checkpoints" not in p.parts)


def fingerprint(course: Path, assignment: str, student: str) -> str:
    """SHA-256 of the submission's files (names and contents)."""
    digest = hashlib.sha256()
    folder = course / "submitted" / student / assignment
    for path in _submitted_files(course, assignment, student):
        digest.update(str(path.relative_to(folder)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def graded_students(course: Path, assignment: str, students, db_url: str,
                    course_id: str) -> set[str]:
    """The students of ``students`` whose grading is complete and newer than their work.

    Complete: every notebook the gradebook lists for the assignment is in
    ``autograded/ID/ASSIGNMENT/`` no older than any submitted file, and the gradebook
    has that submission with a score for every autograded (code) cell. A submitted
    file's age is its inode's change time: nbgrader's submit and collect keep the
    student's own modification time (``copy2``), which may be older than the last
    grading, or set back on purpose, while the change time is the kernel's.
    """
    from nbgrader.api import Gradebook, MissingEntry
    done = set()
    with Gradebook(db_url, course_id) as gb:
        notebooks = [nb.name for nb in gb.find_assignment(assignment).notebooks]
        for student in students:
            files = _submitted_files(course, assignment, student)
            newest = max((p.stat().st_ctime for p in files), default=0.0)
            graded = [course / "autograded" / student / assignment / f"{name}.ipynb"
                      for name in notebooks]
            if not notebooks or not all(p.is_file() and p.stat().st_mtime >= newest
                                        for p in graded):
                continue
            try:
                complete = all(
                    grade.auto_score is not None
                    for name in notebooks
                    for grade in gb.find_submission_notebook(name, assignment, student).grades
                    if grade.cell.cell_type == "code")
            except MissingEntry:
                complete = False
            if complete:
                done.add(student)
    return done


def prepare_gradebook(db_url: str, course_id: str, assignment: str) -> None:
    """Create the gradebook's tables and course row once, before any writer starts."""
    from nbgrader.api import Gradebook, MissingEntry
    with Gradebook(db_url, course_id) as gb:
        try:
            gb.find_assignment(assignment)
        except MissingEntry:
            raise SystemExit(f"The gradebook {_safe(db_url)} has no assignment "
                             f"{assignment!r}: "
                             f"run `nbgrader generate_assignment {assignment}` first.")


def _safe(db_url: str) -> str:
    from sqlalchemy.engine import make_url
    return make_url(db_url).render_as_string(hide_password=True)


class Ledger:
    """``classgrade/ASSIGNMENT.jsonl``: one line per finished task, the coordinator's alone."""

    def __init__(self, course: Path, assignment: str):
        self.folder = course / LEDGER_DIR
        self.path = self.folder / f"{assignment}.jsonl"
        self.lock_path = self.folder / f"{assignment}.lock"

    def last(self) -> dict:
        """The last entry of every student (a torn last line, from a kill, is ignored)."""
        entries = {}
        if self.path.is_file():
            for line in self.path.read_text().splitlines():
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                entries[entry["student"]] = entry
        return entries

    @contextlib.contextmanager
    def locked(self):
        """Hold the assignment's lock: two coordinators never grade one assignment."""
        self.folder.mkdir(exist_ok=True)
        with open(self.lock_path, "a") as lock:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise SystemExit(f"Another classgrade run holds {self.lock_path}; "
                                 "wait for it to finish.") from None
            with open(self.path, "a") as self._out:
                yield self

    def append(self, outcome: dict) -> None:
        # a kill between two lines leaves whole lines; only one cut mid-line is torn
        self._out.write(json.dumps(outcome, sort_keys=True) + "\n")
        self._out.flush()
        os.fsync(self._out.fileno())


# ------------------------------------------------------------------------ the command


@dataclass
class Plan:
    """Who is graded in this run and who is not, and why."""

    todo: list = field(default_factory=list)           # [(student, fingerprint)]
    already_graded: list = field(default_factory=list)
    failed_before: list = field(default_factory=list)   # ledger entries


def plan(course: Path, assignment: str, db_url: str, course_id: str, ledger: Ledger,
         students=None, force: bool = False, retry_failed: bool = False) -> Plan:
    """Decide, from the files, the gradebook and the ledger, what this run grades."""
    everyone = submitted_students(course, assignment)
    if students:
        import fnmatch
        everyone = [s for s in everyone if any(fnmatch.fnmatchcase(s, p) for p in students)]
    result = Plan()
    last = ledger.last()
    graded = set() if force else graded_students(course, assignment, everyone, db_url,
                                                 course_id)
    for student in everyone:
        print_ = fingerprint(course, assignment, student)
        entry = last.get(student)
        if student in graded:
            result.already_graded.append(student)
        elif (not force and not retry_failed and entry and entry["status"] == "failed"
              and entry["fingerprint"] == print_):
            result.failed_before.append(entry)
        else:
            result.todo.append((student, print_))
    return result


class Tally:
    """The progress bar's counts. A batch's students are ticked off one by one as nbgrader
    finishes them (:meth:`tick`, from the Dask client's thread, on the batch's events) and
    settled when the batch returns (:meth:`settle`): its failures, and any tick whose
    event had not arrived yet. An event that comes after its batch was settled is ignored."""

    def __init__(self, bar, batches: list):
        self.bar, self.lock = bar, threading.Lock()
        self.size = {chunk[0][0]: len(chunk) for chunk in batches}
        self.ticked = dict.fromkeys(self.size, 0)       # batches not settled yet
        self.done = self.failed = 0
        self.total = sum(self.size.values())
        self._show(refresh=True)            # the counts from the start, before any tick

    def tick(self, batch_id: str) -> None:
        with self.lock:
            ticked = self.ticked.get(batch_id)
            if ticked is not None and ticked < self.size[batch_id]:
                self.ticked[batch_id] = ticked + 1
                self._count(1, 0)

    def settle(self, batch_id: str, outcomes: list) -> None:
        with self.lock:
            ticked = self.ticked.pop(batch_id)
            failed = sum(o["status"] == "failed" for o in outcomes)
            self._count(len(outcomes) - failed - ticked, failed)

    def _count(self, done: int, failed: int) -> None:
        self.done, self.failed = self.done + done, self.failed + failed
        self._show()
        self.bar.update(done + failed)

    @property
    def left(self) -> int:
        return self.total - self.done - self.failed

    def _show(self, refresh: bool = False) -> None:     # update() refreshes the bar
        self.bar.set_postfix_str(f"done {self.done}, failed {self.failed}, left {self.left}",
                                 refresh=refresh)


def default_workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def busy_machine_warning(workers: int, load: float | None = None,
                         cores: int | None = None) -> str | None:
    """What to tell an instructor who starts ``workers`` graders on a machine that
    runs ``load`` processes already (the last minute's load average) on ``cores``, or
    None when there is room. The checks' limits are real time, 1.5 times each check's
    budget (``checker.TIME_SCALE``): when every process gets less than 1/1.5 of a core,
    an honest program can run past them and lose its points."""
    from .checker import TIME_SCALE
    load = os.getloadavg()[0] if load is None else load
    cores = default_workers() if cores is None else cores
    if load + workers <= TIME_SCALE * cores:
        return None
    return (f"warning: this machine is busy (a load average of {load:.1f} on {cores} cores, "
            f"and {workers} workers to come); the checks' time limits are real time, so "
            "honest code may run out of them. Grade when it is quieter, with fewer "
            "workers, or with every limit raised: -- --TrustedVerdict.time_scale=3")


@contextlib.contextmanager
def dask_client(workers: int | None = None, scheduler: str | None = None):
    """A Dask client: to the scheduler at ``scheduler``, or to a new local cluster of
    ``workers`` workers with one thread each, in this process (a task only waits for
    its nbgrader subprocess; see the module's docstring)."""
    from distributed import Client, LocalCluster
    if scheduler:
        with Client(scheduler) as client:
            yield client
        return
    from distributed.utils import silence_logging_cmgr
    # The scheduler always serves HTTP; None means port 8787, perhaps taken: any free one.
    # Dask's logs stay at WARNING until the cluster has closed, not only while it runs (as
    # LocalCluster keeps them): its shutdown may log a closed comm with a traceback at INFO
    # (dask/distributed#7192), which would end an instructor's run with a false alarm.
    with silence_logging_cmgr(logging.WARNING), \
            LocalCluster(n_workers=workers or default_workers(), threads_per_worker=1,
                         processes=False, dashboard_address=":0", memory_limit=0) as cluster, \
            Client(cluster) as client:
        yield client


def batch_size(students: int, workers: int, most: int = MAX_BATCH) -> int:
    """Students per task: as few tasks as keep every worker busy to the end (a multiple
    of the workers, of at most ``most`` students each).

    Each ``nbgrader autograde`` run pays nbgrader's start and the sandbox's template
    once, seconds that are as much as grading a short assignment's submission
    (``benchmarks/class_grading.py``): one task of 4 students per worker grades 8
    students on 2 workers faster than 8 tasks of one, batches of 16 grade a class of 32
    faster than batches of 8, and batches of 32 a class of 128 faster than batches of 16.
    ``most`` bounds what a failed batch costs (its unfinished students are graded again
    alone) and keeps the tasks of a large class small enough to balance.
    """
    workers = max(1, workers)
    tasks = workers * -(-students // (workers * most))
    return max(1, -(-students // max(1, tasks)))


def _worker_count(client) -> int:
    workers = client.scheduler_info().get("workers", {}).values()
    return sum(w.get("nthreads", 1) for w in workers) or 1


def run(course: Path, assignment: str, client, *, db_url: str | None = None,
        students=None, force: bool = False, retry_failed: bool = False,
        timeout: float = TASK_TIMEOUT, extra_args=(), progress: bool = True,
        batch: int | None = None, log=None) -> dict:
    """Grade ``assignment`` for the class on the workers of the Dask ``client``.

    Returns ``{"graded": [...], "failed": [entries], "skipped": [...],
    "failed_before": [entries], "outcomes": [entries of this run]}``.
    """
    from distributed import as_completed
    from tqdm import tqdm
    log = log or sys.stderr
    course = Path(course).resolve()
    config_url, course_id = course_settings(course)
    db_url = db_url or config_url
    prepare_gradebook(db_url, course_id, assignment)
    task_url = worker_db_url(db_url)
    ledger = Ledger(course, assignment)
    with ledger.locked():
        todo = plan(course, assignment, db_url, course_id, ledger, students, force,
                    retry_failed)
        if todo.already_graded or todo.failed_before:
            print(f"{assignment}: {len(todo.already_graded)} already graded, "
                  f"{len(todo.failed_before)} failed before (--retry-failed to try again), "
                  f"{len(todo.todo)} to grade", file=log)
        size = batch or batch_size(len(todo.todo), _worker_count(client))
        batches = [todo.todo[i:i + size] for i in range(0, len(todo.todo), size)]
        bar = tqdm(total=len(todo.todo), desc=f"grading {assignment}", unit="submission",
                   file=log, disable=not progress, dynamic_ncols=True)
        tally, topic = Tally(bar, batches), f"classgrade-{assignment}-{time.time_ns()}"
        outcomes, futures = [], []
        client.subscribe_topic(topic, lambda event: tally.tick(event[1]))
        try:
            futures = [client.submit(
                grade_batch, str(course), assignment, chunk, task_url, course_id, timeout,
                tuple(extra_args), topic, pure=False,
                key=f"autograde-{assignment}-{chunk[0][0]}-{time.time_ns()}")
                for chunk in batches]
            chunk_of = {f.key: chunk for f, chunk in zip(futures, batches)}
            for future in as_completed(futures):
                try:
                    results = future.result()
                except Exception as exc:       # the worker died (KilledWorker) or vanished
                    results = [asdict(Outcome(student, "failed", print_, 0.0,
                                              f"the Dask worker failed: "
                                              f"{type(exc).__name__}: {exc}"))
                               for student, print_ in chunk_of[future.key]]
                for outcome in results:
                    ledger.append(outcome)
                    outcomes.append(outcome)
                tally.settle(chunk_of[future.key][0][0], results)
        finally:
            client.unsubscribe_topic(topic)
            bar.close()
            for future in futures:
                if not future.done():
                    future.cancel()
    return {"graded": sorted(o["student"] for o in outcomes if o["status"] == "graded"),
            "failed": [o for o in outcomes if o["status"] == "failed"],
            "skipped": todo.already_graded, "failed_before": todo.failed_before,
            "outcomes": outcomes}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m collective_lib.autograde.classgrade",
        description="Autograde ASSIGNMENT for every submitted student, each in its own "
                    "`nbgrader autograde` run on a Dask worker. Run it in the course "
                    "directory. Arguments after `--` go to every nbgrader run.")
    parser.add_argument("assignment")
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=None,
                       help="workers on this machine, each running one nbgrader at a "
                       "time (default: its cores)")
    where.add_argument("--scheduler", help="address of a running Dask scheduler "
                       "(tcp://host:8786) whose workers grade instead")
    parser.add_argument("--course", default=".", help="the course directory (default: .)")
    parser.add_argument("--db-url", help="the gradebook (default: the course's own, "
                        "CourseDirectory.db_url or gradebook.db)")
    parser.add_argument("--student", action="append", metavar="PATTERN",
                        help="grade only these students (shell patterns; repeatable)")
    parser.add_argument("--force", action="store_true",
                        help="grade every submission again, even those already graded")
    parser.add_argument("--retry-failed", action="store_true",
                        help="try again the submissions whose grading failed before")
    parser.add_argument("--timeout", type=float, default=TASK_TIMEOUT,
                        help="seconds one student's grading may take (default %(default)s)")
    parser.add_argument("--batch", type=int, default=None, metavar="K",
                        help="students per nbgrader run (default: the class split "
                        f"evenly over the workers, at most {MAX_BATCH} a run; 1: one "
                        "run each)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    args, extra = parser.parse_known_args(argv)
    extra = [a for a in extra if a != "--"]
    course = Path(args.course).resolve()
    if not submitted_students(course, args.assignment):
        print(f"No submission of {args.assignment!r} in {course / 'submitted'}.",
              file=sys.stderr)
        return 2
    started = time.monotonic()
    with dask_client(args.workers, args.scheduler) as client:
        workers = len(client.scheduler_info().get("workers", {}))
        print(f"{args.assignment}: grading on {workers} Dask workers "
              f"({client.scheduler.address})", file=sys.stderr)
        warning = None if args.scheduler else busy_machine_warning(workers)
        if warning:
            print(warning, file=sys.stderr)
        result = run(course, args.assignment, client, db_url=args.db_url,
                     students=args.student, force=args.force,
                     retry_failed=args.retry_failed, timeout=args.timeout,
                     extra_args=extra, progress=not args.no_progress, batch=args.batch)
    seconds = time.monotonic() - started
    print(f"{args.assignment}: {len(result['graded'])} graded, {len(result['failed'])} "
          f"failed, {len(result['skipped'])} already graded, "
          f"{len(result['failed_before'])} failed before, in {seconds:.1f} s")
    for entry in result["failed"] + result["failed_before"]:
        # the id is the student's folder, nbgrader's last words may quote the student
        print(terminal_text(f"\nFAILED {entry['student']}: {entry['reason']}"))
    return 1 if result["failed"] or result["failed_before"] else 0


if __name__ == "__main__":
    sys.exit(main())
