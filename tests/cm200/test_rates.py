"""Table 18's data motion rates and Fig. 22's crossovers, checked against the report's timings.

Source: Mathur and Johnsson, All-to-All Communication on the Connection Machine
CM-200, TR-02-93 (1993), §6.1 (Tables 7, 8, 17, Fig. 22) and §7 (Table 18).
"""
import numpy as np
import pytest

from collective_lib.cm200.models import cm200_table, d_cycles_time, fitted_constants, one_cycle_time
from collective_lib.cm200.rates import (
    MB, MIB, ONE_CYCLE_ALTERNATIVES, TABLE18_COLUMNS, TABLE18_READINGS, RateReading,
    aggregate_rate, bytes_per_node, first_nodes_from, measured_crossovers, model_crossovers,
    rate_reading_times, table18_check, table18_summary)


def test_bytes_per_node():
    assert bytes_per_node(2048, 128).tolist() == 2047 * 128 * 8
    assert bytes_per_node([2, 4], 256, "gathered").tolist() == [4096, 8192]
    with pytest.raises(ValueError, match="'sent'"):
        bytes_per_node(4, 8, "sent")
    with pytest.raises(ValueError, match="nodes must be >= 1"):
        bytes_per_node(0, 8)


def test_the_bare_d_cycles_rates_are_table_7s_aabc_times():
    """(p - 1) 128 8 bytes / Table 7 AABC in 2^20 bytes: 7 cells round, 4 are 0.01 lower."""
    checks = table18_check("d_cycles")
    assert len(checks) == 11 and all(c.status != "differs" for c in checks)
    low = [c.nodes for c in checks if c.status == "one unit"]
    assert low == [64, 256, 512, 2048]
    assert all(c.printed < c.implied for c in checks if c.status == "one unit")
    t7 = cm200_table(7)
    assert checks[-1].time_ms == t7["aabc"][-1] == 738.4
    assert round(checks[-1].implied, 3) == round(2047 * 1024 / 0.7384 / MIB, 3) == 2.707


def test_decimal_megabytes_would_not_reproduce_the_d_cycles_column():
    decimal = RateReading("d_cycles", ("table", 7, "aabc"), 128, "received", MB, "10^6 bytes")
    assert sum(c.status == "differs" for c in table18_check("d_cycles", decimal)) == 11


def test_the_spread_column_is_the_gathered_vector_of_table_5():
    """p 256 8 bytes / Table 5 spread in 10^6 bytes: 6 of 8 round; 8 nodes 0.01 off, 256 differs."""
    checks = {c.nodes: c for c in table18_check("spread")}
    assert sorted(checks) == [2, 4, 8, 16, 32, 64, 128, 256]
    assert [n for n, c in checks.items() if c.status == "rounds"] == [2, 4, 16, 32, 64, 128]
    assert checks[8].status == "one unit" and checks[256].status == "differs"
    assert round(checks[256].implied, 2) == 1.83 and checks[256].printed == 1.87
    as_binary = TABLE18_READINGS["spread"]._replace(mbyte=MIB)
    assert all(c.status == "differs" for c in table18_check("spread", as_binary))


def test_the_one_cycle_column_is_the_model_and_the_measurements():
    checks = table18_check("one_cycle")
    assert {c.status for c in checks} == {"rounds"} and len(checks) == 11
    assert {round(c.implied, 3) for c in checks} == {0.659}      # independent of p
    table4, table8, _ = ONE_CYCLE_ALTERNATIVES
    assert [(c.nodes, c.status) for c in table18_check("one_cycle", table4)] == [(16, "rounds")]
    t8 = table18_check("one_cycle", table8)
    assert len(t8) == 9 and all(c.status != "differs" for c in t8)
    assert max(c.nodes for c in t8) == 512                    # nothing measured at 1024, 2048


def test_the_one_cycle_with_reordering_matches_neither_model_nor_table_8():
    model = table18_check("one_cycle_reorder")
    assert [c.nodes for c in model if c.status != "differs"] == [2, 4]
    assert all(c.printed > c.implied for c in model if c.status == "differs")
    assert max(round(c.implied, 3) for c in model) == 0.589      # the printed 0.60 never
    t8 = table18_check("one_cycle_reorder", ONE_CYCLE_ALTERNATIVES[2])
    assert [c.nodes for c in t8 if c.status == "differs"] == [2, 4, 8]
    assert [round(c.implied, 2) for c in t8[:3]] == [0.56, 0.59, 0.6]


@pytest.mark.parametrize("column", ["d_cycles_reorder", "move_index"])
def test_the_index_columns_are_below_table_7s_totals(column):
    """From 8 nodes on every printed rate is 2% to 6% below (p - 1) 1024 / Table 7's total."""
    checks = table18_check(column)
    assert len(checks) == 11
    assert [c.status for c in checks[2:]] == ["differs"] * 9
    shortfall = [1 - c.printed / c.implied for c in checks[2:]]
    assert min(shortfall) > 0.02 and max(shortfall) < 0.06
    assert all(c.status != "differs" for c in checks[:2])         # 2 and 4 nodes


def test_the_summary_counts():
    assert table18_summary() == {
        "spread": {"rounds": 6, "one unit": 1, "differs": 1},
        "one_cycle": {"rounds": 11, "one unit": 0, "differs": 0},
        "d_cycles": {"rounds": 7, "one unit": 4, "differs": 0},
        "one_cycle_reorder": {"rounds": 1, "one unit": 1, "differs": 9},
        "d_cycles_reorder": {"rounds": 0, "one unit": 2, "differs": 9},
        "move_index": {"rounds": 1, "one unit": 1, "differs": 9}}
    assert table18_summary(fitted_constants())["one_cycle"]["rounds"] == 11


def test_model_rates_beyond_the_measured_sizes():
    """Table 7 measures the d-cycles columns up to 2048 nodes; the models agree within 5%."""
    for column, model in (("d_cycles", "d_cycles_comm"), ("d_cycles_reorder", "d_cycles_compute"),
                          ("move_index", "d_cycles_move")):
        reading = TABLE18_READINGS[column]._replace(source=("model", model))
        measured = table18_check(column)
        modelled = table18_check(column, reading, fitted_constants())
        for m, f in zip(measured[-2:], modelled[-2:]):       # 1024 and 2048 nodes
            assert abs(f.implied / m.implied - 1) < 0.05, (column, m.nodes)


def test_the_summarys_peak_rates_use_gigabytes_of_1024_megabytes():
    assert round(aggregate_rate("move_index"), 2) == 2.54     # §7: "2.54 Gbytes/s"
    assert round(aggregate_rate("d_cycles"), 1) == 5.4        # §7: "5.4 Gbytes/sec"
    assert round(aggregate_rate("move_index", per_gbyte=1000), 2) == 2.60
    with pytest.raises(ValueError, match="3 nodes"):
        aggregate_rate("d_cycles", 3)


def test_bad_column_and_source_are_named():
    with pytest.raises(ValueError, match="'nope'"):
        table18_check("nope")
    with pytest.raises(ValueError, match="'bogus'"):
        rate_reading_times(RateReading("x", ("model", "bogus"), 1, "received", MB, ""), [2])
    assert TABLE18_COLUMNS == tuple(cm200_table(18).columns)


# -- Fig. 22 and the claims of §6.1 ---------------------------------------------------------------

def test_first_nodes_from():
    assert first_nodes_from([2, 4, 8], [1, 1, 1], [2, 2, 2]) == 2
    assert first_nodes_from([2, 4, 8], [1, 3, 1], [2, 2, 2]) == 8
    assert first_nodes_from([2, 4, 8], [1, 1, 3], [2, 2, 2]) is None


def test_d_cycles_beat_one_cycle_from_16_nodes_in_figure_22s_data():
    """§6.1: "at least 16 nodes (d >= 4)" before d cycles beat one cycle (Table 8, M' = 256)."""
    t8 = cm200_table(8)
    for column in ("comp_total", "move_total"):
        faster = t8[column] < t8["one_total"]
        assert not faster[t8["nodes"] <= 8].any() and faster[t8["nodes"] >= 16].all()
    assert [n for _, table, _, n in measured_crossovers()[:2]] == [16, 16]


def test_moving_indices_beats_computing_them_from_32_nodes_in_table_7_only():
    """§6.1: "32 or more nodes" holds for Table 7 (M' = 128); Fig. 22's Table 8 needs 64."""
    t7, t8 = cm200_table(7), cm200_table(8)
    assert (t7["move_total"] < t7["comp_total"]).tolist() == [False] * 4 + [True] * 7
    assert (t8["move_total"] < t8["comp_total"]).tolist() == [False] * 5 + [True] * 4
    assert t8["move_total"][4] == 76.35 and t8["comp_total"][4] == 75.33     # 32 nodes
    found = {(claim, table): n for claim, table, _, n in measured_crossovers()}
    assert found[("moving indices beats computing them", 7)] == 32
    assert found[("moving indices beats computing them", 8)] == 64
    assert found[("moving indices beats computing them (reduction)", 17)] == 64


@pytest.mark.parametrize("constants", [None, "fitted"])
def test_the_models_give_the_same_crossovers(constants):
    c = fitted_constants() if constants else None
    assert model_crossovers(256, c) == {"d cycles, indices computed, beat one cycle": 16,
                                        "d cycles, indices moved, beat one cycle": 16,
                                        "moving indices beats computing them": 64}
    assert model_crossovers(128, c)["moving indices beats computing them"] == 32
    assert set(model_crossovers(128, c)) == {claim for claim, table, *_ in measured_crossovers()
                                             if table != 17}
    with pytest.raises(ValueError, match="words"):
        model_crossovers(0)


def test_figure_22_is_table_8_and_the_models_follow_it():
    t8 = cm200_table(8)
    d = np.log2(t8["nodes"]).astype(int)
    one = np.array([one_cycle_time(int(k), 256) for k in d]) / 1000
    comp = np.array([d_cycles_time(int(k), 256, "compute") for k in d]) / 1000
    assert np.abs(one / t8["one_total"] - 1).max() < 0.05
    assert np.abs(comp / t8["comp_total"] - 1).max() < 0.06
