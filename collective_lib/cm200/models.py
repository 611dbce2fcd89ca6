"""The CM-200 measurements of Mathur and Johnsson and the performance models fitted to them.

Source: K. K. Mathur and S. L. Johnsson, *All-to-All Communication on the
Connection Machine CM-200*, Harvard TR-02-93 (1993).  This module holds

* the measured tables (Tables 3-19, transcribed cell by cell into
  ``cm200/data/tables.json``) and :func:`cm200_table` to load one (Table 18's
  data motion rates are checked in :mod:`.rates`, Table 19's matrix-vector
  products in :mod:`.matvec`);
* :func:`consistency_report`: the checks the tables allow on themselves
  ("total" columns are sums of their parts, Table 6 and Table 15 are ratios of
  Tables 5 and 14, Table 16 repeats columns of Tables 5 and 14);
  :func:`table3_check` and :func:`table10_check` set Tables 3 and 10 beside
  the tables they describe again (the spread of Tables 4 and 5, the ratios of
  Table 5's times);
* the performance models of §6 with the constants the report prints
  (:data:`PRINTED_CONSTANTS`), refitted here by least squares
  (:func:`fit_model`, :func:`constants_comparison`);
* the totals for one cycle and for d cycles (:func:`one_cycle_time`,
  :func:`d_cycles_time`) and the data-set size at which d cycles win
  (:func:`cycles_crossover`, compared with Table 9 by :func:`table9_comparison`);
* Table 2, the element transfers in sequence of each algorithm, as the
  report's formulas (:func:`table2_transfers`; the same numbers counted by
  running the programs are :func:`collective_lib.cm200.transfers.element_transfers`).

Units: the tables are in milliseconds; the model constants and the model
times are in microseconds, as in the report.  ``M'`` (``words`` here) is the
number of 64-bit elements a node holds before the broadcast, ``S = 2`` the
32-bit words per element, ``d`` the dimension of the cube of 2**d nodes.

What the report's formulas and its own data say differently is stated where it
happens, never silently repaired; :data:`PAPER_ISSUES` lists it in one place.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from numbers import Integral
from typing import Callable, NamedTuple

import numpy as np

from ..validate import check_positive_int

__all__ = [
    "CM200Table", "cm200_table", "TABLE_NUMBERS", "Discrepancy", "consistency_report",
    "table3_check", "table10_check",
    "PRINTED_CONSTANTS", "PerformanceModel", "MODELS", "ModelFit", "fit_model", "fitted_constants",
    "constants_comparison", "one_cycle_time", "d_cycles_time", "cycles_crossover",
    "table9_comparison", "TABLE2_OPERATIONS", "table2_transfers", "broadcast_lower_bound",
    "PAPER_ISSUES", "ConstantRow", "CrossoverRow", "S_REAL8",
]

S_REAL8 = 2    # 32-bit words per 64-bit element (the report's S for real-8)


# -- the measured tables ---------------------------------------------------------------------

@dataclass(frozen=True)
class CM200Table:
    """One measured table of the report: its caption, conditions and columns.

    ``index`` holds the columns that say where a row was measured (words per
    node, number of nodes); ``columns`` the measured values, in the report's
    left-to-right order.  Cells printed as an em dash or left blank are NaN.
    ``table[name]`` returns either kind of column as a numpy array.
    """
    number: int
    caption: str
    units: str
    precision: str
    S: int
    ordering: str | None
    addresses: str | None
    section: str
    printed_decimals: int
    index: dict
    columns: dict
    column_axis: str | None = None

    def __getitem__(self, name: str) -> np.ndarray:
        if name in self.index:
            return self.index[name]
        if name in self.columns:
            return self.columns[name]
        raise KeyError(f"Table {self.number} has no column {name!r}; it has "
                       f"{list(self.index) + list(self.columns)}")

    @property
    def shape(self) -> tuple:
        """(rows, measured columns)."""
        return len(next(iter(self.index.values()))), len(self.columns)

    @property
    def d(self) -> np.ndarray:
        """log2 of the number of nodes of each row (tables indexed by nodes)."""
        return np.log2(self["nodes"])


@lru_cache(maxsize=1)
def _raw_tables() -> dict:
    text = resources.files("collective_lib.cm200").joinpath("data/tables.json").read_text("utf-8")
    return json.loads(text)["tables"]


#: The numbers of the tables held in ``data/tables.json``.
TABLE_NUMBERS = (3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19)


@lru_cache(maxsize=None)
def cm200_table(number: int) -> CM200Table:
    """Table ``number`` of Mathur and Johnsson (1993), as numpy arrays.

    Examples
    --------
    >>> t = cm200_table(4)
    >>> t.shape, float(t["words_per_node"][0]), float(t["d_total"][0])
    ((9, 11), 4.0, 4.31)
    """
    if number not in TABLE_NUMBERS:
        raise ValueError(f"no transcribed Table {number!r}; the tables are {TABLE_NUMBERS}")
    raw = _raw_tables()[str(number)]
    values = np.array([[np.nan if v is None else v for v in row] for row in raw["rows"]], float)
    names = raw["index"] + raw["columns"]
    arrays = {name: values[:, i] for i, name in enumerate(names)}
    for array in arrays.values():
        array.flags.writeable = False
    return CM200Table(
        number=number, caption=raw["caption"], units=raw["units"], precision=raw["precision"],
        S=raw["S"], ordering=raw["ordering"], addresses=raw["addresses"],
        section=raw["section"], printed_decimals=raw["printed_decimals"],
        index={k: arrays[k] for k in raw["index"]},
        columns={k: arrays[k] for k in raw["columns"]},
        column_axis=raw.get("column_axis"))


# -- what the tables say about themselves ----------------------------------------------------

class Discrepancy(NamedTuple):
    """A printed cell beside what other cells of the report imply for it.

    :func:`consistency_report` returns the cells where the two differ;
    :func:`table3_check` and :func:`table10_check` return every cell they compare.
    """
    table: int
    row: int           # 0-based row of the table
    where: str         # e.g. "256 words, 1 nodes"
    column: str
    printed: float
    implied: float
    rule: str


# (table, total column, part columns): "total" = sum of the parts.
_SUMS = (
    (4, "send_spread_total", ("send", "spread")),
    (4, "d_total", ("transpose", "d_addr", "d_indir", "d_aabc")),
    (4, "one_total", ("transpose", "one_indir", "one_aabc")),
    (5, "send_spread_total", ("send", "spread")),
    (5, "d_total", ("transpose", "d_addr_indir", "d_aabc")),
    (5, "one_total", ("transpose", "one_indir", "one_aabc")),
    (7, "comp_total", ("aabc", "indir", "comp")),
    (7, "move_total", ("aabc", "indir", "move")),
    (8, "comp_total", ("d_aabc", "d_indir", "comp")),
    (8, "move_total", ("d_aabc", "d_indir", "move")),
    (8, "one_total", ("one_aabc", "one_indir")),
    (11, "send_spread_total", ("send", "spread")),
    (11, "d_total", ("d_addr", "d_indir", "d_aabc")),
    (11, "one_total", ("one_indir", "one_aabc")),
    (12, "send_spread_total", ("send", "spread")),
    (12, "d_total", ("d_addr_indir", "d_aabc")),
    (12, "one_total", ("one_indir", "one_aabc")),
    (13, "rs_total", ("red_spread", "send")),
    (13, "d_total", ("d_indir", "d_arith", "d_comm")),
    (13, "one_total", ("one_indir", "one_arith", "one_comm")),
    (14, "rs_total", ("red_spread", "send")),
    (14, "d_total", ("d_indir_addr_arith", "d_comm")),
    (14, "one_total", ("one_indir", "one_arith", "one_comm")),
    (17, "comp_total", ("aabc", "indir", "arith", "comp")),
    (17, "move_total", ("aabc", "indir", "arith", "move")),
)


def _where(table: CM200Table, row: int) -> str:
    parts = []
    if "words_per_node" in table.index:
        parts.append(f"{table['words_per_node'][row]:g} words")
    if "nodes" in table.index:
        parts.append(f"{table['nodes'][row]:g} nodes")
    return ", ".join(parts)


def _compare(table, column, implied, rule, tolerance, out):
    printed = table[column]
    for row, (a, b) in enumerate(zip(printed, implied)):
        if not (np.isnan(a) or np.isnan(b)) and abs(a - b) > tolerance:
            out.append(Discrepancy(table.number, row, _where(table, row), column,
                                   float(a), round(float(b), 4), rule))


def _rows_matching(target: CM200Table, source: CM200Table) -> np.ndarray:
    """For each row of ``target``, the row of ``source`` with the same nodes (and words)."""
    keys = [k for k in ("words_per_node", "nodes") if k in target.index and k in source.index]
    rows = []
    for r in range(target.shape[0]):
        match = np.ones(source.shape[0], bool)
        for k in keys:
            match &= source[k] == target[k][r]
        rows.append(int(np.flatnonzero(match)[0]) if match.any() else -1)
    return np.array(rows)


def _copied(target, source, pairs):
    """Columns of ``target`` that repeat columns of ``source`` (NaN where no row matches)."""
    rows = _rows_matching(target, source)
    out = {}
    for mine, theirs in pairs:
        values = np.full(len(rows), np.nan)
        values[rows >= 0] = source[theirs][rows[rows >= 0]]
        out[mine] = values
    return out


def consistency_report(sum_tolerance: float = 0.025, ratio_tolerance: float = 0.011) -> dict:
    """Check the tables against each other; return every cell that disagrees.

    Rules: a "total" column is the sum of its parts (``sum_tolerance`` ms allows
    for the rounding of two-decimal cells); Table 6's speedups are Table 5's
    send-and-spread total over the d-cycles (one-cycle) total; Table 15 repeats
    Table 14's totals and divides them; Table 16 repeats the send columns of
    Tables 5 and 14 and divides them (ratios within ``ratio_tolerance``).

    Returns
    -------
    dict
        ``{"checked": number of cells compared, "discrepancies": [Discrepancy, ...]}``.

    Examples
    --------
    >>> report = consistency_report()
    >>> report["checked"] > 300, len(report["discrepancies"])
    (True, 19)
    """
    out, checked = [], 0
    for number, total, parts in _SUMS:
        table = cm200_table(number)
        implied = sum(table[p] for p in parts)
        _compare(table, total, implied, f"{total} = " + " + ".join(parts), sum_tolerance, out)
        checked += int(np.sum(~np.isnan(implied) & ~np.isnan(table[total])))
    t5, t6, t14, t15, t16 = (cm200_table(n) for n in (5, 6, 14, 15, 16))
    # Table 6: speedups over send and spread, from Table 5's totals.
    c = _copied(t6, t5, [("ss", "send_spread_total"), ("d", "d_total"), ("one", "one_total")])
    for column, key in (("d_cycles", "d"), ("one_cycle", "one")):
        _compare(t6, column, c["ss"] / c[key],
                 f"Table 5 send_spread_total / Table 5 {key}_total", ratio_tolerance, out)
        checked += t6.shape[0]
    # Table 15: Table 14's totals and their ratios.
    c = _copied(t15, t14, [("rs", "rs_total"), ("d", "d_total"), ("one", "one_total")])
    for column, implied, rule in (
            ("reduce_send", c["rs"], "Table 14 rs_total"),
            ("d_time", c["d"], "Table 14 d_total"),
            ("one_time", c["one"], "Table 14 one_total")):
        _compare(t15, column, implied, rule, sum_tolerance, out)
    _compare(t15, "d_speedup", t15["reduce_send"] / t15["d_time"],
             "reduce_send / d_time", ratio_tolerance, out)
    _compare(t15, "one_speedup", t15["reduce_send"] / t15["one_time"],
             "reduce_send / one_time", ratio_tolerance, out)
    checked += 5 * t15.shape[0]
    # Table 16: the router's gather (Table 5's send) and scatter (Table 14's send).
    g = _copied(t16, t5, [("gather", "send")])["gather"]
    s = _copied(t16, t14, [("scatter", "send")])["scatter"]
    _compare(t16, "gather", g, "Table 5 send", sum_tolerance, out)
    _compare(t16, "scatter", s, "Table 14 send", sum_tolerance, out)
    _compare(t16, "ratio", t16["gather"] / t16["scatter"], "gather / scatter",
             ratio_tolerance, out)
    checked += 3 * t16.shape[0]
    return {"checked": checked, "discrepancies": out}


def table3_check() -> list:
    """The spread times of Tables 4 and 5 beside Table 3's broadcast of as many words.

    Table 3 times a broadcast (the CM-200's spread) of N 32-bit words from one
    node on 2 to 2048 nodes.  The spread of send-and-spread in Tables 4 and 5
    broadcasts the gathered vector, p M' elements of S = 2 words, on p nodes,
    so each of their spread cells with ``N = p M' S`` up to Table 3's 32768
    words has a Table 3 cell timing the same broadcast.  Returns one
    :class:`Discrepancy` per such cell: ``printed`` the spread of Table 4 or
    5, ``implied`` the Table 3 time (both in ms).  (Tables 11 and 12 repeat
    the spread columns of Tables 4 and 5.)

    >>> cell = table3_check()[-1]
    >>> cell.table, cell.where, cell.printed, cell.implied, cell.rule
    (5, '256 words, 64 nodes', 87.5, 91.874, 'Table 3: 32768 words on 64 nodes')
    """
    t3 = cm200_table(3)
    out = []
    for number in (4, 5):
        table = cm200_table(number)
        for row, (words, nodes) in enumerate(zip(table["words_per_node"], table["nodes"])):
            sent = int(words * nodes * table.S)
            match = np.flatnonzero(t3["elements"] == sent)
            column = f"{nodes:g}"
            if nodes < 2 or not len(match) or column not in t3.columns:
                continue
            out.append(Discrepancy(number, row, _where(table, row), "spread",
                                   float(table["spread"][row]), float(t3[column][match[0]]),
                                   f"Table 3: {sent} words on {column} nodes"))
    return out


def table10_check() -> list:
    """Table 10's relative times beside the ratios of Table 5's times.

    Table 10 divides, for 256 elements per node, the time of the d-cycles
    broadcast with reordering and that of the send by the spread's.  Table 5
    holds all three at the same sizes: ``implied`` is Table 5's d-cycles total
    (transpose, addresses and indirect addressing, AABC) or send over its
    spread, one :class:`Discrepancy` per printed cell of the two columns.

    >>> [(c.column, c.printed, round(c.implied, 4)) for c in table10_check()][:2]
    [('d_cycles_aabc', 3.6, 3.5933), ('send', 3.57, 3.5742)]
    """
    t10, t5 = cm200_table(10), cm200_table(5)
    rows = _rows_matching(t10, t5)
    out = []
    for row, source in enumerate(rows):
        for column, numerator in (("d_cycles_aabc", "d_total"), ("send", "send")):
            out.append(Discrepancy(10, row, _where(t10, row), column, float(t10[column][row]),
                                   float(t5[numerator][source] / t5["spread"][source]),
                                   f"Table 5 {numerator} / Table 5 spread"))
    return out


# -- the performance models of §6 -----------------------------------------------------------

#: The constants printed in §6, in microseconds.
PRINTED_CONSTANTS = {
    "a1": 24.3, "a2": 5.69, "a3": 17.9, "a4": 50.33, "a5": 0.5,
    "b1": 41.94, "b2": 0.17, "b3": 24.18,
    "b4": 2056.35, "b5": 41.08, "b6": 2.02, "b7": 22.24,
    "b8": 14.78, "b9": 0.645,
    "b10": 33.61, "b11": 0.63, "b12": 16.98, "b13": 1834.05,
}


@dataclass(frozen=True)
class PerformanceModel:
    """A model of §6 that is linear in its constants.

    ``terms(d, words, S)`` returns one regressor per constant (numpy arrays),
    so that the model time is ``sum(c_k * term_k)`` microseconds.  ``data``
    names the measured columns it is fitted to: ``(table, column)`` pairs.
    """
    name: str
    symbol: str          # the report's name, e.g. "T^B_{1-H,c}"
    formula: str         # LaTeX, as printed in the report
    constants: tuple
    terms: Callable
    data: tuple
    note: str = ""

    def predict(self, d, words, constants: dict | None = None, S: int = S_REAL8) -> np.ndarray:
        """Model time in microseconds (``constants`` default to the printed ones)."""
        c = PRINTED_CONSTANTS if constants is None else constants
        d, words = np.asarray(d, float), np.asarray(words, float)
        return sum(c[k] * t for k, t in zip(self.constants, self.terms(d, words, S)))


def _steps(d):
    return 2.0 ** d - 1


def _one_cycle_comm_printed(d, w, S):
    # (a1 + a2 ceil(M'S/2)) (2^d - 1)
    return _steps(d), np.ceil(w * S / 2) * _steps(d)


def _one_cycle_comm_words(d, w, S):
    # (a1 + a2 M'S) (2^d - 1): the reading the printed total and constants use
    return _steps(d), w * S * _steps(d)


def _one_cycle_reorder(d, w, S):
    # a3 + (a4 + a5 M'S) 2^d
    return np.ones_like(d * w), 2.0 ** d, w * S * 2.0 ** d


def _d_cycles_comm(d, w, S):
    # (b1 + (b2 2d + b3) ceil(M'S/(2d))) (2^d - 1)
    pairs = np.ceil(w * S / (2 * d))
    return _steps(d), 2 * d * pairs * _steps(d), pairs * _steps(d)


def _d_cycles_index_compute(d, w, S):
    # b4 + [d (b5 + b6 floor(M'/(2d))) + b7 (M' mod 2d)] (2^d - 1)
    return (np.ones_like(d * w), d * _steps(d), d * np.floor(w / (2 * d)) * _steps(d),
            np.mod(w, 2 * d) * _steps(d))


def _d_cycles_reorder(d, w, S):
    # (b8 + b9 M'S) 2^d
    return 2.0 ** d, w * S * 2.0 ** d


def _d_cycles_index_move(d, w, S):
    # (b10 + (b11 2d + b12) ceil(M'/(2d))) (2^d - 1) + b13
    blocks = np.ceil(w / (2 * d))
    return _steps(d), 2 * d * blocks * _steps(d), blocks * _steps(d), np.ones_like(d * w)


#: The six models of §6, by name, each with the measured columns it is fitted to.
MODELS = {m.name: m for m in (
    PerformanceModel(
        "one_cycle_comm", "T^B_{1-H,c}",
        r"(a_1 + a_2 \lceil M' S / 2 \rceil)(2^d - 1)", ("a1", "a2"),
        _one_cycle_comm_printed, ((4, "one_aabc"),),
        "As printed. With the printed a2 = 5.69 this predicts 29% to 50% too little for "
        "every one-cycle AABC time of Table 4; the fit gives a2 = 2 x 5.69 (see one_cycle_comm_words)."),
    PerformanceModel(
        "one_cycle_comm_words", "T^B_{1-H,c}",
        r"(a_1 + a_2 M' S)(2^d - 1)", ("a1", "a2"),
        _one_cycle_comm_words, ((4, "one_aabc"),),
        "The reading the printed constants and the printed total T^B_{1-H} "
        "(-5.69 M'S + 6.19 M'S 2^d) use: a2 per 32-bit word."),
    PerformanceModel(
        "one_cycle_reorder", "T^B_{1-H,l}",
        r"a_3 + (a_4 + a_5 M' S) 2^d", ("a3", "a4", "a5"),
        _one_cycle_reorder, ((4, "one_indir"), (5, "one_indir"))),
    PerformanceModel(
        "d_cycles_comm", "T^B_{d-H,c}",
        r"(b_1 + (b_2 \cdot 2d + b_3) \lceil M' S / 2d \rceil)(2^d - 1)", ("b1", "b2", "b3"),
        _d_cycles_comm, ((4, "d_aabc"), (5, "d_aabc"))),
    PerformanceModel(
        "d_cycles_index_compute", "T^B_{d-H,ic}",
        r"b_4 + [d(b_5 + b_6 \lfloor M' / 2d \rfloor) + b_7 (M' \bmod 2d)](2^d - 1)",
        ("b4", "b5", "b6", "b7"), _d_cycles_index_compute, ((7, "comp"), (8, "comp"))),
    PerformanceModel(
        "d_cycles_reorder", "T^B_{d-H,l}",
        r"(b_8 + b_9 M' S) 2^d", ("b8", "b9"),
        _d_cycles_reorder, ((4, "d_indir"), (7, "indir"), (8, "d_indir"))),
    PerformanceModel(
        "d_cycles_index_move", "T_{d-H,im}",
        r"(b_{10} + (b_{11} \cdot 2d + b_{12}) \lceil M' / 2d \rceil)(2^d - 1) + b_{13}",
        ("b10", "b11", "b12", "b13"), _d_cycles_index_move, ((7, "move"), (8, "move"))),
)}


@dataclass(frozen=True)
class ModelFit:
    """A least-squares fit of one model to its measured columns (times in microseconds)."""
    model: PerformanceModel
    d: np.ndarray
    words: np.ndarray
    measured: np.ndarray
    fitted_constants: dict
    printed_constants: dict
    fitted: np.ndarray          # model with the fitted constants
    printed: np.ndarray         # model with the printed constants

    @property
    def residuals(self) -> np.ndarray:
        """measured - fitted (microseconds)."""
        return self.measured - self.fitted

    @property
    def relative_residuals(self) -> np.ndarray:
        return self.residuals / self.measured

    @property
    def printed_relative_residuals(self) -> np.ndarray:
        """(measured - printed model) / measured: how well the report's own constants fit."""
        return (self.measured - self.printed) / self.measured


def _measurements(model: PerformanceModel):
    d, words, measured = [], [], []
    for number, column in model.data:
        table = cm200_table(number)
        keep = (table["nodes"] > 1) & ~np.isnan(table[column])   # one node: no steps
        d.append(table.d[keep])
        words.append(table["words_per_node"][keep])
        measured.append(table[column][keep] * 1000.0)            # ms -> microseconds
    return np.concatenate(d), np.concatenate(words), np.concatenate(measured)


@lru_cache(maxsize=None)
def fit_model(name: str) -> ModelFit:
    """Fit model ``name`` of :data:`MODELS` to its measured columns by ``numpy.linalg.lstsq``.

    Ordinary (absolute) least squares in microseconds, as a reader holding
    the tables would do it.

    Examples
    --------
    >>> fit = fit_model("d_cycles_index_compute")
    >>> round(fit.fitted_constants["b7"], 2), fit.printed_constants["b7"]
    (22.24, 22.24)
    """
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; the models are {list(MODELS)}")
    model = MODELS[name]
    d, words, measured = _measurements(model)
    design = np.column_stack(model.terms(d, words, S_REAL8))
    solution = np.linalg.lstsq(design, measured, rcond=None)[0]
    fitted = dict(zip(model.constants, (float(x) for x in solution)))
    printed = {k: PRINTED_CONSTANTS[k] for k in model.constants}
    return ModelFit(model, d, words, measured, fitted, printed,
                    design @ solution, model.predict(d, words, printed))


def fitted_constants(one_cycle: str = "one_cycle_comm_words") -> dict:
    """All constants a1..a5, b1..b13 from the fits (microseconds).

    ``one_cycle`` chooses which one-cycle communication model supplies a1 and
    a2: ``"one_cycle_comm_words"`` (a2 per 32-bit word, the reading the totals
    use) or ``"one_cycle_comm"`` (as printed, a2 per pair of words).
    """
    if one_cycle not in ("one_cycle_comm_words", "one_cycle_comm"):
        raise ValueError(f"one_cycle must be 'one_cycle_comm_words' or 'one_cycle_comm', "
                         f"got {one_cycle!r}")
    out = {}
    for name in MODELS:
        if name.startswith("one_cycle_comm") and name != one_cycle:
            continue
        out.update(fit_model(name).fitted_constants)
    return out


class ConstantRow(NamedTuple):
    model: str
    constant: str
    printed: float
    fitted: float
    ratio: float                # fitted / printed


def constants_comparison() -> list:
    """One row per (model, constant): printed value, fitted value, their ratio."""
    rows = []
    for name in MODELS:
        fit = fit_model(name)
        for k in fit.model.constants:
            p, f = fit.printed_constants[k], fit.fitted_constants[k]
            rows.append(ConstantRow(name, k, p, f, f / p))
    return rows


# -- totals and the crossover of Table 9 ----------------------------------------------------

def _check_d(d):
    return check_positive_int("d", d)


def one_cycle_time(d, words, constants: dict | None = None, S: int = S_REAL8):
    """T^B_{1-H} = T^B_{1-H,c} + T^B_{1-H,l}: one-cycle broadcast with reordering, microseconds.

    Uses a2 per 32-bit word, the reading of the report's printed total
    ``-6.38 - 5.69 M'S + 74.6 2^d + 6.19 M'S 2^d`` (§6.1).

    >>> printed_total = -6.38 - 5.69 * 512 + 74.6 * 16 + 6.19 * 512 * 16   # d = 4, M'S = 512
    >>> round(float(one_cycle_time(4, 256)) - printed_total, 1)
    0.5
    """
    c = PRINTED_CONSTANTS if constants is None else constants
    return (MODELS["one_cycle_comm_words"].predict(d, words, c, S)
            + MODELS["one_cycle_reorder"].predict(d, words, c, S))


def d_cycles_time(d, words, index: str = "compute", constants: dict | None = None,
                  S: int = S_REAL8):
    """T^B_{d-H} (``index="compute"``) or T^B_{d-H,m} (``"move"``), microseconds.

    Data motion + local reordering + computing the indices locally or moving
    them with the data (§6.1).
    """
    if index not in ("compute", "move"):
        raise ValueError(f"index must be 'compute' or 'move', got {index!r}")
    c = PRINTED_CONSTANTS if constants is None else constants
    indices = MODELS["d_cycles_index_compute" if index == "compute" else "d_cycles_index_move"]
    return (MODELS["d_cycles_comm"].predict(d, words, c, S)
            + indices.predict(d, words, c, S)
            + MODELS["d_cycles_reorder"].predict(d, words, c, S))


def cycles_crossover(d, index: str = "compute", constants: dict | None = None,
                     step: str = "2d", limit: int = 4096):
    """Smallest M' at which d cycles beat one cycle on 2**d nodes (Table 9), or None.

    ``step="2d"`` tries M' = 2d, 4d, 6d, ... (whole blocks of 2d elements,
    the sizes Table 9's entries are multiples of); ``step="1"`` tries every
    M' = 1, 2, 3, ....  None when d cycles are not faster for any M' up to
    ``limit``.

    >>> [cycles_crossover(d) for d in (3, 4, 11)]
    [240, 80, 66]
    """
    d = _check_d(d)
    if step not in ("2d", "1"):
        raise ValueError(f"step must be '2d' or '1', got {step!r}")
    stride = 2 * d if step == "2d" else 1
    words = np.arange(stride, limit + 1, stride, dtype=float)
    faster = d_cycles_time(d, words, index, constants) < one_cycle_time(d, words, constants)
    return int(words[np.argmax(faster)]) if faster.any() else None


class CrossoverRow(NamedTuple):
    nodes: int
    paper_compute: int | None
    model_compute: int | None
    paper_move: int | None
    model_move: int | None


def table9_comparison(constants: dict | None = None, step: str = "2d") -> list:
    """Table 9 beside :func:`cycles_crossover` for d = 1..11 (printed constants by default)."""
    t9 = cm200_table(9)
    rows = []
    for nodes, comp, move in zip(t9["nodes"], t9["d_h_c"], t9["d_h_m"]):
        d = int(round(math.log2(nodes)))
        rows.append(CrossoverRow(
            int(nodes), None if np.isnan(comp) else int(comp),
            cycles_crossover(d, "compute", constants, step),
            None if np.isnan(move) else int(move),
            cycles_crossover(d, "move", constants, step)))
    return rows


# -- Table 2: element transfers in sequence ---------------------------------------------------

def _c(x):
    return math.ceil(x)


def _channels(d, reading):
    """The divisor our copy prints as 2^d where a node's 2d channels are meant ("2d" reading)."""
    return 2 ** d if reading == "printed" else 2 * d


#: Table 2's rows: key -> (ordering, label, formula(d, M, reading)).
TABLE2_OPERATIONS = {
    "one_cycle": ("column major", "broadcast using single Hamiltonian cycle",
                  lambda d, M, r: _c(M / (2 * 2 ** d)) * (2 ** d - 1)),
    "d_cycles": ("column major", "broadcast, d Hamiltonian cycles",
                 lambda d, M, r: _c(M / (_channels(d, r) * 2 ** d)) * (2 ** d - 1)),
    "one_node_at_a_time": ("column major", "broadcast from one node at a time (alt. 1)",
                           lambda d, M, r: (_c(M / (_channels(d, r) * 2 ** d)) + d) * 2 ** d),
    "gather_broadcast": ("column major", "gather followed by broadcast (alt. 3)",
                         lambda d, M, r: 2 * _c(M / _channels(d, r)) + d),
    "rotated_binomial": ("column major", "broadcast based on rotated binomial trees (alt. 4)",
                         lambda d, M, r: _c(M / (_channels(d, r) * 2 ** d)) * (2 ** d - 1)),
    "reduce_and_spread_transpose": ("column major", "reduce-and-spread, transpose",
                                    lambda d, M, r: _c(M / (_channels(d, r) * 2 ** d)) * d
                                    + _c(M / (2 * 2 * 2 ** (2 * d)))),
    "transpose_one_cycle": ("row major", "transpose, broadcast using single H. cycle",
                            lambda d, M, r: _c(M / (2 * 2 * 2 ** d))
                            + _c(M / (2 * 2 ** d)) * (2 ** d - 1)),
    "transpose_d_cycles": ("row major", "transpose, broadcast using d H. cycles",
                           lambda d, M, r: _c(M / (2 * 2 * 2 ** d))
                           + _c(M / (_channels(d, r) * 2 ** d)) * (2 ** d - 1)),
    "transpose_one_node_at_a_time": ("row major",
                                     "transpose, broadcast from one node at a time (alt. 1)",
                                     lambda d, M, r: _c(M / (2 * 2 * 2 ** d))
                                     + (_c(M / (_channels(d, r) * 2 ** d)) + d) * 2 ** d),
    "transpose_gather_broadcast": ("row major", "transpose, gather, broadcast (alt. 3)",
                                   lambda d, M, r: _c(M / (2 * 2 * 2 ** d))
                                   + 2 * _c(M / _channels(d, r))),
    "reduce_and_spread": ("row major", "reduce-and-spread",
                          lambda d, M, r: _c(M / _channels(d, r)) * d),
}


def broadcast_lower_bound(d: int, M: int) -> int:
    """Element transfers any all-to-all broadcast needs on a d-cube with two channels per link.

    Each node must receive the M (1 - 2^-d) elements it does not hold through
    its 2d incoming channels: ceil(M (2^d - 1) / (2d 2^d)).
    """
    d = _check_d(d)
    return _c(M * (2 ** d - 1) / (2 * d * 2 ** d))


def table2_transfers(operation: str, d: int, M: int, reading: str = "printed") -> int:
    """Table 2: element transfers in sequence of ``operation`` on 2**d nodes.

    ``M`` is the total number of 32-bit elements before the broadcast (so a
    node holds M / 2**d).  ``reading="printed"`` evaluates the formulas as our
    copy of the report prints them; ``reading="2d"`` reads the factor 2^d as
    2d (a node's d links, two channels each) where a row spreads its data over
    all channels of a node: the d-cycles, alt. 1, alt. 4 and gather (alt. 3)
    rows and the reduce-and-spread rows.  As printed the broadcast rows fall
    below :func:`broadcast_lower_bound` for d >= 3, which no algorithm can,
    and the row-major reduce-and-spread row is not the factor d above the
    d-cycles reduction that §5 says it is; the two readings agree for d <= 2.
    Where a row's two printed forms differ (alt. 3 after a transpose), the
    left-hand one is used.  For a reduction, ``M`` is the length of the
    vector being reduced (what every node holds before, and all nodes
    together after, the reduction).

    >>> table2_transfers("one_cycle", 3, 8 * 256), table2_transfers("d_cycles", 3, 8 * 256, "2d")
    (896, 301)
    >>> table2_transfers("d_cycles", 3, 8 * 256) < broadcast_lower_bound(3, 8 * 256)
    True
    """
    if operation not in TABLE2_OPERATIONS:
        raise ValueError(f"unknown operation {operation!r}; Table 2 has {list(TABLE2_OPERATIONS)}")
    if reading not in ("printed", "2d"):
        raise ValueError(f"reading must be 'printed' or '2d', got {reading!r}")
    d = _check_d(d)
    if not isinstance(M, Integral) or isinstance(M, bool) or M < 0:
        raise ValueError(f"M must be a non-negative integer number of elements, got M={M!r}")
    return int(TABLE2_OPERATIONS[operation][2](d, int(M), reading))


#: Where the report's formulas or cells and its own data disagree (found by this module).
PAPER_ISSUES = (
    "§6.1, T^B_{1-H,c}: printed as (a1 + a2 ceil(M'S/2))(2^d - 1) with a2 = 5.69 us, but "
    "Table 4's one-cycle AABC times need a2 = 11.37 us in that form; a2 = 5.69 fits only as "
    "(a1 + a2 M'S)(2^d - 1), which is also what the printed total T^B_{1-H} uses.",
    "§6.1, T^B_{d-H}: the printed total writes 2.02 [M/(2d)] where the index-computation "
    "model T^B_{d-H,ic} has b6 floor(M'/(2d)) (M' per node, not the total M).",
    "§6.1, T_{d-H,im}: the printed b10..b13 (33.61, 0.63, 16.98, 1834.05) miss the 'Move' "
    "columns of Tables 7 and 8, and not in one direction: they overestimate every row of Table 7 "
    "(M' = 128) by 5% to 48% (48% at 2 nodes, 16% at 2048), but underestimate Table 8 "
    "(M' = 256) at 4 to 64 nodes by 2% to 5% (and overestimate it at 2 and at 128 to 512 "
    "nodes); a least-squares fit gives quite different constants (see "
    "fit_model('d_cycles_index_move')).",
    "Table 9, row d-H,m: the printed models reproduce the d-H,c row exactly (first M' that is a "
    "multiple of 2d) and the d-H,m row for 64..2048 nodes, but not 55 (16 nodes) and 14 "
    "(32 nodes): the models give 72 and 30.",
    "Table 2: our copy prints 2^d where the rows that use all channels of a node need 2d "
    "(d cycles: ceil(M/(2^d 2^d)) for ceil(M/(2d 2^d)); gather: ceil(M/2^d) for ceil(M/2d); "
    "reduce-and-spread: ceil(M/2^d) d for ceil(M/2d) d, the factor d above the d-cycles "
    "reduction that §5 states); as printed the broadcast rows beat the channel lower bound for "
    "d >= 3. The row 'transpose, gather, "
    "broadcast' prints two right-hand sides that differ (M/(2*2*2^d) vs M/(2*2^d)).",
)
