"""Limits per submission, and a file system where a submission writes only what is its own.

* :class:`collective_lib.autograde.cgroups.SubmissionGroup`: where the cgroups
  go (v1 and v2 layouts, read from fake /proc texts), the v2 file writes and
  reads against a fake cgroup tree, and the real group of this machine (root
  only): memory, processes and CPU of all its processes together, each with
  its reason; killing, removing, cleaning what an aborted run left.
* :func:`collective_lib.autograde.sandbox.confine`: every mount read-only but
  the private ``/tmp``, ``/var/tmp``, ``/dev/shm``, which no other process
  sees and which go with the process; honest libraries still work.
* the trusted side: a CPU budget spent stops the submission with the reason,
  and a checker over its memory limit gives every graded cell zero with the
  reason; the groups are gone afterwards.
"""

import ctypes
import errno
import functools
import json
import os
import platform
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
import time

import pytest

from collective_lib.autograde import cgroups, sandbox
from collective_lib.autograde.checker import check_notebook
from collective_lib.autograde.cgroups import SubmissionGroup, find_layout

ROOT = os.geteuid() == 0
LAYOUT, PROBLEM = find_layout() if os.path.exists("/proc/self/cgroup") else (None, "no /proc")
needs_root = pytest.mark.skipif(not ROOT, reason="the sandbox needs root")
needs_cgroups = pytest.mark.skipif(not ROOT or LAYOUT is None,
                                   reason=f"needs root and cgroups ({PROBLEM})")
UIDS = (61600, 8)             # a pool of its own: other test modules use others
MiB = 1 << 20


# --- where the groups go -----------------------------------------------------------------

def _mountinfo(*mounts) -> str:
    """mountinfo lines for ``(point, root, fstype, super options)``."""
    return "\n".join(f"{30 + i} 20 0:{40 + i} {root} {point} rw,nosuid,nodev,noexec,relatime "
                     f"shared:{i} - {fstype} cgroup rw,{options}"
                     for i, (point, root, fstype, options) in enumerate(mounts)) + "\n"


def test_v1_groups_go_below_the_graders_own_cgroup_in_each_hierarchy(tmp_path):
    for folder in ("memory/grader/a", "pids", "cpu,cpuacct/x", "unified"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "unified" / "cgroup.controllers").write_text("hugetlb\n")
    mountinfo = _mountinfo((tmp_path / "memory", "/", "cgroup", "memory"),
                           (tmp_path / "pids", "/", "cgroup", "pids"),
                           (tmp_path / "cpu,cpuacct", "/", "cgroup", "cpu,cpuacct"),
                           (tmp_path / "unified", "/", "cgroup2", "nsdelegate"))
    cgroups = "5:memory:/grader/a\n4:pids:/\n3:cpu,cpuacct:/x\n1:name=systemd:/\n0::/\n"
    layout, problem = find_layout(mountinfo, cgroups)
    assert problem is None
    assert layout == {"version": 1, "parents": {
        "memory": str(tmp_path / "memory/grader/a"), "pids": str(tmp_path / "pids"),
        "cpuacct": str(tmp_path / "cpu,cpuacct/x"), "cpu": str(tmp_path / "cpu,cpuacct/x")}}


def test_in_a_container_the_mounts_root_is_taken_off_the_path(tmp_path):
    for folder in ("memory/sub", "pids/sub", "cpuacct/sub"):
        (tmp_path / folder).mkdir(parents=True)
    mountinfo = _mountinfo(*[(tmp_path / c, "/docker/abc", "cgroup", c)
                             for c in ("memory", "pids", "cpuacct")])
    cgroups = "".join(f"{i}:{c}:/docker/abc/sub\n"
                      for i, c in enumerate(("memory", "pids", "cpuacct"), 2))
    layout, _ = find_layout(mountinfo, cgroups)
    assert layout["parents"] == {c: str(tmp_path / c / "sub")
                                 for c in ("memory", "pids", "cpuacct")}


def test_v2_is_preferred_when_it_offers_memory_and_pids(tmp_path):
    here = tmp_path / "cg" / "grader.slice" / "nb.scope"
    (here / "collective-grader").mkdir(parents=True)
    (here / "cgroup.controllers").write_text("cpu io memory pids\n")
    mountinfo = _mountinfo((tmp_path / "cg", "/", "cgroup2", "nsdelegate"))
    for cgroup in ("0::/grader.slice/nb.scope\n",
                   "0::/grader.slice/nb.scope/collective-grader\n"):   # after it moved itself
        layout, problem = find_layout(mountinfo, cgroup)
        assert problem is None
        assert layout == {"version": 2, "parents": {"unified": str(here)}}


def test_without_usable_cgroups_the_problem_is_a_sentence(tmp_path):
    (tmp_path / "cg").mkdir()
    (tmp_path / "cg" / "cgroup.controllers").write_text("hugetlb\n")
    layout, problem = find_layout(_mountinfo((tmp_path / "cg", "/", "cgroup2", "")), "0::/\n")
    assert layout is None
    assert problem == (f"cgroup v2 at {tmp_path / 'cg'} does not offer the memory and pids "
                       "controllers (only hugetlb)")
    layout, problem = find_layout("", "")
    assert layout is None and "memory, pids and cpuacct" in problem


def test_a_root_grader_without_cgroups_refuses(monkeypatch):
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 0)
    monkeypatch.setattr(cgroups, "find_layout", lambda *a: (None, "no cgroup here"))
    assert sandbox.self_check() == ["the grader cannot limit the memory, processes and CPU "
                                    "time of a submission with a cgroup: no cgroup here"]


# --- cgroup v2, as plain files -------------------------------------------------------------

def _v2_parent(tmp_path):
    parent = tmp_path / "grader"
    parent.mkdir()
    (parent / "cgroup.controllers").write_text("cpu io memory pids\n")
    (parent / "cgroup.subtree_control").write_text("io\n")
    (parent / "cgroup.procs").write_text("")
    return parent


def test_a_v2_group_writes_its_limits_and_reads_its_usage(tmp_path):
    parent = _v2_parent(tmp_path)
    group = SubmissionGroup("collective-sandbox-61600-ab", memory=2 << 30, processes=64,
                            cpu_s=5, cpus=0.5,
                            layout={"version": 2, "parents": {"unified": str(parent)}}).create()
    folder = parent / "collective-sandbox-61600-ab"
    assert (parent / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"
    assert (folder / "memory.max").read_text() == str(2 << 30)
    assert (folder / "pids.max").read_text() == "64"
    assert (folder / "cpu.max").read_text() == "50000 100000"
    group.enter(4242)
    assert (folder / "cgroup.procs").read_text() == "4242"
    (folder / "memory.current").write_text("1048576\n")
    (folder / "memory.peak").write_text("3221225472\n")
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 7\noom 1\noom_kill 1\n")
    (folder / "pids.current").write_text("3\n")
    (folder / "pids.events").write_text("max 2\n")
    (folder / "cpu.stat").write_text("usage_usec 7500000\nuser_usec 7000000\n")
    usage = group.usage()
    assert usage == {"memory": 1 << 20, "peak": 3 << 30, "cpu_s": 7.5, "processes": 3,
                     "at_limit": False, "peak_at_limit": True, "full": 7, "oom_kills": 1,
                     "refused": 2}
    assert not group.killed_from_outside()
    assert group.exceeded() == {
        "memory": "your processes together used more than 2 GiB of memory (the limit for one "
                  "submission) and were stopped",
        "processes": "your processes together tried to run more than 64 processes or threads "
                     "at once (the limit for one submission) and were stopped",
        "cpu": "your processes together used more than 5 s of CPU time (the limit for one "
               "submission) and were stopped"}
    assert group.reason() == group.exceeded()["memory"]
    assert group.exceeded(since=usage) == {"cpu": group.exceeded()["cpu"]}
    (folder / "cpu.stat").write_text("usage_usec 4000000\n")
    assert group.exceeded(since=usage) == {}
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 8\noom 1\noom_kill 1\n")
    assert group.exceeded(since=usage) == {"memory": group.exceeded()["memory"]}  # reached
    (folder / "memory.current").write_text(f"{(2 << 30) - (4 << 20)}\n")        # nearly full
    full = group.usage()
    assert full["at_limit"] and not usage["at_limit"]
    assert "memory" in group.exceeded(usage, full)
    assert "memory" not in group.exceeded(full, full)          # still there: not passed again
    before = group.counters()
    (folder / "pids.events").write_text("max 3\n")
    assert group.counters() != before
    group.close()
    # an OOM kill below the group's own limit: the machine's or an enclosing group's doing
    (folder / "memory.events").write_text("low 0\nhigh 0\nmax 0\noom 0\noom_kill 1\n")
    (folder / "memory.current").write_text(f"{1 << 20}\n")
    (folder / "memory.peak").write_text(f"{600 << 20}\n")
    quiet = {**group.usage(), "oom_kills": 0}
    assert "memory" not in group.exceeded(quiet) and group.killed_from_outside()


def test_a_v2_group_is_described_for_another_process(tmp_path):
    parent = _v2_parent(tmp_path)
    layout = {"version": 2, "parents": {"unified": str(parent)}}
    group = SubmissionGroup.unique("collective-sandbox-61600-", memory=1 << 30, layout=layout)
    assert group.name.startswith("collective-sandbox-61600-") and len(group.name) == 33
    again = SubmissionGroup.from_description(json.loads(json.dumps(group.describe())))
    assert (again.name, again.dirs, again.memory) == (group.name, group.dirs, 1 << 30)


def _busy_parent(tmp_path, monkeypatch, procs: str, cgroup: str):
    """A v2 parent that refuses controllers while it holds processes (EBUSY), as the kernel."""
    parent = _v2_parent(tmp_path)
    (parent / "cgroup.procs").write_text(procs)
    write, read = cgroups._write, cgroups._read

    def busy_write(path, text):
        if path.endswith("subtree_control") and (parent / "cgroup.procs").read_text().strip():
            raise OSError(errno.EBUSY, "Device or resource busy")
        if path.endswith("collective-grader/cgroup.procs"):
            (parent / "cgroup.procs").write_text("")          # moved
        write(path, text)

    monkeypatch.setattr(cgroups, "_write", busy_write)
    monkeypatch.setattr(cgroups, "_read",
                        lambda path: cgroup if path == "/proc/self/cgroup" else read(path))
    return parent


def test_a_busy_v2_parent_passes_controllers_once_the_grader_moved_to_a_leaf(tmp_path,
                                                                            monkeypatch):
    parent = _busy_parent(tmp_path, monkeypatch, f"{os.getpid()}\n", "0::/grader\n")
    SubmissionGroup("collective-sandbox-61600-cd", memory=1 << 30, processes=64,
                    layout={"version": 2, "parents": {"unified": str(parent)}}).create()
    assert (parent / "collective-grader" / "cgroup.procs").read_text() == str(os.getpid())
    assert (parent / "cgroup.subtree_control").read_text() == "+memory +pids"


def test_a_v2_parent_shared_with_other_processes_is_refused(tmp_path, monkeypatch):
    parent = _busy_parent(tmp_path, monkeypatch, f"{os.getpid()}\n4194304\n", "0::/grader\n")
    with pytest.raises(OSError, match="holds other processes than the grader.*systemd-run"):
        SubmissionGroup("collective-sandbox-61600-ef", memory=1 << 30, processes=64,
                        layout={"version": 2, "parents": {"unified": str(parent)}}).create()
    assert not (parent / "collective-grader").exists()


# --- the real group on this machine -------------------------------------------------------

def _child_in(group, code: str) -> int:
    """A child process in ``group`` that runs ``code`` (Python) and exits."""
    pid = os.fork()
    if pid == 0:
        try:
            group.enter()
            exec(textwrap.dedent(code), {"os": os, "time": time})
        finally:
            os._exit(0)
    deadline = time.monotonic() + 10
    while pid not in group.pids() and time.monotonic() < deadline:
        time.sleep(0.005)
    return pid


def _wait(pid: int) -> int:
    """The signal that ended ``pid`` (0 if it exited)."""
    _, status = os.waitpid(pid, 0)
    return os.WTERMSIG(status) if os.WIFSIGNALED(status) else 0


@needs_cgroups
def test_a_group_limits_the_memory_of_its_processes_together():
    group = SubmissionGroup.unique("collective-sandbox-61600-", memory=256 * MiB,
                                   processes=16, cpu_s=60, cpus=1).create()
    try:
        if group.version == 1:
            assert int(open(os.path.join(group.dirs["memory"], "memory.limit_in_bytes"))
                       .read()) == 256 * MiB
            assert open(os.path.join(group.dirs["pids"], "pids.max")).read().strip() == "16"
            assert open(os.path.join(group.dirs["cpu"], "cpu.cfs_quota_us")).read().strip() \
                == "100000"
        else:
            assert open(os.path.join(group.dirs["unified"], "memory.max")).read().strip() \
                == str(256 * MiB)
        # three processes of 100 MiB each: each is small, together they are too much
        pids = [_child_in(group, "hold = b'x' * (100 << 20); time.sleep(30)") for _ in range(3)]
        deadline = time.monotonic() + 20
        while not group.usage()["oom_kills"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert group.usage()["oom_kills"] >= 1
        assert group.usage()["peak"] <= 256 * MiB
        assert group.reason() == ("your processes together used more than 256 MiB of memory "
                                  "(the limit for one submission) and were stopped")
        assert not group.killed_from_outside()
        assert group.kill()
        assert sorted(_wait(pid) for pid in pids) == [signal.SIGKILL] * 3
    finally:
        assert group.remove()
    assert not any(os.path.exists(folder) for folder in group.dirs.values())


@needs_cgroups
def test_an_oom_kill_from_a_group_around_it_is_not_the_submissions_fault():
    # The class is graded in a cgroup (a container, a Slurm job) smaller than the notebooks
    # graded at once may hold: the kernel stops the largest process there, which may be an
    # honest one under its own limit. That is no verdict on it (verdict.TrustedVerdict then
    # reports the notebook as not graded, and classgrade grades it again alone).
    outer = f"collective-outer-{os.getpid()}"
    layout = {"version": LAYOUT["version"], "parents": dict(LAYOUT["parents"])}
    key = "memory" if LAYOUT["version"] == 1 else "unified"
    folder = os.path.join(LAYOUT["parents"][key], outer)
    os.mkdir(folder)
    try:
        if LAYOUT["version"] == 1:
            (Path(folder) / "memory.limit_in_bytes").write_text(str(96 * MiB))
        else:
            (Path(folder) / "memory.max").write_text(str(96 * MiB))
            (Path(folder) / "cgroup.subtree_control").write_text("+memory +pids")
        layout["parents"][key] = folder
        group = SubmissionGroup.unique("collective-sandbox-61600-", memory=256 * MiB,
                                       processes=16, layout=layout).create()
        try:
            before = group.usage()
            pid = _child_in(group, "hold = b'x' * (200 << 20); time.sleep(30)")
            assert _wait(pid) == signal.SIGKILL
            assert group.exceeded(before) == {}
            assert group.killed_from_outside()
        finally:
            assert group.remove()
    finally:
        os.rmdir(folder)


@needs_cgroups
def test_a_group_counts_what_its_processes_write_to_a_tmpfs():
    group = SubmissionGroup.unique("collective-sandbox-61600-", memory=128 * MiB,
                                   processes=16).create()
    try:
        before = group.usage()
        pid = _child_in(group, """
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            assert libc.unshare(0x00020000) == 0           # a private tmpfs of its own
            assert libc.mount(None, b"/", None, 16384 | (1 << 18), None) == 0
            assert libc.mount(b"tmpfs", b"/tmp", b"tmpfs", 0, b"size=1g") == 0
            for n in range(1000):
                with open(f"/tmp/{n}", "wb") as handle:
                    handle.write(b"x" * (1 << 20))
        """)
        assert _wait(pid) == signal.SIGKILL
        assert group.exceeded(before) == {"memory": "your processes together used more than "
                                          "128 MiB of memory (the limit for one submission) "
                                          "and were stopped"}
    finally:
        assert group.remove()


@needs_cgroups
def test_a_group_refuses_forks_beyond_its_processes_and_counts_its_cpu_time():
    group = SubmissionGroup.unique("collective-sandbox-61600-", memory=512 * MiB,
                                   processes=8, cpu_s=0.5).create()
    try:
        bomb = _child_in(group, """
            while True:
                try:
                    if os.fork() == 0:
                        time.sleep(30)
                        os._exit(0)
                except OSError:
                    time.sleep(30)
        """)
        deadline = time.monotonic() + 10
        while not group.usage()["refused"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert group.usage()["processes"] == 8
        assert set(group.exceeded()) == {"processes"}
        assert group.kill(spare={bomb})
        assert group.pids() == {bomb}                       # the spared one is left
        os.kill(bomb, signal.SIGKILL)
        _wait(bomb)
        spin = _child_in(group, "end = time.process_time() + 0.8\n"
                                "while time.process_time() < end: pass")
        assert _wait(spin) == 0
        assert 0.7 < group.usage()["cpu_s"] < 5
        assert group.exceeded()["cpu"] == ("your processes together used more than 0.5 s of "
                                           "CPU time (the limit for one submission) and were "
                                           "stopped")
    finally:
        assert group.remove()


@needs_cgroups
def test_clean_removes_the_groups_an_aborted_run_left():
    left = SubmissionGroup.unique("collective-sandbox-61609-", memory=64 * MiB,
                                  processes=8).create()
    other = SubmissionGroup.unique("collective-sandbox-61608-", memory=64 * MiB).create()
    sleeper = _child_in(left, "time.sleep(60)")
    try:
        assert SubmissionGroup.clean("collective-sandbox-61609-") == [left.name]
        assert _wait(sleeper) == signal.SIGKILL
        assert not any(os.path.exists(folder) for folder in left.dirs.values())
        assert all(os.path.exists(folder) for folder in other.dirs.values())
    finally:
        other.remove()
        left.remove()


@needs_cgroups
def test_self_check_passes_here():
    assert sandbox.self_check() == []


# --- the private file system --------------------------------------------------------------

def _in_sandbox(code: str, scratch: int = 64 * MiB, uid: int | None = None) -> dict:
    """Run ``code`` (which fills the dict ``out``) in a confined child; ``out`` as JSON.

    The child is a fresh interpreter, not a fork of this pytest worker: a fork inherits
    the worker's address space (1.7 GB after the class-grading tests, over the sandbox's
    1.5 GB limit, so a thread the code starts could not allocate and never started) and
    whatever threads it runs."""
    read_end, write_end = os.pipe()
    with sandbox.SandboxUser(*UIDS) as user:
        child = textwrap.dedent(f"""
            import json, os
            from collective_lib.autograde import sandbox
            from collective_lib.autograde.sandbox import Limits
            out = {{}}
            try:
                out["scratch"] = sandbox.confine([], {user.uid if uid is None else uid},
                                                 Limits(scratch={scratch}), keep=({write_end},))
                exec({textwrap.dedent(code)!r}, {{"out": out, "os": os}})
            except BaseException as err:
                out["error"] = f"{{type(err).__name__}}: {{err}}"
            os.write({write_end}, json.dumps(out).encode())
        """)
        with os.fdopen(read_end, "rb") as results:
            try:    # the result is a short line: the pipe holds it until the child ends
                subprocess.run([sys.executable, "-c", child], pass_fds=(write_end,),
                               timeout=120, check=True)
            finally:
                os.close(write_end)
            return json.loads(results.read())


@functools.lru_cache(maxsize=None)
def _world_writable() -> tuple:
    """The world-writable directories of this machine (not /proc, /sys)."""
    found = []
    for top, dirs, _ in os.walk("/"):
        if top in ("/proc", "/sys"):
            dirs[:] = []
            continue
        if os.stat(top).st_mode & 0o002:
            found.append(top)
    return tuple(found)


TRY_WRITES = """
import errno
out["writes"] = {}
for folder in PLACES + [out["scratch"], os.getcwd(), os.environ["HOME"]]:
    try:
        with open(os.path.join(folder, "collective-probe"), "w") as handle:
            handle.write("x")
        out["writes"][folder] = "written"
    except OSError as err:
        out["writes"][folder] = errno.errorcode[err.errno]
with open("/dev/null", "w") as handle:
    handle.write("fine")
out["proc"] = open("/proc/self/status").read().split()[1]
top = {}                  # the last mount at a point is the one its path reaches
for line in open("/proc/self/mountinfo"):
    top[line.split()[4]] = line.split()[5].split(",")[0]
out["rw"] = sorted(point for point, mode in top.items() if mode == "rw")
"""


@needs_root
@pytest.mark.parametrize("new_kernel", [True, False], ids=["mount_setattr", "remount"])
def test_only_the_private_scratch_places_can_be_written(monkeypatch, new_kernel):
    if not new_kernel:       # an older kernel: each mount is remounted read-only by itself
        monkeypatch.setattr(sandbox, "_SYSCALLS", {"keyctl": sandbox._SYSCALLS.get("keyctl")})
    places = sorted(set(_world_writable()) | {"/tmp", "/var/tmp", "/dev/shm", "/",
                                              "/root", os.path.dirname(__file__)})
    out = _in_sandbox(f"PLACES = {places!r}\n" + TRY_WRITES)
    assert "error" not in out, out
    private = ("/tmp", "/var/tmp", "/dev/shm")
    assert out["rw"] == sorted(private)
    assert out["scratch"].startswith("/tmp/student-")
    for folder, result in out["writes"].items():
        if folder in private or folder.startswith("/tmp/student-"):
            assert result == "written", (folder, result)
        else:
            assert result in ("EROFS", "EACCES", "ENOENT"), (folder, result)
    assert out["writes"].get("/run/lock", "EROFS") == "EROFS"
    assert out["proc"] == "python" or out["proc"]        # /proc is readable
    for folder in places:                                  # nothing reached the host
        assert not os.path.exists(os.path.join(folder, "collective-probe")), folder


@needs_root
def test_one_process_never_sees_what_another_left():
    first = _in_sandbox("""
        for folder in ("/tmp", "/var/tmp", "/dev/shm"):
            with open(folder + "/left-behind", "w") as handle:
                handle.write("secret")
        out["left"] = sorted(os.listdir("/dev/shm"))
    """)
    assert first["left"] == ["left-behind"], first
    second = _in_sandbox("""
        out["seen"] = [f for f in ("/tmp", "/var/tmp", "/dev/shm")
                       if os.path.exists(f + "/left-behind")]
    """)
    assert second["seen"] == [], second
    for folder in ("/tmp", "/var/tmp", "/dev/shm"):
        assert not os.path.exists(folder + "/left-behind")


@needs_root
def test_honest_libraries_work_in_the_read_only_sandbox():
    out = _in_sandbox("""
        import numpy, tempfile
        out["numpy"] = float(numpy.linspace(0, 1, 5).sum())
        from IPython.core.interactiveshell import InteractiveShell
        shell = InteractiveShell.instance(history_length=0)
        shell.history_manager.enabled = False
        result = shell.run_cell("%time x = sum(range(10))\\ny = x * 2", silent=True)
        out["ipython"] = [result.success, shell.user_ns.get("y")]
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        plt.plot([0, 1], [1, 0])
        plt.savefig("figure.png")
        out["figure"] = os.path.getsize("figure.png") > 1000
        out["home"] = [os.environ["HOME"], os.environ["MPLCONFIGDIR"], tempfile.gettempdir()]
        out["uid"] = os.getuid()
    """)
    assert "error" not in out, out
    assert out["numpy"] == 2.5 and out["ipython"] == [True, 90] and out["figure"]
    assert out["home"] == [out["scratch"], out["scratch"], "/tmp"]
    assert out["uid"] != 0


@needs_root
@pytest.mark.skipif(platform.machine() not in ("x86_64", "aarch64"), reason="keyctl number")
def test_kill_all_empties_the_keyrings_a_uid_keeps():
    libc = ctypes.CDLL(None, use_errno=True)
    numbers = {"x86_64": (248, 250), "aarch64": (217, 219)}[platform.machine()]
    uid = UIDS[0] + UIDS[1] - 1

    def as_uid(action) -> int:
        pid = os.fork()
        if pid == 0:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            os._exit(0 if action() >= 0 else 1)
        _, status = os.waitpid(pid, 0)
        return os.WEXITSTATUS(status)

    add = lambda: libc.syscall(numbers[0], b"user", b"collective-note", b"kept", 4,  # noqa
                               ctypes.c_long(-4))
    search = lambda: libc.syscall(numbers[1], 10, ctypes.c_long(-4), b"user",  # noqa
                                  b"collective-note", 0)
    assert as_uid(add) == 0
    assert as_uid(search) == 0                 # a later process of the uid finds it...
    sandbox.kill_all(uid)
    assert as_uid(search) == 1                 # ...unless grading emptied the keyring


# --- the trusted side ---------------------------------------------------------------------

SPENDER = """
def spin():
    while True:
        pass

def answer():
    return 42
"""


@needs_cgroups
def test_a_spent_cpu_budget_stops_the_submission_with_the_reason():
    cells = [{"role": "student", "source": SPENDER, "id": "answer"},
             {"role": "graded", "source": "assert answer() == 42", "id": "before"},
             {"role": "graded", "source": "spin()", "id": "spin"},
             {"role": "graded", "source": "assert answer() == 42", "id": "after"}]
    with sandbox.SandboxUser(*UIDS) as user:
        group = SubmissionGroup.unique(f"collective-sandbox-{user.uid}-", memory=1 << 30,
                                       processes=64, cpu_s=3, cpus=1).create()
        try:
            verdicts = check_notebook({
                "cells": cells, "hide": [], "uid": user.uid, "cell_timeout_s": 60,
                "limits": {"processes": 144, "group": group.describe()}})
        finally:
            assert group.remove()
    spent = ("your processes together used more than 3 s of CPU time (the limit for one "
             "submission) and were stopped")
    assert verdicts["before"]["passed"], verdicts["before"]
    # messages are wrapped to the feedback's width: compare their words
    assert " ".join(verdicts["spin"]["message"].split()) == f"RuntimeError: {spent}"
    assert " ".join(verdicts["after"]["message"].split()) == f"your code was not run: {spent}"


@needs_cgroups
def test_a_checker_over_its_memory_limit_gives_every_graded_cell_zero(tmp_path):
    from collective_lib.autograde.verdict import TrustedVerdict
    cells = [{"role": "student", "source": "def answer():\n    return 42", "id": "answer"},
             {"role": "graded", "source": "assert answer() == 42", "id": "first"},
             {"role": "graded", "source": "hoard = b'x' * (600 << 20)", "id": "hoard"},
             {"role": "graded", "source": "assert answer() == 42", "id": "last"}]
    verdict = TrustedVerdict(checker_memory=300 * MiB)
    with sandbox.SandboxUser(*UIDS) as user:
        verdicts = verdict._check({"cells": cells, "hide": [], "uid": user.uid,
                                   "limits": {"memory": 1536 * MiB, "cpu_s": 120},
                                   "cell_timeout_s": 60})
        left = SubmissionGroup.clean(f"collective-sandbox-{user.uid}-") + \
            SubmissionGroup.clean(f"collective-checker-{user.uid}-")
    reason = ("not graded: grading this notebook needed more than 300 MiB of memory in the "
              "trusted checker (its limit) and was stopped")
    assert {gid: v["message"] for gid, v in verdicts.items()} == {
        "first": reason, "hoard": reason, "last": reason}
    assert left == []                               # both groups went with the notebook


DESCRIPTORS = """
import os
OPEN = []
for fd in sorted(map(int, os.listdir("/proc/self/fd"))):
    try:
        OPEN.append((fd, os.readlink(f"/proc/self/fd/{fd}")))
    except FileNotFoundError:                   # the listing's own, closed by now
        pass

def descriptors():
    return OPEN
"""


@needs_root
def test_a_student_process_holds_no_descriptor_but_its_pipes_and_dev_null():
    # The host once held IPython's history database open read-write, and every student
    # process inherited it: one submission wrote there and a later one read it back.
    cells = [{"role": "student", "source": DESCRIPTORS, "id": "answer"},
             {"role": "graded", "source": "held = descriptors()\n"
                                          "assert False, repr(held)", "id": "show"}]
    with sandbox.SandboxUser(*UIDS) as user:
        verdicts = check_notebook({"cells": cells, "hide": [], "uid": user.uid,
                                   "cell_timeout_s": 60, "limits": {"processes": 144}})
    message = verdicts["show"]["message"]
    held = eval(message[message.index("["):])           # the list the cell showed
    assert [fd for fd, _ in held][:3] == [0, 1, 2] and len(held) == 5, held
    assert {target for _, target in held[:3]} == {"/dev/null"}, held
    assert all(target.startswith("pipe:") for _, target in held[3:]), held


@needs_cgroups
def test_an_honest_notebook_passes_within_its_groups():
    from collective_lib.autograde.verdict import TrustedVerdict
    cells = [{"role": "student", "source": "import numpy\ndef answer():\n"
                                          "    return int(numpy.arange(10).sum())",
              "id": "answer"},
             {"role": "graded", "source": "assert answer() == 45", "id": "t"}]
    with sandbox.SandboxUser(*UIDS) as user:
        verdicts = TrustedVerdict()._check({"cells": cells, "hide": [], "uid": user.uid,
                                            "limits": {"memory": 1536 * MiB, "cpu_s": 120},
                                            "cell_timeout_s": 60})
    assert verdicts["t"]["passed"], verdicts["t"]
