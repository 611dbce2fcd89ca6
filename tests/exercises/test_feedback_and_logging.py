"""Autograde keeps a logging program's marks, stores no flood, and feedback hides the hidden tests.

A throwaway assignment built in a temporary copy of the course (like
test_nbgrader_harness.py) is graded with the course configuration
(exercises/nbgrader_config.py) and its feedback generated, as an instructor
would: ``nbgrader autograde`` then ``nbgrader generate_feedback``.
"""

import html
import os
import re
import subprocess
import sys

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

import nbgrader_harness as h

ASSIGNMENT = "logging_selftest"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"

# Only the instructor may ever see this: it appears in the hidden tests alone.
SECRET = "q7zsecret"

SOLUTION_CELL = '''\
import logging
import sys

logging.basicConfig()
log = logging.getLogger("student")

def f(x):
    ### BEGIN SOLUTION
    log.warning("doubling %s", x)
    print("working on", x, file=sys.stderr)
    print("still working", file=sys.__stderr__)
    return 2 * x
    ### END SOLUTION
'''

TEST_CELL = f'''\
# f doubles (2 points)
assert f(3) == 6, "f(3) should be 6"
### BEGIN HIDDEN TESTS
# {SECRET}: the instructor's own check
assert f(-5) == -10, "f(-5) should be -10"
### END HIDDEN TESTS
'''

GUARDED_TEST_CELL = f'''\
# f under the guard (1 point)
from collective_lib.grading import guarded_call
### BEGIN HIDDEN TESTS
{SECRET} = guarded_call(f, 7)
assert {SECRET} == 14, f"f(7) returned {{{SECRET}!r}}, not 14"
### END HIDDEN TESTS
'''

# A written question's rubric placeholder, as the course's notebooks have one under
# each written answer: a locked task cell of 0 points whose mark scheme only graders see.
RUBRIC_NOTE = "*(Graded by hand: the graders' rubric for the answer above is not shown here.)*"
RUBRIC_SECRET = "r8kgraders-only"
RUBRIC_CELL = f"""\
{RUBRIC_NOTE}

### BEGIN MARK SCHEME
**Rubric (0 points)**: {RUBRIC_SECRET}
### END MARK SCHEME"""

#: The score summary at the top of the feedback page, per student: each graded
#: cell's title (its first line) and score, nothing for the rubric placeholder.
SUMMARY = {
    "honest": ["f doubles (Score: 2.0 / 2.0)", "f under the guard (Score: 1.0 / 1.0)"],
    "wrong": ["f doubles (Score: 0.0 / 2.0)", "f under the guard (Score: 0.0 / 1.0)"],
}

# Passes the visible check; fails the hidden one, and crashes inside the grading library.
WRONG = '''\
if x == 7:
    raise ValueError("no sevens")
return x + 3
'''

# A correct answer that floods stderr once: 50 MB on one line, then a million lines.
FLOOD_MB = 50
FLOOD = f'''\
if x == 3:
    sys.stderr.write("x" * {FLOOD_MB} * 10**6 + "\\n")
    sys.stderr.write("line\\n" * 10**6)
return 2 * x
'''


def _meta(grade_id, *, solution=False, grade=False, locked=False, points=None, task=False):
    meta = {"grade_id": grade_id, "solution": solution, "grade": grade, "locked": locked,
            "task": task, "schema_version": 3}
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def _make_submissions(source):
    return {
        "honest": source,
        "wrong": h.replace_solution(source, "f_solution", WRONG),
        "flood": h.replace_solution(source, "f_solution", FLOOD),
    }


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """``(course, results)``: the toy assignment released, graded and given feedback."""
    course = h.copy_course(tmp_path_factory.mktemp(ASSIGNMENT) / "course")
    nb = new_notebook(
        cells=[
            new_markdown_cell("# Doubling, with logging\n\nWrite `f` so that it doubles `x`."),
            new_code_cell(SOLUTION_CELL, metadata=_meta("f_solution", solution=True)),
            new_code_cell(TEST_CELL, metadata=_meta("f_tests", grade=True, locked=True,
                                                   points=2)),
            new_code_cell(GUARDED_TEST_CELL, metadata=_meta("guarded_tests", grade=True,
                                                           locked=True, points=1)),
            new_markdown_cell("## Why double? (graded by hand)\n\nNothing to write here.",
                              metadata=_meta("why", locked=True)),
            new_markdown_cell(RUBRIC_CELL, metadata=_meta("why_rubric", locked=True, task=True,
                                                          points=0)),
        ],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}},
    )
    src = h.source_notebook(course, ASSIGNMENT, NOTEBOOK)
    src.parent.mkdir(parents=True)
    nbformat.write(nb, src)
    assert [p.name for p in h.generate_assignment(course, ASSIGNMENT)] == [NOTEBOOK]
    results = h.autograde_many(course, ASSIGNMENT, _make_submissions(src))
    h.run_nbgrader(course, "generate_feedback", ASSIGNMENT, "--force")
    return course, results


def _feedback_page(course, student):
    return (course / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()


def _as_text(page):
    """What a reader sees of HTML ``page``: tags, styles and scripts removed."""
    page = re.sub(r"<style.*?</style>|<script.*?</script>", "", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def _feedback_text(course, student):
    """The feedback page of ``student`` as a reader sees it: tags and ANSI colours removed."""
    return _as_text(_feedback_page(course, student))


def feedback_summary(page):
    """The lines of the score summary at the top of a feedback page, as a reader sees them."""
    toc = re.search(r'<div id="toc">(.*?)</div>', page, re.S).group(1)
    return [" ".join(_as_text(item).split())
            for item in re.findall(r"<li\b.*?</li>", toc, re.S)]


def test_a_correct_program_that_logs_keeps_full_marks(graded):
    _, results = graded
    honest = results["honest"]
    assert honest.total == honest.max_score == 3, honest.messages()
    text = "\n".join(out.get("text", "") for out in honest.cell("f_tests").outputs)
    # the student's code ran in a sandboxed process whose output goes nowhere: the
    # graded cell shows the checker's verdict, and no stderr can cost a mark
    assert text == "All checks passed.\n"
    assert all(out.get("name") != "stderr" for out in honest.cell("f_tests").outputs)


def test_a_wrong_program_still_gets_zero_with_its_message(graded):
    _, results = graded
    wrong = results["wrong"]
    assert wrong.scores == {"f_tests": 0.0, "guarded_tests": 0.0, "why_rubric": 0.0}
    assert "f(-5) should be -10" in wrong.messages("f_tests")
    assert "f(7) raised ValueError: no sevens" in wrong.messages("guarded_tests")


def test_a_flood_of_stderr_is_graded_and_not_stored(graded):
    _, results = graded
    flood = results["flood"]
    assert flood.total == flood.max_score, flood.messages()
    size = flood.notebook_path.stat().st_size
    assert size < 1_000_000, f"the graded notebook keeps {size} bytes of a {FLOOD_MB} MB flood"


def test_feedback_shows_the_messages_but_not_the_hidden_tests(graded):
    course, _ = graded
    text = _feedback_text(course, "wrong")
    assert "f(-5) should be -10" in text
    assert "f(7) raised ValueError: no sevens" in text
    assert 'assert f(3) == 6, "f(3) should be 6"' in text      # the visible check stays
    assert SECRET not in text
    assert "f(-5) == -10" not in text
    assert "collective_lib/grading" not in text       # no frame of the grading library
    assert "guarded_call(f, 7)" not in text


def test_the_instructor_keeps_the_hidden_tests_and_the_messages(graded):
    _, results = graded
    wrong = results["wrong"]
    assert SECRET in wrong.cell("f_tests").source
    assert "f(7) raised ValueError: no sevens" in wrong.messages("guarded_tests")
    assert "`raise ValueError(\"no sevens\")`" in wrong.messages("guarded_tests")  # its line


def test_feedback_names_every_question_and_no_rubric_placeholder(graded):
    course, results = graded
    for student, summary in SUMMARY.items():
        page = _feedback_page(course, student)
        assert feedback_summary(page) == summary, student
        # every cell worth points is in the summary, by its title; the placeholder is not
        assert {gid: mx for gid, mx in results[student].max_scores.items()} == \
            {"f_tests": 2, "guarded_tests": 1, "why_rubric": 0}
        text = _as_text(page)
        assert "Test cell" not in text
        assert "Student's task" not in text and "(Score: 0.0 / 0.0)" not in text
        assert RUBRIC_SECRET not in text
        # the placeholder's note stays, as the plain text the student saw in the notebook
        assert "Graded by hand: the graders' rubric for the answer above is not shown here." in text
    assert 'Score: 2.0 / 2.0' in _feedback_page(course, "honest")      # the cell panels keep theirs


FORMGRADER_FEEDBACK = '''\
from nbgrader.apps import NbGrader
from nbgrader.apps.api import NbGraderAPI
app = NbGrader()
app.load_config_file()
result = NbGraderAPI(config=app.config).generate_feedback("{assignment}", "wrong", force=True)
assert result["success"], result
'''


def test_formgraders_feedback_button_makes_the_same_page(graded):
    """Formgrader's "Generate Feedback" (nbgrader's API, which sets nbgrader's own template
    name) makes the page with the course's summary too."""
    course, _ = graded
    page = course / "feedback" / "wrong" / ASSIGNMENT / f"{ASSIGNMENT}.html"
    page.unlink()
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(course.parent / ".formgrader-jupyter-config"))
    subprocess.run([sys.executable, "-c", FORMGRADER_FEEDBACK.format(assignment=ASSIGNMENT)],
                   cwd=course, env=env, check=True, capture_output=True, timeout=600)
    assert feedback_summary(page.read_text()) == SUMMARY["wrong"]
