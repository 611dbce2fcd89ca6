"""Per-question grades: an nbgrader export with one column per graded cell.

nbgrader's own ``nbgrader export`` writes one total per student and assignment.
:class:`PerQuestionExportPlugin` writes, for every (student, assignment), the
score of each graded cell, so an instructor sees which question the class
struggled with (``python -m collective_lib.autograde.report`` draws it)::

    nbgrader export --exporter=collective_lib.autograde.export.PerQuestionExportPlugin

(``exercises/nbgrader_config.py`` makes it the course's exporter.) The CSV
(``grades.csv`` unless ``--to`` names another file) has the columns

``assignment, student_id, submitted, timestamp``
    the submission: ``submitted`` is ``yes`` or ``no`` (the student handed in
    nothing), ``timestamp`` the time of submission if nbgrader knows it;
``<notebook>:<grade_id>``
    one per graded cell of every exported assignment, in the order of the
    source notebook: the cell's score, empty if the cell belongs to another
    assignment, if nothing was submitted, or if the cell still waits for a
    manual grade (or its notebook was not submitted);
``late_submission_penalty, score, max_score``
    as in nbgrader's CSV (``score`` is the total after the penalty, 0 without
    a submission);
``needs_manual_grade``
    the ``<notebook>:<grade_id>`` of the cells that still wait for a grader,
    separated by spaces (empty when the submission is fully graded: only then
    may its feedback go out);
``max:<notebook>:<grade_id>``
    the points of each graded cell (empty for the other assignments' cells).
"""
from __future__ import annotations

import csv
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.coursedir import CourseDirectory
from nbgrader.plugins import ExportPlugin

from .plain_text import spreadsheet_cell

__all__ = ["PerQuestionExportPlugin", "question_column", "SUBMISSION_COLUMNS", "TOTAL_COLUMNS",
           "MAX_PREFIX"]

#: The columns before the per-question scores.
SUBMISSION_COLUMNS = ("assignment", "student_id", "submitted", "timestamp")
#: The columns after the per-question scores (then come the ``max:`` columns).
TOTAL_COLUMNS = ("late_submission_penalty", "score", "max_score", "needs_manual_grade")
#: Prefix of the columns that hold each question's points.
MAX_PREFIX = "max:"


def question_column(notebook: str, grade_id: str) -> str:
    """The CSV column of one graded cell.

    >>> question_column("gray_codes", "gray_tests")
    'gray_codes:gray_tests'
    """
    return f"{notebook}:{grade_id}"


def _format_number(value: float) -> str:
    """A score as the CSV shows it: 3.0 -> '3', 1.5 -> '1.5'."""
    return f"{float(value):g}"


class PerQuestionExportPlugin(ExportPlugin):
    """Export one row per (student, assignment) with one column per graded cell.

    Honours ``--to`` (default ``grades.csv``), ``--student`` and ``--assignment``
    like nbgrader's CSV exporter. The columns are described in the module
    docstring.
    """

    def export(self, gradebook: Gradebook) -> None:
        dest = Path(self.to or "grades.csv")
        students = [str(s) for s in self.student]
        assignments = [a for a in gradebook.assignments
                       if not self.assignment or a.name in {str(x) for x in self.assignment}]
        coursedir = CourseDirectory(parent=self)
        questions = {a.name: self._questions(coursedir, a) for a in assignments}
        columns = [question_column(nb, gid)
                   for a in assignments for nb, gid, _ in questions[a.name]]
        header = [*SUBMISSION_COLUMNS, *columns, *TOTAL_COLUMNS,
                  *(MAX_PREFIX + c for c in columns)]
        self.log.info("Exporting grades per question to %s", dest)
        with open(dest, "w", newline="") as fh:
            writer = csv.DictWriter(fh, fieldnames=header, restval="")
            writer.writeheader()
            for assignment in assignments:
                for student in gradebook.students:
                    if students and student.id not in students:
                        continue
                    row = self._row(gradebook, assignment, student.id,
                                    questions[assignment.name])
                    writer.writerow({k: spreadsheet_cell(v) for k, v in row.items()})

    def _questions(self, coursedir: CourseDirectory, assignment) -> list[tuple[str, str, float]]:
        """``(notebook, grade_id, points)`` of every graded cell of ``assignment``.

        In the order of the source notebooks; cells the source no longer has
        (or an assignment whose source is gone) come after, by name.
        """
        result = []
        for notebook in assignment.notebooks:
            path = Path(coursedir.format_path(coursedir.source_directory, ".", assignment.name),
                        f"{notebook.name}.ipynb")
            order = {}
            if path.exists():
                cells = nbformat.read(path, as_version=4).cells
                ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in cells]
                order = {gid: i for i, gid in enumerate(ids) if gid is not None}
            # a 0-point task cell is a graders' rubric, not a question
            graded = sorted((c for c in notebook.grade_cells + notebook.task_cells
                             if c.max_score), key=lambda c: (order.get(c.name, len(order)),
                                                             c.name))
            result.extend((notebook.name, c.name, c.max_score) for c in graded)
        return result

    def _row(self, gradebook: Gradebook, assignment, student_id: str, questions) -> dict:
        row = {"assignment": assignment.name, "student_id": student_id,
               "max_score": _format_number(assignment.max_score)}
        for nb, gid, points in questions:
            row[MAX_PREFIX + question_column(nb, gid)] = _format_number(points)
        try:
            submission = gradebook.find_submission(assignment.name, student_id)
        except MissingEntry:
            row.update(submitted="no", timestamp="", late_submission_penalty="0", score="0")
            return row
        grades = {(snb.name, g.name): g for snb in submission.notebooks for g in snb.grades}
        waiting = []
        for nb, gid, _ in questions:
            grade = grades.get((nb, gid))
            if grade is None:                # a notebook the student did not submit
                continue
            if grade.needs_manual_grade:
                waiting.append(question_column(nb, gid))
            else:
                row[question_column(nb, gid)] = _format_number(grade.score)
        penalty = submission.late_submission_penalty or 0.0
        row.update(submitted="yes", timestamp=str(submission.timestamp or ""),
                   late_submission_penalty=_format_number(penalty),
                   score=_format_number(max(0.0, submission.score - penalty)),
                   needs_manual_grade=" ".join(waiting))
        return row
