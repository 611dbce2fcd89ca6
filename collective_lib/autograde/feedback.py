"""The course's feedback page: nbgrader's, with every question named by its title.

``nbgrader generate_feedback`` renders each graded notebook with nbgrader's
template ``feedback/index.html.j2``. The course's configuration
(``exercises/nbgrader_config.py``) has it render ``templates/feedback/``
:data:`TEMPLATE_FILE` instead, which extends nbgrader's template and changes two
things a student reads:

* the score summary at the top names each graded cell by its title
  (:func:`question_titles`), where nbgrader writes "Test cell" or "Written
  response" for every one;
* a rubric placeholder (a locked markdown task cell of 0 points, whose mark scheme
  ``ClearMarkScheme`` removed) shows as the note it holds, not as a "Student's
  task" scored 0 / 0, and has no line in the summary.

Only nbgrader's feedback converter uses these settings (formgrader's pages keep
their own template), and nbgrader's template stays the base: a newer nbgrader's
styles and cell panels come through unchanged.
"""
from __future__ import annotations

import os
import re

__all__ = ["TEMPLATE_FILE", "FILTERS", "template_basedirs", "question_titles", "title_of"]

#: The course's template, in ``templates/feedback/`` next to this module.
TEMPLATE_FILE = "course_feedback.html.j2"

#: The Jinja filters the template uses, for ``HTMLExporter.filters``.
FILTERS = {"question_titles": f"{__name__}.question_titles"}

_TEMPLATES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "templates")

# "(3 points)", "(2 points, graded by hand)", "(3 + 2 points)", "(1 point)" at the end
_POINTS = re.compile(r"\s*\([^()]*\bpoints?\b[^()]*\)\s*$")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s{0,3}(```|~~~)")
# nbgrader's region markers: a comment, never a title or a heading
_MARKER = re.compile(r"^\s*#+\s*(BEGIN|END) (SOLUTION|HIDDEN TESTS|MARK SCHEME)\b")
# a question's label at the start of its text: "**(c)** With two PEs ..."
_LABEL = re.compile(r"^\s*\*\*(\([a-z0-9]{1,4}\))\*\*")


def template_basedirs() -> list[str]:
    """The template folders of the feedback exporter: the course's, then nbgrader's.

    ``HTMLExporter.extra_template_basedirs``: once it is set, nbgrader no longer
    adds its own folder, so it is listed here too.
    """
    import nbgrader
    nbgrader_templates = os.path.join(os.path.dirname(nbgrader.__file__), "server_extensions",
                                      "formgrader", "templates")
    return [_TEMPLATES, nbgrader_templates]


def title_of(text: str) -> str:
    """A question's title from a heading or a comment line: no ``#``, no "(N points)".

    >>> title_of("## (iv) Consequences (2 points, graded by hand)")
    '(iv) Consequences'
    >>> title_of("# Is the broadcast correct? (4 points)")
    'Is the broadcast correct?'
    """
    return _POINTS.sub("", text.strip().lstrip("#").strip()).strip()


def _last_heading(markdown: str) -> str | None:
    """The text of the last heading of a markdown cell (outside code blocks), if any."""
    heading, in_code = None, False
    for line in markdown.splitlines():
        if _FENCE.match(line):
            in_code = not in_code
        elif not in_code and not _MARKER.match(line):
            found = _HEADING.match(line)
            if found and found.group(1).strip():
                heading = found.group(1)
    return heading


def _first_comment(code: str) -> str | None:
    """The first line of a code cell if it is a comment (a test cell's title)."""
    for line in code.splitlines():
        if not line.strip():
            continue
        if line.lstrip().startswith("#") and not _MARKER.match(line):
            return line
        return None
    return None


def question_titles(nb) -> dict[str, str]:
    """``{grade_id: title}`` of every graded or task cell of the notebook ``nb``.

    A test cell is named by its first line, a comment such as ``# fit_ping_pong
    (4 points)``, which a student sees at the top of that cell; an answer (a
    written answer, or code graded by hand), a task, or a test cell without such
    a comment, by the heading of the markdown above it, as in ``## Why is it
    slower? (3 points, graded by hand)``, followed by the label that starts the
    question's text if it has one (``**(c)** Can any schedule ...``). The points
    are left out (the summary shows the score). A cell with neither is named by
    its grade id.

    Headings and labels come from the instructor's markdown only: a locked cell,
    which in a graded notebook is one the gradebook vouches for (``DeduplicateCells``
    keeps only the nbgrader metadata of the gradebook's cells, and nbgrader puts
    back a locked cell's source). A cell the student added has no such metadata,
    so its heading ("## Already graded by hand: 3/3") names no question.
    """
    titles: dict[str, str] = {}
    heading = label = None
    for cell in nb.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        source = cell.get("source", "")
        if meta.get("grade") or meta.get("task"):
            title = None
            if cell.get("cell_type") == "code" and not meta.get("solution"):
                comment = _first_comment(source)
                title = title_of(comment) if comment else None
            if not title and heading:
                title = " ".join(filter(None, [title_of(heading), label]))
            titles[meta["grade_id"]] = title or meta["grade_id"]
        if cell.get("cell_type") == "markdown" and meta.get("locked") and not (
                meta.get("solution") or meta.get("task")):
            heading = _last_heading(source) or heading      # the instructor's text only
            found = _LABEL.match(source)
            label = found.group(1) if found else None
    return titles
