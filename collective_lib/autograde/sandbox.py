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
   never reaches a verdict, costs no marks and fills no disk;
6. no descriptor inherited from the host but the ones it names (its pipes to the
   checker): a file the host held open would reach past the read-only mounts.

The limits of 3. hold per process. A :class:`.cgroups.SubmissionGroup` (a cgroup, v1 or
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
import resource
import signal
import sys
import tempfile

from .cgroups import SubmissionGroup, mounts

__all__ = ["Limits", "SandboxUser", "confine", "kill_all", "self_check"]

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
        for mount in mounts():
            if mount["point"] not in writable:
                try:
                    _remount(mount["point"], mount["options"], readonly=True)
                except OSError as err:        # hidden below another mount: checked below
                    if err.errno not in (errno.ENOENT, errno.ENOTDIR, errno.EINVAL):
                        raise
    left = []
    for point in sorted({mount["point"] for mount in mounts()}):
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
        with open("/proc/self/oom_score_adj", "w") as handle:
            handle.write("1000")
    except OSError:
        pass


def confine(hide: list, uid: int | None, limits: Limits, keep: tuple = ()) -> str:
    """Enter the sandbox (see the module's note); return the private scratch directory.

    ``uid`` None confines without changing user (only for an instructor who
    allowed unconfined grading; then the namespaces are skipped too). ``keep``:
    the descriptors beyond stdin, stdout and stderr that stay open.
    """
    _close_inherited(keep)
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


def _close_inherited(keep: tuple) -> None:
    """Close every descriptor above stderr that is not in ``keep``."""
    for fd in map(int, os.listdir("/proc/self/fd")):   # its own listing's is closed already
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError as err:
                if err.errno != errno.EBADF:
                    raise


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
