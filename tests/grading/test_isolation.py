"""Each PE in its own process (collective_lib.grading.isolation).

An honest program gives the same results, messages and simulated time with each PE in
its own process as with all PEs in one; PEs that share a Python global do not; a PE's
exception, endless loop or unsendable payload comes back naming its rank; and no PE
process outlives its run, also after a deadlock.
"""
import multiprocessing
import operator
import random
import textwrap
import time

import numpy as np
import pytest

from collective_lib import DeadlockError, compute, recv, send, sendrecv, simulate
from collective_lib.grading import (CheckFailed, check_collective_program, check_pe_isolation,
                                    isolation, programs, run_program)
from collective_lib.grading.isolation import (IsolatedProgram, PEProcessError, differs_alone,
                                              isolated, noting)
from collective_lib.grading.standins import StandIn
from collective_lib.ops import Compute, SendRecv
from collective_lib.networks import Ring
from exercise_references import load_reference
from exercise_submissions import SHARES_WHEN_IT_CAN
from messages import flat

# Grama's Algorithm 4.5: the reference answer of the assignment ring_reduction (not in the library).
RING_REDUCTION = load_reference("ring_reduction").all_to_all_red_ring

BOARD = {}     # the globals cheat's notice board


def ring_allgather(me, p, data):
    """Every PE ends with everybody's data: pass along what came from the left."""
    held = [None] * p
    held[me] = passing = data
    for i in range(1, p):
        passing = yield sendrecv((me + 1) % p, passing, (me - 1) % p)
        held[(me - i) % p] = passing
    return held


def board_reduction(me, p, data, op=operator.add):
    """Posts its data on BOARD and reads the others' from there; the messages are dummies."""
    BOARD[me] = data
    for i in range(1, p):
        yield sendrecv((me - 1) % p, data[(me + i) % p], (me + 1) % p)
    total = data[me]
    for pe in range(p):
        if pe != me:
            total = op(total, BOARD.get(pe, data)[me])
    return total


def ring_inputs(p):
    return [[10 * i + j for j in range(p)] for i in range(p)]


def ring_sums(p):
    return [sum(10 * i + j for i in range(p)) for j in range(p)]


def no_pe_process_left():
    return multiprocessing.active_children() == []


@pytest.fixture(autouse=True)
def fresh_board():
    BOARD.clear()
    yield
    assert no_pe_process_left()


def test_an_honest_reduction_runs_the_same_in_its_own_processes():
    for p in (1, 2, 3, 5, 8):
        alone = simulate(RING_REDUCTION, p, ring_inputs(p), network=Ring(p), op=operator.add)
        with isolated(RING_REDUCTION) as program:
            apart = simulate(program, p, ring_inputs(p), network=Ring(p), op=operator.add)
        assert apart.results == alone.results == ring_sums(p)
        assert apart.time == alone.time and apart.finish_times == alone.finish_times
        assert apart.messages == alone.messages
        assert no_pe_process_left()


def test_an_honest_allgather_runs_the_same_in_its_own_processes():
    p = 6
    alone = simulate(ring_allgather, p, list(range(p)), network=Ring(p))
    apart = simulate(isolated(ring_allgather), p, list(range(p)), network=Ring(p))
    assert apart.results == alone.results == [list(range(p))] * p
    assert apart.time == alone.time == p - 1
    assert apart.messages == alone.messages


def test_pes_that_share_a_global_are_right_only_in_one_process():
    p = 4
    alone = simulate(board_reduction, p, ring_inputs(p), network=Ring(p))
    assert alone.results == ring_sums(p) and alone.time == p - 1
    BOARD.clear()
    apart = simulate(isolated(board_reduction), p, ring_inputs(p), network=Ring(p))
    # each PE sees only its own post: it adds its own data p times
    assert apart.results == [p * (10 * j + j) for j in range(p)]
    assert apart.time == alone.time
    assert BOARD == {}                 # and the simulating process saw none of the posts


def test_an_exception_names_the_pe_and_its_line():
    def crashes_on_pe_3(me, p, data):
        yield sendrecv((me + 1) % p, me, (me - 1) % p)
        if me == 3:
            return {}[0]
        return me

    with pytest.raises(PEProcessError) as err:
        simulate(isolated(crashes_on_pe_3), 5)
    assert err.value.pe == 3
    assert str(err.value).startswith("PE 3 raised KeyError: 0\n  at line ")
    assert "of crashes_on_pe_3: `return {}[0]`" in flat(err.value)
    assert "raised by PE 3 of 5 at simulated time 1" in err.value.__notes__


def test_a_deadlock_still_raises_and_leaves_no_pe_process():
    def waits_for_the_right(me, p, data):
        return (yield recv((me + 1) % p))

    with pytest.raises(DeadlockError) as err:
        with isolated(waits_for_the_right) as program:
            simulate(program, 4)
    assert sorted(err.value.blocked) == [0, 1, 2, 3]
    assert program.live_pes() == [] and no_pe_process_left()


def test_closing_a_pe_generator_kills_its_process():
    program = isolated(RING_REDUCTION)
    gen = program(0, 2, [1, 2], op=operator.add)
    op = next(gen)                                     # the first resume forks the PE
    assert op == sendrecv(1, 2, 1) and program.live_pes() == [0]
    (process,) = multiprocessing.active_children()
    gen.close()
    assert program.live_pes() == [] and not process.is_alive()


def test_an_endless_pe_is_stopped_by_the_time_limit():
    def spins_on_pe_1(me, p, data):
        yield sendrecv((me + 1) % p, me, (me - 1) % p)
        while me == 1:
            pass
        return me

    start = time.monotonic()
    with pytest.raises(PEProcessError) as err:
        simulate(isolated(spins_on_pe_1, time_limit_s=0.3), 3)
    assert time.monotonic() - start < 5
    assert err.value.pe == 1
    assert flat(err.value) == ("PE 1 did not answer within 0.3 s of real time (an endless "
                              "loop?); its process was stopped")


def test_a_payload_that_cannot_cross_is_reported():
    def sends_a_function(me, p, data):
        yield send(1, lambda: 1) if me == 0 else recv(0)

    with pytest.raises(PEProcessError, match="PE 0 yielded an operation that cannot be sent "
                                             "to another process"):
        simulate(isolated(sends_a_function), 2)


def test_a_plain_function_is_not_a_program():
    def plain(me, p, data):
        return data

    with pytest.raises(TypeError, match="'plain' is not a generator function"):
        simulate(isolated(plain), 2)


def test_output_and_callbacks_work_across_processes(capsys):
    def maximum(a, b):             # a reduction's operator: the PE processes inherit it
        return max(a, b)

    def talks(me, p, data, op):
        print(f"PE {me} starts")
        other = yield sendrecv((me + 1) % p, data, (me - 1) % p)
        return op(data, other)

    assert simulate(isolated(talks), 3, [5, 1, 3], op=maximum).results == [5, 5, 3]
    assert capsys.readouterr().out == "PE 0 starts\nPE 1 starts\nPE 2 starts\n"


def test_a_pe_process_holds_no_other_pes_pipe():
    def count_pipes(me, p, data):
        yield sendrecv((me + 1) % p, me, (me - 1) % p)
        return len(isolation._parent_ends)

    assert simulate(isolated(count_pipes), 4).results == [0, 0, 0, 0]


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="time_limit_s must be a positive number, got 0"):
        IsolatedProgram(RING_REDUCTION, time_limit_s=0)
    with pytest.raises(TypeError, match="program must be a generator function"):
        isolated(None)


def test_an_abandoned_pe_process_ends_itself():
    program = isolated(RING_REDUCTION, idle_limit_s=0.2)
    gen = program(0, 2, [1, 2], op=operator.add)
    next(gen)                                          # forked, now waiting for its result
    (process,) = multiprocessing.active_children()
    process.join(5)
    assert process.exitcode == 0
    gen.close()


# -- one PE of a graded run replayed alone (grading.programs._run, isolation.differs_alone) --

# The attack, built from the submission the exercise test hands in (its globals are SHARING).
SHARING = {"send": send, "recv": recv}
exec("def sharing_scatter(me, p, data, root=0):\n" + textwrap.indent(SHARES_WHEN_IT_CAN, "    "),
     SHARING)
sharing_scatter = SHARING["sharing_scatter"]


def direct_scatter(me, p, data, root=0):
    if me == root:
        for pe in range(p):
            if pe != root:
                yield send(pe, data[pe])
        return data[root]
    return (yield recv(root))


class SharedProcess(StandIn):
    """A stand-in whose runs, as the student's process under autograde, share this
    process; each PE apart runs in a process of its own."""
    kind = "program"

    def __init__(self, program):
        self.program = program
        self.__name__ = program.__name__

    def __call__(self, *args, **kwargs):
        return self.program(*args, **kwargs)

    def student_sources(self):
        return []

    def forbid(self, names):
        raise NotImplementedError

    def each_pe_apart(self):
        SHARING.pop("LIVE", None)           # a PE's process starts as a copy of this one
        return IsolatedProgram(self.program)

    def replayer(self):
        raise NotImplementedError


def scatter_inputs(p, rng, root=0):
    messages = [[pe, int(rng.integers(1000))] for pe in range(p)]
    return [messages if pe == root else None for pe in range(p)]


def own_message(inputs, root=0):
    return list(inputs[root])


@pytest.fixture
def every_run_replayed(monkeypatch):
    """Every graded run has a PE replayed alone (grading replays one run in four)."""
    monkeypatch.setattr(programs, "REPLAYED_SHARE", 1.0)


def test_a_program_that_shares_state_only_when_it_can_fails_every_graded_run(every_run_replayed):
    cases = [(p, {"root": root}) for p in (3, 6, 9) for root in (0, p - 1)]
    # run in one process as the simulator does, it passes, also check_pe_isolation
    check_collective_program(sharing_scatter, cases, make_inputs=scatter_inputs,
                             expected=own_message)
    check_pe_isolation(SharedProcess(sharing_scatter), cases, make_inputs=scatter_inputs,
                       expected=own_message)
    for p, params in cases:                 # but not under autograde: whichever PE is replayed
        SHARING.pop("LIVE", None)
        with pytest.raises(CheckFailed) as err:
            check_collective_program(SharedProcess(sharing_scatter), [(p, params)],
                                     make_inputs=scatter_inputs, expected=own_message)
        assert "behaves otherwise in a process of its own" in flat(err.value)
        assert err.value.kind == "shared_state"
        assert "PEs must not share Python globals" in flat(err.value)


def test_an_honest_program_passes_with_a_pe_replayed_alone(every_run_replayed):
    cases = [(p, {"root": root}) for p in (1, 2, 5, 8) for root in (0, p // 2)]
    check_collective_program(SharedProcess(direct_scatter), cases, make_inputs=scatter_inputs,
                             expected=own_message)
    run = run_program(SharedProcess(ring_allgather), 5, list(range(5)), network=Ring(5))
    assert run.results == [[0, 1, 2, 3, 4]] * 5


def test_one_graded_run_in_four_has_a_pe_replayed(monkeypatch):
    replayed = []
    monkeypatch.setattr(programs, "differs_alone", lambda *args, **kwargs: replayed.append(1) or "")
    monkeypatch.setattr(programs, "_UNFORESEEN", random.Random(7))     # repeatable draws
    for _ in range(400):
        run_program(SharedProcess(direct_scatter), 3, [[[1], [2], [3]], None, None])
    draws, want = random.Random(7), 0
    for _ in range(400):                    # the same draws: a run, then its PE if replayed
        if draws.random() < 0.25:
            want += 1
            draws.randrange(3)
    assert programs.REPLAYED_SHARE == 0.25 and len(replayed) == want and 80 <= want <= 120


def test_what_a_pe_does_otherwise_alone_is_said():
    def tell(me, p, data):
        BOARD[me] = data
        yield sendrecv((me + 1) % p, 0, (me - 1) % p)
        if len(BOARD) == p:
            yield compute(1.0)
        return data

    notes = {}
    simulate(noting(tell, notes), 2, ["a", "b"])
    BOARD.clear()
    assert differs_alone(tell, 0, 2, {}, notes[0], "a") == (
        "returned after 1 operation, where it yielded 2 in the run")
    assert notes[1] == ("b", [SendRecv(0, 0, 0, 1), Compute(1.0)], [0, None])


def test_a_long_array_that_is_otherwise_alone_in_one_item_is_told_apart():
    # numpy spells an array of over 1000 items with "...": two such arrays that differ in
    # the middle look alike (red team, fourth round)
    def counts(me, p, data):
        result = np.zeros(2000)
        result[1000] = len(BOARD)
        BOARD[me] = data
        yield compute(1.0)
        return result

    notes = {}
    run = simulate(noting(counts, notes), 2, ["a", "b"])
    BOARD.clear()
    assert differs_alone(counts, 1, 2, {}, notes[1], run.results[1]).startswith("returned ")
    assert differs_alone(counts, 0, 2, {}, notes[0], run.results[0]) == ""
