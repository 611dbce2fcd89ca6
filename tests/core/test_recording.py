"""record_run: recording what every PE holds changes nothing about the run."""
import sys

import pytest

from collective_lib import CostModel, catalog, recv, send
from collective_lib.recording import PEState, RecordedRun, record_run
from collective_lib.spans import span_inputs, span_op
from collective_lib.viz import values_table

COMBINING = ("reduce", "allreduce", "prefix_sum", "prefix_sum_and_total")


def entries(operations=COMBINING + ("barrier",)):
    return [e for e in catalog().values() if e.operation in operations]


@pytest.mark.parametrize("entry", entries(), ids=lambda e: e.name)
def test_recording_changes_nothing_and_ends_every_pe_at_its_finish_time(entry):
    for p in (1, 2, 5, 8):
        if not entry.valid(p):
            continue
        params = {"k": 2} if "k" in entry.params else {}
        m = max(p, 2)
        model = CostModel(ts=2.0, tw=0.5, ports=entry.ports)
        plain = entry.simulate(p, m, model=model, seed=3, **params)
        recorded = record_run(entry, p, m, model=model, seed=3, **params)
        assert isinstance(recorded, RecordedRun) and recorded.name == entry.name
        assert recorded.time == plain.time and recorded.results == plain.results
        assert [(x.src, x.dst, x.start, x.end) for x in recorded.messages] == \
            [(x.src, x.dst, x.start, x.end) for x in plain.messages]
        for pe in range(p):
            states = recorded.states[pe]
            assert all(isinstance(st, PEState) for st in states)
            assert [st.time for st in states] == sorted(st.time for st in states)
            assert states[-1].done and states[-1].time == recorded.finish_times[pe]
            assert states[-1].result is recorded.results[pe] or states[-1].result == recorded.results[pe]
            assert not any(st.done for st in states[:-1])


def test_states_are_copies_and_the_final_locals_are_caught():
    # Rabenseifner changes its vector in place; the start state must still show the input.
    run = record_run("rabenseifner_allreduce", 4, inputs=[[i] * 4 for i in range(4)])
    assert run.states[0][0].locals["vector"] == [0, 0, 0, 0]
    assert run.states[0][-1].locals["vector"] == [6, 6, 6, 6]
    # the root's last combination happens after its last operation, just before return
    run = record_run("binomial_reduce", 8, inputs=[[i] for i in range(8)])
    assert run.states[0][-1].locals["x"] == [28] and run.state(0, 3.0).locals["x"] == [28]
    assert run.state(0, 2.0).locals["x"] == [6]


def test_yield_from_chains_show_the_inner_generator():
    run = record_run("reduce_broadcast_allreduce", 4, inputs=span_inputs(4), op=span_op)
    table = values_table(run)
    assert table.column(3) == ["3", "-", "-", "-", "0:3"]
    assert table.column(0) == ["0", "0:1", "0:3", "0:3", "0:3"]


def test_recording_restores_an_active_trace_function():
    calls = []

    def tracer(frame, event, arg):
        calls.append(event)
        return None

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        record_run("hypercube_allreduce", 4)
        assert sys.gettrace() is tracer
    finally:
        sys.settrace(old)


def test_a_bare_program_needs_its_inputs_and_must_be_a_generator():
    def relay(me, p, data):
        if me:
            data = yield recv(me - 1)
        if me + 1 < p:
            yield send(me + 1, data)
        return data

    run = record_run(relay, 3, inputs=["a", None, None])
    assert run.results == ["a"] * 3 and run.name == "relay"
    assert values_table(run).column(2) == ["-", "-", "a"]       # received, then the result

    def not_a_generator(me, p, data):
        return data

    with pytest.raises(TypeError, match="not a generator function"):
        record_run(not_a_generator, 2)
    with pytest.raises(ValueError, match="unknown algorithm 'nope'"):
        record_run("nope", 2)
