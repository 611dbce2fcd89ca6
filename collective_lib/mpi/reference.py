"""The MPI library's own collective for each operation of the catalog.

Each function takes this rank's input of the catalog's operation (as numpy
arrays, see :func:`~collective_lib.mpi.backend.as_arrays`) and returns this
rank's result in the catalog's shape, so it is checked against the same
expected results as our programs and timed beside them.  Reductions use
``MPI.SUM``, the catalog's default operator (word-by-word addition).  The
name of the MPI routine is the operation's own (``Operation.mpi`` in
:mod:`collective_lib.collectives`).
"""
from __future__ import annotations

import numpy as np

from ..collectives import add, operations
from .backend import mpi

__all__ = ["MPI_COLLECTIVES", "mpi_collective_name", "run_mpi_collective"]


def _bcast(MPI, comm, data, m, root=0, **_):
    buffer = np.asarray(data) if comm.Get_rank() == root else np.empty(m, dtype=np.int64)
    comm.Bcast(buffer, root=root)
    return buffer


def _reduce(MPI, comm, data, m, root=0, **_):
    out = np.empty_like(data) if comm.Get_rank() == root else None
    comm.Reduce(data, out, op=MPI.SUM, root=root)
    return out


def _allreduce(MPI, comm, data, m, **_):
    out = np.empty_like(data)
    comm.Allreduce(data, out, op=MPI.SUM)
    return out


def _scan(MPI, comm, data, m, exclusive=False, **_):
    out = np.empty_like(data)
    if exclusive:
        comm.Exscan(data, out, op=MPI.SUM)
        return None if comm.Get_rank() == 0 else out     # MPI leaves rank 0's undefined
    comm.Scan(data, out, op=MPI.SUM)
    return out


def _scan_and_total(MPI, comm, data, m, exclusive=False, **_):
    return _scan(MPI, comm, data, m, exclusive), _allreduce(MPI, comm, data, m)


def _barrier(MPI, comm, data, m, **_):
    comm.Barrier()


def _gather(MPI, comm, data, m, root=0, **_):
    p = comm.Get_size()
    out = np.empty((p, len(data)), dtype=data.dtype) if comm.Get_rank() == root else None
    comm.Gather(data, out, root=root)
    return None if out is None else list(out)


def _scatter(MPI, comm, data, m, root=0, **_):
    block = np.asarray(data) if comm.Get_rank() == root else None
    out = np.empty(m, dtype=np.int64)
    comm.Scatter(block, out, root=root)
    return out


def _allgather(MPI, comm, data, m, **_):
    out = np.empty((comm.Get_size(), len(data)), dtype=data.dtype)
    comm.Allgather(data, out)
    return list(out)


def _reduce_scatter(MPI, comm, data, m, **_):
    out = np.empty(m, dtype=np.int64)
    comm.Reduce_scatter_block(np.asarray(data), out, op=MPI.SUM)
    return out


def _alltoall(MPI, comm, data, m, **_):
    block = np.asarray(data)
    out = np.empty_like(block)
    comm.Alltoall(block, out)
    return list(out)


def _alltoallv(MPI, comm, data, m, **_):
    blocks = [np.asarray(x, dtype=np.int64) for x in data]
    send_counts = np.array([b.size for b in blocks], dtype=np.int64)
    recv_counts = np.empty_like(send_counts)
    comm.Alltoall(send_counts, recv_counts)          # the sizes first, as MPI_Alltoallv needs them
    received = np.empty(int(recv_counts.sum()), dtype=np.int64)
    comm.Alltoallv([np.concatenate(blocks), send_counts], [received, recv_counts])
    return np.split(received, np.cumsum(recv_counts)[:-1])


#: Operation name -> the function running MPI's collective for it on this rank.
MPI_COLLECTIVES = {
    "broadcast": _bcast,
    "reduce": _reduce,
    "allreduce": _allreduce,
    "prefix_sum": _scan,
    "prefix_sum_and_total": _scan_and_total,
    "barrier": _barrier,
    "gather": _gather,
    "scatter": _scatter,
    "allgather": _allgather,
    "all_to_all_reduction": _reduce_scatter,
    "alltoall": _alltoall,
    "alltoallv": _alltoallv,
}


def mpi_collective_name(operation: str, params: dict) -> str | None:
    """The MPI routine for ``operation``, or None when there is none for these params.

    A reduction with an operator other than the default addition has no MPI
    counterpart here (``MPI.SUM`` is what the routines use).

    >>> mpi_collective_name("allgather", {})
    'MPI_Allgather'
    >>> mpi_collective_name("exscan of strings", {}) is None
    True
    """
    if operation not in MPI_COLLECTIVES or params.get("op", add) is not add:
        return None
    name = operations()[operation].mpi
    return name.replace("MPI_Scan", "MPI_Exscan") if params.get("exclusive") else name


def run_mpi_collective(operation: str, data, m: int, *, comm=None, **params):
    """Run MPI's collective for ``operation`` on this rank's ``data``; return its result.

    ``m`` is the message length in words (ranks without data need it for
    their receive buffers).
    """
    if mpi_collective_name(operation, params) is None:
        raise ValueError(f"no MPI collective for operation {operation!r} with {params!r}; "
                         f"known operations: {sorted(MPI_COLLECTIVES)}")
    MPI = mpi()
    comm = MPI.COMM_WORLD if comm is None else comm
    return MPI_COLLECTIVES[operation](MPI, comm, data, m, **params)
