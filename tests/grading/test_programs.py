"""Tests of collective_lib.grading.programs: running and checking a student's broadcast.

run_program and check_broadcast_program must pass a correct program and turn
every kind of failure (wrong value, wrong time, deadlock, unreceived message,
exception, endless program) into an AssertionError whose text says what went
wrong, without writing anything to stderr.
"""
import signal
import sys
import time
import warnings

import pytest

from collective_lib import CostModel, catalog, compute, recv, send
from collective_lib.grading import (check_broadcast_program, guarded_call, run_program,
                                    simulated_time)

needs_alarm = pytest.mark.skipif(not hasattr(signal, "setitimer"),
                                 reason="the wall-clock guard needs SIGALRM and setitimer")

BINOMIAL = catalog()["binomial_broadcast"].program


# -- programs used as "student submissions" -----------------------------------------------

def smallest_first(me, p, data, root=0):
    """A correct broadcast that serves the nearest child first (Sanders, Exercise 13.1)."""
    rel = (me - root) % p
    if rel == 0:
        span = 1
        while span < p:
            span *= 2
    else:
        span = rel & -rel
        data = yield recv((rel - span + root) % p)
    step = 1
    while step < span:
        if rel + step < p:
            yield send((rel + step + root) % p, data)
        step *= 2
    return data


def off_by_one_value(me, p, data, root=0):
    """Correct communication, but PE p-1 returns something else."""
    value = yield from BINOMIAL(me, p, data, root)
    return None if me == p - 1 and p > 1 else value


def deadlocks(me, p, data, root=0):
    """Everybody waits for its right neighbour."""
    return (yield recv((me + 1) % p))


def forgets_to_receive(me, p, data, root=0):
    """The root sends to PE 1, which returns without receiving."""
    if me == root and p > 1:
        yield send((root + 1) % p, data)
    return data


def crashes(me, p, data, root=0):
    """Fails with a ZeroDivisionError on PE 1."""
    if me == 1:
        data = 1 / 0
    return (yield from BINOMIAL(me, p, data, root))


def yields_forever(me, p, data, root=0):
    """Keeps the simulator busy with empty local work."""
    while True:
        yield compute(0)


def spins_forever(me, p, data, root=0):
    """Never yields: an endless loop in plain Python."""
    while True:
        pass
    yield  # pragma: no cover  (makes this a generator function)


def not_a_generator(me, p, data, root=0):
    """Forgot to yield: a plain function."""
    return data


def unimplemented(me, p, data, root=0):
    """The released skeleton of an exercise."""
    raise NotImplementedError()


_SHARED = {}


def cheats_with_a_global(me, p, data, root=0):
    """Shares the message through a Python global instead of messages."""
    if me == root:
        _SHARED["message"] = data
    yield compute(0)
    return _SHARED.get("message")


def noisy(me, p, data, root=0):
    """Correct, but warns and writes to stderr on the way."""
    warnings.warn("a student's warning")
    print("debug output", file=sys.stderr)
    return (yield from BINOMIAL(me, p, data, root))


# -- check_broadcast_program ----------------------------------------------------------------

def test_correct_programs_pass():
    assert check_broadcast_program(BINOMIAL, range(1, 17)) is None
    check_broadcast_program(smallest_first, range(1, 33), m=3, seed=5)
    check_broadcast_program(BINOMIAL, [1, 2, 5, 16], model=CostModel(ts=2.0, tw=0.5), m=4,
                            expected_time=lambda p: (p - 1).bit_length() * (2.0 + 0.5 * 4))


def test_expected_time_of_the_slow_order():
    def closed_form(p):
        d = (p - 1).bit_length()
        return d * (d + 1) / 2
    check_broadcast_program(smallest_first, [2 ** d for d in range(8)],
                            roots=lambda p: {0, p - 1}, expected_time=closed_form)


def test_wrong_value_names_p_root_pe_and_values():
    with pytest.raises(AssertionError) as err:
        check_broadcast_program(off_by_one_value, [1, 2, 3], roots=[1], m=2, seed=0)
    text = str(err.value)
    assert "wrong result of off_by_one_value for p=2, root=1" in text
    assert "PE 1 returned None" in text
    assert "the root's message was [" in text


def test_wrong_time_shows_expected_and_simulated():
    with pytest.raises(AssertionError) as err:
        check_broadcast_program(BINOMIAL, [8], roots=[0], time_label="d(d+1)/2 (alpha + beta m)",
                                expected_time=lambda p: 6.0)
    text = str(err.value)
    assert "wrong time of binomial_broadcast for p=8, root=0" in text
    assert "the simulated time is 3, but d(d+1)/2 (alpha + beta m) = 6." in text
    assert "messages" not in text           # the count is right, so it is not mentioned

    def sends_twice(me, p, data, root=0):
        value = yield from BINOMIAL(me, p, data, root)
        if me == 0 and p > 1:
            yield send(1, value)
        if me == 1:
            yield recv(0)
        return value

    with pytest.raises(AssertionError, match="sent 4 messages; a broadcast needs only p - 1 = 3"):
        check_broadcast_program(sends_twice, [4], roots=[0], expected_time=lambda p: 2.0)


def test_deadlock_names_the_waiting_pes():
    with pytest.raises(AssertionError) as err:
        check_broadcast_program(deadlocks, [3], roots=[0])
    text = str(err.value)
    assert text.startswith("deadlock in deadlocks for p=3, root=0")
    assert "PE 2 waits in recv(src=0)" in text
    assert "Hint" in text


def test_unreceived_message_is_explained():
    with pytest.raises(AssertionError) as err:
        check_broadcast_program(forgets_to_receive, [4], roots=[2])
    text = str(err.value)
    assert "forgets_to_receive for p=4, root=2: PE 2 sent messages that were never received" in text
    assert "1 message(s) from PE 2 to PE 3" in text


def test_exception_in_the_program_shows_type_pe_and_line():
    with pytest.raises(AssertionError) as err:
        check_broadcast_program(crashes, [4], roots=[0])
    text = str(err.value)
    assert "crashes for p=4, root=0 raised ZeroDivisionError: division by zero" in text
    assert "PE 1 of 4" in text
    assert "of crashes: `data = 1 / 0`" in text


def test_missing_yield_and_skeleton_get_hints():
    with pytest.raises(AssertionError, match="must be a generator function"):
        check_broadcast_program(not_a_generator, [2], roots=[0])
    with pytest.raises(AssertionError, match="replace `raise NotImplementedError\\(\\)`"):
        check_broadcast_program(unimplemented, [2], roots=[0])


def test_endless_yielding_program_is_stopped_by_max_ops():
    start = time.monotonic()
    with pytest.raises(AssertionError) as err:
        check_broadcast_program(yields_forever, [5], roots=[0], max_ops=500)
    assert time.monotonic() - start < 5
    assert "did not finish: the PEs issued more than 500 operations" in str(err.value)
    assert "keeps yielding" in str(err.value)


@needs_alarm
def test_endless_program_that_never_yields_is_stopped_by_the_clock():
    start = time.monotonic()
    with pytest.raises(AssertionError) as err:
        check_broadcast_program(spins_forever, [1, 2, 3], roots=[0], time_limit_s=0.3)
    assert time.monotonic() - start < 5
    text = str(err.value)
    assert "spins_forever did not finish within 0.3 s of real time" in text
    assert "p=1, root=0" in text
    assert "while True: pass" in text


def test_a_pe_must_receive_to_know_the_message():
    with pytest.raises(AssertionError) as err:
        check_broadcast_program(cheats_with_a_global, [3], roots=[0])
    assert "PE 1 returned the right message but never received one" in str(err.value)
    check_broadcast_program(cheats_with_a_global, [3], roots=[0], require_receive=False)


def test_roots_can_be_all_a_list_or_a_function():
    seen = []

    def recorder(me, p, data, root=0):
        if me == 0:
            seen.append((p, root))
        return (yield from BINOMIAL(me, p, data, root))

    check_broadcast_program(recorder, [3], roots="all")
    check_broadcast_program(recorder, [3], roots=[0, 2, 7])          # 7 >= p is skipped
    check_broadcast_program(recorder, [4], roots=lambda p: [p - 1])
    assert seen == [(3, 0), (3, 1), (3, 2), (3, 0), (3, 2), (4, 3)]
    with pytest.raises(ValueError, match="roots"):
        check_broadcast_program(recorder, [3], roots="some")


def test_nothing_reaches_stderr_and_no_warning_escapes(capfd):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_broadcast_program(noisy, [4], roots=[0])
        for bad in (deadlocks, crashes, forgets_to_receive, off_by_one_value):
            with pytest.raises(AssertionError):
                check_broadcast_program(bad, [4], roots=[0])
        with pytest.raises(AssertionError):
            guarded_call(lambda: 1 / 0)
    assert caught == []
    out, err = capfd.readouterr()
    assert err == ""


# -- run_program and simulated_time ----------------------------------------------------------

def test_run_program_returns_the_run():
    run = run_program(BINOMIAL, 4, ["x", None, None, None], root=0)
    assert run.results == ["x"] * 4 and run.time == 2.0


def test_run_program_explains_an_invalid_operation():
    def bad_rank(me, p, data):
        yield send(p, data)

    with pytest.raises(AssertionError, match="names destination 2, which is not a rank"):
        run_program(bad_rank, 2, context="p=2")


def test_simulated_time_matches_the_closed_forms():
    model = CostModel(ts=1.0, tw=0.5)
    assert simulated_time(BINOMIAL, 16, m=4, model=model) == 4 * 3.0
    assert simulated_time(smallest_first, 16, m=4, model=model, root=5) == 10 * 3.0
    with pytest.raises(AssertionError, match="deadlock in deadlocks for p=3, root=0"):
        simulated_time(deadlocks, 3)
