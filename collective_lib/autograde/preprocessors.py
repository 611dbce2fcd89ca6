"""nbgrader preprocessors that make autograding fair to honest students and feedback safe to show.

nbgrader scores an autograded test cell from its outputs alone: an ``error``
output *or any text on stderr* costs all of the cell's points. Its feedback shows
each cell's source (hidden tests included) and the full traceback of each
failure, whose frames quote the hidden test lines and the grading library.
The course configuration (``exercises/nbgrader_config.py``) adds:

* :class:`StderrAsStdout` (autograde, before ``SaveAutoGrades``): in graded test
  cells, text on stderr (a ``logging`` line, a ``print(..., file=sys.stderr)``)
  becomes ordinary output, still shown but no longer costing marks. Errors still
  score 0.
* :class:`LimitOutputSize` (autograde, in place of nbgrader's ``LimitOutput``):
  besides nbgrader's limits on lines and traceback lines, a limit on the
  characters each cell may keep, so one enormous line cannot bloat the stored
  notebook.
* :class:`ShortTracebacks` (feedback, after ``ClearHiddenTests``): a failed
  graded cell shows the failure's message and the frames of the student's own
  cells, never the frames of the test cell or of library files.

The autograded notebooks keep the full tracebacks for the instructor.
"""
from __future__ import annotations

import json
import re

from nbgrader.preprocessors import LimitOutput, NbGraderPreprocessor
from nbgrader.utils import is_grade, is_solution
from traitlets import Integer

__all__ = ["StderrAsStdout", "LimitOutputSize", "ShortTracebacks"]

_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
# How IPython starts a traceback frame: "Cell In[3], line 2" (a notebook cell) or
# "File /path/module.py:12, in func(args)" (a file); anything else is a header,
# the final "Error: message" line or a note between chained exceptions.
_CELL_FRAME = re.compile(r"^\s*Cell In\[(\d+)\]")
_FILE_FRAME = re.compile(r"^\s*File ")
_TRUNCATED = "... Output truncated ..."


def _is_graded_test(cell) -> bool:
    """Whether ``cell`` is an autograded test cell: a graded code cell that is no answer.

    These are the cells nbgrader scores from their outputs.

    >>> from nbformat.v4 import new_code_cell
    >>> _is_graded_test(new_code_cell("assert f(3) == 6", metadata={"nbgrader": {
    ...     "grade": True, "solution": False, "points": 1, "grade_id": "t"}}))
    True
    >>> _is_graded_test(new_code_cell("x = 1"))
    False
    """
    return cell.cell_type == "code" and is_grade(cell) and not is_solution(cell)


class StderrAsStdout(NbGraderPreprocessor):
    """In graded test cells, turn stderr stream outputs into stdout ones.

    nbgrader gives 0 to a test cell with any stderr text, so a correct program
    that logs would lose its marks. The text stays visible; only errors
    (``output_type`` "error") still fail the cell.

    >>> from nbformat.v4 import new_code_cell, new_output
    >>> cell = new_code_cell("assert f(3) == 6", metadata={"nbgrader": {
    ...     "grade": True, "solution": False, "points": 1, "grade_id": "t"}})
    >>> cell.outputs = [new_output("stream", name="stderr", text="WARNING:root:hi\\n")]
    >>> cell, _ = StderrAsStdout().preprocess_cell(cell, {}, 0)
    >>> cell.outputs[0].name
    'stdout'
    """

    def preprocess_cell(self, cell, resources, cell_index):
        if _is_graded_test(cell):
            for output in cell.outputs:
                if output.output_type == "stream" and output.name == "stderr":
                    output.name = "stdout"
        return cell, resources


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "\n" + _TRUNCATED


def _data_size(data) -> int:
    return sum(len(v) if isinstance(v, str) else len(json.dumps(v)) for v in data.values())


class LimitOutputSize(LimitOutput):
    """nbgrader's ``LimitOutput`` plus a limit on the characters each code cell keeps.

    ``LimitOutput`` counts lines only, so a single line of 50 MB passes it. After
    its line and traceback limits, the outputs of a cell share ``max_chars``:
    stream text beyond it is cut (ending in "... Output truncated ..."), and a
    rich output (an image, HTML) that does not fit is replaced by a short note.
    What nbgrader grades from is always kept, cut to ``max_chars``: an error
    output (its message and traceback), which costs the cell its points, and the
    plain text of an ``execute_result``, which it reads as partial credit.
    ``LimitOutput``'s settings (``c.LimitOutput.max_lines``) apply to this class too.

    >>> from nbformat.v4 import new_code_cell, new_output
    >>> cell = new_code_cell("f()")
    >>> cell.outputs = [new_output("stream", name="stderr", text="x" * 5000)]
    >>> cell, _ = LimitOutputSize(max_chars=100).preprocess_cell(cell, {}, 0)
    >>> len(cell.outputs[0].text) < 200
    True
    """

    max_chars = Integer(
        100_000,
        help="maximum number of characters of output kept per code cell (-1 means no limit)",
    ).tag(config=True)

    def _limit_size(self, cell):
        if self.max_chars == -1 or cell.cell_type != "code":
            return cell
        left, kept = self.max_chars, []
        for output in cell.outputs:
            kind = output.output_type
            if kind == "stream":
                if left <= 0:
                    continue
                output.text = _clip(output.text, left)
                left -= min(len(output.text), left)
            elif kind == "error":
                output.evalue = _clip(output.evalue, self.max_chars)
                if sum(len(line) for line in output.traceback) > self.max_chars:
                    output.traceback = [_clip(output.traceback[-1], self.max_chars)]
            elif "data" in output:
                size = _data_size(output.data)
                if size > left:
                    note = f"[an output of {size} characters was removed: too large to keep]"
                    if kind == "execute_result":     # its plain text may be partial credit
                        note = _clip(output.data.get("text/plain", note), self.max_chars)
                    output.data = {"text/plain": note}
                left -= min(size, left)
            kept.append(output)
        cell.outputs = kept
        return cell

    def preprocess_cell(self, cell, resources, cell_index):
        cell, resources = super().preprocess_cell(cell, resources, cell_index)
        return self._limit_size(cell), resources


class ShortTracebacks(NbGraderPreprocessor):
    """In graded test cells of the feedback, show a failure's message, not the checking code.

    The frames of the test cell itself would quote its hidden lines, and the frames
    of files (``collective_lib/grading/``, helpers next to the assignment) are
    the grader's, not the student's. Both are dropped; the header, the frames of
    the student's own (ungraded) cells and the final ``Error: message`` line stay.

    >>> from nbformat.v4 import new_code_cell, new_notebook, new_output
    >>> test = new_code_cell("assert f(-5) == -10, 'f(-5) should be -10'", execution_count=2,
    ...     metadata={"nbgrader": {"grade": True, "solution": False, "points": 1,
    ...                            "grade_id": "t"}})
    >>> test.outputs = [new_output("error", ename="AssertionError", evalue="f(-5) should be -10",
    ...     traceback=["AssertionError   Traceback (most recent call last)",
    ...                "Cell In[2], line 1\\n----> 1 assert f(-5) == -10, 'f(-5) should be -10'",
    ...                "AssertionError: f(-5) should be -10"])]
    >>> nb, _ = ShortTracebacks().preprocess(new_notebook(cells=[test]), {})
    >>> nb.cells[0].outputs[0].traceback
    ['AssertionError   Traceback (most recent call last)', 'AssertionError: f(-5) should be -10']
    """

    def preprocess(self, nb, resources):
        # the cells whose frames may be shown: the student's, and the set-up code
        self._shown_cells = {cell.execution_count for cell in nb.cells
                             if cell.cell_type == "code" and cell.get("execution_count")
                             and not _is_graded_test(cell)}
        return super().preprocess(nb, resources)

    def _shown(self, entry: str) -> bool:
        text = _ANSI.sub("", entry)
        cell = _CELL_FRAME.match(text)
        if cell:
            return int(cell.group(1)) in self._shown_cells
        return not _FILE_FRAME.match(text)

    def preprocess_cell(self, cell, resources, cell_index):
        if _is_graded_test(cell):
            for output in cell.outputs:
                if output.output_type == "error":
                    output.traceback = [entry for entry in output.traceback if self._shown(entry)]
        return cell, resources
