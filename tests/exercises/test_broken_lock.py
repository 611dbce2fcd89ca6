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

import nbgrader_harness as h
from collective_lib.algorithms.sync import lock_demo
from collective_lib.shared_memory import simulate_shared
from exercise_references import load_reference
from exercise_submissions import SPINS

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

CRASHING_ACQUIRE = """
while not (yield cas(self.cells[0], 0, 1)):  # there is no self.cells
    yield pause(1)
"""
CRASHING_SCHEDULE = "schedule_both_inside = [0, 1, 7, 1]"


def build_submissions(source: Path) -> dict:
    def lock(acquire, release=None):
        # the second region first: the first keeps its number
        change = [] if release is None else [("fixed_lock_solution", release, 1)]
        return change + [("fixed_lock_solution", acquire, 0)]

    return h.submissions(source, {
        "wrong_schedules": [("schedule_both_inside_solution", NO_OVERLAP),
                            ("schedule_two_lost_solution", ONE_PE_AFTER_THE_OTHER)],
        "still_broken": lock(STILL_BROKEN_ACQUIRE),
        "never_releases": lock(GOOD_ACQUIRE, NEVER_RELEASES),
        "crashes": [("schedule_both_inside_solution", CRASHING_SCHEDULE),
                    *lock(CRASHING_ACQUIRE),
                    ("schedule_two_lost_solution", INCOMPLETE)],
        "endless": lock(SPINS),
        "shares_globals": lock(BOARD_ACQUIRE, BOARD_RELEASE),
    })


graded = h.graded_fixture(ASSIGNMENT, build_submissions)


def set_of_autograded_ids(result) -> set:
    return set(h.autograded_ids(result))


# -- the release ------------------------------------------------------------------------------

def test_release_hides_solutions_and_hidden_tests(graded):
    course, _ = graded
    h.assert_release_hides(course, ASSIGNMENT, [
        "[0, 1, 0, 1]", "0, 0,                # PE 0 takes", "cas(self.cell, 0, 1)",
        "take it atomically", "the last write is its first-round write",
        "range(1, 9), rounds=3", "seeds=range(150)", "rounds=2, time_limit_s=20",
        "_sync.broken_lock"],
        shows=["YOUR ANSWER HERE", "class FixedLock:", "def memory(p, cell=\"lock\"):",
               "def acquire(self):", "def release(self):",
               "def try_schedule(schedule, p=2, rounds=1):",
               "check_lock_progress(FixedLock, [1, 2, 3], rounds=2, time_limit_s=5, "
               "exclusion=False)",
               "check_lock_exhaustive(FixedLock, 2, rounds=1, time_limit_s=5)"],
        unanswered=4)                                     # two schedules, acquire, release


def test_released_notebook_runs_and_fails_only_for_missing_answers(graded):
    """A student's first run: the given cells work, the tests say what is missing."""
    course, _ = graded
    nb = nbformat.read(course / "release" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    from nbclient import NotebookClient
    NotebookClient(nb, timeout=60, kernel_name="python3", allow_errors=True,
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


def test_still_broken_lock_loses_the_exclusion_cells_with_the_violating_trace(graded):
    _, results = graded
    result = results["still_broken"]
    assert all(result.scores[g] == result.max_scores[g] for g in PART1)
    # one bug, the cells that judge it: exclusion (random and every interleaving), not progress
    assert result.scores["timed_tests"] == result.max_scores["timed_tests"]
    assert result.scores["random_tests"] == result.scores["exhaustive_tests"] == 0
    random = result.messages("random_tests")
    assert "enters the critical section while PE" in random
    assert "schedule [" in random and "write lock := 1" in random
    assert "must be one atomic operation (cas or fetch_add)" in random
    exhaustive = result.messages("exhaustive_tests")
    assert "under the shortest interleaving that breaks it" in exhaustive
    assert "schedule [0, 1, 0, 1]" in exhaustive


def test_lock_that_never_releases_loses_the_progress_cells(graded):
    _, results = graded
    result = results["never_releases"]
    assert all(result.scores[g] == result.max_scores[g] for g in PART1)
    # one bug, the cells that judge it: progress (timed and every interleaving), not exclusion
    assert result.scores["random_tests"] == result.max_scores["random_tests"]
    assert result.scores["timed_tests"] == result.scores["exhaustive_tests"] == 0
    for gid in ("timed_tests", "exhaustive_tests"):
        assert "never finished: some PEs wait forever" in result.messages(gid), gid
    assert "does release() really free the lock" in result.messages("timed_tests")


def test_crashing_submission_gets_zero_with_a_helpful_message(graded):
    _, results = graded
    result = results["crashes"]
    assert result.total == 0
    assert ("schedule_both_inside names PE 7 at step 2, but there are only 2 PEs"
            in result.messages("both_inside_tests"))
    assert "schedule_two_lost is not complete" in result.messages("two_lost_tests")
    for gid in PART2:
        text = result.messages(gid)
        assert "raised AttributeError" in text and "self.cells" in text, gid


def test_endless_submission_is_stopped_with_a_helpful_message(graded):
    _, results = graded
    result = results["endless"]
    assert all(result.scores[g] == result.max_scores[g] for g in PART1)
    assert all(result.scores[g] == 0 for g in PART2)
    assert "did not finish within 5 s of real time" in result.messages("timed_tests")
    for gid in ("random_tests", "exhaustive_tests"):
        assert "took more than 5 s of real time" in result.messages(gid), gid
        assert "never yields an operation" in result.messages(gid)


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
    assert board.scores["timed_tests"] == 0
    assert "PEs must not share Python globals" in board.messages("timed_tests")
    assert board.scores["both_inside_tests"] == board.max_scores["both_inside_tests"]
