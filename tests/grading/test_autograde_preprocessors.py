"""LimitOutputSize and EscapeStudentMarkup on notebooks built in memory, and the course's steps.

How autograde and feedback behave in a real ``nbgrader autograde`` /
``generate_feedback`` run is checked in tests/exercises/test_feedback_and_logging.py.
"""
import base64
import copy
import os
import sys
from pathlib import Path

import pytest
from nbconvert import HTMLExporter
from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbformat.v4 import (new_code_cell, new_markdown_cell, new_notebook, new_output,
                         new_raw_cell)
from nbgrader.api import Gradebook
from nbgrader.converters import Autograde
from nbgrader.preprocessors import (AssignLatePenalties, ClearHiddenTests, ClearMarkScheme,
                                    Execute, GetGrades, LimitOutput, SaveAutoGrades)
from nbgrader.utils import determine_grade
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from collective_lib.autograde import (EscapeStudentMarkup, FlagForReview, LimitOutputSize,
                                     TrustedVerdict)
from collective_lib.autograde.preprocessors import escape_markdown
from html_pages import Page

CONFIG = Path(__file__).resolve().parents[2] / "exercises" / "nbgrader_config.py"


def _test_cell(source="assert f(3) == 6", outputs=(), execution_count=2):
    cell = new_code_cell(source, execution_count=execution_count, metadata={"nbgrader": {
        "grade": True, "solution": False, "locked": True, "points": 2, "grade_id": "t",
        "schema_version": 3}})
    cell.outputs = list(outputs)
    return cell


def _stderr(text):
    return new_output("stream", name="stderr", text=text)


def _error(evalue, traceback, ename="AssertionError"):
    return new_output("error", ename=ename, evalue=evalue, traceback=traceback)


# -- LimitOutputSize ------------------------------------------------------------------

def test_a_million_lines_are_cut_to_max_lines():
    cell = _test_cell(outputs=[_stderr("line\n" * 10**6)])
    cell, _ = LimitOutputSize(max_lines=200).preprocess_cell(cell, {}, 0)
    text = cell.outputs[0].text
    assert text.count("\n") <= 200
    assert text.endswith("... Output truncated ...")


def test_one_enormous_line_is_cut_to_max_chars():
    cell = _test_cell(outputs=[_stderr("x" * 5 * 10**6)])
    plain_limit, _ = LimitOutput().preprocess_cell(_test_cell(outputs=[_stderr("x" * 10**5)]),
                                                   {}, 0)
    assert len(plain_limit.outputs[0].text) == 10**5         # nbgrader counts lines only
    cell, _ = LimitOutputSize(max_chars=1000).preprocess_cell(cell, {}, 0)
    assert 1000 < len(cell.outputs[0].text) < 1100
    assert cell.outputs[0].text.endswith("... Output truncated ...")


def test_outputs_share_the_budget_and_errors_are_always_kept():
    huge = "y" * 10**4
    cell = _test_cell(outputs=[
        _stderr("a" * 800),
        _stderr("b" * 800),                       # cut: only 200 characters are left
        _stderr("c" * 800),                       # dropped: nothing is left
        new_output("display_data", data={"image/png": huge, "text/plain": "<Figure>"}),
        _error(huge, ["header", huge, "AssertionError: " + huge]),
    ])
    cell, _ = LimitOutputSize(max_chars=1000).preprocess_cell(cell, {}, 0)
    kinds = [o.output_type for o in cell.outputs]
    assert kinds == ["stream", "stream", "display_data", "error"]
    assert cell.outputs[1].text == "b" * 200 + "\n... Output truncated ..."
    assert cell.outputs[2].data == {
        "text/plain": "[an output of 10008 characters was removed: too large to keep]"}
    error = cell.outputs[3]
    assert len(error.evalue) < 1100 and len(error.traceback) == 1
    assert error.traceback[0].startswith("AssertionError: yyy")
    assert determine_grade(cell) == (0, 2.0)


def test_a_partial_credit_result_survives():
    cell = _test_cell(outputs=[new_output("stream", name="stdout", text="z" * 2000),
                               new_output("execute_result", data={"text/plain": "0.5"},
                                          execution_count=2)])
    cell, _ = LimitOutputSize(max_chars=1000).preprocess_cell(cell, {}, 0)
    assert cell.outputs[-1].data == {"text/plain": "0.5"}   # kept though no room is left
    assert determine_grade(cell) == (0.5, 2.0)


def test_limit_output_settings_apply_to_limit_output_size():
    config = Config()
    config.LimitOutput.max_lines = 7
    config.LimitOutputSize.max_chars = 123
    limit = LimitOutputSize(config=config)
    assert (limit.max_lines, limit.max_chars) == (7, 123)


# -- the course configuration ----------------------------------------------------------

def _course_config():
    return PyFileConfigLoader(CONFIG.name, path=str(CONFIG.parent)).load_config()


def test_the_course_replaces_execute_and_limit_output_and_flags_after_saving():
    default = list(Autograde.class_traits()["autograde_preprocessors"].default())
    swap = {Execute: TrustedVerdict, LimitOutput: LimitOutputSize}
    expected = [swap.get(step, step) for step in default]
    expected.insert(expected.index(SaveAutoGrades) + 1, FlagForReview)
    # after every step that reads the submitted cells (SaveAutoGrades compares a written
    # answer with the release), before the final metadata check
    expected.insert(expected.index(AssignLatePenalties) + 1, EscapeStudentMarkup)
    config = _course_config()
    assert config.Autograde.autograde_preprocessors == expected
    assert config.LimitOutput.max_lines == 200
    assert config.LimitOutput.max_traceback == 100
    assert config.LimitOutputSize.max_chars == 100_000
    assert "_reference.py" in config.CourseDirectory.ignore


def test_the_course_feedback_hides_hidden_tests_and_rubrics_then_escapes_the_student():
    assert _course_config().GenerateFeedback.preprocessors == [
        GetGrades, ClearHiddenTests, ClearMarkScheme, EscapeStudentMarkup,
        CSSHTMLHeaderPreprocessor]


# -- EscapeStudentMarkup ----------------------------------------------------------------

# Every payload carries MARK, so whatever of it is live in a page is found by that word.
MARK = "pwned"
SCRIPT = f"<script>alert('{MARK}')</script>"
IMG = f'<img src="x" onerror="alert(1)" title="{MARK}">'
SCORE_BOX = (f'<div class="alert alert-success {MARK}-box" style="background:#dff0d8">'
             "<b>All checks passed.</b> Score: 10 / 10</div>")
COMMENT = f"<!-- {MARK}: a note graders do not see -->"
JS_LINK = f"[the proof](javascript:alert('{MARK}'))"
MERMAID = f"```mermaid\n<img src=x onerror=alert('{MARK}')>\n```"
SVG = base64.b64encode(f"<svg xmlns='http://www.w3.org/2000/svg'><script>alert('{MARK}')"
                       "</script></svg>".encode()).decode()
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\0" * 16).decode()
HONEST = "*Emphasis* stays, so does $a < b$ and `x<y`.\n\n- one\n- two"
INSTRUCTOR = 'Explain why <sub>p</sub> matters. <span class="course-note">See chapter 1.</span>'


def _images(page):
    """The sources of the images in a page."""
    return [attrs.get("src") for tag, attrs in Page(page).elements if tag == "img"]


def _html(nb, template=None):
    exporter = HTMLExporter(template_name=template) if template else HTMLExporter()
    return exporter.from_notebook_node(nb)[0]


def _meta(grade_id, **flags):
    return {"nbgrader": {"grade_id": grade_id, "grade": False, "solution": False,
                         "locked": False, "task": False, "schema_version": 3, **flags}}


def _answer(source, **kwargs):
    return new_markdown_cell(source, metadata=_meta("answer", solution=True, grade=True,
                                                   points=3), **kwargs)


def _escaped(nb, resources=None):
    return EscapeStudentMarkup().preprocess(nb, resources or {})[0]


@pytest.fixture
def gradebook(tmp_path, monkeypatch):
    """``make(locked)``: a gradebook whose notebook ``n`` of assignment ``a`` has these
    locked markdown cells (and an answer cell), as the resources of an nbgrader step."""
    # nbgrader creates a gradebook with the `alembic` program next to this interpreter
    monkeypatch.setenv("PATH", os.pathsep.join([os.path.dirname(sys.executable),
                                                os.environ.get("PATH", "")]))
    return lambda locked: _gradebook(tmp_path, locked)


def _gradebook(tmp_path, locked):
    url = f"sqlite:///{tmp_path / 'gradebook.db'}"
    with Gradebook(url) as gb:
        gb.add_assignment("a")
        gb.add_notebook("n", "a")
        for name, source in locked.items():
            gb.add_source_cell(name, "n", "a", cell_type="markdown", locked=True, source=source,
                               checksum="-")
        gb.add_source_cell("answer", "n", "a", cell_type="markdown", locked=False,
                           source="YOUR ANSWER HERE", checksum="-")
        gb.add_solution_cell("answer", "n", "a")
    return {"nbgrader": {"db_url": url, "notebook": "n", "assignment": "a"}}


@pytest.mark.parametrize("payload", [SCRIPT, IMG, SCORE_BOX, COMMENT, JS_LINK, MERMAID],
                         ids=["script", "img-onerror", "score-box", "comment", "js-link",
                              "mermaid"])
def test_a_written_answer_shows_its_html_as_text(payload):
    nb = new_notebook(cells=[_answer(f"My answer.\n\n{payload}\n\n{HONEST}")])
    assert Page(_html(copy.deepcopy(nb))).live(MARK), "the payload is not live without the step"
    page = Page(_html(_escaped(nb)))
    assert page.live(MARK) == []
    assert payload in page.text                  # the answer, as the student typed it
    assert "My answer." in page.text


def test_script_tags_are_escaped_in_the_page():
    nb = new_notebook(cells=[_answer(f"Because {SCRIPT}, and {IMG}.")])
    html = _html(_escaped(nb))
    assert "<script>alert" not in html and "<img src" not in html
    assert "&lt;script&gt;alert('pwned')&lt;/script&gt;" in html
    assert "&lt;img src=" in html
    assert Page(html).live(MARK) == [] and f"Because {SCRIPT}, and {IMG}." in Page(html).text
    assert _escaped(nb).cells[0].source == ("Because &lt;script>alert('pwned')&lt;/script>, "
                                           "and &lt;img src=\"x\" onerror=\"alert(1)\" "
                                           "title=\"pwned\">.")


def test_a_fake_score_box_is_not_a_box():
    nb = new_notebook(cells=[_answer(SCORE_BOX)])
    page = Page(_html(_escaped(nb)))
    assert not [attrs for _, attrs in page.elements
                if "alert" in attrs.get("class", "") or "background" in attrs.get("style", "")]
    assert not [tag for tag, _ in page.elements if tag == "b"]
    assert "<b>All checks passed.</b> Score: 10 / 10</div>" in page.text


def test_markdown_math_and_code_still_render():
    nb = _escaped(new_notebook(cells=[_answer(f"{HONEST}\n\n<b>x</b>\n\n```python\nif a < b:\n"
                                              "    pass\n```")]))
    html = _html(nb)
    assert "<em>Emphasis</em>" in html
    assert "$a &lt; b$" in html                  # MathJax reads "$a < b$"
    assert "<code>x&lt;y</code>" in html
    assert "<li>one</li>" in html and "<li>two</li>" in html
    assert '<span class="o">&lt;</span>' in html  # highlighted code keeps its "<"
    assert "&lt;b&gt;x&lt;/b&gt;" in html and "<b>x</b>" not in html


def test_a_raw_html_cell_shows_as_text():
    raw = new_raw_cell(f"{SCRIPT}\n{SCORE_BOX}", metadata={"raw_mimetype": "text/html"})
    nb = new_notebook(cells=[raw])
    assert Page(_html(copy.deepcopy(nb))).live(MARK), "nbconvert copies the raw cell's HTML"
    escaped = _escaped(nb)
    assert escaped.cells[0].cell_type == "markdown" and escaped.cells[0].metadata == {}
    page = Page(_html(escaped))
    assert page.live(MARK) == []
    assert f"{SCRIPT}\n{SCORE_BOX}" in page.text


def test_only_embedded_raster_images_are_kept():
    cell = _answer("![diagram](attachment:evil.svg)\n\n![plot](attachment:plot.png)",
                   attachments={"evil.svg": {"image/svg+xml": SVG},
                                "plot.png": {"image/png": PNG, "text/html": SCRIPT}})
    nb = new_notebook(cells=[cell])
    assert _images(_html(copy.deepcopy(nb)))[0] == f"data:image/svg+xml;base64,{SVG}"
    escaped = _escaped(nb)
    assert escaped.cells[0].attachments == {"plot.png": {"image/png": PNG}}
    page = _html(escaped)
    assert _images(page) == [] and SVG not in page
    assert "![diagram](attachment:evil.svg)" in Page(page).text   # shown as typed
    # a cell with only safe images keeps them
    good = _escaped(new_notebook(cells=[_answer("![plot](attachment:plot.png)",
                                                attachments={"plot.png": {"image/png": PNG}})]))
    assert f'src="data:image/png;base64,{PNG}"' in _html(good)


def test_links_to_web_pages_stay_and_others_show_as_text():
    nb = _escaped(new_notebook(cells=[_answer("See [the book](https://example.org/b?x=1).")]))
    assert '<a href="https://example.org/b?x=1">the book</a>' in _html(nb)
    reference = f"[the proof][1]\n\n[1]: javascript:alert('{MARK}')"
    page = Page(_html(_escaped(new_notebook(cells=[_answer(reference)]))))
    assert page.live(MARK) == [] and reference in page.text
    remote = "![fake verdict](https://example.org/passed.png)"     # no request to anywhere
    page = _html(_escaped(new_notebook(cells=[_answer(remote)])))
    assert _images(page) == [] and remote in Page(page).text


def test_the_instructors_locked_markdown_keeps_its_html(gradebook):
    resources = gradebook({"intro": INSTRUCTOR})
    nb = new_notebook(cells=[
        new_markdown_cell(INSTRUCTOR, metadata=_meta("intro", locked=True)),
        _answer(INSTRUCTOR),                                        # copied into the answer
        new_markdown_cell(INSTRUCTOR + " ", metadata=_meta("intro", locked=True)),  # edited
        new_markdown_cell(INSTRUCTOR),                              # added, no grade id
    ])
    html = _html(_escaped(nb, resources))
    assert html.count("<sub>p</sub>") == 1
    assert html.count('<span class="course-note">') == 1
    assert html.count("&lt;sub&gt;p&lt;/sub&gt;") == 3
    # without a gradebook, every cell is the student's
    assert "<sub>p</sub>" not in _html(_escaped(new_notebook(cells=[
        new_markdown_cell(INSTRUCTOR, metadata=_meta("intro", locked=True))])))


def test_the_instructors_rubric_keeps_its_html_once_feedback_drops_the_mark_scheme(gradebook):
    rubric = ("<i>Graded by hand.</i>\n\n### BEGIN MARK SCHEME\n1 point: <b>names</b> the "
              "cause\n### END MARK SCHEME")
    resources = gradebook({"rubric": rubric})
    cell = new_markdown_cell(rubric, metadata=_meta("rubric", locked=True, task=True, points=0))
    nb = new_notebook(cells=[cell, _answer("<i>Graded by me.</i>")])
    nb, resources = ClearMarkScheme().preprocess(nb, resources)
    html = _html(_escaped(nb, resources))
    assert "<i>Graded by hand.</i>" in html and "names" not in html
    assert "&lt;i&gt;Graded by me.&lt;/i&gt;" in html


def test_code_cells_keep_only_escaped_outputs():
    cell = new_code_cell("display(HTML(x))", execution_count=3)
    cell.outputs = [
        new_output("display_data", data={"text/html": SCRIPT, "text/plain": "<HTML object>"}),
        new_output("display_data", data={"application/javascript": f"alert('{MARK}')"}),
        new_output("stream", name="stdout", text=f"{SCRIPT}\n"),
        new_output("execute_result", data={"text/plain": "0.5", "text/html": IMG},
                   execution_count=3),
    ]
    nb = new_notebook(cells=[cell])
    cell.execution_count = f"<b>{MARK}</b>"        # nbconvert would refuse the notebook
    escaped = _escaped(nb)
    outputs = escaped.cells[0].outputs
    assert [o.output_type for o in outputs] == ["display_data", "stream", "execute_result"]
    assert outputs[0].data == {"text/plain": "<HTML object>"}
    assert outputs[2].data == {"text/plain": "0.5"}
    assert escaped.cells[0].execution_count is None
    page = Page(_html(escaped))
    assert page.live(MARK) == [] and SCRIPT in page.text


def test_hiding_metadata_and_widget_state_go():
    hidden = new_markdown_cell("Copied from a classmate.",
                               metadata={"transient": {"remove_source": True}})
    nb = new_notebook(cells=[hidden], metadata={"widgets": {
        "application/vnd.jupyter.widget-state+json": {"state": {}, "version_major": 2,
                                                      "version_minor": 0}}})
    assert "Copied from a classmate." not in _html(copy.deepcopy(nb))
    escaped = _escaped(nb)
    assert "widgets" not in escaped.metadata
    assert "Copied from a classmate." in _html(escaped)


def test_escaping_twice_changes_nothing():
    sources = [f"{SCRIPT} {HONEST}", JS_LINK, MERMAID, "text $$ a\n<div> b $$"]
    once = [escape_markdown(s) for s in sources]
    assert [escape_markdown(s) for s in once] == once


def test_the_classic_template_of_feedback_shows_text_too():
    nb = new_notebook(cells=[_answer(f"{SCRIPT}{IMG}{SCORE_BOX}"), new_raw_cell(SCRIPT)])
    page = Page(_html(_escaped(nb), template="classic"))
    assert page.live(MARK) == []
    assert f"{SCRIPT}{IMG}{SCORE_BOX}" in page.text
