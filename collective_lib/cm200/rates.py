"""Data motion rates (Table 18) and the broadcast times of Fig. 22, checked against the report's timings.

Source: K. K. Mathur and S. L. Johnsson, *All-to-All Communication on the
Connection Machine CM-200*, Harvard TR-02-93 (1993): §6.1 (Tables 5, 7 and 8,
Fig. 22, the claims about when d cycles and moving indices pay) and §7
(Table 18, the peak rates of the summary).

Table 18 prints rates in "Mbytes/s per node" but not how they were computed.
A rate is (bytes moved into a node) / (time); :data:`TABLE18_READINGS` holds,
for each column, the reading that reproduces it best from the report's own
timings, and :func:`table18_check` compares every printed cell with it:

* ``received``: an all-to-all broadcast brings each node the M' elements of
  every other node, ``(p - 1) M' 8`` bytes;
* ``gathered``: a spread copies the whole gathered vector into every node,
  ``p M' 8`` bytes.

Measured times come from Tables 5 and 7; where the report prints no time at
M' = 128 (the one-cycle columns: Table 8 has 256 elements and at most 512
nodes) the rates are read from the §6.1 models (:mod:`.models`).  A
"Mbyte" is 2**20 bytes in the broadcast columns (the summary's
"2.54 Gbytes/s" is 1.27 x 2048 / 1024) but 10**6 bytes in the spread
column: no single convention reproduces every column.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..validate import check_positive_int
from .models import MODELS, PRINTED_CONSTANTS, cm200_table, d_cycles_time, one_cycle_time

__all__ = [
    "TABLE18_COLUMNS", "MIB", "MB", "RateReading", "TABLE18_READINGS", "ONE_CYCLE_ALTERNATIVES",
    "RateCheck", "bytes_per_node", "rate_reading_times", "table18_check", "table18_summary",
    "aggregate_rate", "first_nodes_from", "measured_crossovers", "model_crossovers",
]

#: Table 18's columns, left to right.
TABLE18_COLUMNS = ("spread", "one_cycle", "d_cycles", "one_cycle_reorder", "d_cycles_reorder",
                   "move_index")

MIB = 2.0 ** 20     # bytes per "Mbyte" in the broadcast columns
MB = 1.0e6          # bytes per "Mbyte" in the spread column
_ELEMENT_BYTES = 8  # 64-bit elements


class RateReading(NamedTuple):
    """How one column of Table 18 is computed: which times, which bytes, which Mbyte.

    ``source`` is ``("table", number, column)`` for a measured column or
    ``("model", name)`` for a §6.1 total (``name`` one of ``"one_cycle_comm"``,
    ``"one_cycle"``, ``"d_cycles_compute"``, ``"d_cycles_move"``,
    ``"d_cycles_comm"``).
    """
    column: str
    source: tuple
    words: int            # M', 64-bit elements per node before the broadcast
    bytes: str            # "received" or "gathered"
    mbyte: float          # bytes per Mbyte
    description: str


#: The reading that reproduces each column of Table 18 best (see the module docstring).
TABLE18_READINGS = {r.column: r for r in (
    RateReading("spread", ("table", 5, "spread"), 256, "gathered", MB,
                "p M' 8 bytes over Table 5's spread time (M' = 256, not 128)"),
    RateReading("one_cycle", ("model", "one_cycle_comm"), 128, "received", MIB,
                "the one-cycle data motion model (a1 + a2 M'S)(2^d - 1), M' = 128"),
    RateReading("d_cycles", ("table", 7, "aabc"), 128, "received", MIB,
                "Table 7's d-cycles AABC time, M' = 128"),
    RateReading("one_cycle_reorder", ("model", "one_cycle"), 128, "received", MIB,
                "the one-cycle total model T^B_{1-H} (motion + reordering), M' = 128"),
    RateReading("d_cycles_reorder", ("table", 7, "comp_total"), 128, "received", MIB,
                "Table 7's total with indices computed, M' = 128"),
    RateReading("move_index", ("table", 7, "move_total"), 128, "received", MIB,
                "Table 7's total with indices moved, M' = 128"),
)}

#: Measured one-cycle times that Table 18's one-cycle columns could also come from.
ONE_CYCLE_ALTERNATIVES = (
    RateReading("one_cycle", ("table", 4, "one_aabc"), 128, "received", MIB,
                "Table 4's one-cycle AABC time (16 nodes only), M' = 128"),
    RateReading("one_cycle", ("table", 8, "one_aabc"), 256, "received", MIB,
                "Table 8's one-cycle AABC time, M' = 256"),
    RateReading("one_cycle_reorder", ("table", 8, "one_total"), 256, "received", MIB,
                "Table 8's one-cycle total (AABC + Indir.), M' = 256"),
)

_MODEL_TIMES: dict = {   # name -> time in microseconds of (d, words, constants)
    "one_cycle_comm": lambda d, w, c: MODELS["one_cycle_comm_words"].predict(d, w, c),
    "one_cycle": one_cycle_time,
    "d_cycles_comm": lambda d, w, c: MODELS["d_cycles_comm"].predict(d, w, c),
    "d_cycles_compute": lambda d, w, c: d_cycles_time(d, w, "compute", c),
    "d_cycles_move": lambda d, w, c: d_cycles_time(d, w, "move", c),
}


def bytes_per_node(nodes, words: int, kind: str = "received") -> np.ndarray:
    """Bytes that reach one node: ``(p - 1) M' 8`` (``"received"``) or ``p M' 8`` (``"gathered"``).

    >>> float(bytes_per_node(2048, 128)), float(bytes_per_node(2, 256, "gathered"))
    (2096128.0, 4096.0)
    """
    if kind not in ("received", "gathered"):
        raise ValueError(f"kind must be 'received' or 'gathered', got {kind!r}")
    nodes = np.asarray(nodes, float)
    if np.any(nodes < 1):
        raise ValueError(f"nodes must be >= 1, got {nodes}")
    return (nodes - (kind == "received")) * words * _ELEMENT_BYTES


def rate_reading_times(reading: RateReading, nodes, constants: dict | None = None) -> np.ndarray:
    """The times (ms) a reading uses on each node count in ``nodes``; NaN where there is none.

    A table reading looks the node count up in the table (rows with M' =
    ``reading.words``); a model reading evaluates the §6.1 model (printed
    constants unless ``constants`` is given).
    """
    nodes = np.asarray(nodes, float)
    kind = reading.source[0]
    if kind == "table":
        _, number, column = reading.source
        table = cm200_table(number)
        out = np.full(nodes.shape, np.nan)
        for i, p in enumerate(nodes):
            match = (table["nodes"] == p) & (table["words_per_node"] == reading.words)
            if match.any():
                out[i] = table[column][np.flatnonzero(match)[0]]
        return out
    if kind == "model":
        if reading.source[1] not in _MODEL_TIMES:
            raise ValueError(f"unknown model {reading.source[1]!r}; choose one of "
                             f"{list(_MODEL_TIMES)}")
        c = PRINTED_CONSTANTS if constants is None else constants
        model = _MODEL_TIMES[reading.source[1]]
        return np.array([model(int(round(np.log2(p))), reading.words, c) / 1000.0
                         for p in nodes])
    raise ValueError(f"a reading's source is ('table', n, column) or ('model', name), "
                     f"got {reading.source!r}")


class RateCheck(NamedTuple):
    """One printed cell of Table 18 beside the rate a reading implies."""
    nodes: int
    printed: float
    implied: float
    time_ms: float      # the time the implied rate is computed from
    status: str         # "rounds" (equal after rounding), "one unit" (within 0.01), "differs"


def _status(printed, implied, slack):
    if abs(printed - implied) <= 0.005 + slack + 1e-9:
        return "rounds"
    if abs(printed - implied) <= 0.01 + slack + 1e-9:
        return "one unit"
    return "differs"


def table18_check(column: str, reading: RateReading | None = None,
                  constants: dict | None = None) -> list:
    """Every printed cell of Table 18's ``column`` against the rate ``reading`` implies.

    ``rate = bytes_per_node / time / Mbyte``.  A cell "rounds" when the
    printed rate is the implied one rounded to two decimals, allowing also for
    the rounding of a measured time to its printed digits; "one unit" when it
    is off by at most 0.01; otherwise it "differs".  Rows without a printed
    cell or without a time are left out.

    >>> [c.status for c in table18_check("d_cycles")][:4]
    ['rounds', 'rounds', 'rounds', 'rounds']
    """
    if column not in TABLE18_COLUMNS:
        raise ValueError(f"Table 18 has no column {column!r}; it has {TABLE18_COLUMNS}")
    reading = TABLE18_READINGS[column] if reading is None else reading
    t18 = cm200_table(18)
    nodes, printed = t18["nodes"], t18[column]
    times = rate_reading_times(reading, nodes, constants)
    implied = bytes_per_node(nodes, reading.words, reading.bytes) / (times / 1000.0) / reading.mbyte
    # a measured time printed to 2 decimals is known to +-0.005 ms
    slack = implied * 0.005 / times if reading.source[0] == "table" else np.zeros_like(times)
    return [RateCheck(int(p), float(r), float(i), float(t), _status(r, i, s))
            for p, r, i, t, s in zip(nodes, printed, implied, times, slack)
            if not (np.isnan(r) or np.isnan(t))]


def table18_summary(constants: dict | None = None) -> dict:
    """``{column: {"rounds": n, "one unit": n, "differs": n}}`` for :data:`TABLE18_READINGS`."""
    out = {}
    for column in TABLE18_COLUMNS:
        counts = {"rounds": 0, "one unit": 0, "differs": 0}
        for check in table18_check(column, constants=constants):
            counts[check.status] += 1
        out[column] = counts
    return out


def aggregate_rate(column: str, nodes: int = 2048, per_gbyte: float = 1024.0) -> float:
    """The machine's rate in Gbytes/s: Table 18's per-node rate times ``nodes`` / ``per_gbyte``.

    The summary (§7) quotes 2.54 Gbytes/s for moved indices and 5.4 for the
    bare d-cycles motion on 2048 nodes: Gbytes of 1024 Mbytes.

    >>> round(aggregate_rate("move_index"), 2), round(aggregate_rate("d_cycles"), 2)
    (2.54, 5.4)
    """
    if column not in TABLE18_COLUMNS:
        raise ValueError(f"Table 18 has no column {column!r}; it has {TABLE18_COLUMNS}")
    t18 = cm200_table(18)
    match = t18["nodes"] == nodes
    if not match.any():
        raise ValueError(f"Table 18 has no row for {nodes!r} nodes")
    return float(t18[column][match][0] * nodes / per_gbyte)


# -- Fig. 22: which broadcast is faster, from how many nodes on ------------------------------------

def first_nodes_from(nodes, faster, slower):
    """The smallest node count from which ``faster < slower`` at every larger count, or None.

    >>> first_nodes_from([2, 4, 8, 16], [5, 5, 1, 1], [3, 4, 2, 2])
    8
    """
    nodes, wins = np.asarray(nodes), np.asarray(faster) < np.asarray(slower)
    if not wins[-1]:
        return None
    losing = np.flatnonzero(~wins)
    return int(nodes[0] if len(losing) == 0 else nodes[losing[-1] + 1])


#: (claim, table, faster column, slower column): the comparisons behind §6.1's conclusions.
_COMPARISONS = (
    ("d cycles, indices computed, beat one cycle", 8, "comp_total", "one_total"),
    ("d cycles, indices moved, beat one cycle", 8, "move_total", "one_total"),
    ("moving indices beats computing them", 7, "move_total", "comp_total"),
    ("moving indices beats computing them", 8, "move_total", "comp_total"),
    ("moving indices beats computing them (reduction)", 17, "move_total", "comp_total"),
)


def measured_crossovers() -> list:
    """``[(claim, table, M', nodes from which it holds)]`` from Tables 7, 8 and 17.

    >>> [(table, nodes) for _, table, _, nodes in measured_crossovers()]
    [(8, 16), (8, 16), (7, 32), (8, 64), (17, 64)]
    """
    out = []
    for claim, number, faster, slower in _COMPARISONS:
        table = cm200_table(number)
        keep = ~np.isnan(table[faster]) & ~np.isnan(table[slower])
        out.append((claim, number, int(table["words_per_node"][0]),
                    first_nodes_from(table["nodes"][keep], table[faster][keep],
                                     table[slower][keep])))
    return out


def model_crossovers(words: int, constants: dict | None = None, max_d: int = 11) -> dict:
    """The same claims from the §6.1 models on 2..2**max_d nodes with M' = ``words``.

    Returns ``{claim: nodes}`` for the broadcast claims of
    :func:`measured_crossovers` (None where a claim never holds up to
    2**max_d nodes).

    >>> model_crossovers(256)["moving indices beats computing them"]
    64
    """
    check_positive_int("words", words)
    c = PRINTED_CONSTANTS if constants is None else constants
    d = np.arange(1, max_d + 1)
    one = np.array([one_cycle_time(int(k), words, c) for k in d])
    comp = np.array([d_cycles_time(int(k), words, "compute", c) for k in d])
    move = np.array([d_cycles_time(int(k), words, "move", c) for k in d])
    nodes = 2 ** d
    return {_COMPARISONS[0][0]: first_nodes_from(nodes, comp, one),
            _COMPARISONS[1][0]: first_nodes_from(nodes, move, one),
            _COMPARISONS[2][0]: first_nodes_from(nodes, move, comp)}

