"""nbgrader round trip of `broken_lock` (Sanders §13.4.1): release, then autograde.

The source notebook is released with ``nbgrader generate_assignment`` (the release must hide
solutions and hidden tests), and a set of submissions is autograded in one ``nbgrader
autograde`` run: the instructor's solution (full marks on every autograded cell), wrong
schedules and a lock that is still broken (partial marks, with the helpful message in the
failing cell's output), and a lock that deadlocks, one that crashes and one that loops
forever without yielding (low marks, and grading still finishes quickly because the
grading helpers stop them).
"""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

import nbgrader_harness as h
from messages import flat
from collective_lib.algorithms.sync import lock_demo
from collective_lib.shared_memory import simulate_shared
from exercise_references import load_reference
from exercise_submissions import (SPINS, message_width_test, validate_tests, validated_fixture,
                                  visible_kind_test)
from jupyter_kernels import IpcKernelManager

ASSIGNMENT = "broken_lock"


PART1 = {"both_inside_tests", "two_lost_tests"}
PART2 = {"timed_tests", "random_tests", "exhaustive_tests"}


# -- submissions ----------------------------------------------------------------------------

NO_OVERLAP = "schedule_both_inside = [0, 0, 1, 1]     # PE 0 is in; PE 1 only sees 1"
ONE_PE_AFTER_THE_OTHER = "schedule_two_lost = [0] * 10 + [1] * 10"
INCOMPLETE = "schedule_two_lost = [0, 1, 0, 0]"

STILL_BROKEN_ACQUIRE = """
while (yield read(self.cell)) != 0:          # wait until it looks free ...
    yield pause(1)
yield write(self.cell, 1)                    # ... then take it: not atomic
"""

GOOD_ACQUIRE = """
while not (yield cas(self.cell, 0, 1)):
    yield pause(1)
"""
NEVER_RELEASES = """
yield pause(1)                               # forgets to write 0: nobody gets in again
"""

# PEs that take turns through a module attribute (one Python process) instead of the memory.
BOARD_ACQUIRE = """
import collective_lib as board               # every PE imports the same module object ...
while getattr(board, "owner", None) not in (None, self.me):
    yield pause(1)
board.owner = self.me                        # ... so this is a lock only in one process
yield read(self.cell)
"""
BOARD_RELEASE = """
import collective_lib as board
board.owner = None
yield write(self.cell, 0)
"""

# A lock that stops waiting (a student audit): it tries 30 times, then enters anyway.
# It scored 13/13 and Validate said "Success!": the timed cell judges progress alone,
# random interleavings never leave one PE alone for 61 steps, and the search of every
# interleaving parked its repeated polls.
GIVES_UP_ACQUIRE = """
for _ in range(30):                          # tries 30 times ...
    if (yield cas(self.cell, 0, 1)):
        return
    yield pause(1)
# ... and then enters anyway
"""
# `cas(...)` without `yield`: a record, never performed (acquire() returns at once).
FORGETS_YIELD_ACQUIRE = """
while not cas(self.cell, 0, 1):              # no `yield`: the CAS never happens
    yield pause(1)
"""
# Honest locks of other designs keep full marks.
TTAS_BACKOFF_ACQUIRE = """
delay = 1
while True:
    while (yield read(self.cell)) != 0:      # taken: wait, twice as long each time
        yield pause(delay)
        delay = min(2 * delay, 64)
    if (yield cas(self.cell, 0, 1)):
        return
"""
TICKET_ACQUIRE = """
self.ticket = yield fetch_add(self.cell, 1)  # draw a ticket ...
while (yield read("serving")) != self.ticket:
    yield pause(1)                           # ... and wait until it is served
"""
TICKET_RELEASE = """
yield write("serving", self.ticket + 1)
"""
# Part 1 answered by the library's search (a student audit): full marks, no flag.
SEARCHED_BOTH_INSIDE = """
from collective_lib.shared_memory import explore_interleavings, mutual_exclusion
schedule_both_inside = explore_interleavings(lock_demo, 2, mutual_exclusion,
                                             lock=broken_lock, rounds=1).schedule
"""
SEARCHED_TWO_LOST = """
from collective_lib.shared_memory import explore_interleavings as search
def two_lost(run):
    return not (run.complete and run.memory["counter"] == 2)
schedule_two_lost = search(lock_demo, 2, two_lost, lock=broken_lock, rounds=2).schedule
"""

# A correct fetch-and-add lock (a student audit): while the lock is held the cell is at least
# 1, and only the holder's release writes 0. Every poll adds 1, so the interleavings of two
# rounds have no end: the search of every interleaving gave up, and the cell scored 0/3
# after Validate had said "Success!", with a hint that blamed the lock.
FETCH_ADD_ACQUIRE = """
while (yield fetch_add(self.cell, 1)) != 0:  # 0: it was free, and now it is mine
    yield pause(1)
"""
# The same, undoing a failed increment: two waiting PEs can knock each other's tries out
# forever (a livelock under an adversarial scheduler that only the search finds).
UNDOES_FAILED_TRY_ACQUIRE = """
while True:
    if (yield fetch_add(self.cell, 1)) == 0:
        return
    yield fetch_add(self.cell, -1)           # not mine: undo the increment, try again
    yield pause(1)
"""
UNDOES_FAILED_TRY_RELEASE = """
yield fetch_add(self.cell, -1)
"""
# A lock that lets nobody in (a student audit): 6 of 8 points, since the cells of mutual
# exclusion saw no two PEs inside together.
LETS_NOBODY_IN_ACQUIRE = """
while True:
    yield pause(1)
"""
# More honest designs (a student audit) that keep full marks.
CAS_NO_PAUSE_ACQUIRE = """
while not (yield cas(self.cell, 0, 1)):      # test-and-set, no pause
    pass
"""
TTAS_FETCH_ADD_ACQUIRE = """
while True:
    while (yield read(self.cell)) != 0:      # wait until it looks free ...
        yield pause(1)
    if (yield fetch_add(self.cell, 1)) == 0: # ... then take it atomically
        return
"""
CAS_EXPONENTIAL_ACQUIRE = """
delay = 1
while not (yield cas(self.cell, 0, 1)):
    yield pause(delay)
    delay *= 2                               # no cap
"""
CAS_LINEAR_ACQUIRE = """
delay = 1
while not (yield cas(self.cell, 0, 1)):
    yield pause(delay)
    delay += 1
"""
# Part 1 answered by a search of one's own, built from simulate_shared and
# exclusion_violation (a student audit): full marks, unflagged.
OWN_SEARCH_BOTH_INSIDE = """
import itertools
for candidate in itertools.product([0, 1], repeat=4):
    run = simulate_shared(lock_demo, 2, lock=broken_lock, rounds=1,
                          schedule=list(candidate), stop_after=4)
    if exclusion_violation(run.trace) is not None:
        schedule_both_inside = list(candidate)
        break
"""
OWN_SEARCH_TWO_LOST = """
for seed in range(10000):
    run = simulate_shared(lock_demo, 2, lock=broken_lock, rounds=2, seed=seed)
    if run.complete and run.memory["counter"] == 2:
        schedule_two_lost = list(run.schedule)
        break
"""
# Schedules written by hand and looked at with try_schedule, as the notebook suggests.
LOOKED_AT_BOTH_INSIDE = """
schedule_both_inside = [0, 1, 0, 1]
run = try_schedule(schedule_both_inside)
assert exclusion_violation(run.trace) is not None
"""
LOOKED_AT_TWO_LOST = """
schedule_two_lost = []
for pe, steps in [(0, 1), (1, 1), (0, 2), (1, 7), (0, 7), (1, 2)]:
    schedule_two_lost += [pe] * steps
run = try_schedule(schedule_two_lost, rounds=2)
assert run.complete and run.memory["counter"] == 2
"""

# A lock that stops waiting another way (a student audit): after 30 failed CAS it reads the
# cell and writes 1, not atomically. 8/8 on part 2, and the cell of every interleaving said
# "every interleaving keeps the PEs apart": its search parked the repeated polls, and while
# one PE held the lock for long the others only read 1; the flaw shows once it is released.
FALLS_BACK_ACQUIRE = """
tries = 0
while True:
    if tries < 30:
        if (yield cas(self.cell, 0, 1)):
            return
    else:                                    # waited long: test first, then set
        if (yield read(self.cell)) == 0:
            yield write(self.cell, 1)
            return
    tries += 1
    yield pause(1)
"""
# Two flaws (a student audit): release() frees the lock only for PE 1 (a PE waits forever,
# which the timed cell charges and the search of every interleaving finds first), and a PE
# that arrives a second time with nobody else having arrived takes the lock without an
# atomic step (two PEs inside together, which only the search of every interleaving finds).
# The cell of every interleaving gave its points back, as for a flaw charged above.
TWO_FLAWS_ACQUIRE = """
self.arrived = getattr(self, "arrived", 0) + 1
if (yield fetch_add("arrivals", 1)) == 1 and self.arrived == 2:
    if (yield read(self.cell)) == 0:         # alone so far: no need for a CAS
        yield write(self.cell, 1)
        return
while not (yield cas(self.cell, 0, 1)):
    yield pause(1)
"""
TWO_FLAWS_RELEASE = """
yield cas(self.cell, self.me, 0)             # mixes up the cell's value and the PE's number
"""

# Anderson's array lock (a student audit): each PE takes a slot with fetch_add and polls a flag
# of its own once per unit of time, 7,118 operations with p = 7 and 3 rounds. Timed 0/2, told
# that some PEs wait forever: the timed runs stopped every run at 5,000 operations.
ANDERSON_ACQUIRE = """
self.slot = (yield fetch_add("tail", 1)) % self.p
while (yield read(f"flag{self.slot}")) == 0:
    yield pause(1)
yield write(f"flag{self.slot}", 0)
"""
ANDERSON_RELEASE = """
yield write(f"flag{(self.slot + 1) % self.p}", 1)
"""
# Two locks past the long hold's horizon (a student audit), 8/8 on part 2: one writes 1
# without a CAS after 100 failed tries, but only with three PEs or more (the hold let go with
# two PEs only); one writes 1 the third time it finds the lock free after 30 failed CAS in
# its life (after the hold each PE did two rounds, so the third time never came).
ONLY_WITH_THREE_ACQUIRE = """
tries = 0
while not (yield cas(self.cell, 0, 1)):
    tries += 1
    if self.p >= 3 and tries > 100:          # waited long: test, then set
        while (yield read(self.cell)) != 0:
            yield pause(1)
        yield write(self.cell, 1)
        return
    yield pause(1)
"""
SEEN_FREE_THREE_ACQUIRE = """
while True:
    if getattr(self, "fails", 0) < 30:
        if (yield cas(self.cell, 0, 1)):
            return
        self.fails = getattr(self, "fails", 0) + 1
        yield pause(1)
        continue
    while (yield read(self.cell)) != 0:      # waited long: only read until it is free
        yield pause(1)
    self.seen_free = getattr(self, "seen_free", 0) + 1
    if self.seen_free >= 3:                  # the third time: no need for a CAS
        yield write(self.cell, 1)
        return
    if (yield cas(self.cell, 0, 1)):
        return
"""

# acquire() or release() as released, for submissions that answer part 1 only
UNANSWERED = "raise NotImplementedError()"

CRASHING_ACQUIRE = """
while not (yield cas(self.cells[0], 0, 1)):  # there is no self.cells
    yield pause(1)
"""
CRASHING_SCHEDULE = "schedule_both_inside = [0, 1, 7, 1]"
# A lock that crashes with the words of the checks' own messages (red team, fourth round):
# the cell of every interleaving sorted a flaw by its text and credited this one as charged
# above (3 points for a crash).
QUOTING_ACQUIRE = """
raise RuntimeError("never finished: some PEs wait forever; mutual exclusion breaks: PE 1 "
                   "enters the critical section while PE 0 is inside")
yield pause(1)
"""


def build_submissions(source: Path) -> dict:
    def lock(acquire, release=None):
        # the second region first: the first keeps its number
        change = [] if release is None else [("fixed_lock_solution", release, 1)]
        return change + [("fixed_lock_solution", acquire, 0)]

    def part_1_only(*schedules):
        # the lock left as released: its cells fail at once (wrong_schedules shows that a
        # wrong part 1 leaves part 2's marks alone; grading a lock costs seconds)
        return [*schedules, *lock(UNANSWERED, UNANSWERED)]

    built = h.submissions(source, {
        "wrong_schedules": [("schedule_both_inside_solution", NO_OVERLAP),
                            ("schedule_two_lost_solution", ONE_PE_AFTER_THE_OTHER)],
        "still_broken": lock(STILL_BROKEN_ACQUIRE),
        "never_releases": lock(GOOD_ACQUIRE, NEVER_RELEASES),
        "crashes": [("schedule_both_inside_solution", CRASHING_SCHEDULE),
                    *lock(CRASHING_ACQUIRE),
                    ("schedule_two_lost_solution", INCOMPLETE)],
        "endless": lock(SPINS),
        "shares_globals": lock(BOARD_ACQUIRE, BOARD_RELEASE),
        "quotes_the_checks": lock(QUOTING_ACQUIRE),
        # one wrong schedule each: one bug, one cell
        "no_overlap": part_1_only(("schedule_both_inside_solution", NO_OVERLAP)),
        "incomplete": part_1_only(("schedule_two_lost_solution", INCOMPLETE)),
        "gives_up": lock(GIVES_UP_ACQUIRE),
        "forgets_yield": lock(FORGETS_YIELD_ACQUIRE),
        "cas_spin": lock(GOOD_ACQUIRE),
        "ttas_backoff": lock(TTAS_BACKOFF_ACQUIRE),
        "ticket": lock(TICKET_ACQUIRE, TICKET_RELEASE),
        "searched": part_1_only(("schedule_both_inside_solution", SEARCHED_BOTH_INSIDE),
                                ("schedule_two_lost_solution", SEARCHED_TWO_LOST)),
        "fetch_add": lock(FETCH_ADD_ACQUIRE),
        "undoes_failed_try": lock(UNDOES_FAILED_TRY_ACQUIRE, UNDOES_FAILED_TRY_RELEASE),
        "lets_nobody_in": lock(LETS_NOBODY_IN_ACQUIRE),
        "cas_no_pause": lock(CAS_NO_PAUSE_ACQUIRE),
        "ttas_fetch_add": lock(TTAS_FETCH_ADD_ACQUIRE),
        "cas_exponential": lock(CAS_EXPONENTIAL_ACQUIRE),
        "cas_linear": lock(CAS_LINEAR_ACQUIRE),
        "own_search": part_1_only(("schedule_both_inside_solution", OWN_SEARCH_BOTH_INSIDE),
                                  ("schedule_two_lost_solution", OWN_SEARCH_TWO_LOST)),
        "looked_at": part_1_only(("schedule_both_inside_solution", LOOKED_AT_BOTH_INSIDE),
                                 ("schedule_two_lost_solution", LOOKED_AT_TWO_LOST)),
        "falls_back": lock(FALLS_BACK_ACQUIRE),
        "two_flaws": lock(TWO_FLAWS_ACQUIRE, TWO_FLAWS_RELEASE),
        "anderson": lock(ANDERSON_ACQUIRE, ANDERSON_RELEASE),
        "only_with_three": lock(ONLY_WITH_THREE_ACQUIRE),
        "seen_free_three": lock(SEEN_FREE_THREE_ACQUIRE),
    })
    # the ticket lock declares the cell it serves from (memory is outside the answer)
    ticket = h.find_cell(built["ticket"], "fixed_lock_solution")
    assert ticket.source.count("return {cell: 0}") == 1
    ticket.source = ticket.source.replace("return {cell: 0}",
                                          'return {cell: 0, "serving": 0}')
    two_flaws = h.find_cell(built["two_flaws"], "fixed_lock_solution")
    assert two_flaws.source.count("return {cell: 0}") == 1
    two_flaws.source = two_flaws.source.replace("return {cell: 0}",
                                                'return {cell: 0, "arrivals": 0}')
    anderson = h.find_cell(built["anderson"], "fixed_lock_solution")
    assert anderson.source.count("return {cell: 0}") == 1
    anderson.source = anderson.source.replace(
        "return {cell: 0}",
        'return {cell: 0, "tail": 0, **{f"flag{i}": int(i == 0) for i in range(p)}}')
    return built


graded = h.graded_fixture(ASSIGNMENT, build_submissions, spinning=["endless"])


def set_of_autograded_ids(result) -> set:
    return set(h.autograded_ids(result))


# -- the release ------------------------------------------------------------------------------

def test_release_hides_solutions_and_hidden_tests(graded):
    course, _ = graded
    h.assert_release_hides(course, ASSIGNMENT, [
        "[0, 1, 0, 1]", "0, 0,                # PE 0 takes", "cas(self.cell, 0, 1)",
        "take it atomically", "the last write is its first-round write",
        "range(1, 9), rounds=3", "seeds=range(150)", "ROUNDS += [2]",
        "_sync.broken_lock"],
        shows=["YOUR ANSWER HERE", "class FixedLock:", "def memory(p, cell=\"lock\"):",
               "def acquire(self):", "def release(self):",
               "def try_schedule(schedule, p=2, rounds=1):",
               "check_lock_progress(FixedLock, [1, 2, 3], rounds=2, time_limit_s=5, "
               "exclusion=False)",
               "flaw = _flaw(lambda: checked.append(check_lock_exhaustive(",
               "ROUNDS = [1]", "RANDOM = [dict(ps=[2, 3], seeds=range(20))]"],
        unanswered=4)                                     # two schedules, acquire, release


def test_released_notebook_runs_and_fails_only_for_missing_answers(graded):
    """A student's first run: the given cells work, the tests say what is missing."""
    course, _ = graded
    nb = nbformat.read(course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    from nbclient import NotebookClient
    NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=True,
                   kernel_manager_class=IpcKernelManager,
                   resources={"metadata": {"path": str(course)}}).execute()
    errors = {}
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        for out in cell.get("outputs", []):
            if out.output_type == "error":
                errors[gid] = f"{out.ename}: {out.evalue}"
    assert set(errors) == {"schedule_both_inside_solution", "schedule_two_lost_solution",
                           "both_inside_tests", "two_lost_tests", "timed_tests",
                           "random_tests", "exhaustive_tests"}, errors
    assert "replace `raise NotImplementedError()`" in errors["timed_tests"] or \
        "NotImplementedError" in errors["timed_tests"]
    # the schedules' tests see the release's empty schedules, not a name never defined
    for tests in ("both_inside_tests", "two_lost_tests"):
        assert not errors[tests].startswith("NameError"), errors[tests]


# -- grading ----------------------------------------------------------------------------------

def test_solution_gets_full_marks(graded):
    course, results = graded
    result = results["solution"]
    assert set_of_autograded_ids(result) == PART1 | PART2
    for gid in set_of_autograded_ids(result):
        assert result.scores[gid] == result.max_scores[gid], (gid, result.messages(gid))
    assert sum(result.max_scores[g] for g in PART1 | PART2) == 13
    assert result.max_scores["answer_counter_one"] == 2          # graded by hand
    h.assert_rubrics_for_graders(course, ASSIGNMENT, result)


def test_wrong_schedules_lose_part_1_only(graded):
    _, results = graded
    result = results["wrong_schedules"]
    assert result.scores["both_inside_tests"] == 0 and result.scores["two_lost_tests"] == 0
    assert all(result.scores[g] == result.max_scores[g] for g in PART2)
    assert ("no two PEs were in the critical section at the same time"
            in result.messages("both_inside_tests"))
    assert "the counter is 4, not 2" in result.messages("two_lost_tests")
    assert "read lock -> 1" in result.messages("both_inside_tests")     # the trace is shown


FULL = {"both_inside_tests": 2, "two_lost_tests": 3, "timed_tests": 2, "random_tests": 3,
        "exhaustive_tests": 3, "answer_counter_one": 0, "answer_counter_one_rubric": 0}
PART1_FULL = {cell: FULL[cell] for cell in PART1}


def part_1_scores(result) -> dict:
    """The scores of part 1 (the submissions that answer part 1 only leave the lock open)."""
    return {cell: result.scores[cell] for cell in PART1}


def _shown(result, cell) -> str:
    return "".join(out.get("text", "") for out in result.cell(cell).outputs)



def test_still_broken_lock_loses_the_random_cell_only(graded):
    _, results = graded
    result = results["still_broken"]
    # one bug, one deduction: two PEs inside together is charged by the random interleavings;
    # every interleaving finds it too, and says that a cell above charges it
    assert result.scores == {**FULL, "random_tests": 0}
    random = flat(result.messages("random_tests"))
    assert "enters the critical section while PE" in random
    assert "schedule [" in random and "write lock := 1" in random
    assert "must be one atomic operation (cas or fetch_add)" in random
    exhaustive = _shown(result, "exhaustive_tests")
    assert "an interleaving breaks the lock in a way that a cell above already charges" in exhaustive
    assert "schedule [0, 1, 0, 1]" in exhaustive


def test_lock_that_never_releases_loses_the_timed_cell_only(graded):
    _, results = graded
    result = results["never_releases"]
    # one bug, one deduction: a PE waiting forever is charged by the timed runs
    assert result.scores == {**FULL, "timed_tests": 0}
    timed = flat(result.messages("timed_tests"))
    assert "never finished: some PEs wait forever" in timed
    assert "does release() really free the lock" in timed
    assert "never finished: some PEs wait forever" in flat(_shown(result,
                                                                "exhaustive_tests"))


@pytest.mark.parametrize("student, cell, message", [
    ("no_overlap", "both_inside_tests", "no two PEs were in the critical section at the same time"),
    ("incomplete", "two_lost_tests", "schedule_two_lost is not complete"),
])
def test_one_wrong_schedule_costs_its_cell_only(graded, student, cell, message):
    _, results = graded
    result = results[student]
    assert part_1_scores(result) == {**PART1_FULL, cell: 0}
    assert message in flat(result.messages(cell))


def test_crashing_submission_gets_zero_with_a_helpful_message(graded):
    _, results = graded
    result = results["crashes"]
    assert result.total == 0
    assert ("schedule_both_inside names PE 7 at step 2, but there are only 2 PEs"
            in flat(result.messages("both_inside_tests")))
    assert "schedule_two_lost is not complete" in result.messages("two_lost_tests")
    for gid in PART2:
        text = flat(result.messages(gid))
        assert "raised AttributeError" in text and "self.cells" in text, gid


def test_a_crash_in_the_words_of_a_check_earns_no_credit_for_it(graded):
    _, results = graded
    result = results["quotes_the_checks"]
    assert result.scores == {**FULL, "timed_tests": 0, "random_tests": 0,
                             "exhaustive_tests": 0}, result.scores
    assert "raised RuntimeError" in flat(result.messages("exhaustive_tests"))


def test_endless_submission_is_stopped_with_a_helpful_message(graded):
    _, results = graded
    result = results["endless"]
    assert all(result.scores[g] == result.max_scores[g] for g in PART1)
    assert all(result.scores[g] == 0 for g in PART2)
    timed = flat(result.messages("timed_tests"))
    assert "did not finish within 5 s of real time" in timed
    for gid in ("random_tests", "exhaustive_tests"):
        assert "took more than 5 s of real time" in flat(result.messages(gid)), gid
        assert "never yields an operation" in flat(result.messages(gid))


# -- the reference answers (source/broken_lock/_reference.py) -------------------------------

def test_the_reference_is_the_notebooks_solution():
    nb = nbformat.read(h.EXERCISES_DIR / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb",
                       as_version=4)
    namespace = {}
    for cell in ("setup", "schedule_both_inside_solution", "schedule_two_lost_solution",
                 "fixed_lock_solution"):
        exec(h.find_cell(nb, cell).source, namespace)
    ref = load_reference(ASSIGNMENT)
    assert ref.schedule_both_inside == namespace["schedule_both_inside"]
    assert ref.schedule_two_lost == namespace["schedule_two_lost"]
    for kw in ({"rounds": 2}, {"rounds": 3, "hold": 7, "seed": 5}):
        mine = simulate_shared(lock_demo, 4, lock=namespace["FixedLock"], **kw)
        theirs = simulate_shared(lock_demo, 4, lock=ref.FixedLock, **kw)
        assert [tuple(e) for e in mine.trace] == [tuple(e) for e in theirs.trace]
        assert theirs.memory["counter"] == 4 * kw["rounds"]


def test_pes_sharing_a_module_attribute_are_told_so(graded):
    _, results = graded
    board = results["shares_globals"]
    # the timed cell runs each PE in its own process; the random interleavings replay the
    # lock in one process, where the module attribute keeps its value from one replay to
    # the next and the lock breaks (see CAUGHT_BY_VALIDATE below)
    assert board.scores == {**FULL, "timed_tests": 0, "random_tests": 0}
    assert "PEs must not share Python globals" in flat(board.messages("timed_tests"))
    # the visible part of the timed cell says plainly that it cannot see this
    assert "Not checked here: PEs that coordinate through Python globals" in \
        _shown(board, "timed_tests")


def test_a_lock_that_stops_waiting_loses_the_exclusion_points(graded):
    _, results = graded
    result = results["gives_up"]
    # one bug, one deduction: two PEs inside together is charged by the random cell,
    # which also lets one PE keep the lock while the others try for long; the cell of
    # every interleaving finds it too and says a cell above charges it
    assert result.scores == {**FULL, "random_tests": 0}
    random = flat(result.messages("random_tests"))
    assert "PE 0 took the lock and stayed in the critical section" in random
    assert "PE 1 entered after 61 steps while PE 0 is inside" in random
    assert "Does acquire() stop trying after some number of tries?" in random
    exhaustive = flat(_shown(result, "exhaustive_tests"))
    assert ("an interleaving breaks the lock in a way that a cell above already "
            "charges") in exhaustive
    assert "PE 0 took the lock and stayed in the critical section" in exhaustive


def test_a_lock_that_takes_the_lock_another_way_after_long_waits_loses_exclusion(graded):
    _, results = graded
    result = results["falls_back"]
    # it scored 8/8 on part 2, and the cell of every interleaving printed a false proof;
    # now the random cell's long hold goes on after the holder lets go
    assert result.scores == {**FULL, "random_tests": 0}, result.scores
    random = flat(result.messages("random_tests"))
    assert "then PE 0 went on (it left and released the lock)" in random
    assert "PE 1 enters the critical section while PE 0 is inside" in random
    assert "Does acquire() take the lock another way after some number of tries?" in random
    exhaustive = flat(_shown(result, "exhaustive_tests"))
    assert ("an interleaving breaks the lock in a way that a cell above already "
            "charges") in exhaustive
    assert "every interleaving keeps the PEs apart" not in exhaustive
    assert "judging only progress: every interleaving lets both finish, if a PE" in exhaustive


def test_a_flaw_only_the_search_finds_is_charged_after_one_charged_above(graded):
    _, results = graded
    result = results["two_flaws"]
    # the search finds first a PE that waits forever (the timed cell's); it used to give
    # its points back for that, and never looked for the two PEs inside together that only
    # it finds
    assert result.scores == {**FULL, "timed_tests": 0, "exhaustive_tests": 0}, result.scores
    assert "never finished: some PEs wait forever" in flat(result.messages("timed_tests"))
    exhaustive = flat(result.messages("exhaustive_tests"))
    assert "FixedLock with p=2 PEs, 2 rounds each: under the shortest" in exhaustive
    assert "enters the critical section while PE" in exhaustive
    assert "must be one atomic operation (cas or fetch_add)" in exhaustive
    shown = flat(_shown(result, "exhaustive_tests"))
    assert "With 1 round(s) each, an interleaving breaks the lock in a way" in shown
    assert "p = 2, 1 round(s) each, judging only exclusion: every interleaving" in shown


@pytest.mark.parametrize("student, p, rounds", [("only_with_three", 3, "four"),
                                               ("seen_free_three", 2, "five")])
def test_locks_that_cheat_past_the_long_holds_horizon_lose_the_exclusion_points(
        graded, student, p, rounds):
    _, results = graded
    result = results[student]
    # both scored 8/8 on part 2: the long hold let go with two PEs only, and each PE then
    # did two rounds; now it lets go for every p, and two PEs do five rounds each
    assert result.scores == {**FULL, "random_tests": 0}, result.scores
    random = flat(result.messages("random_tests"))
    assert f"FixedLock with p={p} PEs: PE 0 took the lock and stayed" in random
    assert (f"then PE 0 went on (it left and released the lock), every PE did {rounds} "
            "rounds from there") in random
    assert "Does acquire() take the lock another way after some number of tries?" in random
    if p == 2:        # the cell of two PEs finds it too, and says a cell above charges it
        assert ("an interleaving breaks the lock in a way that a cell above already "
                "charges") in flat(_shown(result, "exhaustive_tests"))


def test_a_forgotten_yield_is_named_in_the_message(graded):
    _, results = graded
    result = results["forgets_yield"]
    assert result.scores == {**FULL, "random_tests": 0}
    random = flat(result.messages("random_tests"))
    assert ("acquire() performed no memory operation before PE 1 entered: is a `yield` "
            "missing before cas(...)?") in random
    assert "Its first 0 steps" not in random and "schedule []" in random
    assert "must be one atomic operation" not in random      # it used cas


@pytest.mark.parametrize("student", ["cas_spin", "ttas_backoff", "ticket", "fetch_add",
                                     "cas_no_pause", "ttas_fetch_add", "cas_exponential",
                                     "cas_linear", "anderson"])
def test_honest_locks_of_other_designs_keep_full_marks(graded, student):
    _, results = graded
    h.assert_full_marks(results[student])


def test_a_search_that_runs_out_of_states_says_what_it_checked(graded):
    # a correct fetch-and-add lock: every poll changes the cell, so its interleavings of two
    # rounds are too many to check them all; the cell says what it checked instead
    _, results = graded
    result = results["fetch_add"]
    h.assert_full_marks(result)
    shown = flat(_shown(result, "exhaustive_tests"))
    # every poll changes memory: with one round each, the search stops interleavings at 40
    # steps, and says so
    assert ("p = 2, 1 round(s) each: every interleaving of up to 40 steps keeps the PEs "
            "apart") in shown
    assert "p = 2, 2 round(s) each: too many interleavings to check them all" in shown
    assert "every interleaving of the first" in shown and "random interleavings" in shown


def test_a_livelock_only_the_search_finds_is_named(graded):
    _, results = graded
    result = results["undoes_failed_try"]
    assert result.scores == {**FULL, "exhaustive_tests": 0}, result.scores
    text = flat(result.messages("exhaustive_tests"))
    assert "FixedLock with p=2 PEs, 2 rounds each: a livelock." in text
    assert "can repeat forever" in text and "too many interleavings" not in text


def test_a_lock_that_lets_nobody_in_gets_nothing(graded):
    # the notebook promises that a lock that lets nobody in fails like one that lets two in
    _, results = graded
    result = results["lets_nobody_in"]
    assert result.scores == {**FULL, "timed_tests": 0, "random_tests": 0,
                             "exhaustive_tests": 0}, result.scores
    assert "never finished: some PEs wait forever" in flat(result.messages("timed_tests"))
    for cell in ("random_tests", "exhaustive_tests"):
        text = flat(result.messages(cell))
        assert "FixedLock lets no PE into the critical section" in text, cell
        assert "keeps the PEs apart only because it lets nobody in" in text, cell


def test_schedules_found_by_a_search_of_ones_own_lose_part_1(graded):
    _, results = graded
    result = results["own_search"]
    assert part_1_scores(result) == {"both_inside_tests": 0, "two_lost_tests": 0}
    for cell, name in (("both_inside_tests", "schedule_both_inside"),
                       ("two_lost_tests", "schedule_two_lost")):
        text = flat(result.messages(cell))
        assert f"{name} is found by a search of your own" in text
        assert "Part 1 asks for a schedule found by reasoning" in text


def test_schedules_written_by_hand_and_looked_at_keep_full_marks(graded):
    course, results = graded
    from nbgrader.api import Gradebook          # slow to import: only here
    assert part_1_scores(results["looked_at"]) == PART1_FULL
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        flagged = {grade.name: grade.needs_manual_grade for grade in
                   gb.find_submission_notebook(ASSIGNMENT, ASSIGNMENT, "looked_at").grades}
    assert not flagged["both_inside_tests"] and not flagged["two_lost_tests"]


def test_schedules_found_by_the_librarys_search_lose_part_1(graded):
    _, results = graded
    result = results["searched"]
    assert part_1_scores(result) == {"both_inside_tests": 0, "two_lost_tests": 0}
    for cell, name in (("both_inside_tests", "schedule_both_inside"),
                       ("two_lost_tests", "schedule_two_lost")):
        text = flat(result.messages(cell))
        assert f"{name} is computed with the library's `explore_interleavings`" in text
        assert "this part asks for a schedule you find yourself" in text


@pytest.mark.parametrize("student, cell", [
    ("still_broken", "random_tests"), ("forgets_yield", "random_tests"),
    ("gives_up", "random_tests"), ("never_releases", "timed_tests"),
    ("searched", "both_inside_tests"), ("crashes", "timed_tests"),
    ("own_search", "both_inside_tests"), ("own_search", "two_lost_tests"),
    ("lets_nobody_in", "random_tests"), ("lets_nobody_in", "exhaustive_tests"),
    ("undoes_failed_try", "exhaustive_tests"), ("falls_back", "random_tests"),
    ("two_flaws", "exhaustive_tests"), ("only_with_three", "random_tests"),
    ("seen_free_three", "random_tests"),
    ("no_overlap", "both_inside_tests"), ("incomplete", "two_lost_tests"),
    ("wrong_schedules", "two_lost_tests"),
])
def test_messages_fit_in_what_validate_shows(graded, student, cell):
    # Validate shows every line of an error after four blanks and cuts it at 87
    # characters; the first starts with "AssertionError: "
    _, results = graded
    errors = [out for out in results[student].cell(cell).outputs
              if out.output_type == "error"]
    assert errors, cell
    lines = f"{errors[0].ename}: {errors[0].evalue}".split("\n")
    assert max(len(line) for line in lines) <= 83, lines


# -- the text says what the trace shows (where a marker stands) ------------------------------

def test_the_text_about_markers_matches_the_trace(capsys):
    """The trace stamps a marker with the number of steps done before it (the next step's
    number): the notebook's text and try_schedule's message say so."""
    nb = nbformat.read(h.EXERCISES_DIR / "source" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb",
                       as_version=4)
    text = " ".join(h.find_cell(nb, "machine").source.split())
    assert "happen together with the step before them" not in text
    assert ("In a trace, `3 0 enter cs` therefore means that PE 0 entered the critical section "
            "after step 2 (its `write lock := 1`), before step 3") in text      # spaces joined
    namespace = {}
    for cell in ("setup", "replay_example"):
        exec(h.find_cell(nb, cell).source, namespace)
    capsys.readouterr()
    namespace["try_schedule"]([0, 1, 0, 1])
    shown = capsys.readouterr().out
    assert "       2   0  write lock := 1\n       3   0  enter cs\n       3   1  write lock := 1" \
        in shown
    assert "VIOLATION: PE 1 entered the critical section after step 3 " in shown


# -- what the Validate button says (the visible checks, in a student's saved notebook) --------

#: Submissions whose bug a student's Validate must report, with the start of what it says.
#: (endless is left out to keep the test short: the real-time limits of the checks stop it
#: after 5 to 20 s.) shares_globals: the student's PEs all run in one process, where the
#: replays of the random interleavings break a lock kept in a module attribute.
CAUGHT_BY_VALIDATE = {
    "no_overlap": "After the 4 steps of schedule_both_inside, no two PEs were in",
    "incomplete": "schedule_two_lost is not complete",
    "wrong_schedules": "After schedule_two_lost the counter is 4, not 2",
    "still_broken": ["FixedLock with p=2 PEs, 2 rounds each: under the interleaving of",
                     "the test and the set must be one atomic operation (cas or "
                     "fetch_add)."],
    "never_releases": "FixedLock with p=1 PE, 2 rounds each, never finished",
    "crashes": "schedule_both_inside names PE 7 at step 2",
    "shares_globals": "FixedLock with p=2 PEs, 2 rounds each: under the interleaving of",
    "gives_up": ["FixedLock with p=2 PEs: PE 0 took the lock and stayed in the "
                 "critical section;",
                 "PE 1 entered after 61 steps while PE 0 is inside."],
    "forgets_yield": ["FixedLock with p=2 PEs, 2 rounds each: under the interleaving "
                      "of",
                      "acquire() performed no memory operation before PE 1 entered: is "
                      "a `yield` missing before cas(...)?"],
    "searched": "schedule_both_inside is computed with the library's "
                "`explore_interleavings`; this part asks for a schedule you find "
                "yourself",
    "own_search": ["schedule_both_inside is found by a search of your own",
                   "schedule_two_lost is found by a search of your own"],
    "lets_nobody_in": ["FixedLock with p=1 PE, 2 rounds each, never finished",
                       "FixedLock lets no PE into the critical section"],
    # the visible cell's p = 2 shows it, and its p = 3 the lock that cheats with three PEs
    # or more only (which Validate passed when the cell tried two PEs alone)
    "seen_free_three": ["FixedLock with p=2 PEs: PE 0 took the lock and stayed",
                        "every PE did five rounds from there"],
    "only_with_three": ["FixedLock with p=3 PEs: PE 0 took the lock and stayed",
                        "every PE did four rounds from there"],
}

validated = validated_fixture(ASSIGNMENT, build_submissions, [*CAUGHT_BY_VALIDATE],
                              written={"answer_counter_one": "A written answer."})


test_validate_passes_the_solution, test_validate_reports_each_named_bug = validate_tests(
    {student: [f"AssertionError: {start[0]}", *start[1:]] if isinstance(start, list)
     else f"AssertionError: {start}" for student, start in CAUGHT_BY_VALIDATE.items()})


test_a_visible_check_records_its_kind_of_failure = visible_kind_test([
    ("wrong_schedules", "both_inside_tests", "wrong_entry"),
    ("wrong_schedules", "two_lost_tests", "wrong_entry"),
    ("searched", "both_inside_tests", "uses_library"),
    ("searched", "two_lost_tests", "uses_library"),
    ("own_search", "both_inside_tests", "uses_library"),
    ("lets_nobody_in", "random_tests", "no_entry"),
    ("lets_nobody_in", "exhaustive_tests", "no_entry"),
])


test_no_line_of_a_message_is_cut_by_validate = message_width_test()
