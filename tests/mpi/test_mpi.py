"""collective_lib.mpi: the catalog's programs on real MPI processes (mpiexec -n 4).

The MPI jobs are started with the launcher, so this test process never becomes
an MPI process.  Each job costs about a second of start-up, so the catalog is
checked in one job that iterates over catalog() itself.
"""
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psutil
import pytest

from collective_lib import catalog
from collective_lib.errors import UnreceivedMessageError
from collective_lib.mpi import (MPIDeadlockError, MPIExecNotFoundError, MPIJobError,
                                MPILaunchTimeout, MPINotAvailableError, find_mpiexec, fit_ts_tw,
                                available_cores, launch, load_model, mpi_collective_name)
from collective_lib.mpi.backend import mpi

P = 4
PROGRAMS = Path(__file__).resolve().parents[1] / "mpi_programs.py"


def program(name: str) -> str:
    return f"{PROGRAMS}:{name}"


# -- the fit (pure) -------------------------------------------------------------------------

@pytest.mark.parametrize("ts, tw", [(2e-6, 1e-9), (5e-5, 4e-10), (1.0, 0.25), (3e-6, 0.0)])
def test_fit_recovers_ts_and_tw_from_exact_timings(ts, tw):
    words = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536]
    got_ts, got_tw = fit_ts_tw(words, [ts + tw * m for m in words])
    assert got_ts == pytest.approx(ts, rel=1e-9)
    assert got_tw == pytest.approx(tw, rel=1e-9, abs=1e-18)


def test_fit_recovers_ts_and_tw_from_noisy_timings():
    rng = np.random.default_rng(7)
    words = np.repeat([1, 8, 64, 512, 4096, 32768, 262144], 5)
    ts, tw = 4e-6, 2.5e-9
    noisy = (ts + tw * words) * rng.uniform(0.97, 1.03, size=words.size)
    got_ts, got_tw = fit_ts_tw(words, noisy)
    assert got_ts == pytest.approx(ts, rel=0.05)
    assert got_tw == pytest.approx(tw, rel=0.05)


def test_fit_keeps_both_costs_non_negative():
    # Times that fall with size would need tw < 0: the fit puts tw on its bound, 0.
    ts, tw = fit_ts_tw([1, 10, 100], [3.0, 2.0, 1.0])
    assert tw == 0.0 and 1.0 < ts < 3.0
    # A line through the origin and below it would need ts < 0.
    ts, tw = fit_ts_tw([10, 20, 40], [0.5, 1.5, 3.5])
    assert ts == 0.0 and tw > 0


@pytest.mark.parametrize("words, seconds, needle", [
    ([5, 5, 5], [1.0, 1.0, 1.0], "two distinct"),
    ([1, 2], [1.0], "same length"),
    ([1, 2], [1.0, 0.0], "times > 0"),
])
def test_fit_rejects_bad_measurements(words, seconds, needle):
    with pytest.raises(ValueError, match=needle):
        fit_ts_tw(words, seconds)


def test_load_model_reads_a_calibration(tmp_path):
    path = tmp_path / "machine.json"
    path.write_text('{"ts": 2e-06, "tw": 1e-09}')
    model = load_model(path, ports="half-duplex")
    assert (model.ts, model.tw, model.ports) == (2e-06, 1e-09, "half-duplex")
    with pytest.raises(ValueError, match="no calibration file"):
        load_model(tmp_path / "missing.json")


# -- clear errors without MPI ---------------------------------------------------------------

def test_missing_mpi4py_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(MPINotAvailableError, match="pip install mpich mpi4py"):
        mpi()


def test_mpiexec_is_found_beside_python_first():
    found = Path(find_mpiexec())
    beside = Path(sys.executable).parent / "mpiexec"
    assert found == beside if beside.exists() else found.name == "mpiexec"


def test_missing_mpiexec_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(MPIExecNotFoundError, match="pip install mpich"):
        find_mpiexec()


def test_mpi_collective_names():
    assert mpi_collective_name("broadcast", {}) == "MPI_Bcast"
    assert mpi_collective_name("alltoall", {}) == "MPI_Alltoall"
    assert mpi_collective_name("prefix_sum", {"exclusive": True}) == "MPI_Exscan"
    assert mpi_collective_name("reduce", {"op": max}) is None


# -- real MPI jobs --------------------------------------------------------------------------

def test_every_catalog_algorithm_gives_the_simulators_results_under_mpi():
    valid = sorted(name for name, entry in catalog().items() if entry.valid(P))
    records = launch(["run", "--all", "--words", "8", "--payload", "list",
                      "--repeats", "1", "--warmup", "0", "--timeout", "20"], np=P, timeout=120)
    ran = sorted(r["algorithm"] for r in records)
    assert ran == valid, f"the job ran {ran}, the catalog has {valid} for p={P}"
    for r in records:
        assert "skipped" not in r, f"{r['algorithm']} rejected m=8: {r['skipped']}"
        assert r["correct"] is True, f"{r['algorithm']}: {r['mismatch']}"
        if r["mpi_collective"]:
            assert r["mpi_correct"] is True, f"{r['mpi_collective']} for {r['operation']}"
        assert r["time"] > 0 and r["p"] == P
        assert r["cores"] == available_cores()     # the job inherits this process's cores


def test_numpy_payloads_and_a_students_program_under_mpi():
    names = [n for n in ("binomial_broadcast", "linear_pipeline_broadcast", "hypercube_allgather",
                         "all_to_all_bc_ring", "binomial_reduce", "alltoall_cyclic")
             if n in catalog()]
    records = launch(["run", *names, program("my_ring_allgather"), "--operation", "allgather",
                      "--k", "3", "--words", "3", "6000", "--payload", "array",
                      "--repeats", "2", "--warmup", "1"], np=P, timeout=120)
    assert len(records) == 2 * (len(names) + 1)
    for r in records:
        assert r["correct"] is True, f"{r['algorithm']} m={r['words']}: {r['mismatch']}"
        assert len(r["times"]) == 2
        assert r["mpi_collective"] and r["mpi_correct"] is True and r["mpi_time"] > 0
    pipeline = [r for r in records if r["algorithm"] == "linear_pipeline_broadcast"]
    assert all(r["params"] == {"k": 3} for r in pipeline)


def test_wrong_results_are_reported_with_the_rank():
    with pytest.raises(MPIJobError, match=r"my_wrong_allgather .*rank 0 returned") as caught:
        launch(["run", program("my_wrong_allgather"), "--operation", "allgather",
                "--words", "2", "--repeats", "1", "--warmup", "0"], np=P, timeout=60)
    assert [r["correct"] for r in caught.value.records] == [False]


def test_a_record_built_by_hand_is_checked_as_the_simulator_checks_it():
    with pytest.raises(Exception, match=r"rank 0 yielded Send with words=nan: a message size "
                                        "must be a non-negative integer"):
        launch(["run", program("nan_sized_send"), "--timeout", "5", "--words", "2",
                "--repeats", "1", "--warmup", "0"], np=P, timeout=60)


def test_a_yielded_value_that_is_no_operation_is_named_with_its_rank():
    with pytest.raises(Exception, match=r"rank 0 yielded 'send to 1' is not an operation"):
        launch(["run", program("yields_a_string"), "--timeout", "5", "--words", "2",
                "--repeats", "1", "--warmup", "0"], np=P, timeout=60)


def test_a_deadlock_names_every_blocked_rank_and_its_operation():
    start = time.monotonic()
    with pytest.raises(MPIDeadlockError) as caught:
        launch(["run", program("receive_first_ring"), "--timeout", "1", "--words", "2",
                "--repeats", "1", "--warmup", "0"], np=P, timeout=60)
    assert time.monotonic() - start < 30
    blocked = caught.value.blocked
    assert sorted(blocked) == list(range(P))
    for rank, what in blocked.items():
        assert what.startswith(f"recv(src={(rank + 1) % P})"), what
    assert "rank 3: recv(src=0)" in str(caught.value)


def test_a_partial_deadlock_separates_blocked_and_returned_ranks():
    with pytest.raises(MPIDeadlockError) as caught:
        launch(["run", program("pair_waits_for_each_other"), "--timeout", "1",
                "--repeats", "1", "--warmup", "0"], np=P, timeout=60)
    assert sorted(caught.value.blocked) == [0, 1]
    assert caught.value.returned == [2, 3] and caught.value.silent == []


def test_a_message_never_received_is_reported():
    with pytest.raises(UnreceivedMessageError) as caught:
        launch(["run", program("send_and_forget"), "--repeats", "1", "--warmup", "0",
                "--timeout", "5"], np=P, timeout=60)
    assert caught.value.unreceived == {(0, 1): 1}


def test_a_rank_count_the_algorithm_cannot_take_is_refused_before_starting():
    with pytest.raises(ValueError, match="power of two, got p=3"):
        launch(["run", "hypercube_broadcast", "--words", "4"], np=3, timeout=60)


def test_the_launcher_kills_a_job_that_never_yields():
    marker = program("spin_without_yielding")
    with pytest.raises(MPILaunchTimeout, match="longer than 4 s"):
        launch(["run", marker, "--timeout", "60"], np=2, timeout=4)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and _processes_with(marker):
        time.sleep(0.2)
    assert not _processes_with(marker), "ranks of the killed job are still running"


def _processes_with(text: str) -> list:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if text in " ".join(proc.info["cmdline"] or []):
            found.append(proc.pid)
    return found


def test_calibration_and_the_table_of_the_command_line(tmp_path):
    path = tmp_path / "machine.json"
    [record] = launch(["calibrate", "--sizes", "1", "256", "4096", "32768", "--repeats", "2",
                       "--output", path], np=2, timeout=60)
    model = load_model(path)
    assert model.ts == record["ts"] > 0 and model.tw == record["tw"] >= 0
    assert record["sizes"] == [1, 256, 4096, 32768] and len(record["seconds"]) == 4
    # The human-readable table, as a user would run it under mpiexec.
    done = subprocess.run([find_mpiexec(), "-n", "2", sys.executable, "-m", "collective_lib.mpi",
                           "run", "binomial_broadcast", "--words", "16", "--model", str(path)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    line = done.stdout.strip()
    assert line.startswith("binomial_broadcast") and " ok " in line and "MPI_Bcast" in line
    assert "predicted" in line and done.stderr == ""


def test_run_inside_a_script_returns_each_ranks_result(tmp_path):
    script = tmp_path / "script.py"
    script.write_text(
        "from collective_lib import catalog\n"
        "from collective_lib.mpi import run\n"
        "from mpi4py import MPI\n"
        "inputs = [[7, 8, 9] if i == 2 else None for i in range(MPI.COMM_WORLD.Get_size())]\n"
        "result = run('binomial_broadcast', inputs, root=2)\n"
        "mine = run(catalog()['hypercube_allgather'], lambda i: i * 10)\n"
        "rank = MPI.COMM_WORLD.Get_rank()\n"
        "with open(f'rank{rank}.txt', 'w') as out:\n"      # one file a rank: stdout lines interleave
        "    out.write(f'{result} {mine}')\n")
    done = subprocess.run([find_mpiexec(), "-n", str(P), sys.executable, str(script)],
                          capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    for r in range(P):
        assert (tmp_path / f"rank{r}.txt").read_text() == "[7, 8, 9] [0, 10, 20, 30]", r
