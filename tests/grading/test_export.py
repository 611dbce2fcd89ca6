"""The per-question export (collective_lib.autograde.export) and its report.

The gradebook is the ``course`` fixture of conftest.py (built with nbgrader's
API: two assignments, three students, one fully graded, one whose written answer
waits for a grader and who submitted late, one who submitted nothing), and the
exported CSV, the text table and the plot are checked cell by cell.
"""
from __future__ import annotations

import csv

import pytest
from matplotlib.collections import PathCollection
from matplotlib.figure import Figure
from nbgrader.api import Gradebook
from traitlets.config import Config

from collective_lib.autograde.export import PerQuestionExportPlugin, question_column
from collective_lib.autograde.report import (main, plot_question_scores, question_table,
                                             read_question_scores)


# nbgrader's own add_submission makes SQLAlchemy warn about its autoflush; not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore:Object of type:sqlalchemy.exc.SAWarning")


def _export(course, **traits):
    plugin = PerQuestionExportPlugin(config=Config({"CourseDirectory": {"root": str(course)}}),
                                     to=str(course / "grades.csv"), **traits)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        plugin.export(gb)
    with open(course / "grades.csv", newline="") as fh:
        reader = csv.DictReader(fh)
        return reader.fieldnames, list(reader)


def test_one_column_per_graded_cell_in_notebook_order(course):
    header, _ = _export(course)
    assert header == ["assignment", "student_id", "submitted", "timestamp",
                      "ps1:written", "ps1:alpha_tests", "ps2:only_tests",
                      "late_submission_penalty", "score", "max_score", "needs_manual_grade",
                      "max:ps1:written", "max:ps1:alpha_tests", "max:ps2:only_tests"]


def test_scores_per_question(course):
    header, rows = _export(course)
    assert [[r[c] for c in header if c != "timestamp"] for r in rows] == [
        # assignment, student, submitted, ps1:written, ps1:alpha_tests, ps2:only_tests,
        # late_submission_penalty, score, max_score, needs_manual_grade, and the three max:
        ["ps1", "ann", "yes", "1.5", "3", "", "0", "4.5", "5", "", "2", "3", ""],
        # the written answer waits: no score in its column, named in needs_manual_grade
        ["ps1", "ben", "yes", "", "0", "", "0.5", "0", "5", "ps1:written", "2", "3", ""],
        ["ps1", "cat", "no", "", "", "", "0", "0", "5", "", "2", "3", ""],
        ["ps2", "ann", "yes", "", "", "4", "0", "4", "4", "", "", "", "4"],
        ["ps2", "ben", "no", "", "", "", "0", "0", "4", "", "", "", "4"],
        ["ps2", "cat", "no", "", "", "", "0", "0", "4", "", "", "", "4"],
    ]
    assert {r["timestamp"] for r in rows} == {""}   # added without one, as nbgrader allows


def test_a_student_id_is_text_in_the_spreadsheet(course):
    # an id is a folder name the student chose in the exchange
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.add_student('=HYPERLINK("http://evil.example")')
    _, rows = _export(course, assignment=["ps2"])
    assert """'=HYPERLINK("http://evil.example")""" in {r["student_id"] for r in rows}
    assert not any(value.startswith("=") for r in rows for value in r.values())


def test_export_honours_assignment_and_student_filters(course):
    header, rows = _export(course, assignment=["ps2"], student=["ann"])
    assert header[4:5] == [question_column("ps2", "only_tests")] and "ps1:written" not in header
    assert [(r["assignment"], r["student_id"], r["ps2:only_tests"]) for r in rows] == [
        ("ps2", "ann", "4")]


def test_cells_missing_from_the_source_come_last_by_name(course):
    (course / "source" / "ps1" / "ps1.ipynb").unlink()
    header, _ = _export(course)
    assert header[4:7] == ["ps1:alpha_tests", "ps1:written", "ps2:only_tests"]


def test_report_reads_the_export(course):
    _export(course)
    ps1, ps2 = read_question_scores(course / "grades.csv")
    assert ps1.questions == ["ps1:written", "ps1:alpha_tests"]
    assert ps1.points == {"ps1:written": 2.0, "ps1:alpha_tests": 3.0}
    assert ps1.scores == {"ann": {"ps1:written": 1.5, "ps1:alpha_tests": 3.0},
                          "ben": {"ps1:written": None, "ps1:alpha_tests": 0.0}}
    assert ps1.totals == {"ann": 4.5, "ben": 0.0, "cat": 0.0}
    assert ps1.waiting == {"ben": ["ps1:written"]}
    assert (ps2.name, ps2.max_score, ps2.scores) == ("ps2", 4.0, {"ann": {"ps2:only_tests": 4.0}})


def test_question_table_text(course):
    _export(course)
    assert question_table(course / "grades.csv") == "\n".join([
        "ps1 (5 points)",
        "student  written  alpha_tests  total",
        "ann      1.5/2    3/3          4.5/5",
        "ben      -        0/3          0/5",
        "no submission: cat",
        "",
        "ps2 (4 points)",
        "student  only_tests  total",
        "ann      4/4         4/4",
        "no submission: ben, cat",
        "",
        "Waiting for a manual grade (grade them in formgrader before the feedback):",
        "  ben, ps1: ps1:written",
    ])


def test_plot_has_one_panel_per_assignment_with_each_students_fraction(course):
    _export(course)
    fig = plot_question_scores(course / "grades.csv")
    assert isinstance(fig, Figure)
    ps1, ps2 = fig.axes
    assert [t.get_text() for t in ps1.get_xticklabels()] == ["written\n(2 pt)",
                                                             "alpha_tests\n(3 pt)"]
    # the waiting written answer is left out: written has ann's 0.75, alpha_tests 1 and 0
    ys = sorted(float(y) for coll in ps1.collections if isinstance(coll, PathCollection)
                for y in coll.get_offsets()[:, 1])
    assert ys == [0.0, 0.75, 1.0]
    assert ps2.get_title() == "ps2: 1 submission (red: class mean)"


def test_command_prints_the_table_and_saves_the_plot(course, capsys):
    _export(course)
    assert main([str(course / "grades.csv"), str(course / "grades.png")]) == 0
    assert capsys.readouterr().out.startswith("ps1 (5 points)\n")
    assert (course / "grades.png").stat().st_size > 0


def test_report_rejects_nbgraders_own_csv(tmp_path):
    path = tmp_path / "grades.csv"
    path.write_text("assignment,duedate,timestamp,student_id,score,max_score\n")
    with pytest.raises(ValueError, match="not a per-question export"):
        read_question_scores(path)
