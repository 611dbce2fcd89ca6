"""Tests of collective_lib.grading.failures: every check says why it failed.

Each check raises a CheckFailed (an AssertionError) whose ``kind`` names the cause
from the vocabulary KINDS, whatever its message says, so that the failures of a
class can be counted by cause (collective_lib.autograde.misconceptions).
"""
import pickle
import signal

import numpy as np
import pytest

from collective_lib import CostModel, catalog, recv, send, sendrecv
from collective_lib.algorithms.sync import broken_lock, cas_spin_lock
from collective_lib.grading import (KINDS, CheckFailed, OperationLimitExceeded,
                                    WallClockLimitExceeded, check_answer_table,
                                    check_broadcast_program, check_collective_program,
                                    check_enough_finished, check_lock_exclusion,
                                    check_lock_exhaustive, check_lock_progress, check_own_lock,
                                    check_operator_in_reductions, check_pe_isolation,
                                    failure_kind, forbid_library_calls,
                                    forbid_library_execution, guarded_call, replay_schedule,
                                    run_program, wall_clock_limit)
from collective_lib.grading._advice import first_line
from collective_lib.shared_memory import cas, pause, read, write

needs_alarm = pytest.mark.skipif(not hasattr(signal, "setitimer"),
                                 reason="the wall-clock guard needs SIGALRM and setitimer")

BINOMIAL = catalog()["binomial_broadcast"].program


def kind_of(check) -> str:
    """The kind of the failure ``check()`` raises (it must raise a CheckFailed)."""
    with pytest.raises(CheckFailed) as excinfo:
        check()
    assert isinstance(excinfo.value, AssertionError)
    return failure_kind(excinfo.value)


# -- programs with one bug each ------------------------------------------------------------

def lazy(me, p, data, root=0):
    return data
    yield


def waits(me, p, data, root=0):
    data = yield recv((me - 1) % p)
    return data


def talks_to_nobody(me, p, data, root=0):
    if me == 0:
        yield send(1, data)
    return data


def crashes(me, p, data, root=0):
    yield send((me + 1) % p, 1 / 0)


def spins(me, p, data, root=0):
    while True:
        data = yield sendrecv((me + 1) % p, data, (me - 1) % p)


def loops(me, p, data, root=0):
    while True:
        pass
    yield


def knows_without_receiving(me, p, data, root=0):
    """Returns the root's message (the first of seed 0) without a message."""
    return np.random.default_rng(0).integers(0, 1000, size=4).tolist()
    yield


def binomial_copy(me, p, data, root=0):
    return (yield from BINOMIAL(me, p, data, root=root))


BOARD = {}


def board_sum(me, p, data):
    BOARD[me] = data
    for _ in range(p - 1):
        yield sendrecv((me + 1) % p, 0, (me - 1) % p)
    return sum(BOARD.get(pe, 0) for pe in range(p))


def ring_sum(me, p, data):
    total = data
    for _ in range(p - 1):
        data = yield sendrecv((me + 1) % p, data, (me - 1) % p)
        total += data
    return total


def ring_bundle(me, p, data):
    """All-gather on a ring that sends its whole bundle as one word."""
    bundle = [data]
    for _ in range(p - 1):
        got = yield sendrecv((me + 1) % p, list(bundle), (me - 1) % p, words=1)
        bundle = [x for x in got if x not in bundle] + bundle
    return sorted(bundle)


def numbers(p, rng):
    return [int(x) for x in rng.integers(0, 99, size=p)]


def sums(inputs):
    return [sum(inputs)] * len(inputs)


class GoodLock:
    def __init__(self, me, p):
        self.cell = "lock"

    @staticmethod
    def memory(p):
        return {"lock": 0}

    def acquire(self):
        while not (yield cas(self.cell, 0, 1)):
            yield pause(1)

    def release(self):
        yield write(self.cell, 0)


class NeverReleases(GoodLock):
    def release(self):
        yield pause(1)


class Crashes(GoodLock):
    def acquire(self):
        yield read(self.cell)
        return 1 / 0


class LetsNobodyIn(GoodLock):
    def acquire(self):
        while True:
            yield pause(1)


class NotAGenerator(GoodLock):
    def acquire(self):
        return None


class Inherits(cas_spin_lock):
    pass


# -- the kinds ----------------------------------------------------------------------------

def test_the_vocabulary_is_small_and_documented():
    assert 10 <= len(KINDS) <= 25
    assert all(k.isidentifier() and k.islower() and text for k, text in KINDS.items())
    assert "other" in KINDS


def test_check_failed_refuses_an_unknown_kind_and_keeps_its_kind_when_pickled():
    with pytest.raises(ValueError, match="unknown kind of failure 'wrong'"):
        CheckFailed("x", "wrong")
    err = CheckFailed("PE 1 returned 3", "wrong_result")
    again = pickle.loads(pickle.dumps(err))
    assert (str(again), again.kind) == ("PE 1 returned 3", "wrong_result")
    limit = pickle.loads(pickle.dumps(WallClockLimitExceeded("too long")))
    assert (type(limit), limit.kind, str(limit)) == (WallClockLimitExceeded, "time_limit",
                                                     "too long")


def test_a_plain_assert_or_another_error_is_other():
    assert failure_kind(AssertionError("x")) == "other"
    assert failure_kind(ValueError("x")) == "other"
    assert failure_kind(CheckFailed("x")) == "other"


@pytest.mark.parametrize("check, kind", [
    (lambda: check_broadcast_program(lazy, [3], roots=[0]), "wrong_result"),
    (lambda: check_broadcast_program(knows_without_receiving, [3], roots=[0]),
     "not_received"),
    (lambda: check_broadcast_program(BINOMIAL, [4], expected_time=lambda p: 99),
     "wrong_time"),
    (lambda: run_program(waits, 3), "deadlock"),
    (lambda: run_program(talks_to_nobody, 2), "unreceived_message"),
    (lambda: run_program(crashes, 2), "exception"),
    (lambda: run_program(spins, 2, max_ops=50), "operation_limit"),
    (lambda: guarded_call(int, "x"), "exception"),
    (lambda: check_collective_program(ring_sum, [3], make_inputs=numbers,
                                      expected=lambda x: [0] * len(x)), "wrong_result"),
    (lambda: check_collective_program(ring_sum, [3], make_inputs=numbers, expected=sums,
                                      expected_time=lambda p: 99), "wrong_time"),
    (lambda: check_collective_program(ring_sum, [3], make_inputs=numbers, expected=sums,
                                      time_bound=lambda p: 0.5), "too_slow"),
    (lambda: check_collective_program(
        ring_bundle, [4], make_inputs=numbers, expected=lambda x: [sorted(x)] * len(x),
        model=CostModel(ts=1, tw=1), payload_words=lambda payload, inputs: len(payload)),
     "message_size"),
    (lambda: check_pe_isolation(board_sum, [3], make_inputs=numbers, expected=sums),
     "shared_state"),
    (lambda: check_enough_finished(lazy, [1], [1, 2, 3], "the time", "the first test"),
     "too_few_finished"),
    (lambda: forbid_library_calls(binomial_copy, ["binomial_broadcast"]), "uses_library"),
    (lambda: forbid_library_execution(binomial_copy, ["binomial_broadcast"], 4,
                                      [[1]] + [None] * 3), "uses_library"),
    (lambda: check_operator_in_reductions(lambda a, b: a, ["binomial_reduce"], [4],
                                          make_inputs=numbers, reference_op=lambda a, b: a + b),
     "wrong_result"),
    (lambda: check_answer_table({1: ["a", "c"]}, {1: ["a", "b"]}, name="t"), "wrong_entry"),
    (lambda: check_answer_table({1: ["a"]}, {1: ["a", "b"]}, name="t"), "wrong_form"),
    (lambda: check_answer_table(3, {1: ["a", "b"]}, name="t"), "wrong_form"),
])
def test_the_checks_of_programs_and_tables_name_their_kind(check, kind):
    assert kind_of(check) == kind


@pytest.mark.parametrize("check, kind", [
    (lambda: check_lock_exclusion(broken_lock, [2], seeds=range(20)), "lock_exclusion"),
    (lambda: check_lock_exhaustive(broken_lock, 2, rounds=1), "lock_exclusion"),
    (lambda: check_lock_progress(NeverReleases, [2]), "no_progress"),
    (lambda: check_lock_exclusion(NeverReleases, [2], seeds=range(5)), "no_progress"),
    (lambda: check_lock_exhaustive(NeverReleases, 2, rounds=1), "no_progress"),
    (lambda: check_lock_progress(Crashes, [2]), "exception"),
    (lambda: check_lock_exclusion(LetsNobodyIn, [2], seeds=range(5), progress=False),
     "no_entry"),
    (lambda: check_lock_exhaustive(LetsNobodyIn, 2, rounds=1), "no_entry"),
    (lambda: check_own_lock(NotAGenerator), "wrong_form"),
    (lambda: check_own_lock(Inherits), "uses_library"),
    (lambda: check_own_lock(3), "wrong_form"),
    (lambda: replay_schedule(None, 2, "01"), "wrong_form"),
    (lambda: replay_schedule(None, 2, [0, 2]), "wrong_form"),
])
def test_the_checks_of_locks_name_their_kind(check, kind):
    assert kind_of(check) == kind


@needs_alarm
def test_an_endless_loop_is_a_time_limit():
    assert kind_of(lambda: run_program(loops, 2, time_limit_s=0.2)) == "time_limit"
    with pytest.raises(WallClockLimitExceeded) as excinfo:
        with wall_clock_limit(0.05, "stopped"):
            while True:
                pass
    assert failure_kind(excinfo.value) == "time_limit" and str(excinfo.value) == "stopped"
    assert issubclass(OperationLimitExceeded, CheckFailed)
    assert OperationLimitExceeded("x").kind == "operation_limit"


# -- every message fits the width Validate shows whole ----------------------------------------

def _lines_fit(text: str) -> bool:
    """Validate indents an error by four blanks and cuts its lines at 87 characters: the
    first line also carries "AssertionError: "."""
    first, *rest = text.split("\n")
    return len(first) <= 64 and all(len(line) <= 80 for line in rest)


LONG = ("wrong result of halving_scatter for p=5, root=4: PE 0 returned [4, 277, 815], but "
        "[0, 503, 606] was expected (word 0 is 4, but 0 was expected).")


def test_a_failed_checks_message_is_wrapped_to_validates_width_keeping_every_word():
    text = str(CheckFailed(LONG, kind="wrong_result"))
    assert _lines_fit(text) and "\n" in text, text
    assert text.split() == LONG.split()
    assert str(CheckFailed(text)) == text                     # wrapping again changes nothing
    assert str(pickle.loads(pickle.dumps(CheckFailed(LONG)))) == text


def test_a_sentence_broken_by_hand_flows_on_and_a_list_keeps_its_lines():
    text = str(CheckFailed(
        "deadlock in ring_receives_first for p=4: at simulated time 0 no PE can go on, but "
        "four of them\nstill wait:\n  PE 0 waits in recv(3)\n  PE 1 waits in recv(0)\n"
        "Send before you wait, or send and receive at once with sendrecv."))
    assert text == (
        "deadlock in ring_receives_first for p=4: at simulated time 0 no\n"
        "PE can go on, but four of them still wait:\n"
        "  PE 0 waits in recv(3)\n  PE 1 waits in recv(0)\n"
        "Send before you wait, or send and receive at once with sendrecv.")


def test_a_long_item_of_a_list_keeps_its_rest_to_itself():
    item = "  PE 0 waits in recv(3) for a message that PE 3 sends only after it has received"
    text = str(CheckFailed(f"deadlock:\n{item} one from PE 2\n  PE 1 waits in recv(0)"))
    assert text == f"deadlock:\n{item}\n    one from PE 2\n  PE 1 waits in recv(0)"


def test_a_long_line_of_the_students_code_is_cut_never_broken():
    code = "result = yield sendrecv((me + s) % p, data[me + s], (me - s) % p) + [x] * 12345"
    text = str(CheckFailed(f"f for p=4 raised IndexError: list index out of range\n"
                           f"  at line 7 of grid_all_to_all: `{code}`"))
    assert _lines_fit(text), text
    span = text[text.index("`"):]
    assert "\n" not in span and span.endswith("...`") and code.startswith(span[1:-4]), span


def test_a_word_longer_than_a_line_is_broken_too():
    text = str(CheckFailed("returned '" + "0" * 150 + "'"))
    assert _lines_fit(text) and text.replace("\n", "") == "returned '" + "0" * 150 + "'"


def test_a_word_longer_than_three_lines_is_cut_to_three():
    # a value of 400 digits (or 700,000 commas) would fill the message with itself
    text = str(CheckFailed(f"f(8) returned {10 ** 400}; it must return a number"))
    assert _lines_fit(text) and len(text.split("\n")) == 4, text
    assert text.replace("\n", "").split()[2] == "1" + "0" * 236 + "..."
    assert text.endswith("... it must return a number") and str(CheckFailed(text)) == text


def test_the_first_line_of_a_wrapped_message_is_its_first_line_as_written():
    # a check that quotes another's failure quotes its first statement whole
    deadlock = ("deadlock in ring for p=4: at simulated time 0 no PE can go on, but 4 PE(s) "
                "still wait:\n  PE 0 waits in recv(3)\nSend before you wait.")
    for text in (LONG, deadlock):
        wrapped_text = str(CheckFailed(text))
        assert wrapped_text.split("\n")[0] != text.split("\n")[0]      # wrapping broke it
        assert first_line(wrapped_text) == text.split("\n")[0]
