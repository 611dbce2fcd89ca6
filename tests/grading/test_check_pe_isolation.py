"""check_pe_isolation: a PE knows only its own data and the messages it received.

An honest program passes; PEs that share a Python global pass check_collective_program
(all PEs in one process) but fail here with a message that says so; a program that is
wrong anyway gets check_collective_program's own message; no PE process is left behind.
"""
import multiprocessing
import operator

import numpy as np
import pytest

from all_to_all_submissions import REFERENCE_RING, reduced, rightwards
from collective_lib import recv, sendrecv
from collective_lib.algorithms.reduce import add, combine
from collective_lib.grading import check_collective_program, check_pe_isolation
from collective_lib.networks import Ring
from messages import flat


BOARD = {}     # the cheats' notice board


def vectors(p, rng, **_):
    return [[rng.integers(-50, 50, size=2).tolist() for _ in range(p)] for _ in range(p)]


def board_ring(me, p, data, op=add):
    """Right in one process: the data comes from BOARD, the messages are dummies."""
    BOARD[me] = data
    for i in range(1, p):
        yield sendrecv((me - 1) % p, data[(me + i) % p], (me + 1) % p)
    return combine(op, *(BOARD.get(pe, data)[me] for pe in range(p)))


def board_ring_strict(me, p, data, op=add):
    """Like board_ring, but reads BOARD[pe] and so raises KeyError in a process of its own."""
    BOARD[me] = data
    for i in range(1, p):
        yield sendrecv((me - 1) % p, data[(me + i) % p], (me + 1) % p)
    return combine(op, *(BOARD[pe][me] for pe in range(p)))


def check(program, cases=(3, 4, 8), **kwargs):
    check_pe_isolation(program, cases, make_inputs=vectors, expected=reduced, network_for=Ring,
                       item="word", seed=7, **kwargs)


@pytest.fixture(autouse=True)
def fresh_board():
    BOARD.clear()
    yield
    assert multiprocessing.active_children() == []


def test_an_honest_program_passes():
    check(REFERENCE_RING)
    check(REFERENCE_RING, [(p, {"op": np.maximum}) for p in (1, 2, 5)])


def test_shared_globals_pass_in_one_process_but_not_here():
    check_collective_program(board_ring, range(1, 9), make_inputs=vectors, expected=reduced,
                             network_for=Ring, expected_time=lambda p: p - 1)
    with pytest.raises(AssertionError) as err:
        check(board_ring)
    text = flat(err.value)
    assert text.startswith(
        "board_ring for p=3: PE 0 returned a value it never received: with all PEs in one "
        "Python process the results are right, but with each PE in its own process PE 0 "
        "returned [")
    assert "] where [" in text
    assert text.endswith("] was expected. A PE knows only its own data and the messages it "
                         "received; PEs must not share Python globals.")


def test_a_pe_that_raises_only_in_its_own_process_is_named():
    with pytest.raises(AssertionError) as err:
        check(board_ring_strict, [(4, {"op": operator.add})])
    text = flat(err.value)
    assert text.startswith("board_ring_strict for p=4, op=add: PE ")
    assert (" used a value it never received: with all PEs in one Python process the results "
            "are right, but with each PE in its own process PE ") in text
    assert " raised KeyError: " in text and "PEs must not share Python globals." in text
    assert "of <genexpr>: `return combine(op, *(BOARD[pe][me] for pe in range(p)))`" in text


def test_a_program_wrong_in_any_process_gets_the_usual_message():
    with pytest.raises(AssertionError) as isolated_err:
        check(rightwards, hint="Hint: send to the left.")
    with pytest.raises(AssertionError) as usual_err:
        check_collective_program(rightwards, [3], make_inputs=vectors, expected=reduced,
                                 network_for=Ring, item="word", seed=7, hint="Hint: send to the left.")
    assert flat(isolated_err.value) == flat(usual_err.value)
    assert flat(usual_err.value).startswith("wrong result of rightwards for p=3: PE 0 returned")


def test_a_deadlock_gets_the_usual_message_and_leaves_no_process():
    def waits(me, p, data):
        return (yield recv((me + 1) % p))

    with pytest.raises(AssertionError, match=r"^deadlock in waits for p=3: at simulated time"):
        check(waits)


def test_an_endless_pe_is_stopped_by_the_wall_clock():
    def spins(me, p, data):
        yield sendrecv((me + 1) % p, data, (me - 1) % p)
        while True:
            pass

    with pytest.raises(AssertionError) as err:
        check(spins, time_limit_s=0.5)
    assert flat(err.value).startswith(
        "spins did not finish within 0.5 s of real time (it was running for p=3)")
