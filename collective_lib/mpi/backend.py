"""Interpret the yielded operations with real point-to-point messages (mpi4py).

The algorithm stays ours: every ``send``, ``recv``, ``sendrecv`` and ``multi``
that a program yields becomes MPI point-to-point traffic, never one of the MPI
library's collectives.

Semantics, chosen so that a program that runs in the simulator runs here too
and a program that deadlocks here is reported instead of hanging:

* ``send`` returns when MPI says the send buffer may be reused, as ``MPI_Send``
  does: short messages are usually buffered (eager), long ones wait until the
  receiver takes them (rendezvous).  A program that relies on buffering of
  long messages (every PE sends first, then receives) deadlocks here, as it
  would with ``MPI_Send``.
* ``sendrecv`` posts its send and its receive together, so two PEs that
  exchange long messages never deadlock (like ``MPI_Sendrecv``).
* ``multi`` posts every send and receive at once and returns when all are done
  (``MPI_Isend``/``MPI_Irecv`` and ``MPI_Waitall``).
* ``compute(t)`` is a no-op by default: the program's local work is real
  Python work here.  ``compute_scale`` turns it into ``sleep(t * compute_scale)``.
* Messages from one PE to another are received in the order they were sent
  (MPI's non-overtaking rule), as in the simulator.
* A 1-D numpy array of a plain numeric dtype travels as raw bytes (the buffer
  interface, no copy); anything else is pickled.

Every wait is a polling loop with a deadline.  When a rank has waited past
``timeout`` seconds, the ranks tell rank 0 what each is waiting for, over the
caller's communicator (the program's messages use a private duplicate, so the
report cannot be confused with them), and every rank raises the same
:class:`MPIDeadlockError` that names the blocked ranks and their operations.
"""
from __future__ import annotations

import os
import pickle
import time
from typing import Any

import numpy as np

from ..errors import DeadlockError, UnreceivedMessageError
from ..ops import check_operation

__all__ = ["run", "run_timed", "mpi", "comm_world", "MPINotAvailableError",
           "MPIDeadlockError", "MPIProgramError", "as_arrays", "plain"]

#: Tags of the program's messages (on the private communicator).
_TAG_PICKLE = 1
_TAG_ARRAY = 16
#: dtypes sent as raw bytes; the tag says which one (_TAG_ARRAY + index).
_BUFFER_DTYPES = tuple(np.dtype(name) for name in (
    "bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
    "float32", "float64", "complex64", "complex128"))
_DTYPE_INDEX = {dtype: i for i, dtype in enumerate(_BUFFER_DTYPES)}
#: Tags of the stall report (on the caller's communicator).
_TAG_STATUS, _TAG_REPORT = 9001, 9002
#: How long rank 0 waits for the others' status once a deadline has passed.
_REPORT_GRACE_S = 3.0


class MPINotAvailableError(ImportError):
    """mpi4py (or the MPI library under it) cannot be imported."""


class MPIDeadlockError(DeadlockError):
    """Ranks of an MPI job waited longer than the timeout.

    Attributes
    ----------
    blocked : dict
        ``{rank: description of the operation it waits on}``.
    returned : list
        Ranks whose program had returned (they wait for the others to finish).
    silent : list
        Ranks that did not answer rank 0 (busy in code that never yields, or dead).
    timeout : float
        The deadline, in seconds after the start of the run.
    """

    def __init__(self, blocked: dict, timeout: float, returned=(), silent=()):
        super().__init__(blocked, timeout)
        self.timeout = timeout
        self.returned = sorted(returned)
        self.silent = sorted(silent)
        lines = [f"  rank {r}: {what}" for r, what in sorted(self.blocked.items())]
        if self.returned:
            lines.append(f"  rank(s) {self.returned} returned and wait for the others")
        if self.silent:
            lines.append(f"  rank(s) {self.silent} did not answer (running code that never "
                         "yields, or dead)")
        self.args = (f"no progress under MPI within {timeout:g} s: "
                     f"{len(self.blocked)} rank(s) still wait\n" + "\n".join(lines),)


class MPIProgramError(RuntimeError):
    """The program raised on one rank (``rank``); the exception is the ``__cause__``.

    The other ranks do not know: they wait until their deadline, so a job
    should stop (the command line calls ``MPI_Abort``).
    """

    def __init__(self, rank: int, exc: BaseException):
        super().__init__(f"the program raised on rank {rank}: {type(exc).__name__}: {exc}")
        self.rank = rank


def mpi():
    """The ``mpi4py.MPI`` module, imported on first use.

    Importing it starts MPI in this process, so the package imports it only
    inside an MPI job, never when a notebook merely launches one.
    """
    try:
        from mpi4py import MPI
    except ImportError as exc:
        raise MPINotAvailableError(
            "collective_lib.mpi needs mpi4py and an MPI library, which could not be "
            f"imported ({exc}). Install both into this Python with "
            "`python -m pip install mpich mpi4py` (the versions pinned in requirements.txt), "
            "then start the program with `mpiexec -n 4 python ...`.") from exc
    return MPI


def comm_world():
    """``MPI.COMM_WORLD`` of this job."""
    return mpi().COMM_WORLD


# -- payloads -----------------------------------------------------------------------------

def as_arrays(value: Any) -> Any:
    """Lists of numbers become int64/float64 arrays, recursively; other values stay.

    The catalog's inputs are lists of ints (they compare with ``==``); turned
    into arrays they travel through MPI as raw bytes.

    >>> as_arrays([[1, 2], [3, 4]])[1]
    array([3, 4])
    >>> as_arrays(None) is None
    True
    """
    if isinstance(value, (list, tuple)):
        if value and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in value):
            return np.asarray(value)
        return type(value)(as_arrays(x) for x in value)
    return value


def plain(value: Any) -> Any:
    """Arrays and numpy scalars become lists and Python numbers, recursively (for ``==``).

    >>> plain((np.arange(3), [np.int64(4)]))
    ([0, 1, 2], [4])
    """
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, (list, tuple)):
        return type(value)(plain(x) for x in value)
    return value


def _encode(data: Any):
    """(buffer, tag) for one payload: raw bytes for plain 1-D arrays, else a pickle."""
    if isinstance(data, np.ndarray) and data.ndim == 1 and data.dtype in _DTYPE_INDEX:
        return np.ascontiguousarray(data), _TAG_ARRAY + _DTYPE_INDEX[data.dtype]
    return pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL), _TAG_PICKLE


def _receive_buffer(tag: int, nbytes: int):
    if tag == _TAG_PICKLE:
        return bytearray(nbytes)
    dtype = _BUFFER_DTYPES[tag - _TAG_ARRAY]
    return np.empty(nbytes // dtype.itemsize, dtype=dtype)


def _decode(tag: int, buffer):
    return pickle.loads(buffer) if tag == _TAG_PICKLE else buffer


# -- one rank's interpreter ---------------------------------------------------------------

class _Stalled(Exception):
    """A wait passed the deadline: ``state`` is "blocked" or "returned", ``what`` the operation."""

    def __init__(self, state: str, what: str = ""):
        super().__init__(state, what)
        self.state, self.what = state, what


class _Interpreter:
    """Runs one rank's generator on a private communicator."""

    def __init__(self, MPI, comm, deadline: float, compute_scale: float):
        self.MPI, self.comm, self.deadline = MPI, comm, deadline
        self.me, self.p = comm.Get_rank(), comm.Get_size()
        self.compute_scale = compute_scale
        self.sent = np.zeros(self.p, dtype=np.int64)       # messages sent to each rank
        self.received = np.zeros(self.p, dtype=np.int64)   # messages taken from each rank
        self.status = MPI.Status()

    def drive(self, gen):
        """Resume ``gen`` with each operation's result until it returns."""
        try:
            op = next(gen)
            while True:
                op = gen.send(self.perform(op))
        except StopIteration as stop:
            return stop.value

    def perform(self, op):
        # Every record is checked as the simulator checks it: a program may build
        # one without send() & co.
        try:
            op = check_operation(op)
        except (TypeError, ValueError) as err:
            raise type(err)(f"rank {self.me} yielded {err}") from None
        sends, sources, work = op.parts()
        if work and self.compute_scale:
            time.sleep(work * self.compute_scale)
        received = self.transfer(tuple((dst, data) for dst, data, _ in sends), sources,
                                 type(op).__name__.lower()) if sends or sources else ()
        return op.result(received)

    def _check_rank(self, role: str, other) -> None:
        if not isinstance(other, (int, np.integer)) or isinstance(other, bool) \
                or not 0 <= other < self.p:
            raise ValueError(f"rank {self.me} names {role} {other!r}, which is not a rank in "
                             f"0..{self.p - 1}")
        if other == self.me:
            raise ValueError(f"rank {self.me} names itself as {role}; a PE cannot message itself")

    def transfer(self, sends, sources, what: str) -> list:
        """Post every send, receive from every source in order, wait for all (polling)."""
        comm, MPI = self.comm, self.MPI
        for dst, _ in sends:
            self._check_rank("destination", dst)
        for src in sources:
            self._check_rank("source", src)
        pending_sends = []
        for dst, data in sends:
            buffer, tag = _encode(data)
            pending_sends.append((comm.Isend([buffer, MPI.BYTE], dst, tag), dst, buffer))
            self.sent[dst] += 1
        results = [None] * len(sources)
        unmatched = list(range(len(sources)))     # receives whose message has not been matched
        receiving = []                            # (index, request, tag, buffer)
        while True:
            if unmatched:
                unmatched = self._match(sources, unmatched, receiving)
            if receiving:
                receiving = self._finish_receives(receiving, results, sources)
            if pending_sends:
                pending_sends = [s for s in pending_sends if not s[0].Test()]
            if not (unmatched or receiving or pending_sends):
                return results
            if time.monotonic() > self.deadline:
                raise _Stalled("blocked", self._waiting_text(what, sends, sources, unmatched,
                                                             receiving, pending_sends))
            os.sched_yield()          # other ranks may share this core (oversubscription)

    def _match(self, sources, unmatched, receiving) -> list:
        """Match waiting receives to arrived messages, oldest first per source (FIFO)."""
        still, blocked_sources = [], set()
        for i in unmatched:
            src = sources[i]
            message = None if src in blocked_sources else \
                self.comm.Improbe(src, self.MPI.ANY_TAG, self.status)
            if message is None:
                still.append(i)
                blocked_sources.add(src)   # a later receive from src must not overtake this one
                continue
            tag = self.status.Get_tag()
            buffer = _receive_buffer(tag, self.status.Get_count(self.MPI.BYTE))
            receiving.append((i, message.Irecv([buffer, self.MPI.BYTE]), tag, buffer))
            self.received[src] += 1
        return still

    @staticmethod
    def _finish_receives(receiving, results, sources) -> list:
        left = []
        for entry in receiving:
            i, request, tag, buffer = entry
            if request.Test():
                results[i] = _decode(tag, buffer)
            else:
                left.append(entry)
        return left

    @staticmethod
    def _waiting_text(what, sends, sources, unmatched, receiving, pending_sends) -> str:
        """``recv(src=1): no message yet from rank(s) [1]`` and the like."""
        dsts = [dst for dst, _ in sends]
        head = {"send": f"send(dst={dsts[0] if dsts else None})",
                "recv": f"recv(src={sources[0] if sources else None})",
                "sendrecv": f"sendrecv(dst={dsts[0] if dsts else None}, "
                            f"src={sources[0] if sources else None})"}.get(
            what, f"multi(sends to {dsts}, receives from {list(sources)})")
        parts = []
        if unmatched:
            parts.append(f"no message yet from rank(s) {[sources[i] for i in unmatched]}")
        if receiving:
            parts.append(f"message(s) from rank(s) {[sources[e[0]] for e in receiving]} "
                         "still arriving")
        if pending_sends:
            parts.append(f"message(s) to rank(s) {[s[1] for s in pending_sends]} not yet "
                         "taken by the receiver")
        return f"{head}: " + "; ".join(parts)


# -- a whole run ----------------------------------------------------------------------------

def _program_of(program, p: int, params: dict):
    """(generator function, parameters): catalog names and entries check p first."""
    from ..catalog import resolve_program
    function, entry = resolve_program(program)
    if entry is None:
        return function, params
    entry.valid_p(p)
    return function, {**entry.params, **params}


def _my_input(inputs, me: int, p: int):
    if inputs is None:
        return None
    if callable(inputs):
        return inputs(me)
    if len(inputs) != p:
        raise ValueError(f"inputs has {len(inputs)} entries but the MPI job has p={p} ranks")
    return inputs[me]


def run(program, inputs=None, *, comm=None, timeout: float = 60.0, compute_scale: float = 0.0,
        **params) -> Any:
    """Run an SPMD program on the ranks of an MPI job; return this rank's result.

    Call it on every rank (``mpiexec -n P python script.py``), with the same
    arguments, as an MPI collective.

    Parameters
    ----------
    program : generator function, str or Algorithm
        ``program(me, p, data, **params)``, or a catalog entry (or its name):
        then ``valid_p`` is checked before any message is sent and the entry's
        default parameters apply.
    inputs : list of length p, callable, or None
        Rank ``i`` gets ``inputs[i]`` (or ``inputs(i)``), as in :func:`~collective_lib.simulate`.
    comm : mpi4py communicator, optional
        Defaults to ``MPI.COMM_WORLD``; the run uses a private duplicate of it.
    timeout : float
        Seconds after the start before waiting ranks give up and raise
        :class:`MPIDeadlockError`, naming every blocked rank and its operation.
    compute_scale : float
        ``compute(t)`` sleeps ``t * compute_scale`` seconds (default 0: no-op).
    **params
        Passed to every rank's program.

    Raises
    ------
    MPIDeadlockError
        On every rank, when some rank still waits ``timeout`` seconds after the start.
    UnreceivedMessageError
        On every rank, when the programs returned but some messages were never received.
    ValueError
        Before any communication, when a catalog algorithm cannot run on p ranks.
    """
    return run_timed(program, inputs, comm=comm, timeout=timeout,
                     compute_scale=compute_scale, **params)[0]


def run_timed(program, inputs=None, *, comm=None, timeout: float = 60.0,
              compute_scale: float = 0.0, **params) -> tuple:
    """:func:`run`, also returning the seconds this rank spent in the program.

    The clock starts after a barrier and stops when this rank's program returns.
    """
    MPI = mpi()
    base = MPI.COMM_WORLD if comm is None else comm
    p, me = base.Get_size(), base.Get_rank()
    if not timeout > 0:
        raise ValueError(f"timeout must be a positive number of seconds, got {timeout!r}")
    function, params = _program_of(program, p, params)
    gen = function(me, p, _my_input(inputs, me, p), **params)
    if not hasattr(gen, "send"):
        raise TypeError(f"{getattr(function, '__name__', function)!r} is not a generator "
                        "function: an SPMD program must yield its operations")
    private = base.Dup()
    private.Barrier()
    start = time.monotonic()
    interpreter = _Interpreter(MPI, private, start + timeout, compute_scale)
    try:
        result = interpreter.drive(gen)
        seconds = time.monotonic() - start
        _check_all_received(MPI, private, interpreter, base)
    except _Stalled as stalled:
        _report_stall(base, timeout, {"state": stalled.state, "what": stalled.what})
    except UnreceivedMessageError:
        raise
    except Exception as exc:
        raise MPIProgramError(me, exc) from exc
    private.Free()
    return result, seconds


def _check_all_received(MPI, private, interpreter, base) -> None:
    """Wait (with the deadline) for every rank, then compare sent and received counts."""
    sent_to_me = np.zeros(interpreter.p, dtype=np.int64)
    request = private.Ialltoall(interpreter.sent, sent_to_me)
    while not request.Test():
        if time.monotonic() > interpreter.deadline:
            raise _Stalled("returned")
        os.sched_yield()
    mine = {(src, interpreter.me): int(n)
            for src, n in enumerate(sent_to_me - interpreter.received) if n}
    everyone = {}
    for part in private.allgather(mine):
        everyone.update(part)
    if everyone:
        raise UnreceivedMessageError(everyone)


def _report_stall(base, timeout: float, mine: dict):
    """Tell rank 0 what this rank waits for; raise the report that rank 0 sends back."""
    me, p = base.Get_rank(), base.Get_size()
    if me == 0:
        statuses = _poll_objects(base, range(1, p), _TAG_STATUS)
        statuses[0] = mine
        report = {"statuses": statuses, "silent": [r for r in range(p) if r not in statuses]}
        _poll_requests([base.isend(report, r, _TAG_REPORT) for r in statuses if r])
    else:
        _poll_requests([base.isend(mine, 0, _TAG_STATUS)])
        answer = _poll_objects(base, [0], _TAG_REPORT)
        report = answer.get(0) or {"statuses": {me: mine}, "silent": [0]}
    statuses = report["statuses"]
    raise MPIDeadlockError(
        {r: s["what"] for r, s in statuses.items() if s["state"] == "blocked"}, timeout,
        returned=[r for r, s in statuses.items() if s["state"] == "returned"],
        silent=report["silent"])


def _poll_requests(requests) -> None:
    """Wait up to the grace period for ``requests`` (small sends of the report)."""
    give_up = time.monotonic() + _REPORT_GRACE_S
    while requests and time.monotonic() < give_up:
        requests = [r for r in requests if not r.Test()]
        time.sleep(0.001)


def _poll_objects(base, sources, tag: int) -> dict:
    """``{source: object}`` for the pickled objects that arrive within the grace period."""
    requests = {source: base.irecv(source=source, tag=tag) for source in sources}
    received = {}
    give_up = time.monotonic() + _REPORT_GRACE_S
    while requests and time.monotonic() < give_up:
        for source, request in list(requests.items()):
            done, value = request.test()
            if done:
                received[source] = value
                del requests[source]
        time.sleep(0.001)
    for request in requests.values():
        request.Cancel()
    return received
