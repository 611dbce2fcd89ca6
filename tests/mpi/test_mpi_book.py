"""Chapter 7's claims about running the catalog under real MPI (book/ch7_real_mpi).

The MPI jobs are started with the launcher, as in the chapter; the closed-form
crossovers of §7.4-7.6 are checked against the catalog without MPI.
"""
import math
import re
import subprocess
from pathlib import Path

import pytest

from collective_lib import CostModel, Ring, catalog, simulate
from collective_lib.errors import DeadlockError
from collective_lib.mpi import MPIDeadlockError, find_mpiexec, launch, load_model

# §7.2: the program the chapter writes to a file so that the MPI ranks can import it.
SEND_FIRST = '''
import numpy as np
from collective_lib import recv, send

def send_first_ring(me, p, data, words=1):
    yield send((me + 1) % p, np.zeros(words))   # everybody talks first ...
    return (yield recv((me - 1) % p))            # ... then listens
'''
WORD_BYTES = 8


def entry(name):
    return catalog()[name]


# §7.4
def broadcast_crossover_factor(p, k):
    L = math.ceil(math.log2(p))
    denominator = L - (p + k - 2) / k
    return (p + k - 2 - L) / denominator if denominator > 0 else math.inf


# §7.6
def alltoall_crossover_factor(p):
    d = math.log2(p)
    denominator = p / 2 * d - (p - 1)
    return (p - 1 - d) / denominator if denominator > 0 else math.inf


# §7.4
def mpich_defaults():
    mpivars = Path(find_mpiexec()).with_name("mpivars")
    listing = subprocess.run([str(mpivars)], capture_output=True, text=True, timeout=60).stdout
    return {name: int(value) for name, value in
            re.findall(r"^\s*(MPIR_CVAR_\w+?)\s*=(-?\d+)\s", listing, flags=re.M)}


# §7.5
def mpich_allgather_choice(cvars, p, words):
    short = cvars["MPIR_CVAR_ALLGATHER_SHORT_MSG_SIZE"]
    long = cvars["MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE"]
    total = p * words * WORD_BYTES
    if total < long and p & (p - 1) == 0:
        return "recursive doubling"
    return "Bruck" if total < short else "ring"


@pytest.fixture(scope="module")
def cvars():
    return mpich_defaults()


def test_ring_allgather_under_mpi_matches_the_simulator_and_mpi():
    [ring] = launch(["run", "all_to_all_bc_ring", "--words", "4", "--payload", "list",
                     "--repeats", "1", "--warmup", "0"], np=4, timeout=60)
    assert ring["correct"] is True and ring["mpi_correct"] is True
    assert ring["mpi_collective"] == "MPI_Allgather"


def test_send_first_ring_deadlocks_under_mpi_only_for_long_messages(tmp_path):
    (tmp_path / "ch7_programs.py").write_text(SEND_FIRST)
    program = f"{tmp_path / 'ch7_programs.py'}:send_first_ring"
    launch(["run", program, "--param", "words=8", "--repeats", "1", "--warmup", "0"], np=4)
    with pytest.raises(MPIDeadlockError) as caught:
        launch(["run", program, "--param", "words=200000", "--timeout", "2",
                "--repeats", "1", "--warmup", "0"], np=4, timeout=60)
    blocked = caught.value.blocked
    assert sorted(blocked) == [0, 1, 2, 3]
    assert all(what.startswith(f"send(dst={(r + 1) % 4})") for r, what in blocked.items())


def test_send_first_ring_is_fine_full_duplex_and_deadlocks_half_duplex():
    namespace = {}
    exec(SEND_FIRST, namespace)
    program = namespace["send_first_ring"]
    assert simulate(program, 4, model=CostModel(ts=1, tw=0.001), words=200_000).time == 201
    with pytest.raises(DeadlockError):
        simulate(program, 4, model=CostModel(ts=1, tw=0.001, ports="half-duplex"), words=10)


def test_calibration_of_the_chapter(tmp_path):
    path = tmp_path / "machine.json"
    [calibration] = launch(["calibrate", "--output", path], np=2, timeout=120)
    machine = load_model(path)
    assert machine.ts > 0 and machine.tw >= 0
    assert calibration["sizes"][-1] * 8 == 2 ** 20
    assert calibration["sizes"][0] == 1 and len(calibration["seconds"]) == len(calibration["sizes"])


def test_broadcast_crossover_numbers_of_the_chapter():
    assert broadcast_crossover_factor(8, 8) == 11 / 1.25 == 8.8
    assert broadcast_crossover_factor(4, 8) == 8 / 0.75
    assert broadcast_crossover_factor(2, 8) == math.inf


@pytest.mark.parametrize("p, k", [(4, 8), (8, 8), (8, 4), (16, 16), (64, 32)])
@pytest.mark.parametrize("tw", [0.001, 0.01])
def test_broadcast_crossover_is_where_the_closed_forms_cross(p, k, tw):
    model = CostModel(ts=1.0, tw=tw)
    star = broadcast_crossover_factor(p, k) / tw
    below, above = int(star * 0.9) // k * k, int(star * 1.1) // k * k + k
    binom, pipe = entry("binomial_broadcast"), entry("linear_pipeline_broadcast")
    assert binom.predict(p, below, model) < pipe.predict(p, below, model, k=k)
    assert binom.predict(p, above, model) > pipe.predict(p, above, model, k=k)


def test_mpich_thresholds_of_the_chapter(cvars):
    assert cvars["MPIR_CVAR_BCAST_SHORT_MSG_SIZE"] == 12288 and cvars["MPIR_CVAR_BCAST_MIN_PROCS"] == 8
    assert cvars["MPIR_CVAR_ALLGATHER_SHORT_MSG_SIZE"] == 81920
    assert cvars["MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE"] == 524288
    assert cvars["MPIR_CVAR_ALLTOALL_SHORT_MSG_SIZE"] == 256
    assert cvars["MPIR_CVAR_ALLTOALL_MEDIUM_MSG_SIZE"] == 32768


def test_mpich_allgather_choices_of_the_chapter(cvars):
    assert mpich_allgather_choice(cvars, 8, 32768) == "ring"
    assert mpich_allgather_choice(cvars, 2, 16384) == "recursive doubling"
    assert mpich_allgather_choice(cvars, 2, 32768) == "ring"       # exactly the long threshold
    assert mpich_allgather_choice(cvars, 6, 16) == "Bruck"
    assert mpich_allgather_choice(cvars, 6, 4096) == "ring"


@pytest.mark.parametrize("p", [2, 4, 8, 16, 64])
@pytest.mark.parametrize("m", [1, 10, 1000, 10 ** 6])
@pytest.mark.parametrize("model", [CostModel(ts=100, tw=1), CostModel(ts=1, tw=1),
                                   CostModel(ts=1e-5, tw=1e-9)])
def test_recursive_doubling_never_loses_to_the_ring_on_paper(p, m, model):
    assert (entry("hypercube_allgather").predict(p, m, model)
            <= entry("all_to_all_bc_ring").predict(p, m, model))


@pytest.mark.parametrize("m", [1, 100, 10_000])
def test_but_the_ring_wins_on_a_ring_network(m):
    unit = CostModel(ts=100, tw=1)
    h = entry("hypercube_allgather").simulate(8, m, model=unit, network=Ring(8), trace=False)
    r = entry("all_to_all_bc_ring").simulate(8, m, model=unit, network=Ring(8), trace=False)
    assert r.time < h.time and r.time == entry("all_to_all_bc_ring").predict(8, m, unit)


def test_alltoall_crossover_numbers_of_the_chapter():
    assert alltoall_crossover_factor(4) == 1.0 and alltoall_crossover_factor(8) == 0.8
    assert alltoall_crossover_factor(2) == math.inf


@pytest.mark.parametrize("p", [4, 8, 16, 64])
def test_alltoall_crossover_is_where_the_closed_forms_cross(p):
    model = CostModel(1, 0.001)
    star = alltoall_crossover_factor(p) * 1000
    cyclic, hypercube = entry("alltoall_cyclic"), entry("alltoall_hypercube")
    below, above = int(star * 0.9), int(star * 1.1) + 1
    assert hypercube.predict(p, below, model) < cyclic.predict(p, below, model)
    assert hypercube.predict(p, above, model) > cyclic.predict(p, above, model)


JOBS = {"MPI_Bcast": (["binomial_broadcast", "linear_pipeline_broadcast"],
                      [256, 4096, 65536, 262144], ["--k", "8"]),
        "MPI_Allgather": (["all_to_all_bc_ring", "hypercube_allgather"], [16, 256, 4096, 32768], []),
        "MPI_Alltoall": (["alltoall_cyclic", "alltoall_hypercube"], [1, 16, 256, 4096], [])}


@pytest.mark.parametrize("collective", sorted(JOBS))
@pytest.mark.parametrize("p", [2, 4, 8])
def test_measured_algorithms_are_correct_under_mpi(collective, p):
    names, words, extra = JOBS[collective]
    records = launch(["run", *names, "--words", *map(str, words), "--repeats", "1",
                      "--warmup", "0", *extra], np=p, timeout=300)
    assert len(records) == len(names) * len(words)
    assert all(r["correct"] and r["mpi_correct"] for r in records)
    assert all(r["mpi_collective"] == collective for r in records)
