"""nbgrader round trip of the chapter 4-5 exercises: ring_reduction and grid_alltoall.

As in test_exercises.py: each assignment is released with ``nbgrader
generate_assignment`` (the release must hide solutions and hidden tests), then
the instructor's solution (full marks) and wrong, slow, crashing, deadlocking,
endless and library-calling submissions (partial marks, a helpful message in
the failing cell, quick grading) are autograded in one nbgrader run per
assignment; the two assignments are graded side by side.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import nbgrader_harness as h

# -- ring_reduction (Grama et al., Algorithm 4.5) ----------------------------------------------

RING = "ring_reduction"

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

RING_TO_THE_RIGHT = '''
left, right = (me - 1) % p, (me + 1) % p
received = None
for i in range(1, p):
    mine = data[(me + i) % p]
    partial = mine if received is None else op(mine, received)
    received = yield sendrecv(right, partial, left)
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

RING_CRASHES = '''
received = yield sendrecv((me - 1) % p, data[me + 1], (me + 1) % p)
return received
'''

RING_DEADLOCKS = '''
from collective_lib import recv, send
received = yield recv((me + 1) % p)    # everybody waits for the right neighbour first
yield send((me - 1) % p, received)
return received
'''

SPINS = '''
while True:                            # never yields, never returns
    pass
yield
'''

YIELDS_FOREVER = '''
from collective_lib import compute
while True:
    yield compute(0)
'''

RING_CALLS_LIBRARY = '''
from collective_lib.algorithms.alltoall import all_to_all_red_ring
return (yield from all_to_all_red_ring(me, p, data, op))
'''

RING_HIDES_THE_LIBRARY = '''
import importlib
module = importlib.import_module(".".join(["collective_lib", "algorithms", "alltoall"]))
program = getattr(module, "_".join(["all", "to", "all", "red", "ring"]))
return (yield from program(me, p, data, op))
'''


def grade_ring(workdir: Path):
    def submissions(source):
        def bad(program, tables=None):
            # The table cells and the program cells are graded independently, so one submission
            # can carry a wrong table and a wrong program (fewer notebooks, quicker grading).
            nb = h.replace_solution(source, "program_solution", program)
            return nb if tables is None else h.replace_solution(nb, "tables_solution", tables)

        return {
            "solution": source,
            "to_the_right": bad(RING_TO_THE_RIGHT, TABLES_TO_THE_RIGHT),
            "direct": bad(RING_DIRECT, TABLES_P8_WRONG),
            "plus": bad(RING_WITH_PLUS, TABLES_UNREADABLE),
            "crashes": bad(RING_CRASHES),
            "deadlocks": bad(RING_DEADLOCKS),
            "spins": bad(SPINS),
            "yields_forever": bad(YIELDS_FOREVER),
            "calls_library": bad(RING_CALLS_LIBRARY),
            "hides_library": bad(RING_HIDES_THE_LIBRARY),
        }

    return h.release_and_grade(workdir / "course", RING, submissions, grade=h.grade_all)


# -- grid_alltoall (Sanders et al., Exercise 13.11) ----------------------------------------------

GRID = "grid_alltoall"

GRID_DIRECT = '''
result = [None] * p                    # direct delivery: p - 1 startups
result[me] = data[me]
for s in range(1, p):
    result[(me - s) % p] = yield sendrecv((me + s) % p, data[(me + s) % p], (me - s) % p)
return result
'''

_GRID_PHASES = '''
def digit(rank, t):
    return rank // k ** t % k

held = [(me, dst, data[dst]) for dst in range(p)]
for t in range(d):
    stride, mine = k ** t, digit(me, t)
    for s in range(1, k):
        to_digit, from_digit = (mine + s) % k, (mine - s) % k
        to, frm = me + (to_digit - mine) * stride, me + (from_digit - mine) * stride
        bundle = [item for item in held if digit(item[1], t) == to_digit]
        held = [item for item in held if digit(item[1], t) != to_digit]
'''

GRID_ARRIVAL_ORDER = _GRID_PHASES + '''
        held += yield sendrecv(to, bundle, frm, words=sum(len(x) for _, _, x in bundle))
return [message for _, _, message in held]       # in the order they arrived
'''

GRID_FORGETS_WORDS = _GRID_PHASES + '''
        held += yield sendrecv(to, bundle, frm)   # one word per message in the bundle
result = [None] * p
for source, _, message in held:
    result[source] = message
return result
'''

GRID_CRASHES = '''
result = [None] * p
for s in range(1, k ** d):
    result[s] = yield sendrecv((me + s) % p, data[me + s], (me - s) % p)
return result
'''

GRID_DEADLOCKS = '''
from collective_lib import recv, send
first = yield recv((me + 1) % p)
yield send((me - 1) % p, data)
return first
'''

GRID_USES_CATALOG = '''
from collective_lib import catalog
program = next(e.program for e in catalog().values() if e.operation == "alltoall")
return (yield from program(me, p, data))
'''


def grade_grid(workdir: Path):
    def submissions(source):
        def bad(code):
            return h.replace_solution(source, "grid_solution", code)

        return {
            "solution": source,
            "direct": bad(GRID_DIRECT),
            "arrival_order": bad(GRID_ARRIVAL_ORDER),
            "forgets_words": bad(GRID_FORGETS_WORDS),
            "crashes": bad(GRID_CRASHES),
            "deadlocks": bad(GRID_DEADLOCKS),
            "spins": bad(SPINS),
            "uses_catalog": bad(GRID_USES_CATALOG),
        }

    return h.release_and_grade(workdir / "course", GRID, submissions, grade=h.grade_all)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Release and grade both assignments side by side (nbgrader runs in subprocesses)."""
    jobs = {"ring": grade_ring, "grid": grade_grid}
    return h.grade_side_by_side(jobs, tmp_path_factory)


@pytest.fixture(scope="module")
def ring(graded):
    return graded["ring"]


@pytest.fixture(scope="module")
def grid(graded):
    return graded["grid"]


# -- ring_reduction -------------------------------------------------------------------------------

RING_FULL = {"tables_p4_tests": 2, "tables_p8_tests": 2, "program_tests": 4, "time_tests": 2,
             "mesh_answer": 0}
RING_TABLES_OF = {"to_the_right": {"tables_p4_tests": 0, "tables_p8_tests": 0},
                  "direct": {"tables_p8_tests": 0},
                  "plus": {"tables_p4_tests": 0, "tables_p8_tests": 0}}


def test_ring_release_hides_solution_and_hidden_tests(ring):
    course, _, _ = ring
    text = h.released_text(course, RING)
    for secret in ["BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS",
                   "x0[3] + x1[3] + x2[3]", "ring_pattern", "sends_4 = {", "sends_8, results_8 =",
                   "received = yield sendrecv(left", "_ring_tables", "check_answer_table",
                   "forbid_library", "all_to_all_red_ring as _reference_ring",
                   "Phase 1 runs along the **columns**"]:
        assert secret not in text, f"the release gives away {secret!r}"
    assert "def my_all_to_all_red_ring(me, p, data, op=add):" in text
    assert text.count("raise NotImplementedError()") == 2
    assert "YOUR ANSWER HERE" in text
    # the worked example for p = 3 and the format check stay
    assert 'sends_3 = {' in text and "def check_table_format(sends, results, p):" in text


def test_ring_solution_gets_full_marks(ring):
    _, results, _ = ring
    result = results["solution"]
    assert set(h.autograded_ids(result)) == {"tables_p4_tests", "tables_p8_tests", "program_tests",
                                           "time_tests"}
    h.assert_full_marks(result)
    assert result.max_scores["mesh_answer"] == 2                 # graded by hand
    assert result.max_score == 12


@pytest.mark.parametrize("student, cell, message", [
    ("to_the_right", "tables_p4_tests", "sends_4[1][0] is x0[3], but x0[1] was expected "
                                        "(missing: x0[1]; not expected: x0[3])\nHint: in step i "
                                        "node me sends its own message for node me + i"),
    ("direct", "tables_p8_tests", "sends_8[7][3] is x0[2] + x1[2] + x4[2] + x5[2] + x6[2] + "
                                  "x7[2], but x0[2] + x1[2] + x3[2] + x4[2] + x5[2] + x6[2] + "
                                  "x7[2] was expected (missing: x3[2])"),
    ("plus", "tables_p4_tests", "step 1, node 0: cannot read the term 'x0(1)' (write a term as "
                                "x3[5]"),
])
def test_ring_wrong_tables_lose_only_their_points(ring, student, cell, message):
    _, results, _ = ring
    result = results[student]
    for gid, points in RING_TABLES_OF[student].items():
        assert result.scores[gid] == points, gid
    assert message in result.messages(cell)


@pytest.mark.parametrize("student, scores, cell, messages", [
    ("to_the_right", {"program_tests": 0, "time_tests": 0}, "program_tests",
     ["expected [[60], [64], [68], [72]], got"]),
    ("direct", {"time_tests": 0}, "time_tests",
     ["the reduction should take 7 steps, yours took"]),
    ("plus", {"program_tests": 0}, "program_tests",
     ["wrong result of my_all_to_all_red_ring for p=2, op=word_max: PE 0 returned",
      "Combine with op(a, b), never with +."]),
    ("crashes", {"program_tests": 0, "time_tests": 0}, "program_tests",
     ["my_all_to_all_red_ring for p=4 raised IndexError", "data[me + 1]"]),
    ("deadlocks", {"program_tests": 0, "time_tests": 0}, "program_tests",
     ["deadlock in my_all_to_all_red_ring for p=4", "PE 0 waits in recv(src=1)"]),
    ("spins", {"program_tests": 0, "time_tests": 0}, "program_tests",
     ["did not finish within 5 s of real time"]),
    ("yields_forever", {"program_tests": 0, "time_tests": 0}, "program_tests",
     ["issued more than", "endless loop that keeps yielding"]),
    ("calls_library", {"program_tests": 0, "time_tests": 0}, "program_tests",
     ["my_all_to_all_red_ring uses the library's `all_to_all_red_ring`"]),
    ("hides_library", {"program_tests": 0, "time_tests": 0}, "time_tests",
     ["my_all_to_all_red_ring runs the library's `all_to_all_red_ring`"]),
])
def test_ring_wrong_programs_lose_their_points_with_a_helpful_message(ring, student, scores,
                                                                      cell, messages):
    _, results, _ = ring
    result = results[student]
    assert result.scores == {**RING_FULL, **RING_TABLES_OF.get(student, {}), **scores}
    for message in messages:
        assert message in result.messages(cell), (message, result.messages(cell))


def test_ring_slow_program_is_told_its_time_in_the_hidden_tests(ring):
    # direct delivery passes the visible p = 8 check of the result but not the ring's time
    _, results, _ = ring
    assert "yours took 27" in results["direct"].messages("time_tests")


def test_ring_grading_is_quick(ring):
    _, _, seconds = ring
    assert seconds < 150, f"autograding 10 submissions took {seconds:.0f} s"


# -- grid_alltoall ---------------------------------------------------------------------------------

GRID_FULL = {"correctness_tests": 4, "time_tests": 3, "answer": 0}


def test_grid_release_hides_solution_and_hidden_tests(grid):
    course, _, _ = grid
    text = h.released_text(course, GRID)
    for secret in ["BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS",
                   "def digit(rank, t)", "held = [(me, dst, data[dst])", "_unique_messages",
                   "_transpose", "count_pieces", "forbid_library", "_GRIDS",
                   "After the phase of dimension $t$ every message"]:
        assert secret not in text, f"the release gives away {secret!r}"
    assert "def grid_all_to_all(me, p, data, k, d):" in text
    assert text.count("raise NotImplementedError()") == 1
    assert "YOUR ANSWER HERE" in text
    assert "def direct_all_to_all(me, p, data):" in text      # the worked example stays


def test_grid_solution_gets_full_marks(grid):
    _, results, _ = grid
    result = results["solution"]
    assert set(h.autograded_ids(result)) == {"correctness_tests", "time_tests"}
    h.assert_full_marks(result)
    assert result.max_scores["answer"] == 2                      # graded by hand
    assert result.max_score == 9


@pytest.mark.parametrize("student, scores, cell, messages", [
    ("direct", {"time_tests": 0}, "time_tests",
     ["with k = 3, d = 2, alpha = 1 and beta = 0 the time must be at most 6, yours is 8"]),
    ("arrival_order", {"correctness_tests": 0, "time_tests": 0}, "correctness_tests",
     ["PE 1 should return [[0, 1], [1, 1], [2, 1], [3, 1]], got [[1, 1], [0, 1], "]),
    ("forgets_words", {"time_tests": 0}, "time_tests",
     ["the message from PE 0 to PE 1 carries 2 words of data but is sent as 1 word",
      "words=n * len(bundle)"]),
    ("crashes", {"correctness_tests": 0, "time_tests": 0}, "correctness_tests",
     ["grid_all_to_all for p=4, k=2, d=2 raised IndexError", "data[me + s]"]),
    ("deadlocks", {"correctness_tests": 0, "time_tests": 0}, "correctness_tests",
     ["deadlock in grid_all_to_all for p=4, k=2, d=2"]),
    ("spins", {"correctness_tests": 0, "time_tests": 0}, "correctness_tests",
     ["did not finish within 5 s of real time"]),
    ("uses_catalog", {"correctness_tests": 0, "time_tests": 0}, "correctness_tests",
     ["grid_all_to_all uses the library's `catalog`"]),
])
def test_grid_wrong_programs_lose_their_points_with_a_helpful_message(grid, student, scores,
                                                                      cell, messages):
    _, results, _ = grid
    result = results[student]
    assert result.scores == {**GRID_FULL, **scores}
    for message in messages:
        assert message in result.messages(cell), (message, result.messages(cell))


def test_grid_grading_is_quick(grid):
    _, _, seconds = grid
    assert seconds < 150, f"autograding 8 submissions took {seconds:.0f} s"
