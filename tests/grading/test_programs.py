"""Tests of collective_lib.grading.programs: running and checking a student's program.

run_program and check_broadcast_program must pass a correct program and turn
every kind of failure (wrong value, wrong time, deadlock, unreceived message,
exception, endless program) into an AssertionError whose text says what went
wrong, without writing anything to stderr; check_collective_program does the same
for any collective (here the all-to-all reductions of chapter 5), and also catches
a time above the bound and words declared smaller than what was sent.
"""
import operator
import signal
import sys
import time
import warnings

import pytest

from all_to_all_submissions import (REFERENCE_RING, all_at_once, direct, own_ring,
                                    reduced, rightwards, ring_time, vectors)
from collective_lib import CostModel, catalog, compute, recv, send, sendrecv
from collective_lib.algorithms.reduce import add
from collective_lib.grading import (CheckFailed, check_broadcast_program,
                                    check_collective_program, count_pieces, guarded_call,
                                    run_program, simulated_time)
from collective_lib.networks import Ring
from messages import flat

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
    text = flat(err.value)
    assert "wrong result of off_by_one_value for p=2, root=1" in text
    assert "PE 1 returned None" in text
    assert "the root's message was [" in text


def test_wrong_time_shows_expected_and_simulated():
    with pytest.raises(AssertionError) as err:
        check_broadcast_program(BINOMIAL, [8], roots=[0], time_label="d(d+1)/2 (alpha + beta m)",
                                expected_time=lambda p: 6.0)
    text = flat(err.value)
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
    text = flat(err.value)
    assert text.startswith("deadlock in deadlocks for p=3, root=0")
    assert "PE 2 waits in recv(src=0)" in text
    assert "Hint" in text


def test_unreceived_message_is_explained():
    with pytest.raises(AssertionError) as err:
        check_broadcast_program(forgets_to_receive, [4], roots=[2])
    text = flat(err.value)
    assert "forgets_to_receive for p=4, root=2: PE 2 sent messages that were never received" in text
    assert "1 message(s) from PE 2 to PE 3" in text


def test_exception_in_the_program_shows_type_pe_and_line():
    with pytest.raises(AssertionError) as err:
        check_broadcast_program(crashes, [4], roots=[0])
    text = flat(err.value)
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
    assert "did not finish: the PEs issued more than 500 operations" in flat(err.value)
    assert "keeps yielding" in flat(err.value)


@needs_alarm
def test_endless_program_that_never_yields_is_stopped_by_the_clock():
    start = time.monotonic()
    with pytest.raises(AssertionError) as err:
        check_broadcast_program(spins_forever, [1, 2, 3], roots=[0], time_limit_s=0.3)
    assert time.monotonic() - start < 5
    text = flat(err.value)
    assert "spins_forever did not finish within 0.3 s of real time" in text
    assert "p=1, root=0" in text
    assert "while True: pass" in text


def test_a_pe_must_receive_to_know_the_message():
    with pytest.raises(AssertionError) as err:
        check_broadcast_program(cheats_with_a_global, [3], roots=[0])
    assert "PE 1 returned the right message but never received one" in flat(err.value)
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


def test_run_program_copying_keeps_what_was_sent():
    # a receiver that cuts down the list it received (the halving scatter's `del block[...]`)
    # changes the sender's payload in the run too, unless every message is copied
    def cuts_what_it_received(me, p, data):
        if me == 0:
            yield send(1, [[1, 2], [3, 4]], words=4)
            return None
        got = yield recv(0)
        del got[1:]
        return got

    shared = run_program(cuts_what_it_received, 2)
    copied = run_program(cuts_what_it_received, 2, copying=True)
    assert shared.messages[0].payload == [[1, 2]]
    assert copied.messages[0].payload == [[1, 2], [3, 4]]
    assert copied.results == shared.results and copied.time == shared.time


def test_run_program_explains_an_invalid_operation():
    def bad_rank(me, p, data):
        yield send(p, data)

    with pytest.raises(AssertionError) as err:
        run_program(bad_rank, 2, context="p=2")
    assert "names destination 2, which is not a rank" in flat(err.value)


def test_simulated_time_matches_the_closed_forms():
    model = CostModel(ts=1.0, tw=0.5)
    assert simulated_time(BINOMIAL, 16, m=4, model=model) == 4 * 3.0
    assert simulated_time(smallest_first, 16, m=4, model=model, root=5) == 10 * 3.0
    with pytest.raises(AssertionError, match="deadlock in deadlocks for p=3, root=0"):
        simulated_time(deadlocks, 3)


# -- check_collective_program -----------------------------------------------------------------

def test_a_correct_program_passes_with_the_exact_time():
    for model, m in [(CostModel(ts=1.0, tw=0.0), 2), (CostModel(ts=2.0, tw=0.5), 2)]:
        check_collective_program(own_ring, range(1, 20), make_inputs=vectors, expected=reduced,
                                 network_for=Ring, model=model,
                                 expected_time=lambda p: (model.ts + model.tw * m) * (p - 1))
    check_collective_program(REFERENCE_RING, [(p, {"op": operator.or_}) for p in range(1, 9)],
                             make_inputs=lambda p, rng, **_: [[frozenset({(i, j)})
                                                              for j in range(p)]
                                                             for i in range(p)],
                             expected=reduced, network_for=Ring)


def test_a_wrong_result_names_the_case_the_pe_and_the_first_wrong_word():
    with pytest.raises(AssertionError) as err:
        check_collective_program(rightwards, [1, 2, 3], make_inputs=vectors, expected=reduced,
                                 network_for=Ring, item="word", hint="Hint: send to the left.")
    text = flat(err.value)
    assert text.startswith("wrong result of rightwards for p=3: PE 0 returned [")
    assert "was expected (word 0 is " in text
    assert text.endswith("Hint: send to the left.")


def test_params_are_passed_and_named():
    def maximum(a, b):
        return [max(x, y) for x, y in zip(a, b)]

    with pytest.raises(AssertionError) as err:
        check_collective_program(rightwards, [(4, {"op": maximum})], make_inputs=vectors,
                                 expected=reduced, network_for=Ring)
    assert "wrong result of rightwards for p=4, op=maximum: PE 0 returned" in flat(err.value)


def test_an_exact_time_is_enforced_with_the_traffic():
    check_collective_program(direct, range(1, 9), make_inputs=vectors, expected=reduced)
    with pytest.raises(AssertionError) as err:
        check_collective_program(direct, range(1, 9), make_inputs=vectors, expected=reduced,
                                 network_for=Ring, expected_time=ring_time,
                                 time_label="(ts + tw m)(p - 1)", time_hint="Hint: neighbours.")
    text = flat(err.value)
    assert text.startswith("wrong time of direct for p=4, alpha=1, beta=0, ports='full-duplex': "
                           "the simulated time is 5, but (ts + tw m)(p - 1) = 3 (the PEs sent "
                           "12 messages in 5 rounds; the longest was 2 words).")
    assert text.endswith("Hint: neighbours.")


def test_a_time_bound_is_enforced():
    model = CostModel(ts=1.0, tw=1.0)

    def bound(p):
        return (p - 1) * 3.0

    check_collective_program(own_ring, range(1, 9), make_inputs=vectors, expected=reduced,
                             network_for=Ring, model=model, time_bound=bound)
    with pytest.raises(AssertionError) as err:
        check_collective_program(all_at_once, range(1, 9), make_inputs=vectors, expected=reduced,
                                 network_for=Ring, model=model, time_bound=bound,
                                 time_label="3(p - 1)")
    # p = 2 passes: its list of two 2-word messages counts as 2 words (one per item)
    assert flat(err.value) == ("too slow: all_at_once for p=3, alpha=1, beta=1, "
                              "ports='full-duplex' takes 8, more than 3(p - 1) = 6 (the PEs "
                              "sent 6 messages in 2 rounds; the longest was 3 words).")


def test_under_declared_words_are_caught():
    def bundles(me, p, data):
        got = yield sendrecv((me + 1) % p, [data], (me - 1) % p)     # 1 word declared
        return got[0]

    def inputs(p, rng, **_):
        return [[10 * i, 10 * i + 1, 10 * i + 2] for i in range(p)]

    def words(payload, inputs):
        return 3 * count_pieces(payload, {tuple(x) for x in inputs}, len(inputs))

    with pytest.raises(AssertionError) as err:
        check_collective_program(bundles, [3], make_inputs=inputs,
                                 expected=lambda x: [x[-1]] + x[:-1], payload_words=words)
    assert ("bundles for p=3: the message from PE 0 to PE 1 carries 3 words of data but is sent "
            "as 1 word") in " ".join(flat(err.value).split())
    assert "words=" in flat(err.value)


@pytest.mark.parametrize("hidden, declared", [
    ("str(data)", 0),                               # the words in a string
    ("list(data) + list(data)", 0),                 # flattened: no input message left whole
    ("sum(x << 20 * i for i, x in enumerate(data))", 1),     # packed into one number
    ("[i % p for x in data for i in range(x)]", 0),          # spelt in ranks
    ("[tuple(data)] * 2 + [(1, 7)]", 6),            # a message twice, then a stranger
])
def test_words_hidden_in_a_form_no_check_can_count_are_caught(hidden, declared):
    def words(payload, inputs):
        return 3 * count_pieces(payload, {tuple(x) for x in inputs}, len(inputs))

    def inputs(p, rng, **_):
        return [[10 * i + 9, 10 * i + 11, 10 * i + 12] for i in range(p)]

    hider = eval(f"lambda data, p: {hidden}")

    def hides(me, p, data):
        yield sendrecv((me + 1) % p, hider(data, p), (me - 1) % p, words=declared)
        return data

    with pytest.raises(CheckFailed) as err:
        check_collective_program(hides, [3], make_inputs=inputs, expected=lambda x: x,
                                 payload_words=words)
    assert err.value.kind == "message_size"
    text = flat(err.value)
    assert "hides for p=3: the size of the message from PE 0 to PE 1 cannot be checked: it " \
        "holds " in text
    assert text.endswith("A message may hold only the input messages themselves, in lists, "
                         "tuples or dicts, with ranks as labels.")
    assert max(map(len, str(err.value).splitlines())) <= 80     # Validate cuts longer lines


def test_declared_words_are_checked_against_what_was_sent_not_what_became_of_it():
    def words(payload, inputs):
        return 3 * count_pieces(payload, {tuple(x) for x in inputs}, len(inputs))

    def inputs(p, rng, **_):
        return [[10 * i, 10 * i + 1, 10 * i + 2] for i in range(p)]

    def grows_what_it_received(me, p, data):      # honest: 3 words sent, then the list grows
        got = yield sendrecv((me + 1) % p, [data], (me - 1) % p, words=3)
        got.append(data)
        got.append(data)
        return got[0]

    check_collective_program(grows_what_it_received, [3, 4], make_inputs=inputs,
                             expected=lambda x: [x[-1]] + x[:-1], payload_words=words)

    def empties_what_it_sent(me, p, data):        # 1 word declared for 3, then hidden
        bundle = [data]
        got = yield sendrecv((me + 1) % p, bundle, (me - 1) % p, words=1)
        bundle.clear()
        return got[0]

    with pytest.raises(AssertionError, match="carries 3 words of data\nbut is sent as 1 word"):
        check_collective_program(empties_what_it_sent, [3], make_inputs=inputs,
                                 expected=lambda x: [x[-1]] + x[:-1], payload_words=words)


def test_failures_of_the_program_are_explained():
    def deadlocks(me, p, data):
        return (yield recv((me + 1) % p))

    def crashes(me, p, data):
        yield send((me + 1) % p, 1)
        return 1 / 0

    for program, words in [(deadlocks, "deadlock in deadlocks for p=3"),
                           (crashes, "crashes for p=3 raised ZeroDivisionError")]:
        with pytest.raises(AssertionError) as err:
            check_collective_program(program, [3], make_inputs=vectors, expected=reduced)
        assert words in flat(err.value)


def test_the_expected_results_do_not_depend_on_changes_to_the_inputs():
    def clobbers(me, p, data, op=add):
        result = yield from own_ring(me, p, data, op)
        data.clear()
        return result

    check_collective_program(clobbers, range(1, 6), make_inputs=vectors, expected=reduced)


@needs_alarm
def test_an_endless_loop_is_stopped():
    def spins(me, p, data):
        while True:
            pass
        yield

    with pytest.raises(AssertionError) as err:
        check_collective_program(spins, [2], make_inputs=vectors, expected=reduced,
                                 time_limit_s=0.3)
    assert "did not finish within 0.3 s of real time" in flat(err.value)
