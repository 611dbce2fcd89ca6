"""Autograding with nbgrader: what the course configuration adds to nbgrader's own steps.

See :mod:`collective_lib.autograde.preprocessors`; ``exercises/nbgrader_config.py``
puts them in nbgrader's autograde and feedback chains.
"""
from .preprocessors import LimitOutputSize, ShortTracebacks, StderrAsStdout

__all__ = ["StderrAsStdout", "LimitOutputSize", "ShortTracebacks"]

# Per-question grades (``nbgrader export`` plugin). Its report,
# collective_lib.autograde.report, is run with ``python -m`` and imported on its own.
from .export import PerQuestionExportPlugin, question_column  # noqa: E402
