"""Fixtures of the grade exports' tests (test_export.py, test_lms.py).

``course`` is a course directory with sources and an nbgrader gradebook built
with nbgrader's API: two assignments (ps1: a written answer of 2 points and a
test cell of 3; ps2: a test cell of 4) and three students, ann (both graded:
4.5/5 and 4/4), ben (ps1 autograded 0/3, its written answer waiting for a
grader, 0.5 late penalty; no ps2) and cat (nothing submitted).
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from nbgrader.api import Gradebook


def _graded(grade_id, points, cell_type="code"):
    meta = {"nbgrader": {"grade": True, "solution": cell_type == "markdown", "points": points,
                         "grade_id": grade_id, "locked": cell_type == "code"}}
    if cell_type == "code":
        return new_code_cell("assert True", metadata=meta)
    return new_markdown_cell("YOUR ANSWER HERE", metadata=meta)


def _grade(gb, cell, assignment, student, auto=None, manual=None):
    grade = gb.find_grade(cell, assignment, assignment, student)
    grade.auto_score, grade.manual_score = auto, manual
    grade.needs_manual_grade = auto is None and manual is None
    return grade


@pytest.fixture(scope="session")
def built_course(tmp_path_factory):
    """A course directory with sources and a gradebook of two assignments."""
    tmp_path = tmp_path_factory.mktemp("course")
    with pytest.MonkeyPatch.context() as monkeypatch:
        # nbgrader creates a gradebook by running `alembic`, found next to this interpreter
        monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent),
                                                    os.environ.get("PATH", "")]))
        # the source notebook orders the cells differently from their names
        layout = {"ps1": [("written", 2, "markdown"), ("alpha_tests", 3, "code")],
                  "ps2": [("only_tests", 4, "code")]}
        for assignment, cells in layout.items():
            (tmp_path / "source" / assignment).mkdir(parents=True)
            nbformat.write(new_notebook(cells=[_graded(*c) for c in cells]),
                           tmp_path / "source" / assignment / f"{assignment}.ipynb")
        with Gradebook(f"sqlite:///{tmp_path / 'gradebook.db'}") as gb:
            for assignment, cells in layout.items():
                gb.add_assignment(assignment)
                gb.add_notebook(assignment, assignment)
                for name, points, cell_type in cells:
                    gb.add_grade_cell(name, assignment, assignment, max_score=points,
                                      cell_type=cell_type)
            for student in ("ann", "ben", "cat"):
                gb.add_student(student)
            for student in ("ann", "ben"):
                gb.add_submission("ps1", student)
            gb.add_submission("ps2", "ann")
            _grade(gb, "alpha_tests", "ps1", "ann", auto=3)
            _grade(gb, "written", "ps1", "ann", manual=1.5)
            _grade(gb, "alpha_tests", "ps1", "ben", auto=0)
            _grade(gb, "written", "ps1", "ben")                 # waits for a grader
            _grade(gb, "only_tests", "ps2", "ann", auto=4)
            gb.find_submission_notebook("ps1", "ps1", "ben").late_submission_penalty = 0.5
            gb.db.commit()
    return tmp_path


@pytest.fixture
def course(built_course, tmp_path):
    """A fresh copy of the course (making a gradebook takes nbgrader seconds)."""
    return Path(shutil.copytree(built_course, tmp_path / "course"))
