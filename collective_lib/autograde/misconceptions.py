"""What the class got wrong: an assignment's failed checks, grouped by their cause.

A failed graded cell of an autograded notebook keeps why it failed: the
trusted checker sends the kind of the failed check
(:data:`collective_lib.grading.KINDS`: ``"wrong_result"``, ``"deadlock"``,
``"message_size"``, ...) and ``TrustedVerdict`` stores it in the cell's metadata
(``{"collective_lib": {"failure": kind}}``) beside the error the student reads.
This report counts them, per graded cell, after ``nbgrader autograde``::

    python -m collective_lib.autograde.misconceptions scatter_any_root
    python -m collective_lib.autograde.misconceptions scatter_any_root --course exercises \\
        --out failures.csv

For every graded cell of the assignment (in the source notebook's order) it
lists the causes of failure, most frequent first, each with the number of
submissions that failed that way, their share of the submissions graded, and
one example message from a real submission (the first student, by id, with
that cause), so an instructor reads "40%: wrong_result ... e.g. every PE got the
message of the PE `root` places away" rather than "question 1: 0.6 average".
Submissions come from the gradebook (``gradebook.db`` of the course directory),
the verdicts from the autograded notebooks (``autograded/<student>/<assignment>/``).
A failed cell graded before kinds were recorded counts as ``"unrecorded"``.

The CSV (``--out``) has one row per (cell, cause): ``assignment, notebook,
grade_id, points, submissions, failed, kind, count, share, meaning,
example_student, example``.
"""
from __future__ import annotations

import argparse
import csv
import io
import sys
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry

from ..grading import KINDS
from .plain_text import spreadsheet_cell, terminal_text
from .verdict import FAILURE_METADATA

__all__ = ["Cause", "CellFailures", "failures_by_cause", "failures_text", "failures_csv",
           "UNRECORDED", "main"]

#: The kind of a failed cell whose notebook was graded before kinds were recorded.
UNRECORDED = "unrecorded"
_EXAMPLE_LINES = 6
_EXAMPLE_CHARS = 600


@dataclass
class Cause:
    """One cause of failure of one graded cell."""

    kind: str
    count: int
    """Submissions whose cell failed this way."""
    share: float
    """``count`` divided by the submissions graded on this cell."""
    example: str
    """The failure's message in one submission (shortened)."""
    example_student: str


@dataclass
class CellFailures:
    """The failures of one graded cell across the class."""

    notebook: str
    grade_id: str
    points: float
    submissions: int
    """Submissions whose autograded notebook holds this cell."""
    causes: list = field(default_factory=list)
    """The :class:`Cause` list, most frequent first."""

    @property
    def failed(self) -> int:
        return sum(c.count for c in self.causes)


def _course_paths(course: str | Path) -> tuple:
    root = Path(course).resolve()
    if not root.is_dir():
        raise ValueError(f"the course directory {str(course)!r} does not exist")
    gradebook = root / "gradebook.db"
    if not gradebook.is_file():
        raise ValueError(f"{str(course)!r} holds no gradebook.db: is it the course directory "
                         "(where nbgrader autograde ran)? Name it with --course DIR")
    return root, f"sqlite:///{gradebook}"


def _graded_cells(root: Path, assignment: str, notebook) -> list:
    """``(grade_id, points)`` of the notebook's autograded code cells, in the source's order."""
    path = root / "source" / assignment / f"{notebook.name}.ipynb"
    order = {}
    if path.is_file():
        ids = [c.metadata.get("nbgrader", {}).get("grade_id")
               for c in nbformat.read(path, as_version=4).cells]
        order = {gid: i for i, gid in enumerate(ids) if gid is not None}
    solutions = {c.name for c in notebook.solution_cells}
    cells = [c for c in notebook.grade_cells
             if c.cell_type == "code" and c.name not in solutions]
    cells.sort(key=lambda c: (order.get(c.name, len(order)), c.name))
    return [(c.name, float(c.max_score or 0)) for c in cells]


def _failure(cell) -> tuple | None:
    """``(kind, message)`` of a graded cell of an autograded notebook, None if it passed."""
    errors = [out for out in cell.get("outputs", []) if out.get("output_type") == "error"]
    recorded = (cell.metadata.get(FAILURE_METADATA) or {}).get("failure")
    if not errors and recorded is None:
        return None
    kind = recorded if recorded in KINDS else UNRECORDED
    message = str(errors[0].get("evalue", "")) if errors else ""
    return kind, message


def _shorten(message: str) -> str:
    lines = message.strip().splitlines()
    text = "\n".join(lines[:_EXAMPLE_LINES]) + ("\n..." if len(lines) > _EXAMPLE_LINES else "")
    return text if len(text) <= _EXAMPLE_CHARS else text[:_EXAMPLE_CHARS - 3] + "..."


def failures_by_cause(assignment: str, course: str | Path = ".") -> list:
    """The :class:`CellFailures` of every graded cell of ``assignment``, in notebook order.

    Raises ValueError naming what is wrong: a course directory without a
    gradebook, an assignment the gradebook does not know (with the ones it
    does), or an assignment nothing of which was autograded.
    """
    root, db_url = _course_paths(course)
    with Gradebook(db_url) as gb:
        try:
            found = gb.find_assignment(assignment)
        except MissingEntry:
            known = ", ".join(sorted(a.name for a in gb.assignments)) or "none"
            raise ValueError(f"the gradebook of {str(course)!r} has no assignment "
                             f"{assignment!r} (it has: {known})") from None
        notebooks = [(nb.name, _graded_cells(root, assignment, nb)) for nb in found.notebooks]
        students = sorted(s.student.id for s in found.submissions)
    if not students:
        raise ValueError(f"nothing of {assignment!r} has been autograded yet "
                         f"(nbgrader autograde {assignment})")
    report = []
    for notebook, cells in notebooks:
        seen = {gid: 0 for gid, _ in cells}
        failures = {gid: {} for gid, _ in cells}
        for student in students:
            path = root / "autograded" / student / assignment / f"{notebook}.ipynb"
            if not path.is_file():
                continue
            graded = {c.metadata.get("nbgrader", {}).get("grade_id"): c
                      for c in nbformat.read(path, as_version=4).cells}
            for gid in seen:
                if gid not in graded:
                    continue
                seen[gid] += 1
                failed = _failure(graded[gid])
                if failed is not None:
                    failures[gid].setdefault(failed[0], []).append((student, failed[1]))
        rank = {kind: i for i, kind in enumerate([*KINDS, UNRECORDED])}
        for gid, points in cells:
            causes = [Cause(kind=kind, count=len(who), share=len(who) / seen[gid],
                            example=_shorten(who[0][1]), example_student=who[0][0])
                      for kind, who in failures[gid].items()]
            causes.sort(key=lambda c: (-c.count, rank[c.kind]))
            report.append(CellFailures(notebook=notebook, grade_id=gid, points=points,
                                       submissions=seen[gid], causes=causes))
    return report


def _meaning(kind: str) -> str:
    return KINDS.get(kind, "failed before the checker recorded kinds")


def failures_text(assignment: str, cells: list) -> str:
    """The report as plain text: per graded cell, its causes with counts, shares and an example."""
    lines = [f"What the class got wrong in {assignment}: the failed checks by cause"]
    for cell in cells:
        lines.append("")
        head = f"{cell.notebook}:{cell.grade_id} ({cell.points:g} points)"
        if not cell.submissions:
            lines.append(f"{head}: no submission graded")
            continue
        lines.append(f"{head}: failed in {cell.failed} of {cell.submissions} submissions "
                     f"({cell.failed / cell.submissions:.0%})")
        for cause in cell.causes:
            lines.append(f"  {cause.share:4.0%}  {cause.count:3d}  {cause.kind}: "
                         f"{_meaning(cause.kind)}")
            example = cause.example.splitlines() or [""]
            lines.append(f"              e.g. ({cause.example_student}) {example[0]}")
            lines.extend(f"                   {line}" for line in example[1:])
    return terminal_text("\n".join(lines))       # the examples are the students' messages


def failures_csv(assignment: str, cells: list) -> str:
    """The report as CSV, one row per (graded cell, cause); a cell without failures has one
    row with an empty kind."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["assignment", "notebook", "grade_id", "points", "submissions", "failed",
                     "kind", "count", "share", "meaning", "example_student", "example"])
    for cell in cells:
        common = [assignment, cell.notebook, cell.grade_id, f"{cell.points:g}",
                  cell.submissions, cell.failed]
        if not cell.causes:
            writer.writerow(map(spreadsheet_cell, common + ["", 0, "0", "", "", ""]))
        for cause in cell.causes:
            writer.writerow(map(spreadsheet_cell, common + [
                cause.kind, cause.count, f"{cause.share:.4g}", _meaning(cause.kind),
                cause.example_student, cause.example]))
    return out.getvalue()


def main(argv: list | None = None) -> int:
    """``python -m collective_lib.autograde.misconceptions <assignment> [--course DIR] [--out FILE]``."""
    parser = argparse.ArgumentParser(
        prog="python -m collective_lib.autograde.misconceptions",
        description="The failed checks of an autograded assignment, grouped by cause.")
    parser.add_argument("assignment")
    parser.add_argument("--course", default=".", help="the nbgrader course directory "
                        "(with gradebook.db and autograded/); default: here")
    parser.add_argument("--out", help="also write the report as CSV to this file")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        cells = failures_by_cause(args.assignment, args.course)
    except ValueError as err:
        sys.stderr.write(f"misconceptions: {err}\n")
        return 2
    sys.stdout.write(failures_text(args.assignment, cells) + "\n")
    if args.out:
        try:
            Path(args.out).write_text(failures_csv(args.assignment, cells))
        except OSError as err:
            sys.stderr.write(f"misconceptions: cannot write the CSV to {args.out!r}: "
                             f"{err.strerror or err}\n")
            return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
