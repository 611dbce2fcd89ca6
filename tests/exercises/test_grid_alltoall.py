"""nbgrader round trip of `grid_alltoall` (Sanders et al., Exercise 13.11): release, then autograde.

The source notebook is released with ``nbgrader generate_assignment`` (the release
must hide solutions and hidden tests), then the instructor's solution (full
marks) and wrong, slow, crashing, deadlocking, endless and library-calling
submissions (partial marks, a helpful message in the failing cell, quick
grading) are autograded in one nbgrader run. Each single typical bug costs exactly
one cell: results in the wrong order, or partners right for k = 2 and 4 only, cost
the results; direct delivery, or bundles sent without their size, cost the time. A stub
that sends nothing finishes in time 0: the time counts only the runs in which every
message reaches its PE, so it earns nothing. A ring within each dimension (Grama
§4.5.1) is within the bound for k <= 3 only: a visible case has k = 4.

Every typical bug is also handed to ``nbgrader validate`` as a student's saved notebook:
the Validate button must not say "Success!" for any of them, and it must for the solution.
"""
from __future__ import annotations

import pytest

import nbgrader_harness as h
from messages import flat
from exercise_submissions import (SPINS, message_width_test, validate_tests, validated_fixture,
                                  visible_kind_test)

ASSIGNMENT = "grid_alltoall"


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

# The hypercube's partners (me XOR s k^t): a permutation of the k PEs of a dimension when k is
# a power of two, so right for k = 2 and 4; for k = 3 a partner lies outside the grid.
GRID_XOR_PARTNERS = _GRID_PHASES.replace(
    "to, frm = me + (to_digit - mine) * stride, me + (from_digit - mine) * stride",
    "to = frm = me ^ (s * stride)").replace(
    "digit(item[1], t) == to_digit", "digit(item[1], t) == digit(to, t)").replace(
    "digit(item[1], t) != to_digit", "digit(item[1], t) != digit(to, t)") + '''
        held += yield sendrecv(to, bundle, frm, words=sum(len(x) for _, _, x in bundle))
result = [None] * p
for source, _, message in held:
    result[source] = message
return result
'''

# Right results, but more words than the grid needs (the loose bound of the k = 2 grids
# hides them): every PE sends all it holds to each partner, which keeps its own side's.
GRID_SENDS_ALL = '''
def digit(rank, t):
    return rank // k ** t % k

held = [(me, dst, data[dst]) for dst in range(p)]
for t in range(d):
    stride, mine = k ** t, digit(me, t)
    kept = [item for item in held if digit(item[1], t) == mine]
    for s in range(1, k):
        to_digit, from_digit = (mine + s) % k, (mine - s) % k
        to, frm = me + (to_digit - mine) * stride, me + (from_digit - mine) * stride
        received = yield sendrecv(to, held, frm, words=sum(len(x) for _, _, x in held))
        kept += [item for item in received if digit(item[1], t) == mine]
    held = kept
result = [None] * p
for source, _, message in held:
    result[source] = message
return result
'''

# Forgets to remove what it sent from `held`, so later phases send it again.
GRID_KEEPS_WHAT_IT_SENT = _GRID_PHASES.replace(
    "        held = [item for item in held if digit(item[1], t) != to_digit]\n", "") + \
'''        held += yield sendrecv(to, bundle, frm, words=sum(len(x) for _, _, x in bundle))
result = [None] * p
for source, destination, message in held:
    if destination == me:
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

# PEs that share a module-level dict instead of sending messages; the messages are
# dummies, so the time is right.
GRID_SHARES_GLOBALS = '''
board = globals().setdefault("BOARD", {})     # a notice board that all PEs share
board[me] = data
n = len(data[0])
for t in range(d):                            # the grid's traffic, only for the time
    stride, mine = k ** t, me // k ** t % k
    for s in range(1, k):
        to_digit, from_digit = (mine + s) % k, (mine - s) % k
        yield sendrecv(me + (to_digit - mine) * stride, None,
                       me + (from_digit - mine) * stride, words=n * p // k)
return [board[source][me] for source in range(p)]   # read from the board
'''


# A stub that finishes in time 0 (a lazy student's shortcut): the time test once judged every
# run that finishes, whatever its results, and gave it its 3 points.
GRID_STUB = '''
return data
yield
'''

# Grama's ring all-to-all (§4.5.1) within each dimension, with true sizes: right, and within
# the bound for k <= 3, but its k - 1 steps per dimension carry p/k, 2p/k, ... messages:
# too slow for k >= 4 (the visible checks once tried only k <= 3).
GRID_RING_PER_DIMENSION = '''
def digit(rank, t):
    return rank // k ** t % k

held = [(me, dst, data[dst]) for dst in range(p)]
for t in range(d):
    stride, mine = k ** t, digit(me, t)
    right = me + ((mine + 1) % k - mine) * stride
    left = me + ((mine - 1) % k - mine) * stride
    kept = [item for item in held if digit(item[1], t) == mine]
    passing = [item for item in held if digit(item[1], t) != mine]
    for s in range(1, k):             # pass on to the right what is not for my digit
        got = yield sendrecv(right, passing, left, words=sum(len(x) for _, _, x in passing))
        kept += [item for item in got if digit(item[1], t) == mine]
        passing = [item for item in got if digit(item[1], t) != mine]
    held = kept
result = [None] * p
for source, _, message in held:
    result[source] = message
return result
'''


# Right, within the bound, with bundles built by the collections module: a list of
# namedtuples, and a defaultdict of destination -> [(source, message)] sent as it is. Both
# got 0/7 in the twelfth round, "values of type Item cannot be graded", after Validate's
# "Success!": the codec refused any type that was not exactly a builtin.
GRID_NAMEDTUPLE_ITEMS = '''
from collections import namedtuple
Item = namedtuple("Item", "src dst msg")        # a message with its source and destination

def digit(rank, t):
    return rank // k ** t % k

held = [Item(me, dst, data[dst]) for dst in range(p)]
for t in range(d):
    stride, mine = k ** t, digit(me, t)
    for s in range(1, k):
        to_digit, from_digit = (mine + s) % k, (mine - s) % k
        bundle = [it for it in held if digit(it.dst, t) == to_digit]
        held = [it for it in held if digit(it.dst, t) != to_digit]
        received = yield sendrecv(me + (to_digit - mine) * stride, bundle,
                                  me + (from_digit - mine) * stride,
                                  words=sum(len(it.msg) for it in bundle))
        held += [Item(*it) for it in received]
result = [None] * p
for it in held:
    result[it.src] = it.msg
return result
'''

GRID_DEFAULTDICT_BUNDLE = '''
from collections import defaultdict

def digit(rank, t):
    return rank // k ** t % k

held = [(me, dst, data[dst]) for dst in range(p)]
for t in range(d):
    stride, mine = k ** t, digit(me, t)
    for s in range(1, k):
        to_digit, from_digit = (mine + s) % k, (mine - s) % k
        bundle = defaultdict(list)                  # destination -> [(source, message)]
        keep = []
        for src, dst, msg in held:
            if digit(dst, t) == to_digit:
                bundle[dst].append((src, msg))
            else:
                keep.append((src, dst, msg))
        words = sum(len(msg) for items in bundle.values() for _, msg in items)
        received = yield sendrecv(me + (to_digit - mine) * stride, bundle,
                                  me + (from_digit - mine) * stride, words=words)
        held = keep + [(src, dst, msg) for dst, items in received.items()
                       for src, msg in items]
result = [None] * p
for src, _, msg in held:
    result[src] = msg
return result
'''


def build_submissions(source):
    return h.submissions(source, {
        "direct": ("grid_solution", GRID_DIRECT),
        "arrival_order": ("grid_solution", GRID_ARRIVAL_ORDER),
        "forgets_words": ("grid_solution", GRID_FORGETS_WORDS),
        "xor_partners": ("grid_solution", GRID_XOR_PARTNERS),
        "sends_all": ("grid_solution", GRID_SENDS_ALL),
        "keeps_what_it_sent": ("grid_solution", GRID_KEEPS_WHAT_IT_SENT),
        "crashes": ("grid_solution", GRID_CRASHES),
        "deadlocks": ("grid_solution", GRID_DEADLOCKS),
        "spins": ("grid_solution", SPINS),
        "uses_catalog": ("grid_solution", GRID_USES_CATALOG),
        "shares_globals": ("grid_solution", GRID_SHARES_GLOBALS),
        "stub": ("grid_solution", GRID_STUB),
        "ring_per_dimension": ("grid_solution", GRID_RING_PER_DIMENSION),
        "namedtuple_items": ("grid_solution", GRID_NAMEDTUPLE_ITEMS),
        "defaultdict_bundle": ("grid_solution", GRID_DEFAULTDICT_BUNDLE),
    })


graded = h.graded_fixture(ASSIGNMENT, build_submissions, spinning=["spins"])



# Validate: the typical bugs as a student's saved notebooks (the written answer filled in, so
# that only the code decides), each with a message Validate must show.
VALIDATE = {
    "direct": (GRID_DIRECT, "yours is 8, but with k = 3, d = 2, alpha = 1 and beta = 0 the time "
                            "must be at most 6"),
    "arrival_order": (GRID_ARRIVAL_ORDER, "PE 1 should return [[0, 1], [1, 1], [2, 1], [3, 1]]"),
    "forgets_words": (GRID_FORGETS_WORDS, "carries 4 words of data but is sent as 2 words"),
    "xor_partners": (GRID_XOR_PARTNERS, "grid_all_to_all for p=3, k=3, d=1 raised"),
    # more words than needed, hidden by the loose bound of k = 2: the k = 3, d = 3 grid
    "sends_all": (GRID_SENDS_ALL, "too slow: grid_all_to_all for p=27, k=3, d=3, n=2, "
                                  "alpha=1, beta=0.5: it takes 168, more than"),
    "keeps_what_it_sent": (GRID_KEEPS_WHAT_IT_SENT,
                           "too slow: grid_all_to_all for p=27, k=3, d=3, n=2, alpha=1, "
                           "beta=0.5: it takes 104"),
    # right, within the bound for k <= 3: a visible case has k = 4
    "ring_per_dimension": (GRID_RING_PER_DIMENSION,
                           "too slow: grid_all_to_all for p=16, k=4, d=2, n=2, alpha=10, "
                           "beta=1: it takes 156, more than k d alpha + d n p beta = 144"),
    "crashes": (GRID_CRASHES, "raised IndexError"),
    "deadlocks": (GRID_DEADLOCKS, "deadlock in grid_all_to_all for p=4, k=2, d=2"),
    "spins": (SPINS, "grid_all_to_all for p=4, k=2, d=2 did not finish"),
    # the catalog's first all-to-all is direct delivery: right, but too slow
    "uses_catalog": (GRID_USES_CATALOG, "yours is 8, but with k = 3, d = 2, alpha = 1"),
}
WRITTEN = {"answer": "After phase t the digits 0..t of every destination equal mine."}


validated = validated_fixture(ASSIGNMENT, lambda source: h.submissions(
    source, {student: ("grid_solution", code) for student, (code, _) in VALIDATE.items()}),
    [*VALIDATE], written=WRITTEN)


FULL = {"correctness_tests": 4, "time_tests": 3, "answer": 0, "answer_rubric": 0}


def test_release_hides_solution_and_hidden_tests(graded):
    course, _ = graded
    h.assert_release_hides(course, ASSIGNMENT, [
        "def digit(rank, t)", "held = [(me, dst, data[dst])", "_unique_messages",
        "_transpose", "forbid_library", "_GRIDS",
        "After the phase of dimension $t$ every message"],
        shows=["def grid_all_to_all(me, p, data, k, d):", "YOUR ANSWER HERE",
               "def direct_all_to_all(me, p, data):"], unanswered=1)


def test_solution_gets_full_marks(graded):
    h.assert_solution_full_marks(graded, ASSIGNMENT, {"correctness_tests", "time_tests"},
                                 9, by_hand={"answer": 2})


@pytest.mark.parametrize("student, scores, cell, messages", [
    ("direct", {"time_tests": 0}, "time_tests",
     ["yours is 8, but with k = 3, d = 2, alpha = 1 and beta = 0 the time must be at most "
      "6"]),
    # results in the wrong order cost the results, not the time (one bug, one deduction)
    ("arrival_order", {"correctness_tests": 0}, "correctness_tests",
     ["PE 1 should return [[0, 1], [1, 1], [2, 1], [3, 1]], got [[1, 1], [0, 1], "]),
    ("forgets_words", {"time_tests": 0}, "time_tests",
     ["the message from PE 0 to PE 1 carries 4 words of data but is sent as 2 words",
      "words=n * len(bundle)"]),
    # right for k = 2 and 4, the grids of the time test where it runs: results only
    ("xor_partners", {"correctness_tests": 0}, "correctness_tests",
     ["grid_all_to_all for p=3, k=3, d=1 raised"]),
    # right results, but more words than the grid needs: the time (seen on k = 3, d = 3,
    # where the bound is tight enough; the k = 2 grids hide the extra words)
    ("sends_all", {"time_tests": 0}, "time_tests",
     ["too slow: grid_all_to_all for p=27, k=3, d=3, n=2, alpha=1, beta=0.5: it takes "
      "168, more than k d alpha + d n p beta = 90"]),
    ("keeps_what_it_sent", {"time_tests": 0}, "time_tests",
     ["too slow: grid_all_to_all for p=27, k=3, d=3, n=2, alpha=1, beta=0.5: it takes "
      "104, more than k d alpha + d n p beta = 90"]),
    ("ring_per_dimension", {"time_tests": 0}, "time_tests",
     ["too slow: grid_all_to_all for p=16, k=4, d=2, n=2, alpha=10, beta=1: it takes 156, "
      "more than k d alpha + d n p beta = 144"]),
    # a stub finishes in time 0: no message reaches its PE, so its time says nothing
    ("stub", {"correctness_tests": 0, "time_tests": 0}, "time_tests",
     ["the time is measured on the runs that finish with messages that carry the data, and "
      "grid_all_to_all did so on 0 of the 40 cases with p >= 2: for k = 3, d = 2 the message "
      "of PE 0 for PE 1 never reached PE 1 (nor did 71 other messages). Its results cannot "
      "be right then (see the correctness test), so the time it shows says nothing."]),
    ("crashes", {"correctness_tests": 0, "time_tests": 0}, "correctness_tests",
     ["grid_all_to_all for p=4, k=2, d=2 raised IndexError", "data[me + s]"]),
    ("deadlocks", {"correctness_tests": 0, "time_tests": 0}, "correctness_tests",
     ["deadlock in grid_all_to_all for p=4, k=2, d=2"]),
    ("spins", {"correctness_tests": 0, "time_tests": 0}, "correctness_tests",
     ["did not finish within 5 s of real time"]),
    ("uses_catalog", {"correctness_tests": 0, "time_tests": 0}, "correctness_tests",
     ["grid_all_to_all uses the library's `catalog`"]),
])
def test_wrong_programs_lose_their_points_with_a_helpful_message(graded, student, scores,
                                                                 cell, messages):
    _, results = graded
    result = results[student]
    assert result.scores == {**FULL, **scores}
    for message in messages:
        assert message in flat(result.messages(cell)), (message, result.messages(cell))


@pytest.mark.parametrize("student", ["namedtuple_items", "defaultdict_bundle"])
def test_bundles_built_with_collections_get_full_marks(graded, student):
    # a namedtuple or a defaultdict crosses to the checker as the tuple or dict it is
    _, results = graded
    assert results[student].scores == FULL, results[student].messages()


def test_pes_sharing_globals_lose_every_point_of_their_runs(graded):
    # right with all PEs in one process, but a PE of a graded run, replayed in a process of
    # its own, behaves otherwise: none of its runs counts; the honest solution keeps full marks
    _, results = graded
    result = results["shares_globals"]
    assert result.scores == {**FULL, "correctness_tests": 0, "time_tests": 0}
    for cell in ("correctness_tests", "time_tests"):
        h.assert_isolation_message(result, cell)
    h.assert_full_marks(results["solution"])


test_validate_passes_the_solution, test_validate_reports_each_named_bug = validate_tests(
    {student: v[1] for student, v in VALIDATE.items()})


def test_the_visible_checks_say_what_they_do_not_check(graded):
    # PEs that share globals pass every visible check: the release says so where it runs them
    course, _ = graded
    assert ("Not checked here (the graded tests check them): larger grids, each PE in its own "
            in h.released_text(course, ASSIGNMENT))


test_a_visible_check_records_its_kind_of_failure = visible_kind_test([
    ("arrival_order", "correctness_tests", "wrong_result"),
    ("direct", "time_tests", "too_slow"),
    ("forgets_words", "time_tests", "message_size"),
    ("sends_all", "time_tests", "too_slow"),
])


test_no_line_of_a_message_is_cut_by_validate = message_width_test()
