"""Tests of the chapter 3 grading helpers: schedules and lock classes.

Every helper must accept a correct submission and turn every kind of failure (an invalid
schedule, a lock that lets two PEs in, one that lets nobody in, one that crashes, one that
loops without yielding, one copied from the library) into an AssertionError whose text says
what went wrong, short enough to read, without writing anything to stderr.
"""
import re
import signal

import numpy as np
import pytest

from collective_lib.algorithms.sync import (broken_lock, cas_spin_lock, lock_demo,
                                            ttas_backoff_lock)
from collective_lib.grading import (check_lock_exclusion, check_lock_exhaustive,
                                    check_lock_progress, check_own_lock, failure_kind,
                                    replay_schedule, take_review_flags)
from collective_lib.grading.locks import forbid_searched_schedule
from collective_lib.shared_memory import cas, exclusion_violation, fetch_add, pause, read, write

needs_alarm = pytest.mark.skipif(not hasattr(signal, "setitimer"),
                                 reason="the wall-clock guard needs SIGALRM and setitimer")


# -- lock classes used as "student submissions" ---------------------------------------------

class GoodLock:
    def __init__(self, me, p):
        self.cell = "lock"

    @staticmethod
    def memory(p):
        return {"lock": 0}

    def acquire(self):
        while True:
            while (yield read(self.cell)) != 0:
                yield pause(1)
            if (yield cas(self.cell, 0, 1)):
                return

    def release(self):
        yield write(self.cell, 0)


class TicketLock:
    """Correct, with two cells and fetch_add: the helpers accept other designs too."""

    def __init__(self, me, p):
        self.ticket = None

    @staticmethod
    def memory(p):
        return {"next": 0, "serving": 0}

    def acquire(self):
        self.ticket = yield fetch_add("next", 1)
        while (yield read("serving")) != self.ticket:
            yield pause(1)

    def release(self):
        yield write("serving", self.ticket + 1)


class ReadThenWrite(GoodLock):
    def acquire(self):
        while (yield read(self.cell)) != 0:
            yield pause(1)
        yield write(self.cell, 1)


class NeverReleases(GoodLock):
    def release(self):
        yield pause(1)


class UndoesWrongly(GoodLock):
    """fetch_add test-and-set whose release writes 0 over the others' tentative increments."""

    def acquire(self):
        while (yield fetch_add(self.cell, 1)) != 0:
            yield fetch_add(self.cell, -1)


class Crashes(GoodLock):
    def acquire(self):
        yield read(self.cell)
        return 1 / 0


class Endless(GoodLock):
    def acquire(self):
        while True:
            pass
        yield


class Stub(GoodLock):
    def acquire(self):
        raise NotImplementedError()


class NotAGenerator(GoodLock):
    def acquire(self):
        return None


class Inherits(cas_spin_lock):
    pass


class Aliases(GoodLock):
    acquire = cas_spin_lock.acquire


class CallsLibrary(GoodLock):
    def acquire(self):
        yield from cas_spin_lock(0, 2).acquire()


class BadMemory(GoodLock):
    @staticmethod
    def memory(p):
        return [("lock", 0)]


class UndeclaredCell(GoodLock):
    def acquire(self):
        while not (yield cas("mutex", 0, 1)):
            yield pause(1)


class GivesUp(GoodLock):
    """Tries 30 times, then enters anyway (a student audit): the search of every
    interleaving parked its polls, and random interleavings never leave a PE alone
    so long."""

    def acquire(self):
        for _ in range(30):
            if (yield cas(self.cell, 0, 1)):
                return
            yield pause(1)


def falls_back(cut_off):
    """A lock that tries ``cut_off`` CAS, then reads the cell and writes 1 (a student
    audit): while one PE holds the lock the others only read 1, so the flaw shows only
    once the holder lets go; the search of every interleaving parked the polls."""

    class FallsBack(GoodLock):
        def acquire(self):
            tries = 0
            while True:
                if tries < cut_off:
                    if (yield cas(self.cell, 0, 1)):
                        return
                elif (yield read(self.cell)) == 0:
                    yield write(self.cell, 1)
                    return
                tries += 1
                yield pause(1)

    return FallsBack


class OnlyWithThree(GoodLock):
    """A CAS lock that, with three PEs or more and after 100 failed tries, waits until the
    cell reads 0 and then writes 1, not atomically (a student audit): the step after the
    long hold, which lets go, ran with two PEs only, so 8/8."""

    def __init__(self, me, p):
        super().__init__(me, p)
        self.p = p

    def acquire(self):
        tries = 0
        while not (yield cas(self.cell, 0, 1)):
            tries += 1
            if self.p >= 3 and tries > 100:
                while (yield read(self.cell)) != 0:
                    yield pause(1)
                yield write(self.cell, 1)
                return
            yield pause(1)


class SeenFreeThree(GoodLock):
    """After 30 failed CAS in its life a PE only reads until the lock is free; the third
    time it finds it free it writes 1 instead of a CAS (a student audit): after the long
    hold each PE did two rounds, so the third sighting never came, and 8/8."""

    def __init__(self, me, p):
        super().__init__(me, p)
        self.fails, self.seen_free = 0, 0

    def acquire(self):
        while True:
            if self.fails < 30:
                if (yield cas(self.cell, 0, 1)):
                    return
                self.fails += 1
                yield pause(1)
                continue
            while (yield read(self.cell)) != 0:
                yield pause(1)
            self.seen_free += 1
            if self.seen_free >= 3:
                yield write(self.cell, 1)
                return
            if (yield cas(self.cell, 0, 1)):
                return


class TwoFlaws(GoodLock):
    """release() frees the lock for PE 1 only (a PE waits forever), and a PE that arrives
    a second time with nobody else having arrived takes the lock without a CAS (two PEs
    inside together, in an interleaving that only the search of every interleaving
    finds, after the shorter one in which a PE waits forever)."""

    def __init__(self, me, p):
        super().__init__(me, p)
        self.me, self.arrived = me, 0

    @staticmethod
    def memory(p):
        return {"lock": 0, "arrivals": 0}

    def acquire(self):
        self.arrived += 1
        if (yield fetch_add("arrivals", 1)) == 1 and self.arrived == 2:
            if (yield read(self.cell)) == 0:
                yield write(self.cell, 1)
                return
        while not (yield cas(self.cell, 0, 1)):
            yield pause(1)

    def release(self):
        yield cas(self.cell, self.me, 0)


class ForgetsYield(GoodLock):
    """``cas(...)`` without ``yield``: a truthy record, never performed; acquire()
    returns at once."""

    def acquire(self):
        while not cas(self.cell, 0, 1):
            yield pause(1)


class Alternating(GoodLock):
    """Correct, but never repeats the same poll: the exhaustive search cannot prune it."""

    def acquire(self):
        n = 0
        while True:
            n += 1
            if (yield cas(self.cell, 0, 1)):
                return
            yield pause(n)


class FetchAddLock(GoodLock):
    """Correct (a student audit): while the lock is held the cell is at least 1, and only
    the holder's release writes 0; but every poll adds 1, so the interleavings of two
    rounds have no end, and the search of every interleaving runs out of states."""

    def acquire(self):
        while (yield fetch_add(self.cell, 1)) != 0:
            yield pause(1)


class UndoesFailedTry(GoodLock):
    """A fetch-and-add lock that undoes a failed increment: two waiting PEs can knock each
    other's tries out forever (a livelock under an adversarial scheduler)."""

    def acquire(self):
        while True:
            if (yield fetch_add(self.cell, 1)) == 0:
                return
            yield fetch_add(self.cell, -1)
            yield pause(1)

    def release(self):
        yield fetch_add(self.cell, -1)


class ArrayLock(GoodLock):
    """Correct (Anderson's array lock, a student audit): each PE takes a slot with
    fetch_add and polls a flag of its own, once per unit of time; it needs the most
    operations of the correct designs (9,618 with p = 8 and 3 rounds)."""

    def __init__(self, me, p):
        self.p, self.slot = p, None

    @staticmethod
    def memory(p):
        return {"tail": 0, **{f"flag{i}": int(i == 0) for i in range(p)}}

    def acquire(self):
        self.slot = (yield fetch_add("tail", 1)) % self.p
        while (yield read(f"flag{self.slot}")) == 0:
            yield pause(1)
        yield write(f"flag{self.slot}", 0)

    def release(self):
        yield write(f"flag{(self.slot + 1) % self.p}", 1)


class CountsItsTries(GoodLock):
    """Never lets go, and every waiting PE counts its tries in the lock's cell: memory
    changes at every poll, yet nobody gets in."""

    def acquire(self):
        while (yield fetch_add(self.cell, 1)) != 0:
            yield pause(1)

    def release(self):
        yield pause(1)


class LetsNobodyIn(GoodLock):
    """Never lets a PE in: it keeps every PE apart, trivially (a student audit)."""

    def acquire(self):
        while True:
            yield pause(1)


def message(excinfo) -> str:
    """The failure's message with its line breaks (and the indentation after them) made
    blanks: messages are wrapped to Validate's width wherever their words fall."""
    return re.sub(r"\n *", " ", str(excinfo.value))


# -- replay_schedule ---------------------------------------------------------------------------

def test_replay_runs_exactly_the_schedule():
    run = replay_schedule(lock_demo, 2, [0, 1, 0, 1], lock=broken_lock, rounds=1)
    assert run.schedule == [0, 1, 0, 1] and not run.complete
    assert exclusion_violation(run.trace).pe == 1
    full = replay_schedule(lock_demo, 2, [0] * 5 + [1] * 5, lock=broken_lock, rounds=1)
    assert full.complete and full.memory["counter"] == 2


def test_replay_accepts_tuples_and_numpy_arrays():
    a = replay_schedule(lock_demo, 2, (0, 1, 0, 1), lock=broken_lock, rounds=1)
    b = replay_schedule(lock_demo, 2, np.array([0, 1, 0, 1]), lock=broken_lock, rounds=1)
    assert a.schedule == b.schedule == [0, 1, 0, 1]


@pytest.mark.parametrize("schedule, text", [
    ("0101", "must be a list of PE numbers such as [0, 1, 1, 0], got '0101' (str)"),
    (None, "must be a list of PE numbers"),
    ([0, 1.0], "must list PE numbers (ints), but step 1 is 1.0 (float)"),
    ([0, True], "but step 1 is True (bool)"),
    ([0, 2], "names PE 2 at step 1, but there are only 2 PEs (0 and 1)"),
    ([-1], "names PE -1 at step 0"),
    ([0] * 2000, "has 2000 steps; no more than 1000 are needed here"),
])
def test_replay_rejects_invalid_schedules(schedule, text):
    with pytest.raises(AssertionError) as excinfo:
        replay_schedule(lock_demo, 2, schedule, lock=broken_lock, rounds=1)
    assert text in message(excinfo)


def test_replay_explains_a_step_of_a_finished_pe_with_the_trace_so_far():
    with pytest.raises(AssertionError) as excinfo:
        replay_schedule(lock_demo, 2, [0] * 6, what="my_schedule", lock=broken_lock, rounds=1)
    text = message(excinfo)
    assert text.startswith("my_schedule names PE 0 at step 5, but PE 0 has already returned")
    assert "write lock := 0" in text and "time  PE  operation" in text


def test_replay_explains_an_exception_of_the_program():
    def program(me, p, data):
        yield read("x")
        raise KeyError("oops")
    with pytest.raises(AssertionError) as excinfo:
        replay_schedule(program, 1, [0], memory={"x": 0})
    assert "raised KeyError: 'oops'" in message(excinfo)


# -- check_own_lock ----------------------------------------------------------------------------

def test_own_lock_accepts_students_locks():
    check_own_lock(GoodLock)
    check_own_lock(TicketLock)


@pytest.mark.parametrize("lock, text", [
    (Inherits, "Inherits inherits from the library's cas_spin_lock"),
    (Aliases, "Aliases.acquire is the library's own cas_spin_lock.acquire"),
    (CallsLibrary, "uses the library's `cas_spin_lock`"),
    (Stub, "raised NotImplementedError"),
    (NotAGenerator, "NotAGenerator.acquire() must be a generator"),
    (BadMemory, "BadMemory.memory(p) must return a dict"),
    (GoodLock(0, 2), "must be a class"),
])
def test_own_lock_rejects_what_is_not_the_students_own_lock(lock, text):
    with pytest.raises(AssertionError) as excinfo:
        check_own_lock(lock)
    assert text in message(excinfo)


def test_stub_gets_the_hint_to_replace_it():
    with pytest.raises(AssertionError) as excinfo:
        check_own_lock(Stub)
    assert "replace `raise NotImplementedError()`" in message(excinfo)


# -- the three lock checks ---------------------------------------------------------------------

@pytest.mark.parametrize("lock", [GoodLock, TicketLock, cas_spin_lock,
                                  ttas_backoff_lock])
def test_correct_locks_pass_every_check(lock):
    check_lock_progress(lock, range(1, 7), rounds=3)
    check_lock_exclusion(lock, [2, 3, 4], seeds=range(60))
    check_lock_exhaustive(lock, 2, rounds=2)


def test_a_lock_that_lets_two_in_is_caught_with_its_trace():
    with pytest.raises(AssertionError) as excinfo:
        check_lock_exhaustive(ReadThenWrite, 2, rounds=2)
    text = message(excinfo)
    assert text.startswith("ReadThenWrite with p=2 PEs, 2 rounds each: under the shortest "
                           "interleaving that breaks it, PE 1 enters the critical section "
                           "while PE 0 is inside.")
    assert "schedule [0, 1, 0, 1]" in text and "write lock := 1" in text
    assert "must be one atomic operation (cas or fetch_add)" in text
    with pytest.raises(AssertionError) as excinfo:
        check_lock_exclusion(ReadThenWrite, [3], seeds=range(50))
    assert "under the interleaving of seed" in message(excinfo)
    with pytest.raises(AssertionError) as excinfo:
        check_lock_progress(ReadThenWrite, [2, 3])
    assert "entered the critical section at time" in message(excinfo)


@pytest.mark.parametrize("check", [
    lambda lock: check_lock_progress(lock, [1, 2]),
    lambda lock: check_lock_exclusion(lock, [2], seeds=range(5)),
    lambda lock: check_lock_exhaustive(lock, 2, rounds=1),
])
def test_a_lock_that_is_never_released_makes_no_progress(check):
    with pytest.raises(AssertionError) as excinfo:
        check(NeverReleases)
    text = message(excinfo)
    assert "never finished: some PEs wait forever" in text
    assert "spins on read(lock) seeing 1" in text and "\n  PE " in str(excinfo.value)
    assert "does release() really free the lock" in text
    assert len(text) < 2000


def test_a_livelocking_fetch_add_lock_is_caught_and_the_message_stays_short():
    with pytest.raises(AssertionError) as excinfo:
        check_lock_exclusion(UndoesWrongly, [3], seeds=range(10))
    assert len(message(excinfo)) < 3000          # not the whole 20000-step schedule
    with pytest.raises(AssertionError):
        check_lock_progress(UndoesWrongly, [2, 3])


def test_the_timed_runs_stop_at_three_times_what_a_correct_lock_needs():
    # a student audit: a fixed budget of 5,000 operations a run (under the grader) told
    # Anderson's array lock, which needs 7,118 with p = 7 and 3 rounds, that some PEs wait
    # forever; the budget is now three times p * p * rounds * (60 + hold)
    check_lock_progress(ArrayLock, range(1, 9), rounds=3)
    check_lock_progress(ArrayLock, [2, 5, 8], rounds=2, hold=7)
    with pytest.raises(AssertionError) as excinfo:
        check_lock_progress(ArrayLock, [7], rounds=3, max_ops=7_000)
    assert "did not finish within 7,000 operations" in message(excinfo)
    # the PEs keep writing to memory: the message does not say that a PE waits forever
    with pytest.raises(AssertionError) as excinfo:
        check_lock_progress(CountsItsTries, [2, 3], rounds=2)
    assert failure_kind(excinfo.value) == "no_progress"
    text = message(excinfo)
    assert text.startswith("CountsItsTries with p=2 PEs, 2 rounds each did not finish "
                           "within 1,440 operations, 3 times what a correct lock needs at "
                           "most here, although the PEs kept writing to shared memory")
    assert "never finished" not in text and "PE 1: next operation FetchAdd" in text
    first, *rest = str(excinfo.value).split("\n")
    assert len(f"AssertionError: {first}") <= 83 and all(len(line) <= 83 for line in rest)
    # nobody writes: some PEs wait forever, and it is found within the run's budget
    with pytest.raises(AssertionError) as excinfo:
        check_lock_progress(NeverReleases, [1], rounds=2)
    assert "never finished: some PEs wait forever" in message(excinfo)
    assert re.search(r"seeing 1 \(1[0-9]{2} times in a row\)", message(excinfo))


@pytest.mark.parametrize("check", [
    lambda lock: check_lock_progress(lock, [2]),
    lambda lock: check_lock_exclusion(lock, [2], seeds=range(5)),
    lambda lock: check_lock_exhaustive(lock, 2, rounds=1),
])
def test_an_exception_in_the_lock_is_explained(check):
    with pytest.raises(AssertionError) as excinfo:
        check(Crashes)
    text = message(excinfo)
    assert "raised ZeroDivisionError: division by zero" in text
    assert "`return 1 / 0`" in text


def test_an_undeclared_cell_is_named():
    with pytest.raises(AssertionError) as excinfo:
        check_lock_progress(UndeclaredCell, [2])
    assert "'mutex', which is not declared in memory" in message(excinfo)


@needs_alarm
@pytest.mark.parametrize("check, text", [
    (lambda lock: check_lock_progress(lock, [2], time_limit_s=0.5),
     "Endless did not finish within 0.5 s of real time"),
    (lambda lock: check_lock_exclusion(lock, [2], time_limit_s=0.5),
     "took more than 0.5 s of real time"),
    (lambda lock: check_lock_exhaustive(lock, 2, time_limit_s=0.5),
     "took more than 0.5 s of real time"),
])
def test_an_endless_lock_is_stopped_by_the_clock(check, text):
    with pytest.raises(AssertionError) as excinfo:
        check(Endless)
    assert text in message(excinfo)
    assert "never yields an operation" in message(excinfo)


def test_a_search_that_runs_out_of_states_says_what_it_checked():
    # a correct lock is not failed because its interleavings are too many to check
    checked = " ".join(check_lock_exhaustive(Alternating, 2, rounds=2, max_runs=200).split())
    assert "too many interleavings to check them all (more than 200 states)" in checked
    assert re.search(r"every interleaving of the first \d+ steps", checked)
    assert "random interleavings" in checked and "every interleaving keeps" not in checked
    assert check_lock_exhaustive(GoodLock, 2, rounds=2).startswith("every interleaving")


def test_a_correct_lock_whose_polls_change_memory_keeps_the_exhaustive_check():
    # a student audit: the search gave up on it with a hint that blamed the lock
    checked = " ".join(check_lock_exhaustive(FetchAddLock, 2, rounds=2).split())
    assert "too many interleavings to check them all" in checked
    check_lock_exhaustive(FetchAddLock, 2, rounds=1)
    check_lock_exclusion(FetchAddLock, [2, 3, 4], seeds=range(60))
    check_lock_progress(FetchAddLock, range(1, 7), rounds=3)
    assert take_review_flags() == []


def test_a_livelock_that_changes_memory_is_named():
    with pytest.raises(AssertionError) as excinfo:
        check_lock_exhaustive(UndoesFailedTry, 2, rounds=2)
    assert failure_kind(excinfo.value) == "no_progress"
    text = message(excinfo)
    assert text.startswith("UndoesFailedTry with p=2 PEs, 2 rounds each: a livelock.")
    assert "can repeat forever" in text and "too many interleavings" not in text
    first, *rest = str(excinfo.value).split("\n")
    assert len(f"AssertionError: {first}") <= 83 and all(len(line) <= 83 for line in rest)


@pytest.mark.parametrize("check", [
    lambda lock: check_lock_exclusion(lock, [2], seeds=range(20), progress=False),
    lambda lock: check_lock_exclusion(lock, [5], seeds=range(5), rounds=3, progress=False),
    lambda lock: check_lock_exhaustive(lock, 2, rounds=1),
    lambda lock: check_lock_exhaustive(lock, 2, rounds=2, progress=False),
])
def test_a_lock_that_lets_nobody_in_gets_no_credit_for_exclusion(check):
    # a student audit: 6 of 8 points, although nobody ever entered
    with pytest.raises(AssertionError) as excinfo:
        check(LetsNobodyIn)
    assert failure_kind(excinfo.value) == "no_entry"
    text = message(excinfo)
    assert text.startswith("LetsNobodyIn lets no PE into the critical section")
    assert "keeps the PEs apart only because it lets nobody in" in text
    first, *rest = str(excinfo.value).split("\n")
    assert len(f"AssertionError: {first}") <= 83 and all(len(line) <= 83 for line in rest)


def test_helpers_write_nothing_to_stderr(capfd):
    for check in (lambda: check_lock_progress(ReadThenWrite, [2]),
                  lambda: check_lock_exclusion(NeverReleases, [2], seeds=range(2)),
                  lambda: check_lock_exhaustive(Crashes, 2)):
        with pytest.raises(AssertionError):
            check()
    assert capfd.readouterr().err == ""


def test_each_lock_check_can_judge_one_property_alone():
    # one bug, one deduction: a lock without exclusion still makes progress, and a lock
    # that is never released still keeps PEs apart
    check_lock_progress(ReadThenWrite, [2, 3], exclusion=False)
    check_lock_exclusion(NeverReleases, [2, 3], seeds=range(5), progress=False)
    check_lock_exhaustive(NeverReleases, 2, rounds=1, progress=False)
    with pytest.raises(AssertionError, match="enters the critical section"):
        check_lock_exclusion(ReadThenWrite, [2], seeds=range(20), progress=False)
    with pytest.raises(AssertionError, match="never finished"):
        check_lock_progress(NeverReleases, [2], exclusion=False)


# -- a lock that stops waiting, a forgotten yield, messages Validate shows whole -------

@pytest.mark.parametrize("check", [
    lambda lock: check_lock_exclusion(lock, [2], seeds=range(20), progress=False),
    lambda lock: check_lock_exclusion(lock, [5], seeds=range(10), rounds=3,
                                      progress=False),
    lambda lock: check_lock_exhaustive(lock, 2, rounds=1),
])
def test_a_lock_that_stops_waiting_loses_exclusion(check):
    # one PE keeps the lock while the others try 1000 steps each: none may enter
    with pytest.raises(AssertionError) as excinfo:
        check(GivesUp)
    assert failure_kind(excinfo.value) == "lock_exclusion"
    text = message(excinfo)
    assert "PE 0 took the lock and stayed in the critical section" in text
    assert re.search(r"PE \d entered after \d+ steps while PE 0 is inside", text)
    assert re.search(r"\n +1   0  enter cs\n", str(excinfo.value))   # the holder
    assert "Does acquire() stop trying after some number of tries?" in text


@pytest.mark.parametrize("cut_off, check", [
    (30, lambda lock: check_lock_exclusion(lock, [2], seeds=range(20), progress=False)),
    (1000, lambda lock: check_lock_exclusion(lock, [2], seeds=range(20), progress=False)),
    (30, lambda lock: check_lock_exclusion(lock, [3, 2], seeds=range(5), progress=False)),
    (30, lambda lock: check_lock_exhaustive(lock, 2, rounds=2)),
    (1000, lambda lock: check_lock_exhaustive(lock, 2, rounds=2)),
])
def test_a_lock_that_takes_the_lock_another_way_after_long_waits_loses_exclusion(
        cut_off, check):
    # a student audit: after 30 failed CAS, read 0 then write 1: 8/8, and the search of
    # every interleaving said that every interleaving keeps the PEs apart
    with pytest.raises(AssertionError) as excinfo:
        check(falls_back(cut_off))
    assert failure_kind(excinfo.value) == "lock_exclusion"
    text = message(excinfo)
    assert "PE 0 took the lock and stayed in the critical section while the other" in text
    assert "then PE 0 went on (it left and released the lock)" in text
    assert re.search(r"PE \d enters the critical section while PE \d is inside", text)
    assert "read lock -> 0" in text and "write lock := 1" in text
    assert "Does acquire() take the lock another way after some number of tries?" in text
    first, *rest = str(excinfo.value).split("\n")
    assert len(f"AssertionError: {first}") <= 83 and all(len(line) <= 83 for line in rest)


@pytest.mark.parametrize("lock, check", [
    (OnlyWithThree, lambda lock: check_lock_exclusion(lock, [3], seeds=range(20),
                                                      progress=False)),
    (OnlyWithThree, lambda lock: check_lock_exclusion(lock, [5], seeds=range(5), rounds=3,
                                                      progress=False)),
    (SeenFreeThree, lambda lock: check_lock_exclusion(lock, [2], seeds=range(20),
                                                      progress=False)),
    (SeenFreeThree, lambda lock: check_lock_exhaustive(lock, 2, rounds=2)),
])
def test_the_long_hold_lets_go_for_every_p_and_gives_five_rounds_each_to_two(lock, check):
    # a student audit: 8/8 on part 2 for both, the step after the long hold running with
    # two PEs only and for two rounds each
    with pytest.raises(AssertionError) as excinfo:
        check(lock)
    assert failure_kind(excinfo.value) == "lock_exclusion"
    text = message(excinfo)
    assert "then PE 0 went on (it left and released the lock)" in text
    p = int(re.search(r"with p=(\d) PEs", text).group(1))
    rounds = {2: "five", 3: "four", 5: "two"}[p]
    assert f"every PE did {rounds} rounds from there" in text
    assert re.search(r"PE \d enters the critical section while PE \d is inside", text)
    assert "write lock := 1" in text
    first, *rest = str(excinfo.value).split("\n")
    assert len(f"AssertionError: {first}") <= 83 and all(len(line) <= 83 for line in rest)
    # with two PEs OnlyWithThree is a plain CAS lock
    check_lock_exclusion(OnlyWithThree, [2], seeds=range(20), progress=False)


def test_the_search_of_every_interleaving_says_what_it_assumed():
    # it skips a PE that polls an unchanged cell again, and stops at max_steps: its
    # sentence says so, and what the check of a long hold added
    text = " ".join(check_lock_exhaustive(GoodLock, 2, rounds=1).split())
    assert text.startswith("every interleaving keeps the PEs apart, and both finish, if a "
                           "PE that polls an unchanged cell again would go on doing so")
    assert ("PE 0 held the lock while the other tried 1000 steps, and then every "
            "interleaving of the next") in text
    cut = " ".join(check_lock_exhaustive(FetchAddLock, 2, rounds=1, max_steps=12).split())
    assert cut.startswith("every interleaving of up to 12 steps keeps the PEs apart")
    assert check_lock_exhaustive(NeverReleases, 2, rounds=1, progress=False).startswith(
        "every interleaving keeps the PEs apart, if a PE")


def test_each_kind_of_flaw_can_be_searched_for_alone():
    # with one round each the search finds that a PE waits forever; judged alone,
    # exclusion holds there, and breaks with two rounds each
    with pytest.raises(AssertionError) as excinfo:
        check_lock_exhaustive(TwoFlaws, 2, rounds=1)
    assert failure_kind(excinfo.value) == "no_progress"
    check_lock_exhaustive(TwoFlaws, 2, rounds=1, progress=False)
    with pytest.raises(AssertionError) as excinfo:
        check_lock_exhaustive(TwoFlaws, 2, rounds=2, progress=False)
    assert failure_kind(excinfo.value) == "lock_exclusion"
    assert "must be one atomic operation" in message(excinfo)
    check_lock_exhaustive(ReadThenWrite, 2, rounds=2, exclusion=False)
    with pytest.raises(AssertionError, match="never finished"):
        check_lock_exhaustive(NeverReleases, 2, rounds=1, exclusion=False)


def test_a_lock_that_stops_waiting_still_makes_progress():
    # one bug, one deduction: the timed runs judge progress alone, and it makes progress
    check_lock_progress(GivesUp, [2, 5, 8], rounds=2, hold=7, exclusion=False)


@pytest.mark.parametrize("check", [
    lambda lock: check_lock_exclusion(lock, [2], seeds=range(20), progress=False),
    lambda lock: check_lock_exhaustive(lock, 2, rounds=1),
    lambda lock: check_lock_progress(lock, [2]),
])
def test_a_forgotten_yield_is_named(check):
    with pytest.raises(AssertionError) as excinfo:
        check(ForgetsYield)
    text = message(excinfo)
    assert ("acquire() performed no memory operation before PE 1 entered: is a `yield` "
            "missing before cas(...)?") in text
    assert "must be one atomic operation" not in text
    assert "Its first 0 steps" not in text


@pytest.mark.parametrize("lock, check", [
    (ReadThenWrite, lambda lock: check_lock_exclusion(lock, [2], seeds=range(20))),
    (ReadThenWrite, lambda lock: check_lock_exhaustive(lock, 2, rounds=2)),
    (ReadThenWrite, lambda lock: check_lock_progress(lock, [2, 3])),
    (NeverReleases, lambda lock: check_lock_exclusion(lock, [3], seeds=range(5))),
    (NeverReleases, lambda lock: check_lock_exhaustive(lock, 2, rounds=1)),
    (Crashes, lambda lock: check_lock_progress(lock, [2])),
    (GivesUp, lambda lock: check_lock_exclusion(lock, [2], seeds=range(5))),
    (ForgetsYield, lambda lock: check_lock_exclusion(lock, [2], seeds=range(5))),
    (Inherits, check_own_lock),
    (None, lambda lock: replay_schedule(lock_demo, 2, [0, 2], lock=broken_lock,
                                        rounds=1)),
])
def test_messages_fit_in_what_validate_shows(lock, check):
    # Validate cuts every line of an error at 87 characters, four of them blanks, and
    # the first line starts with "AssertionError: "
    with pytest.raises(AssertionError) as excinfo:
        check(lock)
    first, *rest = str(excinfo.value).split("\n")
    assert len(f"AssertionError: {first}") <= 83, first
    assert all(len(line) <= 83 for line in rest), rest


# -- schedules found by hand ----------------------------------------------------------

SEARCHED = {
    "direct": ["from collective_lib.shared_memory import explore_interleavings",
               "mine = explore_interleavings(lock_demo, 2, mutual_exclusion,\n"
               "                             lock=broken_lock, rounds=1).schedule"],
    "alias": ["from collective_lib.shared_memory import find_violation as fv",
              "found = fv(lock_demo, 2, mutual_exclusion, lock=broken_lock)",
              "mine = list(found.schedule)"],
    "helper": ["import collective_lib.shared_memory as sm",
               "def search():\n"
               "    return sm.explore_interleavings(lock_demo, 2, check)\n",
               "mine = search().schedule"],
    "message": ["def parse():\n    try:\n        check_lock_exhaustive(broken_lock)\n"
                "    except AssertionError as err:\n        return eval(str(err))\n",
                "mine = parse()"],
}


@pytest.mark.parametrize("how", sorted(SEARCHED))
def test_a_schedule_found_by_the_librarys_search_is_refused(how):
    with pytest.raises(AssertionError) as excinfo:
        forbid_searched_schedule("mine", SEARCHED[how])
    assert failure_kind(excinfo.value) == "uses_library"
    assert message(excinfo).startswith("mine is computed with the library's `")
    assert "this part asks for a schedule you find yourself" in message(excinfo)
    take_review_flags()


def test_a_schedule_found_by_hand_passes():
    forbid_searched_schedule("mine", ["mine = [0, 1, 0, 1]"])
    # a search elsewhere in the notebook (trying things out) is not this answer's
    forbid_searched_schedule("mine", [
        "found = explore_interleavings(lock_demo, 2, check)",
        "mine = [0, 1, 0, 1]   # as explore_interleavings"])
    forbid_searched_schedule("mine", ["mine = try_schedule([0, 1, 0, 1]).schedule"])
    assert take_review_flags() == []
    # outside IPython the student's own objects give no source to read: nothing to check
    forbid_searched_schedule("mine", GoodLock)


def test_a_schedule_reached_by_computed_names_is_flagged():
    forbid_searched_schedule("mine", [
        "import collective_lib.shared_memory as sm",
        "mine = getattr(sm, 'explore_' + 'x')().schedule"])
    assert take_review_flags() == ["mine: its cells reach objects by computed names "
                                   "(getattr)"]


# -- schedules found by a search of the student's own ----------------------------------

OWN_SEARCHES = {
    "product": ["import itertools",
                "for candidate in itertools.product([0, 1], repeat=4):\n"
                "    run = simulate_shared(lock_demo, 2, lock=broken_lock, rounds=1,\n"
                "                          schedule=list(candidate), stop_after=4)\n"
                "    if exclusion_violation(run.trace) is not None:\n"
                "        mine = list(candidate)\n"
                "        break\n"],
    "random": ["import random",
               "while True:\n"
               "    candidate = [random.randrange(2) for _ in range(20)]\n"
               "    run = try_schedule(candidate, rounds=2)\n"
               "    if run.complete and run.memory['counter'] == 2:\n"
               "        break\n",
               "mine = candidate"],
    "seeds": ["def search():\n"
              "    for seed in range(1000):\n"
              "        run = simulate_shared(lock_demo, 2, lock=broken_lock, rounds=2,\n"
              "                              seed=seed)\n"
              "        if run.memory['counter'] == 2:\n"
              "            return run.schedule\n",
              "mine = search()"],
    "recursion": ["def extend(prefix):\n"
                  "    run = try_schedule(prefix)\n"
                  "    if exclusion_violation(run.trace):\n"
                  "        return prefix\n"
                  "    return extend(prefix + [len(prefix) % 2])\n",
                  "mine = extend([])"],
    "one_seed": ["mine = simulate_shared(lock_demo, 2, lock=broken_lock, rounds=2,\n"
                 "                       seed=17).schedule"],
}


@pytest.mark.parametrize("how", sorted(OWN_SEARCHES))
def test_a_schedule_found_by_a_search_of_ones_own_is_refused(how):
    # a student audit: both cells of part 1 full marks, unflagged
    with pytest.raises(AssertionError) as excinfo:
        forbid_searched_schedule("mine", OWN_SEARCHES[how])
    assert failure_kind(excinfo.value) == "uses_library"
    text = message(excinfo)
    assert text.startswith("mine is found by a search of your own:"), text
    assert "Part 1 asks for a schedule found by reasoning" in text
    assert "try_schedule may show what a schedule you wrote does" in text
    first, *rest = str(excinfo.value).split("\n")
    assert len(f"AssertionError: {first}") <= 83 and all(len(line) <= 83 for line in rest)
    take_review_flags()


def test_a_schedule_written_by_hand_and_looked_at_with_try_schedule_passes():
    forbid_searched_schedule("mine", [
        "mine = [0, 1, 0, 1]",
        "run = try_schedule(mine)\nassert exclusion_violation(run.trace) is not None"])
    forbid_searched_schedule("mine", [
        "mine = []\nfor pe, steps in [(0, 1), (1, 1), (0, 2), (1, 4)]:\n"
        "    mine += [pe] * steps\n",
        "for rounds in (1, 2):\n    try_schedule(mine, rounds=rounds)"])
    forbid_searched_schedule("mine", ["mine = [pe for pe in (0, 1) for _ in range(5)]"])
    assert take_review_flags() == []


def test_a_schedule_drawn_at_random_is_flagged():
    forbid_searched_schedule("mine", ["import random",
                                      "mine = [random.randrange(2) for _ in range(4)]"])
    assert take_review_flags() == ["mine: its definition uses random numbers; part 1 asks "
                                   "for a schedule found by reasoning"]
