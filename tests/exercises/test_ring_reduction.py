"""nbgrader round trip of `ring_reduction` (Grama et al., Algorithm 4.5): release, then autograde.

The source notebook is released with ``nbgrader generate_assignment`` (the release
must hide solutions and hidden tests), then the instructor's solution (full
marks) and wrong tables and wrong, slow, crashing, deadlocking, endless and
library-calling programs (partial marks, a helpful message in the failing cell,
quick grading) are autograded in one nbgrader run. Each single typical bug costs only the cell
that grades it: a ring that starts from zeros or crashes at p = 1 keeps the time points, and
the table cells are graded independently of the program. A ring mirrored (every partial sum
sent to the right, with right results or not) loses the time cell's points, which grade the
left-hand ring the task asks for, and so does a program that computes the reduction on no p.
Tables computed with the simulator lose their points.

Every typical bug is also handed to ``nbgrader validate`` as a student's saved notebook: the
Validate button must not say "Success!" for any of them (the visible checks catch each one
cheaply), and it must for the solution.
"""
from __future__ import annotations

import nbformat
import pytest

import nbgrader_harness as h
from messages import flat
from collective_lib import CostModel, catalog, simulate
from collective_lib.networks import Ring
from collective_lib.collectives import operations
from collective_lib.recording import record_run
from collective_lib.spans import Span, span_op
from collective_lib.viz import values_table
from exercise_references import load_reference
from exercise_submissions import (SPINS, YIELDS_FOREVER, message_width_test, validate_tests,
                                  validated_fixture, visible_kind_test)
from traces import trace

ASSIGNMENT = "ring_reduction"


# The data flow of the all-to-all BROADCAST (to the right) instead of the reduction's.
TABLES_TO_THE_RIGHT = '''
def pattern(p):
    sends = {i: [[(s % p, (me - i) % p) for s in range(me - i + 1, me + 1)] for me in range(p)]
             for i in range(1, p)}
    results = [[(s, me) for s in range(p)] for me in range(p)]
    return sends, results


sends_4, results_4 = pattern(4)
sends_8, results_8 = pattern(8)
'''

# p = 4 right; for p = 8 the last step forgets the sender's own message.
TABLES_P8_WRONG = '''
def pattern(p):
    sends = {i: [[(s % p, (me + i) % p) for s in range(me, me + i)] for me in range(p)]
             for i in range(1, p)}
    results = [[(s % p, me) for s in range(me, me + p)] for me in range(p)]
    return sends, results


sends_4, results_4 = pattern(4)
sends_8, results_8 = pattern(8)
sends_8[7][3] = sends_8[7][3][1:]
'''

TABLES_UNREADABLE = '''
sends_4 = {1: ["x0(1)", "x1[2]", "x2[3]", "x3[0]"], 2: [], 3: []}
results_4 = []
sends_8, results_8 = {}, []
'''

# The tables computed with the simulator (a student audit: 4/4), though the task says to work
# out p = 4 by hand and not to run the simulator.
TABLES_SIMULATED = '''
import operator

from collective_lib import sendrecv, simulate
from collective_lib.grading import sends_by_step
from collective_lib.networks import Ring


def _ring(me, p, data, op):
    received = None
    for i in range(1, p):
        mine = data[(me + i) % p]
        partial = mine if received is None else op(mine, received)
        received = yield sendrecv((me - 1) % p, partial, (me + 1) % p)
    return data[me] if received is None else op(data[me], received)


def _tables(p):
    inputs = [[frozenset({(i, j)}) for j in range(p)] for i in range(p)]
    run = simulate(_ring, p, inputs, network=Ring(p), op=operator.or_)
    steps = sends_by_step(run)
    return ({s: [sorted(steps[s][node]) for node in range(p)] for s in steps},
            [sorted(result) for result in run.results])


sends_4, results_4 = _tables(4)
sends_8, results_8 = _tables(8)
'''

RING_TO_THE_RIGHT = '''
left, right = (me - 1) % p, (me + 1) % p
received = None
for i in range(1, p):
    mine = data[(me + i) % p]
    partial = mine if received is None else op(mine, received)
    received = yield sendrecv(right, partial, left)
return data[me] if received is None else op(data[me], received)
'''

# Algorithm 4.5 mirrored: right results and time, but every partial sum goes to the right.
RING_MIRRORED = '''
left, right = (me - 1) % p, (me + 1) % p
received = None
for i in range(1, p):
    mine = data[(me - i) % p]              # my message for node me - i
    partial = mine if received is None else op(mine, received)
    received = yield sendrecv(right, partial, left)
return data[me] if received is None else op(data[me], received)
'''

# Right results, but every partial sum is sent wrapped with its destination: 2 words each.
RING_WRAPPED = '''
left, right = (me - 1) % p, (me + 1) % p
received = None
for i in range(1, p):
    mine = data[(me + i) % p]
    partial = mine if received is None else op(mine, received[1])
    received = yield sendrecv(left, ((me + i) % p, partial), right)
return data[me] if received is None else op(data[me], received[1])
'''

# Programs that reduce nothing (a student audit): the ring's traffic to the left, returning
# nothing, and the same mirrored to the right, returning the node's own message. Both got the
# time points, which measured every run that finished, whatever its results.
RING_REDUCES_NOTHING = '''
for i in range(1, p):
    yield sendrecv((me - 1) % p, data[me], (me + 1) % p)
return None
'''
# Right for p = 2 only (one exchange), to the left, in p - 1 steps: the ring's time, no ring.
RING_RIGHT_FOR_TWO = '''
received = None
for i in range(1, p):
    received = yield sendrecv((me - 1) % p, data[(me + 1) % p], (me + 1) % p)
return data[me] if received is None else op(data[me], received)
'''
RING_MIRRORED_STUB = '''
for i in range(1, p):
    yield sendrecv((me + 1) % p, data[me], (me - 1) % p)
return data[me]
'''
# An honest variant: a send, then a recv, instead of sendrecv.
RING_SEND_THEN_RECV = '''
from collective_lib import recv, send
left, right = (me - 1) % p, (me + 1) % p
received = None
for i in range(1, p):
    mine = data[(me + i) % p]
    yield send(left, mine if received is None else op(mine, received))
    received = yield recv(right)
return data[me] if received is None else op(data[me], received)
'''

RING_DIRECT = '''
total = data[me]                       # every message straight to its destination
for s in range(1, p):
    total = op(total, (yield sendrecv((me + s) % p, data[(me + s) % p], (me - s) % p)))
return total
'''

RING_WITH_PLUS = '''
left, right = (me - 1) % p, (me + 1) % p
received = [0] * len(data[0])          # Grama's recv := 0, and + instead of op
for i in range(1, p):
    partial = [a + b for a, b in zip(data[(me + i) % p], received)]
    received = yield sendrecv(left, partial, right)
return [a + b for a, b in zip(data[me], received)]
'''

# Grama's recv := 0 with op: right for + only.
RING_FROM_ZEROS = '''
left, right = (me - 1) % p, (me + 1) % p
received = [0] * len(data[0])
for i in range(1, p):
    received = yield sendrecv(left, op(data[(me + i) % p], received), right)
return op(data[me], received)
'''

RING_CRASHES = '''
received = yield sendrecv((me - 1) % p, data[me + 1], (me + 1) % p)
return received
'''

# Right for every p >= 2; at p = 1 its first sendrecv names the node itself.
RING_CRASHES_AT_P1 = '''
left, right = (me - 1) % p, (me + 1) % p
received = yield sendrecv(left, data[(me + 1) % p], right)      # step 1: my message alone
for i in range(2, p):
    received = yield sendrecv(left, op(data[(me + i) % p], received), right)
return op(data[me], received)
'''

RING_DEADLOCKS = '''
from collective_lib import recv, send
received = yield recv((me + 1) % p)    # everybody waits for the right neighbour first
yield send((me - 1) % p, received)
return received
'''

# The library has no ring reduction (it is this assignment's answer); a student may still try
# one of its other all-to-all reductions.
RING_CALLS_LIBRARY = '''
from collective_lib.algorithms.alltoall import all_to_all_red_hcube
return (yield from all_to_all_red_hcube(me, p, data, op))
'''

RING_HIDES_THE_LIBRARY = '''
import importlib
module = importlib.import_module(".".join(["collective_lib", "algorithms", "alltoall"]))
program = getattr(module, "_".join(["all", "to", "all", "red", "mesh"]))
return (yield from program(me, p, data, op))
'''

# PEs that share a module-level dict instead of sending messages; the messages are
# dummies, so the time is right.
RING_SHARES_GLOBALS = '''
board = globals().setdefault("BOARD", {})     # a notice board that all PEs share
board[me] = data
for i in range(1, p):                         # the ring's traffic, only for the time
    yield sendrecv((me - 1) % p, data[(me + i) % p], (me + 1) % p)
total = data[me]
for source in range(p):
    if source != me:
        total = op(total, board[source][me])  # read from the board, not from a message
return total
'''


# Twelfth round (B-F3): the ring's last step uses functools, which only the test cells import:
# the notebook runs them above the calls, so it works there (Validate said "Success!"), and
# it was a NameError in grading (0 of 6).
RING_FUNCTOOLS_FROM_THE_TEST_CELL = '''
received = None
for i in range(1, p):
    mine = data[(me + i) % p]
    partial = mine if received is None else op(mine, received)
    received = yield sendrecv((me - 1) % p, partial, (me + 1) % p)
return functools.reduce(op, [data[me]] + ([] if received is None else [received]))
'''


# Right tables, sends_8 filled by a loop into a defaultdict: 0/2 in the twelfth round,
# "the sends table for p = 8 must be a dict with the steps 1, ..., 7 as keys", after
# Validate's "Success!" (the codec refused the defaultdict, and the check took the stand-in
# it left for a value that is no dict).
TABLES_DEFAULTDICT = '''
sends_4 = {
    1: ["x0[1]", "x1[2]", "x2[3]", "x3[0]"],
    2: ["x0[2] + x1[2]", "x1[3] + x2[3]", "x2[0] + x3[0]", "x3[1] + x0[1]"],
    3: ["x0[3] + x1[3] + x2[3]", "x1[0] + x2[0] + x3[0]", "x2[1] + x3[1] + x0[1]",
        "x3[2] + x0[2] + x1[2]"],
}
results_4 = ["x0[0] + x1[0] + x2[0] + x3[0]", "x1[1] + x2[1] + x3[1] + x0[1]",
             "x2[2] + x3[2] + x0[2] + x1[2]", "x3[3] + x0[3] + x1[3] + x2[3]"]

from collections import defaultdict
sends_8 = defaultdict(list)
for step in range(1, 8):
    for node in range(8):
        dst = (node + step) % 8
        sends_8[step].append(" + ".join(f"x{(node + s) % 8}[{dst}]" for s in range(step)))
results_8 = [" + ".join(f"x{(node + s) % 8}[{node}]" for s in range(8)) for node in range(8)]
'''


def build_submissions(source):
    def program(code, tables=None):
        # The table cells and the program cells are graded independently, so one submission
        # can carry a wrong table and a wrong program (fewer notebooks, quicker grading).
        change = [("program_solution", code)]
        return change if tables is None else change + [("tables_solution", tables)]

    return h.submissions(source, {
        "to_the_right": program(RING_TO_THE_RIGHT, TABLES_TO_THE_RIGHT),
        "direct": program(RING_DIRECT, TABLES_P8_WRONG),
        "mirrored": program(RING_MIRRORED),
        "wrapped": program(RING_WRAPPED),
        "plus": program(RING_WITH_PLUS, TABLES_UNREADABLE),
        "from_zeros": program(RING_FROM_ZEROS),
        "crashes": program(RING_CRASHES),
        "crashes_at_p1": program(RING_CRASHES_AT_P1),
        "deadlocks": program(RING_DEADLOCKS),
        "spins": program(SPINS),
        "yields_forever": program(YIELDS_FOREVER),
        "calls_library": program(RING_CALLS_LIBRARY),
        "hides_library": program(RING_HIDES_THE_LIBRARY),
        "shares_globals": program(RING_SHARES_GLOBALS),
        "reduces_nothing": program(RING_REDUCES_NOTHING, TABLES_SIMULATED),
        "mirrored_stub": program(RING_MIRRORED_STUB),
        "right_for_two": program(RING_RIGHT_FOR_TWO),
        "send_then_recv": program(RING_SEND_THEN_RECV),
        "functools_from_the_test_cell": program(RING_FUNCTOOLS_FROM_THE_TEST_CELL),
        "defaultdict_tables": ("tables_solution", TABLES_DEFAULTDICT),
    })


graded = h.graded_fixture(ASSIGNMENT, build_submissions, spinning=["spins"])



# Validate: the typical bugs as a student's saved notebooks (the written answer filled in, so
# that only the code decides). A table bug rides with a program bug (the cells are independent);
# Validate must show the message of each.
VALIDATE = {
    "to_the_right": (RING_TO_THE_RIGHT, TABLES_TO_THE_RIGHT,
                     ["what node 0 sends in step 2 is x0[2] + x3[2], but in step 1 node 0 "
                      "received x1[0] from its right neighbour, node 1 (your sends_4[1][1])",
                      "Hint: send to the LEFT neighbour me - 1, receive from the right one"]),
    "direct": (RING_DIRECT, TABLES_P8_WRONG,
               ["6 term(s): a partial sum grows by one message in every step",
                "yours took 27, but with p = 8, ts = 1, tw = 0 and"]),
    "plus": (RING_WITH_PLUS, TABLES_UNREADABLE,
             ["cannot read the term 'x0(1)'", "for p=2, op=word_max",
              "Hint: combine with op(a, b), never with +."]),
    "from_zeros": (RING_FROM_ZEROS, None, ["Hint: 0 is neutral for + only (max(0, -5) is 0)"]),
    "mirrored": (RING_MIRRORED, None, ["for p = 8 node 0 sent a message to node 1"]),
    "wrapped": (RING_WRAPPED, None, ["Some of your messages were sent as 2 word(s), not m = 3"]),
    "crashes_at_p1": (RING_CRASHES_AT_P1, None, ["for p=1 raised ValueError"]),
    "crashes": (RING_CRASHES, None, ["for p=4 raised IndexError"]),
    "deadlocks": (RING_DEADLOCKS, None, ["deadlock in my_all_to_all_red_ring for p=4",
                                         "finished on 0 of the 2 cases with p >= 2"]),
    "spins": (SPINS, None, ["my_all_to_all_red_ring did not finish within 5 s"]),
    "yields_forever": (YIELDS_FOREVER, None, ["my_all_to_all_red_ring for p=4 did not finish"]),
    # the library's reductions reject the visible checks' p = 3 (hypercube) and p = 2 (mesh)
    "calls_library": (RING_CALLS_LIBRARY, None, ["for p=3 raised ValueError"]),
    "hides_library": (RING_HIDES_THE_LIBRARY, None, ["for p=2 raised ValueError"]),
    "reduces_nothing": (RING_REDUCES_NOTHING, TABLES_SIMULATED,
                        ["sends_4 is computed with the library's `sends_by_step`",
                         "wrong result of my_all_to_all_red_ring for p=4"]),
}
WRITTEN = {"mesh_answer": "Columns first, with messages of m sqrt(p) words, then rows."}


validated = validated_fixture(ASSIGNMENT, lambda source: h.submissions(source, {
    student: [("program_solution", code)] + ([("tables_solution", tables)] if tables else [])
    for student, (code, tables, _) in VALIDATE.items()}), [*VALIDATE], written=WRITTEN)


FULL = {"tables_p4_tests": 2, "tables_p8_tests": 2, "program_tests": 4, "time_tests": 2,
        "mesh_answer": 0, "mesh_answer_rubric": 0}
TABLES_OF = {"to_the_right": {"tables_p4_tests": 0, "tables_p8_tests": 0},
             "direct": {"tables_p8_tests": 0},
             "plus": {"tables_p4_tests": 0, "tables_p8_tests": 0},
             "reduces_nothing": {"tables_p4_tests": 0, "tables_p8_tests": 0}}


def test_release_hides_solution_and_hidden_tests(graded):
    course, _ = graded
    h.assert_release_hides(course, ASSIGNMENT, [
        "x0[3] + x1[3] + x2[3]", "ring_pattern", "sends_4 = {", "sends_8, results_8 =",
        "received = yield sendrecv(left", "_ring_tables", "_want_sends",
        "forbid_library", "_reference",
        "Phase 1 runs along the **columns**"],
        shows=["def my_all_to_all_red_ring(me, p, data, op=add):", "YOUR ANSWER HERE",
               # the worked example for p = 3 and the format check stay
               "sends_3 = {", "def check_table_format(sends, results, p):"],
        unanswered=2)


def test_solution_gets_full_marks(graded):
    h.assert_solution_full_marks(
        graded, ASSIGNMENT,
        {"tables_p4_tests", "tables_p8_tests", "program_tests", "time_tests"}, 12,
        by_hand={"mesh_answer": 2})


def test_a_table_filled_into_a_defaultdict_gets_full_marks(graded):
    # a defaultdict crosses to the checker as the dict it is
    _, results = graded
    result = results["defaultdict_tables"]
    assert result.scores == FULL, result.messages()


def test_the_reference_answer_stays_in_source(graded):
    # the hidden tests import it from source/ring_reduction/; nbgrader copies it nowhere
    course, _ = graded
    assert (course / "source" / ASSIGNMENT / "_reference.py").is_file()
    assert not list((course / "release").rglob("_reference.py"))
    assert not list((course / "autograded").rglob("_reference.py"))


@pytest.mark.parametrize("student, cell, message", [
    # the visible check: what a node passes on is what came from its right neighbour
    ("to_the_right", "tables_p4_tests", "what node 0 sends in step 2 is x0[2] + x3[2], but in "
                                        "step 1 node 0 received x1[0] from its right neighbour, "
                                        "node 1 (your sends_4[1][1]): a node combines what it "
                                        "received with its own message"),
    # the visible check warns before submission: a partial sum of step i has i terms
    ("direct", "tables_p8_tests", "step 7, node 3 sends x0[2] + x1[2] + x4[2] + x5[2] + x6[2] + "
                                  "x7[2], 6 term(s): a partial sum grows by one message in every "
                                  "step, so in step 7 it holds the messages of 7 nodes"),
    ("plus", "tables_p4_tests", "step 1, node 0: cannot read the term 'x0(1)' (write a term as "
                                "x3[5]"),
    # tables computed with the simulator (a student audit: 4/4)
    ("reduces_nothing", "tables_p4_tests", "sends_4 is computed with the library's "
                                           "`sends_by_step`; part (a) asks for tables you work "
                                           "out yourself"),
    ("reduces_nothing", "tables_p8_tests", "sends_8 is computed with the library's "
                                           "`sends_by_step`; part (a) asks for tables you work "
                                           "out yourself"),
])
def test_wrong_tables_lose_only_their_points(graded, student, cell, message):
    _, results = graded
    result = results[student]
    for gid, points in TABLES_OF[student].items():
        assert result.scores[gid] == points, gid
    assert message in flat(result.messages(cell)), result.messages(cell)


@pytest.mark.parametrize("student, scores, cell, messages", [
    # sending to the right: the results are wrong, and the time cell grades the left-hand ring
    ("to_the_right", {"program_tests": 0, "time_tests": 0}, "program_tests",
     ["wrong result of my_all_to_all_red_ring for p=4: PE 0 returned",
      "Hint: send to the LEFT neighbour me - 1, receive from the right one, me + 1."]),
    ("to_the_right", {"program_tests": 0, "time_tests": 0}, "time_tests",
     ["for p = 8 node 0 sent a message to node 1"]),
    # programs that reduce nothing get no time points (a student audit: 2/2)
    ("reduces_nothing", {"program_tests": 0, "time_tests": 0}, "time_tests",
     ["my_all_to_all_red_ring returned the right results on none of the runs timed here",
      "See the test of the results"]),
    ("mirrored_stub", {"program_tests": 0, "time_tests": 0}, "time_tests",
     ["for p = 8 node 0 sent a message to node 1"]),
    ("right_for_two", {"program_tests": 0, "time_tests": 0}, "time_tests",
     ["my_all_to_all_red_ring returned the right results on none of the runs timed here"]),
    ("from_zeros", {"program_tests": 0}, "program_tests",
     ["for p=1, op=word_max", "0 is neutral for + only"]),
    ("direct", {"time_tests": 0}, "time_tests",
     ["the reduction takes (ts + tw m)(p - 1) = 7"]),
    # the ring mirrored: right results and time, but not the left-hand ring the task asks for
    ("mirrored", {"time_tests": 0}, "time_tests",
     ["for p = 8 node 0 sent a message to node 1, but in Algorithm 4.5 every node sends to "
      "its left neighbour, me - 1"]),
    # a partial sum wrapped in a tuple is sent as 2 words: the time is short, and says why
    ("wrapped", {"time_tests": 0}, "time_tests",
     ["yours took 12, but with p = 5", "Some of your messages were sent as 2 word(s), not "
      "m = 3: the simulator counts a list or a tuple as one word per item"]),
    ("plus", {"program_tests": 0}, "program_tests",
     ["wrong result of my_all_to_all_red_ring for p=2, op=word_max: PE 0 returned",
      "Hint: combine with op(a, b), never with +."]),
    # right for p >= 2: the crash costs the results, and the time is measured where it runs
    ("crashes_at_p1", {"program_tests": 0}, "program_tests",
     ["my_all_to_all_red_ring for p=1 raised ValueError", "names itself as destination"]),
    ("crashes", {"program_tests": 0, "time_tests": 0}, "program_tests",
     ["my_all_to_all_red_ring for p=4 raised IndexError", "data[me + 1]"]),
    ("deadlocks", {"program_tests": 0, "time_tests": 0}, "program_tests",
     ["deadlock in my_all_to_all_red_ring for p=4", "PE 0 waits in recv(src=1)",
      "they wait for each other in a cycle"]),
    ("spins", {"program_tests": 0, "time_tests": 0}, "program_tests",
     ["did not finish within 5 s of real time"]),
    ("yields_forever", {"program_tests": 0, "time_tests": 0}, "program_tests",
     ["issued more than", "endless loop that keeps yielding"]),
    ("calls_library", {"program_tests": 0, "time_tests": 0}, "program_tests",
     ["my_all_to_all_red_ring uses the library's `all_to_all_red_hcube`"]),
    ("hides_library", {"program_tests": 0, "time_tests": 0}, "program_tests",
     ["my_all_to_all_red_ring runs the library's `all_to_all_red_mesh`"]),
])
def test_wrong_programs_lose_their_points_with_a_helpful_message(graded, student, scores,
                                                                 cell, messages):
    _, results = graded
    result = results[student]
    assert result.scores == {**FULL, **TABLES_OF.get(student, {}), **scores}
    for message in messages:
        assert message in flat(result.messages(cell)), (message, result.messages(cell))


def test_the_time_test_says_what_it_measured(graded):
    # direct delivery passes every check of the results but not the ring's time; a program that
    # runs to the end on no p is told that its time was never measured, by the visible check
    # already (Validate passed it, and the grader gave 0); the hidden p are not listed
    _, results = graded
    assert "yours took 27" in results["direct"].messages("time_tests")
    assert "my_all_to_all_red_ring finished on 0 of the 2 cases with p >= 2: too few to judge " \
        "the time" in flat(results["crashes"].messages("time_tests"))
    assert results["crashes_at_p1"].scores["time_tests"] == 2
    assert "not measured on this p" not in results["crashes_at_p1"].messages("time_tests")


def test_a_program_wrong_on_no_p_but_one_keeps_the_time(graded):
    # one bug, one deduction: a program that crashes at p = 1 and is right elsewhere keeps
    # the time points; a send and a recv instead of sendrecv is the same ring
    _, results = graded
    assert results["crashes_at_p1"].scores["time_tests"] == 2
    h.assert_full_marks(results["send_then_recv"])


def test_pes_sharing_globals_lose_every_point_of_their_runs(graded):
    # right with all PEs in one process, but a PE of a graded run, replayed in a process of
    # its own, behaves otherwise: none of its runs counts; the honest solution keeps full marks
    _, results = graded
    result = results["shares_globals"]
    assert result.scores == {**FULL, "program_tests": 0, "time_tests": 0}
    for cell in ("program_tests", "time_tests"):
        h.assert_isolation_message(result, cell)
    h.assert_full_marks(results["solution"])


# The reference answer (source/ring_reduction/_reference.py), which the library does not ship:
# Grama's claims about Algorithm 4.5, once made by the library's tests and Chapter 5.

def _reference_ring():
    return load_reference(ASSIGNMENT).all_to_all_red_ring


@pytest.mark.parametrize("p", range(1, 41))
def test_the_reference_is_right_and_costs_eq_4_2(p):
    model, m = CostModel(ts=100, tw=1), 2
    inputs = [[[100 * i + j, -j] for j in range(p)] for i in range(p)]
    run = simulate(_reference_ring(), p, inputs, network=Ring(p), model=model)
    assert run.results == operations()["all_to_all_reduction"].expected(inputs)
    assert run.time == (model.ts + model.tw * m) * (p - 1)


def _tagged_op(a, b):
    # Words are (destination, Span of sources); only words for the same PE may be combined.
    (dest_a, xa), = a
    (dest_b, xb), = b
    assert dest_a == dest_b, f"combined a word for {dest_a} with one for {dest_b}"
    return [(dest_a, span_op(xa, xb))]


def _sources(payload):
    # The PEs whose messages a payload of the all-to-all broadcast carries (inputs [i]).
    if isinstance(payload, list) and len(payload) == 1 and isinstance(payload[0], int):
        return [payload[0]]
    return [s for part in payload for s in _sources(part)]


@pytest.mark.parametrize("p", [2, 3, 5, 8, 11, 16])
def test_the_reference_is_the_ring_broadcast_reversed(p):
    # What Chapter 5 (§5.6) tells the reader: reduction step s carries over (v, u) what
    # broadcast step p - s carried over (u, v), and the partial sum's destination is the
    # broadcast message's source.
    tagged = [[[(j, Span((i,)))] for j in range(p)] for i in range(p)]
    red = simulate(_reference_ring(), p, tagged, network=Ring(p), op=_tagged_op)
    bc = catalog()["all_to_all_bc_ring"].simulate(p, inputs=[[i] for i in range(p)])
    for s in range(1, p):
        assert ({(m.dst, m.src, m.payload[0][0]) for m in red.step(s)}
                == {(m.src, m.dst, _sources(m.payload)[0]) for m in bc.step(p - s)})
    assert [r[0][0] for r in red.results] == list(range(p))
    if p == 8:                    # Grama: "node 0 sending msg[1] to 7" in the first step
        assert ({(m.src, m.dst, m.payload[0][0]) for m in red.step(1)}
                == {((i + 1) % 8, i, (i + 2) % 8) for i in range(8)})


def test_the_reference_combines_in_cyclic_order():
    # PE j's result is msg_j + (msg_(j+1) + (... + msg_(j-1))): op must commute.
    spans = [[[Span((i,))] for j in range(8)] for i in range(8)]
    run = record_run(_reference_ring(), 8, inputs=spans, network=Ring(8), op=span_op)
    t = values_table(run, watch="received")
    for s in range(1, 8):
        for pe in range(8):
            assert t.value(s, pe)[0].ranks == tuple((pe + k) % 8 for k in range(1, s + 1))
    assert str(run.results[0][0]) == "0:7" and str(run.results[3][0]) == "3:7,0:2"


def test_the_reference_is_the_notebooks_solution():
    # The instructor's solution cell and _reference.py send the same messages at the same times.
    nb = nbformat.read(h.EXERCISES_DIR / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb",
                         as_version=4)
    namespace = {}
    exec(h.find_cell(nb, "program_solution").source, namespace)
    for p in (1, 2, 5, 8):
        inputs = [[[i, j] for j in range(p)] for i in range(p)]
        mine = simulate(namespace["my_all_to_all_red_ring"], p, inputs, network=Ring(p))
        ref = simulate(_reference_ring(), p, inputs, network=Ring(p))
        assert trace(mine) == trace(ref) and mine.results == ref.results


def test_the_reference_rejects_a_wrong_number_of_messages():
    with pytest.raises(ValueError, match="p=4"):
        simulate(_reference_ring(), 4, [[[1]] * 3] * 4, network=Ring(4))


test_validate_passes_the_solution, test_validate_reports_each_named_bug = validate_tests(
    {student: v[2] for student, v in VALIDATE.items()})


def test_the_visible_checks_say_what_they_do_not_check(graded):
    # PEs that share globals pass every visible check: the release says so where it runs them
    course, _ = graded
    text = h.released_text(course, ASSIGNMENT)
    assert ('print("Not checked here (the graded tests check them): p up to 47, other operators, '
            'each PE "\n      "in its own process, and that the program is your own work.")'
            in text)


test_a_visible_check_records_its_kind_of_failure = visible_kind_test([
    ("direct", "time_tests", "wrong_time"),
    ("mirrored", "time_tests", "wrong_form"),
    ("reduces_nothing", "time_tests", "too_few_finished"),
    ("reduces_nothing", "tables_p4_tests", "uses_library"),
    ("reduces_nothing", "tables_p8_tests", "uses_library"),
])


def test_a_module_only_a_test_cell_imports_works_as_in_the_notebook(graded):
    # the test cells' visible imports run in the student's processes where the cells stand
    _, results = graded
    h.assert_full_marks(results["functools_from_the_test_cell"])


test_no_line_of_a_message_is_cut_by_validate = message_width_test()
