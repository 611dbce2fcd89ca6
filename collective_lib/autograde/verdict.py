"""nbgrader steps of trusted grading: ``TrustedVerdict`` in place of ``Execute``, and ``FlagForReview``.

nbgrader's ``Execute`` runs a submission in a kernel with the grader's rights
and scores each test cell by the outputs that kernel produced, which the
student's own cells can forge. The course configuration
(``exercises/nbgrader_config.py``) replaces it with :class:`TrustedVerdict`:

1. the instructor's cells come from the gradebook, not from the submitted
   notebook: every locked cell and test cell of the assignment is put in
   its place with the gradebook's source, in the source notebook's order,
   whatever the submission did to it (deleted, moved, duplicated, edited),
   and a note at the top of the notebook says what was put back; all other
   cells are the student's, each after the instructor cell it followed
   (:func:`assemble`);
2. a trusted checker process (:mod:`.checker`) runs the notebook's tests while
   the student's cells run only in sandboxed processes (:mod:`.sandbox`),
   under a uid of their own that no other grader shares;
3. each graded cell's outputs are replaced by the checker's verdict: its
   printed output on success, or one error with the failed check's message
   (no test code, no frames of the grading library), which nbgrader's
   ``SaveAutoGrades`` then scores as usual; a failed cell's metadata keeps the
   kind of its failure (``{"collective_lib": {"failure": "deadlock"}}``, see
   :data:`collective_lib.grading.KINDS`) in the autograded notebook, for
   ``python -m collective_lib.autograde.misconceptions``.

A notebook whose checker fails, hangs or is killed gets zero on every graded
cell with the reason; the other submissions are graded as usual.

:class:`FlagForReview` (after ``SaveAutoGrades``) marks a graded cell for
manual grading when its checks raised a flag (a likeness to a library
function, objects reached by computed names), with the reasons as the cell's
automatic comment; the score the checks gave stays.
"""
from __future__ import annotations

import atexit
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile

import nbformat
from nbformat.corpus.words import generate_corpus_id
from nbformat.notebooknode import NotebookNode
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.exchange.default.exchange import Exchange
from nbgrader.nbgraderformat import SCHEMA_VERSION
from nbgrader.preprocessors import DeduplicateIds, NbGraderPreprocessor
from traitlets import Bool, Float, Integer, List, TraitError, Unicode, validate

from .cgroups import SubmissionGroup
from .checker import TIME_SCALE
from .reading import UNREADABLE, without_lone_surrogates
from .remote import CELLS_S, HostTemplate
from .sandbox import SandboxUser, self_check

__all__ = ["TrustedVerdict", "FlagForReview", "DeduplicateCells", "instructor_kind",
           "instructor_cells", "assemble",
           "PASSED", "FAILURE_METADATA", "notebook_cpu"]

_REPOSITORY = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PASSED = "All checks passed."
#: The key of a graded cell's metadata under which a failed cell keeps why it failed.
FAILURE_METADATA = "collective_lib"


def instructor_kind(cell_type: str, *, locked: bool, grade: bool, solution: bool,
                    task: bool):
    """Whose a cell is, by its nbgrader roles: False for a student's cell, else the kind of
    the instructor's cell, ``"test"`` (an autograded code test), ``"task"`` (such as a
    graders' rubric) or None. A cell is the instructor's when it is locked or an autograded
    test, and not an answer; both readers of an assignment (the gradebook's
    :func:`instructor_cells`, the notebook's ``similarity.instructor_cells_of``) use this.

    >>> instructor_kind("code", locked=True, grade=True, solution=False, task=False)
    'test'
    >>> instructor_kind("code", locked=False, grade=False, solution=True, task=False)
    False
    """
    test = grade and cell_type == "code"
    if solution or not (locked or test):
        return False
    return "test" if test else ("task" if task else None)


def instructor_cells(db_url: str, notebook: str, assignment: str, order: list = ()) -> dict:
    """The instructor's cells of a notebook, from the gradebook, in the assignment's order.

    Maps each grade id to its gradebook cell (``name``, ``cell_type``,
    ``source``, ``checksum``), with ``kind`` (``"test"`` for an autograded
    test, ``"task"`` for a task cell such as a graders' rubric, else None) and
    its ``points``. The order is that of the ids in ``order`` (the source
    notebook's), then any others in the gradebook's order. Whose a cell is:
    :func:`instructor_kind`.
    """
    with Gradebook(db_url) as gb:
        source_nb = gb.find_notebook(notebook, assignment)
        solutions = {c.name for c in source_nb.solution_cells}
        grades = {c.name: c.max_score for c in source_nb.grade_cells}
        tasks = {c.name: c.max_score for c in source_nb.task_cells}
        found = {}
        for c in source_nb.source_cells:
            kind = instructor_kind(c.cell_type, locked=bool(c.locked), grade=c.name in grades,
                                   solution=c.name in solutions, task=c.name in tasks)
            if kind is not False:
                found[c.name] = NotebookNode(name=c.name, cell_type=c.cell_type,
                                             source=c.source, checksum=c.checksum, kind=kind,
                                             points=grades.get(c.name, tasks.get(c.name)))
    ranked = [name for name in order if name in found]
    ranked += [name for name in found if name not in ranked]
    return {name: found[name] for name in ranked}


def _roles(db_url: str, notebook: str, assignment: str) -> dict:
    """``{grade_id: nbgrader metadata}`` of every cell of the source notebook, as the
    gradebook has them (the role fields only)."""
    with Gradebook(db_url) as gb:
        source_nb = gb.find_notebook(notebook, assignment)
        grades = {c.name: c.max_score for c in source_nb.grade_cells}
        tasks = {c.name: c.max_score for c in source_nb.task_cells}
        solutions = {c.name for c in source_nb.solution_cells}
        roles = {}
        for c in source_nb.source_cells:
            role = {"grade": c.name in grades, "solution": c.name in solutions,
                    "task": c.name in tasks, "locked": bool(c.locked),
                    "schema_version": SCHEMA_VERSION}
            if c.name in grades or c.name in tasks:
                role["points"] = grades.get(c.name, tasks.get(c.name))
            roles[c.name] = role
    return roles


def assemble(nb: NotebookNode, cells: dict) -> tuple:
    """Rebuild ``nb.cells`` around the instructor's ``cells``: ``([(cell, role)], notes)``.

    Every instructor cell is there once, with the gradebook's source, in the
    assignment's order, whatever the submission did to it (deleted, moved,
    duplicated, edited or unlocked); each of the student's cells follows the
    instructor cell it followed in the submission (and the missing instructor
    cells that came right after that one). Roles: ``graded`` for a test cell,
    ``trusted`` for another instructor cell, ``student`` for all else.
    ``notes`` say, in the student's words, what was put back.
    """
    after = {None: []}
    present, changed, ids = [], [], {}
    anchor = None
    for cell in nb.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id in cells and grade_id not in present:
            present.append(grade_id)
            ids[grade_id] = cell.get("id")
            if cell.source != cells[grade_id].source:
                changed.append(grade_id)
            anchor = grade_id
            continue
        if grade_id in cells:               # a copy of an instructor cell is the student's
            cell.metadata.pop("nbgrader", None)
        after.setdefault(anchor, []).append(cell)
    # A missing cell goes right after the instructor cell before it, ahead of the
    # student's cells that followed that one: they were written below it.
    rebuilt, pending = [], after[None]
    for grade_id, original in cells.items():
        if grade_id in present:
            rebuilt.extend(pending)
            pending = after.get(grade_id, [])
        rebuilt.append(_instructor_cell(original, ids.get(grade_id)))
    rebuilt.extend(pending)
    nb.cells = rebuilt
    roles = []
    for cell in rebuilt:
        original = cells.get(cell.metadata.get("nbgrader", {}).get("grade_id"))
        if original is None:
            roles.append((cell, "student"))
        else:
            roles.append((cell, "graded" if original.kind == "test" else "trusted"))
    return roles, _notes([g for g in cells if g not in present], _moved(present, list(cells)),
                         changed)


def _instructor_cell(original: NotebookNode, cell_id: str | None) -> NotebookNode:
    """A fresh notebook cell holding the gradebook's ``original`` (read-only, as released);
    ``cell_id`` is the submitted cell's nbformat id, or None for a cell put back."""
    meta = {"grade": original.kind == "test", "grade_id": original.name, "locked": True,
            "schema_version": 3, "solution": False, "task": original.kind == "task"}
    if original.kind is not None:
        meta["points"] = original.points
    if original.checksum:
        meta["checksum"] = original.checksum
    fields = {"cell_type": original.cell_type, "source": original.source,
              "metadata": {"deletable": False, "editable": False, "nbgrader": meta}}
    if original.cell_type == "code":
        fields.update(execution_count=None, outputs=[])
    fields["id"] = cell_id or generate_corpus_id()
    return nbformat.from_dict(fields)


def _moved(present: list, order: list) -> list:
    """The cells of ``present`` (submission order) that are not where ``order`` puts them."""
    expected = [g for g in order if g in present]
    return [g for g, want in zip(present, expected) if g != want]


def _notes(missing: list, moved: list, changed: list) -> list:
    def names(ids):
        return ", ".join(f"`{g}`" for g in ids)
    notes = []
    if missing:
        notes.append(f"the assignment's cells {names(missing)} were missing from your "
                     "notebook and were put back")
    if moved:
        notes.append(f"the assignment's cells {names(moved)} had been moved and were graded "
                     "in their places")
    if changed:
        notes.append(f"the assignment's cells {names(changed)} had been changed; their "
                     "original text was graded")
    return notes


class DeduplicateCells(DeduplicateIds):
    """nbgrader's ``DeduplicateIds``, but a copy loses its nbgrader metadata whole, and a
    cell keeps only the nbgrader metadata the gradebook vouches for.

    nbgrader leaves a copied cell (a student duplicated a test cell, as the
    notebook's "copy cell" does) with empty nbgrader metadata, which its own
    ``CheckCellMetadata`` then refuses as "an old version of the metadata
    format", failing the whole submission. Without the key, the copy is
    simply the student's cell.  So is a cell whose nbgrader metadata is not a
    dict or names a grade id the assignment does not have; a cell with a known
    grade id gets that cell's role back (test, answer, locked, points).  nbgrader
    stopped on such edits before any grading, and left the gradebook with the
    scores of the student's previous submission.  Run it first.
    """

    def preprocess(self, nb: NotebookNode, resources: dict):
        info = resources["nbgrader"]
        roles = _roles(info["db_url"], info["notebook"], info["assignment"])
        for cell in nb.cells:
            meta = cell.metadata.get("nbgrader")
            if meta is None:
                continue
            grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
            if not isinstance(grade_id, str) or grade_id not in roles:
                del cell.metadata["nbgrader"]
            else:
                cell.metadata["nbgrader"] = {"grade_id": grade_id, **roles[grade_id]}
        return super().preprocess(nb, resources)

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int):
        cell, resources = super().preprocess_cell(cell, resources, index)
        if cell.metadata.get("nbgrader") == {}:
            del cell.metadata["nbgrader"]
        return cell, resources


class TrustedVerdict(NbGraderPreprocessor):
    """Grade each test cell in a trusted process; run student code only in a sandbox."""

    notebook_timeout = Integer(1200, help="Seconds the checker may take for one notebook; "
                               "after that every graded cell scores 0.").tag(config=True)
    cell_timeout = Integer(600, help="Seconds the checks of one graded cell may take."
                           ).tag(config=True)
    time_scale = Float(TIME_SCALE, help="Factor on the real-time budget of every call of a "
                       "student's function in the checks (their `time_limit_s`) and of the "
                       f"student's cells in each new process ({CELLS_S:g} s): each step "
                       "crosses to a sandboxed process and back, and the budgets stop endless "
                       "loops, not time honest work. Raise it on a slow or crowded grading "
                       "machine."
                       ).tag(config=True)
    sandbox_uid = Integer(61000, help="First uid of the pool the sandbox draws from; no "
                          "account is needed, but no other process may use these uids."
                          ).tag(config=True)
    sandbox_uid_count = Integer(64, help="Size of the uid pool (one uid per notebook being "
                                "graded at the same time).").tag(config=True)
    memory = Integer(1536 << 20, help="Address space of one student process, in bytes."
                     ).tag(config=True)
    cpu_seconds = Integer(120, help="CPU seconds of one student process.").tag(config=True)
    submission_memory = Integer(2 << 30, help="Memory all the processes of one submission "
                                "may use together, in bytes, with what they write to their "
                                "private /tmp, /var/tmp and /dev/shm (a cgroup per "
                                "submission); beyond it they are stopped, and the calls that "
                                "needed them score 0 with the reason.").tag(config=True)
    submission_processes = Integer(64, help="Processes and threads one submission may run at "
                                   "once (a cgroup per submission); a refused fork stops them."
                                   ).tag(config=True)
    submission_cpu_seconds = Integer(600, help="CPU seconds all the processes of one "
                                     "submission may use together; then they are stopped and "
                                     "none starts again.").tag(config=True)
    submission_cpus = Float(1.0, help="Cores the processes of one submission may use at once "
                            "(a cgroup quota; 0 for none).").tag(config=True)
    checker_memory = Integer(3 << 30, help="Memory of the trusted checker of one notebook, in "
                             "bytes (its own cgroup; its address space where the sandbox "
                             "cannot run); beyond it every graded cell of the notebook scores "
                             "0 with the reason.").tag(config=True)
    hide = List(Unicode(), help="More folders the student's processes must not see (the "
                "course directory, the exchange and this repository's exercises/ and tests/ "
                "are always hidden).").tag(config=True)
    allow_unconfined = Bool(False, help="Grade even where the sandbox cannot work (not as "
                            "root): the student's code then runs with the grader's rights, "
                            "in separate processes only. For a trusted class on a laptop."
                            ).tag(config=True)
    exchange_root = Unicode("", help="Another exchange to hide from submissions (nbgrader's "
                            "own, c.Exchange.root as configured or by default, always is)."
                            ).tag(config=True)

    @validate("time_scale")
    def _positive_scale(self, proposal):
        if not proposal["value"] > 0:
            raise TraitError(f"TrustedVerdict.time_scale must be positive, got "
                             f"{proposal['value']!r}")
        return proposal["value"]

    def preprocess(self, nb: NotebookNode, resources: dict):
        info = resources["nbgrader"]
        cells = instructor_cells(info["db_url"], info["notebook"], info["assignment"],
                                 self._order(info))
        roles, notes = assemble(nb, cells)
        roles = [(cell, role) for cell, role in roles if cell.cell_type == "code"]
        unreadable = nb.metadata.get(UNREADABLE, {}).get("unreadable")
        if unreadable:                  # set by reading.read_submission, never by a student
            notes.insert(0, f"your notebook's file could not be read as a notebook "
                            f"({unreadable}), so it was graded without your answers")
        if notes:
            self.log.warning("%s: %s", info["notebook"], "; ".join(notes))
            nb.cells.insert(0, NotebookNode(cell_type="markdown", metadata={}, source=(
                "**Note from the grader:** " + "; ".join(notes) + ". Your own cells were "
                "graded as you left them.")))
        problems = self_check()
        if problems and not self.allow_unconfined:
            raise RuntimeError("TrustedVerdict refuses to grade: " + "; ".join(problems) +
                               ". Run autograde as root (or in a container, see "
                               "exercises/SANDBOX.md), or set "
                               "c.TrustedVerdict.allow_unconfined = True for a trusted class.")
        job = {"cells": [{"role": role, "source": cell.source,
                          "id": cell.metadata.get("nbgrader", {}).get("grade_id")}
                         for cell, role in roles],
               "hide": self._hidden(info), "reference_dir": self._reference_dir(info),
               "limits": {"memory": self.memory, "cpu_s": self.cpu_seconds,
                          "processes": self.submission_processes},
               "cell_timeout_s": self.cell_timeout, "time_scale": self.time_scale,
               "student": info["student"]}       # for each student's variant (.variants)
        if problems:
            job["uid"], job["cpu"] = None, notebook_cpu(None)
            verdicts = self._check(job)
        else:
            with SandboxUser(self.sandbox_uid, self.sandbox_uid_count) as user:
                job["uid"] = user.uid
                job["cpu"] = notebook_cpu(user.uid - self.sandbox_uid)
                verdicts = self._check(job)
        flags = {}
        for cell, role in roles:
            if role != "graded":
                cell.outputs = []
                continue
            verdict = verdicts.get(cell.metadata["nbgrader"]["grade_id"])
            cell.outputs = _outputs(verdict)
            cell.execution_count = None
            _keep_kind(cell, verdict)
            if verdict and verdict.get("flags"):
                flags[cell.metadata["nbgrader"]["grade_id"]] = verdict["flags"]
        resources.setdefault("collective_lib", {})["review_flags"] = flags
        return nb, resources

    def _course_root(self, info: dict) -> str:
        """The course directory (``CourseDirectory.root``, else the gradebook's folder)."""
        root = self.config.CourseDirectory.get("root")
        if root:
            return os.path.abspath(root)
        return os.path.dirname(os.path.abspath(info["db_url"].split("sqlite:///", 1)[-1]))

    def _hidden(self, info: dict) -> list:
        gradebook = info["db_url"].split("sqlite:///", 1)[-1]
        # the exchange as nbgrader finds it: configured (the README sets c.Exchange.root),
        # else its default; and its default too, should the configuration not reach us here
        exchanges = [self.config.Exchange.get("root"), Exchange.root.default_value,
                     self.exchange_root]
        folders = [self._course_root(info), os.path.dirname(os.path.abspath(gradebook)),
                   *exchanges, os.path.join(_REPOSITORY, "exercises"),
                   os.path.join(_REPOSITORY, "tests")]
        return sorted({os.path.abspath(f) for f in folders + list(self.hide)
                       if f and os.path.isdir(f)})

    def _order(self, info: dict) -> list:
        """The grade ids of the source notebook, in its order (empty if it is not there)."""
        folder = self._reference_dir(info)
        path = os.path.join(folder or "", info["notebook"] + ".ipynb")
        if folder is None or not os.path.isfile(path):
            return []
        source_nb = nbformat.read(path, as_version=4)
        return [cell.metadata.get("nbgrader", {}).get("grade_id") for cell in source_nb.cells]

    def _reference_dir(self, info: dict) -> str | None:
        """``source/<assignment>/`` of the course, where ``_reference.py`` lives."""
        source = self.config.CourseDirectory.get("source_directory") or "source"
        folder = os.path.join(self._course_root(info), source, info["assignment"])
        return folder if os.path.isdir(folder) else None

    def _check(self, job: dict) -> dict:
        """The checker's verdicts, or a zero with the reason for every graded cell.

        Under a sandbox uid the submission's processes get a cgroup of their own
        (``submission_*``; the student host joins it before it forks) and the
        checker another (``checker_memory``); both go, with everything in them,
        when the notebook is done. Groups an aborted run left for the uid go first.
        """
        graded = [cell["id"] for cell in job["cells"] if cell["role"] == "graded"]
        students, checker = self._groups(job.get("uid"))
        if students is not None:
            job = {**job, "limits": {**job.get("limits", {}), "group": students.describe(),
                                     # the group's limit, not the uid's, must stop a fork
                                     "processes": 2 * self.submission_processes + 16}}
        template = self._host_template()
        job = {**job, "template_fd": template.sock.fileno()}
        try:
            with tempfile.TemporaryDirectory(prefix="collective-checker-") as cwd:
                job = {**job, "scratch": cwd}         # gone with it, if the checker is killed
                process = subprocess.Popen(
                    [sys.executable, "-m", "collective_lib.autograde.checker"],
                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                    cwd=cwd, start_new_session=True, pass_fds=(template.sock.fileno(),),
                    env=dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
                             MKL_NUM_THREADS="1"),
                    preexec_fn=None if checker is not None else self._address_space)
                try:
                    if checker is not None:
                        checker.enter(process.pid)        # before it reads the job
                    out, _ = process.communicate(json.dumps(job).encode(),
                                                 timeout=self.notebook_timeout)
                    # the student's own text may hold what no file can (reading.py)
                    answer = without_lone_surrogates(json.loads(out)) if out else {}
                    reason = answer.get("error") if out else _stopped_checker(process)
                except subprocess.TimeoutExpired:
                    answer, reason = {}, (f"grading this notebook took longer than "
                                          f"{self.notebook_timeout} s and was stopped")
                except ValueError:
                    answer, reason = {}, "the checker gave no answer"
                finally:
                    if process.poll() is None:
                        os.killpg(process.pid, signal.SIGKILL)
                    process.wait()
            over = (checker is not None and checker.usage()["oom_kills"]
                    and not checker.killed_from_outside()) or (
                (reason or "").startswith("MemoryError"))
            if over:
                answer, reason = {}, (
                    f"grading this notebook needed more than {_gib(self.checker_memory)} of "
                    "memory in the trusted checker (its limit) and was stopped")
        finally:
            outside = []
            for group in (students, checker):
                if group is not None:
                    usage = group.usage()
                    self.log.debug("%s: peak memory %d bytes, %.1f CPU s", group.name,
                                   usage["peak"], usage["cpu_s"])
                    if group.killed_from_outside(usage):
                        outside.append(group.name)
                    if not group.remove():
                        self.log.warning("could not remove the cgroup %s", group.name)
        if outside:
            # not the submission's doing: no verdict, so that nbgrader reports the notebook
            # as not graded and classgrade grades it again alone
            raise RuntimeError(
                f"TrustedVerdict could not grade this notebook: the machine ran out of memory "
                f"while it was graded ({', '.join(outside)} lost a process to the kernel's "
                "OOM killer below its own limit); grade it again with fewer notebooks at once")
        verdicts = answer.get("verdicts", {})
        for grade_id in graded:
            if grade_id not in verdicts:
                verdicts[grade_id] = {"passed": False, "output": "", "flags": [],
                                      "message": f"not graded: {reason or 'no verdict'}",
                                      "kind": "not_graded"}
                self.log.warning("%s: %s", grade_id, verdicts[grade_id]["message"])
        return verdicts

    _template = None

    def _host_template(self) -> HostTemplate:
        """The process that forks every notebook's student host (started once, and again
        should it have died); it ends with this process."""
        if self._template is None or not self._template.alive():
            TrustedVerdict._template = HostTemplate()
            atexit.register(TrustedVerdict._template.close)
        return self._template

    def _groups(self, uid: int | None) -> tuple:
        """``(students, checker)``: new cgroups for a confined run, or ``(None, None)``."""
        if uid is None:
            return None, None
        made = []
        try:
            for kind in ("sandbox", "checker"):
                SubmissionGroup.clean(f"collective-{kind}-{uid}-")   # an aborted run's
            made.append(SubmissionGroup.unique(
                f"collective-sandbox-{uid}-", memory=self.submission_memory,
                processes=self.submission_processes, cpu_s=self.submission_cpu_seconds,
                cpus=self.submission_cpus or None).create())
            made.append(SubmissionGroup.unique(f"collective-checker-{uid}-",
                                               memory=self.checker_memory).create())
        except OSError as err:
            for group in made:
                group.remove()
            raise RuntimeError(f"TrustedVerdict cannot limit this submission with a cgroup: "
                               f"{err}") from err
        return tuple(made)

    def _address_space(self) -> None:
        """The checker's limit where no cgroup holds it (in the child, before exec)."""
        try:
            resource.setrlimit(resource.RLIMIT_AS, (self.checker_memory, self.checker_memory))
        except (ValueError, OSError):
            pass


def notebook_cpu(slot: int | None) -> int:
    """The one CPU the checker and the student processes of a notebook share.

    Grading is a conversation: the checker asks, a student process answers, one
    at a time (some 65,000 exchanges for an honest ``scatter_any_root``). On a
    virtual machine, waking a process on another CPU is slow: one call of a
    student's function took about 420 us with the two processes on two CPUs and
    120 us on one (``benchmarks/grading_cost.py``), so a notebook keeps to one CPU.
    Notebooks graded side by side hold different sandbox uid slots and so spread
    over the grader's CPUs; without a slot (an unconfined run) the notebook stays
    on the CPU the grader runs on now.
    """
    allowed = sorted(os.sched_getaffinity(0))
    if slot is None:
        with open("/proc/self/stat", encoding="ascii") as stat:
            current = int(stat.read().rsplit(")", 1)[1].split()[36])   # field 39
        return current if current in allowed else allowed[0]
    return allowed[slot % len(allowed)]


def _stopped_checker(process: subprocess.Popen) -> str:
    """Why a checker that printed nothing ended: a verdict is never missing without one."""
    code = process.returncode
    if code is not None and code < 0:
        try:
            how = f"killed by {signal.Signals(-code).name}"
        except ValueError:
            how = f"killed by signal {-code}"
    else:
        how = f"exit status {code}"
    return f"the trusted checker stopped without an answer ({how})"


def _gib(n: int) -> str:
    return f"{n / (1 << 30):g} GiB" if n >= 1 << 30 else f"{n >> 20} MiB"


def _keep_kind(cell: NotebookNode, verdict: dict | None) -> None:
    """Record why a graded cell failed in its metadata, ``{FAILURE_METADATA: {"failure":
    kind}}`` (a kind of :data:`collective_lib.grading.KINDS`; ``"other"`` from a checker that
    sent none), where the autograded notebook keeps it beside the cell's error
    (:mod:`.misconceptions` counts them); a passed cell has none."""
    cell.metadata.pop(FAILURE_METADATA, None)
    if verdict is None or not verdict.get("passed"):
        kind = "not_graded" if verdict is None else verdict.get("kind") or "other"
        cell.metadata[FAILURE_METADATA] = {"failure": kind}


def _outputs(verdict: dict | None) -> list:
    """What a graded cell shows: its printed output, then the verdict."""
    if verdict is None:
        verdict = {"passed": False, "output": "", "message": "not graded"}
    outputs = []
    if verdict.get("output"):
        outputs.append(NotebookNode(output_type="stream", name="stdout",
                                    text=verdict["output"]))
    if verdict["passed"]:
        outputs.append(NotebookNode(output_type="stream", name="stdout", text=PASSED + "\n"))
    else:
        message = verdict.get("message") or "a check failed"
        outputs.append(NotebookNode(output_type="error", ename="AssertionError",
                                    evalue=message, traceback=["AssertionError: " + message]))
    return outputs


class FlagForReview(NbGraderPreprocessor):
    """Mark the graded cells whose checks raised a flag for manual grading (after SaveAutoGrades).

    The reasons go into the automatic comment of the solution cell the test cell
    checks (the nearest solution cell above it), where formgrader shows them.
    """

    def preprocess(self, nb: NotebookNode, resources: dict):
        flags = resources.get("collective_lib", {}).get("review_flags", {})
        if not flags:
            return nb, resources
        info = resources["nbgrader"]
        ids = [cell.metadata.get("nbgrader", {}) for cell in nb.cells]
        with Gradebook(info["db_url"]) as gb:
            for grade_id, reasons in flags.items():
                try:
                    grade = gb.find_grade(grade_id, info["notebook"], info["assignment"],
                                          info["student"])
                except MissingEntry:
                    continue
                grade.needs_manual_grade = True
                answer = _answer_above(ids, grade_id)
                if answer is not None:
                    comment = gb.find_comment(answer, info["notebook"], info["assignment"],
                                              info["student"])
                    note = "Flagged for review: " + "; ".join(reasons)
                    comment.auto_comment = "\n".join(filter(None, [comment.auto_comment, note]))
            gb.db.commit()
        return nb, resources


def _answer_above(ids: list, grade_id: str) -> str | None:
    """The grade id of the nearest solution cell above the cell ``grade_id``."""
    answer = None
    for meta in ids:
        if meta.get("grade_id") == grade_id:
            return answer
        if meta.get("solution"):
            answer = meta.get("grade_id")
    return None
