"""Tables of who holds what: holdings of a broadcast and values of a recorded run."""
import operator

import numpy as np
import pytest

from collective_lib import CostModel, catalog
from collective_lib.recording import record_run
from collective_lib.spans import Span, span_inputs, span_op
from collective_lib.viz import holdings_table, values_table

COMBINING = ("reduce", "allreduce", "prefix_sum", "prefix_sum_and_total")


def entries(operations):
    return [e for e in catalog().values() if e.operation in operations]


def symbolic(entry, p, k=2):
    """record_run of an entry on symbolic inputs (m >= p words where it needs them)."""
    params = {"k": k} if "k" in entry.params else {}
    m = params.get("k", 1)
    if not entry.accepts(p, m, **params):          # one block per PE: m >= p
        m = max(p, k)
    if "op" not in entry.params:
        return record_run(entry, p, m, **params)
    return record_run(entry, p, m, inputs=span_inputs(p, m), op=span_op, **params)


# -- holdings ------------------------------------------------------------------------------

def test_holdings_of_a_binomial_broadcast():
    run = catalog()["binomial_broadcast"].simulate(p=8)
    assert holdings_table(run) == [
        (1, 0.0, [0, 4]),
        (2, 1.0, [0, 2, 4, 6]),
        (3, 2.0, [0, 1, 2, 3, 4, 5, 6, 7]),
    ]


def test_holdings_from_another_root_and_for_chosen_pes():
    run = catalog()["hypercube_broadcast"].simulate(p=8, root=3)
    rows = holdings_table(run, pes=[0, 3, 7])
    assert [r.holders for r in rows] == [[3, 7], [3, 7], [0, 3, 7]]
    assert [r.step for r in rows] == [1, 2, 3]


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


def _combined(value):
    """Each Span as the set of ranks it combines: an entry that needs a commutative operator
    may combine them out of rank order."""
    if isinstance(value, Span):
        return frozenset(value.ranks)
    if isinstance(value, (list, tuple)):
        return [_combined(v) for v in value]
    return value


def test_every_combining_entry_ends_with_the_expected_pattern():
    for entry in entries(COMBINING):
        for p in (1, 3, 4, 8):
            if not entry.valid(p):
                continue
            run = symbolic(entry, p)
            want = entry.expected(run.inputs, op=span_op)
            if entry.requires_commutative:
                assert _combined(run.results) == _combined(want), (entry.name, p)
            else:
                assert run.results == want, (entry.name, p)
            table = values_table(run)
            assert len(table.rows) == len(run.step_starts()) + 1
            assert entry.held is not None and run.held is entry.held


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


def test_the_highlighted_step_is_marked_by_more_than_its_colour():
    # In a live value player the current step's row differed from the others only by a
    # pale background: lost in grey, or to a reader who does not see the colour.
    run = record_run("hypercube_prefix_sum", 4, inputs=span_inputs(4, m=None), op=span_op)
    html = values_table(run).to_html(highlight=2)
    assert html.count("aria-current='step'>\u25b6\u00a0step 2<") == 1
    # The other rows keep the mark's room, hidden, so the columns stay where they are.
    assert html.count("<span style='visibility:hidden' aria-hidden='true'>\u25b6") == 2
    assert "\u25b6" not in values_table(run).to_html()


def test_tables_are_deterministic():
    def table():
        return str(values_table(symbolic(catalog()["binary_tree_reduce"], 7)))
    assert table() == table()


def test_float_values_are_short():
    run = record_run("binomial_reduce", 2, inputs=[np.float32(0.1), np.float32(0.2)])
    assert values_table(run).cells[-1][0][0] == "0.3"
