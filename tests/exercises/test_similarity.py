"""collective_lib.autograde.similarity: copied answers of one assignment ranked for review.

A small course in a temporary directory holds the assignment ``ring_reduction``: its
instructor's notebook, the release nbgrader makes of it (nbgrader's own preprocessors,
without a kernel) and submissions made from real answers: the notebook's solution (the
reference), the hand-written programs of ``tests/all_to_all_submissions.py`` and one
student's own answer with a copy of it.
"""
from __future__ import annotations

import csv
import random
import inspect
import io
import shutil
import subprocess
import sys
import textwrap

import nbformat
import pytest
from copydetect import CodeFingerprint, compare_files

import nbgrader_harness as h
from all_to_all_submissions import all_at_once, direct
from collective_lib.autograde import similarity
from collective_lib.autograde.similarity import (MAX_CODE_BYTES, answer_cells, compare_submissions,
                                                 ranking_text, write_report)
from exercise_references import reference_file

ASSIGNMENT = "ring_reduction"
PROGRAM, TABLES = "program_solution", "tables_solution"
HEADER = '''from collective_lib import sendrecv
from collective_lib.algorithms.reduce import add


def my_all_to_all_red_ring(me, p, data, op=add):
'''

# One student's own answer, with helpers of her own (neither the template nor the reference).
ADA_TABLES = '''
def entry(sources, dest):
    return " + ".join(f"x{s}[{dest}]" for s in sources)


def partial_sums(p, step):
    # node me sends, in step `step`, the messages of me, ..., me + step - 1 for node me + step
    return [entry([(me + k) % p for k in range(step)], (me + step) % p) for me in range(p)]


def final_sums(p):
    return [entry([(me + k) % p for k in range(p)], me) for me in range(p)]


sends_4 = {step: partial_sums(4, step) for step in range(1, 4)}
results_4 = final_sums(4)


def ring_pattern(p):
    sends = {}
    for step in range(1, p):
        sends[step] = [[((me + k) % p, (me + step) % p) for k in range(step)] for me in range(p)]
    results = [[((me + k) % p, me) for k in range(p)] for me in range(p)]
    return sends, results


sends_8, results_8 = ring_pattern(8)
'''
ADA_PROGRAM = HEADER + '''    def merge(value, partial):
        # nothing has arrived before the first step
        if partial is None:
            return value
        return op(value, partial)

    def neighbours():
        return (me + p - 1) % p, (me + 1) % p

    to_left, from_right = neighbours()
    carried = None
    step = 1
    while step < p:
        outgoing = merge(data[(me + step) % p], carried)
        carried = yield sendrecv(to_left, outgoing, from_right)
        step += 1
    return merge(data[me], carried)
'''

# Ada's answer copied: every name changed, the helpers in another order, other comments.
BOB_TABLES = '''
def last_row(n):
    # what each node ends with
    return [term_list([(node + j) % n for j in range(n)], node) for node in range(n)]


def term_list(origins, target):
    return " + ".join(f"x{o}[{target}]" for o in origins)


def row_of(n, i):
    return [term_list([(node + j) % n for j in range(i)], (node + i) % n) for node in range(n)]


sends_4 = {i: row_of(4, i) for i in range(1, 4)}
results_4 = last_row(4)


def ring_pattern(n):
    table = {}
    for i in range(1, n):
        table[i] = [[((node + j) % n, (node + i) % n) for j in range(i)] for node in range(n)]
    final = [[((node + j) % n, node) for j in range(n)] for node in range(n)]
    return table, final


sends_8, results_8 = ring_pattern(8)
'''
BOB_PROGRAM = HEADER + '''    def sides():
        return (me + p - 1) % p, (me + 1) % p

    def add_up(x, acc):
        if acc is None:                       # first step: nothing yet
            return x
        return op(x, acc)

    west, east = sides()
    got = None
    k = 1
    while k < p:
        msg = add_up(data[(me + k) % p], got)
        got = yield sendrecv(west, msg, east)
        k += 1
    return add_up(data[me], got)
'''

# Two honest answers that differ from Ada's and from each other.
CY_TABLES = '''
sends_4 = {}
for i in range(1, 4):
    row = []
    for node in range(4):
        terms = []
        for j in range(node, node + i):
            terms.append("x%d[%d]" % (j % 4, (node + i) % 4))
        row.append(" + ".join(terms))
    sends_4[i] = row
results_4 = [" + ".join("x%d[%d]" % (j % 4, node) for j in range(node, node + 4))
             for node in range(4)]


def ring_pattern(p):
    steps = {i: [] for i in range(1, p)}
    for node in range(p):
        for i in range(1, p):
            steps[i].append({(j % p, (node + i) % p) for j in range(node, node + i)})
    return steps, [{(j, node) for j in range(p)} for node in range(p)]


sends_8, results_8 = ring_pattern(8)
'''
DEE_TABLES = '''
import itertools

sends_4 = {1: ["x0[1]", "x1[2]", "x2[3]", "x3[0]"],
           2: ["x0[2] + x1[2]", "x1[3] + x2[3]", "x2[0] + x3[0]", "x3[1] + x0[1]"],
           3: ["x0[3] + x1[3] + x2[3]", "x1[0] + x2[0] + x3[0]", "x2[1] + x3[1] + x0[1]",
               "x3[2] + x0[2] + x1[2]"]}
results_4 = ["x0[0] + x1[0] + x2[0] + x3[0]", "x1[1] + x2[1] + x3[1] + x0[1]",
             "x2[2] + x3[2] + x0[2] + x1[2]", "x3[3] + x0[3] + x1[3] + x2[3]"]

sends_8 = {}
for step, sender in itertools.product(range(1, 8), range(8)):
    target = (sender + step) % 8
    sends_8.setdefault(step, []).append([((sender + d) % 8, target) for d in range(step)])
results_8 = [[(s, t) for s in range(8)] for t in range(8)]
'''


def _body(program) -> str:
    """The body of a program of all_to_all_submissions, as a student writes it in the cell."""
    lines = inspect.getsource(program).splitlines()
    start = next(i for i, line in enumerate(lines) if line.rstrip().endswith("):")) + 1
    if lines[start].strip().startswith('"""'):                   # its docstring
        start += 1
    return HEADER + "\n".join(lines[start:]) + "\n"


def _answered(release, answers: dict) -> nbformat.NotebookNode:
    """The release as a student hands it in: ``answers`` is ``{grade_id: the cell's code}``."""
    nb = nbformat.read(release, as_version=4)
    for grade_id, code in answers.items():
        h.find_cell(nb, grade_id).source = textwrap.dedent(code).strip("\n")
    return nb


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course directory with ring_reduction's source, release and eight submissions."""
    from nbgrader.preprocessors import ClearHiddenTests, ClearMarkScheme, ClearSolutions

    root = tmp_path_factory.mktemp("course")
    source = root / "source" / ASSIGNMENT
    source.mkdir(parents=True)
    notebook = h.source_notebook(h.EXERCISES_DIR, ASSIGNMENT, f"{ASSIGNMENT}.ipynb")
    shutil.copy(notebook, source)
    shutil.copy(reference_file(ASSIGNMENT), source)
    released = nbformat.read(notebook, as_version=4)
    for step in (ClearSolutions, ClearHiddenTests, ClearMarkScheme):
        released, _ = step().preprocess(released, {})
    release = root / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    release.parent.mkdir(parents=True)
    nbformat.write(released, release)

    reference = h.answered_release(release, notebook)          # the notebook's own solution
    submissions = {
        "ada": _answered(release, {TABLES: ADA_TABLES, PROGRAM: ADA_PROGRAM}),
        "bob": _answered(release, {TABLES: BOB_TABLES, PROGRAM: BOB_PROGRAM}),
        "cy": _answered(release, {TABLES: CY_TABLES, PROGRAM: _body(direct)}),
        "dee": _answered(release, {TABLES: DEE_TABLES, PROGRAM: _body(all_at_once)}),
        "eve": nbformat.read(release, as_version=4),         # handed in as released
        "fay": nbformat.read(release, as_version=4),
        "gus": reference,                                    # the textbook's algorithm,
        "hal": reference,                                    # as the instructor wrote it
    }
    for student, nb in submissions.items():
        folder = root / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{ASSIGNMENT}.ipynb")
    return root


@pytest.fixture(scope="module")
def result(course):
    return compare_submissions(ASSIGNMENT, course)


def _pair(result, a, b):
    return next(p for p in result.pairs if {p.student_a, p.student_b} == {a, b})


def test_the_copy_is_ranked_first_with_the_lines_it_shares(result):
    assert result.students == ["ada", "bob", "cy", "dee", "eve", "fay", "gus", "hal"]
    assert len(result.pairs) == 8 * 7 // 2
    top = result.pairs[0]
    assert (top.student_a, top.student_b) == ("ada", "bob")
    assert top.flagged and top.similarity >= 0.8
    assert min(top.similarity_a, top.similarity_b) >= 0.7
    # the matching lines are named by cell, in both students' answers
    # all of both answers matches but the released import lines, which are the template's
    # (the first match, 25 characters of tokenized code, reaches back over the def line)
    assert top.lines_a == f"{ASSIGNMENT}:{TABLES}:1-23 {ASSIGNMENT}:{PROGRAM}:2-22"
    assert top.lines_b == f"{ASSIGNMENT}:{TABLES}:1-23 {ASSIGNMENT}:{PROGRAM}:2-21"
    # the copy stands far above every other pair
    assert result.pairs[1].similarity < top.similarity - 0.3


def test_honest_different_answers_are_not_flagged(result):
    assert [(p.student_a, p.student_b) for p in result.flagged] == [("ada", "bob")]
    for a, b in [("cy", "dee"), ("ada", "cy"), ("ada", "dee"), ("bob", "cy"), ("bob", "dee")]:
        pair = _pair(result, a, b)
        assert not pair.flagged and pair.similarity < result.threshold, pair


def test_the_template_alone_makes_no_two_submissions_similar(result):
    blank = _pair(result, "eve", "fay")
    assert (blank.similarity, blank.matched_tokens, blank.lines_a) == (0.0, 0, "")
    for other in ("ada", "cy", "gus"):
        assert _pair(result, "eve", other).similarity == 0.0
    assert "release/ring_reduction/ring_reduction.ipynb" in result.boilerplate


def test_without_the_boilerplate_the_blank_submissions_would_be_alike(course):
    # the control of the test above: the starter code is long enough to match by itself
    released = course / "submitted" / "eve" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    text, _ = similarity._joined(answer_cells(released))
    prints = [CodeFingerprint("eve.py", 25, 6, fp=io.StringIO(text)) for _ in range(2)]
    overlap, (sim_a, sim_b), _ = compare_files(*prints)
    assert overlap > 0 and sim_a == sim_b == 1.0


def test_the_reference_solution_is_boilerplate(result):
    # two students who both wrote the instructor's program are not flagged by it
    pair = _pair(result, "gus", "hal")
    assert (pair.similarity, pair.matched_tokens) == (0.0, 0)
    assert {"source/ring_reduction/ring_reduction.ipynb",
            "source/ring_reduction/_reference.py"} <= set(result.boilerplate)


def test_the_html_report_shows_the_copy_side_by_side(result):
    page = result.html
    assert page.count("Test file:") == 1                     # the flagged pair only
    assert "ada/ring_reduction.py" in page and "bob/ring_reduction.py" in page
    assert "highlight-red" in page and "highlight-green" in page
    assert "similarity-" not in page                         # no temporary paths
    assert "carried = yield sendrecv(to_left, outgoing, from_right)" in page


def test_the_release_is_the_source_with_its_solutions_cut(course):
    released = course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    source = course / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert answer_cells(source, solutions="cut") == answer_cells(released)
    cells = answer_cells(source, solutions="unmark")
    assert [c.grade_id for c in cells] == [TABLES, PROGRAM]
    assert "### BEGIN SOLUTION" not in cells[1].source
    assert "received = yield sendrecv(left, partial, right)" in cells[1].source


def test_the_cli_writes_the_report_and_the_ranking(course, tmp_path):
    done = subprocess.run([sys.executable, "-m", "collective_lib.autograde.similarity",
                           ASSIGNMENT, "--course", str(course), "--top", "3"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = tmp_path / "similarity-ring_reduction.html"      # in the folder it runs from
    assert report.read_text().count("Test file:") == 1
    with open(report.with_suffix(".csv"), newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == list(similarity.CSV_COLUMNS)
    assert [(r["student_a"], r["student_b"], r["flagged"]) for r in rows] == [
        ("ada", "bob", "yes"), ("cy", "dee", "no"), ("ada", "cy", "no")]
    assert float(rows[0]["similarity"]) >= 0.8 and float(rows[2]["similarity"]) == 0
    assert rows[0]["lines_b"].endswith("ring_reduction:program_solution:2-21")
    assert done.stdout.startswith("ring_reduction: 8 submissions, 28 pairs, 1 at or above 50%")
    assert "report: similarity-ring_reduction.html" in done.stdout


@pytest.mark.parametrize("args, message", [
    (["nope"], "assignment 'nope' has neither"),
    (["ring_reduction", "--course", "/no/such/course"],
     "course directory '/no/such/course' does not exist"),
    (["ring_reduction", "--top", "0"], "--top must be at least 1, not 0"),
    (["ring_reduction", "--out", "/no/such/folder/r.html"],
     "cannot write '/no/such/folder/r.html': folder '/no/such/folder' does not exist"),
])
def test_bad_values_are_named(course, args, message, capsys):
    args = args if "--course" in args else [*args, "--course", str(course)]
    try:
        code = similarity.main(args)
    except SystemExit as stop:                     # argparse's own errors
        code = stop.code
    assert code == 2
    captured = capsys.readouterr()
    assert message in captured.err
    if "nope" in args:
        assert "'ring_reduction'" in captured.err          # the assignments there are


def test_without_a_release_the_template_is_cut_from_the_source(course, tmp_path):
    shutil.copytree(course, tmp_path / "course", ignore=shutil.ignore_patterns("release"))
    (tmp_path / "course" / "submitted" / "ivy" / ASSIGNMENT).mkdir(parents=True)  # empty
    result = compare_submissions(ASSIGNMENT, tmp_path / "course")
    assert "source/ring_reduction/ring_reduction.ipynb (template)" in result.boilerplate
    assert _pair(result, "eve", "fay").matched_tokens == 0
    assert [(p.student_a, p.student_b) for p in result.flagged] == [("ada", "bob")]
    assert result.skipped == {"submitted/ivy/ring_reduction":
                              "no code of the student's in the assignment's notebooks"}


def test_a_copy_is_found_wherever_grading_runs_it(course, tmp_path):
    """The code is compared as grading runs it: a copy moved to a cell of its own (the
    answer cell left as released), or in answer cells whose nbgrader metadata was removed
    or says they are no answer, is as similar as the copy in place. A notebook the
    assignment does not have is not graded, so not compared, and its name (a spreadsheet
    formula) labels nothing."""
    root = shutil.copytree(course, tmp_path / "course")
    release = root / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    copied = {TABLES: ADA_TABLES, PROGRAM: ADA_PROGRAM}
    moved = nbformat.read(release, as_version=4)
    below = next(i for i, c in enumerate(moved.cells)
                 if c.metadata.get("nbgrader", {}).get("grade_id") == PROGRAM) + 1
    moved.cells.insert(below, nbformat.v4.new_code_cell(
        "\n\n".join(textwrap.dedent(code).strip("\n") for code in copied.values())))
    unmarked, denied = _answered(release, copied), _answered(release, copied)
    for grade_id in copied:
        del h.find_cell(unmarked, grade_id).metadata["nbgrader"]
        h.find_cell(denied, grade_id).metadata["nbgrader"]["solution"] = False
    for student, nb in {"ivy": moved, "jo": unmarked, "kim": denied}.items():
        folder = root / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(nb, folder / f"{ASSIGNMENT}.ipynb")
    folder = root / "submitted" / "lee" / ASSIGNMENT
    folder.mkdir(parents=True)
    shutil.copy(release, folder / f"{ASSIGNMENT}.ipynb")
    nbformat.write(_answered(release, copied), folder / '=HYPERLINK("x").ipynb')
    # a student id is a folder name: in the CSV text, not a formula; printed, no escapes
    mallory = '=HYPERLINK("x")\x1b[2J'
    folder = root / "submitted" / mallory / ASSIGNMENT
    folder.mkdir(parents=True)
    nbformat.write(_answered(release, copied), folder / f"{ASSIGNMENT}.ipynb")

    result = compare_submissions(ASSIGNMENT, root)
    for student in ("ivy", "jo", "kim"):
        assert _pair(result, "ada", student).flagged, student
    assert not _pair(result, "ada", "lee").flagged
    assert _pair(result, "eve", "lee").matched_tokens == 0
    assert not any("=" in p.lines_a + p.lines_b for p in result.pairs)
    assert _pair(result, "ada", "ivy").lines_b.startswith(f"{ASSIGNMENT}:cell")
    assert _pair(result, "ada", mallory).flagged
    assert "\x1b" not in ranking_text(result, top=100)
    _, table = write_report(result, tmp_path / "report.html", top=100)
    ids = {row["student_a"] for row in csv.DictReader(table.open())} | {
        row["student_b"] for row in csv.DictReader(table.open())}
    assert """'=HYPERLINK("x")\\x1b[2J""" in ids and not any(i.startswith("=") for i in ids)


_FILLERS = ["    total = {a}\n    for value in values:\n        total += value * {b}\n    return total",
            "    return [value % {a} for value in values if value > {b}]",
            "    while values and values[-1] > {a}:\n        values = values[:-1]\n    return len(values)",
            "    seen = {{}}\n    for i, value in enumerate(values):\n        seen[value] = i + {a}\n"
            "    return max(seen.values(), default={b})",
            "    try:\n        return values[{a}] // {b}\n    except (IndexError, ZeroDivisionError):\n"
            "        return None",
            "    if len(values) < {a}:\n        return sorted(values)\n    return values[::{b}]"]


def _padded(release, answers: dict, helpers: int, fillers: list) -> nbformat.NotebookNode:
    """``answers`` in place and a cell of ``helpers`` dead functions of the student's own,
    with bodies drawn from ``fillers`` (two students drawing from different ones share none)."""
    rng = random.Random(len(fillers))
    nb = _answered(release, answers)
    nb.cells.append(nbformat.v4.new_code_cell("\n\n".join(
        f"def helper_{i}(values):\n" + rng.choice(fillers).format(a=rng.randrange(2, 99),
                                                                   b=rng.randrange(2, 99))
        for i in range(helpers))))
    return nb


def test_a_copy_padded_with_code_of_ones_own_is_still_flagged(course, tmp_path):
    """Dead code around a copy halves its similarity (about 40 % with 40 helpers each, below
    the threshold); what the two share is still a whole answer, and the pair is flagged, in
    the table and in copydetect's report."""
    root = shutil.copytree(course, tmp_path / "course")
    release = root / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    for student, answers, fillers in (
            ("pam", {TABLES: ADA_TABLES, PROGRAM: ADA_PROGRAM}, _FILLERS[:3]),
            ("quin", {TABLES: BOB_TABLES, PROGRAM: BOB_PROGRAM}, _FILLERS[3:])):
        folder = root / "submitted" / student / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(_padded(release, answers, 40, fillers), folder / f"{ASSIGNMENT}.ipynb")
    result = compare_submissions(ASSIGNMENT, root)
    pair = _pair(result, "pam", "quin")
    assert pair.similarity < result.threshold and pair.flagged, pair
    assert "pam" in result.html and "quin" in result.html
    honest = [(a, b) for a, b in [("cy", "dee"), ("ada", "cy"), ("bob", "dee"), ("cy", "pam")]]
    assert not any(_pair(result, a, b).flagged for a, b in honest)


def test_a_program_too_long_to_compare_is_listed_not_read(course, tmp_path):
    root = shutil.copytree(course, tmp_path / "course")
    release = root / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    huge = _answered(release, {TABLES: ADA_TABLES, PROGRAM: ADA_PROGRAM})
    huge.cells.append(nbformat.v4.new_code_cell("x = 1\n" * (MAX_CODE_BYTES // 6 + 1)))
    folder = root / "submitted" / "rex" / ASSIGNMENT
    folder.mkdir(parents=True)
    nbformat.write(huge, folder / f"{ASSIGNMENT}.ipynb")
    result = compare_submissions(ASSIGNMENT, root)
    assert "rex" not in result.students
    assert result.skipped[f"submitted/rex/{ASSIGNMENT}"].startswith("more than 512 KiB of code")


def test_an_assignment_nobody_submitted_is_named(course, tmp_path):
    (course / "source" / "empty").mkdir(exist_ok=True)
    with pytest.raises(FileNotFoundError, match="nobody submitted assignment 'empty'"):
        compare_submissions("empty", course)
    with pytest.raises(ValueError, match=r"'\.\./ring_reduction' is not an assignment's name"):
        compare_submissions("../ring_reduction", course)
    with pytest.raises(ValueError, match="threshold must lie between 0 and 1, not 2"):
        compare_submissions(ASSIGNMENT, course, threshold=2)
