"""Chapter 2's pictures: symbolic operands, recorded runs, values tables and the value player."""
import operator
import sys

import numpy as np
import pytest

from collective_lib import CostModel, catalog, recv, send, simulate
from collective_lib.viz import (HELD_VALUES, PEState, RecordedRun, Span, record_run, span_inputs,
                                span_op, values_table)
from collective_lib.widgets import value_player

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
COMBINING = ("reduce", "allreduce", "prefix_sum", "prefix_sum_and_total")


def entries(operations=COMBINING + ("barrier",)):
    return [e for e in catalog().values() if e.operation in operations]


def symbolic(entry, p, k=2):
    """record_run of an entry on symbolic inputs (m >= p words where it needs them)."""
    params = {"k": k} if "k" in entry.params else {}
    m = max(p, k) if entry.name == "rabenseifner_allreduce" else params.get("k", 1)
    if "op" not in entry.params:
        return record_run(entry, p, m, **params)
    return record_run(entry, p, m, inputs=span_inputs(p, m), op=span_op, **params)


# -- Span -----------------------------------------------------------------------------------

def test_spans_print_as_ranges_in_combination_order():
    assert [str(Span(r)) for r in [(3,), (0, 1, 2), (2, 3, 4, 0, 1), (5, 0), (1, 3, 4)]] == \
        ["3", "0:2", "2:4,0:1", "5,0", "1,3:4"]
    assert Span((0, 1)).in_order and not Span((1, 0)).in_order and not Span((0, 2)).in_order
    assert Span((1, 2)) == Span([1, 2]) != Span((2, 1)) and len({Span((1,)), Span((1,))}) == 1
    with pytest.raises(ValueError, match="at least one rank"):
        Span(())


def test_span_op_is_associative_word_by_word_and_not_commutative():
    a, b, c = span_inputs(3, m=2)
    assert span_op(span_op(a, b), c) == span_op(a, span_op(b, c)) == [Span((0, 1, 2))] * 2
    assert span_op(b, a) != span_op(a, b)
    assert span_op(Span((4,)), Span((5,))) == Span((4, 5))
    with pytest.raises(ValueError, match="1 and 2 words"):
        span_op([Span((0,))], b)
    with pytest.raises(TypeError, match="Span words"):
        span_op(Span((0,)), 3)
    assert span_inputs(2, m=None) == [Span((0,)), Span((1,))]


# -- record_run -----------------------------------------------------------------------------

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


# -- values_table ---------------------------------------------------------------------------

def test_fig_13_3_binomial_reduction_pattern():
    table = values_table(symbolic(catalog()["binomial_reduce"], 8))
    assert table.rows == ["start", "step 1", "step 2", "step 3"]
    assert table.cells[1][0] == ["0:1", "1", "2:3", "3", "4:5", "5", "6:7", "7"]
    assert table.cells[3][0][0] == "0:7"
    assert [m.src for m in table.transfers[3]] == [4]
    assert table.transfers_text(2) == "2->0: 2:3, 6->4: 6:7"


def test_fig_13_7_prefix_and_total():
    run = record_run("hypercube_prefix_sum", 8, inputs=span_inputs(8, m=None), op=span_op)
    table = values_table(run)
    assert table.items == ["x", "m"]
    assert [table.cells[3][0][pe] for pe in range(8)] == ["0"] + [f"0:{i}" for i in range(1, 8)]
    assert table.cells[3][1] == ["0:7"] * 8
    assert table.cells[2][0][6] == "4:6" and table.cells[2][1][6] == "4:7"
    text = str(table).splitlines()
    assert text[0].split() == [f"{w}" for pe in range(8) for w in ("PE", str(pe))]
    assert text[5].split() == ["step", "2", "x", "0", "0:1", "0:2", "0:3", "4", "4:5", "4:6", "4:7"]


def test_fig_13_9_numbers_and_exclusive_prefix():
    tree = catalog()["binary_tree_prefix_sum"]
    run = record_run(tree, 7, inputs=[4, 3, 1, 7, 8, 4, 5], model=CostModel(ports="half-duplex"))
    table = values_table(run)
    assert table.items == ["sum", "prefix"]
    assert table.values[-1][1] == [4, 7, 8, 15, 23, 27, 32]
    assert table.value(len(table.rows) - 1, 3, "sum") == 32
    assert table.value(0, 3, "prefix") is None and table.cells[0][1][3] == "-"


def test_barrier_shows_whom_each_pe_has_heard_from():
    table = values_table(record_run("barrier", 6))
    assert table.items == ["heard"]
    assert table.cells[1][0] == ["0,5", "0:1", "1:2", "2:3", "3:4", "4:5"]
    assert table.cells[-1][0] == ["0:5"] * 6


def test_every_combining_entry_ends_with_the_expected_pattern():
    for entry in entries(COMBINING):
        for p in (1, 3, 4, 8):
            if not entry.valid(p):
                continue
            run = symbolic(entry, p)
            assert run.results == entry.expected(run.inputs, op=span_op)
            table = values_table(run)
            assert len(table.rows) == len(run.step_starts()) + 1
            assert entry.name in HELD_VALUES


def test_watch_by_name_function_list_and_dict():
    run = record_run("hypercube_prefix_sum", 4, inputs=[1, 2, 3, 4], op=operator.add)
    by_name = values_table(run, "m")
    assert by_name.items == [""] and by_name.cells[-1][0] == ["10"] * 4
    doubled = values_table(run, lambda st: 2 * st.locals["x"])
    assert doubled.values[-1][0] == [2, 6, 12, 20]
    both = values_table(run, ["x", "m"], pes=[1, 3])
    assert both.items == ["x", "m"] and both.pes == [1, 3] and both.cells[-1] == [["3", "10"], ["10", "10"]]
    labelled = values_table(run, {"prefix": "x", "done?": "result"}, fmt=lambda v: "*" if v is None else "ok")
    assert labelled.items == ["prefix", "done?"] and labelled.cells[0][1] == ["*"] * 4
    assert labelled.cells[-1][1] == ["ok"] * 4
    assert values_table(run, "no_such_local").cells[-1][0] == ["-"] * 4


def test_values_table_rejects_plain_runs_bad_watches_and_bad_pes():
    plain = catalog()["hypercube_allreduce"].simulate(4)
    with pytest.raises(ValueError, match="record_run"):
        values_table(plain)
    run = record_run("hypercube_allreduce", 4)
    with pytest.raises(ValueError, match="watch must name a local variable"):
        values_table(run, [3])
    with pytest.raises(ValueError, match="PE must be in 0..3"):
        values_table(run, pes=[4])


def test_html_marks_the_highlighted_step_and_spans_sub_rows():
    run = record_run("hypercube_prefix_sum", 4, inputs=span_inputs(4, m=None), op=span_op)
    table = values_table(run)
    html = table.to_html(highlight=2)
    assert html.count("<tr style='background:#fdebd0'>") == 2            # x and m of step 2
    assert "rowspan='2'" in html and "transfers in this step" in html
    assert "transfers in this step" not in table.to_html(transfers=False)
    assert table._repr_html_() == table.to_html()


def test_tables_are_deterministic():
    def table():
        return str(values_table(symbolic(catalog()["binary_tree_reduce"], 7)))
    assert table() == table()


def test_float_values_are_short():
    run = record_run("binomial_reduce", 2, inputs=[np.float32(0.1), np.float32(0.2)])
    assert values_table(run).cells[-1][0][0] == "0.3"


# -- value_player ---------------------------------------------------------------------------

def test_player_offers_every_entry_of_the_operation():
    player = value_player("reduce")
    names = [e.name for e in entries(("reduce",))]
    assert list(player.controls["algorithm"].options) == names
    assert player.controls["step"].max == len(player.values.rows) - 1


def test_player_follows_algorithm_root_and_values():
    player = value_player("reduce", algorithm="binomial_reduce", p=6, root=3)
    assert player.values.cells[-1][0][3] == "3:5,0:2"
    player.controls["algorithm"].value = "binary_tree_reduce"
    assert player.values.cells[-1][0][3] == "0:5"
    player.controls["values"].value = "numbers"
    assert player.values.values[-1][0][3] == [sum(x[0] for x in player.run.inputs)]
    player.controls["p"].value = 2
    assert player.controls["root"].max == 1 and player.run.p == 2


def test_player_step_changes_the_highlight_and_the_transfer_line():
    player = value_player("allreduce", algorithm="hypercube_allreduce", p=4)
    assert "Before any communication" in player.table.value
    player.controls["step"].value = 2
    assert "<b>Step 2</b> transfers: 0-&gt;2: 0:1" in player.table.value
    assert player.table.value.count("background:#fdebd0") == 1


def test_player_explains_an_invalid_p_and_uses_p_words_for_rabenseifner():
    player = value_player("allreduce", algorithm="rabenseifner_allreduce", p=4)
    assert player.m == 4 and "m = 4" in player.info.value
    player.controls["p"].value = 6
    assert player.run is None and "cannot run on p = 6" in player.info.value
    assert player.table.value == "" and "power of two" in player.fallback_html()


def test_player_barrier_hides_the_value_toggle_and_pipelines_take_k():
    player = value_player("barrier", p=5)
    assert player.controls["values"].layout.display == "none"
    assert player.values.cells[-1][0] == ["0:4"] * 5
    player = value_player("reduce", algorithm="pipelined_binary_tree_reduce", p=7, root=3, k=3)
    assert player.m == 3 and player.controls["k"].layout.display is None
    assert player.values.cells[-1][0][3] == "0:6 0:6 0:6"


def test_player_bundle_has_widget_and_whole_table():
    player = value_player("prefix_sum_and_total", p=8)
    bundle = player._repr_mimebundle_()
    assert bundle[WIDGET_VIEW]["model_id"] == player.widget.model_id
    page = bundle["text/html"]
    assert "hypercube_prefix_sum" in page and page.count("<th rowspan='2'") == 4
    assert "background:#fdebd0" not in page and "transfers in this step" in page


def test_player_rejects_bad_arguments():
    with pytest.raises(ValueError, match="not a reduce algorithm"):
        value_player("reduce", algorithm="hypercube_allreduce")
    with pytest.raises(ValueError, match="'pattern' or 'numbers'"):
        value_player(values="letters")
    with pytest.raises(ValueError, match="p must be an integer in 1..16"):
        value_player(p=40)
    with pytest.raises(ValueError, match="no algorithm in the catalog implements"):
        value_player("teleport")
