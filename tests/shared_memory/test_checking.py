"""Trace properties and the model checker (collective_lib.shared_memory.checking)."""
from collective_lib.shared_memory import (Event, cell_array, enter, exclusion_violation,
                                          explore_interleavings, find_violation, leave,
                                          mutual_exclusion, pause, read, simulate_shared, write)

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
