"""The records a program yields and the rules they keep (collective_lib.ops).

Every size is a non-negative integer, every time finite and non-negative, every rank a
non-negative integer: one function per rule, applied by the constructors and by
``check_operation`` to a record built without them.  The simulator's refusals are in
test_simulator.py, the codec's in tests/grading/test_codec_validation.py.
"""
from fractions import Fraction

import numpy as np
import pytest

from collective_lib import ops
from collective_lib.ops import (RECORDS, Compute, Multi, Parts, Recv, Send, SendRecv,
                                check_operation, compute, exchange, multi, recv, send, sendrecv,
                                shown, valid_rank, valid_time, valid_words)

NAN, INF = float("nan"), float("inf")
BAD_WORDS = [NAN, INF, -INF, -1, -(2 ** 70), 2.0, 0.5, True, False, "3", None, 1 + 0j,
             np.float64(2.0), np.int64(-1), Fraction(3, 1)]
BAD_TIMES = [NAN, INF, -INF, -1, -0.5, np.float64(NAN), np.float64(-1.0), 10 ** 400, True,
             False, "1", None, 1 + 0j]
BAD_RANKS = [-1, 1.0, 0.5, NAN, True, False, "1", None, np.float64(1.0)]

WORDS_RULE = "a message size must be a non-negative integer"
TIME_RULE = "a time must be a finite non-negative number"


# -- the rules -----------------------------------------------------------------------------

@pytest.mark.parametrize("good, want", [(0, 0), (3, 3), (2 ** 53 - 1, 2 ** 53 - 1),
                                        (np.int64(3), 3), (np.uint8(2), 2)])
def test_a_size_is_a_non_negative_integer_returned_as_an_int(good, want):
    got = valid_words(good)
    assert got == want and type(got) is int


@pytest.mark.parametrize("bad", BAD_WORDS)
def test_any_other_size_is_refused_naming_the_value(bad):
    with pytest.raises(ValueError) as err:
        valid_words(bad)
    assert str(err.value) == f"words={shown(bad)}: {WORDS_RULE}"


@pytest.mark.parametrize("huge", [2 ** 53, 2 ** 70, 10 ** 400, np.uint64(2 ** 63)])
def test_a_size_too_large_for_its_cost_to_be_computed_is_refused(huge):
    # tw * words must be a float: 10**400 words once raised OverflowError deep in the
    # simulator, naming neither the PE nor the record
    with pytest.raises(ValueError) as err:
        valid_words(huge)
    assert str(err.value) == f"words={shown(huge)}: a message size must be below 2**53 words"
    with pytest.raises(ValueError, match="below 2\\*\\*53 words"):
        send(1, [1], words=huge)


@pytest.mark.parametrize("good", [0, 2, 0.5, 1e300, np.float64(1.5), np.int64(3), Fraction(1, 3)])
def test_a_time_is_finite_and_non_negative_and_kept_as_it_is(good):
    assert valid_time(good) is good


@pytest.mark.parametrize("bad", BAD_TIMES)
def test_any_other_time_is_refused_naming_the_value(bad):
    with pytest.raises(ValueError) as err:
        valid_time(bad)
    assert str(err.value) == f"time={shown(bad)}: {TIME_RULE}"


@pytest.mark.parametrize("bad", BAD_RANKS)
def test_a_rank_is_a_non_negative_integer(bad):
    with pytest.raises(ValueError) as err:
        valid_rank(bad)
    assert str(err.value) == f"rank={shown(bad)}: a rank must be a non-negative integer"


def test_a_rank_of_a_run_is_below_its_p():
    assert valid_rank(np.int64(3), 4) == 3 and type(valid_rank(np.int64(3), 4)) is int
    with pytest.raises(ValueError, match=r"^dst=4: a rank must be an integer in 0\.\.3$"):
        valid_rank(4, 4, "dst")


def test_a_long_value_is_cut_in_a_message():
    with pytest.raises(ValueError) as err:
        valid_words(list(range(10 ** 5)))
    assert len(str(err.value)) < 120 and "..." in str(err.value)


# -- the constructors apply them ------------------------------------------------------------

@pytest.mark.parametrize("bad", BAD_WORDS)
@pytest.mark.parametrize("make", [
    lambda w: send(1, [1, 2], words=w),
    lambda w: sendrecv(1, [1, 2], 2, words=w),
    lambda w: exchange(1, [1, 2], words=w),
    lambda w: multi([(1, [1, 2], w)]),
])
def test_the_constructors_refuse_a_bad_size(make, bad):
    if bad is None:          # words=None means "the size of the data"
        assert make(bad) is not None
        return
    with pytest.raises(ValueError) as err:
        make(bad)
    assert str(err.value) == f"words={shown(bad)}: {WORDS_RULE}"


@pytest.mark.parametrize("bad", BAD_TIMES)
def test_compute_refuses_a_bad_time(bad):
    with pytest.raises(ValueError) as err:
        compute(bad)
    assert str(err.value) == f"time={shown(bad)}: {TIME_RULE}"


def test_the_constructors_take_numpy_integers_as_ints():
    assert send(1, "x", words=np.int64(4)) == Send(1, "x", 4)
    assert type(sendrecv(1, "x", 2, words=np.int32(4)).words) is int
    assert multi([(1, "x", np.int64(2))]).sends == ((1, "x", 2),)
    assert compute(np.float64(1.5)) == Compute(1.5)


def test_a_default_size_is_the_size_of_the_data():
    class Odd:
        size = -5                              # no numpy array: not a size
        def __len__(self):
            return 3
    assert send(1, Odd()).words == 3
    assert send(1, np.zeros((2, 3))).words == 6 and send(1, None).words == 0


# -- check_operation: a record built by hand ------------------------------------------------

BAD_RECORDS = [
    (Send(1, [1], NAN), f"Send with words=nan: {WORDS_RULE}"),
    (Send(1, [1], -3), f"Send with words=-3: {WORDS_RULE}"),
    (Send(1, [1], 2.0), f"Send with words=2.0: {WORDS_RULE}"),
    (Send(1, [1], True), f"Send with words=True: {WORDS_RULE}"),
    (Send(1, [1], INF), f"Send with words=inf: {WORDS_RULE}"),
    (Send(-1, [1], 1), "Send with dst=-1: a rank must be a non-negative integer"),
    (Send(1.0, [1], 1), "Send with dst=1.0: a rank must be a non-negative integer"),
    (SendRecv(1, [1], 2, NAN), f"SendRecv with words=nan: {WORDS_RULE}"),
    (SendRecv(1, [1], 2, -1), f"SendRecv with words=-1: {WORDS_RULE}"),
    (SendRecv(1, [1], True, 1), "SendRecv with src=True: a rank must be a non-negative integer"),
    (Recv(-2), "Recv with src=-2: a rank must be a non-negative integer"),
    (Recv(None), "Recv with src=None: a rank must be a non-negative integer"),
    (Compute(NAN), f"Compute with time=nan: {TIME_RULE}"),
    (Compute(-1.0), f"Compute with time=-1.0: {TIME_RULE}"),
    (Compute(INF), f"Compute with time=inf: {TIME_RULE}"),
    (Compute(True), f"Compute with time=True: {TIME_RULE}"),
    (Multi(((1, [1], NAN),), ()), f"Multi with sends[0] words=nan: {WORDS_RULE}"),
    (Multi(((1, [1], 1), (2, [1], -1)), ()), f"Multi with sends[1] words=-1: {WORDS_RULE}"),
    (Multi(((1, [1], False),), ()), f"Multi with sends[0] words=False: {WORDS_RULE}"),
    (Multi(((-1, [1], 1),), ()), "Multi with sends[0] dst=-1: a rank must be a non-negative "
                                 "integer"),
    (Multi((), (0, 1.5)), "Multi with recvs[1]=1.5: a rank must be a non-negative integer"),
    (Multi(((1, [1]),), ()), "Multi with sends[0]=(1, [1]): a send of a multi() is a "
                             "(dst, data, words) triple"),
    (Multi(5, ()), "Multi with sends=5: a multi()'s sends are a tuple"),
    (Multi((), "12"), "Multi with recvs='12': a multi()'s recvs are a tuple"),
    (tuple.__new__(Send, (1, [1])), "Send with 2 fields instead of 3"),
]


@pytest.mark.parametrize("op, message", BAD_RECORDS)
def test_check_operation_names_the_record_field_and_value(op, message):
    with pytest.raises(ValueError) as err:
        check_operation(op)
    assert str(err.value) == message


def test_check_operation_knows_p_when_given():
    assert check_operation(Send(3, "x", 1), p=4) == Send(3, "x", 1)
    with pytest.raises(ValueError, match=r"^Recv with src=4: a rank must be an integer in 0\.\.3$"):
        check_operation(Recv(4), p=4)


def test_check_operation_passes_honest_records_and_normalizes_them():
    honest = [send(1, [1, 2]), recv(0), sendrecv(1, "x", 2, words=5), exchange(3, [1]),
              compute(2.5), compute(0), multi([(1, [1, 2]), (2, "x", 7)], [1, 2])]
    for op in honest:
        assert check_operation(op) == op and type(check_operation(op)) is type(op)
    rebuilt = check_operation(Multi([[np.int64(1), "x", np.int64(2)]], [np.int32(0)]))
    assert rebuilt == Multi(((1, "x", 2),), (0,))
    assert type(rebuilt.sends[0][2]) is int and type(rebuilt.recvs[0]) is int
    with pytest.raises(TypeError, match="is not an operation"):
        check_operation(("send", 1))


# -- one description per kind: parts, from_parts, result -----------------------------------

# Examples of every kind: (record, its parts, the payloads it receives, its result).
KIND_EXAMPLES = {
    Send: [(send(3, [1, 2]), Parts(((3, [1, 2], 2),), ()), [], None),
           (send(0, None, words=4), Parts(((0, None, 4),), ()), [], None)],
    Recv: [(recv(2), Parts((), (2,)), ["x"], "x")],
    SendRecv: [(sendrecv(1, "a", 2, words=5), Parts(((1, "a", 5),), (2,)), [[7]], [7]),
               (exchange(4, 9), Parts(((4, 9, 1),), (4,)), [8], 8)],
    Compute: [(compute(2.5), Parts((), (), 2.5), [], None),
              (compute(0), Parts((), (), 0), [], None)],
    Multi: [(multi([(1, "a"), (2, "bc", 7)], [3, 1]), Parts(((1, "a", 1), (2, "bc", 7)), (3, 1)),
             ["x", "y"], ["x", "y"]),
            (multi(), Parts((), ()), [], [])],
}


def test_the_records_ops_declares_are_the_kinds_examined_here():
    declared = {value for name in ops.__all__ for value in [getattr(ops, name)]
                if isinstance(value, type) and issubclass(value, tuple) and value is not Parts}
    assert declared == set(RECORDS) == set(KIND_EXAMPLES)


@pytest.mark.parametrize("kind", RECORDS, ids=lambda kind: kind.__name__)
def test_every_kind_says_its_parts_is_rebuilt_from_them_and_makes_its_result(kind):
    for op, parts, received, result in KIND_EXAMPLES[kind]:
        assert type(op) is kind and op.parts() == parts and type(op.parts()) is Parts
        rebuilt = kind.from_parts(op.parts())
        assert rebuilt == op and type(rebuilt) is kind
        assert kind.from_parts(tuple(parts)) == op          # any (sends, sources, time) triple
        assert len(received) == len(parts.sources)
        assert op.result(received) == result
        # changed parts make the same kind with those parts
        moved = Parts(tuple((dst + 10, ("copy", data), words) for dst, data, words in parts.sends),
                      tuple(src + 10 for src in parts.sources), parts.time)
        remade = kind.from_parts(moved)
        assert type(remade) is kind and remade.parts() == moved
        assert check_operation(remade) == remade
        # mapped() is that rebuilding, for ranks and payloads
        assert ops.mapped(op, rank=lambda r: r + 10, payload=lambda d: ("copy", d)) == remade
        assert ops.mapped(op) is op


@pytest.mark.parametrize("kind", RECORDS, ids=lambda kind: kind.__name__)
def test_parts_that_do_not_fit_a_kind_are_refused_naming_it(kind):
    too_many = Parts(((1, "a", 1),) * 2, (1, 2), 1.0)
    with pytest.raises(ValueError, match=f"^a {kind.__name__} is made of "):
        kind.from_parts(too_many)


def test_mapped_refuses_what_is_not_an_operation():
    with pytest.raises(TypeError, match="is not an operation"):
        ops.mapped(("send", 1), rank=abs)


@pytest.mark.parametrize("op, text", [
    (send(3, "x"), "send(dst=3): PE 3 never posted the matching receive"),
    (recv(2), "recv(src=2)"),
    (sendrecv(1, "x", 2), "sendrecv(dst=1, src=2): its message from PE 2 never came"),
    (multi([(1, "a")], [3, 0]), "multi(recvs=[3, 0]): not every message arrived"),
    (compute(1.5), "Compute(time=1.5)")])
def test_every_kind_says_what_a_blocked_pe_waits_for(op, text):
    assert op.waiting() == text
