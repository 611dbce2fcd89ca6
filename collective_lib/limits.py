"""How much a simulated run may use: its operation budget and its memory.

Both limits turn a slow failure into a clear error before or early in a run:
an endless program stops at :func:`default_max_ops` operations with a message
naming a PE, and :func:`check_memory` refuses a run whose estimated memory
(:func:`memory_estimate`) exceeds what the machine has available, or what this
process's own limits leave it (an address-space limit, a memory cgroup: the
grader's checker runs under both), before any PE starts.
"""
from __future__ import annotations

import ctypes
import math
import os

try:
    import resource
except ImportError:                     # Windows
    resource = None

__all__ = ["default_max_ops", "memory_estimate", "check_memory", "BYTES_PER_PE", "BYTES_PER_WORD"]

#: Peak memory of a run per PE, measured with ``benchmarks/scale.py`` (a binomial
#: broadcast on 2**20 PEs without a trace: 678 bytes, of which about 470 are the
#: program's own generator and lists), rounded up.
BYTES_PER_PE = 1000
#: Memory per word of Python data: a list slot and an int object.
BYTES_PER_WORD = 36


def default_max_ops(p: int, startups: float = 0) -> int:
    """The operation budget of a simulated run on ``p`` PEs.

    The budget is a guard against endless programs, not a cap on long ones,
    so it grows with what the program is known to do.  Every PE may issue
    10,000 operations plus 4 per PE of the run (room for an all-to-all's
    p - 1 sends and p - 1 receives twice over, while an endless program on a
    few PEs stops within a second or so), plus twice ``startups``: the
    message start-ups the program's closed form counts (its time under
    ts = 1, tw = 0, th = 0; see :meth:`collective_lib.catalog.Algorithm.max_ops`).
    Each operation a PE issues occupies one of its ports for at least ts, so
    a run that keeps its closed form issues at most that many per port; a
    pipeline of 30,000 packets gets room for them.  Without ``startups``
    (a program of one's own) this is the default of
    :func:`~collective_lib.simulate`.

    >>> default_max_ops(8)
    80256
    >>> default_max_ops(2, startups=30_001)
    140020
    """
    return p * (10_000 + 4 * p + 2 * math.ceil(startups))


def _available_memory() -> int | None:
    """Bytes of memory the machine can still give: MemAvailable on Linux, the
    available physical memory on Windows, else the free (or, on macOS, the
    physical) pages; None where none of these can be read."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    windows = _windows_available_memory()
    if windows is not None:
        return windows
    for pages in ("SC_AVPHYS_PAGES", "SC_PHYS_PAGES"):
        try:
            return os.sysconf(pages) * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            continue
    return None


class _MemoryStatusEx(ctypes.Structure):
    """Windows' MEMORYSTATUSEX, filled in by GlobalMemoryStatusEx."""
    _fields_ = [("dwLength", ctypes.c_ulong), ("dwMemoryLoad", ctypes.c_ulong),
                ("ullTotalPhys", ctypes.c_ulonglong), ("ullAvailPhys", ctypes.c_ulonglong),
                ("ullTotalPageFile", ctypes.c_ulonglong), ("ullAvailPageFile", ctypes.c_ulonglong),
                ("ullTotalVirtual", ctypes.c_ulonglong), ("ullAvailVirtual", ctypes.c_ulonglong),
                ("ullAvailExtendedVirtual", ctypes.c_ulonglong)]


def _windows_available_memory() -> int | None:
    """``ullAvailPhys`` of Windows' GlobalMemoryStatusEx, or None off Windows."""
    windll = getattr(ctypes, "windll", None)
    if windll is None:
        return None
    status = _MemoryStatusEx()
    status.dwLength = ctypes.sizeof(_MemoryStatusEx)
    if not windll.kernel32.GlobalMemoryStatusEx(ctypes.byref(status)):
        return None
    return status.ullAvailPhys


def memory_estimate(p: int, words: int = 0) -> int:
    """Bytes a run of ``p`` PEs holding ``words`` words of data needs at least (no trace).

    >>> memory_estimate(2**20) / 2**30 < 1
    True
    """
    return p * BYTES_PER_PE + words * BYTES_PER_WORD


#: A run estimated at no more than this is started unchecked: reading the machine's and the
#: process's limits (some 0.2 ms) would cost a small run a fifth of its time, and no
#: machine or grader gives a process less room than this.
_NEVER_REFUSED = 64 << 20


def check_memory(p: int, words: int = 0) -> None:
    """Refuse, before anything starts, a run that cannot fit into the memory the machine
    and this process's own limits leave it.

    Raises MemoryError naming ``p`` (and ``words``), the estimate of
    :func:`memory_estimate`, the memory left and what leaves it.  Where none of
    it can be read, or the estimate is at most 64 MiB, the check passes.

    >>> check_memory(10**6, words=10**12)
    Traceback (most recent call last):
    ...
    MemoryError: simulating p=1,000,000 PEs with 1,000,000,000,000 words of data needs about 33,528.5 GiB ...
    """
    need = memory_estimate(p, words)
    if need <= _NEVER_REFUSED:
        return
    room = _memory_room()
    if room is not None and need > room[0]:
        data = f" with {words:,} words of data" if words else ""
        raise MemoryError(
            f"simulating p={p:,} PEs{data} needs about {need / 2**30:,.1f} GiB "
            f"({BYTES_PER_PE} bytes per PE, {BYTES_PER_WORD} per word), more than the "
            f"{room[0] / 2**30:,.1f} GiB {room[1]}; choose a smaller p or m")


def _memory_room() -> tuple[int, str] | None:
    """(bytes, whose): the least memory this process can still get, from the machine or
    under its own limits, and what holds it there; None where nothing can be read."""
    rooms = [(room, whose) for room, whose in (
        (_available_memory(), "this machine has available"),
        (_address_space_room(), "this process's address-space limit leaves it"),
        (_cgroup_room(), "this process's memory limit (its cgroup) leaves it"))
        if room is not None]
    return min(rooms, key=lambda room: room[0]) if rooms else None


def _address_space_room() -> int | None:
    """Bytes RLIMIT_AS leaves this process beyond its present size; None without one."""
    if resource is None:
        return None
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit == resource.RLIM_INFINITY:
        return None
    try:
        with open("/proc/self/status") as status:
            size = next(int(line.split()[1]) * 1024 for line in status
                        if line.startswith("VmSize:"))
    except (OSError, StopIteration):
        return limit                    # the size cannot be read: the limit at most
    return max(limit - size, 0)


def _cgroup_room(root: str = "/sys/fs/cgroup") -> int | None:
    """Bytes the memory cgroups of this process and their parents still allow (limit
    minus usage, the least of them: ``memory.max`` on cgroup v2, ``memory.limit_in_bytes``
    on v1); None without a limit or where /proc/self/cgroup cannot be read."""
    try:
        with open("/proc/self/cgroup") as own:
            lines = own.read().splitlines()
    except OSError:
        return None
    places = []
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":                                        # v2
            unified = root if os.path.exists(os.path.join(root, "cgroup.controllers")) \
                else os.path.join(root, "unified")
            places.append((unified, path, "memory.max", "memory.current"))
        elif "memory" in controllers.split(","):                     # v1
            places.append((os.path.join(root, "memory"), path, "memory.limit_in_bytes",
                           "memory.usage_in_bytes"))
    rooms = []
    for base, path, limit_file, usage_file in places:
        while True:
            folder = os.path.join(base, path.lstrip("/"))
            limit, usage = _number(folder, limit_file), _number(folder, usage_file)
            if limit is not None and usage is not None:
                rooms.append(max(limit - usage, 0))
            if path in ("/", ""):
                break
            path = os.path.dirname(path)
    return min(rooms) if rooms else None


def _number(folder: str, name: str) -> int | None:
    """The integer in the file ``name`` of a cgroup's ``folder``; None for "max" or
    where there is none."""
    try:
        with open(os.path.join(folder, name)) as file:
            text = file.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None
