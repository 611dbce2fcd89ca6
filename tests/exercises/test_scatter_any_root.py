"""nbgrader round trip of `scatter_any_root` (Chapter 4: scatter on the halving tree, Theorem 13.9).

The source notebook is released with ``nbgrader generate_assignment`` (the release
must hide the solution, the hidden tests and the model answer), and a set of
submissions is autograded in one ``nbgrader autograde`` run: the instructor's
solution (full marks), typical bugs that each cost exactly one cell (the root's list
not reordered, or a crash at p = 1: correctness only; the larger half sent away, or the
library's binomial tree written out: the tree only, since the time is measured where
the halving tree is the binomial tree; the children served nearest first, or by real
rank: the tree only, since the time test holds a tree or order to what it takes itself;
a block sent without its size, or a whole range sent instead of its upper half: the time
only; so do sizes written for n = 3, since the time test has messages of other n), right
programs that send their ranges as flat lists of words or numpy arrays (full marks), stubs
that finish in time 0 without sending the data (no time points: the time counts only the
runs whose messages carry it), a program that calls the library (no credit), and crashing
and endless programs (no marks, and grading still finishes quickly).

Every typical bug is also handed to ``nbgrader validate`` as a student's saved notebook:
the Validate button must not say "Success!" for any of them, and it must for the solution.
"""
from __future__ import annotations

import pytest

import nbgrader_harness as h
from messages import flat
from exercise_submissions import (SHARES_WHEN_IT_CAN, SPINS, YIELDS_FOREVER, message_width_test,
                                  validate_tests, validated_fixture)

ASSIGNMENT = "scatter_any_root"
SOLUTION_CELL = "scatter_solution"
CELLS = ("correctness_tests", "tree_tests", "time_tests")
FULL_MARKS = {"correctness_tests": 4, "tree_tests": 2, "time_tests": 3}
WRITTEN_CELLS = {"explain_bound": 0, "explain_bound_rubric": 0}   # graded by hand later


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

# The halving tree's messages, each carrying the root's whole list in a string declared as 0
# words (a red-team attack): every message then costs a start-up alone.
HIDES_ITS_SIZE = '''
import json
rel = (me - root) % p
low, high = 0, p
if rel == 0:
    everything = [data[(root + j) % p] for j in range(p)]
else:
    while True:
        cut = low + (high - low + 1) // 2
        if rel < cut:
            high = cut
        elif rel == cut:
            parent, low = low, cut
            break
        else:
            low = cut
    everything = json.loads((yield recv((parent + root) % p)))
while high - low > 1:
    cut = low + (high - low + 1) // 2
    yield send((cut + root) % p, json.dumps(everything), words=0)
    high = cut
return everything[rel]
'''

# Right for every p >= 2; at p = 1 the root still makes its first split and sends to itself.
CRASHES_AT_P1 = '''
rel = (me - root) % p
low, high = 0, p
if rel == 0:
    block = [data[(root + j) % p] for j in range(p)]
    cut = (p + 1) // 2                          # the root's first split
    upper = block[cut:]
    del block[cut:]
    yield send((cut + root) % p, upper, words=sum(len(x) for x in upper))
    high = cut
else:
    while True:
        cut = low + (high - low + 1) // 2
        if rel < cut:
            high = cut
        elif rel == cut:
            parent, low = low, cut
            break
        else:
            low = cut
    block = yield recv((parent + root) % p)
while high - low > 1:
    cut = low + (high - low + 1) // 2
    upper = block[cut - low:]
    del block[cut - low:]
    yield send((cut + root) % p, upper, words=sum(len(x) for x in upper))
    high = cut
return block[0]
'''

# How a PE that is not the root finds its range and receives it (the halving tree's).
_FOLLOW_THE_SPLITS = '''
rel = (me - root) % p
low, high = 0, p
if rel == 0:
    block = [data[(root + j) % p] for j in range(p)]
else:
    while True:
        cut = low + (high - low + 1) // 2
        if rel < cut:
            high = cut
        elif rel == cut:
            parent, low = low, cut
            break
        else:
            low = cut
    block = yield recv((parent + root) % p)
'''

# The halving tree with each PE serving its nearest child first: one mistake of order,
# which the tree test charges (the time test holds it to what that order takes).
NEAREST_FIRST = _FOLLOW_THE_SPLITS + '''
splits = []                           # the halving tree's children, farthest first ...
while high - low > 1:
    cut = low + (high - low + 1) // 2
    splits.append((cut, high))
    high = cut
for cut, top in reversed(splits):     # ... served nearest first
    upper = block[cut - low:top - low]
    yield send((cut + root) % p, upper, words=sum(len(x) for x in upper))
return block[0]
'''

# The children served farthest first by real rank: the halving tree's order from root 0
# only, which the tree test sees from the other roots.
REAL_RANK_ORDER = _FOLLOW_THE_SPLITS + '''
splits = []                           # the halving tree's children ...
while high - low > 1:
    cut = low + (high - low + 1) // 2
    splits.append((cut, high))
    high = cut
# ... served farthest first by real rank, not by relative rank (the same from root 0)
for cut, top in sorted(splits, key=lambda split: (split[0] + root) % p, reverse=True):
    upper = block[cut - low:top - low]
    yield send((cut + root) % p, upper, words=sum(len(x) for x in upper))
return block[0]
'''

# Right: a range sent as a flat list of its words (one word per number, the default).
FLAT_LIST = _FOLLOW_THE_SPLITS.replace(
    "    block = yield recv((parent + root) % p)\n", """    flat = yield recv((parent + root) % p)
    n = len(flat) // (high - low)
    block = [flat[i:i + n] for i in range(0, len(flat), n)]
""") + '''
while high - low > 1:
    cut = low + (high - low + 1) // 2
    upper = block[cut - low:]
    del block[cut - low:]
    yield send((cut + root) % p, [x for message in upper for x in message])
    high = cut
return block[0]
'''

# Right: a range sent as a numpy array of messages, with words=upper.size.
NUMPY_ROWS = '''
import numpy as np
rel = (me - root) % p
low, high = 0, p
if rel == 0:
    block = np.array([data[(root + j) % p] for j in range(p)])
else:
    while True:
        cut = low + (high - low + 1) // 2
        if rel < cut:
            high = cut
        elif rel == cut:
            parent, low = low, cut
            break
        else:
            low = cut
    block = np.asarray((yield recv((parent + root) % p)))
while high - low > 1:
    cut = low + (high - low + 1) // 2
    upper = block[cut - low:]
    block = block[:cut - low]
    yield send((cut + root) % p, upper, words=upper.size)
    high = cut
return block[0].tolist()
'''

# The halving tree, but every PE sends its whole range, not the upper half: more words
# than the bound allows (the time test's).
SENDS_WHOLE_RANGE = _FOLLOW_THE_SPLITS.replace(
    "    block = yield recv((parent + root) % p)\n", """    block = yield recv((parent + root) % p)
    block = block[cut - parent:]      # the sender's whole range came: keep mine
""") + '''
while high - low > 1:
    cut = low + (high - low + 1) // 2
    yield send((cut + root) % p, list(block), words=sum(len(x) for x in block))
    del block[cut - low:]
    high = cut
return block[0]
'''


# Stubs that finish in time 0 (a lazy student's shortcut): the time test once judged every
# run that finishes, whatever its results, and gave them its 3 points. One never sends ...
STUB = '''
return data[me] if data is not None else None
yield
'''

# ... the other sends the halving tree's messages empty (the tree is right, the time test
# must not credit a time without the root's (p - 1) n words).
EMPTY_MESSAGES = _FOLLOW_THE_SPLITS.replace(
    "    block = [data[(root + j) % p] for j in range(p)]\n", "    pass\n").replace(
    "    block = yield recv(", "    yield recv(") + '''
while high - low > 1:
    cut = low + (high - low + 1) // 2
    yield send((cut + root) % p, None, words=0)
    high = cut
return None
'''

# The sizes written for n = 3 words per message: right only where every message has 3.
WORDS_FOR_N_3 = _halving("low + (high - low + 1) // 2", words="words=3 * len(upper)")


# The chapter's direct scatter, the example above the task: right results, no tree.
DIRECT = '''
return (yield from direct_scatter(me, p, data, root))
'''

CALLS_THE_LIBRARY = '''
from collective_lib.algorithms.gather import binomial_scatter
return (yield from binomial_scatter(me, p, data, root))
'''

# The halving tree's parents, written by the student, handed to the library's generic tree
# broadcast (Sanders' Tree::pipelinedBroadcast for any parent table) with the ranks numbered
# backwards, so that its children, served in increasing order, go largest first: the whole
# list goes down the halving tree in its order. Right results and the tree test's messages
# (only the sizes are wrong), but the library's program.
GENERIC_TREE = '''
from collective_lib.embeddings import embedded_tree_broadcast
from collective_lib.ops import Recv
parent = [None] * p                       # the halving tree, in relative ranks
def split(low, high):
    while high - low > 1:
        cut = low + (high - low + 1) // 2
        parent[cut] = low
        split(cut, high)
        high = cut
split(0, p)
table = [None if parent[p - 1 - j] is None else p - 1 - parent[p - 1 - j] for j in range(p)]
inner = embedded_tree_broadcast(p - 1 - (me - root) % p, p, data, table)
reply = None
try:
    while True:
        op = inner.send(reply)
        if isinstance(op, Recv):
            reply = yield recv((p - 1 - op.src + root) % p)
        else:
            reply = yield send((p - 1 - op.dst + root) % p, op.data)
except StopIteration as stop:
    return stop.value[me]
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
        "shares_when_it_can": (SOLUTION_CELL, SHARES_WHEN_IT_CAN),
        "hides_its_size": (SOLUTION_CELL, HIDES_ITS_SIZE),
        "calls_library": (SOLUTION_CELL, CALLS_THE_LIBRARY),
        "library_tree_broadcast": (SOLUTION_CELL, GENERIC_TREE),
        "crashes": (SOLUTION_CELL, CRASHES),
        "crashes_at_p1": (SOLUTION_CELL, CRASHES_AT_P1),
        "nearest_first": (SOLUTION_CELL, NEAREST_FIRST),
        "real_rank_order": (SOLUTION_CELL, REAL_RANK_ORDER),
        "flat_list": (SOLUTION_CELL, FLAT_LIST),
        "numpy_rows": (SOLUTION_CELL, NUMPY_ROWS),
        "sends_whole_range": (SOLUTION_CELL, SENDS_WHOLE_RANGE),
        "direct": (SOLUTION_CELL, DIRECT),
        "stub": (SOLUTION_CELL, STUB),
        "empty_messages": (SOLUTION_CELL, EMPTY_MESSAGES),
        "words_for_n_3": (SOLUTION_CELL, WORDS_FOR_N_3),
        "spins": (SOLUTION_CELL, SPINS),
        "yields_forever": (SOLUTION_CELL, YIELDS_FOREVER),
    })


graded = h.graded_fixture(ASSIGNMENT, build_submissions, spinning=["spins"])



# Validate: the typical bugs as a student's saved notebooks (the written answer filled in, so
# that only the code decides), each with a message Validate must show.
VALIDATE = {
    "larger_half_away": (LARGER_HALF_AWAY, "your PEs sent 0->3, 0->1, 1->2, 3->4, 4->5"),
    "not_reordered": (NOT_REORDERED, "Every PE got the message of the PE `root` places away"),
    "without_words": (WITHOUT_WORDS, "for p=8, root=0: the message from PE 0 to PE 4"),
    "binomial_tree": (BINOMIAL_TREE, "your PEs sent 0->4, 0->2, 0->1, 2->3, 4->5"),
    "crashes_at_p1": (CRASHES_AT_P1, "halving_scatter for p=1, root=0 raised ValueError"),
    "crashes": (CRASHES, "raised TypeError"),
    "spins": (SPINS, "halving_scatter did not finish within 5 s"),
    "yields_forever": (YIELDS_FOREVER, "halving_scatter for p=6, root=0 did not finish"),
    # the library's binomial scatter is correct, but not the halving tree
    "calls_library": (CALLS_THE_LIBRARY, "your PEs sent 0->4, 0->2, 0->1, 2->3, 4->5"),
    "nearest_first": (NEAREST_FIRST, "your PEs sent 0->1, 0->2, 0->3, 3->4, 3->5"),
    # the whole message, not cut at Validate's 90 characters
    # the sizes hold for n = 3 only: a visible case has n = 5
    "words_for_n_3": (WORDS_FOR_N_3, "halving_scatter for p=4, root=1: the message from PE 1 "
                                     "to PE 3 carries 10 words of data but is sent as 6 words"),
    "sends_whole_range": (SENDS_WHOLE_RANGE,
                          "too slow: halving_scatter for p=8, root=0, alpha=1, beta=0.5, "
                          "n=3: it takes 24, more than ceil(log2 p) alpha + (p - 1) n beta "
                          "(Theorem 13.9) = 13.5 (the PEs sent 7 messages)."),
}
#: Right programs whose messages hold the input messages in other forms: Validate passes
#: them.
RIGHT_IN_OTHER_FORMS = {"flat_list": FLAT_LIST, "numpy_rows": NUMPY_ROWS}
WRITTEN = {"explain_bound": "By induction on p: the root sends the upper half first."}


validated = validated_fixture(ASSIGNMENT, lambda source: h.submissions(
    source, {**{student: (SOLUTION_CELL, code) for student, (code, _) in VALIDATE.items()},
             **{student: (SOLUTION_CELL, code)
                for student, code in RIGHT_IN_OTHER_FORMS.items()}}),
    [*VALIDATE, *RIGHT_IN_OTHER_FORMS], written=WRITTEN)


def test_release_hides_solution_and_hidden_tests(graded):
    course, _ = graded
    h.assert_release_hides(course, ASSIGNMENT, [
        "(high - low + 1) // 2", "del block[", "parent, low", "_halving_tree", "range(1, 41)",
        "forbid_library_calls(", "check_pe_isolation", "check_enough_finished(", "every_root",
        "Model answer", "Rubric",
        "2\\alpha + 3n\\beta"],
        shows=["def halving_scatter(me, p, data, root=0):", "YOUR ANSWER HERE",
               "def direct_scatter(me, p, data, root=0):"], unanswered=1)


def test_solution_gets_full_marks(graded):
    h.assert_solution_full_marks(graded, ASSIGNMENT, CELLS, 12, by_hand={"explain_bound": 3})


@pytest.mark.parametrize("student, lost, cell, message", [
    # the time is measured on p = 2^d, where both halves are equal: the tree test charges it
    ("larger_half_away", {"tree_tests": 0}, "tree_tests",
     "your PEs sent 0->3, 0->1, 1->2, 3->4, 4->5"),
    ("not_reordered", {"correctness_tests": 0}, "correctness_tests",
     "Every PE got the message of the PE `root` places away"),
    # right for p >= 2: neither the tree nor the time test charges the crash again
    ("crashes_at_p1", {"correctness_tests": 0}, "correctness_tests",
     "halving_scatter for p=1, root=0 raised ValueError"),
    ("without_words", {"time_tests": 0}, "time_tests",
     "the message from PE 0 to PE 4 carries 12 words of data but is sent as"),
    ("binomial_tree", {"tree_tests": 0}, "tree_tests",
     "your PEs sent 0->4, 0->2, 0->1, 2->3, 4->5"),
    # an order of sends other than the halving tree's: the tree test, not the time test
    # too (which holds the time to what that order takes)
    ("nearest_first", {"tree_tests": 0}, "tree_tests",
     "your PEs sent 0->1, 0->2, 0->3, 3->4, 3->5"),
    # right from root 0: the tree test sees it from the other roots
    ("real_rank_order", {"tree_tests": 0}, "tree_tests",
     "for p = 4, root 2 your PEs sent (in ranks relative to the root) 0->1, 0->2, 2->3"),
    # the halving tree's messages with more words than they need: the time
    # sizes written for n = 3: the time test has cases with n = 1, 2, 5 (and a visible one)
    ("words_for_n_3", {"time_tests": 0}, "time_tests",
     "halving_scatter for p=4, root=1: the message from PE 1 to PE 3 carries 10 words of "
     "data but is sent as 6 words"),
    ("sends_whole_range", {"time_tests": 0}, "time_tests",
     "too slow: halving_scatter for p=8, root=0, alpha=1, beta=0.5, n=3: it takes 24, more "
     "than ceil(log2 p) alpha + (p - 1) n beta (Theorem 13.9) = 13.5"),
])
def test_each_bug_costs_exactly_one_cell(graded, student, lost, cell, message):
    _, results = graded
    result = results[student]
    assert result.scores == {**FULL_MARKS, **WRITTEN_CELLS, **lost}, result.messages()
    assert message in flat(result.messages(cell)), result.messages(cell)


def test_the_direct_scatter_loses_the_tree_and_the_time(graded):
    # the example above the task is no other order of the halving tree: no tree of log p
    # levels, so the time test holds it to the halving tree's time (it is not the task)
    _, results = graded
    result = results["direct"]
    assert result.scores == {**FULL_MARKS, **WRITTEN_CELLS, "tree_tests": 0,
                             "time_tests": 0}, result.messages()
    assert "more than ceil(log2 p) alpha + (p - 1) n beta (Theorem 13.9)" in flat(
        result.messages("time_tests"))


@pytest.mark.parametrize("student, lost", [
    ("stub", {"correctness_tests": 0, "tree_tests": 0, "time_tests": 0}),
    # the halving tree's messages, empty: the tree test's points stay, the time's go
    ("empty_messages", {"correctness_tests": 0, "time_tests": 0}),
])
def test_a_stub_earns_no_time(graded, student, lost):
    # it finishes in time 0, within any bound: its messages carry none of the root's words,
    # so its time says nothing (the audit of the ninth round gave the stub 3/9, the empty
    # messages 5/9)
    _, results = graded
    result = results[student]
    assert result.scores == {**FULL_MARKS, **WRITTEN_CELLS, **lost}, result.messages()
    shown = flat(result.messages("time_tests"))
    assert ("the time is measured on the runs that finish with messages that carry the data, "
            "and halving_scatter did so on 0 of the 42 cases with p >= 2: for p = 8, root 0 "
            "the root sent 0 words of the messages, but the (p - 1) n = 21 words of the other "
            "PEs' messages must leave it. Its results cannot be right then (see the "
            "correctness test), so the time it shows says nothing.") in shown, shown
    assert result.cell("time_tests").metadata["collective_lib"] == {
        "failure": "too_few_finished"}


@pytest.mark.parametrize("student", sorted(RIGHT_IN_OTHER_FORMS))
def test_messages_as_flat_lists_or_numpy_arrays_get_full_marks(graded, validated, student):
    # a range sent as a flat list of its words (counted one word per number, as the task
    # says) or as a numpy array of its messages (words=upper.size) is right, and its size
    # can be counted: no cell fails, and Validate says "Success!"
    _, results = graded
    h.assert_full_marks(results[student])
    assert validated[student].passed, validated[student].text


def test_words_hidden_in_a_string_lose_the_time_points(graded):
    # the tree and the results are right, but a message of the root's whole list in a string,
    # declared as 0 words, cannot be measured: a message holds the messages themselves
    _, results = graded
    result = results["hides_its_size"]
    assert result.scores == {**FULL_MARKS, **WRITTEN_CELLS, "time_tests": 0}
    assert result.cell("time_tests").metadata["collective_lib"] == {"failure": "message_size"}
    assert ("the size of the message from PE 0 to PE 4 cannot be checked: it holds '[["
            in flat(result.messages("time_tests")))


@pytest.mark.parametrize("student", ["shares_globals", "shares_when_it_can"])
def test_pes_sharing_globals_lose_every_point_of_their_runs(graded, student):
    # right with all PEs in one process, and "shares_when_it_can" even with each PE in its
    # own process (it behaves when alone); but a PE of a graded run, replayed alone from the
    # same data and messages, behaves otherwise, and none of its runs counts
    _, results = graded
    result = results[student]
    assert result.scores == {**WRITTEN_CELLS, **{cell: 0 for cell in CELLS}}
    for cell in CELLS:
        h.assert_isolation_message(result, cell)
        assert result.cell(cell).metadata["collective_lib"] == {"failure": "shared_state"}


def test_calling_the_library_gets_no_credit(graded):
    _, results = graded
    result = results["calls_library"]
    assert result.total == 0
    assert "uses the library's `binomial_scatter`" in flat(result.messages("correctness_tests"))


def test_a_scatter_through_the_librarys_tree_broadcast_gets_no_credit(graded):
    # The student's halving tree handed to the library's generic tree broadcast got 6/9 (the
    # results and the tree test's messages; only the sizes were wrong): the library's
    # programs and tree helpers are forbidden as binomial_scatter is (the time test's
    # visible check already refuses the sizes)
    _, results = graded
    result = results["library_tree_broadcast"]
    assert result.total == 0, result.scores
    for cell in ("correctness_tests", "tree_tests"):
        shown = flat(result.messages(cell))
        assert ("halving_scatter uses the library's `embedded_tree_broadcast`; the task asks "
                "for the tree arithmetic and the messages in your own code.") in shown, shown


@pytest.mark.parametrize("student, cell, message", [
    ("crashes", "correctness_tests", "raised TypeError"),
    ("spins", "correctness_tests", "did not finish within 5 s of real time"),
    ("spins", "time_tests", "never yields an operation"),
    ("yields_forever", "correctness_tests", "keeps yielding operations"),
    # an endless program ends no case: the time test stops at the first
    ("yields_forever", "time_tests", "keeps yielding operations"),
])
def test_bad_submissions_get_zero_with_a_helpful_message(graded, student, cell, message):
    _, results = graded
    result = results[student]
    assert result.total == 0
    assert message in flat(result.messages(cell)), result.messages(cell)


test_validate_passes_the_solution, test_validate_reports_each_named_bug = validate_tests(
    {student: v[1] for student, v in VALIDATE.items()})


def test_the_visible_checks_say_what_they_do_not_check(graded):
    # PEs that share globals pass every visible check: the release says so where it runs them
    course, _ = graded
    released = flat(h.released_text(course, ASSIGNMENT)).replace('" "', "")
    assert ("Not checked here (the graded tests check them): every p up to 40 (every root up to "
            "p = 16, six" in released and "roots beyond), each PE in its own process" in released)


def test_no_message_answers_the_written_question(graded):
    # the written question asks why the root's sends meet the bound and for a p where the
    # larger half exceeds it, with both times: no feedback may say either
    _, results = graded
    for student, result in results.items():
        assert "The root's sends alone take" not in result.messages(), student
        if student not in ("sends_whole_range", "direct"):    # slower than the bound allows
            assert "too slow" not in result.messages("time_tests"), student


def test_the_class_report_counts_the_failures_by_cause(graded):
    # python -m collective_lib.autograde.misconceptions: the kinds the checker recorded in
    # the autograded notebooks, per graded cell, with counts and one real message each
    from collective_lib.autograde.misconceptions import failures_by_cause, failures_text
    course, results = graded
    cells = {cell.grade_id: cell for cell in failures_by_cause(ASSIGNMENT, course)}
    assert list(cells) == list(CELLS)
    assert all(cell.submissions == len(results) for cell in cells.values())
    causes = {gid: {c.kind: (c.count, c.example_student) for c in cell.causes}
              for gid, cell in cells.items()}
    assert causes["correctness_tests"] == {
        "exception": (2, "crashes"), "wrong_result": (3, "empty_messages"),
        "shared_state": (2, "shares_globals"), "time_limit": (1, "spins"),
        "operation_limit": (1, "yields_forever"), "uses_library": (2, "calls_library")}
    # a stub's runs finish but carry nothing: too few count, as where the program crashes
    assert causes["time_tests"] == {
        "message_size": (4, "hides_its_size"), "time_limit": (1, "spins"),
        "too_slow": (2, "direct"),
        "operation_limit": (1, "yields_forever"), "too_few_finished": (3, "crashes"),
        "uses_library": (1, "calls_library"), "shared_state": (2, "shares_globals")}
    # the tree is compared by the test cell's own checks, the visible one (p = 6) first: a
    # wrong tree (the library's binomial tree too) is a wrong form, and a program that does
    # not end on two p is told so with the kind of its endless loop
    assert causes["tree_tests"] == {
        "wrong_form": (7, "binomial_tree"), "time_limit": (1, "spins"),
        "operation_limit": (1, "yields_forever"), "too_few_finished": (1, "crashes"),
        "shared_state": (2, "shares_globals"), "uses_library": (1, "library_tree_broadcast")}
    assert results["larger_half_away"].cell("tree_tests").metadata["collective_lib"] == {
        "failure": "wrong_form"}
    text = failures_text(ASSIGNMENT, list(cells.values()))
    assert "correctness_tests (4 points): failed in 11 of 23 submissions (48%)" in text
    assert ("e.g. (hides_its_size) halving_scatter for p=8, root=0: the size of the message "
            "from PE 0 to PE 4 cannot be checked: it holds '[[") in flat(text)
    # the kind is kept beside the message in the autograded notebook, and only there
    assert results["spins"].cell("tree_tests").metadata["collective_lib"] == {
        "failure": "time_limit"}
    assert "collective_lib" not in results["solution"].cell("time_tests").metadata


test_no_line_of_a_message_is_cut_by_validate = message_width_test()
