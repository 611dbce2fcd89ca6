"""The chapters' summary tables come from the catalog (collective_lib.summary)."""
import dataclasses
from types import MappingProxyType

import pytest

from collective_lib import catalog
from collective_lib import summary
from collective_lib.summary import summary_table, valid_p_label
from collective_lib.viz import optimal_params

OPERATIONS = sorted({entry.operation for entry in catalog().values()})


@pytest.mark.parametrize("operation", OPERATIONS)
def test_every_entry_of_an_operation_appears_in_catalog_order(operation):
    table = summary_table(operation, p=16, m=64)
    assert table.names() == [e.name for e in catalog().values() if e.operation == operation]
    assert {row.operation for row in table.rows} == {operation}


@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize("p, m", [(1, 1), (7, 1000), (16, 64), (64, 10_000)])
def test_times_are_the_entries_predictions(operation, p, m):
    table = summary_table(operation, p=p, m=m, ts=3.0, tw=0.5)
    for row in table.rows:
        entry = catalog()[row.name]
        if not entry.valid(p):
            assert row.time is None and row.params == {}
            continue
        model = entry.default_model(3.0, 0.5)
        params = optimal_params(entry, p, m, model)
        assert row.params == params
        assert row.time == entry.predict(p, m, model, **params)
        assert row.relation == ("=" if entry.exact else "<=")
        assert row.ports == entry.ports and row.source == entry.source


def test_a_newly_registered_algorithm_appears_unasked(monkeypatch):
    real = catalog()
    made_up = dataclasses.replace(real["binomial_broadcast"], name="made_up_broadcast",
                                  source="A. Student, 2026")
    monkeypatch.setattr(summary, "catalog",
                        lambda: MappingProxyType({**real, made_up.name: made_up}))
    table = summary_table("broadcast", p=8, m=10)
    assert table.names()[-1] == "made_up_broadcast"
    row = table.row("made_up_broadcast")
    assert row.time == made_up.predict(8, 10, made_up.default_model(100, 1))
    assert row.source == "A. Student, 2026"
    for text in (table._repr_html_(), table.to_markdown(), str(table)):
        assert "made_up_broadcast" in text and "A. Student, 2026" in text


def test_simulated_times_and_results_come_from_runs():
    table = summary_table(("allgather", "alltoall"), p=8, m=5, simulate=True)
    for row in table.rows:
        entry = catalog()[row.name]
        if not entry.valid(8):
            assert row.simulated is None and row.correct is None
            continue
        inputs = entry.make_inputs(8, 5, 0, **row.params)
        run = entry.simulate(8, 5, inputs=inputs, model=entry.default_model(100, 1), trace=False,
                             **row.params)
        assert row.simulated == run.time and row.correct is True
        assert (row.simulated == row.time) if entry.exact else (row.simulated <= row.time)
    assert "simulated" in table.header() and "correct" in table.header()


def test_the_closed_form_is_the_cost_docstring():
    row = summary_table("broadcast", p=8, m=1).row("binomial_broadcast")
    assert row.formula.startswith("ceil(log2 p)(ts + tw m)")
    assert "\n" not in row.formula


@pytest.mark.parametrize("name, label", [("binomial_broadcast", "any"),
                                         ("hypercube_broadcast", "powers of 2"),
                                         ("all_to_all_bc_mesh", "squares")])
def test_valid_p_labels(name, label):
    assert valid_p_label(catalog()[name]) == label


def test_valid_p_label_lists_other_sets():
    odd = dataclasses.replace(catalog()["binomial_broadcast"])
    object.__setattr__(odd, "valid", lambda p: p % 3 == 0)
    assert valid_p_label(odd) == "3, 6, 9, 12, 15, ..."


def test_invalid_p_is_listed_without_a_time():
    row = summary_table("broadcast", p=6, m=1).row("hypercube_broadcast")
    assert row.time is None and row.network == "Hypercube"
    assert "-" in str(summary_table("broadcast", p=6, m=1))


def test_a_size_the_algorithm_refuses_is_listed_without_a_time():
    # Rabenseifner cuts the message into one block per PE: m = 4 words cannot go to 8 PEs.
    row = summary_table("allreduce", p=8, m=4).row("rabenseifner_allreduce")
    assert row.time is None
    assert summary_table("allreduce", p=8, m=8).row("rabenseifner_allreduce").time is not None


def test_renderings_hold_every_row_and_escape_html():
    table = summary_table("alltoallv", p=4, m=8)
    html = table._repr_html_()
    assert html.startswith("<table>") and html.count("<tr>") == len(table.rows) + 1
    assert "&lt;=" in html and "<=" not in html.replace("<td>", "").replace("</td>", "")
    markdown = table.to_markdown().splitlines()
    assert len(markdown) == len(table.rows) + 2
    assert all(line.count(" | ") == len(table.header()) - 1 for line in markdown[2:])
    assert repr(table) == str(table)


def test_unknown_names_raise_naming_them():
    with pytest.raises(ValueError, match="'gossip'"):
        summary_table(["broadcast", "gossip"], p=4, m=1)
    with pytest.raises(ValueError, match="'nope' is not in this table"):
        summary_table("broadcast", p=4, m=1).row("nope")
