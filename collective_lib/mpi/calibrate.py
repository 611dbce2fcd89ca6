"""Fit this machine's ``ts`` and ``tw`` from a ping-pong between two ranks.

The ping-pong is an SPMD program run by our own interpreter
(:func:`~collective_lib.mpi.backend.run_timed`), so the fitted startup time
includes what the interpreter adds to every message (a few Python calls), and
predictions made with the fitted :class:`~collective_lib.model.CostModel` are
about the same kind of messages the catalog's programs send.  A word is one
element of an int64 array (8 bytes), the payload the command line times by
default.

The fit (:func:`fit_ts_tw`) is a pure function: least squares of
``t = ts + tw * m`` with relative residuals, because the message sizes span
several orders of magnitude and plain residuals would let the largest sizes
decide ``ts`` alone.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ..model import CostModel
from ..ops import recv, send

__all__ = ["fit_ts_tw", "ping_pong", "measure_ping_pong", "calibrate", "save_calibration",
           "load_calibration", "load_model", "DEFAULT_SIZES"]

#: Message sizes in words (int64), 1 word to 128 Ki words (1 MiB).
DEFAULT_SIZES = tuple(4 ** i for i in range(9)) + (1 << 17,)


def fit_ts_tw(words, seconds) -> tuple:
    """Least-squares ``(ts, tw)`` of ``seconds = ts + tw * words``, both kept non-negative.

    Residuals are relative (each equation is divided by its measured time),
    so a 1-word message counts as much as a 1-MiB one.

    Parameters
    ----------
    words : sequence of int
        Message sizes, at least two distinct ones.
    seconds : sequence of float
        One-way time measured for each size (positive).

    Examples
    --------
    >>> ts, tw = fit_ts_tw([1, 10, 100, 1000], [2.0 + 0.5 * m for m in [1, 10, 100, 1000]])
    >>> round(ts, 9), round(tw, 9)
    (2.0, 0.5)
    """
    m = np.asarray(words, dtype=float)
    t = np.asarray(seconds, dtype=float)
    if m.ndim != 1 or m.shape != t.shape:
        raise ValueError(f"words and seconds must be two sequences of the same length, got "
                         f"{len(m)} sizes and {len(t)} times")
    if len(np.unique(m)) < 2:
        raise ValueError(f"the fit needs at least two distinct message sizes, got {m.tolist()}")
    if np.any(m < 0) or not np.all(t > 0):
        raise ValueError(f"sizes must be >= 0 and times > 0, got words={m.tolist()}, "
                         f"seconds={t.tolist()}")
    weights = 1.0 / t
    design = np.column_stack([np.ones_like(m), m]) * weights[:, None]
    (ts, tw), *_ = np.linalg.lstsq(design, t * weights, rcond=None)
    # Non-negative least squares for two unknowns: if one comes out negative,
    # the optimum lies on its boundary; fit the other alone.
    if ts < 0:
        ts, tw = 0.0, float(np.sum(m * weights ** 2 * t) / np.sum((m * weights) ** 2))
    elif tw < 0:
        ts, tw = float(np.sum(weights) / np.sum(weights ** 2)), 0.0
    return float(ts), float(tw)


def ping_pong(me, p, data, rounds=1):
    """Ranks 0 and 1 bounce ``data`` back and forth ``rounds`` times; others idle.

    A round is two messages (there and back), so one message takes the run's
    time divided by ``2 * rounds``.
    """
    if me == 0:
        for _ in range(rounds):
            yield send(1, data)
            data = yield recv(1)
    elif me == 1:
        for _ in range(rounds):
            data = yield recv(0)
            yield send(0, data)
    return data


def measure_ping_pong(sizes=DEFAULT_SIZES, *, repeats: int = 5, budget_s: float = 0.01,
                      comm=None) -> list:
    """One-way seconds per message for each size; call on every rank.

    Each of the ``repeats`` runs enough rounds to last about ``budget_s``
    (decided from a first trial round, the same on every rank), and the
    fastest run counts: other processes on the machine can only add time to a
    message, never take it away, so the minimum is the least disturbed sample.
    """
    from .backend import comm_world, run_timed
    comm = comm_world() if comm is None else comm
    if comm.Get_size() < 2:
        raise ValueError(f"a ping-pong needs at least 2 ranks, got p={comm.Get_size()}")
    one_way = []
    for words in sizes:
        payload = np.arange(words, dtype=np.int64)
        _, trial = run_timed(ping_pong, [payload] * comm.Get_size(), comm=comm, rounds=1)
        rounds = max(1, min(1000, int(budget_s / max(comm.allreduce(trial, op=_max()), 1e-7))))
        samples = []
        for _ in range(repeats):
            _, seconds = run_timed(ping_pong, [payload] * comm.Get_size(), comm=comm,
                                   rounds=rounds)
            samples.append(comm.allreduce(seconds, op=_max()) / (2 * rounds))
        one_way.append(min(samples))
    return one_way


def _max():
    from .backend import mpi
    return mpi().MAX


def calibrate(sizes=DEFAULT_SIZES, *, repeats: int = 5, comm=None) -> dict:
    """Measure the ping-pong and fit ``ts`` and ``tw``; a JSON-ready record (every rank)."""
    from .backend import mpi
    seconds = measure_ping_pong(sizes, repeats=repeats, comm=comm)
    ts, tw = fit_ts_tw(sizes, seconds)
    return {"ts": ts, "tw": tw, "unit": "seconds", "word": "int64 (8 bytes)",
            "sizes": list(sizes), "seconds": seconds,
            "mpi": mpi().Get_library_version().splitlines()[0].strip()}


def save_calibration(record: dict, path) -> Path:
    """Write a calibration record as JSON; return the path."""
    path = Path(path)
    path.write_text(json.dumps(record, indent=1) + "\n")
    return path


def load_calibration(path) -> dict:
    """Read a record written by :func:`save_calibration` (checks ``ts`` and ``tw``)."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"no calibration file at {path}; make one with "
                         "`mpiexec -n 2 python -m collective_lib.mpi calibrate --output FILE`")
    record = json.loads(path.read_text())
    missing = [key for key in ("ts", "tw") if key not in record]
    if missing:
        raise ValueError(f"{path} is not a calibration record: it lacks {missing}")
    return record


def load_model(path_or_record, ports: str = "full-duplex") -> CostModel:
    """The :class:`CostModel` (seconds) of a calibration file or record."""
    record = path_or_record if isinstance(path_or_record, dict) else \
        load_calibration(path_or_record)
    return CostModel(ts=record["ts"], tw=record["tw"], ports=ports)
