"""LimitOutputSize on notebooks built in memory, and the course configuration's steps.

How autograde and feedback behave in a real ``nbgrader autograde`` /
``generate_feedback`` run is checked in tests/exercises/test_feedback_and_logging.py.
"""
from pathlib import Path

from nbconvert.preprocessors import CSSHTMLHeaderPreprocessor
from nbformat.v4 import new_code_cell, new_output
from nbgrader.converters import Autograde
from nbgrader.preprocessors import (ClearHiddenTests, ClearMarkScheme, Execute, GetGrades,
                                    LimitOutput, SaveAutoGrades)
from nbgrader.utils import determine_grade
from traitlets.config import Config
from traitlets.config.loader import PyFileConfigLoader

from collective_lib.autograde import FlagForReview, LimitOutputSize, TrustedVerdict

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
    config = _course_config()
    assert config.Autograde.autograde_preprocessors == expected
    assert config.LimitOutput.max_lines == 200
    assert config.LimitOutput.max_traceback == 100
    assert config.LimitOutputSize.max_chars == 100_000
    assert "_reference.py" in config.CourseDirectory.ignore


def test_the_course_feedback_hides_hidden_tests_and_rubrics():
    assert _course_config().GenerateFeedback.preprocessors == [
        GetGrades, ClearHiddenTests, ClearMarkScheme, CSSHTMLHeaderPreprocessor]
