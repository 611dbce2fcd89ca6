"""The CM-200 tables, the §6 models fitted to them, Table 2 and Table 9.

Source: Mathur and Johnsson, All-to-All Communication on the Connection Machine
CM-200, TR-02-93 (1993).  Expected values below are read off the report.
"""
import math

import numpy as np
import pytest

from collective_lib.cm200.models import (
    MODELS, PAPER_ISSUES, PRINTED_CONSTANTS, TABLE2_OPERATIONS, TABLE_NUMBERS, cm200_table,
    broadcast_lower_bound, consistency_report, constants_comparison, cycles_crossover, d_cycles_time,
    fit_model, fitted_constants, one_cycle_time, table10_check, table2_transfers, table3_check,
    table9_comparison)
from collective_lib.cm200.transfers import element_transfers

# -- the transcription -------------------------------------------------------------------------

SHAPES = {3: (15, 11), 4: (9, 11), 5: (9, 10), 6: (8, 3), 7: (11, 6), 8: (9, 9), 9: (11, 2),
          10: (8, 3), 11: (9, 10), 12: (9, 9), 13: (9, 11), 14: (9, 10), 15: (9, 5),
          16: (8, 3), 17: (9, 7), 18: (11, 6), 19: (8, 16)}


@pytest.mark.parametrize("number", TABLE_NUMBERS)
def test_every_table_has_its_shape_and_caption(number):
    table = cm200_table(number)
    assert table.shape == SHAPES[number]
    assert table.caption.startswith(f"Table {number}:")
    for column in table.columns.values():
        assert len(column) == table.shape[0]


# (table, column, row index, value printed in the report)
SPOT_CHECKS = [
    (3, "2", 0, 0.0366), (3, "2048", 14, 62.991), (3, "256", 7, 1.338), (3, "elements", 14, 32768),
    (4, "send", 0, 2.20), (4, "d_addr", 8, 29.07), (4, "one_total", 8, 242.70),
    (5, "transpose", 0, 4.93), (5, "d_addr_indir", 8, 226.10), (5, "one_total", 8, 831.53),
    (6, "d_cycles", 3, 2.08), (6, "one_cycle", 7, 0.90),
    (7, "comp", 10, 1973.00), (7, "move_total", 0, 5.36), (7, "nodes", 10, 2048),
    (8, "comp_total", 8, 980.70), (8, "one_aabc", 8, 1504.00),
    (9, "d_h_c", 2, 240), (9, "d_h_m", 3, 55), (9, "d_h_m", 10, 22),
    (11, "send", 8, 176.10), (12, "one_total", 8, 826.60),
    (13, "red_spread", 8, 428.20), (13, "one_comm", 0, 1.07),
    (14, "send", 7, 1293.00), (14, "one_total", 8, 1746.90),
    (15, "d_speedup", 3, 6.24), (15, "one_speedup", 0, 8.68),
    (16, "ratio", 0, 0.99), (17, "move", 8, 222.00),
    (18, "spread", 7, 1.87), (18, "one_cycle", 10, 0.66), (18, "d_cycles", 10, 2.70),
    (18, "one_cycle_reorder", 0, 0.52), (18, "d_cycles_reorder", 8, 0.79),
    (18, "move_index", 10, 1.27), (18, "nodes", 10, 2048),
    (19, "matrix_size", 7, 24576), (19, "mv_mflops_256", 1, 304), (19, "mv_ms_256", 1, 6.90),
    (19, "mv_mflops_2048", 6, 9833), (19, "mv_ms_1024", 5, 60.5), (19, "mv_ms_2048", 7, 112.0),
    (19, "vm_mflops_512", 5, 3553), (19, "vm_ms_512", 5, 85.0), (19, "vm_ms_2048", 6, 46.2),
    (19, "vm_mflops_2048", 7, 13742),
]


@pytest.mark.parametrize("number, column, row, value", SPOT_CHECKS)
def test_spot_checks_against_the_report(number, column, row, value):
    assert cm200_table(number)[column][row] == pytest.approx(value)


def test_dashes_and_blanks_are_nan():
    assert math.isnan(cm200_table(12)["send"][8])          # 256 nodes: "—"
    assert np.isnan(cm200_table(14)["d_total"][8])         # 512 nodes: "—"
    assert np.isnan(cm200_table(17)["comp"][8])            # 512 nodes: left blank
    assert np.isnan(cm200_table(9)["d_h_c"][:2]).all()      # 2 and 4 nodes: never
    assert np.isnan(cm200_table(18)["spread"][8:]).all()    # 512..2048 nodes: left blank
    t19 = cm200_table(19)
    assert all(np.isnan(column[0]).all() for column in t19.columns.values())   # P = 512: dashes
    assert np.isnan(t19["mv_ms_512"][5]) and np.isnan(t19["mv_ms_2048"][6])   # rate, no time
    printed = sum(int(np.sum(~np.isnan(column))) for column in t19.columns.values())
    assert printed == 15 + 13 + 15 + 15                    # MV rates, MV times, VM rates, VM times


def test_metadata():
    t4 = cm200_table(4)
    assert (t4.units, t4.ordering, t4.addresses, t4.S) == ("ms", "row major", "Gray code", 2)
    assert cm200_table(11).ordering == "column major"
    assert cm200_table(3).column_axis == "number of nodes"
    assert list(cm200_table(7)["nodes"]) == [2 ** k for k in range(1, 12)]


def test_unknown_table_and_column_are_named():
    with pytest.raises(ValueError, match="Table 20"):
        cm200_table(20)
    with pytest.raises(KeyError, match="no column 'nope'"):
        cm200_table(4)["nope"]


def test_tables_are_read_only():
    with pytest.raises(ValueError):
        cm200_table(4)["send"][0] = 0.0


# -- the report's internal consistency -----------------------------------------------------------

def test_consistency_finds_exactly_the_known_discrepancies():
    report = consistency_report()
    assert report["checked"] > 300
    found = {(x.table, x.where, x.column): (x.printed, x.implied) for x in report["discrepancies"]}
    # one digit off: the printed parts sum to a total that differs in one digit
    assert found[(4, "8 words, 16 nodes", "d_total")] == (6.57, pytest.approx(6.37))
    assert found[(5, "256 words, 128 nodes", "d_total")] == (276.91, pytest.approx(275.91))
    assert found[(5, "256 words, 32 nodes", "one_total")] == (112.64, pytest.approx(113.64))
    assert found[(12, "256 words, 16 nodes", "one_total")] == (49.85, pytest.approx(48.85))
    # Table 12's send-and-spread total exceeds send + spread, more with more nodes
    excess = [p - i for (t, _, col), (p, i) in found.items()
              if t == 12 and col == "send_spread_total"]
    assert len(excess) == 7 and min(excess) > 0.1 and max(excess) > 6
    assert len(found) == 19
    # Tables 6, 15 and 16 agree with Tables 5 and 14 everywhere
    assert not [x for x in report["discrepancies"] if x.table in (6, 15, 16)]


def test_table3_is_paired_with_every_spread_of_the_same_broadcast():
    """Each spread of Tables 4 and 5 that broadcasts at most 32768 words meets its Table 3 cell."""
    cells = table3_check()
    t3 = cm200_table(3)
    paired = set()
    for cell in cells:
        table = cm200_table(cell.table)
        words = table["words_per_node"][cell.row] * table["nodes"][cell.row] * table.S
        row = int(np.flatnonzero(t3["elements"] == words)[0])
        assert cell.implied == t3[f"{table['nodes'][cell.row]:g}"][row]
        assert cell.printed == table["spread"][cell.row] and cell.column == "spread"
        paired.add((cell.table, cell.row))
    for number in (4, 5):                          # nothing left out that Table 3 covers
        table = cm200_table(number)
        for r in range(table.shape[0]):
            words = table["words_per_node"][r] * table["nodes"][r] * 2
            if table["nodes"][r] >= 2 and words <= 32768:
                assert (number, r) in paired
    assert len(cells) == 15
    # Tables 11 and 12 repeat the spread columns of Tables 4 and 5
    for a, b in ((4, 11), (5, 12)):
        assert np.array_equal(cm200_table(a)["spread"], cm200_table(b)["spread"])


def test_table10_cells_and_their_table5_ratios():
    cells = table10_check()
    t5, t10 = cm200_table(5), cm200_table(10)
    assert [c.column for c in cells] == ["d_cycles_aabc", "send"] * 8
    assert np.all(t10["spread"] == 1)
    for cell in cells:
        source = int(np.flatnonzero(t5["nodes"] == t10["nodes"][cell.row])[0])
        numerator = "d_total" if cell.column == "d_cycles_aabc" else "send"
        assert cell.implied == pytest.approx(t5[numerator][source] / t5["spread"][source])


def test_table11_confirms_the_corrected_digit_of_table4():
    t4, t11 = cm200_table(4), cm200_table(11)
    parts = t11["d_addr"][1] + t11["d_indir"][1] + t11["d_aabc"][1]
    assert parts == pytest.approx(t11["d_total"][1])
    assert t4["transpose"][1] + parts == pytest.approx(6.37)


# -- the §6 models -------------------------------------------------------------------------------

def test_index_computation_fit_reproduces_the_printed_constants():
    fit = fit_model("d_cycles_index_compute")
    for k in ("b4", "b5", "b6", "b7"):
        assert fit.fitted_constants[k] == pytest.approx(PRINTED_CONSTANTS[k], rel=0.005)


@pytest.mark.parametrize("model, constant, rel", [
    ("one_cycle_comm_words", "a2", 0.005),
    ("d_cycles_comm", "b3", 0.005),
    ("d_cycles_reorder", "b9", 0.005),
    ("d_cycles_reorder", "b8", 0.06),
    ("d_cycles_comm", "b2", 0.1),
    ("d_cycles_comm", "b1", 0.2),
    ("one_cycle_comm_words", "a1", 0.2),
    ("one_cycle_reorder", "a5", 0.1),
])
def test_fitted_constants_near_the_printed_ones(model, constant, rel):
    fit = fit_model(model)
    assert fit.fitted_constants[constant] == pytest.approx(PRINTED_CONSTANTS[constant], rel=rel)


def test_a2_as_printed_is_per_word_not_per_pair():
    """Documented disagreement: (a1 + a2 ceil(M'S/2)) needs a2 = 2 x 5.69."""
    printed_form = fit_model("one_cycle_comm")
    assert printed_form.fitted_constants["a2"] == pytest.approx(2 * 5.69, rel=0.005)
    assert np.abs(printed_form.printed_relative_residuals).max() > 0.45     # half the time
    words_form = fit_model("one_cycle_comm_words")
    assert np.abs(words_form.printed_relative_residuals).max() < 0.05
    assert np.abs(words_form.relative_residuals).max() < 0.02


def test_index_motion_constants_disagree_with_tables_7_and_8():
    """Documented disagreement: the printed b10..b13 miss the Move columns (see test_cm200_book)."""
    fit = fit_model("d_cycles_index_move")
    assert fit.printed_relative_residuals.min() < -0.4
    assert np.abs(fit.relative_residuals).max() < 0.25
    assert fit.fitted_constants["b13"] < 0.6 * PRINTED_CONSTANTS["b13"]


@pytest.mark.parametrize("name", list(MODELS))
def test_fit_is_least_squares(name):
    """No constant can be nudged to lower the squared residual."""
    fit = fit_model(name)
    base = np.sum(fit.residuals ** 2)
    for k in fit.model.constants:
        for h in (-1e-3, 1e-3):
            nudged = dict(fit.fitted_constants, **{k: fit.fitted_constants[k] * (1 + h)})
            moved = fit.model.predict(fit.d, fit.words, nudged)
            assert np.sum((fit.measured - moved) ** 2) >= base * (1 - 1e-12)


def test_constants_comparison_covers_every_model_constant():
    rows = constants_comparison()
    assert {(r.model, r.constant) for r in rows} == {
        (name, k) for name, m in MODELS.items() for k in m.constants}
    assert set(fitted_constants()) == set(PRINTED_CONSTANTS)
    with pytest.raises(ValueError, match="one_cycle"):
        fitted_constants("nope")


def test_printed_totals_are_the_sums_of_the_printed_models():
    """The closed forms printed for T^B_{1-H} and T^B_{d-H,m} (§6.1)."""
    for d in (1, 4, 8, 11):
        for w in (4, 128, 256, 1000):
            mS = w * 2
            one = -6.38 - 5.69 * mS + 74.6 * 2 ** d + 6.19 * mS * 2 ** d
            assert one_cycle_time(d, w) == pytest.approx(one, abs=0.5 + 1e-3 * one)
            move = 1848.83 + 0.645 * mS + (
                90.33 + 0.645 * mS + (0.34 * d + 24.18) * math.ceil(mS / (2 * d))
                + (1.26 * d + 16.98) * math.ceil(w / (2 * d))) * (2 ** d - 1)
            assert d_cycles_time(d, w, "move") == pytest.approx(move, rel=1e-3)


def test_model_errors_name_the_bad_value():
    with pytest.raises(ValueError, match="'nope'"):
        fit_model("nope")
    with pytest.raises(ValueError, match="index"):
        d_cycles_time(3, 10, index="guess")
    with pytest.raises(ValueError, match="d must be an integer >= 1, got 0"):
        cycles_crossover(0)


# -- Table 9 -------------------------------------------------------------------------------------

def test_table9_compute_row_is_reproduced_by_the_printed_models():
    for row in table9_comparison():
        assert row.model_compute == row.paper_compute, row


def test_table9_move_row_agrees_from_64_nodes_on():
    rows = {r.nodes: r for r in table9_comparison()}
    for nodes in (2, 4, 8, 64, 128, 256, 512, 1024, 2048):
        assert rows[nodes].model_move == rows[nodes].paper_move, rows[nodes]
    assert (rows[16].model_move, rows[32].model_move) == (72, 30)       # paper: 55 and 14
    assert any("55" in issue for issue in PAPER_ISSUES)


def test_crossover_is_the_first_faster_size():
    for d in (4, 6, 9):
        m = cycles_crossover(d, step="1")
        assert d_cycles_time(d, m) < one_cycle_time(d, m)
        assert all(d_cycles_time(d, w) >= one_cycle_time(d, w) for w in range(1, m))
        assert cycles_crossover(d) % (2 * d) == 0


# -- Table 2 -------------------------------------------------------------------------------------

def test_table2_single_cycle_and_gather():
    # d = 3, 256 64-bit elements = 512 words per node, M = 8 * 512
    assert table2_transfers("one_cycle", 3, 8 * 512) == 256 * 7
    assert table2_transfers("gather_broadcast", 3, 8 * 512) == 2 * 512 + 3
    assert table2_transfers("gather_broadcast", 3, 8 * 512, "2d") == 2 * 683 + 3
    assert table2_transfers("reduce_and_spread", 3, 8 * 512) == 512 * 3


def test_table2_readings_agree_for_small_d_and_differ_after():
    for op in ("d_cycles", "one_node_at_a_time", "rotated_binomial", "transpose_d_cycles"):
        for d in (1, 2):
            for M in (0, 1, 7, 64, 1000):
                assert table2_transfers(op, d, M) == table2_transfers(op, d, M, "2d")
    assert table2_transfers("d_cycles", 3, 8 * 48) == 6 * 7            # printed: 48/8
    assert table2_transfers("d_cycles", 3, 8 * 48, "2d") == 8 * 7       # 48/6


def test_table2_as_printed_beats_the_channel_lower_bound_which_is_impossible():
    for d in range(3, 12):
        M = 2 ** d * 512
        bound = broadcast_lower_bound(d, M)
        for op in ("d_cycles", "rotated_binomial"):
            assert table2_transfers(op, d, M) < bound, (op, d)
            assert table2_transfers(op, d, M, "2d") >= bound, (op, d)
        # the gather alone already needs the bound (the root receives M (1 - 2^-d)), then a broadcast
        assert table2_transfers("gather_broadcast", d, M) < 2 * bound
        assert table2_transfers("gather_broadcast", d, M, "2d") >= 2 * bound
        assert table2_transfers("one_cycle", d, M) >= bound


def test_table2_d_cycles_is_the_lower_bound_reading():
    """2d channels, 2^d - 1 foreign blocks of M / 2^d each: ceil(M/(2d 2^d)) (2^d - 1) is optimal."""
    for d in range(1, 8):
        for M in (2 ** d * 2 * d, 2 ** d * 2 * d * 5):
            needed = M - M // 2 ** d
            assert table2_transfers("d_cycles", d, M, "2d") * 2 * d == needed


def test_table2_rejects_bad_input():
    assert len(TABLE2_OPERATIONS) == 11
    with pytest.raises(ValueError, match="'spread'"):
        table2_transfers("spread", 3, 8)
    with pytest.raises(ValueError, match="M=-1"):
        table2_transfers("one_cycle", 3, -1)
    with pytest.raises(ValueError, match="reading"):
        table2_transfers("one_cycle", 3, 8, reading="other")


# -- Table 2 against the simulator's counts of the CM-200 programs --------------------------------

@pytest.mark.parametrize("d", [1, 2, 3, 4, 5])
def test_table2_matches_the_simulated_cm200_programs(d):
    """The calculator's 2d reading equals the simulator's count (two channels per link)."""
    for m in (1, 3, 6, 7, 24, 30):                     # 32-bit elements per node
        M = 2 ** d * m
        assert element_transfers("one_cycle_broadcast", d, m, channels=2) == \
            table2_transfers("one_cycle", d, M), (d, m)
        assert element_transfers("d_cycles_broadcast", d, m, channels=2) == \
            table2_transfers("d_cycles", d, M, "2d"), (d, m)


@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_table2_matches_the_simulated_cm200_reductions(d):
    """For a reduction M is the length of the reduced vector, p m for p messages of m words."""
    for m in (1, 3, 5, 12):                            # words per message (per destination)
        M = 2 ** d * m
        assert element_transfers("one_cycle_reduce", d, m, channels=2) == \
            table2_transfers("one_cycle", d, M), (d, m)
        assert element_transfers("d_cycles_reduce", d, m, channels=2) == \
            table2_transfers("d_cycles", d, M, "2d"), (d, m)
        assert element_transfers("reduce_and_spread", d, m, channels=2) == \
            table2_transfers("reduce_and_spread", d, M, "2d"), (d, m)


def test_table2_reduce_and_spread_is_d_times_the_d_cycles_reduction_only_in_the_2d_reading():
    """§5: reduce-and-spread needs a factor d more transfers than the d-cycles reduction."""
    for d in range(3, 12):
        M = 2 ** d * 2 * d * 4                         # whole blocks: no rounding
        cycles = table2_transfers("d_cycles", d, M, "2d")
        spread = table2_transfers("reduce_and_spread", d, M, "2d")
        assert spread * (2 ** d - 1) == d * cycles * 2 ** d, d
        printed = table2_transfers("reduce_and_spread", d, M)
        assert printed * (2 ** d - 1) != d * cycles * 2 ** d, d
