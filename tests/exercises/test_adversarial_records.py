"""Operation records built by hand cannot make a slow program fast (issue 23).

A student's program may yield the records of ``collective_lib.ops`` without their
constructors: ``Send(dst, data, float("nan"))`` once made the simulated time NaN, which
passed both the time bound and the declared-size check, so a direct scatter earned the
time points of ``scatter_any_root``; negative sizes and ``Compute(-1.0)`` turned the
clock back.  Each payload below is the direct scatter (the root sends every PE its
message), written into the released notebook as a student would, with one such record.
All are graded in one ``nbgrader autograde`` run beside the instructor's solution and an
honest direct scatter: the payloads earn no time points and nothing the honest direct
scatter does not, their messages name the bad value, and the solution keeps full marks.
"""
import textwrap

import nbformat
import pytest

import nbgrader_harness as h

ASSIGNMENT = "scatter_any_root"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
SOLUTION_CELL = "scatter_solution"
TIME_CELL = "time_tests"


def _direct_scatter(record: str, before: str = "") -> str:
    """The direct scatter whose root yields ``record`` (a Send of dst and data[dst])."""
    return f'''
from collective_lib import recv, send
from collective_lib.ops import Compute, Send


def halving_scatter(me, p, data, root=0):
    """Not the halving tree: the root sends each PE its message itself."""
{textwrap.indent(textwrap.dedent(before), "    ")}
    if me != root:
        return (yield recv(root))
    for i in range(1, p):
        dst = (root + i) % p
        yield {record}
    return data[root]
'''


HONEST_DIRECT = _direct_scatter("send(dst, data[dst])")
PAYLOADS = {
    # the size NaN: the time became NaN, and NaN > bound is False
    "nan_words": (_direct_scatter('Send(dst, data[dst], float("nan"))'),
                  "Send with words=nan: a message size must be a non-negative integer"),
    # a negative size makes a transfer end before it starts
    "negative_words": (_direct_scatter("Send(dst, data[dst], -1000)"),
                       "Send with words=-1000: a message size must be a non-negative integer"),
    # local work of negative length turns each PE's clock back before it starts
    "negative_compute": (_direct_scatter("send(dst, data[dst])", before='''
                             for _ in range(100):
                                 yield Compute(-1.0)
                         '''),
                         "Compute with time=-1.0: a time must be a finite non-negative number"),
}


def _with_cell(nb, grade_id, source):
    """A copy of ``nb`` whose cell ``grade_id`` holds ``source`` (a student's edit)."""
    nb = nbformat.from_dict(nb)
    h.find_cell(nb, grade_id).source = source.strip("\n")
    return nb


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course = h.released_copy(tmp_path_factory.mktemp("adversarial_records") / "course", ASSIGNMENT)
    released = nbformat.read(course / "release" / ASSIGNMENT / NOTEBOOK, as_version=4)
    submissions = {"honest": h.source_notebook(course, ASSIGNMENT, NOTEBOOK),
                   "direct": _with_cell(released, SOLUTION_CELL, HONEST_DIRECT)}
    for student, (code, _) in PAYLOADS.items():
        submissions[student] = _with_cell(released, SOLUTION_CELL, code)
    return h.autograde_many(course, ASSIGNMENT, submissions)


def test_the_solution_keeps_full_marks(graded):
    h.assert_full_marks(graded["honest"])


def test_an_honest_direct_scatter_is_right_but_too_slow(graded):
    direct = graded["direct"]
    assert {gid: direct.scores[gid] for gid in h.autograded_ids(direct)} == \
        {"correctness_tests": 4, "tree_tests": 0, "time_tests": 0}
    assert "too slow" in direct.messages(TIME_CELL)


@pytest.mark.parametrize("student", PAYLOADS)
def test_a_record_built_by_hand_earns_no_time_points(graded, student):
    result = graded[student]
    assert result.scores[TIME_CELL] == 0, result.messages(TIME_CELL)


@pytest.mark.parametrize("student", PAYLOADS)
def test_it_earns_nothing_an_honest_direct_scatter_does_not(graded, student):
    result, direct = graded[student], graded["direct"]
    for gid in h.autograded_ids(result):
        assert result.scores[gid] <= direct.scores[gid], (gid, result.messages(gid))


@pytest.mark.parametrize("student", PAYLOADS)
def test_the_message_names_the_bad_value(graded, student):
    _, message = PAYLOADS[student]
    result = graded[student]
    text = result.messages("correctness_tests")
    assert message in text and "halving_scatter for p=" in text, text
    # The time cell fails with the same message, or sends the student to the correctness
    # test for it (one bug, one deduction); either way it fails.
    text = result.messages(TIME_CELL)
    assert message in text or "correctness test" in text, text
