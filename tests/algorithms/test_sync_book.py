"""Chapter 3's claims about barriers and locks (book/ch3_barriers_locks).

The chapter's own barriers are copied from its visible cells (section named at each);
the tests check that they are the library's, trace for trace, and that the numbers the
prose quotes hold.  The chapter runs the library's locks without printing them (writing
a lock is the assignment broken_lock).
"""
import collections

import pytest

from collective_lib import CostModel, catalog, compute, simulate
from collective_lib.algorithms.sync import (barrier_demo, barrier_violation, barriers_respected,
                                            binomial_barrier, broken_lock, cas_spin_lock,
                                            diffusion_table, lock_demo, reader_writer_lock,
                                            simple_barrier, ttas_backoff_lock)
from collective_lib.shared_memory import (CoherenceModel, cell_array, exclusion_violation,
                                          explore_interleavings, fetch_add, find_violation,
                                          mutual_exclusion, packed_lines, pause, read,
                                          simulate_shared, write)
from collective_lib.trees import binomial_children, ceil_log2
from collective_lib.viz import critical_sections, memory_spans, waits_on


def same_trace(a, b):
    return [tuple(e) for e in a.trace] == [tuple(e) for e in b.trace]


# §3.1
def increment(me, p, data):
    x = yield read("counter")
    yield write("counter", x + 1)


# §3.3
def shared_counter(me, p, data):
    yield fetch_add("counter", 1)


def own_counter(me, p, data):
    yield fetch_add(("counter", me), 1)


def poll_flag(me, p, data, polls=100):
    for _ in range(polls):
        yield read("flag")


# §3.6
class CounterBarrier:
    def __init__(self, me, p, name="barrier", backoff=1):
        self.p, self.backoff = p, backoff
        self.c, self.epoch = f"{name}.c", f"{name}.epoch"

    @staticmethod
    def memory(p, name="barrier"):
        return {f"{name}.c": 0, f"{name}.epoch": 0}

    def wait(self):
        now = yield read(self.epoch)
        if (yield fetch_add(self.c, 1)) == self.p - 1:
            yield write(self.c, 0)
            yield write(self.epoch, now + 1)
        else:
            while (yield read(self.epoch)) == now:
                yield pause(self.backoff)


def tree_children(me, p):
    kids, step = [], 1
    while me + step < p and me & step == 0:
        kids.append(me + step)
        step *= 2
    return kids


class TreeBarrier:
    def __init__(self, me, p, name="barrier", backoff=1):
        self.me, self.backoff = me, backoff
        self.ready = f"{name}.readyEpoch"
        self.children = tree_children(me, p)
        self.epoch = 0

    @staticmethod
    def memory(p, name="barrier"):
        return cell_array(f"{name}.readyEpoch", p)

    def wait(self):
        self.epoch += 1
        for child in self.children:
            while (yield read((self.ready, child))) != self.epoch:
                yield pause(self.backoff)
        yield write((self.ready, self.me), self.epoch)
        while (yield read((self.ready, 0))) != self.epoch:
            yield pause(self.backoff)


class FlagTreeBarrier(TreeBarrier):
    def wait(self):
        for child in self.children:
            while (yield read((self.ready, child))) != 1:
                yield pause(self.backoff)
        yield write((self.ready, self.me), 1)
        while (yield read((self.ready, 0))) != 1:
            yield pause(self.backoff)


class ReleaseFirstBarrier(CounterBarrier):
    def wait(self):
        now = yield read(self.epoch)
        if (yield fetch_add(self.c, 1)) == self.p - 1:
            yield write(self.epoch, now + 1)
            yield write(self.c, 0)
        else:
            while (yield read(self.epoch)) == now:
                yield pause(self.backoff)


# §3.7
def per_barrier(barrier, p, epochs=4, **kw):
    one = simulate_shared(barrier_demo, p, barrier=barrier, epochs=1, trace=False, **kw)
    more = simulate_shared(barrier_demo, p, barrier=barrier, epochs=epochs, trace=False, **kw)
    return (more.time - one.time) / (epochs - 1)


def one_line(cell):
    return "barrier" if isinstance(cell, str) and cell.startswith("barrier.") else cell


def contention(lock, p, rounds=4, hold=50):
    run = simulate_shared(lock_demo, p, lock=lock, rounds=rounds, hold=hold)
    failed = sum(1 for e in run.trace if e.op == "cas" and e.value is False)
    return run.time / (p * rounds), failed / (p * rounds)


def test_two_increments_can_lose_one():
    assert simulate_shared(increment, 2, memory={"counter": 0},
                           schedule=[0, 1, 0, 1]).memory["counter"] == 1
    assert simulate_shared(increment, 2, memory={"counter": 0},
                           schedule=[0, 0, 1, 1]).memory == {"counter": 2}


@pytest.mark.parametrize("p", range(1, 300))
def test_message_passing_barrier_takes_ceil_log_p_rounds(p):
    e, model = catalog()["barrier"], CostModel(ts=1, tw=0)
    run = e.simulate(p, model=model, trace=p < 40)
    assert run.time == ceil_log2(p) == e.predict(p, 1, model)
    assert run.results == [None] * p
    if p < 40:
        assert len(run.messages) == p * ceil_log2(p)


def test_barrier_numbers_of_the_chapter():
    e = catalog()["barrier"]
    assert e.simulate(1000, model=CostModel(ts=100, tw=1), trace=False).time == 1000

    def work_then_barrier(me, p, work):
        yield compute(work)
        yield from e.program(me, p)
        return None

    work = [0, 5, 2, 9, 1, 0]
    run = simulate(work_then_barrier, 6, inputs=work, model=CostModel(ts=1, tw=0))
    assert run.finish_times == [max(work) + ceil_log2(6)] * 6 == [12.0] * 6


@pytest.mark.parametrize("p", range(1, 65))
def test_one_contended_line_serializes(p):
    assert simulate_shared(shared_counter, p, memory={"counter": 0}).time == 10 + 20 * (p - 1)
    assert simulate_shared(own_counter, p, memory=cell_array("counter", p)).time == 10


def test_coherence_numbers_of_the_chapter():
    assert simulate_shared(poll_flag, 1, memory={"flag": 0}).time == 109 == 10 + 99 * 1
    assert simulate_shared(shared_counter, 64, memory={"counter": 0}).time == 1270
    assert CoherenceModel() == CoherenceModel(hit=1, miss=10, contended=20)


def test_spin_lock_run_of_the_chapter():
    run = simulate_shared(lock_demo, 4, lock=cas_spin_lock, rounds=3)
    assert run.memory["counter"] == 12 and mutual_exclusion(run)


@pytest.mark.parametrize("p", [2, 3, 4, 5, 8])
def test_spin_lock_survives_random_interleavings(p):
    assert find_violation(lock_demo, p, mutual_exclusion, seeds=range(200), lock=cas_spin_lock,
                          rounds=2) is None


def test_spin_lock_survives_every_interleaving_of_two_pes():
    assert explore_interleavings(lock_demo, 2, mutual_exclusion, lock=cas_spin_lock, rounds=2) is None


def test_the_broken_lock_is_caught():
    found = explore_interleavings(lock_demo, 2, mutual_exclusion, lock=broken_lock, rounds=1)
    assert found.schedule == [0, 1, 0, 1] and exclusion_violation(found.trace).pe == 1
    found = find_violation(lock_demo, 3, mutual_exclusion, seeds=range(200), lock=broken_lock,
                           rounds=2)
    assert found.seed == 0 and len(found.schedule) == 24 and found.run.complete is False
    assert exclusion_violation(simulate_shared(lock_demo, 3, lock=broken_lock, rounds=2, seed=0,
                                               trace=True).trace) is not None


@pytest.mark.parametrize("p", [2, 3, 4, 6])
def test_ttas_lock_survives_random_interleavings(p):
    assert find_violation(lock_demo, p, mutual_exclusion, seeds=range(100),
                          lock=ttas_backoff_lock, rounds=2) is None


def test_ttas_lock_survives_every_interleaving_of_two_pes():
    assert explore_interleavings(lock_demo, 2, mutual_exclusion, lock=ttas_backoff_lock,
                                 rounds=1) is None


def test_lock_contention_numbers_of_the_chapter():
    ps = [1, 2, 4, 8, 16, 32, 64]
    spin = {p: contention(cas_spin_lock, p) for p in ps}
    ttas = {p: contention(ttas_backoff_lock, p) for p in ps}
    assert round(spin[1][0]) == 58 and round(ttas[1][0]) == 60
    assert round(spin[8][0]) == 240 and round(ttas[8][0]) == 164
    assert round(spin[64][0]) == 1222 and round(ttas[64][0]) == 947
    for p in ps[1:]:
        assert ttas[p][0] < spin[p][0] and ttas[p][1] < spin[p][1]
    assert round(spin[8][0] / ttas[8][0], 2) == 1.46 and round(spin[64][0] / ttas[64][0], 2) == 1.29
    assert round(spin[64][1]) == 59 and round(ttas[64][1]) == 29
    for costs in (spin, ttas):                      # five- to six-fold from p = 8 to 64
        assert 5 < costs[64][0] / costs[8][0] < 6


@pytest.mark.parametrize("lock", [cas_spin_lock, ttas_backoff_lock])
def test_about_p_transfers_of_the_lock_line_per_hand_over(lock):
    run = simulate_shared(lock_demo, 64, lock=lock, rounds=4, hold=50, trace=False)
    assert 0.9 * 64 < run.transfers["lock"] / (64 * 4) < 1.1 * 64


# §3.4, "What a hand-over costs, derived"
def hand_overs(run):
    gaps, release = [], None
    for e in run.trace:
        if e.op == "write" and e.cell == "lock":
            release = e
        elif e.op == "enter" and release is not None:
            if e.pe != release.pe:
                gaps.append(e.time - release.time)
            release = None
    return gaps


def test_two_pe_hand_overs_are_the_derived_ones():
    cm = CoherenceModel()
    spin = hand_overs(simulate_shared(lock_demo, 2, lock=cas_spin_lock, rounds=4, hold=50))
    ttas = hand_overs(simulate_shared(lock_demo, 2, lock=ttas_backoff_lock, rounds=4, hold=50))
    assert set(spin) == {2 * cm.contended} == {40}
    assert set(ttas) == {cm.miss + 2 * cm.contended} == {50}


@pytest.mark.parametrize("p", list(range(3, 13)) + [16, 32])
def test_spin_lock_hand_over_takes_20_p_plus_1_when_all_others_wait(p):
    gaps = hand_overs(simulate_shared(lock_demo, p, lock=cas_spin_lock, rounds=4, hold=50))
    assert max(gaps) == 20 * (p + 1) and min(gaps) == 40


def moves_while_held(run):
    # Transfers of the lock's line made by other PEs while some PE is in its critical section.
    spans = memory_spans(run)
    return sum(1 for pe, _, a, b in critical_sections(run) for s in spans
               if s.pe != pe and a <= s.start < b and s.cell == "lock" and s.kind == "transfer")


def test_ttas_moves_the_line_less_while_it_is_held():
    runs = {lock.__name__: simulate_shared(lock_demo, 4, lock=lock, rounds=2, hold=100)
            for lock in (cas_spin_lock, ttas_backoff_lock)}
    assert moves_while_held(runs["cas_spin_lock"]) == 35
    assert moves_while_held(runs["ttas_backoff_lock"]) == 6
    assert len(critical_sections(runs["cas_spin_lock"])) == 8
    assert runs["ttas_backoff_lock"].time < runs["cas_spin_lock"].time


def most_at_once(run, section):
    stays = [(a, b) for _, s, a, b in critical_sections(run) if s == section]
    return max(sum(1 for a, b in stays if a <= t < b) for t, _ in stays)


def test_reader_writer_lock_of_the_chapter():
    p = 4
    run = simulate_shared(lock_demo, p, lock=reader_writer_lock, rounds=4, reads=True, hold=20)
    seen = collections.Counter(e.value for e in run.trace if e.op == "read" and e.cell == "rwlock")
    assert set(seen) == {0, 1, p + 1}
    assert most_at_once(run, "read") == 2 and most_at_once(run, "cs") == 1
    assert run.memory["counter"] == 8 and mutual_exclusion(run)
    assert explore_interleavings(lock_demo, 2, mutual_exclusion, lock=reader_writer_lock, rounds=2,
                                 reads=True) is None


@pytest.mark.parametrize("p", range(1, 70))
def test_tree_children_are_the_binomial_children(p):
    for me in range(p):
        assert tree_children(me, p) == sorted(binomial_children(me, p))


def uneven_work(me, e):
    return 7 * ((3 * me + e) % 5)


@pytest.mark.parametrize("p", range(1, 17))
@pytest.mark.parametrize("ours, library", [(CounterBarrier, simple_barrier),
                                           (TreeBarrier, binomial_barrier)])
def test_chapter_barriers_are_the_library_barriers(p, ours, library):
    for kw in ({"epochs": 3}, {"epochs": 2, "work": uneven_work}):
        assert same_trace(simulate_shared(barrier_demo, p, barrier=ours, **kw),
                          simulate_shared(barrier_demo, p, barrier=library, **kw))
    assert same_trace(simulate_shared(barrier_demo, p, barrier=ours, seed=p, epochs=2),
                      simulate_shared(barrier_demo, p, barrier=library, seed=p, epochs=2))


def test_who_waits_on_whom():
    tree_run = simulate_shared(barrier_demo, 8, barrier=binomial_barrier, epochs=1)
    counter_run = simulate_shared(barrier_demo, 8, barrier=simple_barrier, epochs=1)
    assert ({(w.waiter, w.writer) for w in waits_on(tree_run)}
            == {(0, 1), (0, 2), (0, 4), (2, 3), (4, 5), (4, 6), (6, 7)} | {(i, 0) for i in range(1, 8)})
    assert {(w.waiter, w.writer) for w in waits_on(counter_run)} == {(i, 7) for i in range(7)}


def test_tree_barrier_with_uneven_work_is_respected():
    def uneven(me, e):
        return 40 * ((3 * me + e) % 4)

    run = simulate_shared(barrier_demo, 8, barrier=binomial_barrier, epochs=2, work=uneven)
    assert barriers_respected(run)
    arrive = {(pe, e): t for t, pe, e in run.notes("arrive")}
    depart = {(pe, e): t for t, pe, e in run.notes("depart")}
    for e in (1, 2):
        assert min(depart[(pe, e)] for pe in range(8)) >= max(arrive[(pe, e)] for pe in range(8))


@pytest.mark.parametrize("barrier", [simple_barrier, binomial_barrier])
def test_library_barriers_survive_every_interleaving_of_three_pes(barrier):
    assert explore_interleavings(barrier_demo, 3, barriers_respected, barrier=barrier,
                                 epochs=1) is None


def test_flag_barrier_fails_only_when_reused():
    flag = explore_interleavings(barrier_demo, 2, barriers_respected, barrier=FlagTreeBarrier,
                                 epochs=2)
    assert flag.schedule == [1, 0, 0, 1, 1, 1]
    assert barrier_violation(flag.run).value == 2 and barrier_violation(flag.run).pe == 1
    assert find_violation(barrier_demo, 2, barriers_respected, seeds=range(60),
                          barrier=FlagTreeBarrier, epochs=1) is None


def test_release_before_reset_is_caught():
    assert explore_interleavings(barrier_demo, 2, barriers_respected, barrier=ReleaseFirstBarrier,
                                 epochs=2) is not None


def test_barrier_costs_of_the_chapter():
    bps = [2, 4, 8, 16, 32, 64, 128]
    s = {p: per_barrier(simple_barrier, p) for p in bps}
    t = {p: per_barrier(binomial_barrier, p) for p in bps}
    assert round(s[64]) == 1292 and round(t[64]) == 783
    assert t[2] > s[2] and all(t[p] < s[p] for p in bps if p >= 8)
    assert 19 < (s[128] - s[64]) / 64 <= 20.5


@pytest.mark.parametrize("p", [16, 64, 128])
def test_tree_barrier_broadcast_is_p_minus_1_serialized_misses(p):
    # Second barrier, warm caches: from the root's write of readyEpoch[0] to the last
    # departure it takes the root's contended write (20) + 10 (p - 1).
    run = simulate_shared(barrier_demo, p, barrier=binomial_barrier, epochs=2)
    root_write = max(e.time for e in run.trace
                     if e.op == "write" and e.cell == ("barrier.readyEpoch", 0))
    last = max(t for t, pe, e in run.notes("depart") if e == 2)
    assert last - root_write == 20 + 10 * (p - 1)
    assert p != 64 or last - root_write == 650    # "650 of the 783 units for p = 64"


def test_diffusion_table_of_the_chapter():
    rows = {(r.p, r.n_per_pe): r for r in diffusion_table()}
    sizes = (100, 1000, 10_000, 100_000, 1_000_000)
    assert [round(rows[(64, 100)].speedup, 2), round(rows[(128, 100)].speedup, 2)] == [1.56, 1.64]
    assert [rows[(64, 100)].book_speedup, rows[(128, 100)].book_speedup] == [1.84, 2.35]
    assert round(rows[(64, 1000)].speedup, 2) == 1.29 and round(rows[(128, 1000)].speedup, 2) == 1.43
    for p in (64, 128):
        sp = [rows[(p, n)].speedup for n in sizes]
        assert sp == sorted(sp, reverse=True) and sp[-1] < 1.01 and sp[0] > 1.5
        bk = [rows[(p, n)].book_speedup for n in sizes]
        assert bk == sorted(bk, reverse=True)
        for n in sizes:
            assert rows[(p, n)].speedup < rows[(p, n)].book_speedup + 0.01
    assert rows[(64, 1_000_000)].book_simple_ms == 2371 and rows[(64, 100_000)].book_simple_ms == 282
    assert rows[(128, 100_000)].book_simple_ms == 3006 and rows[(128, 10_000)].book_simple_ms == 632
    for n in (100, 1000, 10_000):                 # the gain is larger for more threads
        assert rows[(128, n)].speedup > rows[(64, n)].speedup
        assert rows[(128, n)].book_speedup > rows[(64, n)].book_speedup


def test_table_13_2_times_are_totals_of_fixed_work():
    # Sanders et al. run k = 10^8 p/n iterations: n/p * k = 10^8 updates per thread in every
    # row, so the table's times are totals of the same work.  Chapter 3: in the model that
    # work only gets cheaper as n/p grows; the book's totals fall, then rise again (at 10^5 for
    # p = 64, at 10^4 for p = 128).
    rows = {(r.p, r.n_per_pe): r for r in diffusion_table()}
    sizes = (100, 1000, 10_000, 100_000, 1_000_000)
    for p, turn in ((64, 100_000), (128, 10_000)):
        for column in ("simple", "binomial"):
            per_update = [getattr(rows[(p, n)], column) / n for n in sizes]
            assert per_update == sorted(per_update, reverse=True)
        for column in ("book_simple_ms", "book_binomial_ms"):
            total = [getattr(rows[(p, n)], column) for n in sizes]
            i = sizes.index(turn)
            assert total[:i + 1] == sorted(total[:i + 1], reverse=True)
            assert total[i:] == sorted(total[i:])


@pytest.mark.parametrize("p", [8, 16, 64])
def test_false_sharing_makes_barriers_slower(p):
    tree = per_barrier(binomial_barrier, p, line_of=packed_lines(16)) / per_barrier(binomial_barrier, p)
    counter = per_barrier(simple_barrier, p, line_of=one_line) / per_barrier(simple_barrier, p)
    assert 2.9 < tree < 6 and 2.8 < counter < 3.1


def test_packed_polls_miss_and_the_diffusion_gain_is_lost():
    assert round(per_barrier(binomial_barrier, 64)) == 783

    def missed_polls(line_of):
        run = simulate_shared(barrier_demo, 16, barrier=binomial_barrier, epochs=3, line_of=line_of)
        return sum(1 for s in memory_spans(run) if s.spin and s.kind == "transfer")

    assert missed_polls(None) == 0 and missed_polls(packed_lines(16)) > 100
    packed = diffusion_table(ps=(64,), sizes=(100,), line_of=packed_lines(16))[0]
    assert round(packed.speedup, 2) == 0.36
