"""The trusted checker, without nbgrader: stand-ins, the codec, the sandbox, the static checks.

A notebook is given to :func:`collective_lib.autograde.checker.check_notebook`
as cells with roles, as ``TrustedVerdict`` would give it, and the verdicts are
compared with what the student's code deserves. The student's cells run in
sandboxed processes (this suite runs as root, as the grader does).
"""

import inspect
import json
import os
import signal
import types
from pathlib import Path

import numpy as np
import pytest
from traitlets import TraitError
from traitlets.config import Config

from collective_lib import ops, sendrecv
from collective_lib.algorithms.alltoall import all_to_all_bc_ring
from collective_lib.autograde import sandbox
from collective_lib.autograde import student as student_side
from collective_lib.autograde.checker import TIME_SCALE, check_notebook
from collective_lib.autograde.codec import Undecodable, decode, encode
from collective_lib.autograde.remote import CELLS_S
from collective_lib.autograde.verdict import TrustedVerdict
from collective_lib.grading.static import (REVIEW_SIMILARITY, dynamic_lookups, similarity,
                                             used_names)
from messages import flat

ROOT = os.geteuid() == 0


def _job(student, *tests, trusted=()):
    cells = [{"role": "trusted", "source": s, "id": None} for s in trusted]
    cells += [{"role": "student", "source": student, "id": "answer"}]
    cells += [{"role": "graded", "source": s, "id": f"t{i}"} for i, s in enumerate(tests)]
    return {"cells": cells, "hide": [], "uid": 61500 if ROOT else None}


def _verdicts(student, *tests, trusted=(), **options):
    """The checker's verdicts; ``options`` are more entries of the job (``cell_timeout_s``)."""
    with sandbox.SandboxUser(61500, 8) if ROOT else _nothing() as user:
        job = {**_job(student, *tests, trusted=trusted), **options}
        if ROOT:
            job["uid"] = user.uid
        return check_notebook(job)


class _nothing:
    uid = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


RING = '''
from collective_lib import sendrecv
def ring_sum(me, p, data):
    total = data
    for _ in range(p - 1):
        data = yield sendrecv((me + 1) % p, data, (me - 1) % p)
        total += data
    return total
'''

BOARD = '''
from collective_lib import sendrecv
BOARD = {}
def ring_sum(me, p, data):
    BOARD[me] = data
    for _ in range(p - 1):
        yield sendrecv((me + 1) % p, 0, (me - 1) % p)
    return sum(BOARD.get(pe, 0) for pe in range(p))
'''

ISOLATION_TEST = '''
from collective_lib.grading import check_pe_isolation
def _inputs(p, rng):
    return [int(x) for x in rng.integers(0, 99, size=p)]
def _sums(inputs):
    return [sum(inputs)] * len(inputs)
check_pe_isolation(ring_sum, [3, 4], make_inputs=_inputs, expected=_sums, seed=5)
'''


@pytest.mark.parametrize("value", [
    None, True, 3, -2**70, 2.5, float("inf"), "text", [1, [2]], (1, "a"), {1, 2},
    frozenset({(0, 1)}), {"a": [1], (1, 2): None}, 1 + 2j,
    np.arange(6).reshape(2, 3), np.float32(1.5), sendrecv(1, [7], 2), ops.compute(3),
    range(5), range(10, -3, -4), [range(2 ** 70, 2 ** 70 + 3)], range(0, 2 ** 100, 2 ** 99),
])
def test_the_codec_gives_back_what_it_took(value):
    back = decode(encode(value))
    if isinstance(value, np.ndarray):
        assert back.dtype == value.dtype and np.array_equal(back, value)
    else:
        assert back == value and type(back) is type(value)


@pytest.mark.parametrize("value", [object(), np.array(["a"]), [1, {2: lambda: 3}], bytes(2)])
def test_the_codec_refuses_what_is_not_data(value):
    with pytest.raises(Undecodable):
        encode(value)


@pytest.mark.parametrize("value, data", [
    (range(100_001), {"$rg": [0, 100_001, 1]}),
    ([list(range(99_990)), range(20)], [list(range(99_990)), {"$rg": [0, 20, 1]}]),
    (range(2 ** 100), {"$rg": [0, {"$i": str(2 ** 100)}, 1]}),
])
def test_a_range_counts_the_numbers_it_holds_against_the_items_of_a_value(value, data):
    # a check may list a range: it may hold no more numbers than a list may
    for refused in (lambda: encode(value), lambda: decode(data)):
        with pytest.raises(Undecodable, match="more than 100,000 items"):
            refused()


@pytest.mark.parametrize("data", [{"$rg": [0, 1]}, {"$rg": [0, 1.5, 1]}, {"$rg": [True, 5, 1]},
                                  {"$rg": [0, 5, 0]}, {"$rg": "0:5"}])
def test_a_malformed_range_is_refused(data):
    with pytest.raises(Undecodable):
        decode(data)


@pytest.mark.parametrize("data", [{"$cb": 0}, {"$r": "os.system", "v": []}, {"$nd": ["O", [1], [1]]},
                                  {"unknown": 1}, {}])
def test_the_codec_refuses_malformed_messages(data):
    with pytest.raises(Undecodable):
        decode(data)


def test_a_right_program_passes_and_a_wrong_one_fails_with_its_message():
    test = ("from collective_lib import simulate\n"
            "assert simulate(ring_sum, 4, [1, 2, 3, 4]).results == [10] * 4, 'sums wrong'\n")
    right = _verdicts(RING, test)["t0"]
    assert right["passed"] and right["kind"] is None
    wrong = _verdicts(RING.replace("total += data", "total -= data"), test)["t0"]
    assert not wrong["passed"] and wrong["message"] == "sums wrong"
    assert wrong["kind"] == "other"             # a plain assert of the test cell


def test_pes_sharing_globals_are_caught_only_apart():
    assert _verdicts(RING, ISOLATION_TEST)["t0"]["passed"]
    board = _verdicts(BOARD, ISOLATION_TEST)["t0"]
    assert not board["passed"]
    assert "returned a value it never received" in board["message"]
    assert board["kind"] == "shared_state"      # the check's kind crosses in the verdict


ANDERSON = """
from collective_lib.shared_memory import fetch_add, pause, read, write
class ArrayLock:
    # Anderson's array lock: each PE takes a slot with fetch_add and polls a flag of its own
    def __init__(self, me, p):
        self.p, self.slot = p, None
    @staticmethod
    def memory(p):
        return {"tail": 0, **{f"flag{i}": int(i == 0) for i in range(p)}}
    def acquire(self):
        self.slot = (yield fetch_add("tail", 1)) % self.p
        while (yield read(f"flag{self.slot}")) == 0:
            yield pause(1)
        yield write(f"flag{self.slot}", 0)
    def release(self):
        yield write(f"flag{(self.slot + 1) % self.p}", 1)
"""


def test_a_correct_lock_whose_pes_poll_often_finishes_the_timed_runs():
    # a student audit: with p = 7 and 3 rounds it needs 7,118 operations, and each of them
    # crosses to a PE's own process; a fixed budget of 5,000 told it that some PEs wait
    # forever (broken_lock's timed cell, 0/2)
    test = ("from collective_lib.grading import check_lock_progress\n"
            "check_lock_progress(ArrayLock, [7], rounds=3, time_limit_s=60, "
            "exclusion=False)\n")
    verdict = _verdicts(ANDERSON, test)["t0"]
    assert verdict["passed"], verdict["message"]
    # one that never lets go is stopped at three times what a correct lock needs at most
    never = _verdicts(ANDERSON.replace('yield write(f"flag{(self.slot + 1) % self.p}", 1)',
                                       "yield pause(1)"), test.replace("[7]", "[2]"))["t0"]
    assert not never["passed"] and never["kind"] == "no_progress"
    assert "never finished: some PEs wait forever" in " ".join(never["message"].split())


class _InProcess:
    """A student process's side answered here (no sandbox): each request crosses as JSON, to
    the handler a student process runs, and every request is kept."""

    def __init__(self, namespace):
        self.server = student_side._Server(-1, -1, namespace, "")
        self.requests, self.killed = [], False

    def encode(self, value):
        return encode(value)

    def request(self, message):
        message = json.loads(json.dumps(message))
        self.requests.append(message)
        try:
            return json.loads(json.dumps(self.server.handle(message)))
        except Exception as err:                # as student._Server.answer sends it
            return student_side._error(err)

    def kill(self):
        self.killed = True


def _replayed_here(source, name):
    """A stand-in's replayer of the class ``name`` defined by ``source``, its student side
    answered in this process."""
    from collective_lib.autograde.remote import _RemoteReplayer
    namespace = {}
    exec(source, namespace)
    proc = _InProcess(namespace)
    standin = types.SimpleNamespace(path=[name], __name__=name, _target=lambda: proc,
                                    sandbox=types.SimpleNamespace(sync=lambda proc: None))
    return _RemoteReplayer(standin), proc


CAS_LOCK = "from collective_lib.algorithms.sync import cas_spin_lock as CasLock\n"


def test_a_replayed_locks_steps_name_its_object_by_a_handle_and_decide_as_in_process():
    # a search asks some 40,000 steps of a student's lock: each sent its class's path and
    # arguments again, and the student's side looked both up again
    from collective_lib.algorithms.sync import lock_demo
    from collective_lib.shared_memory import (RecordedLock, explore_interleavings,
                                              mutual_exclusion)
    replayer, proc = _replayed_here(CAS_LOCK, "CasLock")
    namespace = {}
    exec(CAS_LOCK, namespace)
    here, there = RecordedLock(namespace["CasLock"]), RecordedLock(namespace["CasLock"],
                                                                   replayer)
    stats_here, stats_there = {}, {}
    for recorded, stats in ((here, stats_here), (there, stats_there)):
        assert explore_interleavings(lock_demo, 2, mutual_exclusion, lock=recorded,
                                     rounds=2, max_steps=12, stats=stats) is None
    assert stats_here == stats_there and here.asked == there.asked
    steps = [r for r in proc.requests if r["kind"] == "replay_step"]
    starts = [r for r in proc.requests if r["kind"] == "replay"]
    assert steps and starts and len(steps) + len(starts) == there.asked
    assert all(set(r) == {"kind", "replay", "step"} for r in steps)
    # one object per PE in the student's process: a new start drops the one it replaces
    assert len(proc.server.replays) == 2


def test_an_unknown_replay_is_refused_on_either_side_and_a_forged_handle_stops_the_process():
    replayer, proc = _replayed_here(CAS_LOCK, "CasLock")
    with pytest.raises(RuntimeError, match=r"no replay of CasLock\(0, 2\) was started"):
        replayer.step((0, 2), ("send", True))
    assert not proc.requests                    # refused before anything was sent
    with pytest.raises(ValueError, match="no lock replay 7 was started in this process"):
        proc.server.handle({"kind": "replay_step", "replay": 7, "step": ["send", True]})
    assert replayer.start((0, 2), [("call", "acquire")])[0] == "op"
    # a reply whose handle is no int (the student's code wrote it) stops the process
    forged, proc = _replayed_here(CAS_LOCK, "CasLock")
    proc.server.replay = lambda request: {"replay": "0", "event": "op", "value": None}
    with pytest.raises(RuntimeError, match="not its answer"):
        forged.start((0, 2), [("call", "acquire")])
    assert proc.killed


def test_a_program_that_ends_or_fails_at_its_first_step_is_graded_like_any_other():
    # the first step comes back with the call itself (one exchange saved per PE)
    early = ("from collective_lib import sendrecv\n"
             "def ring_sum(me, p, data):\n"
             "    if me == 1:\n"
             "        raise KeyError('no partner')\n"
             "    if p == 1:\n"
             "        return data\n"
             "    yield sendrecv((me + 1) % p, data, (me - 1) % p)\n")
    test = ("from collective_lib import simulate\n"
            "assert simulate(ring_sum, 1, [7]).results == [7]\n"
            "try:\n"
            "    simulate(ring_sum, 3, [1, 2, 3])\n"
            "except KeyError as err:\n"
            "    assert 'no partner' in str(err), err\n"
            "else:\n"
            "    raise AssertionError('no error')\n")
    assert _verdicts(early, test)["t0"]["passed"]
    apart = _verdicts(early, ISOLATION_TEST)["t0"]
    assert not apart["passed"] and "KeyError" in apart["message"], apart["message"]


def test_the_checker_and_the_students_processes_share_one_cpu():
    from collective_lib.autograde.verdict import notebook_cpu
    allowed = sorted(os.sched_getaffinity(0))
    assert [notebook_cpu(slot) for slot in range(2 * len(allowed))] == allowed * 2
    assert notebook_cpu(None) in allowed
    student = "import os\ndef where():\n    return sorted(os.sched_getaffinity(0))\n"
    cpu = allowed[-1]
    test = (f"import os\nassert sorted(os.sched_getaffinity(0)) == [{cpu}]\n"
            f"assert where() == [{cpu}], where()\n")
    try:                        # the checker, run here, keeps this process to that CPU
        verdict = _verdicts(student, test, cpu=cpu)["t0"]
    finally:
        os.sched_setaffinity(0, allowed)
    assert verdict["passed"], verdict["message"]


def test_tampering_with_the_student_side_changes_no_verdict():
    tamper = ("import collective_lib.grading as g\n"
              "g.check_pe_isolation = lambda *a, **k: None\n"
              "get_ipython().input_transformers_cleanup.append(lambda lines: ['pass\\n'])\n")
    board = _verdicts(tamper + BOARD, ISOLATION_TEST)["t0"]
    assert not board["passed"]


def test_a_checker_callable_is_called_back_and_a_later_part_can_replace_a_student_name():
    student = "def double(x):\n    return 2 * x\ndef quadruple(x):\n    return double(double(x))\n"
    test = ("assert quadruple(3) == 12\n"
            "double = lambda x: x + 100\n"                 # graded against a reference part
            "assert quadruple(3) == 203, quadruple(3)\n")
    assert _verdicts(student, test)["t0"]["passed"]


def test_missing_names_and_crashing_cells_are_explained():
    verdict = _verdicts("x = 1 / 0\ndef f():\n    return 1\n", "assert g() == 1")["t0"]
    assert not verdict["passed"]
    assert "g is not defined" in verdict["message"]
    assert "ZeroDivisionError" in verdict["message"]
    assert verdict["kind"] == "missing_name"


def test_ipython_syntax_in_the_students_cells_runs_in_every_process_of_theirs():
    # the host transforms the cells' %magic lines once for all the processes it forks
    # (student._transform_once); each process still runs them, and a cell IPython cannot
    # run fails there as before
    job = _job("%time x = 6 * 7\ndef answer():\n    return x\n",
               "assert answer() == 42, answer()", "assert y == 43, y")
    job["cells"].insert(2, {"role": "student", "id": "more",
                            "source": "%%capture captured\nprint('hidden')\ny = x + 1\n"})
    with sandbox.SandboxUser(61500, 8) if ROOT else _nothing() as user:
        if ROOT:
            job["uid"] = user.uid
        verdicts = check_notebook(job)
    assert verdicts["t0"]["passed"] and verdicts["t1"]["passed"], verdicts
    broken = _verdicts("%%nosuchmagic\nz = 1\n", "assert z == 1")["t0"]
    assert not broken["passed"] and "z is not defined" in broken["message"], broken


def test_the_host_transforms_an_honest_notebooks_cells_once_and_a_huge_ones_never():
    seen = []

    def transform(cell):
        seen.append(cell)
        return cell.upper()

    def shell_with(cells):
        shell = types.SimpleNamespace(
            input_transformer_manager=types.SimpleNamespace(transform_cell=transform))
        student_side._transform_once(shell, cells)
        return shell.input_transformer_manager.transform_cell

    forked = shell_with(["a = 1", "%time b = 2"])
    assert seen == ["a = 1", "%time b = 2"]
    assert [forked("a = 1"), forked("%time b = 2"), forked("c")] == ["A = 1", "%TIME B = 2", "C"]
    assert seen[2:] == ["c"]                             # only a cell it had not seen
    seen.clear()
    huge = ["x = 1\n" * (student_side._TRANSFORMED_HERE_BYTES // 6 + 1)]
    assert shell_with(huge) is transform and seen == []  # left to the forked processes


def test_a_module_a_test_cell_imports_is_bound_below_it_as_in_the_notebook():
    # a test cell's visible imports run in the notebook before its checks call the
    # student's functions, which may use them without importing them (B-F3, twelfth round)
    student = ("def up(x):\n    return math.ceil(x) + len(functools.__name__)\n"
               "def middle(values):\n    return statistics.median(values)\n")
    verdicts = _verdicts(
        student,
        "import no_such_module_anywhere\n",        # fails here, and is nobody's error there
        "import math\nimport functools as functools\nassert up(2.5) == 12, up(2.5)\n",
        "### BEGIN HIDDEN TESTS\nimport statistics\n### END HIDDEN TESTS\n"
        "assert middle([1, 5, 2]) == 2\n",
        "assert g() == 1\n")
    assert [verdicts[t]["passed"] for t in ("t0", "t1", "t2", "t3")] == [
        False, True, False, False]
    # the release has no hidden tests, so the notebook never imported statistics
    assert "name 'statistics' is not defined" in verdicts["t2"]["message"]
    assert "your cells raised" not in verdicts["t3"]["message"]


TABLE_TEST = ("from collective_lib.grading import CheckFailed\n"
              "if not isinstance(sends, dict):\n"
              "    raise CheckFailed('sends must be a dict', kind='wrong_form')\n")


def test_a_value_the_cell_reads_that_cannot_cross_fails_with_the_codecs_reason():
    # a table holding bytes: before, a stand-in that is no dict, "sends must be a dict"
    verdict = _verdicts("sends = {1: bytes(3)}\n", TABLE_TEST)["t0"]
    assert not verdict["passed"] and verdict["kind"] == "wrong_form"
    assert verdict["message"] == ("sends: values of type bytes cannot be graded:\n"
                                  "use numbers, strings, lists, tuples, sets, dicts or numpy "
                                  "arrays")


def test_a_value_that_cannot_cross_fails_no_cell_that_only_shadows_its_name():
    student = "import random\nrng = random.Random(5)\nsends = {1: [2]}\np = iter([1])\n"
    shadowing = ("def _inputs(p, rng):\n    return [rng.random() for _ in range(p)]\n"
                 "assert len(_inputs(3, __import__('random').Random(1))) == 3\n"
                 "p = 4\nassert p == 4 and sends == {1: [2]}\n")
    verdicts = _verdicts(student, shadowing, TABLE_TEST)
    assert verdicts["t0"]["passed"], verdicts["t0"]["message"]
    assert verdicts["t1"]["passed"], verdicts["t1"]["message"]


def test_a_table_of_a_subclass_of_dict_is_graded_as_the_dict():
    student = ("from collections import defaultdict\nsends = defaultdict(list)\n"
               "for step in (1, 2):\n    sends[step].append(f'x{step}')\n")
    verdict = _verdicts(student, TABLE_TEST + "assert sends == {1: ['x1'], 2: ['x2']}\n")["t0"]
    assert verdict["passed"], verdict["message"]


def test_a_cell_that_raises_a_base_exception_fails_alone():
    # SystemExit (or an interruption a guard let escape) ends its cell, never the checker:
    # the cells after it are graded all the same
    verdicts = _verdicts("x = 1\n", "import sys\nsys.exit(3)\n", "raise KeyboardInterrupt\n",
                         "assert x == 1\n")
    assert [verdicts[t]["passed"] for t in ("t0", "t1", "t2")] == [False, False, True]
    assert verdicts["t0"]["message"] == "SystemExit: 3"
    assert verdicts["t1"]["message"].startswith("KeyboardInterrupt")


def test_the_hosts_folder_is_made_in_the_jobs_scratch_and_removed(tmp_path):
    # TrustedVerdict's folder for the checker: should the checker be killed, the host's
    # folder goes with it (a killed checker left one in /tmp each time)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    made = ("import os\nassert x == 1\n"          # the host is up once x was asked of it
            "assert [n for n in os.listdir(SCRATCH) if n.startswith('collective-host-')]\n")
    verdicts = _verdicts("x = 1\n", made, trusted=[f"SCRATCH = {str(scratch)!r}\n"],
                         scratch=str(scratch))
    assert verdicts["t0"]["passed"], verdicts["t0"]
    assert list(scratch.iterdir()) == []


def test_a_guard_a_cell_leaves_armed_never_interrupts_the_next_cell():
    stale = ("from collective_lib.grading import wall_clock_limit\n"
             "wall_clock_limit(0.2, 'stale').__enter__()\n")
    verdicts = _verdicts("x = 1\n", stale, "import time\ntime.sleep(0.6)\nassert x == 1\n")
    assert verdicts["t1"]["passed"], verdicts["t1"]


def test_forbidden_names_are_found_in_the_source_and_copies_are_flagged():
    source = inspect.getsource(all_to_all_bc_ring).replace("all_to_all_bc_ring", "mine")
    source = "from collective_lib import sendrecv\n" + source[source.index("def mine"):]
    test = ("from collective_lib.grading import forbid_library_calls\n"
            "forbid_library_calls(mine, ['catalog'])\n")
    verdict = _verdicts(source, test)["t0"]
    assert verdict["passed"]
    assert any("similar to the library's all_to_all_bc_ring" in f for f in verdict["flags"])
    calls = "from collective_lib import catalog\ndef mine(me, p, data):\n    return catalog()\n"
    verdict = _verdicts(calls, test)["t0"]
    assert "uses the library's `catalog`" in flat(verdict["message"])
    assert verdict["kind"] == "uses_library"


def test_an_endless_function_is_stopped_by_the_grading_time_limit():
    student = "def f(x):\n    while True:\n        pass\n"
    test = ("from collective_lib.grading import guarded_call\n"
            "guarded_call(f, 1, time_limit_s=1)\n")
    verdict = _verdicts(student, test)["t0"]
    assert not verdict["passed"] and "did not return within" in verdict["message"]
    assert verdict["kind"] == "time_limit"


@pytest.mark.parametrize("options, seconds", [({}, 3.0), ({"time_scale": 0.3}, 0.6)])
def test_the_checks_budgets_are_scaled_by_the_job(options, seconds):
    # the course's factor (TrustedVerdict.time_scale, by default checker.TIME_SCALE = 1.5)
    test = ("from collective_lib.grading import wall_clock_limit\n"
            f"assert wall_clock_limit(2).seconds == {seconds!r}, wall_clock_limit(2).seconds\n")
    verdict = _verdicts("x = 1\n", test, **options)["t0"]
    assert verdict["passed"], verdict


def test_cells_that_never_finish_are_stopped_at_the_scaled_budget_for_them():
    # CELLS_S = 20 s for the student's cells in each new process, times the course's factor
    verdict = _verdicts("x = 1\nwhile True:\n    pass\n", "assert x == 1\n",
                        time_scale=0.05)["t0"]
    assert not verdict["passed"]
    assert f"your cells did not finish running within {CELLS_S * 0.05:g} s" in verdict["message"]


def test_the_course_sets_the_scale_and_refuses_one_that_is_not_positive():
    assert TrustedVerdict().time_scale == TIME_SCALE == 1.5
    assert TrustedVerdict(time_scale=0.3).time_scale == 0.3
    for bad in (0, -1.5):
        with pytest.raises(TraitError, match=f"time_scale must be positive, got {float(bad)!r}"):
            TrustedVerdict(time_scale=bad)
    # what the course's configuration, the README and SANDBOX.md say of it
    repo = Path(__file__).resolve().parents[2]

    def text(path):
        return " ".join((repo / path).read_text().split())
    config = (repo / "exercises" / "nbgrader_config.py").read_text()
    assert f"c.TrustedVerdict.time_scale = {TIME_SCALE}\n" in config
    assert f"and {CELLS_S:g} s for the student's\n" in config
    assert f"whose default is {TIME_SCALE} times each check's budget" in text("README.md")
    sandbox_md = text("exercises/SANDBOX.md")
    assert f"`c.TrustedVerdict.time_scale`, {TIME_SCALE} unless the course sets it" in sandbox_md
    assert f"the student's cells {CELLS_S:g} s times it" in sandbox_md


def test_the_exchange_is_hidden_where_nbgrader_finds_it(tmp_path):
    # It was hidden at /srv/nbgrader/exchange only, whatever c.Exchange.root said: a
    # submission copied a classmate's answer out of the exchange the README sets up.
    course, exchange, other = tmp_path / "course", tmp_path / "exchange", tmp_path / "other"
    for folder in (course, exchange, other):
        folder.mkdir()
    info = {"db_url": f"sqlite:///{course / 'gradebook.db'}"}
    config = Config()
    config.Exchange.root = str(exchange)
    assert str(exchange) in TrustedVerdict(config=config)._hidden(info)
    assert {str(exchange), str(other)} <= set(
        TrustedVerdict(config=config, exchange_root=str(other))._hidden(info))


def test_an_endless_function_is_stopped_by_the_cell_deadline_even_with_sigint_ignored():
    # a checker started from a Jupyter kernel inherits SIGINT ignored: the cell's
    # deadline must still break the wait for the student's answer (whose own limit
    # is 120 s and would give another message)
    student = "def f(x):\n    while True:\n        pass\n"
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        verdicts = _verdicts(student, "f(1)\n", "assert 1 + 1 == 2\n", cell_timeout_s=1)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert not verdicts["t0"]["passed"]
    assert "took longer than 1 s and were stopped" in verdicts["t0"]["message"]
    assert verdicts["t0"]["kind"] == "time_limit"
    assert verdicts["t1"]["passed"], verdicts["t1"]     # the next cell is graded as usual


def test_used_names_follow_the_students_helpers_and_strings():
    cells = ["def helper():\n    return getattr(lib, 'binomial_broadcast')\n",
             "def mine(me, p, data):\n    return helper()\n"]
    assert {"helper", "binomial_broadcast", "lib"} <= used_names(cells, "mine")
    assert "mine" not in used_names(cells, "helper")


def test_used_names_read_a_name_imported_under_another_as_its_own():
    cells = ["from collective_lib.shared_memory import explore_interleavings as ei",
             "import numpy as np",
             "found = ei(lock_demo, 2)", "mine = found.schedule"]
    used = used_names(cells, "mine")
    assert {"ei", "explore_interleavings", "found"} <= used
    assert "numpy" not in used and "np" not in used       # imported, but not reached


def test_dynamic_lookups_are_listed_for_review():
    found = dynamic_lookups(["import importlib\nf = getattr(m, 'a' + 'b')\ng = getattr(m, 'x')\n"])
    assert found == ["getattr with a computed name (line 2)", "import importlib (line 1)"]


def test_similarity_separates_renamed_copies_from_own_work():
    library = inspect.getsource(all_to_all_bc_ring)
    renamed = (library.replace("all_to_all_bc_ring", "my_ring").replace("result", "out")
               .replace("me", "rank"))
    own = RING
    assert similarity(library, renamed) >= REVIEW_SIMILARITY
    assert similarity(library, own) < REVIEW_SIMILARITY


@pytest.mark.skipif(not ROOT, reason="the sandbox needs root")
def test_the_sandbox_hides_the_course_and_drops_privileges(tmp_path):
    secret = tmp_path / "course"
    secret.mkdir()
    (secret / "hidden.txt").write_text("secret")
    student = ("import os\n"
               "def look():\n"
               f"    return [os.getuid(), os.listdir({str(secret)!r}) if os.path.isdir({str(secret)!r}) else None]\n")
    job = {"cells": [{"role": "student", "source": student, "id": "a"},
                     {"role": "graded", "source": "result = look()\nassert result[0] != 0, result\n"
                      "assert not result[1], result", "id": "t"}],
           "hide": [str(secret)]}
    with sandbox.SandboxUser(61500, 8) as user:
        job["uid"] = user.uid
        verdict = check_notebook(job)["t"]
    assert verdict["passed"], verdict["message"]


def test_the_sandbox_says_why_it_cannot_work(monkeypatch):
    monkeypatch.setattr(sandbox.os, "geteuid", lambda: 1000)
    assert sandbox.self_check() == [
        "the grader does not run as root, so it can neither switch a submission to an "
        "unprivileged uid nor hide the course from it"]


def test_sandbox_users_side_by_side_never_share_a_uid():
    with sandbox.SandboxUser(61550, 2) as first, sandbox.SandboxUser(61550, 2) as second:
        assert {first.uid, second.uid} == {61550, 61551}
        with pytest.raises(RuntimeError, match="all 2 sandbox uids from 61550 are in use"):
            with sandbox.SandboxUser(61550, 2):
                pass
