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
and 3; :func:`in_group` runs such a program on a subset of the PEs.
"""
from __future__ import annotations

import numpy as np

from .algorithms.alltoall import all_to_all_bc_ring, all_to_all_red_ring
from .ops import Compute, Multi, Recv, Send, SendRecv, compute, multi, recv, send, sendrecv
from .simulator import simulate
from .validate import check_positive_int

__all__ = ["in_group", "matvec_2d", "matvec_inputs", "matvec_result", "simulate_matvec"]


def in_group(program, members, me, data, **params):
    """Run the SPMD ``program`` among the PEs ``members`` only; return my result.

    Use it as ``result = yield from in_group(program, members, me, data)``.
    Inside, ``program`` sees ranks 0..len(members)-1 (its rank is
    ``members.index(me)``); every operation it yields is translated to the
    global ranks before it reaches the simulator, and the results come back
    unchanged.  All members must call it with the same ``members`` list.

    >>> from collective_lib import simulate
    >>> from collective_lib.algorithms.alltoall import all_to_all_bc_ring
    >>> def evens_gather(me, p, data):
    ...     if me % 2 == 0:
    ...         return (yield from in_group(all_to_all_bc_ring, [0, 2, 4], me, data))
    ...     yield from ()
    >>> simulate(evens_gather, 5, ["a", "b", "c", "d", "e"]).results
    [['a', 'c', 'e'], None, ['a', 'c', 'e'], None, ['a', 'c', 'e']]
    """
    members = tuple(members)
    if me not in members:
        raise ValueError(f"PE {me} runs a collective of the group {list(members)} it is not in")
    if len(set(members)) != len(members):
        raise ValueError(f"a group lists each PE once, got {list(members)}")
    gen = program(members.index(me), len(members), data, **params)
    value = None
    while True:
        try:
            op = gen.send(value)
        except StopIteration as done:
            return done.value
        value = yield _to_global(op, members)


def _to_global(op, members):
    """The same operation with group ranks replaced by global ranks."""
    if isinstance(op, SendRecv):
        return sendrecv(members[op.dst], op.data, members[op.src], op.words)
    if isinstance(op, Send):
        return send(members[op.dst], op.data, op.words)
    if isinstance(op, Recv):
        return recv(members[op.src])
    if isinstance(op, Multi):
        return multi([(members[dst], data, words) for dst, data, words in op.sends],
                     [members[src] for src in op.recvs])
    if isinstance(op, Compute):
        return op
    raise TypeError(f"in_group cannot translate the operation {op!r}")


def matvec_2d(me, p, data, rows, cols, allgather=all_to_all_bc_ring,
              reduction=all_to_all_red_ring, flop_time=0.0):
    """y = A x on a rows x cols nodal array in column-major order (Mathur & Johnsson §2).

    ``data`` is ``(A_block, x_piece)`` as :func:`matvec_inputs` lays it out;
    the result is this node's piece of y in the same one-dimensional layout
    as x.  ``allgather`` broadcasts x within the columns of nodes,
    ``reduction`` accumulates the partial products within the rows of nodes
    (any all-gather / all-to-all reduction program of the catalog, run with
    :func:`in_group`); ``flop_time`` charges the local product
    2 * (block size) flops.  p must equal rows * cols.
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


def simulate_matvec(A, x, rows, cols, *, allgather=all_to_all_bc_ring,
                    reduction=all_to_all_red_ring, network=None, model=None,
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
