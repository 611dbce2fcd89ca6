"""Start an MPI job of the command line from Python (a notebook, a test) and read its answer.

The job's rank 0 prints one JSON object per line (``--json``); :func:`launch`
returns them as dicts, or raises the error the job reported.  Nothing here
imports mpi4py: the calling process never becomes an MPI process.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from ..errors import UnreceivedMessageError
from ..validate import check_positive_int
from .backend import MPIDeadlockError

__all__ = ["find_mpiexec", "launch", "available_cores", "MPIExecNotFoundError", "MPIJobError",
           "MPILaunchTimeout"]


class MPIExecNotFoundError(FileNotFoundError):
    """No ``mpiexec`` next to this Python nor on ``PATH``."""


class MPIJobError(RuntimeError):
    """An MPI job failed; ``records`` holds what it printed, ``stderr`` its error output."""

    def __init__(self, message: str, records=(), stderr: str = ""):
        super().__init__(message)
        self.records, self.stderr = list(records), stderr


class MPILaunchTimeout(TimeoutError):
    """An MPI job ran past the launcher's timeout and was killed."""


def available_cores() -> int:
    """The number of cores this process may run on (its CPU affinity, not the machine's total).

    A job with more ranks than this is oversubscribed: its ranks take turns on
    the cores, and its timings measure the scheduler as much as the messages.
    ``run`` records it as ``cores`` beside each timing.

    >>> 1 <= available_cores() <= os.cpu_count()
    True
    """
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1          # macOS and Windows have no affinity call


def find_mpiexec() -> str:
    """The ``mpiexec`` to use: the one beside ``sys.executable`` (a venv with the mpich
    wheel), else the first on ``PATH``."""
    beside = Path(sys.executable).parent / "mpiexec"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which("mpiexec")
    if found:
        return found
    raise MPIExecNotFoundError(
        f"mpiexec was found neither next to {sys.executable} nor on PATH. Install MPICH "
        "into this Python with `python -m pip install mpich mpi4py` (pinned in "
        "requirements.txt; `make test` or `make book` does it), or put an MPI's mpiexec "
        "on PATH.")


def launch(args, np: int = 4, *, timeout: float = 120.0, mpiexec: str | None = None) -> list:
    """Run ``python -m collective_lib.mpi --json ARGS`` under ``mpiexec -n np``.

    Parameters
    ----------
    args : list of str
        The command line after the program name, e.g.
        ``["run", "binomial_broadcast", "--words", "1024"]``.
    np : int
        Number of MPI processes (ranks).
    timeout : float
        Seconds before the whole job is killed and :class:`MPILaunchTimeout` raised.
    mpiexec : str, optional
        Defaults to :func:`find_mpiexec`.

    Returns
    -------
    list of dict
        One record per JSON line the job printed.

    Raises
    ------
    MPIDeadlockError, UnreceivedMessageError, ValueError
        What the job reported (a deadlock names the blocked ranks).
    MPIJobError
        Any other failure of the job (its stderr is attached).
    MPILaunchTimeout
        The job ran longer than ``timeout``.
    """
    check_positive_int("np", np)
    command = [mpiexec or find_mpiexec(), "-n", str(np), sys.executable, "-m",
               "collective_lib.mpi", "--json", *map(str, args)]
    # A session of its own, so that a timeout can kill mpiexec and every rank it started.
    job = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        stdout, stderr = job.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stdout, stderr = _kill(job)
        raise MPILaunchTimeout(
            f"the MPI job `{' '.join(command)}` ran longer than {timeout:g} s and was killed"
            + _tail("its error output", stderr)) from None
    records = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    errors = [r for r in records if r.get("record") == "error"]
    if errors:
        raise _as_exception(errors[0], records, stderr)
    wrong = [r for r in records if r.get("correct") is False]
    if wrong:
        raise MPIJobError("wrong results under MPI:\n" + "\n".join(
            f"  {r['algorithm']} (p={r['p']}, m={r['words']}, {r['payload']}): {r['mismatch']}"
            for r in wrong), records, stderr)
    if job.returncode != 0:
        raise MPIJobError(f"the MPI job `{' '.join(command)}` exited with code "
                          f"{job.returncode}" + _tail("its error output", stderr),
                          records, stderr)
    return records


def _kill(job) -> tuple:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(job.pid, sig)
        except ProcessLookupError:
            break
        try:
            return job.communicate(timeout=3)
        except subprocess.TimeoutExpired:
            continue
    return job.communicate()


def _tail(what: str, text: str, lines: int = 15) -> str:
    kept = [line for line in (text or "").splitlines() if line.strip()][-lines:]
    return f"\n{what}:\n" + "\n".join(kept) if kept else ""


def _as_exception(error: dict, records: list, stderr: str) -> Exception:
    """The exception a job's error record stands for."""
    kind, message = error.get("kind"), error.get("message", "")
    if kind == "MPIDeadlockError":
        return MPIDeadlockError({int(r): w for r, w in error["blocked"].items()},
                                error["timeout"], error["returned"], error["silent"])
    if kind == "UnreceivedMessageError":
        return UnreceivedMessageError({(s, d): n for s, d, n in error["unreceived"]})
    if kind == "ValueError":
        return ValueError(message)
    where = f" on rank {error['rank']}" if "rank" in error else ""
    return MPIJobError(f"{kind}{where}: {message}" + _tail("the job's error output", stderr),
                       records, stderr)
