"""The shared-memory machine: operations, the coherence cost model, the schedulers,
the model checker, real threads and the error messages."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from collective_lib.errors import OperationLimitError
from collective_lib.shared_memory import (CAS, CoherenceModel, Event, FetchAdd, Pause, Read,
                                          Write, cas, cell_array, enter, exclusion_violation,
                                          explore_interleavings, fetch_add, find_violation,
                                          format_trace, leave, mutual_exclusion, note,
                                          packed_lines, pause, read, run_with_threads,
                                          simulate_shared, uses_memory, write)

MODEL = CoherenceModel(hit=1, miss=10, contended=20)


def racy_increment(me, p, data):
    """Read, then write: two PEs can both read the old value (a lost update)."""
    x = yield read("c")
    yield write("c", x + 1)


def atomic_increment(me, p, data):
    return (yield fetch_add("c", 1))


def wait_for_flag(me, p, data):
    while (yield read("flag")) == 0:
        yield pause(1)


def final_count_ok(run):
    return not run.complete or run.memory["c"] == run.p


# -- operations ---------------------------------------------------------------------------

def test_constructors_build_plain_records():
    assert read("x") == Read("x")
    assert write(("a", 2), 5) == Write(("a", 2), 5)
    assert cas("l", 0, 1) == CAS("l", 0, 1)
    assert fetch_add("c") == FetchAdd("c", 1)
    assert pause() == Pause(1)
    assert enter().kind == "enter" and leave("x").label == "x" and note("e", 3).value == 3


@pytest.mark.parametrize("bad", [-1, "1", None, True])
def test_pause_rejects_a_bad_time(bad):
    with pytest.raises(ValueError, match="pause time"):
        pause(bad)


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


# -- memory declarations ------------------------------------------------------------------

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


# -- the coherence cost model --------------------------------------------------------------

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


# -- schedulers ----------------------------------------------------------------------------

def test_timed_runs_are_deterministic():
    a = simulate_shared(racy_increment, 5, memory={"c": 0})
    b = simulate_shared(racy_increment, 5, memory={"c": 0})
    assert a.trace == b.trace and a.schedule == b.schedule


def test_a_seed_fixes_the_interleaving_and_different_seeds_explore_others():
    runs = [simulate_shared(racy_increment, 3, memory={"c": 0}, seed=s) for s in range(30)]
    again = [simulate_shared(racy_increment, 3, memory={"c": 0}, seed=s) for s in range(30)]
    assert [r.trace for r in runs] == [r.trace for r in again]
    assert len({tuple(r.schedule) for r in runs}) > 10
    assert {r.memory["c"] for r in runs} == {1, 2, 3}     # lost updates do happen


def test_interleaving_time_counts_steps():
    run = simulate_shared(racy_increment, 3, memory={"c": 0}, seed=5)
    assert run.time == run.operations == 6
    assert [e.time for e in run.trace] == list(range(6))
    assert run.mode == "interleaved" and run.seed == 5


def test_a_schedule_replays_a_run_exactly():
    run = simulate_shared(racy_increment, 4, memory={"c": 0}, seed=11)
    replay = simulate_shared(racy_increment, 4, memory={"c": 0}, schedule=run.schedule)
    assert replay.trace == run.trace and replay.results == run.results


def test_the_timed_order_replayed_as_an_interleaving_gives_the_same_values():
    timed = simulate_shared(racy_increment, 6, memory={"c": 0})
    replay = simulate_shared(racy_increment, 6, memory={"c": 0}, schedule=timed.schedule)
    assert replay.memory == timed.memory
    assert [(e.pe, e.op, e.value) for e in replay.trace] == \
        [(e.pe, e.op, e.value) for e in timed.trace]


def test_a_short_schedule_is_continued_round_robin_or_by_the_seed():
    run = simulate_shared(racy_increment, 2, memory={"c": 0}, schedule=[1])
    assert run.schedule == [1, 0, 1, 0]
    seeded = simulate_shared(racy_increment, 3, memory={"c": 0}, schedule=[2, 2], seed=4)
    assert seeded.schedule[:2] == [2, 2] and len(seeded.schedule) == 6


def test_bad_schedules_are_named():
    with pytest.raises(ValueError, match="ranks in 0..1"):
        simulate_shared(racy_increment, 2, memory={"c": 0}, schedule=[0, 2])
    with pytest.raises(ValueError, match="names PE 0 at step 2, but PE 0 has returned"):
        simulate_shared(racy_increment, 2, memory={"c": 0}, schedule=[0, 0, 0])


def test_stop_after_returns_a_partial_run():
    run = simulate_shared(racy_increment, 2, memory={"c": 0}, schedule=[0, 1, 0, 1],
                          stop_after=2)
    assert not run.complete and run.operations == 2 and run.results == [None, None]
    with pytest.raises(ValueError, match="stop_after"):
        simulate_shared(racy_increment, 2, memory={"c": 0}, stop_after=2)


def test_switching_the_trace_off_keeps_the_counts():
    run = simulate_shared(atomic_increment, 4, memory={"c": 0}, trace=False)
    assert run.trace == [] and run.accesses == {"c": 4} and run.memory == {"c": 4}


@settings(max_examples=40, deadline=None)
@given(p=st.integers(1, 6), k=st.integers(1, 4), seed=st.integers(0, 10**6))
def test_fetch_add_never_loses_an_update(p, k, seed):
    def prog(me, p, data):
        olds = []
        for _ in range(k):
            olds.append((yield fetch_add("c", 1)))
        return olds
    run = simulate_shared(prog, p, memory={"c": 0}, seed=seed)
    assert run.memory["c"] == p * k
    assert sorted(x for r in run.results for x in r) == list(range(p * k))


# -- endless programs ------------------------------------------------------------------------

@pytest.mark.parametrize("mode", [{}, {"seed": 2}])
def test_spinning_forever_hits_the_operation_limit_with_a_clear_message(mode):
    with pytest.raises(OperationLimitError) as info:
        simulate_shared(wait_for_flag, 3, memory={"flag": 0}, max_ops=600, **mode)
    text = str(info.value)
    assert "max_ops=600" in text and "3 PE(s) have not returned" in text
    for pe in range(3):
        assert f"PE {pe}: spins on read(flag) seeing 0" in text
    assert "livelock or deadlock" in text


def test_the_message_names_only_the_pes_still_running():
    def prog(me, p, data):
        if me == 0:
            yield write("flag", 0)
        else:
            yield from wait_for_flag(me, p, data)
    with pytest.raises(OperationLimitError, match=r"2 PE\(s\)") as info:
        simulate_shared(prog, 3, memory={"flag": 0}, max_ops=300)
    assert "PE 0" not in str(info.value)


def test_threads_stop_at_the_operation_limit():
    with pytest.raises(OperationLimitError, match=r"PE \d: spins on read\(flag\)"):
        run_with_threads(wait_for_flag, 2, memory={"flag": 0}, max_ops=500)


def test_max_ops_is_validated():
    with pytest.raises(ValueError, match="max_ops"):
        simulate_shared(atomic_increment, 1, memory={"c": 0}, max_ops=0)


# -- properties and the model checker -------------------------------------------------------

def test_exclusion_violation_finds_the_second_entry():
    t = [Event(0, 0, "enter", "cs", None), Event(1, 0, "leave", "cs", None),
         Event(2, 1, "enter", "read", None), Event(3, 2, "enter", "read", None),
         Event(4, 0, "enter", "cs", None)]
    assert exclusion_violation(t[:4]) is None                # readers may share
    assert exclusion_violation(t) == t[4]                    # a writer may not join them
    assert exclusion_violation([t[0], Event(1, 1, "enter", "read", None)]).pe == 1


def test_find_violation_returns_a_replayable_interleaving():
    v = find_violation(racy_increment, 2, final_count_ok, memory={"c": 0}, seeds=range(50))
    assert v is not None and v.run.memory["c"] == 1
    replay = simulate_shared(racy_increment, 2, memory={"c": 0}, schedule=v.schedule)
    assert replay.memory["c"] == 1
    assert "read c -> 0" in v.text and str(v).startswith("the check failed (seed")


def test_find_violation_returns_none_when_every_interleaving_is_fine():
    assert find_violation(atomic_increment, 3, final_count_ok, memory={"c": 0}) is None


def test_find_violation_shrinks_to_the_first_failing_steps():
    def prog(me, p, data):
        x = yield read("lock")
        if x == 0:
            yield write("lock", 1)
            yield enter("cs")
            for _ in range(20):
                yield pause(1)
            yield leave("cs")
    v = find_violation(prog, 2, mutual_exclusion, memory={"lock": 0})
    assert len(v.schedule) == 4 and sorted(v.schedule) == [0, 0, 1, 1]   # read, read, write, write
    assert not v.run.complete and exclusion_violation(v.trace) is not None


def test_exhaustive_search_finds_the_shortest_bad_interleaving():
    v = explore_interleavings(racy_increment, 2, final_count_ok, memory={"c": 0})
    assert v is not None and len(v.schedule) == 4 and v.run.memory["c"] == 1
    assert explore_interleavings(atomic_increment, 3, final_count_ok, memory={"c": 0}) is None


def test_exhaustive_search_reports_a_livelock():
    def prog(me, p, data):                 # each waits for the other's flag first
        while (yield read(("flag", 1 - me))) == 0:
            yield pause(1)
        yield write(("flag", me), 1)
    v = explore_interleavings(prog, 2, lambda run: True, memory=cell_array("flag", 2))
    assert v is not None and v.reason.startswith("livelock")
    assert "PE 0 spins on read(flag[1])" in v.reason


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


# -- real threads ----------------------------------------------------------------------------

def test_threads_run_the_same_programs():
    run = run_with_threads(atomic_increment, 6, memory={"c": 0})
    assert sorted(run.results) == list(range(6)) and run.memory == {"c": 6}
    assert run.mode == "threads" and run.operations == 6


def test_an_exception_in_a_thread_is_reraised_with_the_pe():
    def prog(me, p, data):
        yield read("c")
        if me == 1:
            raise RuntimeError("boom")
    with pytest.raises(RuntimeError, match="boom") as info:
        run_with_threads(prog, 3, memory={"c": 0})
    assert "raised by PE 1 of 3 (thread)" in info.value.__notes__


def test_threads_time_out_and_name_the_pes(capsys):
    with pytest.raises(TimeoutError, match=r"PE 0: spins on read\(flag\)"):
        run_with_threads(wait_for_flag, 2, memory={"flag": 0}, timeout=0.2, max_ops=10**9)
    assert capsys.readouterr().err == ""
