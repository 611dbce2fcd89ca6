"""MPICH's switch points: the control variables of the installed MPICH and the rules they set.

Chapter 7 reads MPICH's thresholds (``MPIR_CVAR_*``) as its own tool ``mpivars``,
installed next to ``mpiexec``, lists them; chapter 8 draws them beside the
algorithm the closed forms choose (:func:`~collective_lib.viz.choice_map`).
:func:`mpich_cvars` reads them from the MPICH that runs the jobs, never from
numbers typed here; :func:`mpich_choice` applies the rule each variable belongs
to, as ``mpivars`` describes it (MPICH, ``src/mpi/coll/bcast``, ``allreduce``,
``allgather``), to a message of m words of :data:`WORD_BYTES` bytes.
"""
from __future__ import annotations

import re
import subprocess
from functools import lru_cache
from pathlib import Path

from ..validate import check_positive_int
from .launcher import find_mpiexec

__all__ = ["WORD_BYTES", "MPICH_RULES", "mpich_cvars", "mpich_choice"]

#: Bytes per word of a message, as chapter 7 counts them (a double).
WORD_BYTES = 8

#: The operations :func:`mpich_choice` knows, with the control variables its rule reads.
MPICH_RULES = {
    "broadcast": ("MPIR_CVAR_BCAST_SHORT_MSG_SIZE", "MPIR_CVAR_BCAST_LONG_MSG_SIZE",
                  "MPIR_CVAR_BCAST_MIN_PROCS"),
    "allreduce": ("MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE",),
    "allgather": ("MPIR_CVAR_ALLGATHER_SHORT_MSG_SIZE", "MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE"),
}


@lru_cache(maxsize=None)
def _listing(mpivars: str) -> str:
    return subprocess.run([mpivars], capture_output=True, text=True, timeout=60).stdout


def mpich_cvars() -> dict:
    """``{"MPIR_CVAR_...": value}``: every integer control variable of the installed MPICH.

    Read from ``mpivars`` beside :func:`~collective_lib.mpi.find_mpiexec` (which
    raises :class:`~collective_lib.mpi.MPIExecNotFoundError` when there is no MPI),
    once per process.

    >>> cvars = mpich_cvars()
    >>> cvars["MPIR_CVAR_BCAST_MIN_PROCS"] > 1
    True
    """
    mpivars = Path(find_mpiexec()).with_name("mpivars")
    if not mpivars.is_file():
        raise FileNotFoundError(f"MPICH's tool mpivars is not next to {find_mpiexec()}; "
                                "its thresholds cannot be read")
    return {name: int(value) for name, value in
            re.findall(r"^\s*(MPIR_CVAR_\w+?)\s*=(-?\d+)\s", _listing(str(mpivars)), flags=re.M)}


def _power_of_two(p: int) -> bool:
    return p & (p - 1) == 0


def mpich_choice(operation: str, p: int, m: int, cvars: dict | None = None) -> str:
    """The algorithm MPICH's thresholds pick for ``operation`` on p processes, m words each.

    Parameters
    ----------
    operation : {"broadcast", "allreduce", "allgather"}
    p : int
        Number of processes.
    m : int
        Words per process (:data:`WORD_BYTES` bytes each): the message of a
        broadcast, each process's vector of an all-reduce and its block of an
        all-gather.
    cvars : dict, optional
        The control variables; default :func:`mpich_cvars`.

    Returns
    -------
    str
        A short name of MPICH's algorithm: broadcast ``"binomial"`` (at most
        ``BCAST_SHORT_MSG_SIZE`` bytes, or fewer than ``BCAST_MIN_PROCS``
        processes), ``"scatter + recursive doubling"`` (below
        ``BCAST_LONG_MSG_SIZE`` on a power of two), ``"scatter + ring"``;
        all-reduce ``"recursive doubling"`` (at most ``ALLREDUCE_SHORT_MSG_SIZE``
        bytes, or fewer words than the largest power of two in p),
        ``"reduce-scatter + allgather"`` (Rabenseifner's); all-gather (by the
        gathered bytes p m) ``"recursive doubling"`` (below
        ``ALLGATHER_LONG_MSG_SIZE`` on a power of two), ``"Bruck"`` (below
        ``ALLGATHER_SHORT_MSG_SIZE``), ``"ring"``.

    Examples
    --------
    >>> mpich_choice("broadcast", 4, 1_000_000), mpich_choice("broadcast", 16, 1)
    ('binomial', 'binomial')
    >>> mpich_choice("allreduce", 8, 1_000_000)
    'reduce-scatter + allgather'
    >>> mpich_choice("alltoallv", 8, 1)
    Traceback (most recent call last):
    ...
    ValueError: MPICH's switch points are known here for ['broadcast', 'allreduce', 'allgather'], not 'alltoallv'
    """
    if operation not in MPICH_RULES:
        raise ValueError(f"MPICH's switch points are known here for {list(MPICH_RULES)}, "
                         f"not {operation!r}")
    check_positive_int("p", p)
    check_positive_int("m", m)
    cvars = mpich_cvars() if cvars is None else cvars
    missing = [name for name in MPICH_RULES[operation] if name not in cvars]
    if missing:
        raise ValueError(f"the control variables lack {missing}, which MPICH's rule for "
                         f"{operation} reads")
    size = m * WORD_BYTES
    if operation == "broadcast":
        if size <= cvars["MPIR_CVAR_BCAST_SHORT_MSG_SIZE"] or p < cvars["MPIR_CVAR_BCAST_MIN_PROCS"]:
            return "binomial"
        if size < cvars["MPIR_CVAR_BCAST_LONG_MSG_SIZE"] and _power_of_two(p):
            return "scatter + recursive doubling"
        return "scatter + ring"
    if operation == "allreduce":
        if size <= cvars["MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE"] or m < 1 << (p.bit_length() - 1):
            return "recursive doubling"
        return "reduce-scatter + allgather"
    total = p * size
    if total < cvars["MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE"] and _power_of_two(p):
        return "recursive doubling"
    return "Bruck" if total < cvars["MPIR_CVAR_ALLGATHER_SHORT_MSG_SIZE"] else "ring"
