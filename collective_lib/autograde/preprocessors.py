"""The output limit of the course's autograde steps: ``LimitOutputSize``.

nbgrader's ``LimitOutput`` counts lines only, so one line of 50 MB passes it.
:class:`LimitOutputSize`, in its place (``exercises/nbgrader_config.py``), also
caps the characters each cell keeps, so no output can bloat a graded notebook.
Under trusted grading (:mod:`collective_lib.autograde.verdict`) a test cell's
outputs are the checker's verdict, which this keeps small as well.
"""
from __future__ import annotations

import json

from nbgrader.preprocessors import LimitOutput
from traitlets import Integer

__all__ = ["LimitOutputSize"]

_TRUNCATED = "... Output truncated ..."


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
