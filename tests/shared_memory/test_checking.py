"""Trace properties and the model checker (collective_lib.shared_memory.checking)."""
import pytest

from collective_lib.shared_memory import (Event, cell_array, enter, exclusion_violation,
                                          explore_interleavings, fetch_add, find_livelock,
                                          find_violation, leave, mutual_exclusion, pause, read,
                                          simulate_shared, write)

from shared_memory_programs import atomic_increment, racy_increment


def final_count_ok(run):
    return not run.complete or run.memory["c"] == run.p


# -- properties and the model checker --------------------------------------------------

def test_exclusion_violation_finds_the_second_entry():
    t = [Event(0, 0, "enter", "cs", None), Event(1, 0, "leave", "cs", None),
         Event(2, 1, "enter", "read", None), Event(3, 2, "enter", "read", None),
         Event(4, 0, "enter", "cs", None)]
    assert exclusion_violation(t[:4]) is None                # readers may share
    assert exclusion_violation(t) == t[4]                    # a writer may not join them
    assert exclusion_violation([t[0], Event(1, 1, "enter", "read", None)]).pe == 1


def test_find_violation_returns_a_replayable_interleaving():
    v = find_violation(racy_increment, 2, final_count_ok, memory={"c": 0}, seeds=range(50))
    assert v is not None and v.run.memory["c"] == 1
    replay = simulate_shared(racy_increment, 2, memory={"c": 0}, schedule=v.schedule)
    assert replay.memory["c"] == 1
    assert "read c -> 0" in v.text and str(v).startswith("the check failed (seed")


def test_find_violation_returns_none_when_every_interleaving_is_fine():
    assert find_violation(atomic_increment, 3, final_count_ok, memory={"c": 0}) is None


def test_find_violation_shrinks_to_the_first_failing_steps():
    def prog(me, p, data):
        x = yield read("lock")
        if x == 0:
            yield write("lock", 1)
            yield enter("cs")
            for _ in range(20):
                yield pause(1)
            yield leave("cs")
    v = find_violation(prog, 2, mutual_exclusion, memory={"lock": 0})
    assert len(v.schedule) == 4 and sorted(v.schedule) == [0, 0, 1, 1]   # read, read, write, write
    assert not v.run.complete and exclusion_violation(v.trace) is not None


def test_exhaustive_search_finds_the_shortest_bad_interleaving():
    v = explore_interleavings(racy_increment, 2, final_count_ok, memory={"c": 0})
    assert v is not None and len(v.schedule) == 4 and v.run.memory["c"] == 1
    assert explore_interleavings(atomic_increment, 3, final_count_ok, memory={"c": 0}) is None


def test_exhaustive_search_reports_a_livelock():
    def prog(me, p, data):                 # each waits for the other's flag first
        while (yield read(("flag", 1 - me))) == 0:
            yield pause(1)
        yield write(("flag", me), 1)
    v = explore_interleavings(prog, 2, lambda run: True, memory=cell_array("flag", 2))
    assert v is not None and v.reason.startswith("livelock")
    assert "PE 0 spins on read(flag[1])" in v.reason


def test_find_violation_can_judge_exclusion_alone():
    from collective_lib.algorithms.sync import lock_demo
    from collective_lib.shared_memory import cas, find_violation, mutual_exclusion, pause

    class NeverReleases:                         # exclusive, but the second PE waits forever
        def __init__(self, me, p):
            pass

        @staticmethod
        def memory(p):
            return {"lock": 0}

        def acquire(self):
            while not (yield cas("lock", 0, 1)):
                yield pause(1)

        def release(self):
            yield pause(1)

    def search(**flags):
        return find_violation(lock_demo, 2, mutual_exclusion, seeds=range(5), max_ops=300,
                              lock=NeverReleases, rounds=1, **flags)

    assert search().reason.startswith("no progress")
    assert search(progress=False) is None


# -- what a search that runs out of states has covered, and livelocks that change memory --

class _FetchAddLock:
    """Correct, but every poll adds 1 to the cell: the interleavings have no end."""

    def __init__(self, me, p):
        pass

    @staticmethod
    def memory(p):
        return {"lock": 0}

    def acquire(self):
        while (yield fetch_add("lock", 1)) != 0:
            yield pause(1)

    def release(self):
        yield write("lock", 0)


class _UndoesFailedTry(_FetchAddLock):
    """A failed try is undone: two PEs can knock each other's tries out forever."""

    def acquire(self):
        while True:
            if (yield fetch_add("lock", 1)) == 0:
                return
            yield fetch_add("lock", -1)
            yield pause(1)

    def release(self):
        yield fetch_add("lock", -1)


def test_a_search_that_runs_out_says_how_deep_it_got():
    from collective_lib.algorithms.sync import lock_demo
    from collective_lib.errors import OperationLimitError
    with pytest.raises(OperationLimitError) as excinfo:
        explore_interleavings(lock_demo, 2, mutual_exclusion, max_runs=2000,
                              lock=_FetchAddLock, rounds=2)
    assert 5 <= excinfo.value.covered < 40


def test_a_livelock_that_changes_memory_is_found_and_repeats():
    from collective_lib.algorithms.sync import lock_demo
    v = find_livelock(lock_demo, 2, lock=_UndoesFailedTry, rounds=2)
    assert v is not None and v.reason.startswith("livelock")
    cycle = v.cycle
    assert cycle and set(cycle) == {0, 1} and v.schedule[-len(cycle):] == cycle
    # the cycle really repeats: 20 more times over, nobody enters and nobody returns
    run = simulate_shared(lock_demo, 2, lock=_UndoesFailedTry, rounds=2,
                          schedule=v.schedule + cycle * 20,
                          stop_after=len(v.schedule) + 20 * len(cycle))
    entered = [e for e in run.trace if e.op == "enter"]
    assert entered == [e for e in v.run.trace if e.op == "enter"]
    assert not run.complete


def test_no_livelock_is_found_in_correct_locks():
    from collective_lib.algorithms.sync import cas_spin_lock, lock_demo, ttas_backoff_lock
    for lock in (_FetchAddLock, cas_spin_lock, ttas_backoff_lock):
        assert find_livelock(lock_demo, 2, lock=lock, rounds=2, max_runs=3000) is None


@pytest.mark.parametrize("recorded", [False, True])
def test_a_search_that_goes_on_from_a_state_explores_what_replaying_it_explored(recorded):
    """Both searches step a state on into its last child instead of replaying its prefix:
    the states judged, the depth covered and the cycle found are those of a search that
    replays every prefix from the start (the numbers it gave, before the change)."""
    from collective_lib.algorithms.sync import lock_demo
    from collective_lib.errors import OperationLimitError
    from collective_lib.shared_memory import RecordedLock
    lock = RecordedLock(_UndoesFailedTry) if recorded else _UndoesFailedTry
    stats = {}
    with pytest.raises(OperationLimitError) as excinfo:
        explore_interleavings(lock_demo, 2, mutual_exclusion, max_runs=5000, lock=lock,
                              rounds=2, stats=stats)
    assert (excinfo.value.covered, stats["states"]) == (18, 3566)
    stats = {}
    assert explore_interleavings(lock_demo, 2, mutual_exclusion, max_runs=5000, lock=lock,
                                 rounds=1, stats=stats) is None
    assert stats == {"states": 537, "parked": False, "cut": True}
    v = find_livelock(lock_demo, 2, lock=lock, rounds=2, max_runs=5000)
    assert v.schedule == [0, 0, 0, 0, 1, 0, 1, 1, 1, 1, 0, 0, 0, 1, 1]
    assert v.cycle == [1, 0, 0, 0, 1, 1]
