"""Hostile submissions, graded through the documented path, earn nothing and harm no one.

Each payload is built from the released notebook of ``gray_codes`` (the fastest
assignment to grade) the way a hostile student would write it, and all are
autograded in one ``nbgrader autograde`` run of a scratch copy of the course,
beside an honest submission and a victim whose files the others attack. The
assertions: the payload's score (zero where it solved nothing, or flagged for
review), the honest and victim submissions keep full marks, ``source/`` and
the other submissions are unchanged, no process of the sandbox outlives
grading, and grading again gives the same scores. (A cell a student marks as a
locked instructor cell is refused by nbgrader's own metadata check before any
code runs; were it let through, the gradebook would still not know it, and it
would run as the student's code, see collective_lib.autograde.verdict.assemble.)
"""

import hashlib
import subprocess
import textwrap

import nbformat
import pytest

import nbgrader_harness as h
from messages import flat

ASSIGNMENT = "gray_codes"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"

# Words that appear only in the hidden tests of gray_codes: no feedback may show them.
HIDDEN_WORDS = ("_ref_gray", "Compare bit k of G(i)")

CORRECT = '''
def gray_of(i):
    return i ^ (i >> 1)


def gray_rank(g):
    i = 0
    while g:
        i ^= g
        g >>= 1
    return i
'''


def _released(course):
    return nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)


def _with_cell(nb, grade_id, source):
    """A copy of ``nb`` whose cell ``grade_id`` holds ``source`` (a student's edit)."""
    nb = nbformat.from_dict(nb)
    h.find_cell(nb, grade_id).source = textwrap.dedent(source).strip("\n")
    return nb


def _payloads(course, source):
    released = _released(course)
    solved = nbformat.read(source, as_version=4)
    victim_file = course / "submitted" / "victim" / ASSIGNMENT / NOTEBOOK
    secret_test = course / "source" / ASSIGNMENT / NOTEBOOK
    gradebook = course / "gradebook.db"
    late_marker = course / "late.txt"
    return {
        "honest": solved,
        "victim": solved,
        # an input transformer rewrites every later cell, hidden tests included, to `pass`
        "transformer": _with_cell(released, "gray_solution", '''
            get_ipython().input_transformers_cleanup.append(lambda lines: ["pass\\n"])
        '''),
        # the grading library replaced, and answers that only fit the visible table
        "patcher": _with_cell(released, "gray_solution", '''
            import collective_lib.grading as grading
            grading.guarded_call = lambda func, *args, **kwargs: func(*args)
            grading.forbid_library_calls = lambda *args, **kwargs: None
            def gray_of(i):
                return [0, 1, 3, 2, 6, 7, 5, 4][i % 8]
            def gray_rank(g):
                return 6
        '''),
        # values that claim to equal anything
        "always_equal": _with_cell(released, "gray_solution", '''
            class Anything(int):
                def __eq__(self, other):
                    return True
                def __format__(self, spec):
                    return "000"
            def gray_of(i):
                return Anything(0)
            def gray_rank(g):
                return Anything(0)
        '''),
        # reads the hidden tests and sends them back in an error message
        "reader": _with_cell(released, "gray_solution", f'''
            def gray_of(i):
                raise RuntimeError(open({str(secret_test)!r}).read()[-3000:])
            def gray_rank(g):
                raise RuntimeError(open({str(gradebook)!r}, "rb").read(200))
        '''),
        # right answers, plus an attack on the course and the other students
        "vandal": _with_cell(solved, "gray_solution", CORRECT + textwrap.dedent(f'''
            import os, subprocess, signal
            for path, data in (({str(victim_file)!r}, "{{}}"), ({str(secret_test)!r}, "x"),
                               ({str(gradebook)!r}, "x")):
                try:
                    with open(path, "w") as handle:
                        handle.write(data)
                except OSError:
                    pass
            for target in (os.getppid(), 1):
                try:
                    os.kill(target, signal.SIGKILL)
                except OSError:
                    pass
            try:
                subprocess.Popen(["sh", "-c", "sleep 20; echo late > {late_marker}"],
                                 start_new_session=True)
            except OSError:
                pass
        ''')),
        # eats memory in one function: that part scores zero, the rest is graded
        "hog": _with_cell(solved, "gray_solution", CORRECT + textwrap.dedent('''
            def gray_rank(g):
                hoard = bytearray(4 * 2**30)
                return 0
        ''')),
        # never finishes running its cells
        "endless": _with_cell(solved, "index_solution", '''
            while True:
                pass
        '''),
    }


def _digests(folder):
    return {str(p.relative_to(folder)): hashlib.md5(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _processes_mentioning(text):
    out = subprocess.run(["ps", "-eo", "args="], capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if text in line]


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    course = h.released_copy(tmp_path_factory.mktemp("adversarial") / "course", ASSIGNMENT)
    source = h.source_notebook(course, ASSIGNMENT, NOTEBOOK)
    before = _digests(course / "source")
    results = h.autograde_many(course, ASSIGNMENT, _payloads(course, source),
                               spinning=["endless"])
    return course, results, before


def test_honest_and_victim_keep_full_marks(attacked):
    _, results, _ = attacked
    for student in ("honest", "victim"):
        h.assert_full_marks(results[student])


@pytest.mark.parametrize("student", ["transformer", "patcher", "always_equal", "reader"])
def test_tricks_earn_nothing(attacked, student):
    _, results, _ = attacked
    assert results[student].total == 0, (student, results[student].scores,
                                          results[student].messages())


def test_values_that_claim_equality_are_graded_as_the_plain_values_they_hold(attacked):
    # an int subclass crosses as its int (until the twelfth round it was refused, "cannot be
    # graded"): its __eq__ never runs in the checker, so the comparison fails, naming the
    # plain values
    _, results, _ = attacked
    text = flat(results["always_equal"].messages("gray_tests"))
    assert ("the 3-bit codes should be ['000', '001', '011', '010', '110', '111', '101', "
            "'100'], got ['000', '000', '000', '000', '000', '000', '000', '000']") in text, text


def test_the_hidden_tests_and_gradebook_stay_unread(attacked):
    _, results, _ = attacked
    text = results["reader"].messages("gray_tests")
    assert "No such file" in text or "Errno" in text, text
    for word in HIDDEN_WORDS:
        assert word not in text
    for student, result in results.items():
        for word in HIDDEN_WORDS:
            assert word not in result.messages(), (student, word)


def test_an_attack_on_the_course_changes_nothing(attacked):
    course, results, before = attacked
    assert _digests(course / "source") == before
    h.assert_full_marks(results["victim"])
    victim = nbformat.read(course / "submitted" / "victim" / ASSIGNMENT / NOTEBOOK,
                           as_version=4)
    assert victim.cells, "the victim's submission was overwritten"
    h.assert_full_marks(results["vandal"])          # its own answers are right


def test_no_process_outlives_grading(attacked):
    course, _, _ = attacked
    assert _processes_mentioning(str(course / "late.txt")) == []      # the vandal's daemon
    assert not (course / "late.txt").exists()


def test_a_memory_hog_loses_only_that_part(attacked):
    _, results, _ = attacked
    hog = results["hog"]
    assert hog.scores["gray_tests"] == 0
    assert "MemoryError" in hog.messages("gray_tests")
    assert hog.scores["transitions_tests"] == hog.max_scores["transitions_tests"]


def test_cells_that_never_finish_score_zero_with_a_reason(attacked):
    _, results, _ = attacked
    endless = results["endless"]
    assert endless.total == 0
    assert "did not finish running" in endless.messages()


def test_grading_again_gives_the_same_scores(attacked):
    course, results, _ = attacked
    h.run_nbgrader(course, "autograde", ASSIGNMENT, "--force", "--student=h*")  # honest, hog
    for student in ("honest", "hog"):
        scores, _, _, _ = h.read_scores(course, ASSIGNMENT, ASSIGNMENT, student)
        assert scores == results[student].scores, student
