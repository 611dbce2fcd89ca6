"""The coherence cost model, the machine's accounting and the trace it records
(collective_lib.shared_memory.machine)."""
import pytest

from collective_lib.shared_memory import (CoherenceModel, cas, cell_array, enter, fetch_add,
                                          format_trace, leave, note, packed_lines, pause, read,
                                          simulate_shared, write)

from shared_memory_programs import atomic_increment

MODEL = CoherenceModel(hit=1, miss=10, contended=20)


# -- the coherence cost model ----------------------------------------------------------

def test_first_read_misses_then_hits():
    def prog(me, p, data):
        for _ in range(3):
            yield read("x")
    run = simulate_shared(prog, 1, memory={"x": 0}, model=MODEL)
    assert run.time == 10 + 1 + 1
    assert run.transfers == {"x": 1}


def test_a_write_to_a_shared_line_invalidates_and_costs_contended():
    def prog(me, p, data):
        if me == 0:
            yield pause(100)
            yield write("x", 1)          # PE 1 holds a copy: contended
            yield write("x", 2)          # now PE 0 holds it alone: a hit
        else:
            yield read("x")              # miss
            yield read("x")              # hit
            yield pause(200)
            return (yield read("x"))     # invalidated: miss again
    run = simulate_shared(prog, 2, memory={"x": 0}, model=MODEL)
    assert run.results[1] == 2
    assert run.finish_times == [100 + 20 + 1, 10 + 1 + 200 + 10]
    assert run.transfers["x"] == 3


def test_contended_accesses_to_one_line_are_served_one_at_a_time():
    run = simulate_shared(atomic_increment, 8, memory={"c": 0}, model=MODEL)
    assert sorted(run.results) == list(range(8))
    assert run.time == 10 + 7 * 20                       # one miss, then 7 contended
    assert sorted(run.finish_times) == [10 + 20 * i for i in range(8)]


def test_spinning_on_an_unchanged_cached_line_is_cheap():
    def prog(me, p, data):
        if me == 0:
            yield pause(1000)
            yield write("flag", 1)
        else:
            while (yield read("flag")) == 0:
                pass
    run = simulate_shared(prog, 2, memory={"flag": 0}, model=MODEL)
    assert run.transfers["flag"] == 3                    # miss, invalidating write, miss
    assert run.spins[1] > 900                            # ... although PE 1 polled ~1000 times
    assert run.time == 1000 + 20 + 10


def test_false_sharing_when_cells_share_a_line():
    """PE i bumps its own counter; sharing one line serializes them."""
    def prog(me, p, data):
        for _ in range(10):
            yield fetch_add(("count", me), 1)
    padded = simulate_shared(prog, 4, memory=cell_array("count", 4), model=MODEL)
    packed = simulate_shared(prog, 4, memory=cell_array("count", 4), model=MODEL,
                             line_of=packed_lines(8))
    assert padded.time == 10 + 9 * 1                     # own line: a miss, then hits
    assert packed.time > 3 * padded.time
    assert packed.memory == padded.memory
    assert set(packed.transfers) == {("count", 0)}


def test_the_model_validates_its_numbers():
    with pytest.raises(ValueError, match="miss"):
        CoherenceModel(miss=-1)
    with pytest.raises(TypeError, match="CoherenceModel"):
        simulate_shared(atomic_increment, 1, memory={"c": 0}, model="fast")


def test_access_counts():
    def prog(me, p, data):
        yield read("a")
        yield fetch_add("b", 1)
        yield pause(1)
    run = simulate_shared(prog, 3, memory={"a": 0, "b": 0})
    assert run.accesses == {"a": 3, "b": 3}
    assert run.operations == 9


# -- the trace -------------------------------------------------------------------------

def test_switching_the_trace_off_keeps_the_counts():
    run = simulate_shared(atomic_increment, 4, memory={"c": 0}, trace=False)
    assert run.trace == [] and run.accesses == {"c": 4} and run.memory == {"c": 4}


def test_format_trace_lists_every_kind_of_event():
    def prog(me, p, data):
        yield enter("cs")
        yield read("x")
        yield cas("x", 0, 1)
        yield fetch_add("x", 2)
        yield write(("y", 0), "z")
        yield pause(2)
        yield note("done", 1)
        yield leave("cs")
    text = format_trace(simulate_shared(prog, 1, memory={"x": 0, ("y", 0): 0}).trace)
    for piece in ["enter cs", "read x -> 0", "cas x -> True", "fetch_add x -> 1",
                  "write y[0] := 'z'", "pause 2", "note done = 1", "leave cs"]:
        assert piece in text
