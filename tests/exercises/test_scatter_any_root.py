"""nbgrader round trip of `scatter_any_root` (Chapter 4: scatter on the halving tree, Theorem 13.9).

The source notebook is released with ``nbgrader generate_assignment`` (the release
must hide the solution, the hidden tests and the model answer), and a set of
submissions is autograded in one ``nbgrader autograde`` run: the instructor's
solution (full marks), typical bugs that each cost only the cells they should (the
root's list not reordered: correctness only; the larger half sent away: the tree and
the time; the library's binomial tree written out: the tree only; a block sent
without its size: the time only), a program that calls the library (no credit), and
crashing and endless programs (no marks, and grading still finishes quickly).
"""
from __future__ import annotations

import pytest

import nbgrader_harness as h
from exercise_submissions import SPINS, YIELDS_FOREVER

ASSIGNMENT = "scatter_any_root"
SOLUTION_CELL = "scatter_solution"
CELLS = ("correctness_tests", "tree_tests", "time_tests")
FULL_MARKS = {"correctness_tests": 4, "tree_tests": 2, "time_tests": 3}


def _halving(cut_expression, reorder=True, words="words=sum(len(x) for x in upper)"):
    """A halving scatter with the given split point, root reordering and size declaration."""
    start = ("[data[(root + j) % p] for j in range(p)]" if reorder else "list(data)")
    return f'''
rel = (me - root) % p
low, high = 0, p
if rel == 0:
    block = {start}
else:
    while True:
        cut = {cut_expression}
        if rel < cut:
            high = cut
        elif rel == cut:
            parent, low = low, cut
            break
        else:
            low = cut
    block = yield recv((parent + root) % p)
while high - low > 1:
    cut = {cut_expression}
    upper = block[cut - low:]
    del block[cut - low:]
    yield send((cut + root) % p, upper{", " + words if words else ""})
    high = cut
return block[0]
'''


LARGER_HALF_AWAY = _halving("low + (high - low) // 2")
NOT_REORDERED = _halving("low + (high - low + 1) // 2", reorder=False)
WITHOUT_WORDS = _halving("low + (high - low + 1) // 2", words="")

BINOMIAL_TREE = '''
rel = (me - root) % p
if rel == 0:
    block = [data[(root + j) % p] for j in range(p)]
    span = 1
    while span < p:
        span *= 2
else:
    span = rel & -rel
    block = yield recv((rel - span + root) % p)
step = span // 2
while step >= 1:                      # the binomial tree, cut at p
    if rel + step < p:
        upper = block[step:]
        del block[step:]
        yield send((rel + step + root) % p, upper, words=sum(len(x) for x in upper))
    step //= 2
return block[0]
'''

# PEs that share a module-level dict instead of sending messages; the messages are dummies
# of the right size, so the tree and the time are right.
SHARES_GLOBALS = '''
board = globals().setdefault("BOARD", {})     # a notice board that all PEs share
if me == root:
    board.update(enumerate(data))
rel = (me - root) % p
low, high = 0, p
if rel != 0:
    while True:
        cut = low + (high - low + 1) // 2
        if rel < cut:
            high = cut
        elif rel == cut:
            parent, low = low, cut
            break
        else:
            low = cut
    yield recv((parent + root) % p)
while high - low > 1:
    cut = low + (high - low + 1) // 2
    yield send((cut + root) % p, [0] * (3 * (high - cut)))
    high = cut
return list(board[me])                        # read from the board, not from a message
'''

CALLS_THE_LIBRARY = '''
from collective_lib.algorithms.gather import binomial_scatter
return (yield from binomial_scatter(me, p, data, root))
'''

CRASHES = '''
block = data[me]
yield send((me + 1) % p, block)
return block
'''


def build_submissions(source):
    return h.submissions(source, {
        "larger_half_away": (SOLUTION_CELL, LARGER_HALF_AWAY),
        "not_reordered": (SOLUTION_CELL, NOT_REORDERED),
        "without_words": (SOLUTION_CELL, WITHOUT_WORDS),
        "binomial_tree": (SOLUTION_CELL, BINOMIAL_TREE),
        "shares_globals": (SOLUTION_CELL, SHARES_GLOBALS),
        "calls_library": (SOLUTION_CELL, CALLS_THE_LIBRARY),
        "crashes": (SOLUTION_CELL, CRASHES),
        "spins": (SOLUTION_CELL, SPINS),
        "yields_forever": (SOLUTION_CELL, YIELDS_FOREVER),
    })


graded = h.graded_fixture(ASSIGNMENT, build_submissions)


def scores(result):
    return {cell: result.scores[cell] for cell in CELLS}


def test_release_hides_solution_and_hidden_tests(graded):
    course, _ = graded
    h.assert_release_hides(course, ASSIGNMENT, [
        "(high - low + 1) // 2", "del block[", "parent, low", "_halving_tree", "range(1, 41)",
        "forbid_library_calls(", "check_pe_isolation", "timed", "every_root", "Model answer", "Rubric",
        "2\\alpha + 3n\\beta"],
        shows=["def halving_scatter(me, p, data, root=0):", "YOUR ANSWER HERE",
               "def direct_scatter(me, p, data, root=0):"], unanswered=1)


def test_solution_gets_full_marks(graded):
    h.assert_solution_full_marks(graded, ASSIGNMENT, CELLS, 12, by_hand={"explain_bound": 3})


@pytest.mark.parametrize("student, lost, message", [
    ("larger_half_away", {"tree_tests": 0, "time_tests": 0},
     "your PEs sent 0->3, 0->1, 1->2, 3->4, 4->5"),
    ("larger_half_away", {"tree_tests": 0, "time_tests": 0},
     "too slow: halving_scatter for p=6, root=0, alpha=1, beta=0.5, ports='full-duplex' takes 12"),
    ("not_reordered", {"correctness_tests": 0}, "Every PE got the message of the PE `root` places away"),
    ("without_words", {"time_tests": 0},
     "the message from PE 0 to PE 3 carries 9 words of data but is sent as"),
    ("binomial_tree", {"tree_tests": 0}, "your PEs sent 0->4, 0->2, 0->1, 2->3, 4->5"),
])
def test_each_bug_costs_only_its_cells(graded, student, lost, message):
    _, results = graded
    result = results[student]
    assert scores(result) == {**FULL_MARKS, **lost}
    cell = next(iter(lost)) if len(lost) == 1 else ("tree_tests" if "->" in message else "time_tests")
    assert message in result.messages(cell), result.messages(cell)


def test_pes_sharing_globals_lose_the_correctness_points(graded):
    # right with all PEs in one process, but the hidden check with each PE in its own process
    # says what is wrong; the tree and the time are right and keep their points
    _, results = graded
    result = results["shares_globals"]
    assert scores(result) == {**FULL_MARKS, "correctness_tests": 0}
    h.assert_isolation_message(result, "correctness_tests")


def test_calling_the_library_gets_no_credit(graded):
    _, results = graded
    result = results["calls_library"]
    assert result.total == 0
    assert "uses the library's `binomial_scatter`" in result.messages("correctness_tests")


@pytest.mark.parametrize("student, cell, message", [
    ("crashes", "correctness_tests", "raised TypeError"),
    ("spins", "correctness_tests", "did not finish within 5 s of real time"),
    ("spins", "time_tests", "never yields an operation"),
    ("yields_forever", "correctness_tests", "keeps yielding operations"),
    ("yields_forever", "time_tests", "keeps yielding operations"),
])
def test_bad_submissions_get_zero_with_a_helpful_message(graded, student, cell, message):
    _, results = graded
    result = results[student]
    assert result.total == 0
    assert message in result.messages(cell)

