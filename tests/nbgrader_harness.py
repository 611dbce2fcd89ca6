"""Drive nbgrader the way an instructor would, for the exercise tests.

Typical round trip::

    course = copy_course(tmp_path / "course")
    released = generate_assignment(course, "ps1")
    good = autograde(course, "ps1", source_notebook(course, "ps1", "ps1.ipynb"))
    assert good.total == good.max_score

    bad_nb = replace_solution(source_notebook(course, "ps1", "ps1.ipynb"),
                              "broadcast_solution", "def broadcast(me, p, x):\\n    return x")
    bad = autograde(course, "ps1", bad_nb, student="wrong", notebook_name="ps1.ipynb")
    assert bad.total < bad.max_score
    print(bad.messages("broadcast_tests"))

Every nbgrader command runs as ``python -m nbgrader`` with the interpreter
that runs the tests, inside a copy of the course directory, so the real
``exercises/`` tree is never touched. This module is a helper, not a test.
"""

from __future__ import annotations

import atexit
import copy
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import nbformat
import pytest
from nbformat import NotebookNode

from collective_lib.autograde.checker import TIME_SCALE
from messages import flat

REPO_ROOT = Path(__file__).resolve().parents[1]
EXERCISES_DIR = REPO_ROOT / "exercises"

# Generated state of a course directory; never copied into a scratch course.
_COURSE_STATE = (
    "release",
    "autograded",
    "submitted",
    "feedback",
    "gradebook.db",
    ".ipynb_checkpoints",
    "__pycache__",
)

_BEGIN_SOLUTION = "### BEGIN SOLUTION"
_END_SOLUTION = "### END SOLUTION"
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

# Generous upper bound for one nbgrader command; the per-cell limit is
# nbgrader's own timeout (see exercises/nbgrader_config.py).
COMMAND_TIMEOUT = 900

#: The factor on the checks' real-time budgets when the tests grade a submission that
#: never returns (see :func:`autograde_many`): a fifth of the course's.
SPINNING_SCALE = TIME_SCALE / 5


class NbgraderError(RuntimeError):
    """An nbgrader command exited with a non-zero status."""


def copy_course(dest: os.PathLike | str, source: os.PathLike | str = EXERCISES_DIR) -> Path:
    """Copy the course directory ``source`` to ``dest`` (which must not exist).

    Generated state (release/, submitted/, autograded/, feedback/, the
    gradebook) is left behind, so the copy starts from a clean course.
    """
    dest = Path(dest)
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns(*_COURSE_STATE))
    (dest / "source").mkdir(exist_ok=True)
    return dest


def released_copy(dest: os.PathLike | str, assignment: str) -> Path:
    """:func:`copy_course` to ``dest`` with ``assignment`` released in it, as by
    :func:`generate_assignment`.

    The release is made once per test process and copied for every caller:
    ``nbgrader generate_assignment`` takes some 3 s, and several test modules release
    the same assignment. (Tests of the release itself run :func:`generate_assignment`.)
    """
    dest = Path(dest)
    shutil.copytree(_released_once(assignment), dest)
    return dest


@functools.cache
def _released_once(assignment: str) -> Path:
    root = Path(tempfile.mkdtemp(prefix=f"released-{assignment}-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    course = copy_course(root / "course")
    generate_assignment(course, assignment)
    return course


def run_nbgrader(
    course_dir: os.PathLike | str,
    *args: str,
    timeout: float = COMMAND_TIMEOUT,
) -> subprocess.CompletedProcess:
    """Run ``nbgrader <args>`` in ``course_dir``; raise NbgraderError on failure.

    The user's own Jupyter configuration directory is replaced by an empty one
    so that only the course's nbgrader_config.py applies (plus any config of
    the virtualenv itself, and the tests' kernels on Unix sockets:
    ``jupyter_kernels.py``).
    """
    course_dir = Path(course_dir).resolve()
    isolated_cfg = course_dir.parent / f".{course_dir.name}-jupyter-config"
    isolated_cfg.mkdir(exist_ok=True)
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(isolated_cfg))
    # nbgrader runs helper programs (e.g. `alembic` when it creates the
    # gradebook) by name: find them next to this interpreter.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    cmd = [sys.executable, "-m", "nbgrader", *args]
    proc = subprocess.run(cmd, cwd=course_dir, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        raise NbgraderError(
            f"`{' '.join(cmd[2:])}` exited with status {proc.returncode} in {course_dir}:\n"
            f"{proc.stdout}"
        )
    return proc


def source_notebook(course_dir: os.PathLike | str, assignment: str, name: str) -> Path:
    """Path of an instructor (source) notebook of ``assignment``."""
    return Path(course_dir) / "source" / assignment / name


def generate_assignment(
    course_dir: os.PathLike | str,
    assignment: str,
    extra_args: Sequence[str] = (),
) -> list[Path]:
    """Run ``nbgrader generate_assignment <assignment> --force``.

    ``assignment`` may be a shell pattern (``"*"``: every assignment, in one nbgrader
    run, seconds faster than one run each). Returns the paths of the released
    (student) notebooks, sorted.
    """
    run_nbgrader(course_dir, "generate_assignment", assignment, "--force", *extra_args)
    return sorted((Path(course_dir) / "release").glob(f"{assignment}/*.ipynb"))


@dataclass
class GradeResult:
    """Outcome of autograding one submitted notebook."""

    scores: dict[str, float]
    """Score of every graded cell, keyed by its nbgrader grade_id."""
    max_scores: dict[str, float]
    """Points available in every graded cell, keyed by grade_id."""
    total: float
    max_score: float
    notebook: NotebookNode
    """The autograded notebook, with the outputs the grader produced."""
    notebook_path: Path
    log: str = field(repr=False, default="")
    """Everything ``nbgrader autograde`` printed."""

    def cell(self, grade_id: str) -> NotebookNode:
        """The autograded cell whose nbgrader grade_id is ``grade_id``."""
        return find_cell(self.notebook, grade_id)

    def messages(self, grade_id: str | None = None) -> str:
        """Error text (exception name, message, traceback) the grader recorded.

        For one cell if ``grade_id`` is given, else for the whole notebook. ANSI colour
        codes are stripped and every run of white space is one blank (:func:`flat`), so
        tests can search the words, wherever the message broke its lines.
        """
        cells = [self.cell(grade_id)] if grade_id else self.notebook.cells
        parts = []
        for c in cells:
            for out in c.get("outputs", []):
                if out.get("output_type") == "error":
                    parts.append(f"{out.get('ename', '')}: {out.get('evalue', '')}")
                    parts.extend(out.get("traceback", []))
                elif out.get("output_type") == "stream" and out.get("name") == "stderr":
                    parts.append(out.get("text", ""))
        return flat(_ANSI.sub("", "\n".join(parts)))


def autograde(
    course_dir: os.PathLike | str,
    assignment: str,
    submission: os.PathLike | str | NotebookNode,
    student: str = "student",
    notebook_name: str | None = None,
    timeout: int | None = None,
    extra_args: Sequence[str] = (),
) -> GradeResult:
    """Submit ``submission`` as ``student`` and autograde it.

    ``submission`` is a notebook file or an in-memory notebook; it is stored as
    ``submitted/<student>/<assignment>/<notebook_name>`` (``notebook_name``
    defaults to the file's name and is required for an in-memory notebook; it
    must match the source notebook's name). ``timeout`` overrides the per-cell
    time limit of one graded cell (``TrustedVerdict.cell_timeout``) for this run only.

    A submission that fails, crashes or never finishes must still be graded:
    nbgrader interrupts a cell that exceeds the timeout and goes on, so this
    raises NbgraderError only if the grading command itself fails.
    """
    course_dir = Path(course_dir)
    if isinstance(submission, (str, os.PathLike)):
        notebook_name = notebook_name or Path(submission).name
        nb = nbformat.read(submission, as_version=4)
    else:
        if notebook_name is None:
            raise ValueError("notebook_name is required for an in-memory submission")
        nb = submission
    target_dir = course_dir / "submitted" / student / assignment
    target_dir.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, target_dir / notebook_name)

    args = ["autograde", assignment, "--force", f"--student={student}"]
    if timeout is not None:
        args.append(f"--TrustedVerdict.cell_timeout={int(timeout)}")
    proc = run_nbgrader(course_dir, *args, *extra_args)

    graded_path = course_dir / "autograded" / student / assignment / notebook_name
    if not graded_path.exists():
        raise NbgraderError(f"autograde wrote no {graded_path}:\n{proc.stdout}")
    scores, max_scores, total, max_score = read_scores(
        course_dir, assignment, Path(notebook_name).stem, student
    )
    return GradeResult(
        scores=scores,
        max_scores=max_scores,
        total=total,
        max_score=max_score,
        notebook=nbformat.read(graded_path, as_version=4),
        notebook_path=graded_path,
        log=proc.stdout,
    )


def read_scores(
    course_dir: os.PathLike | str, assignment: str, notebook_id: str, student: str
) -> tuple[dict[str, float], dict[str, float], float, float]:
    """Per-cell scores, per-cell maxima, total and maximum from the gradebook."""
    from nbgrader.api import Gradebook  # imported late: it is slow to import

    db_url = f"sqlite:///{Path(course_dir).resolve() / 'gradebook.db'}"
    with Gradebook(db_url) as gb:
        sub = gb.find_submission_notebook(notebook_id, assignment, student)
        scores = {g.name: float(g.score) for g in sub.grades}
        max_scores = {g.name: float(g.max_score) for g in sub.grades}
        return scores, max_scores, float(sub.score), float(sub.max_score)


def find_cell(nb: NotebookNode, cell: str | int) -> NotebookNode:
    """A cell by nbgrader grade_id (str) or by position (int)."""
    if isinstance(cell, int):
        return nb.cells[cell]
    for c in nb.cells:
        if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == cell:
            return c
    ids = [
        c["metadata"]["nbgrader"]["grade_id"]
        for c in nb.cells
        if "grade_id" in c.get("metadata", {}).get("nbgrader", {})
    ]
    raise KeyError(f"no cell with grade_id {cell!r}; the notebook has {ids}")


def replace_solution(
    notebook: os.PathLike | str | NotebookNode,
    cell: str | int,
    new_code: str,
    region: int | None = None,
) -> NotebookNode:
    """A copy of ``notebook`` whose solution in ``cell`` is ``new_code``.

    The lines from ``### BEGIN SOLUTION`` to ``### END SOLUTION`` (markers
    included) are replaced by ``new_code``, indented like the marker, which is
    what a student's cell looks like. Use it to build wrong, crashing,
    deadlocking or endless submissions from a source notebook. If the cell has
    several solution regions, ``region`` (0-based) says which one.
    """
    nb = _as_notebook(notebook)
    target = find_cell(nb, cell)
    lines = target.source.splitlines()
    regions = _solution_regions(lines)
    if not regions:
        raise ValueError(f"cell {cell!r} has no {_BEGIN_SOLUTION} ... {_END_SOLUTION} block")
    if region is None:
        if len(regions) != 1:
            raise ValueError(f"cell {cell!r} has {len(regions)} solution blocks; pass region=")
        region = 0
    begin, end = regions[region]
    indent = lines[begin][: len(lines[begin]) - len(lines[begin].lstrip())]
    replacement = textwrap.indent(textwrap.dedent(new_code).strip("\n"), indent).splitlines()
    target.source = "\n".join(lines[:begin] + replacement + lines[end + 1 :])
    return nb


def code_above(cell: str | int, code: str):
    """A change for :func:`submissions`: ``code`` put at the top of the answer cell ``cell``,
    outside its solution (a student's line such as ``BLOCKS = 1`` above the function)."""
    def change(notebook):
        nb = _as_notebook(notebook)
        target = find_cell(nb, cell)
        target.source = textwrap.dedent(code).strip("\n") + "\n" + target.source
        return nb
    return change


def code_below(cell: str | int, code: str):
    """A change for :func:`submissions`: ``code`` put at the end of the answer cell ``cell``,
    after its solution (a student's wrapper of the function the cell defines)."""
    def change(notebook):
        nb = _as_notebook(notebook)
        target = find_cell(nb, cell)
        target.source = target.source.rstrip("\n") + "\n\n" + textwrap.dedent(code).strip("\n")
        return nb
    return change


def answered_release(
    released: os.PathLike | str | NotebookNode,
    answers: os.PathLike | str | NotebookNode,
    written: dict[str, str] | None = None,
) -> NotebookNode:
    """The released notebook ``released`` as a student hands it in.

    Each code answer cell (an nbgrader solution cell) gets the code of the same
    cell in ``answers``, a source notebook (possibly changed with
    :func:`replace_solution`) whose ``### BEGIN/END SOLUTION`` marker lines are
    dropped. Written (markdown) answers keep the release's text unless
    ``written`` gives ``{grade_id: text}``. Everything else stays as released,
    so this is what a student's saved notebook looks like.
    """
    nb = _as_notebook(released)
    source = _as_notebook(answers)
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if not meta.get("solution"):
            continue
        gid = meta["grade_id"]
        if cell.cell_type == "code":
            lines = find_cell(source, gid).source.splitlines()
            cell.source = "\n".join(line for line in lines
                                    if line.strip() not in (_BEGIN_SOLUTION, _END_SOLUTION))
        elif written and gid in written:
            cell.source = written[gid]
    unknown = set(written or ()) - {c.metadata.get("nbgrader", {}).get("grade_id")
                                    for c in nb.cells if c.cell_type == "markdown"}
    if unknown:
        raise KeyError(f"no written answer cell {sorted(unknown)} in the release")
    return nb


def _as_notebook(notebook: os.PathLike | str | NotebookNode) -> NotebookNode:
    """A notebook file read, or a copy of an in-memory notebook."""
    if isinstance(notebook, (str, os.PathLike)):
        return nbformat.read(notebook, as_version=4)
    return copy.deepcopy(notebook)


def _solution_regions(lines: Iterable[str]) -> list[tuple[int, int]]:
    regions, start = [], None
    for i, line in enumerate(lines):
        text = line.strip()
        if text == _BEGIN_SOLUTION:
            if start is not None:
                raise ValueError(f"nested {_BEGIN_SOLUTION} at line {i + 1}")
            start = i
        elif text == _END_SOLUTION:
            if start is None:
                raise ValueError(f"{_END_SOLUTION} without a begin at line {i + 1}")
            regions.append((start, i))
            start = None
    if start is not None:
        raise ValueError(f"{_BEGIN_SOLUTION} at line {start + 1} is never closed")
    return regions


def autograde_many(course_dir: os.PathLike | str, assignment: str, submissions: dict,
                   spinning: Iterable[str] = ()) -> dict:
    """Autograde every ``{student: notebook or path}`` of ``assignment`` in one nbgrader run
    (two with ``spinning``). A ``str`` is the submitted file's exact text, a callable makes
    the submitted file at the path it is given.

    One run for all students is much faster than :func:`autograde` per student.
    The students named in ``spinning`` (code that never returns, cells that
    never finish) are graded in a second run at a fifth of the course's
    real-time budgets (``TrustedVerdict.time_scale`` :data:`SPINNING_SCALE`
    instead of ``checker.TIME_SCALE``): what their tests check, that every
    cell stops the program and says why, is the same for any budget, and a
    spinning program burns a core for its whole budget (the others are graded
    at the course's budgets, which the honest ones must fit). Returns
    ``{student: GradeResult}``.
    """
    course = Path(course_dir)
    name = f"{assignment}.ipynb"
    spinning = set(spinning)
    if not spinning <= set(submissions):
        raise ValueError(f"spinning names no submission: {sorted(spinning - set(submissions))}")
    for student, nb in submissions.items():
        target = course / "submitted" / student / assignment
        target.mkdir(parents=True, exist_ok=True)
        if isinstance(nb, str):
            (target / name).write_text(nb, encoding="utf-8")
            continue
        if callable(nb):
            nb(target / name)
            continue
        if isinstance(nb, Path):
            nb = nbformat.read(nb, as_version=4)
        nbformat.write(nb, target / name)
    logs = {}
    if spinning:
        others = ",".join(sorted(set(submissions) - spinning))
        log = run_nbgrader(course, "autograde", assignment, "--force",
                           f"--CourseDirectory.student_id_exclude={others}",
                           f"--TrustedVerdict.time_scale={SPINNING_SCALE}").stdout
        logs = dict.fromkeys(spinning, log)
    if set(submissions) - spinning:
        log = run_nbgrader(course, "autograde", assignment, "--force",
                           f"--CourseDirectory.student_id_exclude={','.join(sorted(spinning))}"
                           ).stdout
        logs.update(dict.fromkeys(set(submissions) - spinning, log))
    results = {}
    for student in submissions:
        graded = course / "autograded" / student / assignment / name
        assert graded.exists(), f"no autograded notebook for {student}:\n{logs[student]}"
        scores, max_scores, total, max_score = read_scores(course, assignment, assignment, student)
        results[student] = GradeResult(scores=scores, max_scores=max_scores, total=total,
                                       max_score=max_score,
                                       notebook=nbformat.read(graded, as_version=4),
                                       notebook_path=graded, log=logs[student])
    return results


def cut_by_validate(text: str) -> list[str]:
    """The lines of an error that ``nbgrader validate`` cuts (with its default width and
    indentation, as a student who set neither sees them): each is shown indented, and
    a line longer than the width less three is cut there and ends in "..."."""
    from nbgrader.validator import Validator
    width, indent = Validator.width.default_value, Validator.indent.default_value
    return [line for line in _ANSI.sub("", text).split("\n")
            if len(indent + line) > width - 3]


def graded_errors(result: GradeResult) -> dict:
    """``{grade_id: text}``: the error each failed graded cell of ``result`` shows, as
    Validate would quote it (the traceback's lines)."""
    errors = {}
    for cell in result.notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.cell_type == "code" and cell.metadata.get("nbgrader", {}).get("grade"):
            text = "\n".join("\n".join(out.get("traceback", []))
                             for out in cell.get("outputs", [])
                             if out.get("output_type") == "error")
            if text:
                errors[grade_id] = text
    return errors


def released_text(course_dir: os.PathLike | str, assignment: str) -> str:
    """All cell sources of the released notebook, joined (to check nothing leaks)."""
    nb = nbformat.read(Path(course_dir) / "release" / assignment / f"{assignment}.ipynb",
                       as_version=4)
    return "\n".join(cell.source for cell in nb.cells)


def autograded_ids(result: GradeResult) -> list:
    """The grade ids of the autograded (code) cells of a graded notebook."""
    return [gid for gid in result.max_scores
            if find_cell(result.notebook, gid).cell_type == "code"]


def submissions(source: os.PathLike | str | NotebookNode, changes: dict) -> dict:
    """The submissions of a round trip, built from the instructor's notebook ``source``.

    ``"solution"`` is ``source`` itself.  Every entry of ``changes`` names a
    submission and says how it differs from the solution: ``(cell, code)`` or
    ``(cell, code, region)``, the arguments of :func:`replace_solution`, a function
    of the notebook that gives the changed one (:func:`code_above`), or a list of
    such changes applied in turn.
    """
    built = {"solution": source}
    for name, change in changes.items():
        notebook = source
        for step in change if isinstance(change, list) else [change]:
            notebook = step(notebook) if callable(step) else replace_solution(notebook, *step)
        built[name] = notebook
    return built


def released_course(course_dir: os.PathLike | str, assignment: str) -> tuple:
    """Copy the course to ``course_dir`` and release ``assignment``: ``(course, released,
    source)``, the released notebook as a student gets it and the instructor's."""
    course = released_copy(course_dir, assignment)
    name = f"{assignment}.ipynb"
    return (course, nbformat.read(course / "release" / assignment / name, as_version=4),
            nbformat.read(source_notebook(course, assignment, name), as_version=4))


def release_and_grade(course_dir: os.PathLike | str, assignment: str, make_submissions,
                      spinning: Iterable[str] = ()) -> tuple:
    """Copy the course to ``course_dir``, release ``assignment``, grade its submissions.

    The release must consist of the one notebook ``<assignment>.ipynb``.
    ``make_submissions(source)`` builds the submissions (a dict, see
    :func:`autograde_many`) from the instructor's notebook; they are graded
    in one nbgrader run, those named in ``spinning`` in another.  Returns
    ``(course, results)``.
    """
    course = released_copy(course_dir, assignment)
    released = sorted((course / "release" / assignment).glob("*.ipynb"))
    assert [p.name for p in released] == [f"{assignment}.ipynb"]
    submissions = make_submissions(source_notebook(course, assignment, f"{assignment}.ipynb"))
    return course, autograde_many(course, assignment, submissions, spinning)


def graded_fixture(assignment: str, make_submissions, spinning: Iterable[str] = ()):
    """The module-scoped fixture ``graded`` of an exercise test: ``(course, results)``.

    The assignment is released in a fresh copy of the course and the
    submissions ``make_submissions(source)`` builds are graded once for the
    whole module, those that never return (``spinning``) with shorter
    budgets (see :func:`release_and_grade`).  Assign it to ``graded``::

        graded = graded_fixture("gray_codes", build_submissions, spinning=["spinning_rank"])
    """
    @pytest.fixture(scope="module")
    def graded(tmp_path_factory):
        course_dir = tmp_path_factory.mktemp(assignment) / "course"
        return release_and_grade(course_dir, assignment, make_submissions, spinning)
    return graded


def assert_full_marks(result) -> None:
    """Every autograded cell of ``result`` scored its maximum."""
    for gid in autograded_ids(result):
        assert result.scores[gid] == result.max_scores[gid], (gid, result.messages(gid))


#: What no release may contain: nbgrader's markers around solutions and hidden tests.
RELEASE_MARKERS = ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS")


def assert_release_hides(course, assignment: str, secrets, *, shows=(),
                         unanswered: int | None = None) -> str:
    """The released notebook's text, after checking what it must and must not hold.

    It holds no nbgrader marker and none of ``secrets``, but every string of
    ``shows`` (the signatures a student completes, the data they work on), and,
    when ``unanswered`` is given, exactly that many ``raise NotImplementedError()``.
    """
    text = released_text(course, assignment)
    for secret in (*RELEASE_MARKERS, *secrets):
        assert secret not in text, f"the release gives away {secret!r}"
    for shown in shows:
        assert shown in text, f"the release lacks {shown!r}"
    if unanswered is not None:
        assert text.count("raise NotImplementedError()") == unanswered
    return text


def assert_solution_full_marks(graded, assignment: str, autograded, max_score: int,
                               by_hand=None):
    """The instructor's solution in ``graded`` scores full marks; return its result.

    ``autograded`` are the grade ids of its autograded cells, ``max_score``
    the notebook's total, ``by_hand`` ``{grade_id: points}`` of the written
    parts graded by hand (they score 0 until a grader marks them); their
    rubrics must be shown to graders in full.
    """
    course, results = graded
    result = results["solution"]
    assert set(autograded_ids(result)) == set(autograded)
    assert_full_marks(result)
    for cell, points in (by_hand or {}).items():
        assert result.max_scores[cell] == points, (cell, result.max_scores)
    if by_hand:
        assert_rubrics_for_graders(course, assignment, result)
    assert result.max_score == max_score
    return result


def assert_isolation_message(result, cell: str) -> None:
    """``cell`` failed with the message for PEs that share Python globals: check_pe_isolation's,
    or that of a graded run whose PE, replayed in a process of its own, behaved otherwise."""
    text = " ".join(result.messages(cell).split())
    assert ("a value it never received: with all PEs in one Python process the results are "
            "right, but with each PE in its own process" in text
            or "behaves otherwise in a process of its own: started from the same data and fed "
               "the values it received in the run" in text), text
    assert ("A PE knows only its own data and the messages it received; PEs must not share "
            "Python globals" in text), text


#: nbgrader's markers around a rubric (a task cell's mark scheme): graders see it, students do not.
MARK_SCHEME = ("### BEGIN MARK SCHEME", "### END MARK SCHEME")


def rubric_text(cell: NotebookNode) -> str:
    """The mark scheme of a rubric cell (the lines between nbgrader's markers)."""
    lines = cell.source.split("\n")
    begin, end = (lines.index(marker) for marker in MARK_SCHEME)
    return "\n".join(lines[begin + 1:end])


def assert_rubrics_for_graders(course_dir: os.PathLike | str, assignment: str,
                               result: GradeResult) -> None:
    """Every rubric of the instructor's notebook is shown in full in ``result`` (formgrader's view)."""
    source = nbformat.read(source_notebook(course_dir, assignment, f"{assignment}.ipynb"),
                           as_version=4)
    rubrics = [c for c in source.cells if c.metadata["nbgrader"].get("task")]
    assert rubrics, "the assignment has no rubric"
    for cell in rubrics:
        shown = result.cell(cell.metadata["nbgrader"]["grade_id"]).source
        assert rubric_text(cell) in shown, f"formgrader does not show {cell.metadata['nbgrader']}"



@dataclass
class ValidateResult:
    """What ``nbgrader validate`` told a student about one notebook."""

    passed: bool
    """True when it said "Success!" (the student is told all visible tests pass)."""
    text: str
    """What it printed about this notebook, as the student reads it in a terminal.

    That includes what the notebook's kernel wrote to its standard error, which
    the kernel shares with ``nbgrader validate``: its warnings, and, now and then,
    ipykernel 7.4's own traceback of a race at shutdown (the control thread's
    last "idle" status scheduled on the IOPub thread's event pipe as the main
    thread closes it; ipykernel#1518 mended the same race on the IOPub socket
    only). The *Validate* button shows the report alone, whose failed cells'
    errors are :attr:`errors`.
    """

    @property
    def errors(self) -> list[str]:
        """The error of each failed cell as the report quotes it (what *Validate* shows)."""
        return _ERROR_SECTION.findall(self.text)

    @property
    def cut_lines(self) -> list[str]:
        """The lines of :attr:`errors` that Validate cut at its default width (each ends
        in "..." at exactly that width)."""
        from nbgrader.validator import Validator
        width = Validator.width.default_value
        return [line for error in self.errors for line in error.split("\n")
                if len(line) == width and line.endswith("...")]


# nbgrader's report of a failed cell: "The error was:", a blank line, the error
# indented, up to the rule of "=" that opens the next cell's report
_ERROR_SECTION = re.compile(r"^The error was:\n\n(.*?)(?=^={20,}$|\Z)", re.S | re.M)
_SUCCESS = "Success! Your notebook passes all the tests."


def validate_many(notebooks: dict, folder: os.PathLike | str,
                  name: str = "notebook.ipynb",
                  config_dir: os.PathLike | str | None = None) -> dict:
    """``{key: ValidateResult}``: each notebook validated as a student's Validate button does.

    ``notebooks`` maps a key to a notebook (file or in-memory). Each is written
    to ``folder/<key>/<name>`` (a student's assignment folder, outside the course
    directory, so no course configuration applies) and all are validated in one
    ``nbgrader validate`` command, with the interpreter that runs the tests and
    the Jupyter configuration directory ``config_dir``: by default an empty one;
    :func:`student_config` makes the one the README's student setup writes. (The
    kernel listens on Unix sockets, as every kernel the tests start: ``jupyter_kernels.py``.)
    """
    folder = Path(folder)
    paths = {}
    for key, notebook in notebooks.items():
        (folder / key).mkdir(parents=True, exist_ok=True)
        paths[key] = folder / key / name
        nbformat.write(_as_notebook(notebook), paths[key])
    if config_dir is None:
        config_dir = folder / ".jupyter-config"
        config_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config_dir))
    proc = subprocess.run([sys.executable, "-m", "nbgrader", "validate",
                           *map(str, paths.values())],
                          cwd=folder, env=env, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          timeout=COMMAND_TIMEOUT)
    text = _ANSI.sub("", proc.stdout)
    # nbgrader says "Validating '<path>'" before the report of each notebook
    parts = re.split(r"\[ValidateApp \| INFO\] Validating '([^']+)'\n", text)
    reports = {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}
    results = {}
    for key, path in paths.items():
        report = reports.get(str(path))
        if report is None:
            raise NbgraderError(f"nbgrader validate said nothing of {path}:\n{text}")
        results[key] = ValidateResult(passed=_SUCCESS in report, text=report)
    return results


def validate(notebook: os.PathLike | str | NotebookNode, folder: os.PathLike | str,
             name: str = "notebook.ipynb",
             config_dir: os.PathLike | str | None = None) -> ValidateResult:
    """One notebook validated as a student's Validate button does (see :func:`validate_many`)."""
    return validate_many({"student": notebook}, folder, name, config_dir)["student"]


def _course_demo():
    """tools/course_demo.py, the README's course rehearsal (loaded once, on first use)."""
    module = sys.modules.get("course_demo")
    if module is None:
        import importlib.util
        spec = importlib.util.spec_from_file_location("course_demo",
                                                      REPO_ROOT / "tools" / "course_demo.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module        # dataclasses look their module up there
        spec.loader.exec_module(module)
    return module


def student_config(home: os.PathLike | str, student_id: str = "student") -> Path:
    """The Jupyter configuration directory the README's student setup writes.

    Runs README.md's ``student-setup`` block verbatim as the student
    ``student_id`` whose home directory is ``home`` (created if need be; the
    exchange is ``home/exchange``) and returns ``home/.jupyter``: what
    :func:`validate_many` and :func:`jupyter_extensions` take as ``config_dir``.
    """
    home = Path(home)
    home.mkdir(parents=True, exist_ok=True)
    demo = _course_demo()
    (code,) = demo.readme_blocks()["student-setup"]
    demo.run_readme_block(code, home, home, EXCHANGE=str(home / "exchange"),
                          STUDENT_ID=student_id)
    return home / ".jupyter"


@dataclass
class JupyterExtensions:
    """What a user's Jupyter loads, with a given configuration directory."""

    server: dict[str, bool]
    """``{module: enabled}`` of the server extensions, as jupyter_server decides when it starts."""
    lab_disabled: list[str]
    """The JupyterLab plugins that ``jupyter labextension list`` reports disabled."""
    lab_listing: str = field(repr=False, default="")
    """All that ``jupyter labextension list`` printed."""


_SERVER_EXTENSIONS = """\
import json
from jupyter_server.serverapp import ServerApp
app = ServerApp()
app.load_config_file()          # what ServerApp.initialize does first,
app.find_server_extensions()    # then it adds the extensions that the .d folders enable
print(json.dumps(app.jpserver_extensions))
"""


def jupyter_extensions(config_dir: os.PathLike | str) -> JupyterExtensions:
    """The server extensions and JupyterLab plugins of a user whose configuration is ``config_dir``.

    The server extensions are those jupyter_server itself would load (it reads the
    same files as ``jupyter server`` does, ``jupyter_server_config.py`` included,
    which ``jupyter server extension list`` ignores); the disabled lab plugins are
    the ones ``jupyter labextension list`` names. No server is started.
    """
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(config_dir))
    for name in ("JUPYTER_CONFIG_PATH", "JUPYTER_PATH"):
        env.pop(name, None)
    run = functools.partial(subprocess.run, env=env, cwd=config_dir, stdin=subprocess.DEVNULL,
                            capture_output=True, text=True, timeout=COMMAND_TIMEOUT, check=True)
    server = json.loads(run([sys.executable, "-c", _SERVER_EXTENSIONS]).stdout.splitlines()[-1])
    listing = run([sys.executable, "-m", "jupyterlab.labextensions", "list"])
    text = _ANSI.sub("", listing.stdout + listing.stderr)
    disabled = []
    if "Disabled extensions:" in text:
        for line in text.split("Disabled extensions:", 1)[1].splitlines()[1:]:
            if not line.startswith("    ") or not line.strip():
                break
            disabled.append(line.strip())
    return JupyterExtensions(server=server, lab_disabled=disabled, lab_listing=text)
