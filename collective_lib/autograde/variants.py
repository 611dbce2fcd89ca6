"""Each student's own variant of an assignment: parameters derived from course, assignment and id.

An assignment declares its parameters in :data:`DECLARED` (each a sequence of choices);
:func:`variant` picks one choice per parameter from a keyed hash (HMAC-SHA256, keyed with
the course id :data:`COURSE`) of the assignment, the student id and the parameter's name.
The same student always gets the same values, on any machine and in any Python.

Who computes it:

* the student's notebook, in a locked set-up cell (``variant("fit_and_predict")``), from the
  student id nbgrader knows there (:func:`student_id`: the ``c.CourseDirectory.student_id``
  of the student's ``nbgrader_config.py``, else nbgrader's own rule: the login name, or
  ``JUPYTERHUB_USER`` for the ``jovyan`` login of a hub's containers);
* the trusted checker under ``nbgrader autograde`` (:mod:`.checker`), from the id nbgrader
  graded the submission under (``resources["nbgrader"]["student"]``, passed in the job by
  :mod:`.verdict`): :func:`use_student` fixes it there and in the student's sandboxed
  processes, before any cell runs, so what a notebook says or does cannot change it;
* the instructor: ``python -m collective_lib.autograde.variants list <assignment>
  [--students students.csv | gradebook.db]`` prints every student's values.

What it protects. The values of two students are independent: knowing another student's
values (or answers) says nothing about one's own, and an answer worked out for another
variant (numbers, or a function with another variant's constants written into it) fails the
hidden tests, whose messages never print the values that would pass. The checker rebuilds
the values from the id nbgrader records, so a student cannot choose a variant by editing the
notebook, its set-up cell or the environment.

What it does not. The key is the course id, which is public, because the student's own
notebook must compute its values without a secret (nbgrader releases one notebook for the
whole class, so nothing can be stamped per student): whoever knows a student's id can
compute that student's values with this module, and so do that student's work for them.
A function written for any parameters (reading them from the set-up cell) passes for every
variant, as it should, so variants do not catch a copied general solution; that is for the
similarity review (:mod:`.similarity`). Small sets of choices repeat: two students share a
variant with probability 1 / (number of combinations).
"""
from __future__ import annotations

import argparse
import ast
import csv
import hashlib
import hmac
import os
import pwd
import sqlite3
import sys
from collections.abc import Mapping

from .plain_text import terminal_text

__all__ = ["COURSE", "DECLARED", "Variant", "variant", "student_id", "use_student",
           "students_of", "listing", "main"]

#: The course id (``exercises/nbgrader_config.py``), the key of the hash.
COURSE = "collective"

#: ``{assignment: {parameter: choices}}``: what each assignment draws for its students.
DECLARED = {
    "reading_a_run": {
        "swaps": (1, 2, 3),                 # how often the pairs swap
        "copies": (1, 2, 3, 4),             # copies of the block in each swap (c m words)
    },
    "fit_and_predict": {
        "ts_us": tuple(round(1.0 + 0.25 * i, 2) for i in range(17)),      # 1 ... 5 us
        "tw_ns": tuple(round(0.2 + 0.05 * i, 2) for i in range(17)),      # 0.2 ... 1 ns
        "repeats": (2, 3, 4, 5, 8, 10),     # round trips timed together in one timing
        "seed": range(1, 1_000_000),        # of the synthetic noise
    },
    "cycles_crossover": {
        "blocks": (1, 2, 3, 4, 5, 6),       # the sizes searched are multiples of 2d * blocks
    },
    "allreduce_switch_point": {             # the two-level machine of part (ii): dyadic
        "ts_inside": (1, 2, 3),             # costs, so that ties between the two
        "tw_inside": (0.125, 0.25),         # algorithms are exact in floating point
        "ts_between": (8, 12, 16),
        "tw_between": (1, 2),
    },
}

_STUDENT = {"id": None}


class Variant(Mapping):
    """One student's values of one assignment: a read-only mapping, also by attribute."""

    def __init__(self, assignment: str, student: str, values: dict):
        self.assignment, self.student = assignment, student
        self._values = dict(values)

    def __getitem__(self, name):
        return self._values[name]

    def __iter__(self):
        return iter(self._values)

    def __len__(self):
        return len(self._values)

    def __getattr__(self, name):
        try:
            return self.__dict__["_values"][name]
        except KeyError:
            raise AttributeError(name) from None

    def __repr__(self):
        values = ", ".join(f"{name} = {value!r}" for name, value in self._values.items())
        return f"your variant of {self.assignment} (student {self.student}): {values}"


def _pick(assignment: str, student: str, name: str, choices):
    message = "\0".join((assignment, student, name)).encode()
    digest = hmac.new(COURSE.encode(), message, hashlib.sha256).digest()
    return choices[int.from_bytes(digest, "big") % len(choices)]


def variant(assignment: str, student: str | None = None) -> Variant:
    """The values of ``assignment`` for ``student`` (by default the one :func:`student_id` finds).

    >>> variant("reading_a_run", "alice") == variant("reading_a_run", "alice")
    True
    >>> sorted(variant("cycles_crossover", "alice"))
    ['blocks']
    """
    if assignment not in DECLARED:
        raise KeyError(f"{assignment!r} declares no variants (known: {sorted(DECLARED)})")
    student = student_id() if student is None else str(student)
    return Variant(assignment, student, {name: _pick(assignment, student, name, choices)
                                         for name, choices in DECLARED[assignment].items()})


def use_student(student: str | None) -> None:
    """Fix the student id of this process (the trusted checker and the sandbox do, from nbgrader)."""
    _STUDENT["id"] = None if student is None else str(student)


def _configured_id() -> str | None:
    """``c.CourseDirectory.student_id`` of the user's nbgrader_config.py files (the last wins)."""
    folders = [os.environ.get("JUPYTER_CONFIG_DIR") or os.path.expanduser("~/.jupyter"), "."]
    found = None
    for folder in folders:
        try:
            with open(os.path.join(folder, "nbgrader_config.py"), encoding="utf-8") as handle:
                tree = ast.parse(handle.read())
        except (OSError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if (isinstance(node, ast.Assign) and len(node.targets) == 1
                    and ast.unparse(node.targets[0]) == "c.CourseDirectory.student_id"
                    and isinstance(node.value, ast.Constant)
                    and isinstance(node.value.value, str) and node.value.value != "*"):
                found = node.value.value
    return found


def student_id() -> str:
    """The student id this notebook belongs to, as nbgrader would name the submission.

    In order: the id fixed by :func:`use_student` (under autograde), the environment's
    ``COLLECTIVE_STUDENT_ID``, ``c.CourseDirectory.student_id`` of nbgrader's configuration,
    and nbgrader's default, the login name (``JUPYTERHUB_USER`` when the login is ``jovyan``).
    """
    if _STUDENT["id"] is not None:
        return _STUDENT["id"]
    chosen = os.environ.get("COLLECTIVE_STUDENT_ID") or _configured_id()
    if chosen:
        return chosen
    try:
        login = pwd.getpwuid(os.getuid()).pw_name
    except KeyError:
        login = str(os.getuid())
    return os.environ.get("JUPYTERHUB_USER", login) if login == "jovyan" else login


def students_of(path: str) -> list:
    """The student ids in a gradebook (``gradebook.db``) or a CSV roster with an ``id`` column."""
    if path.endswith(".db"):
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            return sorted(row[0] for row in db.execute("SELECT id FROM student"))
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    column = next((c for c in ("id", "student_id", "Student ID") if rows and c in rows[0]), None)
    if column is None:
        raise ValueError(f"{path} has no column 'id' (or 'student_id')")
    return sorted(row[column] for row in rows)


def listing(assignment: str, students) -> str:
    """A table of every student's values of ``assignment``, one line per student."""
    names = list(DECLARED[assignment])
    rows = [["student", *names]] + [[s, *map(str, variant(assignment, s).values())]
                                    for s in students]
    widths = [max(len(row[i]) for row in rows) for i in range(len(names) + 1)]
    return terminal_text("\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths))
                                   .rstrip() for row in rows))          # ids are the students'


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m collective_lib.autograde.variants",
                                     description="Every student's variant of an assignment.")
    commands = parser.add_subparsers(dest="command", required=True)
    listed = commands.add_parser("list", help="print every student's values")
    listed.add_argument("assignment", choices=sorted(DECLARED))
    listed.add_argument("--students", default="gradebook.db",
                        help="the gradebook (.db) or a CSV roster with an 'id' column "
                             "(default: gradebook.db here)")
    args = parser.parse_args(argv)
    try:
        students = students_of(args.students)
    except (OSError, ValueError, sqlite3.Error) as err:
        print(f"cannot read the students of {args.students}: {err}", file=sys.stderr)
        return 2
    print(listing(args.assignment, students))
    return 0


if __name__ == "__main__":
    sys.exit(main())
