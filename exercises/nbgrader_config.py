"""nbgrader configuration for the course's exercises.

This directory is the nbgrader course directory: instructors run the nbgrader
commands from here (see README.md). Assignments live in source/<name>/.
"""

import os

from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, ClearHiddenTests,
                                    Execute, GetGrades, IgnorePattern, SaveAutoGrades)

from collective_lib.autograde import LimitOutputSize, ShortTracebacks, StderrAsStdout

c = get_config()  # noqa: F821  (injected by nbgrader when it loads this file)

# The course directory is wherever this file is, so a copy of exercises/ (as
# the tests make in a temporary directory) is a self-contained course.
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = "collective"

# Each cell of a student notebook gets at most this many seconds while it is
# validated or autograded. nbgrader's `Execute` preprocessor subclasses
# nbconvert's ExecutePreprocessor and reads this section too.
c.ExecutePreprocessor.timeout = 120

# On a timeout, interrupt the kernel and carry on with the next cell instead of
# aborting. An endless student cell is then recorded as a CellTimeoutError
# output, the tests that depend on it fail, and the notebook is still graded.
# (True is nbgrader 0.9's default; it is set here so nobody turns it off.)
c.Execute.interrupt_on_timeout = True

# nbgrader's autograde steps (its default list, nbgrader 0.9.6) with two changes
# (collective_lib.autograde): in graded test cells, stderr text (a `logging` line,
# a print to sys.stderr) becomes ordinary output, so a correct program that logs
# keeps its marks (errors still score 0); and LimitOutputSize, in LimitOutput's
# place, also caps the characters each cell keeps (LimitOutput counts lines only),
# so a flood of output cannot bloat the graded notebook.
c.Autograde.autograde_preprocessors = [
    Execute,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutputSize,
    StderrAsStdout,
    SaveAutoGrades,
    AssignLatePenalties,
    CheckCellMetadata,
]
c.LimitOutput.max_lines = 200            # per cell; also read by LimitOutputSize
c.LimitOutput.max_traceback = 100
c.LimitOutputSize.max_chars = 100_000    # per cell, for one enormous line

# Feedback shows each failed check's message but neither the hidden tests
# (ClearHiddenTests removes them from the cells' source) nor the frames of the
# test cell and the grading library (ShortTracebacks). autograded/ keeps both.
c.GenerateFeedback.preprocessors = [
    GetGrades,
    ClearHiddenTests,
    ShortTracebacks,
    CSSHTMLHeaderPreprocessor,
]

# `nbgrader export` writes one column per graded cell (collective_lib.autograde.export),
# so the instructor sees which question the class missed; see README "Running a course".
c.ExportApp.plugin_class = "collective_lib.autograde.export.PerQuestionExportPlugin"
