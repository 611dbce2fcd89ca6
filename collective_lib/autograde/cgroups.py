"""A cgroup for all the processes of one submission: their memory, processes and CPU time
together.

The per-process limits of :func:`.sandbox.confine` do not add up: a
submission that forks can hold many times its memory limit. A
:class:`SubmissionGroup`, created below the grader's own cgroup (v2 when it
offers the memory and pids controllers, else v1), bounds what all of a
submission's processes use together, and says which limit stopped them.
:func:`find_layout` finds where such groups can go; :func:`mounts` reads
``/proc/self/mountinfo`` (the sandbox uses it too).
"""
from __future__ import annotations

import errno
import os
import re
import secrets
import signal
import time

__all__ = ["SubmissionGroup", "find_layout", "mounts"]

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


def mounts(mountinfo: str | None = None) -> list:
    """``[{"point", "root", "fstype", "options", "super"}]`` of ``mountinfo`` (by default
    this process's /proc/self/mountinfo), in order."""
    mountinfo = _read("/proc/self/mountinfo") if mountinfo is None else mountinfo
    found = []
    for line in mountinfo.splitlines():
        if " - " not in line:
            continue
        before, after = line.split(" - ", 1)
        fields, rest = before.split(), after.split()
        if len(fields) < 6 or len(rest) < 3:
            continue
        found.append({"root": _unescape(fields[3]), "point": _unescape(fields[4]),
                       "options": fields[5].split(","), "fstype": rest[0],
                       "super": rest[2].split(",")})
    return found


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
    mounted = mounts(mountinfo)
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
        for mount in mounted:
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
        for mount in mounted:
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
        memory is ``at_limit`` (within 0.4 % of it) and whether its peak was
        (``peak_at_limit``), and the counts ``full`` (times the limit was reached, where
        the kernel counts them: not every v1 kernel does), ``oom_kills`` (processes the
        OOM killer stopped) and ``refused`` (forks refused)."""
        found = self._usage()
        margin = max((self.memory or 0) // 256, 1 << 20)
        found["at_limit"] = bool(self.memory) and found["memory"] >= self.memory - margin
        found["peak_at_limit"] = bool(self.memory) and found["peak"] >= self.memory - margin
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
        reached = (now["at_limit"] and not since.get("at_limit", False)) or (
            now["peak_at_limit"] and not since.get("peak_at_limit", False))
        # an OOM kill alone is no proof: the machine, or a cgroup around the grader, may have
        # run out while this group was under its own limit (killed_from_outside)
        if reached or now["full"] > since.get("full", 0):
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

    def killed_from_outside(self, usage: dict | None = None) -> bool:
        """Whether the OOM killer stopped a process of the group that never reached the
        group's own limit: the machine, or a cgroup around the grader, ran out of memory
        (another submission graded beside it, perhaps), so the group is not to blame."""
        usage = self.usage() if usage is None else usage
        return usage["oom_kills"] > 0 and usage["full"] == 0 and not usage["peak_at_limit"]

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
