"""What a student's process sends is validated before the checker uses it
(collective_lib.autograde.codec, issue 23).

A record is rebuilt only if it keeps the rules of its kind (sizes, times, ranks, cells);
a message holds a bounded number of items, so the checker's memory stays bounded; sets
and dicts whose items collide in their hashes are refused before Python builds them.
Last, the grading checks that compare a time (collective_lib.grading.programs) fail
closed on a time that is not finite.
"""
import json
import os
import re
import time
import tracemalloc

import numpy as np
import pytest

from collective_lib import CostModel, ops
from collective_lib.autograde.codec import (MAX_ITEMS, MAX_MESSAGE_BYTES, Undecodable, decode,
                                            encode, receive_message, send_message)
from collective_lib.grading import check_declared_words, programs
from collective_lib.networks import FullyConnected
from collective_lib.ops import Compute, Multi, Recv, Send, SendRecv, shown
from collective_lib.shared_memory import CAS, FetchAdd, Marker, Pause, Read, Write
from collective_lib.runs import Message, Run
from codec_pipes import framed_in_a_pipe

NAN, INF = float("nan"), float("inf")
WORDS_RULE = "a message size must be a non-negative integer"
TIME_RULE = "a time must be a finite non-negative number"
RANK_RULE = "a rank must be a non-negative integer"

# Records as a hostile program builds them; encode() sends them as they are (the
# student's process is not trusted to check anything), decode() must refuse them.
BAD_RECORDS = [
    (Send(1, [1], NAN), f"Send with words=nan: {WORDS_RULE}"),
    (Send(1, [1], INF), f"Send with words=inf: {WORDS_RULE}"),
    (Send(1, [1], -3), f"Send with words=-3: {WORDS_RULE}"),
    (Send(1, [1], 2.5), f"Send with words=2.5: {WORDS_RULE}"),
    (Send(1, [1], True), f"Send with words=True: {WORDS_RULE}"),
    (Send(1, [1], np.float64(3.0)), f"Send with words={shown(np.float64(3.0))}: {WORDS_RULE}"),
    (Send(-1, [1], 1), f"Send with dst=-1: {RANK_RULE}"),
    (Send("1", [1], 1), f"Send with dst='1': {RANK_RULE}"),
    (SendRecv(1, [1], 2, NAN), f"SendRecv with words=nan: {WORDS_RULE}"),
    (SendRecv(1, [1], 2, -1), f"SendRecv with words=-1: {WORDS_RULE}"),
    (SendRecv(1, [1], 1.5, 1), f"SendRecv with src=1.5: {RANK_RULE}"),
    (Recv(False), f"Recv with src=False: {RANK_RULE}"),
    (Recv(-7), f"Recv with src=-7: {RANK_RULE}"),
    (Compute(NAN), f"Compute with time=nan: {TIME_RULE}"),
    (Compute(INF), f"Compute with time=inf: {TIME_RULE}"),
    (Compute(-1.0), f"Compute with time=-1.0: {TIME_RULE}"),
    (Compute(True), f"Compute with time=True: {TIME_RULE}"),
    (Compute("1"), f"Compute with time='1': {TIME_RULE}"),
    (Multi(((1, [1], NAN),), ()), f"Multi with sends[0] words=nan: {WORDS_RULE}"),
    (Multi(((1, [1], 1), (2, [1], -5)), ()), f"Multi with sends[1] words=-5: {WORDS_RULE}"),
    (Multi(((1, [1], 1),), (0, -1)), f"Multi with recvs[1]=-1: {RANK_RULE}"),
    (Multi(((1, [1]),), ()),
     "Multi with sends[0]=(1, [1]): a send of a multi() is a (dst, data, words) triple"),
    (Multi({"a": 1}, ()), "Multi with sends={'a': 1}: a multi()'s sends are a tuple"),
    (Pause(-5), f"Pause with time=-5: {TIME_RULE}"),
    (Pause(NAN), f"Pause with time=nan: {TIME_RULE}"),
    (Pause(INF), f"Pause with time=inf: {TIME_RULE}"),
    (Pause(True), f"Pause with time=True: {TIME_RULE}"),
    (Marker("exit", "cs", None), "Marker with kind='exit': a marker is 'enter', 'leave' or "
                                 "'note'"),
    (Read([1]), "Read with cell=[1]: a cell is named by a string or a (string, integer) pair"),
    (Write(3, 0), "Write with cell=3: a cell is named by a string or a (string, integer) pair"),
    (CAS(("a", "b"), 0, 1),
     "CAS with cell=('a', 'b'): a cell is named by a string or a (string, integer) pair"),
    (FetchAdd(None, 1),
     "FetchAdd with cell=None: a cell is named by a string or a (string, integer) pair"),
]


@pytest.mark.parametrize("record, message", BAD_RECORDS)
def test_a_record_that_breaks_a_rule_is_refused_naming_the_value(record, message):
    data = json.loads(json.dumps(encode(record)))          # as it crosses the pipe
    with pytest.raises(Undecodable) as err:
        decode(data)
    assert str(err.value) == message


@pytest.mark.parametrize("record, message", BAD_RECORDS)
def test_a_bad_record_inside_a_value_is_refused_too(record, message):
    with pytest.raises(Undecodable, match="^" + re.escape(message) + "$"):
        decode(encode({"ops": [1, (record,)]}))


def test_a_record_of_the_wrong_length_is_refused():
    with pytest.raises(Undecodable, match="malformed value"):
        decode({"$r": "Send", "v": [1, [1]]})
    with pytest.raises(Undecodable, match="malformed value"):
        decode({"$r": "Compute", "v": [1, 2]})


@pytest.mark.parametrize("record", [
    ops.send(1, [1, 2]), ops.recv(0), ops.sendrecv(1, "x", 2, words=5), ops.exchange(3, [1]),
    ops.compute(0), ops.compute(2.5), ops.multi([(1, [1, 2]), (2, "x", 7)], [1, 2]),
    Pause(0), Pause(1.5), Read("lock"), Write(("a", 2), [1]), CAS("l", 0, 1),
    FetchAdd("c", -1), Marker("enter", "cs", None), Marker("note", "x", NAN),
])
def test_honest_records_cross_unchanged(record):
    back = decode(json.loads(json.dumps(encode(record))))
    assert type(back) is type(record)
    assert repr(back) == repr(record)


def test_numpy_sizes_and_ranks_come_back_as_ints():
    back = decode(encode(Send(np.int64(1), [1], np.int64(3))))
    assert back == Send(1, [1], 3) and type(back.dst) is int and type(back.words) is int


# -- a bounded value ---------------------------------------------------------------------------

def test_a_value_of_at_most_max_items_items_crosses():
    value = [0] * (MAX_ITEMS - 1)                          # the list counts too
    assert decode(encode(value)) == value


@pytest.mark.parametrize("value", [[0] * MAX_ITEMS, [[]] * MAX_ITEMS,
                                   [{(1, 2)}] * (MAX_ITEMS // 4 + 1),
                                   np.zeros(MAX_ITEMS)])
def test_a_larger_value_is_refused_on_both_sides(value):
    message = f"a value of more than {MAX_ITEMS:,} items cannot be graded"
    with pytest.raises(Undecodable, match=message):
        encode(value)                                       # an honest student's process
    if isinstance(value, list):                             # a hostile one sends it anyway
        data = json.loads(json.dumps(encode(value, max_items=10 * MAX_ITEMS)))
        with pytest.raises(Undecodable, match=message):
            decode(data)


def test_max_items_is_a_parameter():
    assert decode([1, 2, 3], max_items=4) == [1, 2, 3]
    with pytest.raises(Undecodable, match="more than 3 items"):
        decode([1, 2, 3], max_items=3)


def test_sets_and_dicts_whose_items_collide_are_refused_quickly():
    collide = [k * (2 ** 61 - 1) for k in range(20_000)]    # every one hashes to 0
    start = time.monotonic()
    for value in (set(collide[:100]), frozenset(collide[:100])):
        with pytest.raises(Undecodable, match="repeat or collide in their hash values"):
            decode(encode(value))
    forged = {"$s": [{"$i": str(k)} for k in collide]}     # Python would take ~5 s to build it
    with pytest.raises(Undecodable, match="collide"):
        decode(forged)
    with pytest.raises(Undecodable, match="collide"):
        decode({"$d": [[{"$i": str(k)}, 0] for k in collide]})
    with pytest.raises(Undecodable, match="repeat"):
        decode({"$s": [7] * 1000})
    assert time.monotonic() - start < 2
    honest = set(range(-5, 5000)) | {0.5, -1, -2}          # hash(-1) == hash(-2): allowed
    assert decode(encode(honest)) == honest


# -- what crosses the pipe --------------------------------------------------------------------

def _through_a_pipe(blob: bytes):
    """What receive_message makes of ``blob``."""
    with framed_in_a_pipe(blob) as r:
        return receive_message(r)


def _json_of(n: int, unit: str) -> bytes:
    return ("[" + ",".join([unit] * n) + "]").encode()


def test_a_message_goes_through_a_pipe_and_back():
    r, w = os.pipe()
    send_message(w, {"op": encode(ops.send(1, [1, 2]))})
    assert decode(receive_message(r)["op"]) == ops.send(1, [1, 2])
    os.close(r)
    os.close(w)


def test_a_message_over_the_byte_limit_is_refused():
    with pytest.raises(Undecodable, match="over the limit"):
        _through_a_pipe(b'"' + b"a" * MAX_MESSAGE_BYTES + b'"')
    with pytest.raises(Undecodable, match="over the limit"):
        send_message(-1, "a" * MAX_MESSAGE_BYTES)          # refused before it writes


def test_a_message_of_too_many_json_values_is_refused_before_it_is_parsed():
    with pytest.raises(Undecodable, match=f"more than {MAX_ITEMS:,} items"):
        _through_a_pipe(_json_of(MAX_MESSAGE_BYTES // 3, "[]"))


def test_commas_colons_and_brackets_inside_strings_are_not_counted():
    # a student audit: a string of 700,000 commas (one value, 700 KB) was refused as "more
    # than 100,000 items", and the checker said the student's process had died
    message = {"ret": "," * 700_000}
    assert _through_a_pipe(json.dumps(message).encode()) == message
    message = {"ret": ['\\"[:,' * 150_000, "]" * 10, '"']}      # escaped quotes end no string
    assert _through_a_pipe(json.dumps(message).encode()) == message
    # outside strings they still count, strings between them or not
    with pytest.raises(Undecodable, match=f"more than {MAX_ITEMS:,} items"):
        _through_a_pipe(_json_of(MAX_MESSAGE_BYTES // 3, '""'))
    with pytest.raises(Undecodable, match=f"more than {MAX_ITEMS:,} items"):
        _through_a_pipe(_json_of(MAX_MESSAGE_BYTES // 4, "[]") + b'"' + b"," * 10)


def test_json_that_python_refuses_is_undecodable():
    with pytest.raises(Undecodable, match="not JSON"):
        _through_a_pipe(b"[1, 2")
    with pytest.raises(Undecodable, match="not JSON"):
        _through_a_pipe(b"9" * 5000)                       # over int()'s 4300 digits
    with pytest.raises(Undecodable, match="not JSON"):
        _through_a_pipe(b'"\xff"')


@pytest.mark.parametrize("unit, count", [
    ('{"$s":[]}', MAX_ITEMS - 1),          # the dearest value that is accepted: 21 MiB kept
    ('{"$s":[]}', 150_000),                # just under the count of JSON values: refused
    ("[]", 300_000),
    ("[[]]", 200_000),
    ("{}", 590_000),
])
def test_the_worst_message_keeps_the_checker_small(unit, count):
    """Issue 23: 8 MiB of nested empty lists once made 487 MiB in the checker."""
    blob = _json_of(count, unit)
    assert len(blob) <= MAX_MESSAGE_BYTES
    tracemalloc.start()
    try:
        try:
            value = decode(_through_a_pipe(blob))
        except Undecodable:
            value = None
        kept, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2 ** 20, f"{peak / 2**20:.0f} MiB"
    assert kept < 32 * 2 ** 20, f"{kept / 2**20:.0f} MiB"
    del value


# -- the grading checks fail closed -----------------------------------------------------------
# No valid record makes a time NaN any more, but a check that compares a time must not pass
# on one (NaN > bound and NaN < carried are both False), nor on an infinite time.

def _run(time, words=3):
    message = Message(0, 1, 0.0, time, words, [[1, 2, 3]], ((0, 1),))
    return Run(results=[None, [1, 2, 3]], time=time, finish_times=[0.0, time],
               messages=[message], link_load={(0, 1): 1}, p=2, network=FullyConnected(2),
               model=CostModel(ts=1.0, tw=0.0))


@pytest.mark.parametrize("time", [NAN, INF])
@pytest.mark.parametrize("which", ["expected_time", "time_bound"])
def test_a_time_check_fails_on_a_time_that_is_not_finite(time, which):
    limits = {"expected_time": None, "time_bound": None, which: lambda p: 100.0}
    with pytest.raises(AssertionError) as err:
        programs._check_time(_run(time), "prog", "p=2", _run(time).model, 2, {},
                             limits["expected_time"], limits["time_bound"], "the bound", 1e-9, "")
    assert f"the simulated time is {time:g}, not a finite number" in str(err.value)
    programs._check_time(_run(1.0), "prog", "p=2", _run(1.0).model, 2, {},
                         limits["expected_time"] and (lambda p: 1.0), limits["time_bound"],
                         "the bound", 1e-9, "")


def test_a_declared_size_check_fails_on_nan():
    with pytest.raises(AssertionError, match="carries 3 words of data\nbut is sent as nan"):
        check_declared_words(_run(1.0, words=NAN), lambda payload: 3, "prog for p=2")
    check_declared_words(_run(1.0, words=3), lambda payload: 3, "prog for p=2")


def test_a_message_nobody_reads_stops_at_its_deadline():
    # a student process that floods the checker with requests and never reads the answers
    # filled the pipe, and the checker's write blocked past every time limit (fifth round)
    read, write = os.pipe()
    try:
        start = time.monotonic()
        with pytest.raises(TimeoutError):
            for _ in range(1000):
                send_message(write, {"ret": "x" * 1000}, deadline=start + 0.5)
        assert 0.5 <= time.monotonic() - start < 5
        received = 0
        os.set_blocking(read, False)
        while True:                         # what was written is whole messages and a part
            try:
                received += len(os.read(read, 1 << 16))
            except BlockingIOError:
                break
        assert received >= 60_000
    finally:
        os.close(read)
        os.close(write)
    read, write = os.pipe()                 # and a message that is read goes through whole
    try:
        send_message(write, {"ret": [1, 2]}, deadline=time.monotonic() + 5)
        assert receive_message(read, time.monotonic() + 5) == {"ret": [1, 2]}
    finally:
        os.close(read)
        os.close(write)
