"""The regenerated step tables against the paper's (Mathur and Johnsson 1993, Table 1, Figs. 1, 5-21).

Every regenerated figure equals the paper's table up to the documented
differences, and the differences are the ones explained in the data file.
"""
import pytest

from collective_lib.algorithms.cm200 import d_cycles_reduce
from collective_lib.cm200 import figures
from collective_lib.cm200.figures import (FIGURE_20_EXAMPLE, FIGURES, compare,
                                          documented_differences, figure_20_quantities,
                                          figure_20_sizes, format_table, paper_figure,
                                          regenerate)
from collective_lib.cm200.schedules import block_bounds, memory_partition

#: Chapter 6's claims about the regenerated step tables (tests/notebooks/test_prose_claims.py;
#: the rest of the chapter's claims are registered in test_cm200_book.py).
PROSE_CLAIMS = {
    "holds that component of every node exactly once":
        "test_figure_1_names_a_component_only_for_one_term_of_every_node",
    "the printed block is never the receiver's":
        "notebooks/test_source_slips.py::test_mj_receiving_block",
    "gives the paper's cell exactly":
        "notebooks/test_source_slips.py::test_mj_figure_cells",
}


@pytest.mark.parametrize("key", sorted(FIGURES))
def test_regenerated_figure_equals_the_paper(key):
    differences = compare(key)
    assert differences == documented_differences(key), format_table(regenerate(key))
    for entry in paper_figure(key).get("differences", []):
        assert len(entry["explanation"]) > 40, entry


def test_the_documented_differences_are_few_and_explained():
    counts = {key: len(documented_differences(key)) for key in FIGURES}
    assert counts == {**{key: 0 for key in FIGURES}, "figure_10": 3, "figure_11": 48,
                      "figure_17": 5, "figure_18": 1, "figure_19": 7}


def test_figure_11_step_3_lacks_only_the_block_digit():
    for _, _, paper, ours in documented_differences("figure_11"):
        assert paper == ours[0] + ours[2]


def test_figure_10_step_3_misnumbers_memory():
    assert [(p, o) for _, column, p, o in documented_differences("figure_10")] == \
        [("4", "3"), ("5", "4"), ("6", "5")]


def test_reduction_figures_have_one_sender_and_receiver_per_row():
    for u in range(7):
        for row in regenerate(f"figure_{13 + u}")["rows"]:
            cells = row[1:9]
            assert cells.count("●") == 1 and cells.count("+") == 1
            assert cells.count("○") == u, "after step u, u nodes have already sent"


def test_paper_layout_when_printed():
    text = format_table(regenerate("figure_8"))
    lines = text.splitlines()
    assert lines[0].split() == ["Step", "Mem", "P0", "P1", "P2", "P3", "P4", "P5", "P6", "P7",
                                "Dim"]
    assert lines[1].split() == ["Init.", "0", "00", "01", "02", "03", "04", "05", "06", "07"]
    assert lines[4].split() == ["0", "0", "01", "00", "03", "02", "05", "04", "07", "06", "0"]
    with pytest.raises(ValueError, match="figure_99"):
        regenerate("figure_99")


def test_figure_21_is_the_butterfly():
    rows = regenerate("figure_21")["rows"]
    assert rows[1][1] == "00+01 10+12 20+24" and rows[-1][-1] == "2 0 1"
    assert all(cell == "00 - 07 10 - 17 20 - 27" for cell in rows[-1][1:9])


def test_figure_1_is_the_reduction_into_consecutive_blocks():
    rows = regenerate("figure_1")["rows"]
    assert [row[0] for row in rows] == ["Before reduction"] + [""] * 7 + ["After reduction", ""]
    assert all(row[1:] == [str(c)] * 4 for c, row in enumerate(rows[:8]))
    assert [row[1:] for row in rows[8:]] == [["0", "2", "4", "6"], ["1", "3", "5", "7"]]


def _spoiled(change):
    """The d-cycles reduction with every result changed by ``change``."""
    def program(me, p, data, **params):
        result = yield from d_cycles_reduce(me, p, data, **params)
        return [change(total) for total in result]
    return program


@pytest.mark.parametrize("change", [
    lambda total: total + "+" + total.split("+")[0],            # a node's term twice
    lambda total: total.rsplit("+", 1)[0],                      # a node's term missing
    lambda total: total.replace(".3", ".2", 1)],                # node 2's term, not node 3's
    ids=["twice", "missing", "wrong node"])
def test_figure_1_names_a_component_only_for_one_term_of_every_node(monkeypatch, change):
    """Fig. 1 prints a sum as its component's number only if it has each node's term once."""
    after = [row[1:] for row in regenerate("figure_1")["rows"][8:]]
    assert after == [["0", "2", "4", "6"], ["1", "3", "5", "7"]]
    monkeypatch.setattr(figures, "d_cycles_reduce", _spoiled(change))
    spoiled = [row[1:] for row in regenerate("figure_1")["rows"][8:]]
    assert all("+" in cell for row in spoiled for cell in row), spoiled


@pytest.mark.parametrize("d", range(1, 7))
def test_figure_20s_rule_is_the_librarys_layout(d):
    """Fig. 20 evaluated with the report's quantities equals memory_partition, M = 1 .. 600."""
    for M in range(1, 601):
        partition = memory_partition(M, d)
        sizes = [[stop - start for start, stop in block] for block in partition]
        assert sizes == figure_20_sizes(M, d), (M, d)
        assert [x for block in partition for start, stop in block for x in range(start, stop)] \
            == list(range(M))


def test_block_alpha_is_empty_exactly_when_the_block_size_divides_m():
    """§4.2.4 promises alpha + 1 nonempty blocks; with ceil(M/2^d) | M there are alpha."""
    for d in range(1, 6):
        for M in range(1, 300):
            q = figure_20_quantities(M, d)
            nonempty = sum(1 for start, stop in block_bounds(M, d) if stop > start)
            assert q["alpha"] * q["block"] + q["rest"] == M
            assert nonempty == q["alpha"] + (q["rest"] > 0), (M, d)
            assert (nonempty == q["alpha"]) == (M % q["block"] == 0), (M, d)
    assert [stop - start for start, stop in block_bounds(10, 3)] == [2] * 5 + [0] * 3


def test_figure_20_as_printed_is_the_rule_in_symbols():
    printed = paper_figure("figure_20")["printed"]
    starts = [r for r, row in enumerate(printed) if row[0]]
    assert [printed[r][0] for r in starts] == ["0", "1", "·", "·", "·", "α − 1", "α"]
    for r, (size, count) in zip(starts[:2] + starts[5:], [("β", "γ")] * 3 + [("δ", "ε")]):
        block = printed[r:r + 10]
        assert [row[2] for row in block] == [size] * 6 + [f"{size} − 1"] * 4
        assert [row[1] for row in block][5:8] == [f"{count} − 1", count, f"{count} + 1"]
        assert block[-1][1] == "d − 1"
    example = FIGURE_20_EXAMPLE
    q = figure_20_quantities(**example)
    assert 0 < q["gamma"] < example["d"] and 0 < q["epsilon"] < example["d"]
    assert 0 < q["rest"] < q["block"] and q["alpha"] + 1 < 2 ** example["d"]


@pytest.mark.parametrize("M, d", [(0, 3), (5, 0), (2.5, 1), ("8", 2), (True, 2)])
def test_figure_20_quantities_reject_bad_input(M, d):
    with pytest.raises(ValueError, match="M must|d must"):
        figure_20_quantities(M, d)
