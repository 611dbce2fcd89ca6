"""Rehearse README "Running a course": its commands, verbatim, for a class of three.

``make course-demo`` (or ``python tools/course_demo.py``) copies the course
directory into a temporary directory (never touching ``exercises/``), gives the
instructor and each student a home directory of their own (so no real
``~/.jupyter`` is read or written) and an exchange in the same temporary
directory, and runs every shell block of README.md marked
``<!-- course-workflow: ROLE -->`` in the order of an actual course:

=================  =============================================================
role               run
=================  =============================================================
install            never (the rehearsal uses the environment it runs in)
instructor-setup   once, in the course directory
student-setup      per student (``$STUDENT_ID``), in the student's home
release            per assignment (``$A``), in the course directory
fetch, submit      per assignment and student, in the student's home; between
                   them the student's answers are written into ``$A/$A.ipynb``
grade              per assignment, in the course directory
waiting            once, in the course directory; then the written answers are
                   graded (as formgrader would) through nbgrader's API
feedback           per assignment, in the course directory
student-feedback   per student, in the student's home, for the assignments in
                   :data:`FEEDBACK_FETCHED`
export             once, in the course directory
=================  =============================================================

The class (:data:`CLASS`): ``alice`` hands in the reference solutions, ``bob``
and ``carol`` typical wrong answers, each a single bug (``carol`` skips one
assignment). tests/exercises/test_course_workflow.py runs the same rehearsal and
checks every per-question score. The answers are built with the exercise tests'
helpers (tests/nbgrader_harness.py).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

REPO_ROOT = Path(__file__).resolve().parents[1]
# The students' answers are built with the exercise tests' own helper module.
sys.path.insert(0, str(REPO_ROOT / "tests"))

import nbgrader_harness as h  # noqa: E402  (found through the line above)
from nbgrader.api import Gradebook  # noqa: E402

from collective_lib.autograde.report import question_table  # noqa: E402

__all__ = ["ROLES", "Answers", "MODEL_ANSWER", "CLASS", "ASSIGNMENTS", "FEEDBACK_FETCHED",
           "MANUAL_GRADES", "readme_blocks", "run_readme_block",
           "rehearse", "main"]

README = REPO_ROOT / "README.md"
COURSE_ID = "collective"

#: The roles of the README's course blocks, in the order a course runs them.
ROLES = ("install", "instructor-setup", "student-setup", "release", "fetch", "submit",
         "grade", "waiting", "feedback", "student-feedback", "export")
_ONCE = {"instructor-setup", "waiting", "export"}
_MARKER = re.compile(r"<!-- course-workflow: ([\w-]+) -->\s*\n```sh\n(.*?)\n```", re.S)
# Jupyter locations that would override the per-person home directories.
_JUPYTER_ENV = ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR",
                "JUPYTER_PATH", "JUPYTER_CONFIG_PATH", "JUPYTERHUB_USER", "IPYTHONDIR")

#: The three quickest assignments to autograde (measured), in release order.
ASSIGNMENTS = ("gray_codes", "float_associativity", "pipelining_theorem_13_3")
#: The assignments whose feedback the students fetch: the one with a written answer.
FEEDBACK_FETCHED = ("float_associativity",)


@dataclass
class Answers:
    """One student's notebook for one assignment, as changes to the reference.

    ``code`` maps a solution cell's grade_id to the code that replaces its
    solution (see :func:`nbgrader_harness.replace_solution`); ``written`` maps
    a written answer's grade_id to its text, or to :data:`MODEL_ANSWER` for the
    source notebook's (absent: left as released).
    """

    code: dict[str, str] = field(default_factory=dict)
    written: dict[str, str] = field(default_factory=dict)


#: A written answer that copies the model answer of the source notebook.
MODEL_ANSWER = "<the source notebook's model answer>"

#: ``{student: {assignment: Answers or None (no submission)}}``.
CLASS = {
    "alice": {
        "gray_codes": Answers(),
        "float_associativity": Answers(written={"explain_consequences": MODEL_ANSWER}),
        "pipelining_theorem_13_3": Answers(),
    },
    "bob": {
        # forgets that the ring wraps around: right for Figure 7's example, wrong elsewhere
        "gray_codes": Answers(code={"index_solution": "return gray_of(gray_rank(pa) + s)"}),
        # sums the Python floats, not float32 values
        "float_associativity": Answers(
            code={"sum_solution": "return algorithms[algorithm].simulate(len(values), "
                                  "inputs=list(values)).results[0]"},
            written={"explain_consequences": "The sum depends on the order of the additions, "
                                             "so it can change with p."}),
        # takes the optimum of the Lemma 13.2 bound instead of searching the simulation
        "pipelining_theorem_13_3": Answers(code={"best_k_solution": (
            "height = max(1, math.ceil(math.log2(p)))\n"
            "return max(1, round(math.sqrt(beta * n * (2 * height - 3) / (3 * alpha))))")}),
    },
    "carol": {
        # one transition too many: 2**d entries instead of 2**d - 1
        "gray_codes": Answers(code={"transitions_solution": (
            "return [(gray_of(u) ^ gray_of(u + 1)).bit_length() - 1 for u in range(2**d)]")}),
        # values that cancel nowhere: both trees give the same sum; no written answer
        "float_associativity": Answers(code={"data_solution": "my_values = [1.0] * 16"}),
        "pipelining_theorem_13_3": None,
    },
}

#: The points a grader gives each written answer in formgrader:
#: ``{(student, assignment, grade_id): points}``.
MANUAL_GRADES = {
    ("alice", "float_associativity", "explain_consequences"): 2,
    ("bob", "float_associativity", "explain_consequences"): 1,
}


def readme_blocks(readme: Path = README) -> dict[str, list[str]]:
    """``{role: [shell code, ...]}`` of the README's ``<!-- course-workflow: ROLE -->`` blocks.

    Raises ValueError for an unknown role, a role other than ``install`` marked
    twice or missing, or roles out of the order of :data:`ROLES`.
    """
    found = [(m.group(1), m.group(2)) for m in _MARKER.finditer(readme.read_text())]
    unknown = [role for role, _ in found if role not in ROLES]
    if unknown:
        raise ValueError(f"{readme}: unknown course-workflow role {unknown[0]!r}; known: {ROLES}")
    blocks: dict[str, list[str]] = {}
    for role, code in found:
        blocks.setdefault(role, []).append(code)
    order = list(dict.fromkeys(role for role, _ in found))
    if order != list(ROLES):
        raise ValueError(f"{readme}: the course-workflow blocks are {order}, expected one of "
                         f"each role in the order {list(ROLES)}")
    twice = [role for role, codes in blocks.items() if len(codes) > 1 and role != "install"]
    if twice:
        raise ValueError(f"{readme}: more than one course-workflow block {twice[0]!r}")
    return blocks


def run_readme_block(code: str, cwd: Path, home: Path, **variables: str) -> str:
    """Run the README's shell ``code`` in ``cwd`` as a person whose home is ``home``.

    ``variables`` (``EXCHANGE``, ``STUDENT_ID``, ``A``...) are set in the
    environment, no Jupyter location of the caller's environment applies, and the
    programs of this interpreter's environment come first on the PATH. Returns
    the output; raises :class:`nbgrader_harness.NbgraderError` on failure.
    """
    env = {k: v for k, v in os.environ.items() if k not in _JUPYTER_ENV}
    env.update(HOME=str(home), **variables,
               PATH=os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")]))
    proc = subprocess.run(["bash", "-e", "-u", "-o", "pipefail", "-c", code], cwd=cwd,
                          env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, timeout=h.COMMAND_TIMEOUT)
    if proc.returncode != 0:
        raise h.NbgraderError(f"README block failed with status {proc.returncode} "
                              f"({variables}):\n{code}\n{proc.stdout}")
    return proc.stdout


class _Rehearsal:
    """The people, directories and environment of one rehearsal under ``root``."""

    def __init__(self, root: Path, log):
        self.root, self.log = root, log
        self.course = h.copy_course(root / "exercises")
        self.exchange = root / "exchange"
        self.homes = {person: root / "home" / person for person in ["instructor", *CLASS]}
        for home in self.homes.values():
            home.mkdir(parents=True)
        self.blocks = readme_blocks()

    def run(self, role: str, person: str, **variables: str) -> str:
        """Run the README block ``role`` as ``person``; its output. Raises on failure."""
        home = self.homes[person]
        cwd = self.course if person == "instructor" else home
        (code,) = self.blocks[role]
        self.log("$ " + " ".join([role, person, *variables.values()]))
        try:
            return run_readme_block(code, cwd, home, EXCHANGE=str(self.exchange), **variables)
        except h.NbgraderError as err:
            raise h.NbgraderError(f"README block {role!r} failed for {person}: {err}") from None

    def answer(self, student: str, assignment: str, answers: Answers) -> None:
        """Write ``answers`` into the student's fetched notebook, as saving in Jupyter would."""
        path = self.homes[student] / assignment / f"{assignment}.ipynb"
        source = h.source_notebook(self.course, assignment, f"{assignment}.ipynb")
        answered = nbformat.read(source, as_version=4)
        for gid, code in answers.code.items():
            answered = h.replace_solution(answered, gid, code)
        written = {gid: h.find_cell(answered, gid).source if text == MODEL_ANSWER else text
                   for gid, text in answers.written.items()}
        nbformat.write(h.answered_release(path, answered, written), path)

    def grade_by_hand(self) -> None:
        """Enter :data:`MANUAL_GRADES` as formgrader does (manual score, then no longer waiting)."""
        with Gradebook(f"sqlite:///{self.course / 'gradebook.db'}", COURSE_ID) as gb:
            for (student, assignment, gid), points in MANUAL_GRADES.items():
                grade = gb.find_grade(gid, assignment, assignment, student)
                grade.manual_score = points
                grade.needs_manual_grade = False
            gb.db.commit()


def rehearse(root: os.PathLike | str, log=lambda line: None,
             student_feedback: tuple[str, ...] = FEEDBACK_FETCHED) -> dict[str, str]:
    """Run the README's course workflow under ``root`` (an empty directory).

    ``log`` is called with one line per block run. The students fetch the
    feedback of the assignments in ``student_feedback`` (each nbgrader command
    takes seconds to start, and one is enough to show the step). Returns the outputs of the
    steps whose text matters: ``{"waiting": ..., "export": ...}``; the grades
    are in ``<root>/exercises/grades.csv`` (and the plot in ``grades.png``).
    """
    r = _Rehearsal(Path(root), log)
    r.run("instructor-setup", "instructor")
    for student in CLASS:
        r.run("student-setup", student, STUDENT_ID=student)
    for a in ASSIGNMENTS:
        r.run("release", "instructor", A=a)
    for a in ASSIGNMENTS:
        for student, work in CLASS.items():
            if work[a] is None:
                continue
            r.run("fetch", student, A=a)
            r.answer(student, a, work[a])
            r.run("submit", student, A=a)
    for a in ASSIGNMENTS:
        r.run("grade", "instructor", A=a)
    outputs = {"waiting": r.run("waiting", "instructor")}
    r.grade_by_hand()
    for a in ASSIGNMENTS:
        r.run("feedback", "instructor", A=a)
        for student, work in CLASS.items():
            if work[a] is not None and a in student_feedback:
                r.run("student-feedback", student, A=a)
    outputs["export"] = r.run("export", "instructor")
    return outputs


def main() -> int:
    """Rehearse in a temporary directory and print the per-question grades."""
    with tempfile.TemporaryDirectory(prefix="course-demo-") as tmp:
        sys.stdout.write(f"Rehearsing README 'Running a course' in {tmp} with "
                         f"{', '.join(CLASS)} and {', '.join(ASSIGNMENTS)}\n")
        rehearse(tmp, log=lambda line: sys.stdout.write(line + "\n"))
        sys.stdout.write("\n" + question_table(Path(tmp) / "exercises" / "grades.csv") + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
