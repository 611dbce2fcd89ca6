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
