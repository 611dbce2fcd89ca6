"""Locks and barriers of Sanders et al. 2019, §13.4, on the shared-memory machine."""
import pytest

from collective_lib.algorithms.sync import (BARRIERS, BOOK_TABLE_13_2, LOCKS, barrier_demo,
                                            barrier_violation, barriers_respected,
                                            binomial_barrier, broken_lock, cas_spin_lock,
                                            diffusion, diffusion_table, format_diffusion_table,
                                            lock_demo, reader_writer_lock, run_with_threads,
                                            simple_barrier, ttas_backoff_lock)
from collective_lib.errors import OperationLimitError
from collective_lib.shared_memory import (exclusion_violation, explore_interleavings,
                                          find_violation, mutual_exclusion, packed_lines, pause,
                                          read, simulate_shared)
from collective_lib.trees import binomial_children

GOOD_LOCKS = [cas_spin_lock, ttas_backoff_lock, reader_writer_lock]
SEEDS = range(200)


def p_of(seed):
    return 2 + seed % 7                     # p = 2 .. 8, spread over the seeds


def skew(me, e):
    """Local work before barrier e: PEs arrive in a different order every epoch."""
    return (me * 37 + e * 11) % 23


# -- locks ------------------------------------------------------------------------------

@pytest.mark.parametrize("lock", GOOD_LOCKS, ids=lambda c: c.__name__)
def test_mutual_exclusion_over_many_interleavings(lock):
    reads = lock is reader_writer_lock
    for seed in SEEDS:
        p = p_of(seed)
        run = simulate_shared(lock_demo, p, seed=seed, lock=lock, rounds=2, reads=reads)
        bad = exclusion_violation(run.trace)
        assert bad is None, f"seed={seed}, p={p}: PE {bad.pe} entered at step {bad.time}"
        assert run.memory["counter"] == sum(run.results)     # no lost update
        assert run.memory[next(iter(lock.memory(p)))] == 0   # the lock is free again


@pytest.mark.parametrize("lock", GOOD_LOCKS, ids=lambda c: c.__name__)
def test_every_interleaving_of_two_pes_is_exclusive(lock):
    assert explore_interleavings(lock_demo, 2, mutual_exclusion, lock=lock, rounds=1) is None


def test_every_interleaving_of_two_readers_and_writers_is_exclusive():
    assert explore_interleavings(lock_demo, 2, mutual_exclusion, lock=reader_writer_lock,
                                 rounds=2, reads=True, max_steps=30) is None


@pytest.mark.parametrize("lock", GOOD_LOCKS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("p", [1, 3, 8])
def test_locks_in_the_timed_model(lock, p):
    run = simulate_shared(lock_demo, p, lock=lock, rounds=3, think=5, hold=20)
    assert mutual_exclusion(run)
    assert run.memory["counter"] == 3 * p
    assert run.results == [3] * p


def test_readers_share_the_reader_writer_lock():
    run = simulate_shared(lock_demo, 6, lock=reader_writer_lock, rounds=2, reads=True, hold=200)
    inside, most = set(), 0
    for e in run.trace:
        if e.cell == "read" and e.op in ("enter", "leave"):
            (inside.add if e.op == "enter" else inside.discard)(e.pe)
            most = max(most, len(inside))
    assert mutual_exclusion(run) and most >= 2


def test_a_writer_adds_p_plus_1_and_a_reader_adds_1():
    def prog(me, p, data):
        mine = reader_writer_lock(me, p)
        if me == 0:
            yield from mine.acquire_write()
            seen = yield read("rwlock")
            yield from mine.release_write()
        else:
            yield pause(100)
            yield from mine.acquire_read()
            seen = yield read("rwlock")
            yield pause(100)
            yield from mine.release_read()
        return seen
    run = simulate_shared(prog, 4, memory=reader_writer_lock.memory(4))
    assert run.results[0] == 5 and set(run.results[1:]) <= {1, 2, 3} and 3 in run.results
    assert run.memory["rwlock"] == 0


def test_ttas_spins_on_its_cache_and_beats_cas_under_contention():
    cas_run = simulate_shared(lock_demo, 16, lock=cas_spin_lock, rounds=4, think=5, hold=200)
    ttas_run = simulate_shared(lock_demo, 16, lock=ttas_backoff_lock, rounds=4, think=5,
                               hold=200)
    assert ttas_run.time < cas_run.time
    assert ttas_run.transfers["lock"] < cas_run.transfers["lock"]


def test_ttas_backoff_grows_to_its_maximum_and_shrinks_after_success():
    lock = ttas_backoff_lock(0, 4, first=1, factor=2)
    assert lock.longest == 16

    def prog(me, p, data):
        mine = ttas_backoff_lock(me, p)
        if me == 0:
            yield from mine.acquire()
            yield pause(500)
            yield from mine.release()
            return None
        yield pause(1)
        yield from mine.acquire()
        grown = mine.delay
        yield from mine.release()
        return grown
    run = simulate_shared(prog, 2, memory={"lock": 0})
    assert run.results[1] == 8 / 2                # grew to longest = 8, halved on success
    pauses = [e.value for e in run.events("pause", pe=1)][1:]
    assert pauses[:4] == [1, 2, 4, 8] and max(pauses) == 8


def test_the_broken_lock_is_caught_by_the_model_checker():
    v = find_violation(lock_demo, 3, mutual_exclusion, lock=broken_lock, rounds=2)
    assert v is not None
    bad = exclusion_violation(v.trace)
    assert bad is not None and bad == v.trace[-1]            # shrunk to the violation
    replay = simulate_shared(lock_demo, 3, lock=broken_lock, rounds=2, schedule=v.schedule,
                             stop_after=len(v.schedule))
    assert not mutual_exclusion(replay)
    assert "enter cs" in v.text and f"seed {v.seed}" in str(v)


def test_the_broken_lock_loses_updates_too():
    v = find_violation(lock_demo, 2, lambda r: not r.complete or
                       r.memory["counter"] == sum(r.results), lock=broken_lock, rounds=2)
    assert v is not None and v.run.memory["counter"] < 4


def test_the_shortest_broken_interleaving():
    v = explore_interleavings(lock_demo, 2, mutual_exclusion, lock=broken_lock, rounds=1)
    assert v.schedule == [0, 1, 0, 1]
    assert [(e.pe, e.op, e.cell) for e in v.trace] == [
        (0, "read", "lock"), (1, "read", "lock"), (0, "write", "lock"), (0, "enter", "cs"),
        (1, "write", "lock"), (1, "enter", "cs")]


def test_reads_need_a_lock_with_a_read_mode():
    with pytest.raises(ValueError, match="reader_writer_lock"):
        simulate_shared(lock_demo, 2, lock=cas_spin_lock, reads=True)


# -- barriers ---------------------------------------------------------------------------

@pytest.mark.parametrize("barrier", [simple_barrier, binomial_barrier], ids=lambda c: c.__name__)
def test_no_pe_leaves_an_epoch_before_all_arrived(barrier):
    for seed in SEEDS:
        p = 1 + seed % 9                                       # 1 .. 9
        run = simulate_shared(barrier_demo, p, seed=seed, barrier=barrier, epochs=3)
        bad = barrier_violation(run)
        assert bad is None, f"seed={seed}, p={p}: PE {bad.pe} left epoch {bad.value} early"
        assert run.results == [3] * p


@pytest.mark.parametrize("barrier", [simple_barrier, binomial_barrier], ids=lambda c: c.__name__)
@pytest.mark.parametrize("p", [2, 3, 5, 6, 7, 12, 17, 32])
def test_barriers_in_the_timed_model_with_skewed_arrivals(barrier, p):
    run = simulate_shared(barrier_demo, p, barrier=barrier, epochs=4, work=skew)
    assert barriers_respected(run)
    for e in range(1, 5):
        last_arrival = max(t for t, _, v in run.notes("arrive") if v == e)
        assert min(t for t, _, v in run.notes("depart") if v == e) >= last_arrival


@pytest.mark.parametrize("barrier", [simple_barrier, binomial_barrier], ids=lambda c: c.__name__)
@pytest.mark.parametrize("p, epochs", [(2, 2), (3, 1)])
def test_every_interleaving_of_a_tiny_barrier_is_correct(barrier, p, epochs):
    assert explore_interleavings(barrier_demo, p, barriers_respected, barrier=barrier,
                                 epochs=epochs) is None


def test_the_barrier_check_has_teeth():
    """A binomial barrier that forgets to wait for its children lets PE 0 run ahead."""
    class impatient(binomial_barrier):
        def __init__(self, me, p, **kw):
            super().__init__(me, p, **kw)
            self.children = []
    v = find_violation(barrier_demo, 4, barriers_respected, barrier=impatient, epochs=1,
                       work=1)
    assert v is not None and v.reason == "the check failed"
    bad = barrier_violation(v.run)
    assert bad is not None and bad.pe == 0 and bad == v.trace[-1]
    # Over two epochs PE 0 can even overwrite epoch 1 with 2 before the others
    # saw it: they then wait forever, which the checker reports as no progress.
    v = find_violation(barrier_demo, 4, barriers_respected, barrier=impatient, epochs=2,
                       max_ops=2000)
    assert v.reason.startswith("no progress") and "spins on read(barrier.readyEpoch[0])" \
        in v.reason


def test_binomial_barrier_uses_the_binomial_tree():
    for p in (1, 5, 8, 13):
        for me in range(p):
            assert binomial_barrier(me, p).children == sorted(binomial_children(me, p))
    assert binomial_barrier(0, 8).children == [1, 2, 4]
    assert binomial_barrier(4, 8).children == [5, 6]


def test_counters_need_no_reset_between_barriers():
    run = simulate_shared(barrier_demo, 6, barrier=binomial_barrier, epochs=5)
    assert all(v == 5 for v in run.memory.values())           # readyEpoch[i] = 5
    run = simulate_shared(barrier_demo, 6, barrier=simple_barrier, epochs=5)
    assert run.memory == {"barrier.c": 0, "barrier.epoch": 5}


def test_a_missing_pe_makes_the_others_spin_until_the_limit():
    def absent(me, p, data):
        if me != 2:
            yield from binomial_barrier(me, p).wait()
    with pytest.raises(OperationLimitError) as info:
        simulate_shared(absent, 4, memory=binomial_barrier.memory(4), max_ops=3000)
    text = str(info.value)
    assert "PE 0: spins on read(barrier.readyEpoch[2])" in text
    assert "PE 1: spins on read(barrier.readyEpoch[0])" in text and "PE 2" not in text


def test_binomial_beats_simple_in_line_transfers():
    for p in (16, 64):
        simple = simulate_shared(diffusion, p, barrier=simple_barrier, iterations=2, trace=False)
        tree = simulate_shared(diffusion, p, barrier=binomial_barrier, iterations=2,
                               trace=False)
        assert tree.time < simple.time
        assert tree.transfers[("barrier.readyEpoch", 0)] < simple.transfers["barrier.c"] + \
            simple.transfers["barrier.epoch"]


# -- the diffusion benchmark (Table 13.2) ------------------------------------------------

@pytest.mark.parametrize("p", [1, 2, 5, 8])
def test_diffusion_runs_with_its_default_barrier(p):
    # the default barrier is the binomial tree: the memory declared is that barrier's too
    default = simulate_shared(diffusion, p, iterations=2, trace=False)
    tree = simulate_shared(diffusion, p, barrier=binomial_barrier, iterations=2, trace=False)
    assert default.results == [2] * p and default.time == tree.time


def test_book_table_is_consistent():
    assert len(BOOK_TABLE_13_2) == 10
    for p, n, simple, tree, speedup in BOOK_TABLE_13_2:
        assert round(simple / tree, 2) == speedup


def test_diffusion_table_has_the_shape_of_table_13_2():
    rows = diffusion_table(ps=(16, 64), sizes=(100, 1_000, 10_000, 1_000_000), iterations=2)
    by = {(r.p, r.n_per_pe): r for r in rows}
    for p in (16, 64):
        speedups = [by[p, n].speedup for n in (100, 1_000, 10_000, 1_000_000)]
        assert speedups == sorted(speedups, reverse=True)       # shrinks as n/p grows
        assert speedups[0] > 1.2                                # binomial clearly ahead
        assert speedups[-1] < 1.01                              # close when n/p is large
    assert by[64, 100].speedup > by[16, 100].speedup           # ahead more for larger p
    assert by[64, 100].book_speedup == 1.84 and by[16, 100].book_speedup is None
    text = format_diffusion_table(rows)
    assert "1.84" in text and text.count("\n") == len(rows) + 1


def test_false_sharing_slows_the_unpadded_binomial_barrier():
    padded, = diffusion_table(ps=(32,), sizes=(100,), iterations=2)
    packed, = diffusion_table(ps=(32,), sizes=(100,), iterations=2, line_of=packed_lines(16))
    assert packed.binomial > 2 * padded.binomial


# -- real threads -------------------------------------------------------------------------

@pytest.mark.parametrize("lock", GOOD_LOCKS, ids=lambda c: c.__name__)
def test_locks_on_real_threads(lock, capsys):
    p = 4
    run = run_with_threads(lock_demo, p, lock=lock, rounds=10, reads=lock is reader_writer_lock)
    assert mutual_exclusion(run)
    assert run.memory["counter"] == sum(run.results) > 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("barrier", [simple_barrier, binomial_barrier], ids=lambda c: c.__name__)
@pytest.mark.parametrize("p", [3, 5, 8])
def test_barriers_on_real_threads(barrier, p):
    run = run_with_threads(barrier_demo, p, barrier=barrier, epochs=4)
    assert barriers_respected(run) and run.results == [4] * p


# -- documentation ------------------------------------------------------------------------

@pytest.mark.parametrize("kind", [*LOCKS.values(), *BARRIERS.values(), lock_demo, diffusion],
                         ids=lambda c: c.__name__)
def test_every_program_cites_its_source(kind):
    assert "Sanders et al. 2019, §13.4" in kind.__doc__ or kind is broken_lock or \
        kind is lock_demo
    assert kind.__doc__.strip()
