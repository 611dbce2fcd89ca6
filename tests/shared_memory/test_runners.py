"""Running shared-memory programs: timed, seeded or replayed interleavings, real threads,
and the messages of endless programs (collective_lib.shared_memory.runners)."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collective_lib.errors import OperationLimitError
from collective_lib.shared_memory import (fetch_add, pause, read, run_with_threads,
                                          simulate_shared, write)

from shared_memory_programs import atomic_increment, racy_increment


def wait_for_flag(me, p, data):
    while (yield read("flag")) == 0:
        yield pause(1)


# -- schedulers ------------------------------------------------------------------------

def test_timed_runs_are_deterministic():
    a = simulate_shared(racy_increment, 5, memory={"c": 0})
    b = simulate_shared(racy_increment, 5, memory={"c": 0})
    assert a.trace == b.trace and a.schedule == b.schedule


def test_a_seed_fixes_the_interleaving_and_different_seeds_explore_others():
    runs = [simulate_shared(racy_increment, 3, memory={"c": 0}, seed=s) for s in range(30)]
    again = [simulate_shared(racy_increment, 3, memory={"c": 0}, seed=s) for s in range(30)]
    assert [r.trace for r in runs] == [r.trace for r in again]
    assert len({tuple(r.schedule) for r in runs}) > 10
    assert {r.memory["c"] for r in runs} == {1, 2, 3}     # lost updates do happen


def test_interleaving_time_counts_steps():
    run = simulate_shared(racy_increment, 3, memory={"c": 0}, seed=5)
    assert run.time == run.operations == 6
    assert [e.time for e in run.trace] == list(range(6))
    assert run.mode == "interleaved" and run.seed == 5


def test_a_schedule_replays_a_run_exactly():
    run = simulate_shared(racy_increment, 4, memory={"c": 0}, seed=11)
    replay = simulate_shared(racy_increment, 4, memory={"c": 0}, schedule=run.schedule)
    assert replay.trace == run.trace and replay.results == run.results


def test_the_timed_order_replayed_as_an_interleaving_gives_the_same_values():
    timed = simulate_shared(racy_increment, 6, memory={"c": 0})
    replay = simulate_shared(racy_increment, 6, memory={"c": 0}, schedule=timed.schedule)
    assert replay.memory == timed.memory
    assert [(e.pe, e.op, e.value) for e in replay.trace] == \
        [(e.pe, e.op, e.value) for e in timed.trace]


def test_a_short_schedule_is_continued_round_robin_or_by_the_seed():
    run = simulate_shared(racy_increment, 2, memory={"c": 0}, schedule=[1])
    assert run.schedule == [1, 0, 1, 0]
    seeded = simulate_shared(racy_increment, 3, memory={"c": 0}, schedule=[2, 2], seed=4)
    assert seeded.schedule[:2] == [2, 2] and len(seeded.schedule) == 6


def test_bad_schedules_are_named():
    with pytest.raises(ValueError, match="ranks in 0..1"):
        simulate_shared(racy_increment, 2, memory={"c": 0}, schedule=[0, 2])
    with pytest.raises(ValueError, match="names PE 0 at step 2, but PE 0 has returned"):
        simulate_shared(racy_increment, 2, memory={"c": 0}, schedule=[0, 0, 0])


def test_stop_after_returns_a_partial_run():
    run = simulate_shared(racy_increment, 2, memory={"c": 0}, schedule=[0, 1, 0, 1],
                          stop_after=2)
    assert not run.complete and run.operations == 2 and run.results == [None, None]
    with pytest.raises(ValueError, match="stop_after"):
        simulate_shared(racy_increment, 2, memory={"c": 0}, stop_after=2)


@settings(max_examples=40, deadline=None)
@given(p=st.integers(1, 6), k=st.integers(1, 4), seed=st.integers(0, 10**6))
def test_fetch_add_never_loses_an_update(p, k, seed):
    def prog(me, p, data):
        olds = []
        for _ in range(k):
            olds.append((yield fetch_add("c", 1)))
        return olds
    run = simulate_shared(prog, p, memory={"c": 0}, seed=seed)
    assert run.memory["c"] == p * k
    assert sorted(x for r in run.results for x in r) == list(range(p * k))


# -- endless programs ------------------------------------------------------------------

@pytest.mark.parametrize("mode", [{}, {"seed": 2}])
def test_spinning_forever_hits_the_operation_limit_with_a_clear_message(mode):
    with pytest.raises(OperationLimitError) as info:
        simulate_shared(wait_for_flag, 3, memory={"flag": 0}, max_ops=600, **mode)
    text = str(info.value)
    assert "max_ops=600" in text and "3 PE(s) have not returned" in text
    for pe in range(3):
        assert f"PE {pe}: spins on read(flag) seeing 0" in text
    assert "livelock or deadlock" in text


def test_the_message_names_only_the_pes_still_running():
    def prog(me, p, data):
        if me == 0:
            yield write("flag", 0)
        else:
            yield from wait_for_flag(me, p, data)
    with pytest.raises(OperationLimitError, match=r"2 PE\(s\)") as info:
        simulate_shared(prog, 3, memory={"flag": 0}, max_ops=300)
    assert "PE 0" not in str(info.value)


def test_threads_stop_at_the_operation_limit():
    with pytest.raises(OperationLimitError, match=r"PE \d: spins on read\(flag\)"):
        run_with_threads(wait_for_flag, 2, memory={"flag": 0}, max_ops=500)


def test_max_ops_is_validated():
    with pytest.raises(ValueError, match="max_ops"):
        simulate_shared(atomic_increment, 1, memory={"c": 0}, max_ops=0)


# -- real threads ----------------------------------------------------------------------

def test_threads_run_the_same_programs():
    run = run_with_threads(atomic_increment, 6, memory={"c": 0})
    assert sorted(run.results) == list(range(6)) and run.memory == {"c": 6}
    assert run.mode == "threads" and run.operations == 6


def test_an_exception_in_a_thread_is_reraised_with_the_pe():
    def prog(me, p, data):
        yield read("c")
        if me == 1:
            raise RuntimeError("boom")
    with pytest.raises(RuntimeError, match="boom") as info:
        run_with_threads(prog, 3, memory={"c": 0})
    assert "raised by PE 1 of 3 (thread)" in info.value.__notes__


def test_threads_time_out_and_name_the_pes(capsys):
    with pytest.raises(TimeoutError, match=r"PE 0: spins on read\(flag\)"):
        run_with_threads(wait_for_flag, 2, memory={"flag": 0}, timeout=0.2, max_ops=10**9)
    assert capsys.readouterr().err == ""
