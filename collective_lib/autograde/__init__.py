"""Autograding with nbgrader that an instructor can trust.

* :mod:`.verdict` — ``TrustedVerdict``, in place of nbgrader's ``Execute``: the
  instructor's cells are rebuilt from the gradebook, and the verdict of every
  graded cell comes from a trusted checker process (:mod:`.checker`) that runs
  the tests, while the student's cells run only in sandboxed processes
  (:mod:`.student`, :mod:`.sandbox`, one cgroup per submission in
  :mod:`.cgroups`, forbidden library code poisoned by :mod:`.poison`) reached
  through stand-ins (:mod:`.remote`) and a data-only codec (:mod:`.codec`);
  ``DeduplicateCells`` keeps a copied or relabelled cell from stopping nbgrader,
  ``SubmissionExporter`` (:mod:`.reading`) reads any submitted file as a notebook
  (``SubmissionCollect`` collects a link as a link), and
  ``FlagForReview`` marks cells whose checks raised a flag
  (:mod:`collective_lib.grading.review`) for manual grading. The checks
  themselves are :mod:`collective_lib.grading`, the layer below this one
  (``exercises/SANDBOX.md``, "The boundary").
* :mod:`.preprocessors` — ``LimitOutputSize``, a cap on the characters a cell keeps,
  and ``EscapeStudentMarkup``, which shows what a student wrote as text, never as
  live HTML, in feedback and formgrader.
* :mod:`.feedback` — the feedback page's template, which names every question.
* :mod:`.export` — ``PerQuestionExportPlugin``, the grade export with one column per
  graded cell; :mod:`.report` plots it (run as ``python -m collective_lib.autograde.report``).
* :mod:`.classgrade` — an assignment graded for the whole class on Dask workers (one
  machine's cores or a cluster), with progress, resumption and one failure per crash.
* :mod:`.lms` — the grades as Canvas's and Moodle's gradebook imports read them.
* :mod:`.misconceptions` — what the class got wrong: the failed checks of an assignment
  grouped by their kind (:mod:`collective_lib.grading.failures`), with counts and examples.
* :mod:`.variants` — each student's own parameters of an assignment.
* :mod:`.similarity` — which submissions of an assignment look copied from each other
  (copydetect), for a human to review.

``exercises/nbgrader_config.py`` puts them in nbgrader's autograde and
feedback chains. The nbgrader classes are imported on first use, so the
grading library can use the light modules without loading nbgrader.
"""
import importlib

__all__ = ["LimitOutputSize", "EscapeStudentMarkup", "TrustedVerdict", "DeduplicateCells",
           "SubmissionExporter", "SubmissionCollect", "FlagForReview", "PerQuestionExportPlugin",
           "question_column"]

_HOMES = {"LimitOutputSize": "preprocessors", "EscapeStudentMarkup": "preprocessors",
          "TrustedVerdict": "verdict",
          "DeduplicateCells": "verdict", "SubmissionExporter": "reading",
          "SubmissionCollect": "reading",
          "FlagForReview": "verdict", "PerQuestionExportPlugin": "export",
          "question_column": "export"}


def __getattr__(name):
    if name in _HOMES:
        return getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
