"""Tests of collective_lib.grading, the helpers behind the exercises' hidden tests.

Every helper must pass a correct program and turn every kind of failure (wrong
value, wrong time, deadlock, unreceived message, exception, endless program,
copied reference implementation) into an AssertionError whose text says what
went wrong, without writing anything to stderr.
"""
import functools
import signal
import sys
import threading
import time
import warnings

import pytest

from collective_lib import CostModel, catalog, compute, recv, send
from collective_lib.grading import (WallClockLimitExceeded, check_broadcast_program,
                                    forbid_library_calls, guarded_call,
                                    pipelined_broadcast_time, run_program, simulated_time,
                                    wall_clock_limit)

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


# -- guarded_call ---------------------------------------------------------------------

def test_guarded_call_returns_the_value():
    assert guarded_call(pow, 2, 10) == 1024
    assert guarded_call(sorted, [3, 1, 2], reverse=True) == [3, 2, 1]


def test_guarded_call_explains_an_exception():
    def best_k(n, p):
        return [1, 2][n]

    with pytest.raises(AssertionError) as err:
        guarded_call(best_k, 64, 7)
    text = str(err.value)
    assert text.startswith("best_k(64, 7) raised IndexError: list index out of range")
    assert "of best_k: `return [1, 2][n]`" in text


def test_guarded_call_hints_at_the_skeleton():
    def skeleton(n):
        raise NotImplementedError()

    with pytest.raises(AssertionError, match="NotImplementedError"):
        guarded_call(skeleton, 3)


@needs_alarm
def test_guarded_call_stops_an_endless_function():
    def search(n):
        while True:
            n += 1

    start = time.monotonic()
    with pytest.raises(AssertionError, match=r"search\(0\) did not return within 0.2 s"):
        guarded_call(search, 0, time_limit_s=0.2)
    assert time.monotonic() - start < 5


# -- wall_clock_limit -------------------------------------------------------------------

@needs_alarm
def test_wall_clock_limit_lets_fast_code_through_and_disarms():
    with wall_clock_limit(2.0):
        value = sum(range(100))
    assert value == 4950
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


@needs_alarm
def test_wall_clock_limit_restores_the_previous_handler():
    calls = []

    def previous(signum, frame):
        calls.append(signum)

    old = signal.signal(signal.SIGALRM, previous)
    try:
        with wall_clock_limit(1.0):
            pass
        assert signal.getsignal(signal.SIGALRM) is previous
        with pytest.raises(WallClockLimitExceeded, match="too slow"):
            with wall_clock_limit(0.05, "too slow"):
                while True:
                    pass
        assert signal.getsignal(signal.SIGALRM) is previous
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        assert calls == []
    finally:
        signal.signal(signal.SIGALRM, old)


@needs_alarm
def test_wall_clock_limit_gives_an_outer_timer_back():
    old = signal.signal(signal.SIGALRM, lambda signum, frame: None)
    try:
        signal.setitimer(signal.ITIMER_REAL, 30.0)
        with wall_clock_limit(1.0):
            pass
        remaining = signal.getitimer(signal.ITIMER_REAL)[0]
        assert 25.0 < remaining <= 30.0
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


@needs_alarm
def test_nested_guards_report_the_outer_deadline():
    with pytest.raises(WallClockLimitExceeded, match="outer"):
        with wall_clock_limit(0.1, "outer"):
            with wall_clock_limit(10.0, "inner"):
                while True:
                    pass
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    with pytest.raises(WallClockLimitExceeded, match="inner"):
        with wall_clock_limit(10.0, "outer"):
            with wall_clock_limit(0.1, lambda: "inner, computed late"):
                while True:
                    pass


@needs_alarm
def test_a_swallowed_interruption_is_repeated():
    with pytest.raises(WallClockLimitExceeded, match="stubborn"):
        with wall_clock_limit(0.05, "stubborn"):
            try:
                while True:
                    pass
            except BaseException:       # a student's bare except: swallows the first alarm
                pass
            while True:                 # ... and loops again
                pass


def test_wall_clock_limit_outside_the_main_thread_does_nothing():
    result = []

    def worker():
        with wall_clock_limit(0.01):
            time.sleep(0.05)
            result.append("done")

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join()
    assert result == ["done"]


def test_wall_clock_limit_rejects_bad_budgets():
    with pytest.raises(ValueError):
        wall_clock_limit(0)


# -- forbid_library_calls ----------------------------------------------------------------

FORBIDDEN = ["binomial_broadcast", "catalog"]


def test_own_program_is_allowed():
    forbid_library_calls(smallest_first, FORBIDDEN)

    def documented(me, p, data, root=0):
        """Unlike binomial_broadcast from the catalog, this one is mine."""
        catalog = [me]                  # a local that merely shares a name
        # binomial_broadcast would be cheating
        return catalog and data
        yield

    forbid_library_calls(documented, FORBIDDEN)


def _assert_forbidden(program, name="binomial_broadcast"):
    with pytest.raises(AssertionError) as err:
        forbid_library_calls(program, FORBIDDEN)
    assert f"uses the library's `{name}`" in str(err.value)
    assert "Not allowed here" in str(err.value)


def test_direct_call_is_caught():
    from collective_lib.algorithms.broadcast import binomial_broadcast

    def copied(me, p, data, root=0):
        return (yield from binomial_broadcast(me, p, data, root, "smallest-first"))

    _assert_forbidden(copied)


def test_catalog_lookup_is_caught():
    def looked_up(me, p, data, root=0):
        program = catalog()["binomial_broadcast"].program
        return (yield from program(me, p, data, root))

    _assert_forbidden(looked_up, "catalog")

    def by_string(me, p, data, root=0):
        import collective_lib.algorithms.broadcast as module
        program = getattr(module, "binomial_" "broadcast")
        return (yield from program(me, p, data, root))

    _assert_forbidden(by_string)


def test_alias_partial_closure_default_and_helpers_are_caught():
    import collective_lib.algorithms.broadcast as module

    alias = module.binomial_broadcast
    globals()["_ALIAS"] = alias

    def via_alias(me, p, data, root=0):
        return (yield from _ALIAS(me, p, data, root))  # noqa: F821

    _assert_forbidden(via_alias)

    _assert_forbidden(functools.partial(alias, children_order="smallest-first"))
    with pytest.raises(AssertionError, match=r"^partial\(binomial_broadcast\) uses"):
        forbid_library_calls(functools.partial(alias, children_order="smallest-first"), FORBIDDEN)
    _assert_forbidden(alias)

    def via_closure(me, p, data, root=0):
        return (yield from alias(me, p, data, root))

    _assert_forbidden(via_closure)

    def via_default(me, p, data, root=0, impl=alias):
        return (yield from impl(me, p, data, root))

    _assert_forbidden(via_default)

    def via_attribute(me, p, data, root=0):
        return (yield from module.binomial_broadcast(me, p, data, root))

    _assert_forbidden(via_attribute)

    def via_nested(me, p, data, root=0):
        def inner():
            return module.binomial_broadcast
        return (yield from inner()(me, p, data, root))

    _assert_forbidden(via_nested)

    via_lambda = lambda me, p, data, root=0: module.binomial_broadcast(me, p, data, root)  # noqa: E731
    _assert_forbidden(via_lambda)


def _helper_that_cheats(me, p, data, root):
    return catalog()["binomial_broadcast"].program(me, p, data, root)


def test_a_helper_function_is_followed():
    def uses_helper(me, p, data, root=0):
        return (yield from _helper_that_cheats(me, p, data, root))

    with pytest.raises(AssertionError, match=r"`catalog` \(in _helper_that_cheats\)"):
        forbid_library_calls(uses_helper, FORBIDDEN)


def test_library_helpers_that_are_not_forbidden_are_fine():
    from collective_lib.trees import binomial_children

    def uses_trees(me, p, data, root=0, children=binomial_children):
        return data
        yield

    forbid_library_calls(uses_trees, FORBIDDEN)
    forbid_library_calls(uses_trees, [])


def test_custom_reason_is_in_the_message():
    def best_k(n, p, alpha, beta):
        entry = catalog()["pipelined_binary_tree_broadcast"]
        return entry.optimal_k(p, n, entry.default_model(alpha, beta))

    with pytest.raises(AssertionError, match="uses the library's `optimal_k`.*find k by simulation"):
        forbid_library_calls(best_k, ["optimal_k"], reason="find k by simulation")


# -- pipelined_broadcast_time -------------------------------------------------------------

def test_pipelined_broadcast_time_is_the_half_duplex_simulation():
    entry = catalog()["pipelined_binary_tree_broadcast"]
    model = CostModel(ts=1.0, tw=0.1, ports="half-duplex")
    for k in (1, 2, 4):
        assert pipelined_broadcast_time(64, 7, 1.0, 0.1, k) == \
            entry.simulate(7, m=64, model=model, k=k).time
    assert pipelined_broadcast_time(64, 7, 1.0, 0.1, 2) == pytest.approx(29.4)
