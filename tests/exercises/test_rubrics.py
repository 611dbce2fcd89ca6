"""Every hand-graded answer has a rubric that graders see and students do not.

A hand-graded answer is a markdown cell with nbgrader's ``solution`` and
``grade`` flags. Its model answer is the cell's source in the instructor's
notebook, which ``generate_assignment`` replaces by "YOUR ANSWER HERE". Its
rubric is the locked task cell ``<answer id>_rubric`` right after it, with 0
points, holding the rubric between ``### BEGIN MARK SCHEME`` and ``### END MARK
SCHEME``: ``generate_assignment`` removes that region from the release, and
``autograde`` restores locked cells from the gradebook, so the autograded
notebook that formgrader shows has the rubric under the student's answer (each
assignment's round trip test checks that with
:func:`nbgrader_harness.assert_rubrics_for_graders`).
"""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

import nbgrader_harness as h

NOTEBOOKS = sorted((h.EXERCISES_DIR / "source").glob("*/*.ipynb"))
# A rubric item: "- 1 point: ..." or "- 0.5 points: ...".
ITEM = re.compile(r"^- (\d+(?:\.\d+)?) points?: \S", re.MULTILINE)


def _meta(cell):
    return cell.metadata["nbgrader"]


def _answers(nb):
    """(answer cell, the cell after it) of every hand-graded answer."""
    return [(cell, nb.cells[i + 1] if i + 1 < len(nb.cells) else None)
            for i, cell in enumerate(nb.cells)
            if cell.cell_type == "markdown" and _meta(cell)["grade"] and _meta(cell)["solution"]]


def _secrets(path: Path) -> list:
    """Lines of the model answers and of the rubrics of one instructor notebook."""
    nb = nbformat.read(path, as_version=4)
    secrets = []
    for answer, rubric in _answers(nb):
        secrets += [line for line in answer.source.splitlines() if len(line) > 20]
        secrets += [line for line in h.rubric_text(rubric).splitlines() if len(line) > 20]
    return secrets


def test_some_answers_are_graded_by_hand():
    assert sum(len(_answers(nbformat.read(p, as_version=4))) for p in NOTEBOOKS) >= 6


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_every_hand_graded_answer_has_a_rubric_worth_its_points(path):
    nb = nbformat.read(path, as_version=4)
    answers = _answers(nb)
    for answer, rubric in answers:
        gid = _meta(answer)["grade_id"]
        assert rubric is not None and _meta(rubric)["grade_id"] == f"{gid}_rubric", (
            f"{gid}: the cell after the answer must be its rubric, {gid}_rubric")
        meta = _meta(rubric)
        assert rubric.cell_type == "markdown" and meta["task"] and meta["locked"], meta
        assert meta["points"] == 0, f"{gid}_rubric adds points; the answer cell carries them"
        text = h.rubric_text(rubric)
        assert text.strip() and not text.strip().startswith("###"), f"{gid}_rubric is empty"
        points = [float(p) for p in ITEM.findall(text)]
        assert sum(points) == _meta(answer)["points"], (
            f"the items of {gid}_rubric give {sum(points):g} points, the answer is worth "
            f"{_meta(answer)['points']:g}")
        assert "points)**" in text and f"({_meta(answer)['points']:g} point" in text, (
            f"{gid}_rubric should state the answer's points in its title")
    # no rubric without an answer: every task cell belongs to the answer before it
    rubrics = {_meta(c)["grade_id"] for c in nb.cells if _meta(c).get("task")}
    assert rubrics == {f"{_meta(a)['grade_id']}_rubric" for a, _ in answers}


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    course = h.copy_course(tmp_path_factory.mktemp("rubrics") / "course")
    names = [p.parent.name for p in NOTEBOOKS]
    notebooks = h.generate_assignment(course, "*")
    assert [p.parent.name for p in notebooks] == sorted(names)
    return course, names


def test_the_release_holds_neither_model_answers_nor_rubrics(released):
    course, names = released
    for name in names:
        secrets = _secrets(h.source_notebook(course, name, f"{name}.ipynb"))
        text = h.assert_release_hides(course, name, ["MARK SCHEME", "Rubric", *secrets])
        nb = nbformat.read(course / "release" / name / f"{name}.ipynb", as_version=4)
        for answer, rubric in _answers(nb):
            assert answer.source == "YOUR ANSWER HERE"
            assert rubric.source.strip().endswith("is not shown here.)*"), rubric.source
        assert text


def test_feedback_does_not_show_the_rubric(released):
    course, _ = released
    name = "min_location"
    h.autograde(course, name, course / "release" / name / f"{name}.ipynb", student="blank")
    h.run_nbgrader(course, "generate_feedback", name, "--force")
    html = (course / "feedback" / "blank" / name / f"{name}.html").read_text()
    for secret in ["MARK SCHEME", *_secrets(h.source_notebook(course, name, f"{name}.ipynb"))]:
        assert secret not in html, f"the feedback shows the rubric: {secret!r}"
