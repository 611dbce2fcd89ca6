"""Chapter 7's claims about running the catalog under real MPI (book/ch7_real_mpi).

The MPI jobs are started with the launcher, as in the chapter; the closed-form
crossovers of §7.4-7.6 are checked against the catalog without MPI.
"""
import ast
import importlib
import inspect
import json
import math
import pkgutil
import re
import subprocess
import time
from pathlib import Path

import pytest

import collective_lib.algorithms
from collective_lib import CostModel, Ring, catalog, simulate
from collective_lib.errors import DeadlockError
from collective_lib.mpi import MPIDeadlockError, find_mpiexec, launch, load_model
from collective_lib.mpi.thresholds import mpich_choice, mpich_cvars

#: Every "always", "never", "exactly", "at most" ... of chapter 7's prose, and the test that
#: checks it (tests/notebooks/test_prose_claims.py).
PROSE_CLAIMS = {
    "and friends and never looks at a clock": "test_the_programs_never_look_at_a_clock",
    "for $p = 2$ it never does": "test_the_pipeline_never_wins_on_two_pes",
    "which is exactly what a calibration like ours is for":
        "no claim: says what a calibration is for, a remark the library cannot contradict",
    "on a {term}`fully connected` machine it is never slower":
        "test_recursive_doubling_never_loses_to_the_ring_on_paper",
    "or the message has at most 12,288 bytes": "test_mpich_bcast_rules_of_the_chapter",
    "when each destination's message is at most":
        "test_mpich_alltoall_goes_indirect_for_short_messages_on_8_or_more_processes",
    "and there are at least 8 processes":
        "test_mpich_alltoall_goes_indirect_for_short_messages_on_8_or_more_processes",
    "On a fully connected model recursive doubling never loses to the ring":
        "test_recursive_doubling_never_loses_to_the_ring_on_paper",
}

# §7.2: the program the chapter writes to a file so that the MPI ranks can import it.
SEND_FIRST = '''
import numpy as np
from collective_lib import recv, send

def send_first_ring(me, p, data, words=1):
    yield send((me + 1) % p, np.zeros(words))   # everybody talks first ...
    return (yield recv((me - 1) % p))            # ... then listens
'''


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


# §7.5: the rules by which the installed MPICH picks an algorithm, as its library embeds them
def mpich_selection_rules():
    lib = Path(find_mpiexec()).parent.parent / "lib"
    for path in sorted(lib.glob("libmpi.so*")) + sorted(lib.glob("libmpi.*.dylib")):
        data, start = path.read_bytes(), 0
        while (start := data.find(b'{"collective=', start)) >= 0:
            end = data.index(b"\0", start)
            rules = json.loads(data[start:end])
            if "MPIR_Alltoall_intra_brucks" in json.dumps(rules):
                return rules
            start = end
    raise AssertionError(f"no collective selection rules found in the MPI library in {lib}")


@pytest.fixture(scope="module")
def cvars():
    return mpich_cvars()


CLOCKS = ("time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns",
          "process_time", "process_time_ns", "thread_time", "sleep")


def test_the_programs_never_look_at_a_clock(monkeypatch):
    """No algorithm module imports a clock, and every catalog program runs correctly with
    every clock of ``time`` taken away: its results and times come from the operations."""
    package = collective_lib.algorithms
    for info in pkgutil.iter_modules(package.__path__):
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        tree = ast.parse(inspect.getsource(module))
        imported = {alias.name.split(".")[0] for node in ast.walk(tree)
                    if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module.split(".")[0] for node in ast.walk(tree)
                     if isinstance(node, ast.ImportFrom) and node.module}
        assert not imported & {"time", "datetime"}, info.name

    def no_clock(*args, **kwargs):
        raise AssertionError("a program looked at the clock")

    for name in CLOCKS:
        monkeypatch.setattr(time, name, no_clock)
    for name, algorithm in catalog().items():
        p = next(q for q in (8, 9, 6, 4, 2, 1) if algorithm.valid(q) and algorithm.accepts(q, 8))
        inputs = algorithm.make_inputs(p, 8, seed=p)
        run = algorithm.simulate(p, 8, inputs=inputs, trace=False)
        assert run.results == algorithm.expected(inputs), name


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


@pytest.mark.parametrize("k", [1, 2, 3, 8, 16])
def test_the_pipeline_never_wins_on_two_pes(k):
    """§7.3: for p = 2 the crossover's denominator is 0 for every k, and the pipeline's
    closed form and simulated time are never below the binomial tree's."""
    assert broadcast_crossover_factor(2, k) == math.inf
    binom, pipe = entry("binomial_broadcast"), entry("linear_pipeline_broadcast")
    for model in (CostModel(ts=1, tw=0.001), CostModel(ts=1e-5, tw=1e-9), CostModel(ts=0, tw=1)):
        for m in (k, 3 * k + 1, 1000, 2 ** 20):
            assert pipe.predict(2, m, model, k=k) >= binom.predict(2, m, model)
        for m in (k, 3 * k + 1):
            assert (pipe.simulate(2, m, model=model, k=k, trace=False).time
                    >= binom.simulate(2, m, model=model, trace=False).time)


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


def test_mpich_bcast_rules_of_the_chapter(cvars):
    """MPI_Bcast: the binomial tree on fewer than 8 processes or for at most 12288 bytes, in
    the rules built into the installed MPICH, whose numbers are the variables' defaults."""
    rules = mpich_selection_rules()["collective=bcast"]["comm_type=intra"]
    assert set(rules) == {"comm_size<8", "comm_size=pow2", "comm_size=any"}
    binomial = {"algorithm=MPIR_Bcast_intra_binomial": {}}
    assert rules["comm_size<8"]["comm_hierarchy=any"] == {"avg_msg_size=any": binomial}
    assert cvars["MPIR_CVAR_BCAST_MIN_PROCS"] == 8
    for size in ("comm_size=pow2", "comm_size=any"):
        first, choice = next(iter(rules[size]["comm_hierarchy=any"].items()))
        assert (first, choice) == (f"avg_msg_size<={cvars['MPIR_CVAR_BCAST_SHORT_MSG_SIZE']}",
                                   binomial)
    assert cvars["MPIR_CVAR_BCAST_SHORT_MSG_SIZE"] == 12288


def test_mpich_alltoall_goes_indirect_for_short_messages_on_8_or_more_processes(cvars):
    """MPI_Alltoall: Bruck's algorithm when each destination's message is at most
    MPIR_CVAR_ALLTOALL_SHORT_MSG_SIZE bytes and there are at least 8 processes; all sends and
    receives at once up to the medium size; pairwise exchange beyond."""
    short = cvars["MPIR_CVAR_ALLTOALL_SHORT_MSG_SIZE"]
    medium = cvars["MPIR_CVAR_ALLTOALL_MEDIUM_MSG_SIZE"]
    listing = subprocess.run([str(Path(find_mpiexec()).with_name("mpivars"))],
                             capture_output=True, text=True, timeout=60).stdout
    [described] = re.findall(r"^\s*MPIR_CVAR_ALLTOALL_SHORT_MSG_SIZE\s*=.*$", listing, re.M)
    assert "per-destination message size" in described and "is <= this value" in described
    rules = mpich_selection_rules()["collective=alltoall"]["comm_type=intra"]
    by_size = rules["is_sendbuf_inplace=no"]
    assert list(by_size) == ["comm_size<8", "comm_size=any"]
    assert "brucks" not in json.dumps(by_size["comm_size<8"])
    assert by_size["comm_size=any"] == {
        f"avg_msg_size<={short}": {"algorithm=MPIR_Alltoall_intra_brucks": {}},
        f"avg_msg_size<={medium}": {"algorithm=MPIR_Alltoall_intra_scattered": {}},
        "avg_msg_size=any": {"algorithm=MPIR_Alltoall_intra_pairwise": {}}}
    assert (short, medium) == (256, 32768)


def test_mpich_allgather_choices_of_the_chapter(cvars):
    assert mpich_choice("allgather", 8, 32768, cvars) == "ring"
    assert mpich_choice("allgather", 2, 16384, cvars) == "recursive doubling"
    assert mpich_choice("allgather", 2, 32768, cvars) == "ring"       # exactly the long threshold
    assert mpich_choice("allgather", 6, 16, cvars) == "Bruck"
    assert mpich_choice("allgather", 6, 4096, cvars) == "ring"


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
