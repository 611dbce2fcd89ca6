"""The nbgrader preprocessors of collective_lib.autograde, on notebooks built in memory.

How they behave in a real ``nbgrader autograde`` / ``generate_feedback`` run is
checked in tests/exercises/test_feedback_and_logging.py; here each rule is
checked alone, and the course configuration is checked to put them in place.
"""
from pathlib import Path

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbformat.v4 import new_code_cell, new_notebook, new_output
from nbgrader.converters import Autograde
from nbgrader.preprocessors import (ClearHiddenTests, GetGrades, LimitOutput, SaveAutoGrades)
from nbgrader.utils import determine_grade
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from collective_lib.autograde import LimitOutputSize, ShortTracebacks, StderrAsStdout

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


# -- StderrAsStdout -------------------------------------------------------------------

def test_stderr_in_a_graded_cell_no_longer_costs_marks():
    cell = _test_cell(outputs=[_stderr("WARNING:root:doubling 3\n")])
    assert determine_grade(cell) == (0, 2.0)       # nbgrader's own rule
    cell, _ = StderrAsStdout().preprocess_cell(cell, {}, 0)
    assert [(o.name, o.text) for o in cell.outputs] == [("stdout", "WARNING:root:doubling 3\n")]
    assert determine_grade(cell) == (2.0, 2.0)


def test_an_error_in_a_graded_cell_still_gives_zero():
    cell = _test_cell(outputs=[_stderr("log\n"), _error("f(-5) should be -10", ["..."])])
    cell, _ = StderrAsStdout().preprocess_cell(cell, {}, 0)
    assert cell.outputs[1].output_type == "error"
    assert determine_grade(cell) == (0, 2.0)


def test_cells_that_are_not_graded_tests_are_left_alone():
    answer = new_code_cell("def f(x): ...", metadata={"nbgrader": {
        "grade": True, "solution": True, "points": 1, "grade_id": "a", "schema_version": 3}})
    plain = new_code_cell("x = 1")
    for cell in (answer, plain):
        cell.outputs = [_stderr("log\n")]
        cell, _ = StderrAsStdout().preprocess_cell(cell, {}, 0)
        assert cell.outputs[0].name == "stderr"


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


# -- ShortTracebacks ------------------------------------------------------------------

# What IPython records for a failing check (colours as in a real autograded notebook).
_HEADER = "\x1b[31mAssertionError\x1b[39m        Traceback (most recent call last)"
_OWN_FRAME = ("\x1b[36mCell\x1b[39m\x1b[36m \x1b[39m\x1b[32mIn[2]\x1b[39m\x1b[32m, line 3\x1b[39m\n"
              "      2 # hidden_marker\n----> 3 assert f(-5) == -10, 'f(-5) should be -10'\n")
_STUDENT_FRAME = ("\x1b[36mCell\x1b[39m\x1b[36m \x1b[39m\x1b[32mIn[1]\x1b[39m\x1b[32m, line 8"
                  "\x1b[39m, in \x1b[36mf\x1b[39m\x1b[34m(x)\x1b[39m\n----> 8 raise KeyError(x)\n")
_LIBRARY_FRAME = ("\x1b[36mFile \x1b[39m\x1b[32m/x/collective_lib/grading/guards.py:257\x1b[39m, "
                  "in guarded_call\n--> 257 raise AssertionError(...)\n")


def _notebook(*tracebacks):
    answer = new_code_cell("def f(x): ...", execution_count=1)
    test = _test_cell(execution_count=2, outputs=[_error("msg", tb) for tb in tracebacks])
    return new_notebook(cells=[answer, test])


def test_feedback_tracebacks_keep_the_message_and_the_students_frames_only():
    nb = _notebook(["-" * 75, _HEADER, _OWN_FRAME, _LIBRARY_FRAME, _STUDENT_FRAME,
                    "\x1b[31mAssertionError\x1b[39m: f(-5) should be -10"])
    nb, _ = ShortTracebacks().preprocess(nb, {})
    assert nb.cells[1].outputs[0].traceback == [
        "-" * 75, _HEADER, _STUDENT_FRAME, "\x1b[31mAssertionError\x1b[39m: f(-5) should be -10"]


def test_chained_exceptions_keep_their_messages():
    note = "\nThe above exception was the direct cause of the following exception:\n"
    nb = _notebook([_HEADER, _OWN_FRAME, "KeyError: -5", note, _HEADER, _LIBRARY_FRAME,
                    "AssertionError: f(-5) raised KeyError"])
    nb, _ = ShortTracebacks().preprocess(nb, {})
    assert nb.cells[1].outputs[0].traceback == [
        _HEADER, "KeyError: -5", note, _HEADER, "AssertionError: f(-5) raised KeyError"]


def test_errors_outside_graded_tests_keep_their_tracebacks():
    nb = _notebook()
    nb.cells[0].outputs = [_error("boom", [_HEADER, _STUDENT_FRAME, _LIBRARY_FRAME, "E: boom"])]
    nb, _ = ShortTracebacks().preprocess(nb, {})
    assert nb.cells[0].outputs[0].traceback == [_HEADER, _STUDENT_FRAME, _LIBRARY_FRAME, "E: boom"]


# -- the course configuration ---------------------------------------------------------

def _course_config():
    return PyFileConfigLoader(CONFIG.name, path=str(CONFIG.parent)).load_config()


def test_the_course_adds_to_nbgraders_autograde_steps_and_changes_nothing_else():
    default = list(Autograde.class_traits()["autograde_preprocessors"].default())
    expected = [LimitOutputSize if step is LimitOutput else step for step in default]
    expected.insert(expected.index(SaveAutoGrades), StderrAsStdout)
    config = _course_config()
    assert config.Autograde.autograde_preprocessors == expected
    assert config.LimitOutput.max_lines == 200
    assert config.LimitOutput.max_traceback == 100
    assert config.LimitOutputSize.max_chars == 100_000


def test_the_course_feedback_hides_hidden_tests_and_library_frames():
    assert _course_config().GenerateFeedback.preprocessors == [
        GetGrades, ClearHiddenTests, ShortTracebacks, CSSHTMLHeaderPreprocessor]
