"""Grades into the LMS: nbgrader's totals as a CSV that Canvas or Moodle imports.

One row per student of the instructor's roster, one column per assignment
holding nbgrader's total for it after the late penalty. Students are matched
through a roster CSV that the instructor provides: one column holds the
nbgrader student id (``--id-column``, ``student_id`` unless told otherwise),
the others the student's identity in the LMS. As nbgrader exporters::

    nbgrader export --exporter=collective_lib.autograde.lms.CanvasExportPlugin \\
        --LMSExportPlugin.roster=roster.csv --LMSExportPlugin.id_column="SIS Login ID" \\
        --to=canvas.csv
    nbgrader export --exporter=collective_lib.autograde.lms.MoodleExportPlugin \\
        --LMSExportPlugin.roster=roster.csv --to=moodle.csv

or, shorter, from the course directory (where ``gradebook.db`` is)::

    python -m collective_lib.autograde.lms canvas --roster roster.csv --id-column "SIS Login ID"
    python -m collective_lib.autograde.lms moodle --roster roster.csv --identifier email

Canvas (*Grades -> Import*) reads its own gradebook CSV
(Canvas Instructor Guide, "How do I import grades in the Gradebook?",
https://community.canvaslms.com/t5/Instructor-Guide/How-do-I-import-grades-in-the-Gradebook/ta-p/807;
the required columns as Ohio State's guide lists them,
https://teaching.resources.osu.edu/toolsets/carmencanvas/guides/calculating-final-grades/import-csv-file-carmen-grades):
the columns ``Student, ID, SIS User ID, SIS Login ID, Section`` identify the
student (Canvas needs one of the name, ``ID`` or ``SIS User ID``, and matches
on them), then one column per assignment named ``Assignment Name (assignment
id)``, as Canvas's own export names it; a header without the ``(id)`` makes
Canvas create a new assignment of that name. The row after the header holds
``Points Possible`` in the ``Student`` column and each assignment's points.
The identity columns are copied from the roster's columns of those names (a
column the roster lacks stays empty), so the instructor may use Canvas's own
gradebook export as the roster, with the nbgrader ids in one of its columns
(its ``Points Possible`` row is skipped). By default an assignment's column is
its nbgrader name; ``--column ps1="Problem set 1 (1234)"`` names the Canvas
assignment (id 1234) it fills.

Moodle (*Grades -> Import -> CSV file*) takes any CSV with a header row and
maps its columns at import (MoodleDocs, "Grade import",
https://docs.moodle.org/405/en/Grade_import; the importer,
``grade/import/csv/classes/load_data.php``): the first column here is the
roster's identifier column (``--identifier``, ``email`` unless told
otherwise), which the instructor maps under *Identify user by* from that
column to the user field it holds (*Email address*, *ID number* or
*Username*), and each assignment column is mapped to a grade item (or to a
new grade item named after the column). Moodle aborts the whole import at a
row whose user it cannot find, so every roster row must have the identifier.

Scores are nbgrader's total of the submission after its late penalty
(never below 0), written as plain numbers (``4.5``, ``3``). A cell is left
empty when

* the student submitted nothing: the LMS then shows the assignment as not
  graded (its own policy for missing work applies, and the empty cell tells the
  instructor who did not hand in) instead of a 0 that looks like a graded
  submission; to give 0 instead, set a default grade in the LMS;
* the submission still waits for a manual grade: its total would leave out the
  written answers, so it is not exported until formgrader has graded them;
* the student is in the roster but not in the gradebook.

An empty cell is "no grade" in both LMSs: Moodle removes a grade entered there
by hand (``load_data.php`` reads ``''`` and ``'-'`` as no grade), so export
again once everything is graded rather than filling cells by hand first.

Students who do not match are named, not dropped: a gradebook student missing
from the roster (whose grades cannot be imported) and a roster row whose id
the gradebook does not know (who gets an empty row), as well as the
submissions that wait for a grader. The exporter logs them as warnings; the
command prints them and exits with status 1 if a student did not match.
"""
from __future__ import annotations

import argparse
import csv
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

from nbgrader.api import Gradebook, MissingEntry
from nbgrader.plugins import ExportPlugin
from traitlets import Dict, Unicode

from .plain_text import spreadsheet_cell, terminal_text

__all__ = ["CANVAS_IDENTITY", "POINTS_POSSIBLE", "FORMATS", "ExportReport", "read_roster",
           "format_score", "assignment_scores", "canvas_table", "moodle_table", "export_lms",
           "LMSExportPlugin", "CanvasExportPlugin", "MoodleExportPlugin", "main"]

#: The columns that identify a student in Canvas's gradebook CSV, in its order.
CANVAS_IDENTITY = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
#: The ``Student`` cell of the row after the header in Canvas's CSV.
POINTS_POSSIBLE = "Points Possible"
#: The LMS formats :func:`export_lms` writes.
FORMATS = ("canvas", "moodle")


@dataclass
class ExportReport:
    """Who did not match between roster and gradebook, and what was left out.

    Attributes
    ----------
    not_in_roster : list of str
        Gradebook students without a roster row: their grades are not exported.
    not_in_gradebook : list of str
        Roster ids the gradebook does not know: their rows are empty.
    waiting : list of (str, str)
        ``(student, assignment)`` of the submissions that wait for a manual
        grade: their cells are empty.
    skipped_lines : list of int
        Roster lines without a student id (such as the ``Points Possible`` row of
        a Canvas export), skipped.
    """

    not_in_roster: list[str] = field(default_factory=list)
    not_in_gradebook: list[str] = field(default_factory=list)
    waiting: list[tuple[str, str]] = field(default_factory=list)
    skipped_lines: list[int] = field(default_factory=list)

    @property
    def matched(self) -> bool:
        """Whether roster and gradebook hold the same students."""
        return not self.not_in_roster and not self.not_in_gradebook

    def messages(self) -> list[str]:
        """One sentence per kind of problem, naming the students.

        >>> ExportReport(not_in_roster=["ben"], waiting=[("ann", "ps1")]).messages()
        ['1 gradebook student is not in the roster, so their grades are not exported: ben', \
'1 submission waits for a manual grade and is left empty (grade it in formgrader, \
then export again): ann (ps1)']
        """
        def count(items, one, many):
            return f"{len(items)} {one if len(items) == 1 else many}"
        out = []
        if self.not_in_roster:
            out.append(count(self.not_in_roster, "gradebook student is", "gradebook students are")
                       + " not in the roster, so their grades are not exported: "
                       + ", ".join(self.not_in_roster))
        if self.not_in_gradebook:
            out.append(count(self.not_in_gradebook, "roster student is", "roster students are")
                       + " not in the gradebook, so their cells are empty: "
                       + ", ".join(self.not_in_gradebook))
        if self.waiting:
            it = "it" if len(self.waiting) == 1 else "them"
            out.append(count(self.waiting, "submission waits", "submissions wait") + " for a "
                       f"manual grade and {'is' if it == 'it' else 'are'} left empty "
                       f"(grade {it} in formgrader, then export again): "
                       + ", ".join(f"{s} ({a})" for s, a in self.waiting))
        if self.skipped_lines:
            out.append("roster lines without a student id, skipped: "
                       + ", ".join(map(str, self.skipped_lines)))
        return out


def read_roster(path: str | Path, id_column: str = "student_id") -> tuple[list[dict], list[int]]:
    """The rows of the roster CSV ``path`` with an nbgrader id in ``id_column``.

    Parameters
    ----------
    path : str or Path
        A CSV file with a header row (e.g. Canvas's gradebook export, or a class list).
    id_column : str
        The column that holds the nbgrader student id.

    Returns
    -------
    rows : list of dict
        The rows in file order, as ``{column: value}`` with values stripped.
    skipped : list of int
        The line numbers of rows without an id (Canvas's ``Points Possible`` row).

    Raises
    ------
    ValueError
        If the file has no ``id_column`` or an id occurs twice.
    """
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        header = reader.fieldnames or []
        if id_column not in header:
            raise ValueError(f"the roster {path} has no column {id_column!r} for the nbgrader "
                             f"student ids; its columns are {', '.join(map(repr, header))}")
        rows, skipped, lines = [], [], {}
        for row in reader:
            row = {k: (v or "").strip() for k, v in row.items() if k is not None}
            student = row[id_column]
            if not student or row.get("Student") == POINTS_POSSIBLE:
                skipped.append(reader.line_num)
                continue
            if student in lines:
                raise ValueError(f"the roster {path} lists the student id {student!r} twice "
                                 f"(lines {lines[student]} and {reader.line_num})")
            lines[student] = reader.line_num
            rows.append(row)
    return rows, skipped


def format_score(value: float) -> str:
    """A score as a plain number, which both LMSs read.

    >>> [format_score(v) for v in (4.5, 3.0, 0.0, 12345678.0, 2 / 3)]
    ['4.5', '3', '0', '12345678', '0.666667']
    """
    text = f"{float(value):.6f}".rstrip("0").rstrip(".")
    return text if text not in ("", "-0") else "0"


def assignment_scores(gradebook: Gradebook, assignments: Iterable[str] = ()):
    """Each student's exportable total per assignment.

    Parameters
    ----------
    gradebook : nbgrader.api.Gradebook
    assignments : iterable of str
        The assignments to export (all of the gradebook's when empty), in the
        gradebook's order (by due date, then name).

    Returns
    -------
    points : dict
        ``{assignment: max_score}``, in the gradebook's order.
    scores : dict
        ``{(student, assignment): score}`` for the fully graded submissions: the
        total after the late penalty, at least 0.
    waiting : list of (str, str)
        ``(student, assignment)`` of the submissions that wait for a manual grade.
    """
    wanted = {str(a) for a in assignments}
    chosen = [a for a in gradebook.assignments if not wanted or a.name in wanted]
    unknown = wanted - {a.name for a in chosen}
    if unknown:
        raise ValueError(f"the gradebook has no assignment {', '.join(sorted(unknown))}")
    points = {a.name: a.max_score for a in chosen}
    scores, waiting = {}, []
    for assignment in chosen:
        for student in gradebook.students:
            try:
                submission = gradebook.find_submission(assignment.name, student.id)
            except MissingEntry:
                continue
            if submission.needs_manual_grade:
                waiting.append((student.id, assignment.name))
                continue
            penalty = submission.late_submission_penalty or 0.0
            scores[student.id, assignment.name] = max(0.0, submission.score - penalty)
    return points, scores, waiting


def _cells(student: str, points: dict, scores: dict, columns: dict) -> dict:
    return {columns.get(a, a): format_score(scores[student, a])
            for a in points if (student, a) in scores}


def canvas_table(roster: Sequence[dict], id_column: str, points: dict, scores: dict,
                 columns: dict | None = None) -> tuple[list[str], list[dict]]:
    """Header and rows of Canvas's gradebook CSV.

    Parameters
    ----------
    roster : sequence of dict
        The roster rows (:func:`read_roster`); the :data:`CANVAS_IDENTITY`
        columns are copied from those of the same name.
    id_column : str
        The roster column with the nbgrader id.
    points, scores : dict
        As :func:`assignment_scores` returns them.
    columns : dict, optional
        ``{assignment: Canvas column header}``, e.g. ``{"ps1": "Problem set 1 (1234)"}``;
        other assignments keep their nbgrader names.

    Returns
    -------
    header : list of str
    rows : list of dict
        The ``Points Possible`` row, then one row per roster student.

    Raises
    ------
    ValueError
        If a roster row has none of the columns Canvas matches students by.
    """
    columns = columns or {}
    keys = ("Student", "ID", "SIS User ID", "SIS Login ID")
    header = [*CANVAS_IDENTITY, *(columns.get(a, a) for a in points)]
    rows = [{"Student": POINTS_POSSIBLE,
             **{columns.get(a, a): format_score(p) for a, p in points.items()}}]
    for entry in roster:
        student = entry[id_column]
        identity = {c: entry.get(c, "") for c in CANVAS_IDENTITY}
        if not any(identity[k] for k in keys):
            raise ValueError(f"the roster gives student {student!r} none of the columns Canvas "
                             f"identifies students by ({', '.join(keys)})")
        rows.append({**identity, **_cells(student, points, scores, columns)})
    return header, rows


def moodle_table(roster: Sequence[dict], id_column: str, points: dict, scores: dict,
                 columns: dict | None = None, identifier: str = "email"
                 ) -> tuple[list[str], list[dict]]:
    """Header and rows of a CSV for Moodle's grade import.

    Parameters
    ----------
    roster, id_column, points, scores, columns
        As for :func:`canvas_table`.
    identifier : str
        The roster column that identifies the student in Moodle (e.g. ``email``
        or ``idnumber``); it becomes the first column, under the same name.

    Returns
    -------
    header : list of str
    rows : list of dict
        One row per roster student.

    Raises
    ------
    ValueError
        If the roster has no ``identifier`` column or a row leaves it empty
        (Moodle would stop the whole import at that row).
    """
    columns = columns or {}
    header = [identifier, *(columns.get(a, a) for a in points)]
    rows = []
    for entry in roster:
        student = entry[id_column]
        if identifier not in entry:
            raise ValueError(f"the roster has no column {identifier!r} to identify students "
                             f"in Moodle; its columns are {', '.join(map(repr, entry))}")
        if not entry[identifier]:
            raise ValueError(f"the roster gives student {student!r} no {identifier!r}: Moodle "
                             "stops the whole import at a row whose user it cannot find")
        rows.append({identifier: entry[identifier], **_cells(student, points, scores, columns)})
    return header, rows


def export_lms(gradebook: Gradebook, lms: str, roster: str | Path, to: str | Path,
               id_column: str = "student_id", identifier: str = "email",
               columns: dict | None = None, assignments: Iterable[str] = (),
               students: Iterable[str] = ()) -> ExportReport:
    """Write the CSV for ``lms`` (``"canvas"`` or ``"moodle"``) to ``to``.

    Parameters
    ----------
    gradebook : nbgrader.api.Gradebook
    lms : {"canvas", "moodle"}
    roster : str or Path
        The roster CSV (:func:`read_roster`).
    to : str or Path
        The CSV to write.
    id_column : str
        The roster column with the nbgrader ids.
    identifier : str
        Moodle only: the roster column that identifies students in Moodle.
    columns : dict, optional
        ``{assignment: LMS column header}``.
    assignments, students : iterable of str
        Export only these assignments, or these students (roster rows), when given.

    Returns
    -------
    ExportReport
        The students who did not match and the submissions left out.
    """
    if lms not in FORMATS:
        raise ValueError(f"unknown LMS {lms!r}; choose one of {', '.join(FORMATS)}")
    rows, skipped = read_roster(roster, id_column)
    wanted = {str(s) for s in students}
    if wanted:
        rows = [r for r in rows if r[id_column] in wanted]
    known = {s.id for s in gradebook.students if not wanted or s.id in wanted}
    listed = {r[id_column] for r in rows}
    points, scores, waiting = assignment_scores(gradebook, assignments)
    if lms == "canvas":
        header, table = canvas_table(rows, id_column, points, scores, columns)
    else:
        header, table = moodle_table(rows, id_column, points, scores, columns, identifier)
    with open(to, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=header, restval="")
        writer.writeheader()
        writer.writerows({k: spreadsheet_cell(v) for k, v in row.items()} for row in table)
    return ExportReport(not_in_roster=sorted(known - listed),
                        not_in_gradebook=[r[id_column] for r in rows if r[id_column] not in known],
                        waiting=[w for w in waiting if w[0] in listed],
                        skipped_lines=skipped)


class LMSExportPlugin(ExportPlugin):
    """An ``nbgrader export`` plugin writing an LMS's grade-import CSV.

    Honours ``--to`` (default ``<lms>.csv``), ``--assignment`` and ``--student``;
    the roster and its columns are set as ``--LMSExportPlugin.roster=roster.csv``
    and so on (see the module docstring). The report of unmatched students is
    logged as warnings and kept in :attr:`report`.
    """

    lms = ""
    roster = Unicode("roster.csv", help="The roster CSV mapping nbgrader ids to LMS "
                     "identities.").tag(config=True)
    id_column = Unicode("student_id", help="The roster column holding the nbgrader "
                        "student ids.").tag(config=True)
    identifier = Unicode("email", help="Moodle: the roster column that identifies a "
                         "student in Moodle (email, idnumber, username).").tag(config=True)
    columns = Dict(key_trait=Unicode(), value_trait=Unicode(), help="The LMS column header "
                   "of an assignment, {nbgrader name: header}.").tag(config=True)

    report: ExportReport | None = None

    def export(self, gradebook: Gradebook) -> None:
        dest = self.to or f"{self.lms}.csv"
        self.log.info("Exporting grades for %s to %s", self.lms.capitalize(), dest)
        self.report = export_lms(gradebook, self.lms, self.roster, dest,
                                 id_column=self.id_column, identifier=self.identifier,
                                 columns=dict(self.columns), assignments=self.assignment,
                                 students=self.student)
        for message in self.report.messages():
            self.log.warning(terminal_text(message))


class CanvasExportPlugin(LMSExportPlugin):
    """Export for Canvas's gradebook import (``canvas.csv`` unless ``--to``)."""

    lms = "canvas"


class MoodleExportPlugin(LMSExportPlugin):
    """Export for Moodle's CSV grade import (``moodle.csv`` unless ``--to``)."""

    lms = "moodle"


def _column(text: str) -> tuple[str, str]:
    name, sep, header = text.partition("=")
    if not sep or not name or not header:
        raise argparse.ArgumentTypeError(f"expected ASSIGNMENT=HEADER, got {text!r}")
    return name, header


def main(argv: Sequence[str] | None = None) -> int:
    """The command ``python -m collective_lib.autograde.lms canvas|moodle ...``.

    Returns 0, or 1 if a student of the gradebook or the roster did not match
    (the CSV is written all the same); the report goes to standard error.
    """
    parser = argparse.ArgumentParser(
        prog="python -m collective_lib.autograde.lms",
        description="Export nbgrader's totals per assignment as a CSV that Canvas or "
                    "Moodle imports.")
    parser.add_argument("lms", choices=FORMATS)
    parser.add_argument("--roster", required=True,
                        help="CSV with one row per student: the nbgrader id and the LMS identity")
    parser.add_argument("--id-column", default="student_id",
                        help="roster column with the nbgrader student ids (default: student_id)")
    parser.add_argument("--identifier", default="email",
                        help="moodle: roster column that identifies students in Moodle "
                             "(default: email)")
    parser.add_argument("--column", type=_column, action="append", default=[],
                        metavar="ASSIGNMENT=HEADER",
                        help='LMS column of an assignment, e.g. ps1="Problem set 1 (1234)"')
    parser.add_argument("--assignment", action="append", default=[],
                        help="export only this assignment (repeatable)")
    parser.add_argument("--gradebook", default="gradebook.db",
                        help="nbgrader's gradebook (default: gradebook.db)")
    parser.add_argument("--to", help="the CSV to write (default: canvas.csv or moodle.csv)")
    args = parser.parse_args(argv)
    if not Path(args.gradebook).is_file():   # nbgrader would create an empty one
        parser.error(f"no gradebook {args.gradebook}; run this in the course directory "
                     "or give --gradebook")
    dest = args.to or f"{args.lms}.csv"
    try:
        with Gradebook(f"sqlite:///{Path(args.gradebook).resolve()}") as gb:
            report = export_lms(gb, args.lms, args.roster, dest, id_column=args.id_column,
                                identifier=args.identifier, columns=dict(args.column),
                                assignments=args.assignment)
    except (OSError, ValueError) as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    print(f"wrote {dest}", file=sys.stderr)
    for message in report.messages():
        print(terminal_text(message), file=sys.stderr)
    return 0 if report.matched else 1


if __name__ == "__main__":
    sys.exit(main())
