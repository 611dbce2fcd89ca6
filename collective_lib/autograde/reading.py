"""How the course takes in what a student hands in: every submitted file is graded.

nbgrader reads a submission with ``nbformat.read`` and stops on the first file it
cannot read or validate, before any grading: the notebook gets no verdict, and on a
regrade the gradebook keeps the scores of the student's previous submission. A
student's edit of the file's JSON is enough: a number of 5001 digits, ``NaN`` as an
execution count, a source that is a number, a cell without metadata, a tag with a
comma, nesting 100,000 levels deep, ``"nbformat": 5``; and so is a folder or a link
where the notebook belongs. A lone UTF-16 surrogate (``"\\ud800"``) is read, but no
file can hold it, so nbgrader failed at the end, when it wrote the graded notebook
(after saving its scores: no feedback). A file of 95 MB took 2.5 GB of the grader's
memory to parse, and one of 100,000 cells two minutes, outside every limit.

:class:`SubmissionExporter` (``c.Autograde.exporter_class`` in
``exercises/nbgrader_config.py``) reads through :func:`read_submission` instead,
which rebuilds the notebook from what it can use: each cell's type, source,
nbformat id, a markdown cell's attachments and its nbgrader metadata (which
``DeduplicateCells`` then checks against the gradebook), every string without lone
surrogates. Outputs, execution counts, tags and all other metadata are dropped;
grading clears or rebuilds them anyway. It reads a regular file only, never through
a link, and at most :data:`MAX_NOTEBOOK_BYTES` and :data:`MAX_CELLS` cells. What it
cannot read as a notebook becomes an empty notebook that says why (:data:`UNREADABLE`
in its metadata): grading puts every instructor cell back, each test fails for want
of the student's answers, and the graded notebook's note from the grader gives the
reason. Either way every graded cell gets a verdict, and the gradebook the scores of
this submission.

A link is never followed because nbgrader's ``collect`` copies the students' folders
of the exchange, which students write, with the instructor's rights: a link there to
the instructor's source notebook came out as a copy of it, solutions included, and
was graded as the student's. :class:`SubmissionCollect` (``c.ExchangeFactory.collect``)
leaves links out, and what else a student may not hand in (see there).
"""
from __future__ import annotations

import datetime
import functools
import json
import os
import re
import shutil
import stat

from nbconvert.exporters import NotebookExporter
from nbconvert.exporters.exporter import ResourcesDict
from nbformat import ValidationError, v4
from nbformat.notebooknode import NotebookNode
from nbgrader.exchange.default import ExchangeCollect

__all__ = ["SubmissionExporter", "SubmissionCollect", "read_submission", "read_submitted_file",
           "without_lone_surrogates", "UNREADABLE", "MAX_NOTEBOOK_BYTES", "MAX_CELLS", "FUTURE_S"]

#: The key of a notebook's metadata that says why its file could not be read
#: (``{"collective_lib": {"unreadable": reason}}``); only :func:`read_submission` sets it.
UNREADABLE = "collective_lib"
#: The largest notebook file read (a notebook whose outputs hold many pictures is the
#: largest a student makes; parsing JSON takes up to some 25 times a file's size).
MAX_NOTEBOOK_BYTES = 20 << 20
#: The most cells a notebook may have (an assignment has some 20).
MAX_CELLS = 2000
#: How far ahead of the grader's clock a submission's timestamp may be, in seconds.
FUTURE_S = 3600
#: A student id collect takes: no glob pattern or path character, not a hidden name, no
#: control character (an id is printed to the instructor's terminal and written to CSVs).
_STUDENT_ID = re.compile(r"[^*?\[\]/\\.\x00-\x1f\x7f-\x9f][^*?\[\]/\\\x00-\x1f\x7f-\x9f]*")
#: The kinds of cells a notebook may hold.
_CELL_TYPES = ("code", "markdown", "raw")
#: An nbformat 4.5 cell id.
_CELL_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
#: The scalar values a cell's nbgrader metadata may hold.
_SCALARS = (str, int, float, bool, type(None))
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


class _Unreadable(ValueError):
    """A submission's file is not a notebook this reader can rebuild."""


def read_submission(data: bytes | str) -> NotebookNode:
    """The notebook that a submitted file holds, rebuilt; an empty notebook that says
    why (:data:`UNREADABLE`) when the file holds none.

    >>> nb = read_submission('{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, '
    ...                      '"cells": [{"cell_type": "code", "source": ["x = ", "1"], '
    ...                      '"execution_count": NaN, "metadata": {"a": [[[]]]}}]}')
    >>> nb.cells[0].source, nb.cells[0].execution_count, dict(nb.cells[0].metadata)
    ('x = 1', None, {})
    >>> read_submission('{"nbformat": 5}').metadata["collective_lib"]["unreadable"]
    'its nbformat is not 4'
    """
    if len(data) > MAX_NOTEBOOK_BYTES:
        return _unreadable(f"it is larger than {MAX_NOTEBOOK_BYTES >> 20} MiB (clear its "
                           "outputs and hand it in again)")
    if isinstance(data, bytes):
        data = data.decode("utf-8", errors="replace")
    try:
        return _rebuilt(json.loads(data, parse_int=_int))
    except (_Unreadable, ValueError, RecursionError, ValidationError) as error:
        return _unreadable(_reason(error))


def read_submitted_file(filename: str | os.PathLike) -> NotebookNode:
    """The notebook a submitted file holds, read as grading reads it: a regular file only,
    no link followed, rebuilt by :func:`read_submission` (an empty notebook that says why
    for anything else)."""
    try:
        data, _ = _regular_file(os.fspath(filename))
    except _Unreadable as error:
        return _unreadable(str(error))
    return read_submission(data)


def _unreadable(reason: str) -> NotebookNode:
    notebook = v4.new_notebook()
    notebook.metadata[UNREADABLE] = {"unreadable": reason}
    return notebook


def without_lone_surrogates(value):
    """``value`` (JSON data) with every lone UTF-16 surrogate of its strings replaced by
    U+FFFD: JSON's ``"\\ud800"`` reads as one, and no file can hold it."""
    if isinstance(value, str):
        return _LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [without_lone_surrogates(item) for item in value]
    if isinstance(value, dict):
        return {without_lone_surrogates(k): without_lone_surrogates(v) for k, v in value.items()}
    return value


def _int(digits: str) -> int | None:
    """An integer of the file; None for one Python will not read (over 4300 digits), which
    can only be an execution count or metadata, both dropped."""
    return int(digits) if len(digits) <= 1000 else None


def _reason(error: Exception) -> str:
    if isinstance(error, _Unreadable):
        return str(error)
    if isinstance(error, RecursionError):
        return "its JSON is nested too deeply"
    if isinstance(error, ValidationError):          # (its message quotes the student's text)
        return "it breaks the rules of nbformat 4"
    return f"it is not valid JSON ({without_lone_surrogates(str(error))[:200]})"


def _rebuilt(raw) -> NotebookNode:
    if not isinstance(raw, dict):
        raise _Unreadable(f"it holds a JSON {type(raw).__name__}, not a notebook")
    version = raw.get("nbformat")
    if version != 4 or isinstance(version, bool):     # (its text is the student's: not shown)
        raise _Unreadable("its nbformat is not 4")
    cells = raw.get("cells")
    if not isinstance(cells, list):
        raise _Unreadable("it has no list of cells")
    if len(cells) > MAX_CELLS:
        raise _Unreadable(f"it has {len(cells)} cells, more than {MAX_CELLS}")
    notebook = v4.new_notebook(cells=[_cell(cell, number) for number, cell in
                                      enumerate(cells, 1)])
    metadata = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
    kernelspec = metadata.get("kernelspec")
    if isinstance(kernelspec, dict) and all(isinstance(v, str) for v in kernelspec.values()):
        notebook.metadata.kernelspec = without_lone_surrogates(kernelspec)
    return notebook


def _cell(raw, number: int) -> NotebookNode:
    if not isinstance(raw, dict) or raw.get("cell_type") not in _CELL_TYPES:
        raise _Unreadable(f"its cell {number} is not a code, markdown or raw cell")
    source = raw.get("source", "")
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        source = "".join(source)
    if not isinstance(source, str):
        raise _Unreadable(f"the source of its cell {number} is not text")
    metadata = raw.get("metadata") if isinstance(raw.get("metadata"), dict) else {}
    kept = {}
    nbgrader = metadata.get("nbgrader")
    if isinstance(nbgrader, dict) and all(isinstance(v, _SCALARS) for v in nbgrader.values()):
        kept["nbgrader"] = nbgrader
    make = {"code": v4.new_code_cell, "markdown": v4.new_markdown_cell,
            "raw": v4.new_raw_cell}[raw["cell_type"]]
    cell = make(source=without_lone_surrogates(source), metadata=without_lone_surrogates(kept))
    attachments = raw.get("attachments")
    if raw["cell_type"] == "markdown" and isinstance(attachments, dict) and all(
            isinstance(files, dict) and all(isinstance(mime, str) and isinstance(data, str)
                                            for mime, data in files.items())
            for files in attachments.values()):
        cell.attachments = without_lone_surrogates(attachments)   # a picture in an answer
    cell_id = raw.get("id")
    if isinstance(cell_id, str) and _CELL_ID.fullmatch(cell_id):
        cell.id = cell_id
    return cell


class SubmissionExporter(NotebookExporter):
    """nbconvert's notebook exporter, reading a submitted file with :func:`read_submission`.

    nbgrader's autograde reads each notebook twice: the submitted file, which it
    sanitizes into the autograded folder, then that copy, which it grades (with
    ``NBGRADER_EXECUTION=autograde`` set). The copy is this reader's own output,
    :data:`UNREADABLE` included, and is read as it is.
    """

    def from_filename(self, filename, resources=None, **kw):
        if os.environ.get("NBGRADER_EXECUTION") == "autograde":
            return super().from_filename(filename, resources=resources, **kw)
        resources = ResourcesDict() if resources is None else resources
        if not resources.get("metadata"):
            resources["metadata"] = ResourcesDict()
        path, name = os.path.split(filename)
        resources["metadata"].update(name=os.path.splitext(name)[0], path=path)
        try:
            data, modified = _regular_file(filename)
        except _Unreadable as error:
            return self.from_notebook_node(_unreadable(str(error)), resources=resources, **kw)
        resources["metadata"]["modified_date"] = modified.strftime("%B %-d, %Y")
        return self.from_notebook_node(read_submission(data), resources=resources, **kw)


def _regular_file(filename: str) -> tuple:
    """The bytes of ``filename`` (at most one more than :data:`MAX_NOTEBOOK_BYTES`) and its
    time of change, read without following a link; :class:`_Unreadable` for anything but a
    regular file."""
    try:
        fd = os.open(filename, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        if os.path.islink(filename):
            raise _Unreadable("it is a link, not a notebook file") from None
        raise _Unreadable(f"the grader cannot open it ({error.strerror})") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise _Unreadable(f"it is {kind}, not a notebook file")
    with os.fdopen(fd, "rb") as file:
        return (file.read(MAX_NOTEBOOK_BYTES + 1),
                datetime.datetime.fromtimestamp(info.st_mtime, tz=datetime.timezone.utc))


class SubmissionCollect(ExchangeCollect):
    """nbgrader's ``collect``, taking in only what a student may hand in.

    nbgrader collects the folders of the exchange's inbound folder, which every student
    may write, with the instructor's rights: it followed links (``shutil.copytree``), so
    a link to the instructor's source notebook or to the gradebook came out as a copy in
    the student's submission, and from there in the student's feedback; a named pipe in
    one student's folder, or a folder named with a timestamp it cannot read, stopped the
    collection of the whole class; and a folder in another student's name with a
    timestamp in 2099 replaced that student's submission for good; a folder in the name
    ``*`` took the first student's grade (nbgrader uses the id as a glob pattern). Here a
    link, a pipe or any other file that is not a regular file or a folder is left out; an
    entry of inbound that is not a folder (a link to one), a folder whose name holds no
    readable timestamp, a time more than :data:`FUTURE_S`
    ahead, or a student id with a pattern or path character is not collected; nor is one
    that another student of the course owns (where the machine's user names are the
    student ids, as nbgrader's ``check_owner`` assumes).
    """

    def _path_to_record(self, path):
        if os.path.islink(path) or not os.path.isdir(path):
            # a link in inbound to the instructor's folder would be copied as the submission
            return self._skipped(path, "it is not a folder")
        try:
            record = super()._path_to_record(path)
        except (ValueError, OverflowError):         # dateutil's ParserError is a ValueError
            return self._skipped(path, "its name holds no timestamp")
        if not _STUDENT_ID.fullmatch(record["username"]):
            # nbgrader uses the id as a glob pattern: "*" took the first student's grade
            return self._skipped(path, "its student id holds a pattern or path character")
        now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)  # as nbgrader
        ahead = record["timestamp"] - now
        if ahead.total_seconds() > FUTURE_S:
            return self._skipped(path, "its timestamp lies in the future")
        owner = _owner(path)
        if owner != record["username"] and owner in self._student_ids():
            return self._skipped(path, "another student of the course owns it")
        return record

    def _skipped(self, path, why: str) -> dict:
        self.log.warning("not collected: %s (%s)", path, why)
        return {"username": "", "filename": os.path.basename(path),
                "timestamp": datetime.datetime.min}

    def _student_ids(self) -> set:
        if not hasattr(self, "_students"):
            from nbgrader.api import Gradebook
            with Gradebook(self.coursedir.db_url, self.coursedir.course_id) as gb:
                self._students = {student.id for student in gb.students}
        return self._students

    def init_src(self):
        super().init_src()
        self.src_records = [r for r in self.src_records if r["username"]]

    def do_copy(self, src, dest, log=None):
        # nbgrader's own copy (its size limits, ignore patterns and group permissions) with
        # copytree told to leave out what is not a regular file or a folder; collect runs in
        # one thread.
        copytree = shutil.copytree
        shutil.copytree = functools.partial(_copytree_of_files, copytree)
        try:
            super().do_copy(src, dest, log)
        finally:
            shutil.copytree = copytree


def _owner(path: str) -> str | None:
    try:
        import pwd
        return pwd.getpwuid(os.lstat(path).st_uid).pw_name
    except (ImportError, KeyError, OSError):
        return None


def _copytree_of_files(copytree, src, dst, symlinks=False, ignore=None, *args, **kw):
    """``copytree`` leaving out every entry that is neither a regular file nor a folder
    (links among them, never followed); it calls itself for each folder, as copytree does."""
    def left_out(folder, names):
        chosen = set(ignore(folder, names)) if ignore is not None else set()
        return chosen | {name for name in names
                         if not _file_or_folder(os.lstat(os.path.join(folder, name)).st_mode)}
    return copytree(src, dst, symlinks, left_out, *args, **kw)


def _file_or_folder(mode: int) -> bool:
    return stat.S_ISREG(mode) or stat.S_ISDIR(mode)
