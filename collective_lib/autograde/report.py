"""The class's grades per question, as a text table and as a picture.

Reads the CSV of :class:`collective_lib.autograde.export.PerQuestionExportPlugin`::

    nbgrader export                       # the course's exporter writes grades.csv
    python -m collective_lib.autograde.report grades.csv             # the table
    python -m collective_lib.autograde.report grades.csv scores.png  # and the plot

The table lists, per assignment, each student's points per question and total,
and then the submissions that still wait for a manual grade. The plot shows,
one panel per assignment, every student's fraction of the points of each
question, so a question most of the class missed stands out.

This module is not imported by :mod:`collective_lib.autograde` itself: it is
run with ``python -m`` (runpy warns about a module the package already
imported), and autograding should not load matplotlib.
"""
from __future__ import annotations

import csv
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

from .export import MAX_PREFIX, SUBMISSION_COLUMNS, TOTAL_COLUMNS

__all__ = ["AssignmentGrades", "read_question_scores", "question_table",
           "plot_question_scores", "main"]


@dataclass
class AssignmentGrades:
    """The per-question grades of one assignment, read from the export."""

    name: str
    questions: list[str]
    """The ``<notebook>:<grade_id>`` columns of this assignment, in notebook order."""
    points: dict[str, float]
    """Points of each question."""
    scores: dict[str, dict[str, float | None]]
    """``{student: {question: score}}`` for the students who submitted; ``None``
    for a question that waits for a manual grade or was not submitted."""
    totals: dict[str, float]
    """Each student's total (after a late penalty), 0 without a submission."""
    max_score: float
    waiting: dict[str, list[str]]
    """``{student: [question, ...]}`` of the submissions that still wait for a grader."""


def read_question_scores(csv_path: str | Path) -> list[AssignmentGrades]:
    """The grades of each assignment in the per-question export ``csv_path``.

    Raises ValueError if the file is not such an export.
    """
    with open(csv_path, newline="") as fh:
        reader = csv.DictReader(fh)
        header = reader.fieldnames or []
        rows = list(reader)
    missing = [c for c in (*SUBMISSION_COLUMNS, *TOTAL_COLUMNS) if c not in header]
    if missing:
        raise ValueError(f"{csv_path} is not a per-question export (no column {missing[0]!r}); "
                         "write it with nbgrader export --exporter="
                         "collective_lib.autograde.export.PerQuestionExportPlugin")
    questions = [c for c in header if MAX_PREFIX + c in header]
    grades: dict[str, AssignmentGrades] = {}
    for row in rows:
        name = row["assignment"]
        if name not in grades:
            own = [q for q in questions if row[MAX_PREFIX + q] != ""]
            grades[name] = AssignmentGrades(
                name=name, questions=own,
                points={q: float(row[MAX_PREFIX + q]) for q in own}, scores={}, totals={},
                max_score=float(row["max_score"]), waiting={})
        entry, student = grades[name], row["student_id"]
        entry.totals[student] = float(row["score"])
        if row["submitted"] != "yes":
            continue
        entry.scores[student] = {q: float(row[q]) if row[q] != "" else None
                                 for q in entry.questions}
        if row["needs_manual_grade"]:
            entry.waiting[student] = row["needs_manual_grade"].split()
    return list(grades.values())


def _short(question: str) -> str:
    """A question's grade_id, without its notebook: 'gray_codes:gray_tests' -> 'gray_tests'."""
    return question.split(":", 1)[1]


def question_table(csv_path: str | Path) -> str:
    """The per-question export ``csv_path`` as a plain-text table, one block per assignment.

    A score is shown as ``points/max``; ``-`` marks a question that waits for
    a grader or was not submitted; the students who submitted nothing are
    named below the assignment's table. Submissions still waiting for a manual grade are listed
    after the table.
    """
    lines, waiting = [], []
    for grades in read_question_scores(csv_path):
        names = [_short(q) for q in grades.questions]
        header = ["student", *names, "total"]
        body, absent = [], []
        for student, total in grades.totals.items():
            if student not in grades.scores:
                absent.append(student)
                continue
            cells = ["-" if grades.scores[student][q] is None
                     else f"{grades.scores[student][q]:g}/{grades.points[q]:g}"
                     for q in grades.questions]
            body.append([student, *cells, f"{total:g}/{grades.max_score:g}"])
            if student in grades.waiting:
                waiting.append(f"  {student}, {grades.name}: {' '.join(grades.waiting[student])}")
        widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
        lines.append(f"{grades.name} ({grades.max_score:g} points)")
        for r in [header, *body]:
            lines.append("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
        if absent:
            lines.append(f"no submission: {', '.join(absent)}")
        lines.append("")
    if waiting:
        lines.append("Waiting for a manual grade (grade them in formgrader before the feedback):")
        lines.extend(waiting)
    else:
        lines.append("No submission waits for a manual grade.")
    return "\n".join(lines)


def plot_question_scores(csv_path: str | Path) -> Figure:
    """The class's fraction of points per question, one panel per assignment.

    Each dot is one student's score on one question divided by its points
    (slightly spread sideways so equal scores stay visible); the bar is the
    class mean. Questions that wait for a grader and students without a
    submission are left out.

    Returns
    -------
    matplotlib.figure.Figure
        Not attached to pyplot: save it with ``fig.savefig(path)``.
    """
    assignments = read_question_scores(csv_path)
    if not assignments:
        raise ValueError(f"{csv_path} holds no assignment")
    fig = Figure(figsize=(max(4.0, 1.4 * max(len(a.questions) for a in assignments) + 1.5),
                          2.6 * len(assignments)), layout="constrained")
    axes = fig.subplots(len(assignments), 1, squeeze=False)[:, 0]
    rng = np.random.default_rng(0)                    # the same picture every time
    for ax, grades in zip(axes, assignments):
        for x, q in enumerate(grades.questions):
            fractions = np.array([s[q] / grades.points[q] for s in grades.scores.values()
                                  if s[q] is not None and grades.points[q] > 0])
            if fractions.size:
                ax.scatter(x + rng.uniform(-0.15, 0.15, fractions.size), fractions,
                           s=18, alpha=0.7, color="tab:blue")
                ax.hlines(fractions.mean(), x - 0.3, x + 0.3, color="tab:red")
        ax.set_xticks(range(len(grades.questions)),
                      [f"{_short(q)}\n({grades.points[q]:g} pt)" for q in grades.questions])
        ax.set_xlim(-0.6, len(grades.questions) - 0.4)
        ax.set_ylim(-0.05, 1.05)
        ax.set_ylabel("fraction of points")
        count = len(grades.scores)
        ax.set_title(f"{grades.name}: {count} submission{'' if count == 1 else 's'} "
                     "(red: class mean)")
    return fig


def main(argv: list[str] | None = None) -> int:
    """``python -m collective_lib.autograde.report grades.csv [plot.png]``."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (1, 2):
        sys.stdout.write("usage: python -m collective_lib.autograde.report grades.csv [plot.png]\n")
        return 2
    sys.stdout.write(question_table(args[0]) + "\n")
    if len(args) == 2:
        plot_question_scores(args[0]).savefig(args[1], dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
