"""Matrix-vector multiplication on a two-dimensional nodal array (Mathur and Johnsson §2).

Mathur and Johnsson, *All-to-All Communication on the Connection Machine
CM-200*, TR-02-93 (1993), §2 and Figs. 2-4: a P x Q matrix A is spread in
blocks over a ``rows x cols`` array of nodes labelled in column-major order
(node ``c * rows + r`` holds block (r, c)), and the vectors x and y are spread
evenly over all nodes as one-dimensional arrays, in label order.  Then

1. all-to-all broadcast of x *within the columns of nodes*: node (r, c) holds
   piece r of x's c-th block and gets the whole block;
2. local matrix-vector product A(r, c) x(c): a partial y(r);
3. all-to-all reduction *within the rows of nodes*: node (r, c) ends with
   piece c of y(r), summed over the row;
4. reordering of y from row-major to column-major order (a shuffle): piece
   (r, c) belongs to node ``r * cols + c``.

Any all-gather and all-to-all reduction program of the catalog can do steps 1
and 3; :func:`collective_lib.groups.in_group` runs such a program on a subset
of the PEs.

The report's §7 times the product of the CMSSL library on 256 to 2048 nodes
(Table 19, Fig. 23).  :func:`table19_points` reads that table,
:func:`table19_consistency` checks its rates against its times
(Mflop/s = 2 P**2 / time), and :func:`fit_flop_rate` predicts its times by the
§6.1 communication models (:mod:`.models`) for steps 1 and 3 plus one local
flop rate fitted to the table.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..algorithms.alltoall import all_to_all_bc_hcube, all_to_all_red_hcube
from ..groups import in_group
from ..ops import compute, sendrecv
from ..simulator import simulate
from ..validate import check_positive_int, check_power_of_two
from .models import PRINTED_CONSTANTS, cm200_table, d_cycles_time, one_cycle_time

__all__ = ["matvec_2d", "matvec_inputs", "matvec_result", "simulate_matvec",
           "TABLE19_NODES", "TABLE19_OPERATIONS", "Table19Point", "table19_points",
           "matvec_flops", "Table19Check", "table19_consistency", "nodal_array",
           "axis_collective_time", "matvec_comm_time", "FlopRateFit", "fit_flop_rate"]


def matvec_2d(me, p, data, rows, cols, allgather=all_to_all_bc_hcube,
              reduction=all_to_all_red_hcube, flop_time=0.0):
    """y = A x on a rows x cols nodal array in column-major order (Mathur & Johnsson §2).

    ``data`` is ``(A_block, x_piece)`` as :func:`matvec_inputs` lays it out;
    the result is this node's piece of y in the same one-dimensional layout
    as x.  ``allgather`` broadcasts x within the columns of nodes,
    ``reduction`` accumulates the partial products within the rows of nodes
    (any all-gather / all-to-all reduction program of the catalog, run with
    :func:`in_group`); the defaults, the hypercube collectives of chapter 5
    (Grama Algorithms 4.7 and 4.8), need rows and cols to be powers of two.
    ``flop_time`` charges the local product 2 * (block size) flops.  p must
    equal rows * cols.
    """
    if p != rows * cols:
        raise ValueError(f"matvec_2d needs p = rows * cols, got p={p}, rows={rows}, cols={cols}")
    a_block, x_piece = data
    c, r = divmod(me, rows)                                   # column-major node labels
    # ALL-TO-ALL BROADCAST OF THE INPUT VECTOR WITHIN COLUMNS OF NODES
    column = [c * rows + i for i in range(rows)]
    x_block = np.concatenate((yield from in_group(allgather, column, me, x_piece)))
    # LOCAL MATRIX-VECTOR MULTIPLICATION
    partial = a_block @ x_block
    if flop_time:
        yield compute(2 * a_block.size * flop_time)
    # ALL-TO-ALL REDUCTION WITHIN ROWS OF NODES
    row = [j * rows + r for j in range(cols)]
    y_piece = yield from in_group(reduction, row, me, np.array_split(partial, cols), op=np.add)
    # REORDERING OF THE RESULT VECTOR FROM ROW MAJOR TO COLUMN MAJOR ORDER
    dest = r * cols + c
    if dest == me:
        return y_piece
    r_src, c_src = divmod(me, cols)                           # whose piece is mine
    return (yield sendrecv(dest, y_piece, c_src * rows + r_src))


def _check_shape(rows, cols):
    return check_positive_int("rows", rows), check_positive_int("cols", cols)


def matvec_inputs(A, x, rows, cols) -> list:
    """Lay A and x out on a rows x cols nodal array: a list of (A_block, x_piece) by node label.

    Node ``c * rows + r`` gets block (r, c) of A (``numpy.array_split`` of its
    rows into ``rows`` and of its columns into ``cols`` parts) and piece r of
    x's c-th block, so that x's pieces in label order are x itself.
    """
    rows, cols = _check_shape(rows, cols)
    A, x = np.asarray(A), np.asarray(x)
    if A.ndim != 2 or x.shape != (A.shape[1],):
        raise ValueError(f"need a matrix A and a vector x of matching size, got A of shape "
                         f"{A.shape} and x of shape {x.shape}")
    row_blocks = np.array_split(np.arange(A.shape[0]), rows)
    col_blocks = np.array_split(np.arange(A.shape[1]), cols)
    inputs = []
    for c in range(cols):
        x_pieces = np.array_split(x[col_blocks[c]], rows)
        for r in range(rows):
            inputs.append((A[np.ix_(row_blocks[r], col_blocks[c])], x_pieces[r]))
    return inputs


def matvec_result(results) -> np.ndarray:
    """y from the nodes' pieces, in label order."""
    return np.concatenate([np.asarray(piece) for piece in results])


def simulate_matvec(A, x, rows, cols, *, allgather=all_to_all_bc_hcube,
                    reduction=all_to_all_red_hcube, network=None, model=None,
                    flop_time=0.0, trace=False):
    """Simulate :func:`matvec_2d`; return ``(y, run)``.

    >>> A = np.arange(12.0).reshape(3, 4); x = np.ones(4)
    >>> y, run = simulate_matvec(A, x, rows=2, cols=2)
    >>> bool(np.allclose(y, A @ x))
    True
    """
    rows, cols = _check_shape(rows, cols)
    run = simulate(matvec_2d, rows * cols, matvec_inputs(A, x, rows, cols),
                   network=network, model=model, trace=trace, rows=rows, cols=cols,
                   allgather=allgather, reduction=reduction, flop_time=flop_time)
    return matvec_result(run.results), run


# -- Table 19: the CMSSL product on the CM-200 (§7, Fig. 23) -----------------------------------------

#: The node counts (columns) and operations of Table 19.
TABLE19_NODES = (256, 512, 1024, 2048)
TABLE19_OPERATIONS = {"mv": "matrix-vector", "vm": "vector-matrix"}


class Table19Point(NamedTuple):
    """One (operation, P, nodes) entry of Table 19; NaN where the report prints a dash."""
    operation: str      # "mv" or "vm"
    P: int              # the matrix is P x P
    nodes: int
    mflops: float
    ms: float


def _check_operation(operation):
    if operation not in TABLE19_OPERATIONS:
        raise ValueError(f"operation must be one of {list(TABLE19_OPERATIONS)}, got {operation!r}")
    return operation


def table19_points(operation: str | None = None) -> list:
    """Every entry of Table 19 with a printed rate or time (``operation`` None: both).

    >>> table19_points("mv")[0]
    Table19Point(operation='mv', P=1024, nodes=256, mflops=304.0, ms=6.9)
    """
    operations = list(TABLE19_OPERATIONS) if operation is None else [_check_operation(operation)]
    t19 = cm200_table(19)
    out = []
    for op in operations:
        for row, P in enumerate(t19["matrix_size"]):
            for n in TABLE19_NODES:
                rate, time = t19[f"{op}_mflops_{n}"][row], t19[f"{op}_ms_{n}"][row]
                if not (np.isnan(rate) and np.isnan(time)):
                    out.append(Table19Point(op, int(P), n, float(rate), float(time)))
    return out


def matvec_flops(P) -> np.ndarray:
    """Floating-point operations of y = A x for a P x P matrix: one multiply and one add per entry."""
    return 2.0 * np.asarray(P, float) ** 2


def _half_unit(value: float) -> float:
    """Half a unit of the last of three significant digits (Table 19 prints 6.90, 11.6, 104.0)."""
    return 0.5 * 10.0 ** (np.floor(np.log10(value)) - 2)


class Table19Check(NamedTuple):
    """A printed rate of Table 19 beside 2 P**2 / time, or the time a rate implies."""
    point: Table19Point
    implied_mflops: float     # from the printed time (NaN without one)
    implied_ms: float         # from the printed rate
    status: str               # "rounds", "differs", "no time" or "no rate"


def table19_consistency() -> list:
    """Check every rate of Table 19 against its time: Mflop/s = 2 P**2 / time.

    A rate "rounds" when it is within half a unit of 2 P**2 / t for some time
    t that rounds to the printed one (three significant digits).  Entries with
    only a rate ("no time") or only a time ("no rate") get the other implied.

    >>> sorted({c.status for c in table19_consistency()})
    ['no time', 'rounds']
    """
    out = []
    for point in table19_points():
        flops = matvec_flops(point.P)
        implied_ms = flops / (point.mflops * 1e3) if not np.isnan(point.mflops) else np.nan
        if np.isnan(point.ms) or np.isnan(point.mflops):
            status = "no time" if np.isnan(point.ms) else "no rate"
            implied = flops / (point.ms * 1e3) if not np.isnan(point.ms) else np.nan
            out.append(Table19Check(point, float(implied), float(implied_ms), status))
            continue
        implied = flops / (point.ms * 1e3)
        h = _half_unit(point.ms)
        low, high = flops / ((point.ms + h) * 1e3), flops / ((point.ms - h) * 1e3)
        ok = low - 0.5 <= point.mflops <= high + 0.5
        out.append(Table19Check(point, float(implied), float(implied_ms),
                                "rounds" if ok else "differs"))
    return out


def nodal_array(nodes: int) -> tuple:
    """The squarest ``rows x cols`` array of ``nodes`` (a power of two) nodes, rows >= cols.

    >>> nodal_array(256), nodal_array(2048)
    ((16, 16), (64, 32))
    """
    d = check_power_of_two("nodal_array", check_positive_int("nodes", nodes))
    return 2 ** ((d + 1) // 2), 2 ** (d // 2)


_ALGORITHMS = ("one cycle", "d cycles, indices computed", "d cycles, indices moved")


def axis_collective_time(d: int, words, constants: dict | None = None) -> tuple:
    """The fastest all-to-all broadcast of the §6.1 models on a d-cube: (microseconds, name).

    The models of one cycle (:func:`.models.one_cycle_time`) and of d cycles
    with indices computed or moved (:func:`.models.d_cycles_time`), each with
    its local reordering; a 0-cube (one node on the axis) costs nothing.
    """
    d = check_positive_int("d", d, least=0)
    if d == 0:
        return 0.0, "none"
    c = PRINTED_CONSTANTS if constants is None else constants
    times = (one_cycle_time(d, words, c), d_cycles_time(d, words, "compute", c),
             d_cycles_time(d, words, "move", c))
    best = int(np.argmin(times))
    return float(times[best]), _ALGORITHMS[best]


def matvec_comm_time(P: int, nodes: int, constants: dict | None = None) -> float:
    """Model time (ms) of phases 1 and 3 of y = A x on ``nodal_array(nodes)``.

    Phase 1 broadcasts x within the columns of ``rows`` nodes, phase 3 reduces
    y within the rows of ``cols`` nodes; every node holds M' = P / nodes
    elements of each vector.  The report gives no model for the reduction,
    so it is charged as a broadcast of the same size (§6.2 measures the
    reductions 6% to 12% slower); the final shuffle is not modelled.
    """
    P = check_positive_int("P", P)
    rows, cols = nodal_array(nodes)
    words = P / nodes
    return (axis_collective_time(rows.bit_length() - 1, words, constants)[0]
            + axis_collective_time(cols.bit_length() - 1, words, constants)[0]) / 1000.0


class FlopRateFit(NamedTuple):
    """Table 19's times against communication model + local flops at one fitted rate."""
    operation: str
    mflops_per_node: float     # the fitted local rate
    points: list               # Table19Point with a printed time
    comm_ms: np.ndarray        # matvec_comm_time of each point
    predicted_ms: np.ndarray
    measured_ms: np.ndarray

    @property
    def relative_errors(self) -> np.ndarray:
        """(predicted - measured) / measured."""
        return (self.predicted_ms - self.measured_ms) / self.measured_ms


def fit_flop_rate(operation: str = "mv", constants: dict | None = None) -> FlopRateFit:
    """Fit one local flop rate to Table 19's times of ``operation``.

    Model: ``time = matvec_comm_time(P, nodes) + (2 P**2 / nodes) / rate``;
    the one unknown, 1 / rate, by ordinary least squares on the times in
    milliseconds, the communication part taken from the §6.1 models with
    ``constants`` (the printed ones by default; pass
    :func:`.models.fitted_constants` for the refitted ones).
    """
    _check_operation(operation)
    points = [q for q in table19_points(operation) if not np.isnan(q.ms)]
    comm = np.array([matvec_comm_time(q.P, q.nodes, constants) for q in points])
    measured = np.array([q.ms for q in points])
    work = np.array([matvec_flops(q.P) / q.nodes for q in points])        # flops per node
    ms_per_flop = float(np.sum(work * (measured - comm)) / np.sum(work * work))
    if ms_per_flop <= 0:
        raise ValueError(f"the communication model exceeds the measured times of {operation!r}; "
                         "no positive flop rate fits")
    return FlopRateFit(operation, 1.0 / (ms_per_flop * 1e3), points, comm,
                       comm + ms_per_flop * work, measured)
