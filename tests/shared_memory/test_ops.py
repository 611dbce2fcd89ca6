"""The operations a shared-memory PE yields and the cells they touch
(collective_lib.shared_memory.ops)."""
import functools

import numpy as np
import pytest

from collective_lib.ops import shown
from collective_lib.shared_memory import (CAS, FetchAdd, Marker, Pause, Read, Write, cas,
                                          cell_array, check_memory_operation, enter, fetch_add,
                                          leave, note, pause, read, run_with_threads,
                                          simulate_shared, uses_memory, write)

from shared_memory_programs import atomic_increment


# -- operations ------------------------------------------------------------------------

def test_constructors_build_plain_records():
    assert read("x") == Read("x")
    assert write(("a", 2), 5) == Write(("a", 2), 5)
    assert cas("l", 0, 1) == CAS("l", 0, 1)
    assert fetch_add("c") == FetchAdd("c", 1)
    assert pause() == Pause(1)
    assert enter().kind == "enter" and leave("x").label == "x" and note("e", 3).value == 3


BAD_TIMES = [-1, -0.5, float("nan"), float("inf"), float("-inf"), 10 ** 400, "1", None, True]


@pytest.mark.parametrize("bad", BAD_TIMES)
def test_pause_rejects_a_bad_time(bad):
    with pytest.raises(ValueError) as err:
        pause(bad)
    assert str(err.value) == f"time={shown(bad)}: a time must be a finite non-negative number"


@pytest.mark.parametrize("good", [0, 2, 0.5, np.float64(1.5), np.int64(3)])
def test_pause_keeps_a_good_time_as_it_is(good):
    assert pause(good) == Pause(good) and type(pause(good).time) is type(good)


# A record built without the functions above, as a program may yield it (or a student's
# process send it): the rules are checked all the same.
BAD_RECORDS = [
    (Pause(-5), "Pause with time=-5: a time must be a finite non-negative number"),
    (Pause(float("nan")), "Pause with time=nan: a time must be a finite non-negative number"),
    (Pause(float("inf")), "Pause with time=inf: a time must be a finite non-negative number"),
    (Pause(True), "Pause with time=True: a time must be a finite non-negative number"),
    (Marker("exit", "cs", None), "Marker with kind='exit': a marker is 'enter', 'leave' or 'note'"),
    (Marker(["enter"], "cs", None),
     "Marker with kind=['enter']: a marker is 'enter', 'leave' or 'note'"),
]


@pytest.mark.parametrize("op, message", BAD_RECORDS)
def test_check_memory_operation_names_the_record_field_and_value(op, message):
    with pytest.raises(ValueError) as err:
        check_memory_operation(op)
    assert str(err.value) == message


@pytest.mark.parametrize("op, message", [
    (Read(["x"]), "Read with cell=['x']: a cell is named by a string or a (string, integer) pair"),
    (FetchAdd(("a", 1.5), 1),
     "FetchAdd with cell=('a', 1.5): a cell is named by a string or a (string, integer) pair"),
])
def test_check_memory_operation_wants_a_cell_name(op, message):
    with pytest.raises(ValueError) as err:
        check_memory_operation(op)
    assert str(err.value) == message


def test_check_memory_operation_passes_honest_records_unchanged():
    for op in (read("x"), write(("a", 2), [1]), cas("l", 0, 1), fetch_add("c", 2.5), pause(0),
               enter(), leave("x"), note("e", 3)):
        assert check_memory_operation(op) is op
    with pytest.raises(TypeError, match="is not a shared-memory operation"):
        check_memory_operation(("read", "x"))


@pytest.mark.parametrize("op, message", BAD_RECORDS)
@pytest.mark.parametrize("mode", ["timed", "interleaved", "threads"])
def test_every_runner_refuses_a_bad_record_naming_the_pe(op, message, mode):
    def prog(me, p, data):
        if me == 1:
            yield op
        yield read("x")
        return me
    run = {"timed": simulate_shared, "interleaved": functools.partial(simulate_shared, seed=3),
           "threads": run_with_threads}[mode]
    with pytest.raises(ValueError) as err:
        run(prog, 2, memory={"x": 0})
    assert str(err.value) == f"PE 1 yielded {message}"


def test_a_pause_of_a_numpy_number_counts_as_its_value():
    def prog(me, p, data):
        yield Pause(np.float64(2.5))
        yield Pause(np.int64(2))
    assert simulate_shared(prog, 1).time == 4.5


def test_each_operation_returns_what_it_says():
    def prog(me, p, data):
        a = yield read("x")
        yield write("x", 7)
        ok = yield cas("x", 7, 8)
        bad = yield cas("x", 7, 9)
        old = yield fetch_add("x", 10)
        yield pause(3)
        return a, ok, bad, old, (yield read("x"))
    run = simulate_shared(prog, 1, memory={"x": 1})
    assert run.results == [(1, True, False, 8, 18)]
    assert run.memory == {"x": 18}
    assert [e.op for e in run.trace] == ["read", "write", "cas", "cas", "fetch_add", "pause",
                                          "read"]


def test_markers_cost_nothing_and_appear_in_the_trace():
    def prog(me, p, data):
        yield enter("cs")
        yield note("here", me)
        yield leave("cs")
        yield pause(5)
    run = simulate_shared(prog, 2)
    assert run.time == 5 and run.operations == 2
    assert run.notes("here") == [(0, 0, 0), (0, 1, 1)]
    assert [e.op for e in run.events(pe=0)] == ["enter", "note", "leave", "pause"]


# -- memory declarations ---------------------------------------------------------------

def test_cell_array_and_tuple_cells():
    def prog(me, p, data):
        yield write(("slot", me), me * 10)
    run = simulate_shared(prog, 3, memory=cell_array("slot", 3))
    assert run.memory == {("slot", 0): 0, ("slot", 1): 10, ("slot", 2): 20}


def test_memory_may_be_a_callable_of_p_and_the_params():
    def prog(me, p, data, start):
        return (yield read(("a", me)))
    run = simulate_shared(prog, 3, memory=lambda p, start: cell_array("a", p, start), start=4)
    assert run.results == [4, 4, 4]


def test_a_program_can_carry_its_memory_layout():
    @uses_memory(lambda p, **_: {"c": 100})
    def prog(me, p, data):
        return (yield fetch_add("c", 1))
    assert simulate_shared(prog, 2).memory == {"c": 102}


@pytest.mark.parametrize("mode", [{}, {"seed": 1}, {"schedule": [0]}])
def test_an_unknown_cell_raises_a_value_error_naming_it(mode):
    def prog(me, p, data):
        yield read("lcok")
    with pytest.raises(ValueError, match=r"PE 0 accessed the cell 'lcok'.*declared: 'lock'"):
        simulate_shared(prog, 2, memory={"lock": 0}, **mode)


def test_an_unknown_cell_is_reported_by_the_threads_backend_too():
    def prog(me, p, data):
        yield write(("x", 5), 1)
    with pytest.raises(ValueError, match=r"cell \('x', 5\)") as info:
        run_with_threads(prog, 2, memory=cell_array("x", 2))
    assert any("PE" in n for n in info.value.__notes__)


def test_bad_declarations_and_programs_fail_early():
    with pytest.raises(ValueError, match="a cell is named by"):
        simulate_shared(atomic_increment, 1, memory={3: 0})
    with pytest.raises(TypeError, match="memory must be"):
        simulate_shared(atomic_increment, 1, memory=[("c", 0)])
    with pytest.raises(TypeError, match="not a generator"):
        simulate_shared(lambda me, p, d: 1, 2)
    with pytest.raises(ValueError, match="p must be"):
        simulate_shared(atomic_increment, 0, memory={"c": 0})

    def yields_junk(me, p, data):
        yield "read c"
    with pytest.raises(TypeError, match="PE 0 yielded 'read c'"):
        simulate_shared(yields_junk, 1)
