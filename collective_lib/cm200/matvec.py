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
"""
from __future__ import annotations

import numpy as np

from ..algorithms.alltoall import all_to_all_bc_hcube, all_to_all_red_hcube
from ..groups import in_group
from ..ops import compute, sendrecv
from ..simulator import simulate
from ..validate import check_positive_int

__all__ = ["matvec_2d", "matvec_inputs", "matvec_result", "simulate_matvec"]


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
