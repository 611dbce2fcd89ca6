"""Each PE in its own process: a PE knows only its own data and what it received.

The simulator drives every PE's generator in one Python process, so PEs that
share a Python global (a dict, a module attribute) instead of sending messages
get away with it there.  :func:`isolated` wraps an SPMD program so that each
PE's generator runs in a process of its own, forked from this one when the
simulator first resumes that PE.  The simulator is unchanged: it sees an
ordinary generator, every operation the PE yields crosses a pipe to it and
every result crosses back.  Because the process is forked, a PE starts from a
copy of this process (the program, its imports, a reduction's ``op``), and
what it writes to globals afterwards no other PE ever sees.

Only data crosses the pipe, encoded by :func:`_encode` and decoded by
:func:`_decode`: pickle for now, which is acceptable because this process runs
in the same kernel as the student's code anyway; a JSON codec would replace
just that pair.  Two limits: a PE process starts from this process's state at
fork time (so a check must use inputs the program has not seen before), and
processes of one user can still meet through the operating system (files,
sockets), which only a sandbox closes.

Examples
--------
>>> from collective_lib import sendrecv, simulate
>>> def ring_sum(me, p, data):
...     total = data
...     for _ in range(p - 1):
...         data = yield sendrecv((me + 1) % p, data, (me - 1) % p)
...         total += data
...     return total
>>> with isolated(ring_sum) as program:
...     run = simulate(program, 4, [1, 2, 3, 4])
>>> run.results, run.time
([10, 10, 10, 10], 3.0)

PEs that share a global are right only while they share a process:

>>> BOARD = {}
>>> def board_sum(me, p, data):
...     BOARD[me] = data
...     for _ in range(p - 1):
...         yield sendrecv((me + 1) % p, 0, (me - 1) % p)
...     return sum(BOARD.get(pe, 0) for pe in range(p))
>>> simulate(board_sum, 4, [1, 2, 3, 4]).results
[10, 10, 10, 10]
>>> BOARD.clear()
>>> with isolated(board_sum) as program:
...     simulate(program, 4, [1, 2, 3, 4]).results
[1, 2, 3, 4]
"""
from __future__ import annotations

import copy
import functools
import inspect
import io
import multiprocessing
import pickle
import sys
from typing import Any, Callable

import numpy as np

from ..errors import student_line
from ..ops import relay
from ..wording import plural
from ._advice import format_value, same_value
from .standins import is_stand_in

__all__ = ["isolated", "IsolatedProgram", "PEProcessError", "noting", "differs_alone"]

_FORK = multiprocessing.get_context("fork")

# This process's ends of the pipes to live PE processes.  A PE process closes its
# inherited copies at once, so it cannot talk to another PE's process through them.
_parent_ends: set = set()


class PEProcessError(RuntimeError):
    """A PE's own process failed: it raised, did not answer in time, or died.

    ``pe`` is the PE's rank, ``detail`` what happened ("raised KeyError: 0") and
    ``where`` the line of the program it happened on, or ``""``.
    """

    def __init__(self, pe: int, detail: str, where: str = ""):
        self.pe, self.detail, self.where = pe, detail, where
        super().__init__(f"PE {pe} {detail}" + (f"\n  at {where}" if where else ""))


def _encode(obj: Any) -> bytes:
    """What crosses a pipe between a PE's process and the simulator (see the module's note)."""
    return pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)


def _decode(blob: bytes) -> Any:
    """The inverse of :func:`_encode`."""
    return pickle.loads(blob)


def isolated(program: Callable, *, time_limit_s: float = 10.0,
             idle_limit_s: float = 300.0) -> "IsolatedProgram":
    """``program`` with each PE in its own process; see :class:`IsolatedProgram`.

    Examples
    --------
    >>> from collective_lib import recv, send, simulate
    >>> def ping(me, p, data):
    ...     if me == 0:
    ...         yield send(1, data)
    ...     else:
    ...         return (yield recv(0))
    >>> with isolated(ping) as program:
    ...     simulate(program, 2, ["hello", None]).results
    [None, 'hello']
    """
    if is_stand_in(program):               # already in a sandbox: it has its own processes
        return program.each_pe_apart()
    return IsolatedProgram(program, time_limit_s=time_limit_s, idle_limit_s=idle_limit_s)


class IsolatedProgram:
    """An SPMD program whose PEs each run in a process of their own.

    Calling it as ``program(me, p, data, **params)`` returns a generator that
    any simulator of the package accepts.  On its first resume it forks a
    process in which ``program(me, p, data, **params)`` runs; it yields each
    operation that PE yields and returns the PE's return value.  The process is
    killed when the generator finishes or is closed; when a PE fails, the
    processes of all PEs of the program are, since the run ends there.

    Parameters
    ----------
    program : generator function
        The SPMD program, ``program(me, p, data, **params)``.
    time_limit_s : float
        Real time a PE may take to yield its next operation or return; a PE
        that takes longer is killed and :class:`PEProcessError` raised.
    idle_limit_s : float
        A PE process that hears nothing from this process for this long ends
        itself (a last resort for runs abandoned without :meth:`close`).

    Raises
    ------
    PEProcessError
        From the generator, when the PE raised ("PE 3 raised KeyError: 0"),
        did not answer within ``time_limit_s``, died, or yielded or returned
        something that cannot be sent between processes.
    TypeError
        When ``program`` is not a generator function.

    Notes
    -----
    A simulator that raises (a deadlock) leaves the other PEs' generators
    suspended, and its traceback keeps them alive; use the program as a
    context manager, or call :meth:`close`, to kill every PE process still
    running.

    Examples
    --------
    >>> from collective_lib import DeadlockError, recv, simulate
    >>> def wait_forever(me, p, data):
    ...     return (yield recv((me + 1) % p))
    >>> try:
    ...     with isolated(wait_forever) as program:
    ...         simulate(program, 3)
    ... except DeadlockError as err:
    ...     print(str(err).splitlines()[0], program.live_pes())
    deadlock at time 0: 3 PE(s) wait forever []
    """

    def __init__(self, program: Callable, *, time_limit_s: float = 10.0,
                 idle_limit_s: float = 300.0):
        if not callable(program):
            raise TypeError(f"program must be a generator function, got {program!r}")
        for name, value in (("time_limit_s", time_limit_s), ("idle_limit_s", idle_limit_s)):
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not value > 0:
                raise ValueError(f"{name} must be a positive number, got {value!r}")
        self.program = program
        self.time_limit_s = float(time_limit_s)
        self.idle_limit_s = float(idle_limit_s)
        # messages name the student's program, not this wrapper
        self.__name__ = getattr(program, "__name__", None) or type(program).__name__
        self._live: dict = {}          # process -> (pe, connection) of the PE processes running

    def __repr__(self) -> str:
        return f"isolated({self.__name__})"

    def __call__(self, me: int, p: int, data: Any = None, **params):
        return self._pe(me, p, data, params)

    def __enter__(self) -> "IsolatedProgram":
        return self

    def __exit__(self, kind, value, tb) -> bool:
        self.close()
        return False

    def live_pes(self) -> list:
        """The ranks whose processes are running (started and not yet stopped)."""
        return sorted(pe for pe, _ in self._live.values())

    def close(self) -> None:
        """Kill every PE process of this program that is still running."""
        for process, (_, conn) in list(self._live.items()):
            self._stop(conn, process)

    def _pe(self, me, p, data, params):
        """The generator the simulator drives for PE ``me``."""
        conn, child_end = _FORK.Pipe()
        process = _FORK.Process(target=_serve, name=f"PE {me}", daemon=True,
                                args=(child_end, self.program, me, p, data, params,
                                      self.idle_limit_s))
        _parent_ends.add(conn)
        try:
            process.start()
            self._live[process] = (me, conn)
            child_end.close()
            while True:
                kind, payload, where = self._answer(me, conn, process)
                if kind == "done":
                    return payload
                if kind == "raised":
                    self.close()            # the run ends here: stop the other PEs too
                    raise PEProcessError(me, payload, where)
                if kind == "not a generator":
                    raise TypeError(f"{self.__name__!r} is not a generator function: an SPMD "
                                    "program must yield its operations")
                value = yield payload                      # kind == "op"
                try:
                    conn.send_bytes(_encode(value))
                except OSError:
                    pass                                   # it died: _answer says so
        finally:
            child_end.close()
            self._stop(conn, process)

    def _answer(self, me, conn, process) -> tuple:
        """The PE's next reply ``(kind, payload, where)``; its output goes to ours."""
        if not conn.poll(self.time_limit_s):
            self.close()                    # the run ends here: stop the other PEs too
            raise PEProcessError(me, f"did not answer within {self.time_limit_s:g} s of real "
                                 "time (an endless loop?); its process was stopped")
        try:
            kind, payload, where, out, err = _decode(conn.recv_bytes())
        except (EOFError, OSError):
            process.join(1.0)
            self.close()
            raise PEProcessError(me, "ended its process without an answer (exit code "
                                 f"{process.exitcode})") from None
        if out:
            sys.stdout.write(out)
        if err:
            sys.stderr.write(err)
        return kind, payload, where

    def _stop(self, conn, process) -> None:
        """Kill and reap one PE process and close its pipe (any number of times)."""
        _parent_ends.discard(conn)
        conn.close()
        self._live.pop(process, None)
        if process.pid is not None:
            if process.exitcode is None:
                process.kill()
            process.join()                  # reaps it, and multiprocessing forgets it


def noting(program: Callable, notes: dict) -> Callable:
    """``program``, with what each PE started from and did noted for :func:`differs_alone`.

    ``notes[me]`` becomes ``(data, operations, values)``: a copy of PE me's data as
    it started, every operation it yielded and every value it was resumed with.

    Examples
    --------
    >>> from collective_lib import sendrecv, simulate
    >>> def swap(me, p, data):
    ...     return (yield sendrecv(1 - me, data, 1 - me))
    >>> notes = {}
    >>> simulate(noting(swap, notes), 2, ["a", "b"]).results
    ['b', 'a']
    >>> notes[0]
    ('a', [SendRecv(dst=1, data='a', src=1, words=1)], ['b'])
    """
    @functools.wraps(program)
    def noted(me, p, data, **params):
        start = copy.deepcopy(data)             # the PE may change its data as it runs
        steps = program(me, p, data, **params)
        if not inspect.isgenerator(steps):
            return steps                        # for the simulator to refuse
        operations, values = [], []
        notes[me] = (start, operations, values)
        return relay(steps, _appended(operations), _appended(values))
    return noted


def _appended(items: list) -> Callable:
    def append(item):
        items.append(item)
        return item
    return append


def differs_alone(program: Callable, me: int, p: int, params: dict, noted: tuple, result: Any,
                  *, time_limit_s: float = 10.0) -> str:
    """How PE ``me`` of a run behaves otherwise in a process of its own; ``""`` if it does not.

    The PE runs alone (:func:`isolated`) from the data it started from and is fed
    the values it was resumed with in the run (``noted``, from :func:`noting`); it
    must yield the same operations and return ``result``.  A PE that reads another
    PE's state through a Python global of a process they share cannot: alone, it
    has only its own data and its messages.  So a program that shares state only
    when it can, and behaves when alone, is caught on its shared runs.

    Examples
    --------
    >>> from collective_lib import recv, send, simulate
    >>> SEEN = {}
    >>> def peek(me, p, data):
    ...     SEEN[me] = data
    ...     if me == 0:
    ...         yield send(1, None, words=0)
    ...     else:
    ...         yield recv(0)
    ...     return SEEN.get(0)              # PE 0's data, read from its memory
    >>> notes = {}
    >>> run = simulate(noting(peek, notes), 2, ["secret", None])
    >>> run.results
    ['secret', 'secret']
    >>> SEEN.clear()           # a PE's process starts as a copy of this one (see isolated)
    >>> differs_alone(peek, 1, 2, {}, notes[1], run.results[1])
    "returned None, where it returned 'secret' in the run"
    """
    data, operations, values = noted
    done = 0
    with isolated(program, time_limit_s=time_limit_s) as alone:
        steps = alone(me, p, data, **params)
        try:
            op = next(steps)
            for want, value in zip(operations, values):
                if not _same(op, want):
                    return (f"yielded {format_value(op)} as its operation {done + 1}, where it "
                            f"yielded {format_value(want)} in the run")
                done += 1
                op = steps.send(value)
            return (f"yielded {format_value(op)} after its {plural(done, 'operation')}, where "
                    "it returned in the run")
        except StopIteration as stop:
            if done < len(operations):
                return (f"returned after {plural(done, 'operation')}, where it yielded "
                        f"{len(operations)} in the run")
            if not _same(stop.value, result):
                return (f"returned {format_value(stop.value)}, where it returned "
                        f"{format_value(result)} in the run")
            return ""
        except PEProcessError as exc:
            return exc.detail


def _same(a: Any, b: Any) -> bool:
    """The same value, NaN included (equal, or spelt the same in full: numpy shortens the
    spelling of an array of over 1000 items, and two such arrays could look alike)."""
    if same_value(a, b):
        return True
    with np.printoptions(threshold=sys.maxsize):
        return repr(a) == repr(b)


def _serve(conn, program, me, p, data, params, idle_limit_s) -> None:
    """The PE's own process: run the real generator, one operation per message."""
    for end in list(_parent_ends):      # the other PEs' pipes are not this PE's business
        end.close()
    _parent_ends.clear()
    out, err = io.StringIO(), io.StringIO()
    sys.stdout, sys.stderr = out, err   # sent back with each reply

    def reply(kind, payload, where="") -> bool:
        """Send one reply; False if it had to say instead that ``payload`` cannot be sent."""
        texts = out.getvalue(), err.getvalue()
        for stream in (out, err):
            stream.seek(0)
            stream.truncate()
        try:
            blob, sent = _encode((kind, payload, where, *texts)), True
        except Exception as exc:
            what = "returned a value" if kind == "done" else "yielded an operation"
            blob, sent = _encode(("raised", f"{what} that cannot be sent to another process "
                                  f"({type(exc).__name__}: {exc})", "", *texts)), False
        conn.send_bytes(blob)
        return sent

    try:
        gen = program(me, p, data, **params)
    except BaseException as exc:
        reply("raised", _raised(exc), student_line(exc))
        return
    if not inspect.isgenerator(gen):
        reply("not a generator", None)
        return
    value = None
    while True:
        try:
            op = gen.send(value)
        except StopIteration as stop:
            reply("done", stop.value)
            return
        except BaseException as exc:
            reply("raised", _raised(exc), student_line(exc))
            return
        if not reply("op", op) or not conn.poll(idle_limit_s):
            return
        try:
            value = _decode(conn.recv_bytes())
        except (EOFError, OSError):          # the simulator is gone
            return


def _raised(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"raised {type(exc).__name__}" + (f": {text}" if text else "")
