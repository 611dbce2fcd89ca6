"""Two of the course's nbgrader steps: ``LimitOutputSize`` and ``EscapeStudentMarkup``.

nbgrader's ``LimitOutput`` counts lines only, so one line of 50 MB passes it.
:class:`LimitOutputSize`, in its place (``exercises/nbgrader_config.py``), also
caps the characters each cell keeps, so no output can bloat a graded notebook.
Under trusted grading (:mod:`collective_lib.autograde.verdict`) a test cell's
outputs are the checker's verdict, which this keeps small as well.

nbconvert's HTML exporter, which writes the feedback pages and through which
formgrader shows a submission to its graders, renders the HTML in a markdown
cell as HTML, and a raw cell verbatim. :class:`EscapeStudentMarkup`, at the end
of autograde and again in the feedback steps, rewrites every cell a student
wrote so that all of it shows as text, while markdown, math and code still
render; the instructor's locked cells (known from the gradebook) keep their HTML.
"""
from __future__ import annotations

import functools
import json
import re
from html.parser import HTMLParser

from nbformat.notebooknode import NotebookNode
from nbgrader.preprocessors import LimitOutput, NbGraderPreprocessor
from traitlets import Integer

__all__ = ["LimitOutputSize", "EscapeStudentMarkup", "escape_markdown", "verbatim_markdown"]

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


# -- a student's markdown, shown as text ----------------------------------------------------
#
# nbconvert renders markdown with mistune (nbconvert.filters.markdown_mistune): raw HTML
# passes through, links keep any protocol (javascript: too), a ```mermaid block is copied
# unescaped, and an image may point at any cell attachment (an SVG too). Text, code, math,
# titles and alt texts are escaped. So a student's markdown is safe once it has no raw
# HTML, no such link, block or image: every "<" outside code and math becomes "&lt;"
# (which shows as "<"), and what the renderer then makes of the cell is checked against
# the tags and attributes markdown itself produces. A cell that fails the check is shown
# as it was typed, in a code block.

_PRIVATE = 0xF0000          # Supplementary Private Use Area-A: stand-ins for each "<"
_PRIVATE_SPAN = 0xFFFE


def _renderer_classes():
    """nbconvert's markdown parser and renderer (imported late: they pull in bs4, pygments)."""
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
    return MarkdownWithMath, IPythonRenderer


def _escaped_by_renderer(source: str) -> set:
    """The characters of ``source`` that nbconvert's renderer writes inside code or math.

    It escapes those itself: a "<" there must stay as typed.
    """
    MarkdownWithMath, IPythonRenderer = _renderer_classes()
    seen = set()

    def note(*texts):
        seen.update(ch for text in texts for ch in text or "")
        return ""

    class Recorder(IPythonRenderer):
        def codespan(self, text):
            return note(text)

        def block_code(self, code, info=None):
            return "" if info and "mermaid" in info.lower() else note(code)   # not escaped

        def inline_math(self, body):
            return note(body)

        def block_math(self, body):
            return note(body)

        def latex_environment(self, name, body):
            return note(name, body)

        def image(self, text, url, title=None):
            return ""

    MarkdownWithMath(renderer=Recorder(escape=False)).render(source)
    return seen


def _escape_outside_code_and_math(source: str) -> str | None:
    """``source`` with each "<" that is not in code or math written as "&lt;"."""
    parts = source.split("<")
    if len(parts) == 1:
        return source
    if len(parts) > _PRIVATE_SPAN or any(ord(ch) >= _PRIVATE for ch in source):
        return None
    marked = parts[0] + "".join(chr(_PRIVATE + i) + part for i, part in enumerate(parts[1:]))
    try:
        kept = _escaped_by_renderer(marked)
    except Exception:           # the parser failed: the next way of showing the cell is tried
        return None
    return parts[0] + "".join(("<" if chr(_PRIVATE + i) in kept else "&lt;") + part
                              for i, part in enumerate(parts[1:]))


def verbatim_markdown(text: str) -> str:
    """Markdown that shows ``text`` exactly as typed: a fenced code block, without a language."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


_UNSHOWABLE = "*(This cell cannot be shown safely; its text is in the notebook file.)*"


def escape_markdown(source: str, attachments: dict | None = None) -> str:
    """Markdown that shows a student's ``source`` with none of its HTML live.

    Emphasis, lists, links to web pages, tables, code and math render as before;
    HTML shows as the text it is (a ``<b>x</b>`` as ``<b>x</b>``). Where that is
    not enough (a ``javascript:`` link, an image that is not an embedded PNG,
    JPEG or GIF, a mermaid block), the whole cell shows as typed, in a code block.

    >>> escape_markdown("*Yes*: $a < b$ and <b>x</b>")
    '*Yes*: $a < b$ and &lt;b>x&lt;/b>'
    >>> print(escape_markdown("[click](javascript:alert(1))"))
    ```
    [click](javascript:alert(1))
    ```
    """
    candidates = (_escape_outside_code_and_math(source), source.replace("<", "&lt;"),
                  verbatim_markdown(source))
    for candidate in candidates:
        if candidate is not None and _renders_as_markdown_only(candidate, attachments):
            return candidate
    return _UNSHOWABLE


# What nbconvert's markdown renderer itself writes: these tags, with these attributes.
_ANY = re.compile(r".*", re.S)


@functools.cache
def _pygments_class():
    """The classes pygments gives highlighted code: its token types' short names."""
    from pygments.token import STANDARD_TYPES
    names = "|".join(sorted((n for n in set(STANDARD_TYPES.values()) if n), key=len,
                            reverse=True))
    one = rf"(?:{names})(?:[A-Z][A-Za-z0-9]*)?"
    return re.compile(rf"{one}(?: {one})*")


_ALLOWED = {
    **{tag: {} for tag in ("p", "em", "strong", "del", "blockquote", "ul", "dl", "dt", "dd",
                           "hr", "br", "table", "thead", "tbody", "tr", "pre")},
    **{f"h{level}": {"id": _ANY} for level in range(1, 7)},
    "ol": {"start": re.compile(r"-?[0-9]+")},
    "li": {"class": re.compile(r"task-list-item")},
    "input": {"class": re.compile(r"task-list-item-checkbox"), "type": re.compile("checkbox"),
              "disabled": None, "checked": None},
    "th": {"style": re.compile(r"text-align:(left|center|right)")},
    "td": {"style": re.compile(r"text-align:(left|center|right)")},
    "code": {"class": re.compile(r"language-[^\s\"'<>]+")},
    "div": {"class": re.compile(r"highlight")},
    "span": {"class": "pygments"},
    "a": {"href": re.compile(r"(https?://|mailto:|#).*", re.I | re.S),
          "title": _ANY, "class": re.compile(r"anchor-link")},
    "img": {"src": re.compile(r"data:image/(png|jpeg|gif);base64,[A-Za-z0-9+/=]*"),
            "alt": _ANY, "title": _ANY},
}


class _MarkdownOnly(HTMLParser):
    """Finds anything in rendered HTML that markdown syntax alone does not produce."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.problems = []

    def handle_starttag(self, tag, attrs):
        allowed = _ALLOWED.get(tag)
        if allowed is None:
            self.problems.append(f"<{tag}>")
            return
        for name, value in attrs:
            rule = allowed.get(name, False)
            if rule is False:
                self.problems.append(f"<{tag} {name}>")
            elif rule is None:
                if value not in (None, ""):
                    self.problems.append(f"<{tag} {name}={value!r}>")
            else:
                pattern = _pygments_class() if rule == "pygments" else rule
                if value is None or not pattern.fullmatch(value):
                    self.problems.append(f"<{tag} {name}={value!r}>")

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag):
        if tag not in _ALLOWED:
            self.problems.append(f"</{tag}>")

    def handle_comment(self, data):
        self.problems.append("<!--")

    def handle_decl(self, decl):
        self.problems.append("<!")

    def handle_pi(self, data):
        self.problems.append("<?")

    def unknown_decl(self, data):
        self.problems.append("<![")


def _renders_as_markdown_only(source: str, attachments: dict | None) -> bool:
    """Whether nbconvert renders ``source`` without raw HTML or anything markdown does not make."""
    MarkdownWithMath, IPythonRenderer = _renderer_classes()
    raw = []

    class Checker(IPythonRenderer):
        def block_code(self, code, info=None):
            if info and "mermaid" in info.lower():
                raw.append("mermaid")
            return super().block_code(code, info)

        def inline_html(self, html):
            raw.append(html)
            return super().inline_html(html)

        def block_html(self, html):
            raw.append(html)
            return super().block_html(html)

    try:
        html = MarkdownWithMath(renderer=Checker(escape=False, attachments=attachments or {})
                                ).render(source)
    except Exception:           # nbconvert refuses it (a missing attachment): so would feedback
        return False
    check = _MarkdownOnly()
    check.feed(html)
    check.close()
    return not raw and not check.problems


_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif")
_BASE64 = re.compile(r"[A-Za-z0-9+/\s]*={0,2}\s*")


def _safe_attachments(attachments) -> dict:
    """The embedded PNG, JPEG and GIF images of a cell (each as one type); nothing else."""
    kept = {}
    if not isinstance(attachments, dict):
        return kept
    for name, bundle in attachments.items():
        if not isinstance(name, str) or not isinstance(bundle, dict):
            continue
        for mime in _IMAGE_TYPES:
            data = bundle.get(mime)
            if isinstance(data, list):
                data = "".join(map(str, data))
            if isinstance(data, str) and _BASE64.fullmatch(data):
                kept[name] = {mime: data}
                break
    return kept


# -- the nbgrader step ---------------------------------------------------------------------

def _text(value) -> str:
    if isinstance(value, list):
        return "".join(map(str, value))
    return value if isinstance(value, str) else str(value)


def _plain_output(output) -> NotebookNode | None:
    """``output`` as what the templates escape: stream and error text, or plain text."""
    kind = output.get("output_type")
    if kind == "stream":
        name = output.get("name") if output.get("name") in ("stdout", "stderr") else "stdout"
        return NotebookNode(output_type="stream", name=name, text=_text(output.get("text", "")))
    if kind == "error":
        traceback = output.get("traceback")
        return NotebookNode(output_type="error", ename=_text(output.get("ename", "")),
                            evalue=_text(output.get("evalue", "")),
                            traceback=[_text(line) for line in traceback]
                            if isinstance(traceback, list) else [])
    if kind in ("execute_result", "display_data"):
        data = output.get("data")
        if not isinstance(data, dict) or "text/plain" not in data:
            return None
        plain = NotebookNode(output_type=kind, data={"text/plain": _text(data["text/plain"])},
                             metadata={})
        if kind == "execute_result":
            plain.execution_count = _count(output.get("execution_count"))
        return plain
    return None


def _count(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class EscapeStudentMarkup(NbGraderPreprocessor):
    """Show everything a student wrote as text, in feedback and in formgrader.

    nbconvert's HTML exporter renders the HTML of a markdown cell (a script, an
    image with an ``onerror``, a styled box that says "Score: 10 / 10") and
    copies a raw cell's HTML into the page. After this step:

    * a markdown cell of the student's (a written answer, a cell they added)
      shows its HTML as text, while markdown, links to web pages, code and math
      still render (:func:`escape_markdown`); a cell that needs more (a
      ``javascript:`` link, a mermaid block, an image other than an embedded PNG,
      JPEG or GIF) shows as typed, in a code block, and its other attachments go;
    * a raw cell, or a cell of an unknown type, becomes a markdown cell that shows
      its text as typed;
    * code cells keep only outputs the templates escape (stream, error, plain text)
      and a numeric execution count; no cell keeps ``transient`` metadata (which
      hides a cell's source), and the notebook no widget state.

    A markdown cell is the instructor's, and keeps its HTML, only if the
    gradebook holds a locked, non-answer cell of its grade id and type with
    exactly its source (or that source less its hidden tests and mark scheme, as
    feedback shows it); like ``TrustedVerdict``'s roles of code cells
    (:func:`collective_lib.autograde.verdict.cell_roles`), never from the
    submitted metadata. Without a gradebook, every cell is the student's.
    """

    def preprocess(self, nb: NotebookNode, resources: dict):
        instructor = self._instructor_cells(nb, resources)
        for index, cell in enumerate(nb.cells):
            if isinstance(cell.get("metadata"), dict):
                cell.metadata.pop("transient", None)
            else:
                cell.metadata = NotebookNode()
            kind = cell.get("cell_type")
            if kind == "code":
                outputs = cell.get("outputs") if isinstance(cell.get("outputs"), list) else []
                cell.outputs = [plain for plain in map(_plain_output, outputs) if plain]
                cell.execution_count = _count(cell.get("execution_count"))
            elif kind == "markdown":
                if index not in instructor:
                    self._escape_markdown_cell(cell)
            else:
                self._show_as_text(cell)
        if isinstance(nb.get("metadata"), dict):
            nb.metadata.pop("widgets", None)
        return nb, resources

    @staticmethod
    def _escape_markdown_cell(cell):
        attachments = _safe_attachments(cell.get("attachments"))
        source = escape_markdown(_text(cell.get("source", "")), attachments)
        cell.source = source
        if attachments:
            cell.attachments = attachments
        else:
            cell.pop("attachments", None)

    @staticmethod
    def _show_as_text(cell):
        text = _text(cell.get("source", ""))
        for key in list(cell):
            if key not in ("id", "metadata"):
                del cell[key]
        cell.cell_type = "markdown"
        cell.metadata = NotebookNode()
        cell.source = verbatim_markdown(text)

    def _instructor_cells(self, nb: NotebookNode, resources: dict) -> set:
        """Indices of the markdown cells that are the instructor's, by the gradebook."""
        info = resources.get("nbgrader") or {}
        if not all(info.get(key) for key in ("db_url", "notebook", "assignment")):
            return set()
        from nbgrader.api import Gradebook, MissingEntry
        try:
            with Gradebook(info["db_url"]) as gb:
                source_nb = gb.find_notebook(info["notebook"], info["assignment"])
                solutions = {c.name for c in source_nb.solution_cells}
                locked = {c.name: c.source for c in source_nb.source_cells
                          if c.locked and c.cell_type == "markdown" and c.name not in solutions}
        except MissingEntry:
            return set()
        found = set()
        for index, cell in enumerate(nb.cells):
            if cell.get("cell_type") != "markdown" or not isinstance(cell.get("metadata"), dict):
                continue
            meta = cell.metadata.get("nbgrader")
            grade_id = meta.get("grade_id") if isinstance(meta, dict) else None
            if grade_id in locked and cell.get("source") in self._as_shown(locked[grade_id]):
                found.add(index)
        return found

    def _as_shown(self, source: str) -> set:
        """``source`` and what feedback's ClearHiddenTests and ClearMarkScheme leave of it."""
        from nbformat.v4 import new_markdown_cell
        from nbgrader.preprocessors import ClearHiddenTests, ClearMarkScheme
        shown = {source}
        cell = new_markdown_cell(source)
        for step, method in ((ClearHiddenTests, "_remove_hidden_test_region"),
                             (ClearMarkScheme, "_remove_mark_scheme_region")):
            try:
                getattr(step(config=self.config), method)(cell)
            except Exception:       # not as nbgrader 0.9 has it: the cell is escaped instead
                break
            shown.add(cell.source)
        return shown
