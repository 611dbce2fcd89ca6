"""The grade export for Canvas and Moodle (collective_lib.autograde.lms).

The gradebook is the ``course`` fixture of conftest.py: ann fully graded (ps1
4.5/5, ps2 4/4), ben's ps1 waiting for a grader (0.5 late penalty, no ps2), cat
with nothing submitted. Each export is read back as the LMS reads it: the csv
module, the header exactly as the LMS expects, numbers in the score cells.
"""
from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from nbgrader.api import Gradebook

from collective_lib.autograde.lms import (CanvasExportPlugin, ExportReport, MoodleExportPlugin,
                                          export_lms, main)


# nbgrader's own add_submission makes SQLAlchemy warn about its autoflush; not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore:Object of type:sqlalchemy.exc.SAWarning")

CANVAS_HEADER = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def _write(path, rows):
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    return path


def _read(path):
    with open(path, newline="") as fh:
        return list(csv.reader(fh))


@pytest.fixture
def canvas_roster(course):
    """A Canvas roster whose SIS Login IDs are the nbgrader ids: cat is missing, and
    dan, whom nbgrader does not know, is there."""
    return _write(course / "canvas_roster.csv", [
        CANVAS_HEADER,
        ["Archer, Ann", "101", "S-101", "ann", "Section 1"],
        ["Baker, Ben", "102", "S-102", "ben", "Section 1"],
        ["Dunn, Dan", "104", "S-104", "dan", "Section 2"],
    ])


@pytest.fixture
def moodle_roster(course):
    return _write(course / "moodle_roster.csv", [
        ["student_id", "email", "idnumber"],
        ["ann", "ann@example.org", "A1"],
        ["ben", "ben@example.org", "B2"],
        ["cat", "cat@example.org", "C3"],
    ])


def _export(course, plugin_class, **traits):
    dest = course / f"{plugin_class.lms}.csv"
    plugin = plugin_class(to=str(dest), **traits)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        plugin.export(gb)
    return _read(dest), plugin.report


def _grade_bens_written_answer(course, points):
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        grade = gb.find_grade("written", "ps1", "ps1", "ben")
        grade.manual_score, grade.needs_manual_grade = points, False
        gb.db.commit()


def test_canvas_csv_as_canvas_reads_it(course, canvas_roster):
    rows, report = _export(course, CanvasExportPlugin, roster=str(canvas_roster),
                           id_column="SIS Login ID")
    assert rows == [
        [*CANVAS_HEADER, "ps1", "ps2"],
        ["Points Possible", "", "", "", "", "5", "4"],
        ["Archer, Ann", "101", "S-101", "ann", "Section 1", "4.5", "4"],
        # ps1 waits for a grader, ps2 not submitted: both left blank
        ["Baker, Ben", "102", "S-102", "ben", "Section 1", "", ""],
        ["Dunn, Dan", "104", "S-104", "dan", "Section 2", "", ""],
    ]
    assert [float(x) for row in rows[1:] for x in row[5:] if x] == [5, 4, 4.5, 4]
    assert report == ExportReport(not_in_roster=["cat"], not_in_gradebook=["dan"],
                                  waiting=[("ben", "ps1")])


def test_canvas_columns_name_the_canvas_assignments(course, canvas_roster):
    rows, _ = _export(course, CanvasExportPlugin, roster=str(canvas_roster),
                      id_column="SIS Login ID", assignment=["ps1"],
                      columns={"ps1": "Gray codes (1234)"})
    assert rows[0] == [*CANVAS_HEADER, "Gray codes (1234)"]
    # Canvas reads the id in parentheses at the end of the header
    assert re.fullmatch(r"(.+) \((\d+)\)", rows[0][-1]).groups() == ("Gray codes", "1234")
    assert [r[-1] for r in rows[1:]] == ["5", "4.5", "", ""]


def test_canvas_export_as_roster_skips_its_points_possible_row(course):
    roster = _write(course / "export.csv", [
        [*CANVAS_HEADER, "nbgrader", "Old quiz (77)"],
        ["    Points Possible", "", "", "", "", "", "10"],
        ["Archer, Ann", "101", "", "", "Section 1", "ann", "9"],
        ["Baker, Ben", "102", "", "", "Section 1", "ben", "7"],
        ["Cole, Cat", "103", "", "", "Section 1", "cat", ""],
    ])
    rows, report = _export(course, CanvasExportPlugin, roster=str(roster), id_column="nbgrader")
    assert [r[:2] + r[5:] for r in rows] == [
        ["Student", "ID", "ps1", "ps2"], ["Points Possible", "", "5", "4"],
        ["Archer, Ann", "101", "4.5", "4"], ["Baker, Ben", "102", "", ""],
        ["Cole, Cat", "103", "", ""]]
    assert report.matched and report.skipped_lines == [2]


def test_moodle_csv_with_late_penalty(course, moodle_roster):
    _grade_bens_written_answer(course, 2)
    rows, report = _export(course, MoodleExportPlugin, roster=str(moodle_roster))
    assert rows == [
        ["email", "ps1", "ps2"],
        ["ann@example.org", "4.5", "4"],
        ["ben@example.org", "1.5", ""],       # 0 + 2 - 0.5 late penalty
        ["cat@example.org", "", ""],
    ]
    assert report == ExportReport()


def test_moodle_identifier_column(course, moodle_roster):
    rows, _ = _export(course, MoodleExportPlugin, roster=str(moodle_roster),
                      identifier="idnumber", student=["ann"])
    assert rows == [["idnumber", "ps1", "ps2"], ["A1", "4.5", "4"]]


def test_a_moodle_row_without_identifier_is_refused(course):
    roster = _write(course / "r.csv", [["student_id", "email"], ["ann", "ann@example.org"],
                                       ["ben", ""]])
    with pytest.raises(ValueError, match="student 'ben' no 'email'"):
        _export(course, MoodleExportPlugin, roster=str(roster))


@pytest.mark.parametrize("rows, message", [
    ([["id", "email"], ["ann", "a@x"]], "no column 'student_id'"),
    ([["student_id", "email"], ["ann", "a@x"], ["ann", "b@x"]], "'ann' twice .lines 2 and 3"),
])
def test_bad_rosters_are_refused(course, rows, message):
    roster = _write(course / "r.csv", rows)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb, \
            pytest.raises(ValueError, match=message):
        export_lms(gb, "moodle", roster, course / "out.csv")


def test_plugin_logs_the_unmatched_students(course, canvas_roster, caplog):
    _export(course, CanvasExportPlugin, roster=str(canvas_roster), id_column="SIS Login ID")
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert any(w.endswith("not in the roster, so their grades are not exported: cat")
               for w in warnings)
    assert any(w.endswith("not in the gradebook, so their cells are empty: dan")
               for w in warnings)


def test_command_reports_and_fails_on_unmatched_students(course, canvas_roster, capsys,
                                                         monkeypatch):
    monkeypatch.chdir(course)
    assert main(["canvas", "--roster", str(canvas_roster), "--id-column", "SIS Login ID",
                 "--column", "ps2=Trees (9)"]) == 1
    err = capsys.readouterr().err
    assert "wrote canvas.csv" in err and ": cat\n" in err and ": dan\n" in err
    assert _read(course / "canvas.csv")[0][-2:] == ["ps1", "Trees (9)"]


def test_command_succeeds_when_everyone_matches(course, moodle_roster, capsys):
    dest = course / "grades-moodle.csv"
    assert main(["moodle", "--roster", str(moodle_roster), "--gradebook",
                 str(course / "gradebook.db"), "--to", str(dest)]) == 0
    assert len(_read(dest)) == 4
    assert "ben (ps1)" in capsys.readouterr().err     # still reported: waits for a grader


def test_command_refuses_a_missing_gradebook(tmp_path, moodle_roster):
    with pytest.raises(SystemExit):
        main(["moodle", "--roster", str(moodle_roster), "--gradebook",
              str(tmp_path / "none.db")])
    assert not (tmp_path / "none.db").exists()


def test_nbgrader_export_command(course, moodle_roster):
    """The exporter as the README runs it, through `nbgrader export`."""
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent),
                                                  os.environ.get("PATH", "")])}
    result = subprocess.run(
        [str(Path(sys.executable).parent / "nbgrader"), "export",
         "--exporter=collective_lib.autograde.lms.MoodleExportPlugin",
         f"--LMSExportPlugin.roster={moodle_roster}", "--to=moodle.csv"],
        cwd=course, env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert _read(course / "moodle.csv")[1] == ["ann@example.org", "4.5", "4"]
    assert "ben (ps1)" in result.stderr
