"""The run limits: the default operation budget and the memory check (collective_lib.limits)."""
import builtins
import ctypes

import pytest

from collective_lib import limits


def test_the_default_budget_grows_with_p():
    assert [limits.default_max_ops(p) for p in (1, 8, 1024)] == [10_004, 80_256, 14_434_304]


def test_the_estimate_counts_pes_and_words():
    assert limits.memory_estimate(3, words=10) == 3 * limits.BYTES_PER_PE + 10 * limits.BYTES_PER_WORD


def test_the_memory_check_reads_windows_available_memory(monkeypatch):
    """Without /proc/meminfo, Windows' GlobalMemoryStatusEx gives the memory available."""
    class FakeKernel32:
        def GlobalMemoryStatusEx(self, pointer):        # noqa: N802 (the Windows name)
            status = pointer._obj
            assert status.dwLength == ctypes.sizeof(status)
            status.ullAvailPhys = 3 * 2**30
            return 1

    real_open = builtins.open

    def no_meminfo(path, *args, **kwargs):
        if path == "/proc/meminfo":
            raise FileNotFoundError(path)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", no_meminfo)
    monkeypatch.setattr(ctypes, "windll", type("WinDLL", (), {"kernel32": FakeKernel32()})(),
                        raising=False)
    assert limits._available_memory() == 3 * 2**30
    limits.check_memory(2**20)                       # about 1 GiB fits in 3
    with pytest.raises(MemoryError, match=r"p=4,000,000 PEs .* more than the 3\.0 GiB"):
        limits.check_memory(4 * 10**6)


def test_the_memory_check_keeps_to_the_process_s_address_space_limit():
    # the grader's checker runs under RLIMIT_AS where no cgroup holds it: a run beyond that
    # limit is refused with its reason, not left to die in the middle of a cell
    import subprocess
    import sys
    code = ("import resource\n"
            "from collective_lib import limits\n"
            "resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))\n"
            "limits.check_memory(8, 10 ** 7)\n"
            "try:\n"
            "    limits.check_memory(8, 10 ** 8)\n"
            "except MemoryError as err:\n"
            "    print(err)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    assert "100,000,000 words of data needs about 3.4 GiB" in out, out
    assert "GiB this process's address-space limit leaves it; choose a smaller p or m" in out


def _fake_cgroups(tmp_path, monkeypatch, own, files):
    """A cgroup tree under tmp_path with ``files`` ({relative path: text}), and
    /proc/self/cgroup reading ``own``."""
    import io
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    real_open = builtins.open

    def fake_open(path, *args, **kwargs):
        if path == "/proc/self/cgroup":
            return io.StringIO(own)
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", fake_open)


def test_the_room_of_a_v2_cgroup_is_the_least_left_under_it_and_its_parents(tmp_path,
                                                                            monkeypatch):
    _fake_cgroups(tmp_path, monkeypatch, "0::/grading/checker\n", {
        "cgroup.controllers": "memory",
        "grading/memory.max": str(10 << 30), "grading/memory.current": str(9 << 30),
        "grading/checker/memory.max": str(3 << 30),
        "grading/checker/memory.current": str(1 << 30),
        "memory.max": "max", "memory.current": "5"})
    assert limits._cgroup_room(str(tmp_path)) == 1 << 30       # the parent's 10 - 9 GiB


def test_the_room_of_a_v1_memory_cgroup_is_its_limit_less_its_usage(tmp_path, monkeypatch):
    _fake_cgroups(tmp_path, monkeypatch, "5:cpu:/\n4:memory:/checker\n0::/\n", {
        "memory/checker/memory.limit_in_bytes": str(3 << 30),
        "memory/checker/memory.usage_in_bytes": str(1 << 30),
        "memory/memory.limit_in_bytes": "9223372036854771712",
        "memory/memory.usage_in_bytes": str(1 << 30)})
    assert limits._cgroup_room(str(tmp_path)) == 2 << 30
    monkeypatch.setattr(limits, "_cgroup_room", lambda: 2 << 30)
    monkeypatch.setattr(limits, "_available_memory", lambda: 20 << 30)
    monkeypatch.setattr(limits, "_address_space_room", lambda: None)
    with pytest.raises(MemoryError, match=r"more than the 2\.0 GiB this process's memory "
                                          r"limit \(its cgroup\) leaves it"):
        limits.check_memory(8, 10 ** 8)


def test_no_cgroup_limit_leaves_the_room_unknown(tmp_path, monkeypatch):
    _fake_cgroups(tmp_path, monkeypatch, "0::/\n", {"cgroup.controllers": "",
                                                    "memory.max": "max",
                                                    "memory.current": "5"})
    assert limits._cgroup_room(str(tmp_path)) is None


def test_a_small_run_is_started_without_reading_any_limit(monkeypatch):
    def no_reading():
        raise AssertionError("a small run read the memory limits")

    monkeypatch.setattr(limits, "_memory_room", no_reading)
    limits.check_memory(1000, words=10 ** 6)            # about 35 MiB
    with pytest.raises(AssertionError, match="read the memory limits"):
        limits.check_memory(1000, words=10 ** 7)        # about 344 MiB
