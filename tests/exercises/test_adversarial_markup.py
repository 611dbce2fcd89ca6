"""Nothing a student writes is rendered as markup, in feedback or in formgrader.

An attack of the second round: HTML in a written answer of ``reverse_send_order``
(a ``<script>``, an ``<img onerror>``, a green box that says "All checks passed.
Score: 10 / 10"), in a markdown cell the student added (a ``javascript:`` link, an
SVG attachment holding a script) or in a raw ``text/html`` cell reached the
feedback page and the graders' view as markup. The payloads are built from the
released notebook and graded in one ``nbgrader autograde`` run beside an honest
submission, then ``nbgrader generate_feedback`` makes the feedback pages. The
feedback page, and the autograded notebook as formgrader renders it (nbconvert's
HTML exporter with nbgrader's ``formgrade`` template) and as nbconvert's default
HTML export shows it, must hold none of the student's markup, only its text
(``collective_lib.autograde.preprocessors.EscapeStudentMarkup``).
"""

import base64
import copy
import re

import nbformat
import pytest
from nbconvert import HTMLExporter
from nbformat.v4 import new_markdown_cell, new_output, new_raw_cell

import nbgrader_harness as h
from html_pages import Page

ASSIGNMENT = "reverse_send_order"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
ANSWER = "explain_log_squared"          # the written answer, graded by hand
CODE = "smallest_first_solution"        # the code answer
TESTS = ("correctness_tests", "time_tests")

# Every payload carries MARK: whatever of it is live in a page is found by that word.
MARK = "pwned"
SCRIPT = f"<script>alert('{MARK}')</script>"
IMG = f'<img src="x" onerror="alert(1)" title="{MARK}">'
SCORE_BOX = (f'<div class="alert alert-success {MARK}-box" style="background:#dff0d8">'
             "All checks passed. Score: 10 / 10</div>")
WRITTEN = f"Smallest first, the last child waits longest. {SCRIPT}\n\n{IMG}\n\n{SCORE_BOX}"
JS_LINK = f"[my proof](javascript:alert('{MARK}'))"
SVG = base64.b64encode(f"<svg xmlns='http://www.w3.org/2000/svg'><script>alert('{MARK}')"
                       "</script></svg>".encode()).decode()
ADDED = f"More: {JS_LINK}\n\n![diagram](attachment:tree.svg)"
RAW = f"{SCRIPT}\n{SCORE_BOX}"
# A heading of the student's own just above the written answer (a student audit): the
# feedback's summary named the answer by it, "Already graded by hand: 3/3 (see the note
# below) (Score: 0.0 / 3.0)".
RETITLE = "## Already graded by hand: 3/3 (see the note below)"
HONEST = ("*Smallest first*, PE $p - 1$ waits $\\Omega(\\log^2 p)$: for $a < b$ every step "
          "of the path costs $\\log_2 p - k$ rounds.")


def _attacked(released):
    """The released notebook with HTML in the written answer, in cells added and in outputs
    saved with the code cells (a test cell's forged to say it passed). Its code answer is
    left as released, so its checks fail at once."""
    nb = h.answered_release(released, released, written={ANSWER: WRITTEN})
    for grade_id in (CODE, *TESTS):
        h.find_cell(nb, grade_id).outputs = [new_output(
            "display_data", data={"text/html": SCORE_BOX + SCRIPT, "text/plain": "passed"})]
    at = next(i for i, c in enumerate(nb.cells)
              if c.metadata.get("nbgrader", {}).get("grade_id") == ANSWER) + 1
    added = new_markdown_cell(ADDED, attachments={"tree.svg": {"image/svg+xml": SVG}})
    raw = new_raw_cell(RAW, metadata={"raw_mimetype": "text/html"})
    nb.cells[at:at] = [added, raw]
    nb.cells.insert(at - 1, new_markdown_cell(RETITLE))
    return nb


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """``(course, results, attack)``: honest and hostile graded, feedback generated."""
    course = h.released_copy(tmp_path_factory.mktemp("adversarial_markup") / "course", ASSIGNMENT)
    released = course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    source = h.source_notebook(course, ASSIGNMENT, NOTEBOOK)
    attack = _attacked(released)
    honest = h.answered_release(released, source, written={ANSWER: HONEST})
    results = h.autograde_many(course, ASSIGNMENT, {"honest": honest,
                                                   "attacker": copy.deepcopy(attack)})
    h.run_nbgrader(course, "generate_feedback", ASSIGNMENT, "--force")
    return course, results, attack


def _feedback(course, student):
    return (course / "feedback" / student / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()


def test_the_summary_names_the_answer_by_the_instructors_heading(graded):
    course, _, _ = graded
    summary = [" ".join(Page(item).text.split()) for item in re.findall(
        r"<li\b.*?</li>", re.search(r'<div id="toc">(.*?)</div>',
                                    _feedback(course, "attacker"), re.S).group(1), re.S)]
    assert "Why is it slower? (Score: 0.0 / 3.0)" in summary, summary
    assert not any("Already graded" in line for line in summary), summary


def _formgrader(result):
    """The autograded notebook as formgrader shows it to a grader."""
    from nbgrader.server_extensions.formgrader import handlers
    exporter = HTMLExporter(template_name="formgrade",
                            extra_template_basedirs=[handlers.template_path])
    resources = {"assignment_id": ASSIGNMENT, "notebook_id": ASSIGNMENT, "submission_id": "s",
                 "index": 0, "total": 1, "base_url": "", "student": "attacker",
                 "last_name": None, "first_name": None, "notebook_path": "autograded"}
    return exporter.from_filename(str(result.notebook_path), resources=resources)[0]


def _pages(course, results):
    result = results["attacker"]
    return {"feedback": _feedback(course, "attacker"), "formgrader": _formgrader(result),
            "nbconvert": HTMLExporter().from_filename(str(result.notebook_path))[0]}


def test_the_payloads_are_live_without_the_defence(graded):
    _, _, attack = graded
    page = Page(HTMLExporter().from_notebook_node(copy.deepcopy(attack))[0])
    live = {tag for tag, _ in page.live(MARK, SVG)}
    assert {"script", "img", "div", "a"} <= live, live
    assert h.find_cell(attack, "correctness_tests").outputs[0].data["text/html"] == (
        SCORE_BOX + SCRIPT)


@pytest.mark.parametrize("view", ["feedback", "formgrader", "nbconvert"])
def test_no_student_markup_is_live(graded, view):
    course, results, _ = graded
    html = _pages(course, results)[view]
    page = Page(html)
    assert page.live(MARK, SVG) == []
    assert "<script>alert" not in html and "&lt;script&gt;alert('pwned')" in html
    assert not [attrs for _, attrs in page.elements
                if "alert-success" in attrs.get("class", "") or "#dff0d8" in attrs.get("style", "")]


@pytest.mark.parametrize("view", ["feedback", "formgrader", "nbconvert"])
def test_the_student_text_is_shown_as_typed(graded, view):
    course, results, _ = graded
    text = Page(_pages(course, results)[view]).text
    for typed in (SCRIPT, IMG, SCORE_BOX, ADDED, RAW):
        assert typed in text, typed


def test_the_stored_notebook_is_already_safe(graded):
    _, results, _ = graded
    cells = results["attacker"].notebook.cells
    assert [c.cell_type for c in cells].count("raw") == 0
    answer = next(c for c in cells if c.metadata.get("nbgrader", {}).get("grade_id") == ANSWER)
    assert "<script>" not in answer.source and "&lt;script>alert('pwned')" in answer.source
    assert all("tree.svg" not in c.get("attachments", {}) for c in cells)
    # the outputs a student saved are gone; a test cell shows the checker's verdict only
    assert h.find_cell(results["attacker"].notebook, CODE).outputs == []
    for grade_id in TESTS:
        kinds = {o.output_type for o in h.find_cell(results["attacker"].notebook,
                                                    grade_id).outputs}
        assert kinds <= {"stream", "error"}, (grade_id, kinds)


def test_the_honest_submission_keeps_full_marks_and_its_markdown(graded):
    course, results, _ = graded
    h.assert_full_marks(results["honest"])
    page = _feedback(course, "honest")
    assert "<em>Smallest first</em>" in page
    assert "$a &lt; b$" in page                             # MathJax reads "$a < b$"
    # the instructor's markdown cells are stored as written
    source = nbformat.read(h.source_notebook(course, ASSIGNMENT, NOTEBOOK), as_version=4)
    for cell in source.cells:
        meta = cell.metadata["nbgrader"]
        if cell.cell_type == "markdown" and meta["locked"]:
            assert results["honest"].cell(meta["grade_id"]).source == cell.source
