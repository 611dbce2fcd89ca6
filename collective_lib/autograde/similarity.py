"""Copied work found: the most similar submissions of one assignment, for review.

For one assignment this compares the code of every student's answer cells with every
other student's and ranks the pairs, most similar first, with the matching lines side by
side; run it from the course directory after ``nbgrader collect``::

    python -m collective_lib.autograde.similarity ring_reduction     # similarity-ring_reduction.html, .csv
    python -m collective_lib.autograde.similarity ring_reduction --course exercises \
        --out ring.html --top 10 --threshold 0.6

The comparison is `copydetect <https://github.com/blingenf/copydetect>`_'s (a maintained,
documented implementation of winnowing, the fingerprinting of MOSS): each program is
tokenized by Pygments, so comments, blank space and the names of variables, functions and
classes do not count, and two programs match where they share runs of at least ``noise``
characters of that tokenized text (a name counts as one), in any order. What a student got from the
course does not count: the starter code of the released notebook (``release/<assignment>/``,
or ``source/<assignment>/`` with the solutions cut out) and the instructor's reference
solution (the source's answer cells and ``source/<assignment>/*.py``) are copydetect's
boilerplate, and a match made only of them is no match (so copies of a leaked reference
solution are not found this way).

What is compared: the code that grading runs as the student's, one text per student. Each
of the assignment's notebooks in ``submitted/<student>/<assignment>/`` is read as grading
reads it (``reading.read_submitted_file``), the instructor's cells are put back where
grading puts them (``verdict.assemble``), and every other code cell is the student's,
wherever it stands and whatever its metadata says: an answer moved to a cell of its own,
or a cell whose nbgrader metadata was removed, is compared as grading runs it. A cell is
labelled by the answer cell's grade id of the assignment, else by its place
(``cell3``), never by a name from the submission. Written (markdown) answers and other
files are not compared, nor a student's code beyond ``MAX_CODE_BYTES`` (listed as not
read). A pair is flagged when its similarity reaches ``threshold``, or when the code the
two share is at least ``threshold`` of the reference solution's answers: code a student
adds around a copy lowers the similarity, not what the two share.

It writes

* copydetect's own HTML report (``--out``): the pairs at or above ``threshold``, each
  with both students' code side by side and the matching parts highlighted (its page
  takes Bootstrap from a CDN; offline it shows every pair's code unfolded);
* a CSV beside it (same name, ``.csv``), the ``top`` most similar pairs with the columns
  ``student_a, student_b, similarity, similarity_a, similarity_b, matched_tokens,
  lines_a, lines_b, flagged``; ``similarity_a`` is the fraction of a's own code (its
  tokens outside the boilerplate) that matches b's, ``similarity`` the larger of the two,
  ``lines_a`` the matching lines of a's answers, per cell, as
  ``<notebook>:<grade_id>:<first>-<last>,...`` (lines of the cell, from 1), and
  ``flagged`` says whether the pair reaches ``threshold``;
* the same ranking as text on standard output.

A high similarity is a reason to read both notebooks, nothing more: two students may
have worked from the same textbook program, and it is never a grade.
"""
from __future__ import annotations

import argparse
import bisect
import csv
import html
import os
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from .plain_text import spreadsheet_cell, terminal_text
from .reading import read_submitted_file
from .verdict import assemble, instructor_kind

__all__ = ["AnswerCell", "SimilarPair", "Similarity", "answer_cells", "instructor_cells_of",
           "graded_code", "compare_submissions", "ranking_text", "write_report", "main",
           "CSV_COLUMNS", "MAX_CODE_BYTES", "MAX_RANGES"]

#: The most code compared of one student (all cells together): a notebook may hold 20 MiB,
#: and copydetect took minutes and gigabytes for one of 15 MiB of code; a longer program is
#: listed as not read, for a human to look at.
MAX_CODE_BYTES = 512 << 10
#: The ranges of matching lines shown per cell (a pair of huge programs listed thousands).
MAX_RANGES = 20

_BEGIN_SOLUTION = "### BEGIN SOLUTION"
_END_SOLUTION = "### END SOLUTION"
#: What nbgrader puts in place of a code solution in the release.
_STUB = "# YOUR CODE HERE\nraise NotImplementedError()"


@dataclass(frozen=True)
class AnswerCell:
    """One code answer cell: ``<notebook>:<grade_id>`` and its code."""

    notebook: str
    grade_id: str
    source: str

    @property
    def label(self) -> str:
        return f"{self.notebook}:{self.grade_id}"


@dataclass(frozen=True)
class SimilarPair:
    """Two students' answers that copydetect found alike (see the module docstring)."""

    student_a: str
    student_b: str
    similarity: float
    """The larger of ``similarity_a`` and ``similarity_b``, between 0 and 1."""
    similarity_a: float
    """The fraction of a's code (outside the boilerplate) that matches b's."""
    similarity_b: float
    matched_tokens: int
    lines_a: str
    """The matching lines of a's answers: ``<notebook>:<grade_id>:<first>-<last>,...`` per cell."""
    lines_b: str
    flagged: bool
    """Whether ``similarity`` reaches the threshold of the comparison, or the code the two
    share is at least that fraction of the reference solution's answers (code a student
    adds to a copy lowers ``similarity``, not what the two share)."""


@dataclass
class Similarity:
    """The result of :func:`compare_submissions`."""

    assignment: str
    students: list[str]
    pairs: list[SimilarPair]
    """Every pair of students, most similar first."""
    threshold: float
    html: str
    """copydetect's HTML report of the flagged pairs."""
    boilerplate: list[str] = field(default_factory=list)
    """What was taken as boilerplate, as paths in the course directory."""
    skipped: dict[str, str] = field(default_factory=dict)
    """``{path: reason}`` of submitted notebooks that could not be read."""

    @property
    def flagged(self) -> list[SimilarPair]:
        return [pair for pair in self.pairs if pair.flagged]


def answer_cells(notebook: nbformat.NotebookNode | str | Path, name: str | None = None,
                 *, solutions: str = "keep") -> list[AnswerCell]:
    """The code answer cells of a notebook, in order.

    Parameters
    ----------
    notebook : NotebookNode or path
        A student's, the released or the instructor's (source) notebook.
    name : str, optional
        The notebook's name in the labels; by default the file's stem (``"notebook"`` for
        a notebook in memory).
    solutions : {"keep", "unmark", "cut"}
        What to do with ``### BEGIN SOLUTION`` / ``### END SOLUTION`` regions: leave the
        cell as it is, drop the marker lines (the instructor's solution as code), or put
        nbgrader's stub in place of each region (the starter code the release shows).

    Returns
    -------
    list of AnswerCell
        One per code cell whose nbgrader metadata says ``solution``.

    Examples
    --------
    >>> nb = nbformat.v4.new_notebook(cells=[
    ...     nbformat.v4.new_code_cell("import math"),
    ...     nbformat.v4.new_code_cell(
    ...         "def f(x):\\n    ### BEGIN SOLUTION\\n    return 2 * x\\n    ### END SOLUTION",
    ...         metadata={"nbgrader": {"solution": True, "grade_id": "f_answer"}})])
    >>> [c.label for c in answer_cells(nb)]
    ['notebook:f_answer']
    >>> print(answer_cells(nb, solutions="unmark")[0].source)
    def f(x):
        return 2 * x
    >>> print(answer_cells(nb, "ps1", solutions="cut")[0].source)
    def f(x):
        # YOUR CODE HERE
        raise NotImplementedError()
    """
    if solutions not in ("keep", "unmark", "cut"):
        raise ValueError(f"solutions must be 'keep', 'unmark' or 'cut', not {solutions!r}")
    if not isinstance(notebook, nbformat.NotebookNode):
        path = Path(notebook)
        name = path.stem if name is None else name
        notebook = nbformat.read(path, as_version=4)
    name = "notebook" if name is None else name
    cells = []
    for index, cell in enumerate(notebook.cells):
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell.get("cell_type") != "code" or not meta.get("solution"):
            continue
        source = cell.get("source", "")
        source = "".join(source) if isinstance(source, list) else str(source)
        if solutions != "keep":
            source = _without_solutions(source, stub=solutions == "cut")
        cells.append(AnswerCell(name, str(meta.get("grade_id", f"cell{index}")), source))
    return cells


def instructor_cells_of(notebook: nbformat.NotebookNode) -> dict:
    """The instructor's cells of an assignment's notebook (source or release), as grading
    puts them back (:func:`~collective_lib.autograde.verdict.instructor_cells` reads the
    same from the gradebook, by the same rule, :func:`~.verdict.instructor_kind`):
    ``{grade_id: cell}``."""
    found = {}
    for cell in notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        kind = instructor_kind(cell.cell_type, locked=bool(meta.get("locked")),
                               grade=bool(meta.get("grade")),
                               solution=bool(meta.get("solution")), task=bool(meta.get("task")))
        if meta.get("grade_id") and kind is not False:
            found[meta["grade_id"]] = nbformat.NotebookNode(
                name=meta["grade_id"], cell_type=cell.cell_type, source=cell.source,
                checksum=meta.get("checksum"), kind=kind, points=meta.get("points"))
    return found


def graded_code(path: Path, instructor: dict, answers: set, name: str) -> list[AnswerCell]:
    """The code cells of the submitted notebook ``path`` that grading runs as the
    student's (see the module's note), labelled by the grade ids in ``answers`` or by
    their place."""
    roles, _ = assemble(read_submitted_file(path), instructor)
    cells = []
    for cell, role in roles:
        if role != "student" or cell.cell_type != "code" or not cell.source.strip():
            continue
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        label = grade_id if grade_id in answers else f"cell{len(cells) + 1}"
        cells.append(AnswerCell(name, label, cell.source))
    return cells


def _without_solutions(source: str, stub: bool) -> str:
    """``source`` without its solution markers; with ``stub``, each region replaced by the stub."""
    lines, out, inside = source.splitlines(), [], False
    for line in lines:
        text = line.strip()
        if text == _BEGIN_SOLUTION:
            inside = True
            if stub:
                indent = line[: len(line) - len(line.lstrip())]
                out.extend(indent + stub_line for stub_line in _STUB.splitlines())
        elif text == _END_SOLUTION:
            inside = False
        elif not (inside and stub):
            out.append(line)
    return "\n".join(out)


def _notebooks(folder: Path) -> list[Path]:
    """The notebooks directly in ``folder``, by name (checkpoints and subfolders left out)."""
    return sorted(p for p in folder.glob("*.ipynb") if p.is_file())


def _assignments(course: Path) -> list[str]:
    """The assignments the course directory knows of, for an error message."""
    names = {p.name for step in ("source", "release") for p in (course / step).glob("*")
             if p.is_dir()}
    names |= {p.name for p in (course / "submitted").glob("*/*") if p.is_dir()}
    return sorted(names)


def _joined(cells: list[AnswerCell]) -> tuple[str, list[tuple[int, int, str]]]:
    """One program of ``cells``, each after a comment naming it, and where each cell is.

    Returns the text and ``[(first line, last line, label)]`` (0-based lines of the text).
    Comments are not compared, so the headers cost nothing.
    """
    lines: list[str] = []
    spans = []
    for cell in cells:
        lines.append(f"# {cell.label}")
        body = cell.source.splitlines() or [""]
        spans.append((len(lines), len(lines) + len(body) - 1, cell.label))
        lines.extend(body)
        lines.append("")
    return "\n".join(lines) + "\n", spans


def _line_ranges(text: str, spans, slices) -> str:
    """The character ``slices`` (copydetect's 2 x n starts and ends) of ``text`` as cell lines.

    ``<notebook>:<grade_id>:<first>-<last>,...`` per cell, lines counted from 1 in the cell.
    """
    starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
    ranges: dict[str, list[list[int]]] = {}
    for begin, end in zip(*(list(map(int, row)) for row in slices)):
        first = bisect.bisect_right(starts, begin) - 1
        last = bisect.bisect_right(starts, max(begin, end - 1)) - 1
        for lo, hi, label in spans:
            a, b = max(first, lo), min(last, hi)
            if a > b:
                continue
            a, b = a - lo + 1, b - lo + 1
            cell = ranges.setdefault(label, [])
            if cell and a <= cell[-1][1] + 1:
                cell[-1][1] = max(b, cell[-1][1])
            else:
                cell.append([a, b])
    return " ".join(label + ":" + ",".join(f"{a}" if a == b else f"{a}-{b}"
                                           for a, b in cell[:MAX_RANGES])
                    + (",..." if len(cell) > MAX_RANGES else "")
                    for label, cell in ranges.items())


def compare_submissions(assignment: str, course: str | Path = ".", *, threshold: float = 0.5,
                        noise: int = 25, guarantee: int = 25) -> Similarity:
    """Rank every pair of ``assignment``'s submissions by the similarity of their answer code.

    Parameters
    ----------
    assignment : str
        The assignment's name, as in ``submitted/<student>/<assignment>/``.
    course : path, default "."
        The nbgrader course directory (the folder of ``nbgrader_config.py``).
    threshold : float, default 0.5
        The similarity (0 to 1) from which a pair is flagged and shown in the HTML report.
    noise, guarantee : int
        copydetect's noise and guarantee thresholds, in characters of tokenized code: a
        shared run shorter than ``noise`` is never a match, one of ``guarantee`` or more
        always is (``guarantee >= noise``; winnowing looks at fewer fingerprints the
        larger their difference).

    Returns
    -------
    Similarity
        ``pairs``, every pair of students most similar first, and copydetect's ``html``.

    Raises
    ------
    FileNotFoundError
        If ``course`` is not a directory, if the assignment has neither
        ``source/<assignment>/`` nor ``release/<assignment>/``, or if nobody submitted it.
    ValueError
        If fewer than two students submitted something readable, or a parameter is out of range.

    Examples
    --------
    From the course directory, after ``nbgrader collect ring_reduction``::

        result = compare_submissions("ring_reduction")
        for pair in result.flagged:
            print(pair.student_a, pair.student_b, f"{pair.similarity:.0%}", pair.lines_a)
    """
    from copydetect import CopyDetector

    if not 0 <= threshold <= 1:
        raise ValueError(f"threshold must lie between 0 and 1, not {threshold!r}")
    if not 1 <= noise <= guarantee:
        raise ValueError(f"need 1 <= noise <= guarantee, got noise={noise!r}, "
                         f"guarantee={guarantee!r}")
    if not assignment or assignment in (".", "..") or any(c in assignment for c in "/\\*?["):
        raise ValueError(f"{assignment!r} is not an assignment's name")
    course = Path(course)
    if not course.is_dir():
        raise FileNotFoundError(f"course directory {str(course)!r} does not exist")
    known = _assignments(course)
    source, release = course / "source" / assignment, course / "release" / assignment
    if not source.is_dir() and not release.is_dir():
        raise FileNotFoundError(
            f"assignment {assignment!r} has neither {source} nor {release}; the course "
            f"{str(course)!r} has " + (", ".join(map(repr, known)) or "no assignment"))
    folders = sorted(p for p in (course / "submitted").glob(f"*/{assignment}") if p.is_dir())
    if not folders:
        raise FileNotFoundError(
            f"nobody submitted assignment {assignment!r}: no folder "
            f"{course / 'submitted' / '<student>' / assignment} (run nbgrader collect "
            f"{assignment} first)")

    # the assignment's notebooks, with the cells grading puts back and the answer cells' ids
    assigned = {}
    for path in _notebooks(source if source.is_dir() else release):
        notebook = nbformat.read(path, as_version=4)
        assigned[path.name] = (instructor_cells_of(notebook),
                               {c.grade_id for c in answer_cells(notebook)})
    skipped: dict[str, str] = {}
    students: dict[str, list[AnswerCell]] = {}
    for folder in folders:
        cells: list[AnswerCell] = []
        for name, (instructor, answers) in assigned.items():
            if os.path.lexists(folder / name):
                cells.extend(graded_code(folder / name, instructor, answers, Path(name).stem))
        if sum(len(cell.source.encode("utf-8", "replace")) for cell in cells) > MAX_CODE_BYTES:
            skipped[str(folder.relative_to(course))] = (
                f"more than {MAX_CODE_BYTES >> 10} KiB of code: not compared, read it yourself")
        elif cells:
            students[folder.parent.name] = cells
        else:
            skipped[str(folder.relative_to(course))] = "no code of the student's in the " \
                "assignment's notebooks"
    if len(students) < 2:
        raise ValueError(f"assignment {assignment!r} has {len(students)} submission(s) with "
                         f"answer cells ({', '.join(students) or 'none'}): nothing to compare")

    # the template: the release's code of the student's side, or else the source's with
    # its solutions cut out; and the reference solution (the source's side of the student)
    boilerplate: dict[str, list[AnswerCell]] = {}
    for kind, folder in (("release", release), ("source", source)):
        for path in _notebooks(folder) if folder.is_dir() else ():
            instructor, answers = assigned.get(path.name, ({}, set()))
            boilerplate[f"{kind}/{assignment}/{path.name}"] = graded_code(
                path, instructor, answers, path.stem)
            if kind == "source" and not release.is_dir():
                boilerplate[f"source/{assignment}/{path.name} (template)"] = answer_cells(
                    path, solutions="cut")
    extra = sorted(p for p in source.glob("*.py") if p.is_file()) if source.is_dir() else []

    with tempfile.TemporaryDirectory(prefix="similarity-") as tmp:
        tmp = Path(tmp)
        texts, files = {}, {}
        for student, cells in students.items():
            # the student's id is a folder name; escaped so that the report shows it as text
            path = tmp / "submissions" / html.escape(student) / f"{assignment}.py"
            path.parent.mkdir(parents=True)
            texts[student] = _joined(cells)
            path.write_text(texts[student][0], encoding="utf-8")
            files[str(path)] = student
        plate = tmp / "boilerplate"
        plate.mkdir()
        for i, cells in enumerate(boilerplate.values()):
            (plate / f"notebook{i}.py").write_text(_joined(cells)[0], encoding="utf-8")
        for i, path in enumerate(extra):
            (plate / f"source{i}.py").write_bytes(path.read_bytes())

        detector = CopyDetector(
            test_dirs=[str(tmp / "submissions")], boilerplate_dirs=[str(plate)],
            extensions=["py"], noise_t=noise, guarantee_t=guarantee, display_t=threshold,
            autoopen=False, silent=True, force_language="python",
            out_file=str(tmp / "report.html"))
        detector.run()
        answers = [cell for path in (_notebooks(source) if source.is_dir() else ())
                   for cell in answer_cells(path, solutions="unmark")]
        pairs = _pairs(detector, files, texts, threshold,
                       _tokens(tmp / "answers.py", answers, noise))
        # copydetect's report shows the pairs above its own threshold: every flagged one
        detector.conf.display_t = min([threshold] + [p.similarity - 1e-9 for p in pairs
                                                     if p.flagged])
        with warnings.catch_warnings():        # copydetect 0.5 reads its template with
            warnings.simplefilter("ignore", DeprecationWarning)    # importlib's open_text
            report = detector.generate_html_report(output_mode="return") or ""
        report = report.replace(str(tmp / "submissions") + "/", "").replace(str(tmp) + "/", "")

    return Similarity(assignment=assignment, students=sorted(students), pairs=pairs,
                      threshold=threshold, html=report,
                      boilerplate=list(boilerplate) + [
                          f"source/{assignment}/{p.name}" for p in extra],
                      skipped=skipped)


def _tokens(path: Path, cells: list[AnswerCell], noise: int) -> int:
    """How many characters of tokenized code ``cells`` hold, as copydetect counts them (0
    for none)."""
    from copydetect import CodeFingerprint

    if not cells:
        return 0
    path.write_text(_joined(cells)[0], encoding="utf-8")
    return len(CodeFingerprint(str(path), k=noise, win_size=1, language="python").filtered_code)


def _pairs(detector, files: dict, texts: dict, threshold: float,
           answer_tokens: int) -> list[SimilarPair]:
    """Every pair of students from copydetect's matrices, most similar first; flagged at
    ``threshold`` of similarity or of the ``answer_tokens`` of a reference answer shared."""
    row = {f: i for i, f in enumerate(detector.test_files)}
    column = {f: j for j, f in enumerate(detector.ref_files)}      # another order
    ordered = sorted(files, key=files.get)
    pairs = []
    for n, file_a in enumerate(ordered):
        for file_b in ordered[n + 1:]:
            i, j = row[file_a], column[file_b]
            sim_a, sim_b = (float(x) for x in detector.similarity_matrix[i, j])
            sim_a, sim_b = max(sim_a, 0.0), max(sim_b, 0.0)       # -1: not compared
            tokens = max(int(detector.token_overlap_matrix[i, j]), 0)
            slices = detector.slice_matrix.get((file_a, file_b))
            if slices is None and (file_b, file_a) in detector.slice_matrix:
                slices = detector.slice_matrix[(file_b, file_a)][::-1]
            a, b = files[file_a], files[file_b]
            lines_a = _line_ranges(*texts[a], slices[0]) if slices is not None else ""
            lines_b = _line_ranges(*texts[b], slices[1]) if slices is not None else ""
            similarity = max(sim_a, sim_b)
            shared_answer = answer_tokens > 0 and tokens >= threshold * answer_tokens
            pairs.append(SimilarPair(a, b, similarity, sim_a, sim_b, tokens, lines_a, lines_b,
                                     flagged=tokens > 0 and (similarity >= threshold
                                                             or shared_answer)))
    pairs.sort(key=lambda p: (-p.similarity, -p.matched_tokens, p.student_a, p.student_b))
    return pairs


CSV_COLUMNS = ("student_a", "student_b", "similarity", "similarity_a", "similarity_b",
               "matched_tokens", "lines_a", "lines_b", "flagged")


def ranking_text(result: Similarity, top: int = 20) -> str:
    """The ``top`` most similar pairs of ``result`` as a plain-text table."""
    lines = [f"{result.assignment}: {len(result.students)} submissions, "
             f"{len(result.pairs)} pairs, {len(result.flagged)} at or above "
             f"{result.threshold:.0%} (flagged for review, not a grade)"]
    rows = [("student a", "student b", "similarity", "matching lines (a | b)")]
    rows += [(p.student_a, p.student_b,
              f"{p.similarity:.0%}" + (" *" if p.flagged else ""),
              f"{p.lines_a} | {p.lines_b}" if p.matched_tokens else "-")
             for p in result.pairs[:top]]
    widths = [max(len(r[i]) for r in rows) for i in range(3)]
    lines += ["  ".join([*(c.ljust(w) for c, w in zip(r[:3], widths)), r[3]]).rstrip()
              for r in rows]
    lines.append("boilerplate: " + (", ".join(result.boilerplate) or "none"))
    lines += [f"not read: {path} ({why})" for path, why in result.skipped.items()]
    return terminal_text("\n".join(lines))        # student ids are folder names


def _check_writable(out: Path) -> None:
    """A clear error if the report ``out`` cannot be written where it is asked for."""
    if not out.parent.is_dir():
        raise FileNotFoundError(f"cannot write {str(out)!r}: folder {str(out.parent)!r} "
                                "does not exist")
    if out.suffix == ".csv":
        raise ValueError(f"the report {str(out)!r} would be overwritten by its CSV; "
                         "name it .html")


def write_report(result: Similarity, out: str | Path, top: int = 20) -> tuple[Path, Path]:
    """Write copydetect's HTML report to ``out`` and the ``top`` pairs to ``out`` with ``.csv``.

    Returns the paths of the HTML report and of the CSV.
    """
    out = Path(out)
    _check_writable(out)
    table = out.with_suffix(".csv")
    out.write_text(result.html, encoding="utf-8")
    with open(table, "w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh)
        writer.writerow(CSV_COLUMNS)
        for p in result.pairs[:top]:
            writer.writerow(map(spreadsheet_cell, [
                p.student_a, p.student_b, f"{p.similarity:.3f}", f"{p.similarity_a:.3f}",
                f"{p.similarity_b:.3f}", p.matched_tokens, p.lines_a, p.lines_b,
                "yes" if p.flagged else "no"]))
    return out, table


def main(argv: list[str] | None = None) -> int:
    """``python -m collective_lib.autograde.similarity <assignment> [--course DIR] [--out FILE] [--top N]``."""
    parser = argparse.ArgumentParser(
        prog="python -m collective_lib.autograde.similarity",
        description="Rank the pairs of an assignment's submissions by the similarity of their "
                    "answer code (copydetect), leaving out the released template and the "
                    "reference solution. It flags pairs for review; it never grades.")
    parser.add_argument("assignment")
    parser.add_argument("--course", default=".",
                        help="the nbgrader course directory (default: the current one)")
    parser.add_argument("--out", help="the HTML report (default: similarity-<assignment>.html); "
                                      "the CSV goes beside it")
    parser.add_argument("--top", type=int, default=20,
                        help="how many pairs the CSV and the table list (default 20)")
    parser.add_argument("--threshold", type=float, default=0.5,
                        help="the similarity that flags a pair, 0 to 1 (default 0.5)")
    args = parser.parse_args(argv)
    if args.top < 1:
        parser.error(f"--top must be at least 1, not {args.top}")
    out = Path(args.out or f"similarity-{args.assignment}.html")
    try:
        _check_writable(out)                      # before the comparison, not after it
        result = compare_submissions(args.assignment, args.course, threshold=args.threshold)
        html_path, csv_path = write_report(result, out, args.top)
    except (FileNotFoundError, ValueError) as err:
        sys.stderr.write(terminal_text(f"error: {err}\n"))
        return 2
    sys.stdout.write(ranking_text(result, args.top) + "\n"
                     f"report: {html_path}\nranking: {csv_path}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
