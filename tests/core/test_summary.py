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
    assert "simulated" in table.header() and "correct" not in table.header()


def test_a_wrong_result_is_said_in_its_cell_not_in_a_column(monkeypatch):
    def returns_nothing(me, p, data, root=0):
        return None
        yield                                     # a program that sends nothing

    real = catalog()
    wrong = dataclasses.replace(real["naive_broadcast"], name="wrong_broadcast",
                                program=returns_nothing)
    monkeypatch.setattr(summary, "catalog",
                        lambda: MappingProxyType({**real, wrong.name: wrong}))
    table = summary_table("broadcast", p=4, m=3, simulate=True)
    assert table.row("wrong_broadcast").correct is False
    assert [cells[table.header().index("simulated")] for cells in table.cells()
            if cells[0] == "wrong_broadcast"] == ["0 (wrong results)"]
    assert sum("(wrong results)" in cell for cells in table.cells() for cell in cells) == 1
    assert table._repr_html_().count("(wrong results)") == 1


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
    assert html.count("<tr>") == len(table.rows) + 1
    assert "&le;" in html and "<=" not in html
    markdown = table.to_markdown().splitlines()
    assert len(markdown) == len(table.rows) + 2
    assert all(line.count(" | ") == len(table.header()) - 1 for line in markdown[2:])
    assert repr(table) == str(table)


def test_the_html_table_typesets_links_groups_and_scrolls_in_its_own_box():
    table = summary_table(("broadcast", "reduce"), p=64, m=1000)
    html = table._repr_html_()
    # its own box, which the keyboard reaches (WCAG: a scrolling region takes the focus)
    label = html.split('<p id="', 1)[1].split('"', 1)[0]
    assert html.startswith(f'<p id="{label}">Closed-form times for p = 64')
    assert (f'<div class="collective-summary" role="region" tabindex="0" '
            f'aria-labelledby="{label}" style="overflow-x: auto">') in html
    assert f'<table class="mathjax_process" aria-labelledby="{label}">' in html
    for row in table.rows:                        # the catalog's TeX, for MathJax
        assert row.tex and f"\\({row.tex}\\)" in html.replace("&amp;", "&")
        assert f"<code>{row.name}</code>" in html
    # one group heading per operation, and no operation column in the rows
    assert html.count('scope="colgroup"') == 2 and "operation" not in html.split("<tbody>")[0]
    assert table.header()[0] == "operation" and summary_table("reduce", 8, 8).header()[0] \
        == "algorithm"
    # every work the catalog links is linked in its row
    linked = summary_table(("broadcast", "reduce", "allgather", "alltoall"), 8, 8)
    html = linked._repr_html_()
    for row in linked.rows:
        for work, link in summary.WORK_LINKS.items():
            assert (work in row.source) <= (f'<a href="{link}">{work}</a>' in html), work


def test_the_links_of_the_works_are_those_of_the_bibliography(repo_root):
    import re
    bib = (repo_root / "book" / "references.bib").read_text(encoding="utf-8")
    addresses = {f"https://doi.org/{doi}" for doi in re.findall(r"doi\s*=\s*\{([^}]*)\}", bib)}
    addresses |= set(re.findall(r"url\s*=\s*\{([^}]*)\}", bib))
    assert set(summary.WORK_LINKS.values()) <= addresses
    named = {work for entry in catalog().values() for work in summary.WORK_LINKS
             if work in entry.source}
    assert named == set(summary.WORK_LINKS), "a link no source uses"


def test_unknown_names_raise_naming_them():
    with pytest.raises(ValueError, match="'gossip'"):
        summary_table(["broadcast", "gossip"], p=4, m=1)
    with pytest.raises(ValueError, match="'nope' is not in this table"):
        summary_table("broadcast", p=4, m=1).row("nope")


def test_the_summary_needs_no_drawing_library():
    import subprocess
    import sys
    code = ("import sys, collective_lib.summary\n"
            "assert 'matplotlib' not in sys.modules, 'summary imports matplotlib'")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.parametrize("simulate", [False, True])
def test_the_closed_forms_cells_are_marked_for_paper(simulate):
    # print.css gives each closed form a line of its own by this class, whatever the columns
    from bs4 import BeautifulSoup

    table = summary_table(("broadcast", "reduce"), p=8, m=4, simulate=simulate)
    soup = BeautifulSoup(table._repr_html_(), "html.parser")
    assert [th.get_text() for th in soup.select("thead .closed-form")] == ["closed form"]
    rows = soup.select("tbody tr:not(:has(th))")
    assert len(rows) == len(table.rows)
    for row, cell in zip(table.rows, (tr.select(".closed-form") for tr in rows)):
        assert len(cell) == 1 and cell[0].get_text() == f"\\({row.tex}\\)"
