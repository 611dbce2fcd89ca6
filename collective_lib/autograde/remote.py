"""The checker's side of trusted grading: stand-ins for what a student's cells define.

In the checker (:mod:`.checker`), every name a student's solution cell defines
is bound to a stand-in from this module. The hidden tests and the grading
library use the stand-ins as they would use the student's objects, and every
use becomes a request to a sandboxed student process (:mod:`.student`):

* :class:`Remote` for a function, a program (generator function) or a class:
  calling it calls the student's object there; a generator it returns is
  driven from here step by step (a real generator, so the simulator takes
  it); an instance it returns is a :class:`RemoteObject`;
* data (lists, numbers, tables) is copied here once, decoded (:mod:`.codec`);
* :class:`Missing` for a name the student's cells do not define, raising the
  reason at first use.

All PEs of a run share one student process, as they would share a kernel,
unless the check asks for :meth:`Remote.each_pe_apart`: then every PE (every
call) gets a process of its own, so PEs cannot meet through Python globals.
The trusted side passes its own callables (a reduction's ``op``, a
replacement of a student's function in a later part) as references the
student's process can only call back.
"""
from __future__ import annotations

import builtins
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

from ..grading.failures import CheckFailed
from ..grading.isolation import PEProcessError
from ..grading.standins import StandIn
from .codec import Undecodable, decode, encode, receive_message, send_message
from .cgroups import SubmissionGroup

__all__ = ["HostTemplate", "Host", "StudentProcess", "Sandbox", "Remote", "RemoteObject",
           "CELLS_S", "Missing", "StudentCodeError", "StartFailed"]

_START_S = 30.0          # the host's own start, forked from its template
#: Real time the student's cells may take to run in each new process, before the course's
#: factor on every budget of student code (``TrustedVerdict.time_scale``) multiplies it.
CELLS_S = 20.0
_ANSWER_S = 120.0        # one request; the grading library's own limits are shorter


class StartFailed(AssertionError):
    """The student's cells never finished running in a new process (each later try fails too)."""


class StudentCodeError(Exception):
    """The student's code raised ``type_name`` in its process (``where``: its line)."""

    def __init__(self, message: str, where: str = ""):
        super().__init__(message)
        self.student_where = where


_ERROR_TYPES: dict = {}


def _student_error(reply: dict) -> StudentCodeError:
    """An exception named like the student's (``KeyError``), carrying its message and line."""
    name = str(reply.get("type") or "Error")
    name = name if name.isidentifier() else "Error"
    message, where = str(reply.get("err", "")), str(reply.get("where", ""))
    if name not in _ERROR_TYPES:
        builtin = getattr(builtins, name, None)
        kinds = [(StudentCodeError,)]
        if (isinstance(builtin, type) and issubclass(builtin, Exception)
                and not issubclass(builtin, AssertionError)):
            kinds.insert(0, (StudentCodeError, builtin))     # `except KeyError` still works
        for bases in kinds:
            try:
                kind = type(name, bases, {})
                kind(message, where)
            except TypeError:                # a builtin whose layout cannot be mixed in
                continue
            _ERROR_TYPES[name] = kind
            break
    return _ERROR_TYPES[name](message, where)


class HostTemplate:
    """A process that has imported what a student host needs, and forks hosts from it.

    Started once (by ``TrustedVerdict`` for a whole ``nbgrader autograde`` run, or by
    a :class:`Host` for itself), it runs :func:`.student.serve_template`: every
    :class:`Host` hands it one end of a socket and gets a new host process, which
    has paid for neither an interpreter nor its imports. The template never sees a
    job, so each host starts as pristine as a new interpreter would. It ends when
    :meth:`close` is called or this process exits.
    """

    def __init__(self):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.cwd = tempfile.mkdtemp(prefix="collective-host-")   # nothing there to import
        # one thread per process for the numerical libraries: threads count as processes
        env = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1",
                   MKL_NUM_THREADS="1")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "collective_lib.autograde.student", str(theirs.fileno())],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            pass_fds=(theirs.fileno(),), cwd=self.cwd, start_new_session=True, env=env)
        theirs.close()
        self.sock = ours

    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> None:
        """Stop the template (hosts it forked live on until their checkers let go). The
        template removes its directory as it ends, even when this process ends first."""
        self.sock.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            os.rmdir(self.cwd)


def _pidfd(pid: int) -> int | None:
    """A descriptor of process ``pid`` (Linux >= 5.3), which no later process can reuse."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


class Host:
    """The pristine process that forks student processes (:mod:`.student`).

    It is forked by a :class:`HostTemplate`: ``template``, a socket connected to
    one (the checker gets it from ``TrustedVerdict``), or else a template this host
    starts for itself and stops in :meth:`close`. Its first request waits until the
    host is ready, so the checker's own work overlaps the host's start. Each process
    it forks must have run the student's ``cells`` within ``cells_s`` seconds. Its
    empty folder is made in ``scratch``: the checker's, which outlives a killed checker.

    With a :class:`~.cgroups.SubmissionGroup` in ``limits["group"]``, the host
    joins that group before it forks anything, so every process of the
    submission counts in its limits, and a watcher thread here stops the
    student processes (never the host) when the group says a limit was passed:
    the kernel's OOM killer struck (cgroup v1 stops only one process), a fork was
    refused, or the CPU-time budget is spent (then no process starts again).
    :meth:`why` gives the reason, which becomes the failed call's message.
    """

    _WATCH_S = 0.1

    def __init__(self, cells: list, hide: list, uid: int | None, limits: dict | None = None,
                 template: socket.socket | None = None, cpu: int | None = None,
                 cells_s: float = CELLS_S, scratch: str | None = None):
        self.cells_s = cells_s          # see CELLS_S
        description = (limits or {}).get("group")
        self.group = SubmissionGroup.from_description(description) if description else None
        self.events: list = []          # why the group's processes were stopped, in order
        self.spent: str | None = None   # why no process may start any more
        self._seen: dict = {}
        self._counters = b""
        self._cpu_before = 0.0          # the host's own start-up: not the student's budget
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._ready = False
        self._own_template = HostTemplate() if template is None else None
        self.cwd = tempfile.mkdtemp(prefix="collective-host-", dir=scratch)  # nothing to import
        self.sock, theirs = socket.socketpair()
        self._pidfd = None
        try:
            socket.send_fds(template or self._own_template.sock, [b"H"], [theirs.fileno()])
            theirs.close()
            self.sock.settimeout(_START_S)
            (self.pid,) = struct.unpack("!I", self._exactly(4))
            self._pidfd = _pidfd(self.pid)
            job = json.dumps({"cells": cells, "hide": hide, "uid": uid, "cpu": cpu,
                              "limits": limits or {}, "cwd": self.cwd}).encode()
            self.sock.sendall(struct.pack("!Q", len(job)) + job)
        except (OSError, EOFError) as err:
            theirs.close()
            self.close()
            raise RuntimeError(f"the student host did not start ({err})") from None

    def _exactly(self, size: int) -> bytes:
        chunks = []
        while size:
            chunk = self.sock.recv(size)
            if not chunk:
                raise EOFError
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def _wait_ready(self) -> None:
        """Wait for the host's first word (it joined its group and can fork)."""
        if self._ready:
            return
        if self._exactly(1) != b"R":
            raise RuntimeError("the student host did not start")
        self.sock.settimeout(None)
        self._ready = True
        if self.group is not None:
            self._seen, self._counters = self.group.usage(), self.group.counters()
            self._cpu_before, self._seen["cpu_s"] = self._seen["cpu_s"], 0.0
            self._watcher = threading.Thread(target=self._watch, daemon=True,
                                             name="submission-limits")
            self._watcher.start()

    def _watch(self) -> None:
        while not self._stop.wait(self._WATCH_S):
            self.poll()

    def poll(self) -> None:
        """Read the group's counters; stop the student processes if a limit was passed."""
        if self.group is None:
            return
        with self._lock:
            self._counters = self.group.counters()
            now = self.group.usage()
            now["cpu_s"] -= self._cpu_before
            passed = self.group.exceeded(self._seen, now)
            self._seen = now
            if "cpu" in passed and self.spent is None:
                self.spent = passed["cpu"]
                self.events.append(self.spent)
            new = [passed[kind] for kind in ("memory", "processes") if kind in passed]
            self.events.extend(new)
            if new or self.spent:
                self.group.kill(spare={self.pid}, wait_s=0.5, wait=False)

    def changed(self) -> bool:
        """Whether the group's event counters moved since the last :meth:`poll` (cheap)."""
        return self.group is not None and self.group.counters() != self._counters

    def mark(self) -> int:
        """A point in the record of stopped processes (see :meth:`why`)."""
        return len(self.events)

    def why(self, mark: int = 0) -> str | None:
        """Why the group's limits stopped processes after ``mark``, if they did."""
        self.poll()
        return self.events[-1] if len(self.events) > mark else None

    def fork(self, poison: list = ()) -> "StudentProcess":
        if self.spent:
            raise StartFailed(f"your code was not run: {self.spent}")
        try:
            self._wait_ready()
        except (OSError, EOFError) as err:
            raise RuntimeError(f"the student host did not start ({err})") from None
        mark = self.mark()
        for attempt in range(20):
            child_reads, checker_writes = os.pipe()
            checker_reads, child_writes = os.pipe()
            try:
                socket.send_fds(self.sock, [json.dumps({"poison": list(poison)}).encode()],
                                [child_reads, child_writes])
                data, fds, _, _ = socket.recv_fds(self.sock, 4096, 1)
                answer = json.loads(data)
                if "pid" in answer and len(fds) == 1:
                    return StudentProcess(answer["pid"], fds[0], checker_writes,
                                          checker_reads, self)
                for fd in fds:
                    os.close(fd)
                failure = f"a new process was refused ({answer.get('refused')})"
            except (OSError, ValueError):
                failure = "the process that starts it stopped"
                attempt = None
            finally:
                os.close(child_reads)
                os.close(child_writes)
            for fd in (checker_writes, checker_reads):
                os.close(fd)
            if attempt is None or self.spent:
                break
            time.sleep(self._WATCH_S)          # the watcher stops what filled the group
            self.poll()
        raise StartFailed(f"your code could not be run: {self.why(mark) or failure}")

    def close(self) -> None:
        """Stop the host: it holds nothing that must be saved, so it is killed, not asked."""
        self._stop.set()
        if self.group is not None:
            if self._ready:
                self._watcher.join()
            self.group.close()
        self.sock.close()
        self._end_host()
        if self._own_template is not None:
            self._own_template.close()
        os.rmdir(self.cwd)

    def _end_host(self) -> None:
        """Kill the host and wait (at most 10 s) until it is gone."""
        if self._pidfd is None:          # no pidfd: the host leaves when its socket closes
            return
        try:
            signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)
            select.select([self._pidfd], [], [], 10)     # readable once it has exited
        except OSError:
            pass
        finally:
            os.close(self._pidfd)


#: Why a student process that sent something other than its answer was stopped: the
#: student's code can write to the process's pipe to the checker.
_FORGED = ("sent the grader a message that is not its answer (does your code write to "
           "the grader's pipe?) and was stopped")


class StudentProcess:
    """One sandboxed process that ran the student's cells; requests go over its pipes.

    A request during which the submission's group passed a limit (see
    :class:`Host`) fails with that reason, whether or not this process was the
    one stopped.
    """

    def __init__(self, pid: int, pidfd: int, wfd: int, rfd: int, host: Host | None = None):
        self.pid, self.pidfd, self.wfd, self.rfd = pid, pidfd, wfd, rfd
        self.host = host
        self.callbacks: list = []
        self.alive = True
        self.overrides: dict = {}          # name -> value the checker set there
        budget = CELLS_S if host is None else host.cells_s
        ready = self._reply(time.monotonic() + budget, self._mark())
        self.first_error = ready.get("first_error", "")
        if "ready" not in ready:
            self.kill()
            # the one message before "ready" is the student's code writing to the pipe
            err = _FORGED if ready.get("type") == "Undecodable" else ready.get("err", _FORGED)
            if ready.get("limit"):
                raise StartFailed(f"your cells did not finish running: {err}")
            within = f" within {budget:g} s" if ready.get("type") == "TimeoutError" else ""
            raise StartFailed(f"your cells did not finish running{within}: the process that "
                              f"ran them {err}")

    def _mark(self) -> int:
        return self.host.mark() if self.host is not None else 0

    def request(self, message: dict, timeout_s: float = _ANSWER_S) -> dict:
        """Send ``message``; serve the student's callbacks until its answer comes."""
        if not self.alive:
            return {"err": "its process had already been stopped", "type": "RuntimeError"}
        mark = self._mark()
        try:
            send_message(self.wfd, message)
        except OSError:
            self.kill()
            return self._died(mark)
        return self._reply(time.monotonic() + timeout_s, mark)

    def _reply(self, deadline: float, mark: int) -> dict:
        try:
            while True:
                reply = receive_message(self.rfd, deadline)
                if not isinstance(reply, dict):     # the student's code wrote to the pipe
                    self.kill()
                    return {"err": _FORGED, "type": "RuntimeError"}
                if "call" not in reply:
                    break
                index = reply["call"]
                if not (type(index) is int and 0 <= index < len(self.callbacks)):
                    self.kill()                     # no function of the checker's has it
                    return {"err": _FORGED, "type": "RuntimeError"}
                send_message(self.wfd, self._call_back(reply), deadline)
        except TimeoutError:
            self.kill()
            return self._died(mark) if self._stopped(mark) else {
                "err": "gave no answer within its time limit (an endless loop?); its "
                       "process was stopped", "type": "TimeoutError"}
        except Undecodable as err:
            # a value the checker cannot take (more items than a graded value may hold, not
            # JSON): what is read next is unknown, so the process goes, and the call fails
            # with the reason, as one the student's side refused does (student._Server.answer)
            self.kill()
            return self._died(mark) if self._stopped(mark) else {
                "err": str(err), "type": "Undecodable"}
        except (EOFError, OSError, KeyError, TypeError):
            self.kill()
            return self._died(mark)
        except BaseException:              # the grading library's own time limit, say
            self.kill()
            raise
        if self.host is not None and self.host.changed():
            self.host.poll()
        if self._stopped(mark):            # an answer, but the submission passed a limit
            self.kill()
            return self._died(mark)
        return reply

    def _stopped(self, mark: int) -> bool:
        return self.host is not None and len(self.host.events) > mark

    def _died(self, mark: int = 0) -> dict:
        reason = self.host.why(mark) if self.host is not None else None
        if reason:
            return {"err": reason, "type": "RuntimeError", "limit": True}
        return {"err": "its process died (out of memory or CPU time, killed, or it exited)",
                "type": "RuntimeError"}

    def _call_back(self, message: dict) -> dict:
        try:
            function = self.callbacks[message["call"]]
            value = function(*decode(message["args"], self._remote_callable),
                             **decode(message["kwargs"], self._remote_callable))
            return {"ret": self.encode(value)}
        except Exception as err:
            return {"err": f"{type(err).__name__}: {err}"}

    def _remote_callable(self, index: int):
        raise Undecodable("a student's process cannot send callables")

    def encode(self, value: Any) -> Any:
        return encode(value, self.callbacks)

    def kill(self) -> None:
        """Stop this process and its process group, never another's.

        The host's children reap themselves: a process that died on its own (its
        submission's group stopped it, it crashed) leaves its pid free for any new
        process, such as another notebook's checker, a session leader. So the
        process is reached through its descriptor (``pidfd``), and its group by
        number only while the descriptor says the leader still lives (while it does,
        no other process can hold its pid or lead a group of that number).
        """
        if not self.alive:
            return
        self.alive = False
        try:
            signal.pidfd_send_signal(self.pidfd, 0)      # the leader lives: the group is its
            os.killpg(self.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        for fd in (self.wfd, self.rfd, self.pidfd):
            try:
                os.close(fd)
            except OSError:
                pass


class Sandbox:
    """The student processes of one notebook, and the names the checker binds to them."""

    def __init__(self, host: Host, namespace: dict, sources: list):
        self.host, self.namespace = host, namespace
        self.sources = list(sources)       # the student's cells, as the notebook holds them
        self.bound: dict = {}              # name -> its stand-in in the checker's namespace
        self.shared: StudentProcess | None = None
        self.live: list = []
        self.start_failure: StartFailed | None = None
        self.forbidden: frozenset = frozenset()   # library names this cell's processes lack

    def forbid(self, names) -> None:
        """From now to the end of the cell, run the student's code where the library's
        ``names`` cannot run (:mod:`.poison`).

        Every process forked after this is poisoned with all the names forbidden so far
        in the cell, and the processes already running are stopped, so that every check
        that follows (a later call of any stand-in, each PE apart) runs in a poisoned
        one. Each test cell says what it forbids; the next cell starts anew, since a
        name forbidden for one part may be allowed in another.
        """
        new = frozenset(str(n) for n in names) - self.forbidden
        if not new:
            return
        self.forbidden |= new
        for proc in self.live:
            proc.kill()
        self.live, self.shared = [], None

    def process(self) -> StudentProcess:
        """The process all calls share (a new one once the last died or a cell ended)."""
        if self.shared is None or not self.shared.alive:
            self.shared = self.fresh()
        return self.shared

    def fresh(self) -> StudentProcess:
        """A new process that ran the student's cells (once that failed, fail at once),
        poisoned with the names the cell forbids (:meth:`forbid`)."""
        if self.start_failure is not None:
            raise self.start_failure
        try:
            proc = self.host.fork(sorted(self.forbidden))
        except StartFailed as failure:
            self.start_failure = failure
            raise
        self.live.append(proc)
        return proc

    def sync(self, proc: StudentProcess) -> None:
        """Give ``proc`` the checker's replacements of student names (a later part's tests
        may grade it against the reference's earlier part) and undo those taken back."""
        for name, standin in self.bound.items():
            current = self.namespace.get(name, standin)
            if current is standin or (isinstance(current, Remote) and current.path == [name]):
                if name in proc.overrides:
                    del proc.overrides[name]
                    proc.request({"kind": "restore", "name": name})
            elif proc.overrides.get(name, _NOTHING) is not current:
                try:
                    value = proc.encode(current)
                except Undecodable:         # nothing the student's code could use
                    continue
                proc.overrides[name] = current
                proc.request({"kind": "set", "name": name, "value": value})

    def end_cell(self) -> None:
        for proc in self.live:
            proc.kill()
        self.live, self.shared = [], None
        self.forbidden = frozenset()

    def bind(self, names: list, required: frozenset | set = frozenset()) -> dict:
        """Stand-ins for ``names`` as the student's cells left them.

        A name the student's cells do not define becomes a :class:`Missing`,
        which fails at its first use. So does a value that cannot cross to the
        checker (:mod:`.codec`), unless the cell reads it (its name in
        ``required``): then the cell fails here, with the codec's reason, as a
        ``"wrong_form"`` :class:`~collective_lib.grading.CheckFailed`. A check
        that asked ``isinstance(table, dict)`` of a :class:`Missing` would blame
        the value's type instead; a name the cell also assigns may never be read.
        """
        found = {}
        for name in names:
            try:
                reply = self.process().request({"kind": "describe", "path": [name]})
            except StartFailed as failure:
                reply = {"err": str(failure)}
            if "err" not in reply and reply.get("kind") == "data":
                try:
                    found[name] = decode(reply["value"])
                    continue
                except Undecodable as err:
                    reply = {"err": str(err), "type": "Undecodable"}
            if "err" in reply:
                if reply.get("type") == "Undecodable" and name in required:
                    raise CheckFailed(f"{name}: {reply['err']}", kind="wrong_form")
                found[name] = Missing(f"{name}: {reply['err']}")
            elif reply.get("kind") not in _KINDS:     # written to the pipe by the student
                found[name] = Missing(f"{name}: the process that ran your cells {_FORGED}")
            else:
                found[name] = Remote(self, [name], reply["kind"], name)
        self.bound.update({n: v for n, v in found.items() if not isinstance(v, Missing)})
        return found


_NOTHING = object()
#: What a student process says a name is (``student.Host.describe``).
_KINDS = ("data", "program", "class", "function")


class Remote(StandIn):
    """A student's function, program or class, living in a student process."""

    def __init__(self, sandbox: Sandbox, path: list, kind: str, name: str,
                 process: StudentProcess | None = None, apart: bool = False):
        self.sandbox, self.path, self.kind = sandbox, path, kind
        self.__name__ = self.__qualname__ = name
        self._process, self.apart = process, apart
        self._own: list = []

    def __repr__(self) -> str:
        return f"<student's {self.kind} {self.__name__}>"

    def each_pe_apart(self) -> "Remote":
        """The same object, with every call (every PE, every instance) in a new process.

        Also a context manager whose exit (or :meth:`close`) stops those processes.
        """
        return Remote(self.sandbox, self.path, self.kind, self.__name__, apart=True)

    def __enter__(self) -> "Remote":
        return self

    def __exit__(self, *exc) -> bool:
        self.close()
        return False

    def close(self) -> None:
        """Stop the processes this stand-in started for itself alone."""
        for proc in self._own:
            proc.kill()
        self._own = []

    def student_sources(self) -> list:
        return list(self.sandbox.sources)

    def forbid(self, names) -> None:
        """The library's ``names`` cannot run in the student's processes for the rest of
        the cell (:meth:`Sandbox.forbid`)."""
        self.sandbox.forbid(names)

    def _target(self) -> StudentProcess:
        if self._process is not None:
            return self._process
        if self.apart:
            self._own.append(self.sandbox.fresh())
            return self._own[-1]
        return self.sandbox.process()

    def replayer(self) -> "_RemoteReplayer":
        """A :class:`~collective_lib.shared_memory.Replayer` of this class that plays its
        instances in the student's process, one request per event."""
        return _RemoteReplayer(self)

    def __getattr__(self, attr: str):
        if attr.startswith("__") or self.kind != "class":
            raise AttributeError(attr)
        # A class attribute (a static method such as memory(p)) belongs to no PE: it is
        # looked up and called where the class's other non-PE calls go, never apart.
        shared = Remote(self.sandbox, self.path, self.kind, self.__name__,
                        process=self._process)
        proc = shared._target()
        reply = proc.request({"kind": "describe", "path": self.path + [attr]})
        if "err" in reply:
            raise AttributeError(f"{self.__name__} has no attribute {attr!r} ({reply['err']})")
        if reply["kind"] == "data":
            return decode(reply["value"])
        return Remote(self.sandbox, self.path + [attr], reply["kind"],
                      f"{self.__name__}.{attr}", process=self._process)

    def __call__(self, *args, **kwargs):
        if self.kind == "program":
            return self._pe(args, kwargs)
        proc = self._target()
        return _result(self.sandbox, proc, _call(self.sandbox, proc, self.path, args, kwargs),
                       self.__name__)

    def _pe(self, args, kwargs):
        """One PE of a program: the student's generator, driven across the pipe."""
        me = args[0] if args else kwargs.get("me", "?")
        proc = self._target()
        try:
            reply = _call(self.sandbox, proc, self.path, args, kwargs, step=True)
            if "gen" not in reply:
                value = _result(self.sandbox, proc, reply, self.__name__)
                return value
            gen = reply["gen"]
            while True:                     # the reply holds the next step's outcome
                if "done" in reply:
                    return decode(reply["done"])
                if "err" in reply and self.apart:
                    raise PEProcessError(me, f"raised {reply.get('type')}: {reply['err']}",
                                         reply.get("where", ""))
                if "err" in reply:
                    raise _student_error(reply)
                value = yield decode(reply["op"])
                reply = proc.request({"kind": "resume", "gen": gen,
                                      "value": proc.encode(value)})
        finally:
            if self.apart:
                proc.kill()


class _RemoteReplayer:
    """:class:`~collective_lib.shared_memory.Replayer`'s methods, answered by a student process.

    ``start`` sends the class's path, the arguments and the history once and gets a handle
    for the object made; each ``step`` (some 40,000 a search) sends that handle and one
    value to the process holding it, even where each PE runs apart. The checker takes only
    the event and the value it decodes, whatever the handle."""

    def __init__(self, standin: Remote):
        self.standin = standin
        self.replays: dict = {}         # tuple(args) -> (process, handle) of their object

    def start(self, args, history) -> tuple:
        proc = self.standin._target()
        old = self.replays.get(tuple(args))      # still stepped should this start fail
        reply = self._reply(proc, {
            "kind": "replay", "path": self.standin.path, "args": proc.encode(list(args)),
            "history": [[k, proc.encode(v)] for k, v in history],
            "replaces": old[1] if old is not None and old[0] is proc else None})
        handle = reply.get("replay")
        if type(handle) is not int:         # written to the pipe by the student's code
            proc.kill()
            raise _student_error({"err": _FORGED, "type": "RuntimeError"})
        self.replays[tuple(args)] = (proc, handle)
        return reply["event"], decode(reply["value"])

    def step(self, args, step) -> tuple:
        try:
            proc, handle = self.replays[tuple(args)]
        except KeyError:
            raise RuntimeError(f"no replay of {self.standin.__name__}{tuple(args)} was "
                               "started: start() one before its steps") from None
        reply = self._reply(proc, {"kind": "replay_step", "replay": handle,
                                   "step": [step[0], proc.encode(step[1])]})
        return reply["event"], decode(reply["value"])

    def _reply(self, proc, request) -> dict:
        self.standin.sandbox.sync(proc)
        reply = proc.request(request)
        if "err" in reply:
            raise _student_error(reply)
        return reply


def _call(sandbox: Sandbox, proc: StudentProcess, path: list, args, kwargs,
          step: bool = False) -> dict:
    """Call the student's object; with ``step``, a generator it returns also takes its
    first step (its first operation or its end comes in the same reply)."""
    sandbox.sync(proc)
    return proc.request({"kind": "call", "path": path, "args": proc.encode(list(args)),
                         "kwargs": proc.encode(kwargs), "step": step})


def _result(sandbox: Sandbox, proc: StudentProcess, reply: dict, name: str):
    """The decoded value of a call, or a stand-in for what cannot be copied here."""
    if "err" in reply:
        raise _student_error(reply)
    if "gen" in reply:
        return _generator(proc, reply["gen"], name)
    if "obj" in reply:
        return RemoteObject(sandbox, proc, reply["obj"], reply.get("type", "object"))
    return decode(reply["ret"])


def _generator(proc: StudentProcess, gen: int, name: str):
    value = None
    while True:
        reply = proc.request({"kind": "resume", "gen": gen, "value": proc.encode(value)})
        if "done" in reply:
            return decode(reply["done"])
        if "err" in reply:
            raise _student_error(reply)
        value = yield decode(reply["op"])


class RemoteObject(StandIn):
    """An instance of a student's class, living in the process that made it."""

    kind = "instance"

    def __init__(self, sandbox: Sandbox, proc: StudentProcess, handle: int, type_name: str):
        self._sandbox, self._proc, self._handle = sandbox, proc, handle
        self._type_name = type_name

    def __repr__(self) -> str:
        return f"<student's {self._type_name} instance>"

    def student_sources(self) -> list:
        return list(self._sandbox.sources)

    def forbid(self, names) -> None:
        self._sandbox.forbid(names)

    def each_pe_apart(self):
        raise TypeError(f"{self!r} lives in the process that made it: it cannot run "
                        "in processes of its own or be replayed")

    replayer = each_pe_apart

    def __getattr__(self, attr: str):
        if attr.startswith("_"):
            raise AttributeError(attr)
        reply = self._proc.request({"kind": "describe", "path": [self._handle, attr]})
        if "err" in reply:
            raise AttributeError(f"{self._type_name} has no attribute {attr!r}")
        if reply["kind"] == "data":
            return decode(reply["value"])
        return Remote(self._sandbox, [self._handle, attr], reply["kind"],
                      f"{self._type_name}.{attr}", process=self._proc)


class Missing(StandIn):
    """A name the student's cells do not define (or define as something ungradable)."""

    def __init__(self, reason: str):
        self._reason = reason
        self.__name__ = reason.split(":")[0]

    def _fail(self, *args, **kwargs):
        raise NameError(self._reason)

    __call__ = __iter__ = __len__ = __getitem__ = __bool__ = __eq__ = __hash__ = _fail
    student_sources = each_pe_apart = replayer = _fail

    def forbid(self, names) -> None:
        """Nothing to forbid: every use of the name fails with its reason."""

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        self._fail()
