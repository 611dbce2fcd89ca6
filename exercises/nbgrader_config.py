"""nbgrader configuration for the course's exercises.

This directory is the nbgrader course directory: instructors run the nbgrader
commands from here (see README.md). Assignments live in source/<name>/.
"""

import os

from nbconvert.preprocessors import ClearMetadataPreprocessor, CSSHTMLHeaderPreprocessor
from nbgrader.preprocessors import (AssignLatePenalties, CheckCellMetadata, ClearHiddenTests,
                                    ClearMarkScheme, ClearOutput, GetGrades, IgnorePattern,
                                    OverwriteCells, OverwriteKernelspec, SaveAutoGrades)

from collective_lib.autograde import feedback
from collective_lib.autograde import (DeduplicateCells, EscapeStudentMarkup, FlagForReview,
                                      LimitOutputSize, SubmissionCollect, SubmissionExporter,
                                      TrustedVerdict)

c = get_config()  # noqa: F821  (injected by nbgrader when it loads this file)

# The course directory is wherever this file is, so a copy of exercises/ (as
# the tests make in a temporary directory) is a self-contained course.
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
c.CourseDirectory.course_id = "collective"

# nbgrader's default ignore list plus the instructor's reference answers,
# source/<assignment>/_reference.py: never copied into release/ or autograded/
# (the trusted checker imports them from source/ for the hidden tests).
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "feedback",
                            "_reference.py"]

# nbgrader's sanitize steps (its default list) with DeduplicateIds replaced, and first: a
# cell a student copied, or whose nbgrader metadata the gradebook does not vouch for,
# loses that metadata whole (a known grade id gets the gradebook's role back), so it is
# the student's own cell and does not make nbgrader refuse the notebook
# (collective_lib.autograde.verdict).
# Every submitted file is read as a notebook, whatever its JSON holds, and a link a
# student leaves in the exchange is collected as a link, never followed
# (collective_lib/autograde/reading.py).
c.Autograde.exporter_class = SubmissionExporter
c.ExchangeFactory.collect = SubmissionCollect
c.Autograde.sanitize_preprocessors = [
    DeduplicateCells,
    ClearOutput,
    OverwriteKernelspec,
    OverwriteCells,
    CheckCellMetadata,
]

# nbgrader's autograde steps (its default list, nbgrader 0.9.6) with nbgrader's
# `Execute` replaced by TrustedVerdict (collective_lib.autograde.verdict): the
# verdict of each test cell comes from a trusted checker process, while the
# student's cells run only in sandboxed processes (their own uid, no view of
# source/, the gradebook or other submissions, limits on memory, CPU time,
# processes and output). What it covers and what it does not: exercises/SANDBOX.md.
# LimitOutputSize, in LimitOutput's place, also caps the characters each cell
# keeps; FlagForReview, after SaveAutoGrades, sends cells whose checks raised a
# flag (a likeness to a library function, computed lookups) to manual grading.
# EscapeStudentMarkup makes the stored notebook, which formgrader shows graders and
# feedback is made from, safe to render: the HTML of every cell a student wrote
# (answers, added markdown and raw cells) shows as text. It runs once the cells are
# final, after SaveAutoGrades, which compares each written answer with the release.
c.Autograde.autograde_preprocessors = [
    TrustedVerdict,
    IgnorePattern,
    ClearMetadataPreprocessor,
    LimitOutputSize,
    SaveAutoGrades,
    FlagForReview,
    AssignLatePenalties,
    EscapeStudentMarkup,
    CheckCellMetadata,
]
c.LimitOutput.max_lines = 200            # per cell; also read by LimitOutputSize
c.LimitOutput.max_traceback = 100
c.LimitOutputSize.max_chars = 100_000    # per cell, for one enormous line

# Seconds the checks of one graded cell, and of one whole notebook, may take.
c.TrustedVerdict.cell_timeout = 600
c.TrustedVerdict.notebook_timeout = 1800
# Each real-time budget of the checks (a call's `time_limit_s`, and 20 s for the student's
# cells in each new process) times this: the student's code runs in sandboxed processes
# there. Raise it on a slow or crowded grading machine.
c.TrustedVerdict.time_scale = 1.5

# `nbgrader validate` (and the instructor's own runs) still execute notebooks in
# a kernel: each cell gets at most this many seconds, then the next one runs.
c.ExecutePreprocessor.timeout = 120
c.Execute.interrupt_on_timeout = True

# Feedback shows each failed check's message (the checker's verdict: which p,
# which PE, expected and got) but neither the hidden tests nor the graders'
# rubrics, which ClearHiddenTests and ClearMarkScheme remove from the cells'
# source. autograded/ keeps both for graders (formgrader shows the rubrics).
# EscapeStudentMarkup again, a second line of defence (autograded/ is already
# escaped), once the cells are final: cutting a hidden-test or mark-scheme region out
# of a student's cell could otherwise turn escaped text back into HTML.
c.GenerateFeedback.preprocessors = [
    GetGrades,
    ClearHiddenTests,
    ClearMarkScheme,
    EscapeStudentMarkup,
    CSSHTMLHeaderPreprocessor,
]

# The feedback page names every question in its score summary by the title a student
# knows (a test cell's first line, a written answer's heading) and leaves out the
# rubric placeholders (0-point tasks): nbgrader's feedback template, extended in
# collective_lib/autograde/templates/feedback/. Set for the feedback converter alone,
# so formgrader's pages keep their own template.
c.GenerateFeedback.HTMLExporter.template_file = feedback.TEMPLATE_FILE
c.GenerateFeedback.HTMLExporter.extra_template_basedirs = feedback.template_basedirs()
c.GenerateFeedback.HTMLExporter.filters = feedback.FILTERS

# `nbgrader export` writes one column per graded cell (collective_lib.autograde.export),
# so the instructor sees which question the class missed; see README "Running a course".
c.ExportApp.plugin_class = "collective_lib.autograde.export.PerQuestionExportPlugin"
