"""nbgrader round trip of `reverse_send_order` (Sanders, Exercise 13.1): release, then autograde.

The source notebook is released with ``nbgrader generate_assignment`` (the release
must hide solutions and hidden tests), and a set of submissions is autograded in
one ``nbgrader autograde`` run: the instructor's solution (full marks on every
autograded cell), a wrong program (partial marks, with the helpful message in the
failing cell's output), another binomial tree served nearest first (the time cell checks
every PE's parent), one that calls the library or its tree helpers (no credit: the tree
arithmetic is the exercise), and crashing, deadlocking and endless ones (low marks, and
grading still finishes quickly because the exercises' guards stop them).
"""
from __future__ import annotations

import pytest

import nbgrader_harness as h
from messages import flat
from collective_lib import CostModel, catalog, simulate
from exercise_references import load_reference
from exercise_submissions import (SPINS, YIELDS_FOREVER, message_width_test, validate_tests,
                                  validated_fixture, visible_kind_test)

ASSIGNMENT = "reverse_send_order"
SOLUTION_CELL = "smallest_first_solution"


LARGEST_FIRST = '''
rel = (me - root) % p
span = 1
if rel == 0:
    while span < p:
        span *= 2
else:
    span = rel & -rel
    data = yield recv((rel - span + root) % p)
step = span // 2
while step >= 1:                      # the library's order: farthest child first
    if rel + step < p:
        yield send((rel + step + root) % p, data)
    step //= 2
return data
'''

CALLS_THE_LIBRARY = '''
from collective_lib.algorithms.broadcast import binomial_broadcast
return (yield from binomial_broadcast(me, p, data, root))
'''

CRASHES = '''
rel = (me - root) % p
children = [rel + 2 ** j for j in range(p)]
return children[p] / 0
yield
'''

DEADLOCKS = '''
data = yield recv((me + 1) % p)       # everybody waits for the right neighbour
yield send((me - 1) % p, data)
return data
'''

# PEs that share a module-level dict instead of sending messages; the messages are
# dummies, so the time is right.
SHARES_GLOBALS = '''
board = globals().setdefault("BOARD", {})     # a notice board that all PEs share
if me == root:
    board["message"] = data
rel = (me - root) % p
if rel == 0:
    span = 1
    while span < p:
        span *= 2
else:
    span = rel & -rel
    yield recv((rel - span + root) % p)       # a dummy message, only for the time
step = 1
while step < span:
    if rel + step < p:
        yield send((rel + step + root) % p, [0] * len(board["message"]))
    step *= 2
return list(board["message"])                 # read from the board, not from a message
'''


# Typical single bugs, each of which must cost only the cell that grades it.
NO_BOUNDS_CHECK = '''
rel = (me - root) % p
span = 1
if rel == 0:
    while span < p:
        span *= 2
else:
    span = rel & -rel
    data = yield recv((rel - span + root) % p)
step = 1
while step < span:                    # forgets that the child rel + step may not exist
    yield send((rel + step + root) % p, data)
    step *= 2
return data
'''

# Right for every p >= 2; the number of bits of p - 1 is math.log2(0) for p = 1.
CRASHES_AT_P_1 = '''
import math
rel = (me - root) % p
if rel == 0:
    span = 2 ** (int(math.log2(p - 1)) + 1)   # the bits of p - 1: a ValueError for p = 1
else:
    span = rel & -rel
    data = yield recv((rel - span + root) % p)
step = 1
while step < span:
    if rel + step < p:
        yield send((rel + step + root) % p, data)
    step *= 2
return data
'''

IGNORES_THE_ROOT = '''
span = 1                              # as if the root were always PE 0
if me == 0:
    while span < p:
        span *= 2
else:
    span = me & -me
    data = yield recv(me - span)
step = 1
while step < span:
    if me + step < p:
        yield send(me + step, data)
    step *= 2
return data
'''

# Right results, a wrong tree where the time cell once looked at none (it timed only
# p = 2**d from root 0): for p not a power of two the root sends to every PE itself ...
POW2_ONLY = '''
if p & (p - 1):                       # not a power of two: the root sends to everyone
    if me != root:
        return (yield recv(root))
    for i in range(1, p):
        yield send((root + i) % p, data)
    return data
rel = (me - root) % p
span = p if rel == 0 else rel & -rel
if rel:
    data = yield recv((rel - span + root) % p)
step = 1
while step < span:
    yield send((rel + step + root) % p, data)
    step *= 2
return data
'''

# ... and the children served in increasing real rank, not relative rank (the same from
# root 0).
REAL_RANK_ORDER = '''
rel = (me - root) % p
if rel == 0:
    span = 1
    while span < p:
        span *= 2
else:
    span = rel & -rel
    data = yield recv((rel - span + root) % p)
children = []
step = 1
while step < span:
    if rel + step < p:
        children.append((rel + step + root) % p)
    step *= 2
for child in sorted(children):        # nearest first, but by real rank
    yield send(child, data)
return data
'''

# The chapter's largest-first broadcast with the children reversed, on the library's tree
# helpers: right, but the task asks for the tree arithmetic written by the student.
COPIED_FROM_THE_LIBRARY = '''
from collective_lib.trees import binomial_children, binomial_parent
i = (me - root) % p
parent = binomial_parent(i)
if parent is not None:
    data = yield recv((parent + root) % p)
for c in reversed(binomial_children(i, p)):
    yield send((c + root) % p, data)
return data
'''

# The library's helpers again, the children sorted (nearest first): right, the tree not
# the student's.
PARENT_AND_SORTED_CHILDREN = '''
from collective_lib.trees import binomial_children, binomial_parent
rel = (me - root) % p
parent = binomial_parent(rel)
if parent is not None:
    data = yield recv((parent + root) % p)
for child in sorted(binomial_children(rel, p)):
    yield send((child + root) % p, data)
return data
'''

# Another binomial tree, the recursive-doubling one: the parent is rel with its top bit
# cleared, the children rel + 2^j for 2^j > rel, nearest first. Right results, increasing
# relative ranks, p - 1 messages and at most ceil(log2 p) children per PE, but not the
# task's tree (whose nearest child has the smallest subtree): it takes ceil(log2 p) steps.
RECURSIVE_DOUBLING_TREE = '''
rel = (me - root) % p
if rel:
    parent = rel - (1 << (rel.bit_length() - 1))
    data = yield recv((parent + root) % p)
step = 1 << rel.bit_length() if rel else 1
while rel + step < p:
    yield send((rel + step + root) % p, data)
    step *= 2
return data
'''

# The same wrong tree only beyond p = 8, where the visible checks do not look: the hidden
# time checks must name the tree, not the order, as what differs.
WRONG_TREE_BEYOND_8 = '''
rel = (me - root) % p
if p <= 8:                            # the task's tree, nearest child first
    span = 1
    if rel == 0:
        while span < p:
            span *= 2
    else:
        span = rel & -rel
        data = yield recv((rel - span + root) % p)
    step = 1
    while step < span:
        if rel + step < p:
            yield send((rel + step + root) % p, data)
        step *= 2
    return data
if rel:                               # the recursive-doubling tree
    parent = rel - (1 << (rel.bit_length() - 1))
    data = yield recv((parent + root) % p)
step = 1 << rel.bit_length() if rel else 1
while rel + step < p:
    yield send((rel + step + root) % p, data)
    step *= 2
return data
'''

# The library's generic tree broadcast (Sanders' Tree::pipelinedBroadcast for any parent
# table) on the binomial tree's parents: its children come in increasing order, nearest
# first in relative ranks. Right, in the task's tree and order, but the library's program.
GENERIC_TREE = '''
from collective_lib.embeddings import embedded_tree_broadcast
from collective_lib.ops import Recv
parent = [None] + [i - (i & -i) for i in range(1, p)]      # relative ranks
inner = embedded_tree_broadcast((me - root) % p, p, data, parent)
reply = None
try:
    while True:
        op = inner.send(reply)
        if isinstance(op, Recv):
            reply = yield recv((op.src + root) % p)
        else:
            reply = yield send((op.dst + root) % p, op.data)
except StopIteration as stop:
    return stop.value
'''

# Any collective of the library driven to broadcast: an allreduce that keeps the first
# value it meets ends with the root's message on every PE (the correctness cell's points).
DRIVES_AN_ALLREDUCE = '''
from collective_lib.algorithms.allreduce import recursive_doubling_allreduce
first = lambda a, b: a if a is not None else b
return (yield from recursive_doubling_allreduce(me, p, data, op=first))
'''

# The library reached through a computed name: a right broadcast (in the wrong order), and
# cells a human should look at.
COMPUTED_NAME = '''
import importlib
module = importlib.import_module("collective_lib.algorithms." + "broadcast")
program = getattr(module, "binomial_" + "broadcast")
return (yield from program(me, p, data, root))
'''


# The task's tree in helpers of one's own at the top of the cell, named as the library
# names its own (binomial_parent, binomial_children): an honest answer, refused as "uses the
# library's `binomial_children`" while the checks forbade the library's helpers by name.
OWN_HELPERS_CELL = '''from collective_lib import recv, send


def binomial_parent(i):
    return i - (i & -i) if i else None


def binomial_children(i, p):
    span = i & -i if i else 1 << max(p - 1, 1).bit_length()
    children, step = [], 1
    while step < span:
        if i + step < p:
            children.append(i + step)
        step *= 2
    return children


def binomial_broadcast_smallest_first(me, p, data, root=0):
    """Binomial tree broadcast from `root` in which every PE serves its nearest child first."""
    rel = (me - root) % p
    if binomial_parent(rel) is not None:
        data = yield recv((binomial_parent(rel) + root) % p)
    for child in binomial_children(rel, p):
        yield send((child + root) % p, data)
    return data
'''


# The same helpers memoized, and the parent as a lambda: Validate refused them and the own
# helpers above ("uses the library's `binomial_children` (in binomial_children)", the name on
# a helper's own `def` line), autograde the lambda too (0/7).
OWN_HELPERS = {
    "own_helpers": OWN_HELPERS_CELL,
    "own_helpers_lru_cache": OWN_HELPERS_CELL.replace(
        "from collective_lib import recv, send\n",
        "import functools\n\nfrom collective_lib import recv, send\n").replace(
        "def binomial_children(i, p):",
        "@functools.lru_cache(maxsize=None)\ndef binomial_children(i, p):").replace(
        "    return children\n", "    return tuple(children)\n"),
    "own_helpers_lambda": OWN_HELPERS_CELL.replace(
        "def binomial_parent(i):\n    return i - (i & -i) if i else None\n",
        "binomial_parent = lambda i: i - (i & -i) if i else None\n"),
}


def build_submissions(source):
    built = _build_submissions(source)
    # the helpers stand at the top of the cell, outside the solution's region
    for student, cell in OWN_HELPERS.items():
        built[student] = own = h.replace_solution(source, SOLUTION_CELL, "pass")
        h.find_cell(own, SOLUTION_CELL).source = cell
    return built


def _build_submissions(source):
    return h.submissions(source, {
        "largest_first": (SOLUTION_CELL, LARGEST_FIRST),
        "calls_library": (SOLUTION_CELL, CALLS_THE_LIBRARY),
        "crashes": (SOLUTION_CELL, CRASHES),
        "deadlocks": (SOLUTION_CELL, DEADLOCKS),
        "spins": (SOLUTION_CELL, SPINS),
        "yields_forever": (SOLUTION_CELL, YIELDS_FOREVER),
        "shares_globals": (SOLUTION_CELL, SHARES_GLOBALS),
        "no_bounds_check": (SOLUTION_CELL, NO_BOUNDS_CHECK),
        "ignores_root": (SOLUTION_CELL, IGNORES_THE_ROOT),
        "crashes_at_p1": (SOLUTION_CELL, CRASHES_AT_P_1),
        "pow2_only": (SOLUTION_CELL, POW2_ONLY),
        "real_rank_order": (SOLUTION_CELL, REAL_RANK_ORDER),
        "copied": (SOLUTION_CELL, COPIED_FROM_THE_LIBRARY),
        "parent_and_sorted": (SOLUTION_CELL, PARENT_AND_SORTED_CHILDREN),
        "recursive_doubling": (SOLUTION_CELL, RECURSIVE_DOUBLING_TREE),
        "wrong_tree_beyond_8": (SOLUTION_CELL, WRONG_TREE_BEYOND_8),
        "computed_name": (SOLUTION_CELL, COMPUTED_NAME),
        "generic_tree": (SOLUTION_CELL, GENERIC_TREE),
        "drives_allreduce": (SOLUTION_CELL, DRIVES_AN_ALLREDUCE),
    })


graded = h.graded_fixture(ASSIGNMENT, build_submissions, spinning=["spins"])


def test_release_hides_solution_and_hidden_tests(graded):
    course, _ = graded
    h.assert_release_hides(course, ASSIGNMENT, [
        "rel & -rel", "span *= 2", "step *= 2", "(rel + step + root) % p",
        "reversed(", "[::-1]", "children_order", "d * (d + 1)", "d(d+1)",
        "largest_first = catalog", "0.45 * math.log2", "range(1, 41)",
        "The root has $d$ children", "seed=132", "range(1, 8)"],
        shows=["def binomial_broadcast_smallest_first(me, p, data, root=0):", "YOUR ANSWER HERE",
               # the visible quick checks stay
               "check_broadcast_program(binomial_broadcast_smallest_first, [8, 1, 2, 3, 5, 6]",
               "forbid_library_calls(binomial_broadcast_smallest_first",
               "check_pe_isolation(binomial_broadcast_smallest_first"],
        unanswered=1)


def test_no_message_gives_the_number_of_steps_away(graded):
    """Neither the release nor a failing check states how long smallest-first takes: that is
    what the written question asks (the old texts said "should take 6 steps" and
    "d(d+1)/2 (alpha + beta m)")."""
    course, results = graded
    text = h.released_text(course, ASSIGNMENT)
    for give_away in ("6 steps", "would need 3", "d(d+1)", "d (d + 1)", "(d+1)/2"):
        assert give_away not in text, give_away
    for student in ("largest_first", "computed_name"):
        shown = results[student].messages("time_tests")
        for give_away in ("d(d+1)", "(d+1)/2", "should take", "times slower"):
            assert give_away not in shown, (student, give_away, shown)


@pytest.mark.parametrize("student", sorted(OWN_HELPERS))
def test_helpers_of_ones_own_named_as_the_librarys_keep_full_marks(graded, student):
    _, results = graded
    assert "@functools.lru_cache" in OWN_HELPERS["own_helpers_lru_cache"]
    assert "binomial_parent = lambda" in OWN_HELPERS["own_helpers_lambda"]
    h.assert_full_marks(results[student])


def test_solution_gets_full_marks(graded):
    h.assert_solution_full_marks(graded, ASSIGNMENT, {"correctness_tests", "time_tests"},
                                 10, by_hand={"explain_log_squared": 3})


FULL = {"correctness_tests": 4, "time_tests": 3, "explain_log_squared": 0,
        "explain_log_squared_rubric": 0}


@pytest.mark.parametrize("student, lost, message", [
    ("largest_first", "time_tests",
     "for p = 8, root 0, PE 0 sends to the PEs [4, 2, 1] in this order, but the task asks every "
     "PE to serve its children nearest first"),
    # right results with a wrong tree for other p or roots: the time cell's, which checks
    # the order and the number of children on p = 6, root 4 (and times every p up to 40)
    ("pow2_only", "time_tests",
     "for p = 6, root 4, PE 4 sends 5 messages, but in a binomial tree"),
    ("real_rank_order", "time_tests",
     "that is to the relative ranks [2, 4, 1]; the task asks every PE to"),
    # another binomial tree with right results, served nearest first: the time cell's,
    # which checks every PE's parent on p = 8 (Validate said "Success!" once) ...
    ("recursive_doubling", "time_tests",
     "for p = 8, root 0, PE 3 received the message from PE 1, but in the task's\nbinomial "
     "tree its parent is PE 2"),
    # ... and every timed run after hand-in, naming the tree, not the order, as what differs
    ("wrong_tree_beyond_8", "time_tests",
     "for p = 16, root 0, PE 3 received the message from PE 1, but in the task's\nbinomial "
     "tree its parent is PE 2"),
    # the time cell skips the runs whose results are wrong: none of these bugs costs it
    ("no_bounds_check", "correctness_tests",
     "binomial_broadcast_smallest_first for p=3, root=0: "),
    ("ignores_root", "correctness_tests",
     "The same p worked with root 0, but not with root 1: does each PE compute its rank "
     "relative to the root"),
    ("crashes_at_p1", "correctness_tests", "for p=1, root=0 raised ValueError"),
])
def test_one_bug_costs_one_cell(graded, student, lost, message):
    _, results = graded
    result = results[student]
    assert result.scores == {**FULL, lost: 0}
    # compared with every run of white space made one blank: messages break their lines
    assert " ".join(message.split()) in " ".join(result.messages(lost).split()), \
        result.messages(lost)


# -- what the Validate button says (the visible checks, in a student's saved notebook) --------

#: Submissions whose bug a student's Validate must report (all but the copies of the library,
#: which are right and only flagged for a human to judge), with the start of what it says.
#: (spins is left out to keep the test short: the real-time limit that stops yields_forever
#: and crashes stops it, after 5 s in each cell.)
CAUGHT_BY_VALIDATE = {
    "largest_first": "for p = 8, root 0, PE 0 sends to the PEs [4, 2, 1] in this order",
    "calls_library": "binomial_broadcast_smallest_first uses the library's "
                     "`binomial_broadcast` (in binomial_broadcast_smallest_first);",
    "crashes": "binomial_broadcast_smallest_first for p=8, root=0 raised IndexError",
    "deadlocks": "deadlock in binomial_broadcast_smallest_first for p=8, root=0",
    "yields_forever": "binomial_broadcast_smallest_first for p=8, root=0 did not",
    "shares_globals": "binomial_broadcast_smallest_first for p=3, root=1: PE 0 returned a",
    "no_bounds_check": "binomial_broadcast_smallest_first for p=3, root=0: PE 2 sent",
    "ignores_root": "wrong result of binomial_broadcast_smallest_first for p=8, root=1",
    "crashes_at_p1": "binomial_broadcast_smallest_first for p=1, root=0 raised ValueError",
    "computed_name": "for p = 8, root 0, PE 0 sends to the PEs [4, 2, 1] in this order",
    "pow2_only": "for p = 6, root 4, PE 4 sends 5 messages, but in a binomial tree",
    "real_rank_order": "for p = 6, root 4, PE 4 sends to the PEs [0, 2, 5] in this order,",
    "recursive_doubling": "for p = 8, root 0, PE 3 received the message from PE 1, but in "
                          "the task's binomial tree its parent is PE 2",
    # the library's tree helpers, named whole (Validate cut a first line of 73 characters)
    "copied": "binomial_broadcast_smallest_first uses the library's `binomial_children` "
              "(in binomial_broadcast_smallest_first);",
    "parent_and_sorted": "binomial_broadcast_smallest_first uses the library's "
                         "`binomial_children` (in binomial_broadcast_smallest_first);",
    # the library's generic tree broadcast on the task's tree: "Success!" once
    "generic_tree": "binomial_broadcast_smallest_first uses the library's "
                    "`embedded_tree_broadcast` (in binomial_broadcast_smallest_first);",
}

validated = validated_fixture(ASSIGNMENT, build_submissions, [*CAUGHT_BY_VALIDATE, *OWN_HELPERS],
                              written={"explain_log_squared": "A written answer."})


@pytest.mark.parametrize("student", sorted(OWN_HELPERS))
def test_validate_passes_helpers_of_ones_own_named_as_the_librarys(validated, student):
    assert validated[student].passed, validated[student].text


# (an endless program fails with OperationLimitExceeded, an AssertionError of its own)
test_validate_passes_the_solution, test_validate_reports_each_named_bug = validate_tests(
    {student: ("OperationLimitExceeded: " if student == "yields_forever" else "AssertionError: ")
     + start for student, start in CAUGHT_BY_VALIDATE.items()})


@pytest.mark.parametrize("student", ["copied", "parent_and_sorted"])
def test_validate_says_why_the_tree_helpers_are_refused(validated, student):
    shown = " ".join(validated[student].text.split())
    assert ("the task asks for the tree arithmetic, each PE's parent and children, in your "
            "own code. Not allowed here: `binomial_children`, `binomial_parent`, "
            "`embedded_tree_broadcast`, `tree_children` and every program of the "
            "catalog.") in shown, \
        validated[student].text


def test_calling_the_library_gets_no_credit(graded):
    _, results = graded
    result = results["calls_library"]
    assert result.scores["correctness_tests"] == 0 and result.scores["time_tests"] == 0
    assert "uses the library's `binomial_broadcast`" in flat(result.messages("correctness_tests"))


@pytest.mark.parametrize("student, cell, message", [
    ("crashes", "correctness_tests", "raised IndexError: list index out of range"),
    ("crashes", "time_tests", "`return children[p] / 0`"),
    ("deadlocks", "correctness_tests", "deadlock in binomial_broadcast_smallest_first for p=8"),
    ("deadlocks", "correctness_tests", "PE 3 waits in recv(src=4)"),
    ("deadlocks", "correctness_tests", "they wait for each other in a cycle"),
    ("spins", "correctness_tests", "did not finish within 5 s of real time"),
    ("spins", "time_tests", "never yields an operation"),
    ("yields_forever", "correctness_tests", "keeps yielding operations"),
])
def test_bad_submissions_get_zero_with_a_helpful_message(graded, student, cell, message):
    _, results = graded
    result = results[student]
    assert result.scores["correctness_tests"] == 0 and result.scores["time_tests"] == 0
    assert message in result.messages(cell)


def test_pes_sharing_globals_lose_every_point_of_their_runs(graded):
    # right with all PEs in one process, but a PE of a graded run, replayed in a process of
    # its own, behaves otherwise: none of its runs counts; the honest solution keeps full marks
    _, results = graded
    result = results["shares_globals"]
    assert result.scores["correctness_tests"] == 0 and result.scores["time_tests"] == 0
    for cell in ("correctness_tests", "time_tests"):
        h.assert_isolation_message(result, cell)
    h.assert_full_marks(results["solution"])


# The reference answer (source/reverse_send_order/_reference.py), which the library does not ship.

@pytest.mark.parametrize("d", range(0, 9))
def test_the_reference_takes_d_d_plus_1_over_2_steps(d):
    ref = load_reference(ASSIGNMENT)
    run = simulate(ref.binomial_broadcast_smallest_first, 2 ** d,
                   ["m"] + [None] * (2 ** d - 1), trace=False)
    assert run.results == ["m"] * 2 ** d
    assert run.time == d * (d + 1) // 2
    assert catalog()["binomial_broadcast"].simulate(2 ** d, trace=False).time == d


@pytest.mark.parametrize("p", range(1, 65))
def test_the_references_closed_form_holds_for_every_p_and_root(p):
    ref, model = load_reference(ASSIGNMENT), CostModel(ts=1.0, tw=0.5)
    for root in range(p):
        inputs = [[1, 2] if pe == root else None for pe in range(p)]
        run = simulate(ref.binomial_broadcast_smallest_first, p, inputs, model=model,
                       trace=False, root=root)
        assert run.results == [[1, 2]] * p
        assert run.time == ref.smallest_first_steps(p) * (1.0 + 0.5 * 2)


@pytest.mark.parametrize("student", ["copied", "parent_and_sorted"])
def test_the_librarys_tree_helpers_get_no_credit(graded, student):
    # "Write the tree arithmetic yourself": the chapter's program with the children reversed,
    # or binomial_parent and the sorted binomial_children, both got 7/7 (and were not always
    # flagged); the helpers are forbidden as the broadcast is, and the message says why
    _, results = graded
    result = results[student]
    assert result.scores == {**FULL, "correctness_tests": 0, "time_tests": 0}
    for cell in ("correctness_tests", "time_tests"):
        shown = " ".join(result.messages(cell).split())
        assert ("binomial_broadcast_smallest_first uses the library's `binomial_children`; the "
                "task asks for the tree arithmetic, each PE's parent and children, in your own "
                "code. Not allowed here: `binomial_children`, `binomial_parent`, "
                "`embedded_tree_broadcast`, `tree_children` and every program of the "
                "catalog.") in shown, shown
    h.assert_full_marks(results["solution"])


def test_a_library_call_through_a_computed_name_is_flagged(graded):
    course, results = graded
    from nbgrader.api import Gradebook          # slow to import: only here
    computed = results["computed_name"]
    assert computed.scores["time_tests"] == 0           # largest first: the wrong order
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        grade = gb.find_grade("correctness_tests", ASSIGNMENT, ASSIGNMENT, "computed_name")
        comment = gb.find_comment("smallest_first_solution", ASSIGNMENT, ASSIGNMENT,
                                  "computed_name").auto_comment
    assert grade.needs_manual_grade
    assert "computed names" in comment and "importlib" in comment


test_a_visible_check_records_its_kind_of_failure = visible_kind_test([
    ("largest_first", "time_tests", "wrong_form"),
    ("real_rank_order", "time_tests", "wrong_form"),
])


@pytest.mark.parametrize("student, name", [("generic_tree", "embedded_tree_broadcast"),
                                           ("drives_allreduce", "recursive_doubling_allreduce")])
def test_the_librarys_other_programs_get_no_credit(graded, student, name):
    # The library's generic tree broadcast on the binomial tree's parents got 7/7 (the
    # tests forbade only binomial_broadcast and the tree helpers), an allreduce that keeps
    # the first value 4/7: every program of the catalog and the generic tree programs are
    # forbidden with the tree helpers, for the same reason
    # (the allreduce's order fails the time cell's visible check first)
    _, results = graded
    result = results[student]
    assert result.scores == {**FULL, "correctness_tests": 0, "time_tests": 0}
    cells = ("correctness_tests", "time_tests") if student == "generic_tree" else (
        "correctness_tests",)
    for cell in cells:
        shown = " ".join(result.messages(cell).split())
        assert (f"binomial_broadcast_smallest_first uses the library's `{name}`; the task "
                "asks for the tree arithmetic, each PE's parent and children, in your own "
                "code.") in shown, shown


test_no_line_of_a_message_is_cut_by_validate = message_width_test()
