"""The student's side of trusted grading: a pristine host that forks sandboxed processes.

The checker (:mod:`.checker`) starts this module as a separate program and
sends it, on stdin, only what a student may see: the cells of the notebook that
are not graded tests, the folders to hide and the sandbox's uid and limits. The
host imports what the cells will need, then forks one process per request of
the checker. It never runs a student's code itself, so every process it forks
starts from the same clean state and shares nothing with another (no globals,
no memory mapped before the fork); and since it never saw a hidden test, no
process can find one in its memory.

Each forked process enters the sandbox (:func:`.sandbox.confine`), runs the
student's cells as a kernel would (IPython's ``run_cell``: magics, input
transformers and all), and answers the checker's requests on its own pair of
pipes (:mod:`.codec`): describe a name, call a function or method, start and
resume a generator, set a name to one of the checker's callables (the student's
function that held the name then calls it too, wherever the student's code holds
it: :mod:`collective_lib.grading.forwarding`). Whatever the student's code does
to this interpreter stays here; the checker sees only the decoded values.

Run as ``python -m collective_lib.autograde.student FD``, FD being a UNIX
socket of the grader's: that process is a *template* (:func:`serve_template`).
It imports what a host needs once and then forks one host per socket it is
handed, so a notebook's host starts in a few milliseconds instead of paying
for an interpreter and its imports. The template never reads a job: each host
reads its own from its socket after the fork, so no host can find another
submission's cells in its memory.
"""
from __future__ import annotations

import inspect
import json
import os
import signal
import socket
import struct
import sys

from ..errors import student_line
from ..grading.forwarding import forward_calls_in, own_code
from . import poison as _poisoning
from .codec import Undecodable, decode, encode, receive_message, send_message
from .cgroups import SubmissionGroup
from .sandbox import Limits, confine

__all__ = ["serve_template", "serve_host", "main"]

# Imported once, before any fork, so that no student process pays for them again
# (a student process can still import anything else from the interpreter's own
# folders, which the sandbox leaves readable). ``subprocess`` too: a poisoned process
# refuses to load its native part, and a cell that merely imports it must still run
# (running a process is refused on its own).
_PRELOAD = ("subprocess", "numpy", "logging", "logging.handlers", "math", "random", "itertools",
            "functools", "operator", "collections", "statistics", "fractions", "decimal",
            "dataclasses", "typing", "textwrap", "json", "csv", "heapq", "bisect", "copy",
            "re", "string", "time", "warnings", "inspect", "tempfile", "contextlib",
            "IPython.core.interactiveshell", "collective_lib", "collective_lib.grading",
            "collective_lib.shared_memory", "collective_lib.algorithms.sync",
            "collective_lib.cm200", "collective_lib.networks")
_MAX_TEXT = 2000
#: At most this much of a submission's code is transformed by the host (_transform_once).
_TRANSFORMED_HERE_BYTES = 256 << 10
#: A name the student's cells had not defined when the checker set it.
_ABSENT = object()


def _preload() -> None:
    os.environ.setdefault("MPLBACKEND", "Agg")       # should a student's cell plot
    for name in _PRELOAD:
        try:
            __import__(name)
        except ImportError:
            pass
    from collective_lib.catalog import catalog
    catalog()                       # discovers every algorithm module


def serve_host(sock: socket.socket, job: dict) -> None:
    """Fork one sandboxed student process per request on ``sock`` until it closes."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)          # children reap themselves
    from IPython.core.interactiveshell import InteractiveShell
    from traitlets.config import Config
    config = Config()
    # No history database: a shell made with one holds it open, read-write, and every
    # process forked from here would inherit that descriptor (a channel between submissions).
    config.HistoryManager.enabled = False
    shell = InteractiveShell.instance(config=config, history_length=0)
    # Nobody reads a traceback printed here (stdout is /dev/null; _error reports the
    # failure), and formatting one imports and runs IPython's stack_data machinery: most
    # of a second in every forked process whose cells raise.
    shell.showtraceback = shell.showsyntaxerror = lambda *args, **kwargs: None
    _transform_once(shell, job["cells"])
    limits = Limits(**{key: value for key, value in job.get("limits", {}).items()
                       if key != "group"})
    sock.sendall(b"R")
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(sock, 65536, 2)
        except OSError:
            return
        if not data:
            return
        request = json.loads(data)
        # what the poisoning of the new process looks up, once for all the processes with
        # these names (poison.prepare); should it fail, the process looks up for itself
        try:
            _poisoning.prepare(request.get("poison", []))
        except Exception:
            pass
        try:
            pid = os.fork()
        except OSError as err:          # the submission's processes are at their limit
            for fd in fds:
                os.close(fd)
            sock.sendall(json.dumps({"refused": err.strerror or str(err)}).encode())
            continue
        if pid == 0:
            code = 0
            try:
                sock.close()
                _student_process(fds[0], fds[1], shell, job, limits, request.get("poison", []))
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        for fd in fds:
            os.close(fd)
        # Children reap themselves, so once one exits its pid may go to any new process:
        # the checker stops it through a descriptor of this very process instead.
        try:
            pidfd = os.pidfd_open(pid)
        except OSError as err:
            sock.sendall(json.dumps({"refused": f"no descriptor of the new process "
                                                f"({err.strerror or err})"}).encode())
            continue
        try:
            socket.send_fds(sock, [json.dumps({"pid": pid}).encode()], [pidfd])
        finally:
            os.close(pidfd)


def _transform_once(shell, cells: list) -> None:
    """Make IPython's static transformation of ``cells`` (text to text: ``%magic`` and
    ``!command`` lines to Python) here, once, rather than in every process forked to run
    them: it was about half the time a process spent running an exercise's cells.

    Only cells of at most :data:`_TRANSFORMED_HERE_BYTES` in all: the host has no time
    budget of its own, so a larger submission's processes transform their cells
    themselves, within theirs. Running ``%magic`` lines or the dynamic transformations
    (of single lines, which depend on the namespace) is still the forked process's.
    """
    if sum(len(cell) for cell in cells) > _TRANSFORMED_HERE_BYTES:
        return
    manager = shell.input_transformer_manager
    transform, done = manager.transform_cell, {}
    for cell in cells:
        try:
            done[cell] = transform(cell)
        except Exception:               # the forked process meets it again, and reports it
            pass
    manager.transform_cell = lambda cell: done[cell] if cell in done else transform(cell)


def _poison(names: list, cells: list) -> None:
    """Make this process one where the library's ``names`` cannot run (before student code).

    The functions themselves are poisoned, so a program fails however it reaches
    one; ways to re-create their code are refused (:mod:`.poison`), except the code
    written in ``cells`` themselves, which the static review judges.
    """
    _poisoning.poison(names, cells)


def _error(exc: BaseException) -> dict:
    """The failure of the student's code as data: type name, message, the student's line."""
    return {"err": str(exc)[:_MAX_TEXT], "type": type(exc).__name__[:80],
            "where": student_line(exc)[:_MAX_TEXT]}


class _Server:
    """The requests one student process answers (see the module's note)."""

    def __init__(self, rfd: int, wfd: int, namespace: dict, first_error: str):
        self.rfd, self.wfd = rfd, wfd
        self.ns, self.first_error = namespace, first_error
        self.originals = {}             # names set by the checker -> the student's own value
        self.own = {}                   # of those, a function forwarded -> a copy of it
        self.undo = {}                  # of those, a function forwarded -> its undo
        self.handles = {}               # id -> generator or instance the checker refers to
        self.replays = {}               # handle -> (Replayer, args): a lock replayed
        self.replayed = 0               # the handles given so far

    def encode(self, value):
        return encode(value)

    def callback(self, index: int):
        def call(*args, **kwargs):
            send_message(self.wfd, {"call": index, "args": encode(list(args)),
                                    "kwargs": encode(kwargs)})
            return self.wait()
        call.__name__ = f"checker_function_{index}"
        return call

    def wait(self):
        """Serve nested requests until the checker answers our callback."""
        while True:
            message = receive_message(self.rfd)
            if "kind" in message:
                self.answer(message)
                continue
            if "err" in message:
                raise RuntimeError(f"the grader's function failed: {message['err']}")
            return decode(message["ret"], self.callback)

    def resolve(self, path: list):
        head, *rest = path
        obj = self.handles[head] if isinstance(head, int) else self.lookup(head)
        for attr in rest:
            obj = getattr(obj, attr)
        return obj

    def lookup(self, name: str):
        """What the student's cells left under ``name``, also where the checker has put a
        value of its own there for the student's code to call (``set``): a stand-in is
        always the student's object."""
        value = self.own.get(name, self.originals[name] if name in self.originals
                             else self.ns.get(name, _ABSENT))
        if value is _ABSENT:
            because = f" (your cells raised {self.first_error})" if self.first_error else ""
            raise NameError(f"{name} is not defined{because}")
        return value

    def describe(self, obj) -> dict:
        if inspect.isgeneratorfunction(obj) or inspect.isgeneratorfunction(
                getattr(obj, "__func__", None)):
            return {"kind": "program"}
        if isinstance(obj, type):
            return {"kind": "class"}
        if callable(obj):
            return {"kind": "function"}
        return {"kind": "data", "value": self.encode(obj)}

    def result(self, value, constructed: bool) -> dict:
        """A call's result: a generator or (from a class) an instance stay here as handles;
        anything else must be data."""
        if inspect.isgenerator(value):
            self.handles[id(value)] = value
            return {"gen": id(value)}
        if constructed:
            self.handles[id(value)] = value                 # an instance of a student class
            return {"obj": id(value), "type": type(value).__name__}
        return {"ret": self.encode(value)}

    def step(self, gen, value) -> dict:
        """The generator's next operation, or the value it returned."""
        try:
            return {"op": self.encode(gen.send(value))}
        except StopIteration as stop:
            return {"done": self.encode(stop.value)}

    def answer(self, request: dict) -> None:
        try:
            reply = self.handle(request)
        except BaseException as err:                        # the student's code failed
            reply = _error(err)
        try:
            send_message(self.wfd, reply)
        except Undecodable as err:
            send_message(self.wfd, _error(err))

    def handle(self, request: dict) -> dict:
        kind = request["kind"]
        if kind == "describe":
            return self.describe(self.resolve(request["path"]))
        if kind == "call":
            target = self.resolve(request["path"])
            args = decode(request["args"], self.callback)
            kwargs = decode(request["kwargs"], self.callback)
            reply = self.result(target(*args, **kwargs), isinstance(target, type))
            if "gen" in reply and request.get("step"):
                # a PE's program: its first operation comes with it, which saves the
                # checker's first "resume" (one exchange in four for most programs)
                try:
                    reply.update(self.step(self.handles[reply["gen"]], None))
                except BaseException as err:            # the student's code failed
                    reply.update(_error(err))
            return reply
        if kind == "resume":
            return self.step(self.handles[request["gen"]],
                             decode(request["value"], self.callback))
        if kind == "close":
            gen = self.handles.pop(request["gen"], None)
            if gen is not None:
                gen.close()
            return {"ret": None}
        if kind == "replay":                        # a lock's next event (see RecordedLock)
            return self.replay(request)
        if kind == "replay_step":
            return self.replay_step(request)
        if kind == "set":
            name = request["name"]
            original = self.originals.setdefault(name, self.ns.get(name, _ABSENT))
            self.ns[name] = value = decode(request["value"], self.callback)
            self.forward(name, original, value)
            return {"ret": None}
        if kind == "restore":
            name = request["name"]
            self.forward(name, None, None)
            if name in self.originals:
                original = self.originals.pop(name)
                if original is _ABSENT:
                    self.ns.pop(name, None)
                else:
                    self.ns[name] = original
            return {"ret": None}
        raise ValueError(f"unknown request {kind!r}")

    def replay(self, request: dict) -> dict:
        """A fresh instance of the class at ``path``, made with ``args``, plays ``history``
        (:class:`~collective_lib.shared_memory.Replayer`); the reply gives its event and
        a handle by which the checker's steps name it from then on. The replay the
        checker ``replaces`` (its last with these arguments) is dropped."""
        from collective_lib.shared_memory import Replayer
        # a Replayer of its own: no other replay (another check's) moves this object on
        replayer = Replayer(self.resolve(request["path"]))
        args = tuple(decode(request["args"], self.callback))
        history = [(k, decode(v, self.callback)) for k, v in request["history"]]
        reply = self.event(*replayer.start(args, history))
        # only a replay that started (and can be sent) replaces the last: should this one
        # fail, the checker goes on with that
        self.replays.pop(request.get("replaces"), None)
        self.replayed += 1
        self.replays[self.replayed] = (replayer, args)
        return {"replay": self.replayed, **reply}

    def replay_step(self, request: dict) -> dict:
        """One more step of the replay ``request["replay"]``."""
        handle = request["replay"]
        if type(handle) is not int or handle not in self.replays:
            raise ValueError(f"no lock replay {handle!r} was started in this process")
        replayer, args = self.replays[handle]
        kind, value = request["step"]
        return self.event(*replayer.step(args, (kind, decode(value, self.callback))))

    def event(self, kind: str, value) -> dict:
        return {"event": kind, "value": self.encode(value)}

    def forward(self, name: str, original, value) -> None:
        """Forward every call of the student's function ``original`` to the checker's
        ``value`` put in its place (:mod:`collective_lib.grading.forwarding`): also code
        that holds the function itself (a default argument, a saved reference; for a
        builtin or memoized function, a default argument or a closure) calls the
        replacement. The checker's calls by name still reach the student's own code.
        ``value`` None undoes it."""
        undo = self.undo.pop(name, None)
        if undo is not None:
            undo()
        self.own.pop(name, None)
        if value is None or not callable(value) or original is _ABSENT:
            return
        try:
            own = own_code(original)
            undo = forward_calls_in(self.ns, original, value)
        except Exception:               # refused in a poisoned process: by name only
            return
        self.own[name], self.undo[name] = own, undo

    def serve(self) -> None:
        send_message(self.wfd, {"ready": True, "first_error": self.first_error})
        while True:
            self.answer(receive_message(self.rfd))


def _student_process(rfd, wfd, shell, job, limits, poison) -> None:
    confine(job["hide"], job["uid"], limits, keep=(rfd, wfd))
    if poison:
        _poison(poison, job["cells"])
    first_error = ""
    for source in job["cells"]:
        result = shell.run_cell(source, store_history=False, silent=True)
        err = result.error_before_exec or result.error_in_exec
        if err is not None and not first_error:
            first_error = f"{type(err).__name__}: {err}"[:_MAX_TEXT]
    sys.stdout.flush()
    sys.stderr.flush()
    _Server(rfd, wfd, shell.user_ns, first_error).serve()


def serve_template(control: socket.socket) -> None:
    """Fork one student host per socket handed over ``control`` until it closes.

    ``control`` is a ``SOCK_SEQPACKET`` socket; each message carries one file
    descriptor, the host's end of a stream socket to a checker. The child gets
    a session of its own and serves that checker (:func:`_host`); this process
    reads nothing but the descriptors, so it stays as pristine as it started.
    """
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)          # hosts reap themselves
    while True:
        try:
            data, fds, _, _ = socket.recv_fds(control, 16, 4)
        except OSError:
            return
        if not data:
            for fd in fds:
                os.close(fd)
            return
        for fd in fds[1:]:
            os.close(fd)
        if not fds:
            continue
        try:
            pid = os.fork()
        except OSError:             # the checker sees its socket close and says so
            os.close(fds[0])
            continue
        if pid == 0:
            code = 0
            try:
                control.close()
                os.setsid()
                _host(socket.socket(fileno=fds[0]))
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        os.close(fds[0])


def _receive_job(sock: socket.socket) -> dict:
    """The job a checker sends a new host: its length (8 bytes), then its JSON."""
    def exactly(size: int) -> bytes:
        chunks = []
        while size:
            chunk = sock.recv(min(size, 1 << 20))
            if not chunk:
                raise EOFError("the checker closed the socket")
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)
    (size,) = struct.unpack("!Q", exactly(8))
    return json.loads(exactly(size))


def _host(sock: socket.socket) -> None:
    """A new host: say its pid, read its job, join the submission's group, serve."""
    sock.sendall(struct.pack("!I", os.getpid()))
    job = _receive_job(sock)
    # an empty folder of its own, as the first place imports look (see Host)
    os.chdir(job["cwd"])
    sys.path[0] = job["cwd"]
    if job.get("cpu") is not None:      # the checker's CPU (verdict.notebook_cpu), inherited
        os.sched_setaffinity(0, {job["cpu"]})      # by every student process forked here
    group = job.get("limits", {}).get("group")
    if group:
        # before anything is forked: every process of the submission counts in its
        # limits. Should the group run out of memory, the kernel stops a student's
        # process first (each raises its score to the top in confine), and never this
        # one where the grader may say so (CAP_SYS_RESOURCE)
        SubmissionGroup.from_description(group).enter()
        try:
            with open("/proc/self/oom_score_adj", "w") as handle:
                handle.write("-1000")
        except OSError:
            pass
    serve_host(sock, job)


def main(argv: list) -> None:
    control = socket.socket(fileno=int(argv[1]))
    _preload()
    try:
        serve_template(control)
    finally:
        # the empty directory HostTemplate made for this process: removed here, since a
        # checker that ends by os._exit (a pytest-xdist worker) never runs its atexit
        os.rmdir(os.getcwd())


if __name__ == "__main__":
    main(sys.argv)
