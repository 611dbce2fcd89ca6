"""The sandbox a student's process enters before any of the student's code runs.

Trusted grading (:mod:`collective_lib.autograde.checker`) runs a submission's
cells only in processes forked from a pristine host (:mod:`.student`), and each
such process first calls :func:`confine`:

1. ``setsid()``: its own session and process group;
2. a private mount namespace (and network and IPC namespaces) in which the
   course directory (``source/``, the gradebook, every submission, the
   reference solutions), the exchange, the repository's ``exercises/`` and
   ``tests/`` are empty, ``/root`` shows only the Python installation, every
   mount is read-only, and only ``/tmp``, ``/var/tmp`` and ``/dev/shm`` can be
   written: fresh file systems private to the process, gone when it ends;
3. resource limits: address space, CPU time, file size, number of processes,
   no core files;
4. an unprivileged uid and gid of its own (``setresuid``; no supplementary
   groups), drawn from a pool so that graders running side by side never share
   one (see :class:`SandboxUser`);
5. a private scratch directory as working directory and ``HOME``,
   ``/dev/null`` as stdin, stdout and stderr: what a student prints or logs
   never reaches a verdict, costs no marks and fills no disk.

The limits of 3. hold per process. A :class:`SubmissionGroup` (a cgroup, v1 or
v2) bounds what all the processes of one submission use together: memory
(with what they write to their private file systems), processes and CPU time.

After a notebook, :func:`kill_all` kills every process of the sandbox uid,
including daemons that left their session, and empties the uid's keyrings.

It needs root (the grader of a course server or container) and cgroups. Run as
another user, :func:`self_check` says what is missing, and the checker refuses
to grade unless the instructor allows an unconfined run. What it does not
cover is written in ``exercises/SANDBOX.md``.
"""
from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import platform
import re
import resource
import secrets
import signal
import sys
import tempfile
import time

__all__ = ["Limits", "SandboxUser", "SubmissionGroup", "confine", "kill_all", "self_check"]

_CLONE_NEWNS, _CLONE_NEWIPC, _CLONE_NEWNET = 0x00020000, 0x08000000, 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_MOVE, _MS_REC, _MS_PRIVATE = 32, 4096, 8192, 16384, 1 << 18
_MS_NOATIME, _MS_NODIRATIME, _MS_RELATIME, _MS_STRICTATIME = 1024, 2048, 1 << 21, 1 << 24
_MOUNT_FLAGS = {"ro": _MS_RDONLY, "nosuid": _MS_NOSUID, "nodev": _MS_NODEV,
                "noexec": _MS_NOEXEC, "noatime": _MS_NOATIME, "nodiratime": _MS_NODIRATIME,
                "relatime": _MS_RELATIME, "strictatime": _MS_STRICTATIME}
_AT_FDCWD, _AT_RECURSIVE, _MOUNT_ATTR_RDONLY = -100, 0x8000, 1
_KEYCTL_CLEAR, _KEY_SPEC_USER_KEYRING, _KEY_SPEC_USER_SESSION_KEYRING = 7, -4, -5
_SYSCALLS = {"x86_64": {"keyctl": 250, "mount_setattr": 442},
             "aarch64": {"keyctl": 219, "mount_setattr": 442}}.get(platform.machine(), {})
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE = 1, 4
_PRIVATE_DIRS = ("/tmp", "/var/tmp", "/dev/shm")       # the only places a student may write
_libc = ctypes.CDLL(None, use_errno=True)


class Limits:
    """Resource limits of one student process (bytes, seconds, processes).

    ``scratch`` is the size of each private file system (``/tmp``, ``/var/tmp``,
    ``/dev/shm``); what is written there counts in the submission's memory.
    """

    def __init__(self, memory: int = 1536 << 20, cpu_s: int = 120, file_size: int = 1 << 20,
                 processes: int = 64, scratch: int = 64 << 20):
        self.memory, self.cpu_s, self.file_size, self.processes = (
            memory, cpu_s, file_size, processes)
        self.scratch = scratch

    def apply(self) -> None:
        for limit, value in ((resource.RLIMIT_AS, self.memory),
                             (resource.RLIMIT_CPU, self.cpu_s),
                             (resource.RLIMIT_FSIZE, self.file_size),
                             (resource.RLIMIT_NPROC, self.processes),
                             (resource.RLIMIT_CORE, 0)):
            hard = resource.getrlimit(limit)[1]
            if os.geteuid() != 0 and hard != resource.RLIM_INFINITY:
                value = min(value, hard)          # unconfined: never above what we were given
            resource.setrlimit(limit, (value, value))


class SandboxUser:
    """A uid (and gid of the same number) that no other grader uses while it is held.

    The uids ``first, first + 1, ...`` need no account: the sandbox switches to
    the number. Holding one is an exclusive ``flock`` on a file in the system's
    temporary directory, so autograde runs side by side (pytest-xdist workers,
    several graders of a large class) each get their own, and
    :func:`kill_all` of one never touches another's processes.
    """

    def __init__(self, first: int = 61000, count: int = 64):
        self.first, self.count = first, count
        self.uid = None
        self._lock = None

    def __enter__(self) -> "SandboxUser":
        folder = os.path.join(tempfile.gettempdir(), "collective-sandbox-uids")
        os.makedirs(folder, mode=0o700, exist_ok=True)
        for uid in range(self.first, self.first + self.count):
            handle = open(os.path.join(folder, str(uid)), "a")
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                handle.close()
                continue
            self.uid, self._lock = uid, handle
            kill_all(uid)                      # whatever an aborted run left behind
            return self
        raise RuntimeError(f"all {self.count} sandbox uids from {self.first} are in use; "
                           "raise TrustedVerdict.sandbox_uid_count")

    def __exit__(self, *exc) -> None:
        if self.uid is not None:
            kill_all(self.uid)
            self._lock.close()
            self.uid = self._lock = None


# --- limits for all the processes of one submission: a cgroup ---------------------------

_CGROUP_FS = "/sys/fs/cgroup"
_V1_CONTROLLERS = ("memory", "pids", "cpuacct", "cpu")   # cpu (a quota) is optional
_GRADER_LEAF = "collective-grader"     # where a v2 grader moves itself to delegate controllers


def _read(path: str) -> str:
    with open(path) as handle:
        return handle.read()


def _write(path: str, text: str) -> None:
    with open(path, "w") as handle:
        handle.write(text)


def _numbers(path: str) -> dict:
    """``{key: int}`` of a cgroup file of ``key value`` lines; empty if it cannot be read."""
    try:
        text = _read(path)
    except OSError:
        return {}
    values = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].lstrip("-").isdigit():
            values[parts[0]] = int(parts[1])
    return values


def _number(path: str) -> int:
    try:
        return int(_read(path).split()[0])
    except (OSError, ValueError, IndexError):
        return 0


def _size(n: int) -> str:
    """``2 GiB``, ``1.5 GiB``, ``512 MiB``."""
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{round(n / (1 << shift), 2):g} {unit}"
    return f"{n} bytes"


def _unescape(text: str) -> str:
    """A path of /proc/self/mountinfo (spaces and the like are octal escapes there)."""
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), text)


def _mounts(mountinfo: str) -> list:
    """``[{"point", "root", "fstype", "options", "super"}]`` of /proc/self/mountinfo, in order."""
    mounts = []
    for line in mountinfo.splitlines():
        if " - " not in line:
            continue
        before, after = line.split(" - ", 1)
        fields, rest = before.split(), after.split()
        if len(fields) < 6 or len(rest) < 3:
            continue
        mounts.append({"root": _unescape(fields[3]), "point": _unescape(fields[4]),
                       "options": fields[5].split(","), "fstype": rest[0],
                       "super": rest[2].split(",")})
    return mounts


def _inside(mount: dict, path: str) -> str | None:
    """Where cgroup ``path`` is in the file system, through ``mount`` (None if not there)."""
    root = mount["root"].rstrip("/")
    if path != root and not path.startswith(root + "/"):
        return None
    return os.path.normpath(mount["point"].rstrip("/") + path[len(root):] or "/")


def find_layout(mountinfo: str | None = None, cgroups: str | None = None) -> tuple:
    """``(layout, problem)``: where new cgroups go, below the grader's own.

    ``layout`` is ``{"version": 2, "parents": {"unified": dir}}`` or
    ``{"version": 1, "parents": {controller: dir}}`` (memory, pids, cpuacct and,
    if mounted, cpu), or None with ``problem``, a sentence. cgroup v2 is used
    when it offers the memory and pids controllers, else v1.
    """
    mountinfo = _read("/proc/self/mountinfo") if mountinfo is None else mountinfo
    cgroups = _read("/proc/self/cgroup") if cgroups is None else cgroups
    mounts = _mounts(mountinfo)
    paths = {}
    for line in cgroups.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in (parts[1].split(",") if parts[1] else ["unified"]):
                paths[controller] = parts[2]
    problems = []
    unified = paths.get("unified")
    if unified is not None:
        if os.path.basename(unified) == _GRADER_LEAF:     # we moved ourselves there
            unified = os.path.dirname(unified)
        for mount in mounts:
            here = _inside(mount, unified) if mount["fstype"] == "cgroup2" else None
            if here is None:
                continue
            try:
                offered = set(_read(os.path.join(here, "cgroup.controllers")).split())
            except OSError:
                continue
            if {"memory", "pids"} <= offered:
                return {"version": 2, "parents": {"unified": here}}, None
            problems.append(f"cgroup v2 at {here} does not offer the memory and pids "
                            f"controllers (only {' '.join(sorted(offered)) or 'none'})")
            break
    parents = {}
    for controller in _V1_CONTROLLERS:
        for mount in mounts:
            if mount["fstype"] == "cgroup" and controller in mount["super"] and \
                    controller in paths:
                here = _inside(mount, paths[controller])
                if here is not None and os.path.isdir(here):
                    parents[controller] = here
                    break
    missing = [c for c in _V1_CONTROLLERS[:3] if c not in parents]
    if not missing:
        return {"version": 1, "parents": parents}, None
    if not problems:
        problems.append("no cgroup file system offers the memory, pids and cpuacct "
                        f"controllers (cgroup v1 lacks {', '.join(missing)}, and there is "
                        "no usable cgroup v2)")
    return None, problems[0]


def _tree_of(pid: int) -> set:
    """``pid``, its ancestors and its descendants (by /proc)."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = _read(f"/proc/{entry}/stat")
                parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                pass
    tree, up = {pid}, pid
    while parents.get(up, 0) > 0 and parents[up] not in tree:
        up = parents[up]
        tree.add(up)
    below, frontier = set(), {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - below
        below |= frontier
    return tree | below


class SubmissionGroup:
    """A cgroup for all the processes of one submission: memory, processes, CPU time together.

    It is created below the grader's own cgroup (read from /proc/self/cgroup,
    so that it also works in a container), in cgroup v2 if that offers the
    memory and pids controllers, else in cgroup v1. Limits:

    * ``memory`` bytes (``memory.max``, v1 ``memory.limit_in_bytes``), which
      count what the processes write to their private tmpfs too; the kernel
      never lets the group hold more (its OOM killer stops a process), and the
      trusted side's watcher stops all of them once the group reaches it (see
      ``remote.Host``);
    * ``processes``: tasks (processes and threads) at once (``pids.max``);
    * ``cpu_s``: CPU seconds of the whole group, a budget the trusted side
      watches (:meth:`usage`); ``cpus``: a quota in cores (``cpu.max``, v1
      ``cpu.cfs_quota_us``), so that one submission cannot take every core.

    :meth:`exceeded` and :meth:`reason` say which limit stopped the group. The
    name is unique per grading (the sandbox uid, exclusive while held, and a
    random suffix), and :meth:`clean` removes what an aborted earlier run left
    for that uid.
    """

    def __init__(self, name: str, memory: int | None = None, processes: int | None = None,
                 cpu_s: float | None = None, cpus: float | None = None,
                 layout: dict | None = None):
        if layout is None:
            layout, problem = find_layout()
            if layout is None:
                raise OSError(errno.ENOTSUP, problem)
        self.name, self.layout = name, layout
        self.memory, self.processes, self.cpu_s, self.cpus = memory, processes, cpu_s, cpus
        self.version = layout["version"]
        self.dirs = {controller: os.path.join(parent, name)
                     for controller, parent in layout["parents"].items()
                     if controller != "cpu" or cpus}
        self._event_fds: list | None = None
        self._controllers: set = set()        # v2: what the parent passes on

    # -- life cycle ----------------------------------------------------------------------

    @classmethod
    def unique(cls, prefix: str, **limits) -> "SubmissionGroup":
        """A group named ``prefix`` and a random suffix."""
        return cls(f"{prefix}{secrets.token_hex(4)}", **limits)

    def describe(self) -> dict:
        """What another process needs to join, watch or stop the group (JSON)."""
        return {"name": self.name, "layout": self.layout, "memory": self.memory,
                "processes": self.processes, "cpu_s": self.cpu_s, "cpus": self.cpus}

    @classmethod
    def from_description(cls, description: dict) -> "SubmissionGroup":
        return cls(description["name"], description.get("memory"),
                   description.get("processes"), description.get("cpu_s"),
                   description.get("cpus"), layout=description["layout"])

    def _folders(self) -> list:
        return sorted(set(self.dirs.values()))

    def create(self) -> "SubmissionGroup":
        """Make the group and set its limits (removed again if any step fails)."""
        if self.version == 2:
            self._controllers = _delegate(self.layout["parents"]["unified"],
                                          ["memory", "pids"] + (["cpu"] if self.cpus else []))
        made = []
        try:
            for folder in self._folders():
                os.mkdir(folder)
                made.append(folder)
            self._set_limits()
        except OSError:
            for folder in reversed(made):
                try:
                    os.rmdir(folder)
                except OSError:
                    pass
            raise
        return self

    def _set_limits(self) -> None:
        if self.version == 2:
            folder = self.dirs["unified"]
            if self.memory:
                _write(os.path.join(folder, "memory.max"), str(self.memory))
                if os.path.exists(os.path.join(folder, "memory.swap.max")):
                    _write(os.path.join(folder, "memory.swap.max"), "0")
            if self.processes:
                _write(os.path.join(folder, "pids.max"), str(self.processes))
            if self.cpus and "cpu" in self._controllers:
                _write(os.path.join(folder, "cpu.max"), f"{round(self.cpus * 100000)} 100000")
            return
        if self.memory:
            _write(os.path.join(self.dirs["memory"], "memory.limit_in_bytes"), str(self.memory))
            swap = os.path.join(self.dirs["memory"], "memory.memsw.limit_in_bytes")
            if os.path.exists(swap):
                try:
                    _write(swap, str(self.memory))
                except OSError:                   # no swap accounting: nothing to bound
                    pass
        if self.processes:
            _write(os.path.join(self.dirs["pids"], "pids.max"), str(self.processes))
        if self.cpus and "cpu" in self.dirs:
            _write(os.path.join(self.dirs["cpu"], "cpu.cfs_period_us"), "100000")
            _write(os.path.join(self.dirs["cpu"], "cpu.cfs_quota_us"),
                   str(round(self.cpus * 100000)))

    def enter(self, pid: int | None = None) -> None:
        """Put process ``pid`` (default: this one) into the group; its children follow."""
        for folder in self._folders():
            _write(os.path.join(folder, "cgroup.procs"), str(pid or os.getpid()))

    def pids(self) -> set:
        """The processes in the group now."""
        found = set()
        for folder in self._folders():
            try:
                found |= {int(pid) for pid in _read(os.path.join(folder, "cgroup.procs")).split()}
            except (OSError, ValueError):
                pass
        return found

    def kill(self, spare=(), wait_s: float = 5.0, wait: bool = True) -> bool:
        """SIGKILL every process of the group but ``spare``; True once none is left.

        ``wait`` False returns as soon as every process there has had its signal
        (none can fork any more), without waiting for them to end.
        """
        spare = set(spare)
        if not spare and self.version == 2 and os.path.exists(
                os.path.join(self.dirs["unified"], "cgroup.kill")):
            try:
                _write(os.path.join(self.dirs["unified"], "cgroup.kill"), "1")
            except OSError:
                pass
        deadline = time.monotonic() + wait_s
        signalled = set()
        while True:
            left = self.pids() - spare
            if not left:
                return True
            if (not wait and left <= signalled) or time.monotonic() > deadline:
                return False
            for pid in left - (set() if wait else signalled):
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
            signalled |= left
            if wait:
                time.sleep(0.005)

    def remove(self) -> bool:
        """Kill everything in the group and remove it; True if it is gone."""
        self.close()
        self.kill()
        gone = True
        for folder in self._folders():
            for _ in range(200):
                try:
                    os.rmdir(folder)
                    break
                except FileNotFoundError:
                    break
                except OSError:              # processes still exiting
                    time.sleep(0.01)
            else:
                gone = False
        return gone

    @classmethod
    def clean(cls, prefix: str, layout: dict | None = None) -> list:
        """Remove the groups named ``prefix...`` that an aborted run left; their names."""
        if layout is None:
            layout, _ = find_layout()
            if layout is None:
                return []
        names = set()
        for parent in layout["parents"].values():
            try:
                names |= {entry for entry in os.listdir(parent) if entry.startswith(prefix)}
            except OSError:
                pass
        for name in sorted(names):
            cls(name, cpus=1, layout=layout).remove()
        return sorted(names)

    @classmethod
    def problem(cls) -> str | None:
        """Why no group can be made here (a sentence), or None when one can."""
        layout, _ = find_layout()
        for parent in (layout or {"parents": {}})["parents"].values():
            try:
                entries = os.listdir(parent)
            except OSError:
                entries = []
            for entry in entries:                     # probes of graders that died
                pid = entry.split("-")[2] if entry.startswith("collective-probe-") else ""
                if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
                    cls.clean(entry, layout)
        try:
            group = cls.unique(f"collective-probe-{os.getpid()}-", memory=1 << 30,
                               processes=64).create()
        except OSError as err:
            where = f" ({err.filename})" if err.filename else ""
            return ("the grader cannot limit the memory, processes and CPU time of a "
                    f"submission with a cgroup: {err.strerror or err}{where}")
        group.remove()
        return None

    # -- what the group used -------------------------------------------------------------

    def usage(self) -> dict:
        """``memory`` and its ``peak`` (bytes), ``cpu_s``, ``processes`` now, whether the
        memory is ``at_limit`` (within 0.4 % of it), and the counts ``full`` (times the
        limit was reached, where the kernel counts them), ``oom_kills`` (processes the OOM
        killer stopped) and ``refused`` (forks refused)."""
        found = self._usage()
        found["at_limit"] = bool(self.memory) and found["memory"] >= self.memory - max(
            self.memory // 256, 1 << 20)
        return found

    def _usage(self) -> dict:
        if self.version == 2:
            folder = self.dirs["unified"]
            events = _numbers(os.path.join(folder, "memory.events"))
            return {"memory": _number(os.path.join(folder, "memory.current")),
                    "peak": _number(os.path.join(folder, "memory.peak")),
                    "cpu_s": _numbers(os.path.join(folder, "cpu.stat")).get("usage_usec", 0) / 1e6,
                    "processes": _number(os.path.join(folder, "pids.current")),
                    "full": events.get("max", 0),
                    "oom_kills": max(events.get("oom_kill", 0), events.get("oom_group_kill", 0)),
                    "refused": _numbers(os.path.join(folder, "pids.events")).get("max", 0)}
        memory, pids = self.dirs["memory"], self.dirs["pids"]
        oom = _numbers(os.path.join(memory, "memory.oom_control"))
        return {"memory": _number(os.path.join(memory, "memory.usage_in_bytes")),
                "peak": _number(os.path.join(memory, "memory.max_usage_in_bytes")),
                "cpu_s": _number(os.path.join(self.dirs["cpuacct"], "cpuacct.usage")) / 1e9,
                "processes": _number(os.path.join(pids, "pids.current")),
                "full": _number(os.path.join(memory, "memory.failcnt")),
                "oom_kills": oom.get("oom_kill", 0),
                "refused": _numbers(os.path.join(pids, "pids.events")).get("max", 0)}

    def _event_files(self) -> list:
        if self.version == 2:
            return [os.path.join(self.dirs["unified"], name)
                    for name in ("memory.events", "pids.events")]
        return [os.path.join(self.dirs["memory"], name)
                for name in ("memory.failcnt", "memory.oom_control")] + [
            os.path.join(self.dirs["pids"], "pids.events")]

    def counters(self) -> bytes:
        """The raw text of the OOM-kill and refused-fork counters: cheap enough to read
        after every request (the files stay open; a few microseconds)."""
        if self._event_fds is None:
            self._event_fds = [os.open(path, os.O_RDONLY) for path in self._event_files()]
        try:
            return b"".join(os.pread(fd, 4096, 0) for fd in self._event_fds)
        except OSError:
            return b""

    def close(self) -> None:
        """Close the files :meth:`counters` keeps open."""
        for fd in self._event_fds or ():
            os.close(fd)
        self._event_fds = None

    def exceeded(self, since: dict | None = None, now: dict | None = None) -> dict:
        """``{"memory" | "processes" | "cpu": sentence}``: the limits passed between the
        :meth:`usage` readings ``since`` and ``now`` (read if not given). CPU time is a
        budget: once spent, it stays passed."""
        since = since or {}
        now = self.usage() if now is None else now
        found = {}
        # reaching the limit is enough (waiting for the kernel's OOM killer, which first
        # reclaims what it can, costs a second or more); a group that stays there while
        # the stopped processes free their memory has not passed it again
        reached = now["at_limit"] and not since.get("at_limit", False)
        if reached or now["oom_kills"] > since.get("oom_kills", 0) or \
                now["full"] > since.get("full", 0):
            found["memory"] = (f"your processes together used more than "
                               f"{_size(self.memory or 0)} of memory (the limit for one "
                               "submission) and were stopped")
        if now["refused"] > since.get("refused", 0):
            found["processes"] = (f"your processes together tried to run more than "
                                  f"{self.processes} processes or threads at once (the limit "
                                  "for one submission) and were stopped")
        if self.cpu_s and now["cpu_s"] > self.cpu_s:
            found["cpu"] = (f"your processes together used more than {self.cpu_s:g} s of "
                            "CPU time (the limit for one submission) and were stopped")
        return found

    def reason(self, since: dict | None = None) -> str | None:
        """Why the group's processes were stopped since ``since`` (a :meth:`usage`), or None."""
        return next(iter(self.exceeded(since).values()), None)


def _enabled(control: str) -> set:
    return {word.lstrip("+") for word in _read(control).split()}


def _delegate(parent: str, controllers: list) -> set:
    """Make cgroup v2 ``controllers`` available to the children of ``parent`` (``cpu``
    only if offered); the controllers they have then.

    A cgroup that holds processes cannot pass controllers on (except the root).
    When every process there is the grader's own (its ancestors and
    descendants: a ``systemd-run --scope``), or ``parent`` is the root of the
    grader's cgroup namespace (a container), they move to a leaf
    ``collective-grader`` first.
    """
    control = os.path.join(parent, "cgroup.subtree_control")
    offered = _read(os.path.join(parent, "cgroup.controllers")).split()
    missing = [c for c in controllers if c not in _enabled(control)
               and (c != "cpu" or c in offered)]
    if not missing:
        return _enabled(control)
    try:
        _write(control, " ".join("+" + c for c in missing))
        return _enabled(control)
    except OSError as err:
        if err.errno != errno.EBUSY:
            raise
    procs = {int(p) for p in _read(os.path.join(parent, "cgroup.procs")).split()}
    unified = [line for line in _read("/proc/self/cgroup").splitlines()
               if line.startswith("0::")]
    namespace_root = unified == ["0::/"]
    if not namespace_root and not procs <= _tree_of(os.getpid()):
        raise OSError(errno.EBUSY, f"{parent} holds other processes than the grader, so it "
                      "cannot pass the memory and pids controllers to a submission's group; "
                      "run the grader in a cgroup of its own, e.g. `systemd-run --scope -p "
                      "Delegate=yes nbgrader autograde ...`")
    leaf = os.path.join(parent, _GRADER_LEAF)
    os.makedirs(leaf, exist_ok=True)
    for pid in sorted(procs):
        try:
            _write(os.path.join(leaf, "cgroup.procs"), str(pid))
        except ProcessLookupError:
            pass
    _write(control, " ".join("+" + c for c in missing))
    return _enabled(control)


# --- the private view of the file system -------------------------------------------------

def _mount(source, target, fstype, flags, data=None) -> None:
    encoded = [None if s is None else s.encode() for s in (source, target, fstype, data)]
    if _libc.mount(encoded[0], encoded[1], encoded[2], flags, encoded[3]) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {target}: {os.strerror(err)}")


def _tmpfs(target: str, mode: str = "755", size: int = 64 << 20) -> None:
    _mount("tmpfs", target, "tmpfs", _MS_NOSUID | _MS_NODEV, f"mode={mode},size={size}")


def _needed_paths() -> list:
    """Where the interpreter and the imported packages live: they must stay readable."""
    paths = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    paths |= {os.path.realpath(p) for p in sys.path if p and os.path.isdir(p)}
    # this package itself: an editable install finds it through an import hook, not sys.path
    paths.add(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
    return sorted(paths)


def _covers(folder: str, path: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _replace_keeping(folder: str, keep: list, stage_root: str, size: int) -> None:
    """Put an empty private tmpfs over ``folder``, then bring back the paths in ``keep``."""
    keep = [path for path in keep if _covers(folder, path) and path != folder]
    keep = [path for path in keep if not any(_covers(other, path) and other != path
                                             for other in keep)]
    staged = []
    for index, path in enumerate(keep):
        stage = os.path.join(stage_root, str(index))
        os.mkdir(stage, 0o700)
        _mount(path, stage, None, _MS_BIND | _MS_REC)
        staged.append((stage, path))
    _tmpfs(folder, size=size)
    for stage, path in staged:
        os.makedirs(path, exist_ok=True)
        _mount(stage, path, None, _MS_MOVE)
        os.rmdir(stage)


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


def _mount_setattr(path: str, recursive: bool, readonly: bool) -> bool:
    """mount_setattr(2) (Linux 5.12): False where the kernel lacks it."""
    number = _SYSCALLS.get("mount_setattr")
    if number is None:
        return False
    attr = _MountAttr(_MOUNT_ATTR_RDONLY if readonly else 0,
                      0 if readonly else _MOUNT_ATTR_RDONLY, 0, 0)
    result = _libc.syscall(number, _AT_FDCWD, path.encode(),
                           ctypes.c_uint(_AT_RECURSIVE if recursive else 0),
                           ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)))
    if result == 0:
        return True
    err = ctypes.get_errno()
    if err == errno.ENOSYS:
        return False
    raise OSError(err, f"mount_setattr {path}: {os.strerror(err)}")


def _remount(point: str, options: list, readonly: bool) -> None:
    flags = sum(_MOUNT_FLAGS.get(option, 0) for option in options if option != "ro")
    _mount(None, point, None, _MS_REMOUNT | _MS_BIND | flags | (_MS_RDONLY if readonly else 0))


def _read_only_but(writable: tuple) -> None:
    """Make every mount of this namespace read-only except the ``writable`` ones.

    Then check it: each mount point, as its path reaches it now, is read-only
    unless it is one of ``writable``; anything else raises.
    """
    if _mount_setattr("/", recursive=True, readonly=True):
        for point in writable:
            _mount_setattr(point, recursive=False, readonly=False)
    else:                                         # an older kernel: one mount at a time
        for mount in _mounts(_read("/proc/self/mountinfo")):
            if mount["point"] not in writable:
                try:
                    _remount(mount["point"], mount["options"], readonly=True)
                except OSError as err:        # hidden below another mount: checked below
                    if err.errno not in (errno.ENOENT, errno.ENOTDIR, errno.EINVAL):
                        raise
    left = []
    for point in sorted({mount["point"] for mount in _mounts(_read("/proc/self/mountinfo"))}):
        try:
            flags = os.statvfs(point).f_flag
        except OSError:                           # no longer reachable by its path
            continue
        if point not in writable and not flags & os.ST_RDONLY:
            left.append(point)
    if left:
        raise OSError(errno.EROFS, f"could not make {', '.join(left)} read-only")


def _private_view(hide: list, scratch: int) -> None:
    """A mount namespace of our own: read-only but for fresh /tmp, /var/tmp and /dev/shm,
    with ``hide`` empty."""
    if _libc.unshare(_CLONE_NEWNS | _CLONE_NEWIPC | _CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare: {os.strerror(err)}")
    _mount(None, "/", None, _MS_REC | _MS_PRIVATE)
    needed = _needed_paths()
    stage_root = tempfile.mkdtemp(prefix="stage-", dir="/dev")   # /dev is not replaced
    for folder in ("/root",) + _PRIVATE_DIRS:
        if os.path.isdir(folder):
            _replace_keeping(folder, needed, stage_root,
                             scratch if folder in _PRIVATE_DIRS else 16 << 20)
    os.rmdir(stage_root)
    for folder in hide:
        if os.path.isdir(folder):
            _tmpfs(folder, mode="555", size=1 << 20)
    os.chmod("/tmp", 0o1777)
    for folder in _PRIVATE_DIRS[1:]:
        if os.path.isdir(folder):
            os.chmod(folder, 0o1777)
    _read_only_but(tuple(folder for folder in _PRIVATE_DIRS if os.path.isdir(folder)))


def _first_for_the_oom_killer() -> None:
    """Should memory run out, the kernel stops a student's process before anything else."""
    try:
        _write("/proc/self/oom_score_adj", "1000")
    except OSError:
        pass


def confine(hide: list, uid: int | None, limits: Limits) -> str:
    """Enter the sandbox (see the module's note); return the private scratch directory.

    ``uid`` None confines without changing user (only for an instructor who
    allowed unconfined grading; then the namespaces are skipped too).
    """
    os.setsid()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the host's children reap themselves; not
    _first_for_the_oom_killer()                   # the student's. While /proc can be written
    if uid is not None:
        _private_view([os.path.realpath(folder) for folder in hide], limits.scratch)
    limits.apply()
    if uid is not None:
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    # after the uid changed (which resets both): die with the host, and let no process of
    # the same uid (another PE of this submission) trace this one or read its memory
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    _libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    if uid is not None:                           # the only writable places are private
        os.environ["TMPDIR"] = tempfile.tempdir = "/tmp"
    scratch = tempfile.mkdtemp(prefix="student-")
    os.chdir(scratch)
    if uid is not None:                           # configuration and caches (matplotlib...)
        os.environ["HOME"] = os.environ["MPLCONFIGDIR"] = scratch
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    return scratch


def kill_all(uid: int) -> None:
    """Kill every process of ``uid``, also those that left their session or group, and
    empty the uid's keyrings (they outlive processes: a later submission under the same
    uid could read them).

    A child becomes ``uid`` and sends SIGKILL to -1: every process that uid may
    signal, which is exactly that uid's processes (the child itself is spared).
    """
    if os.geteuid() != 0:
        return
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            os.kill(-1, signal.SIGKILL)
            keyctl = _SYSCALLS.get("keyctl")
            if keyctl is not None:
                for keyring in (_KEY_SPEC_USER_KEYRING, _KEY_SPEC_USER_SESSION_KEYRING):
                    _libc.syscall(keyctl, _KEYCTL_CLEAR, ctypes.c_long(keyring))
        except BaseException:
            pass
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def self_check() -> list:
    """What keeps the sandbox from working here, as sentences (empty when it works)."""
    problems = []
    if not sys.platform.startswith("linux"):
        problems.append(f"the sandbox needs Linux, this is {sys.platform}")
    elif os.geteuid() != 0:
        problems.append("the grader does not run as root, so it can neither switch a "
                        "submission to an unprivileged uid nor hide the course from it")
    else:
        problem = SubmissionGroup.problem()
        if problem:
            problems.append(problem)
    return problems
