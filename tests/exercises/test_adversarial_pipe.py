"""A student's code that writes to its process's pipe to the checker gets a verdict on
every graded cell that says so, and nothing else.

An attack of the fourth round: the answer cell finds the pipe its process answers the
checker on (``/proc/self/fd``) and writes messages of the checker's own framing before
the process says it is ready: a list, an object without the answer's keys, or a forged
"ready" and then an object where the description of a name belongs. The checker read
each as the answer it waited for and stopped outside any cell: every graded cell came
back "not graded: AttributeError: 'list' object has no attribute 'get'" (or a KeyError),
the checker's reason rather than the student's. Now every cell gets the verdict that the
process sent the grader something other than its answer
(``collective_lib.autograde.remote``), and binding names is part of each cell's checks
(``checker._grade``), so nothing a student process sends can end the notebook's grading.
"""
import pytest

import nbgrader_harness as h

ASSIGNMENT = "gray_codes"
GRADED = ("gray_tests", "transitions_tests", "index_tests")

FORGE = '''
import fcntl, json, os, struct


def _forge(*messages):
    for fd in map(int, os.listdir("/proc/self/fd")):
        try:
            if (os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:")
                    and fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_WRONLY):
                for message in messages:
                    data = json.dumps(message).encode()
                    os.write(fd, struct.pack("!I", len(data)) + data)
        except OSError:
            pass


_forge(%s)
'''
FORGED = {"ready_is_a_list": "[1]",
          "ready_without_its_keys": '{"x": 1}',
          "a_description_without_a_kind": '{"ready": True, "first_error": ""}, {"foo": 1}',
          # a request to call a function of the checker's, which has given the process none:
          # the checker answered each, and a flood of them, never read, blocked it until the
          # notebook's time ran out (fifth round)
          "calls_the_checker": '{"call": 0, "args": [], "kwargs": {}}'}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    course, released, source = h.released_course(
        tmp_path_factory.mktemp("pipe") / "course", ASSIGNMENT)
    submissions = {"honest": h.answered_release(released, source)}
    for student, messages in FORGED.items():
        nb = h.answered_release(released, source)
        h.find_cell(nb, "gray_solution").source += "\n" + FORGE % messages
        submissions[student] = nb
    return h.autograde_many(course, ASSIGNMENT, submissions)


def test_an_honest_neighbour_keeps_full_marks(graded):
    h.assert_full_marks(graded["honest"])


@pytest.mark.parametrize("student", sorted(FORGED))
def test_every_cell_says_the_process_sent_something_else(graded, student):
    result = graded[student]
    assert result.total == 0, result.scores
    for cell in GRADED:
        message = result.messages(cell)
        assert "sent the grader a message that is not its answer" in message, (cell, message)
        assert "not graded" not in message, (cell, message)
