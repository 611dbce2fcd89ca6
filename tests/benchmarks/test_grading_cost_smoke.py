"""The grading-cost benchmark's round trip to a student's process runs (it had fallen behind
the Sandbox's signature and stopped with a TypeError before printing a figure)."""

import os

import pytest

BENCHMARK = "grading_cost"   # benchmarks/grading_cost.py, loaded by the bench fixture


def test_one_call_of_a_student_s_function_is_timed_on_each_cpu_placement(bench):
    rows = bench.round_trips(calls=50)
    assert rows[0][0] == "one call of a student's function, its process on the checker's CPU (us)"
    assert all(wall > 0 and cpu >= 0 for _, wall, cpu in rows)
    assert len(rows) in (1, 2)             # a second row where the checker may use another CPU


def test_a_student_process_s_start_is_timed_with_and_without_poisoning(bench):
    rows = bench.process_starts(starts=2)
    assert [what for what, _, _ in rows] == [
        "a student process's start, nothing forbidden (ms)",
        "a student process's start, the library's programs forbidden (ms)",
        "poisoning alone, looked up in the forked process (ms)",
        "poisoning alone, prepared before the fork (ms)"]
    assert all(wall > 0 for _, wall, _ in rows)


def test_a_replayed_lock_s_step_and_start_are_timed(bench):
    rows = bench.replay_steps(steps=50, history=10)
    assert [what for what, _, _ in rows] == [
        "one step of a student's lock replayed, its process on the checker's CPU (us)",
        "one start of its replay, a history of 10 steps, its process on the checker's CPU (us)"]
    assert all(wall > 0 and cpu >= 0 for _, wall, cpu in rows)


@pytest.mark.skipif(os.geteuid() != 0, reason="the checker's phases run in the sandbox (root)")
def test_the_checkers_phases_count_its_requests_and_the_processes_it_starts(bench):
    job = {"cells": [{"role": "student", "source": "def f(x):\n    return x\n", "id": "answer"},
                     {"role": "graded", "source": "assert f(2) == 2 and f(3) == 3\n",
                      "id": "t0"}],
           "hide": [], "uid": None, "limits": {}}
    rows = [what for what, _, _ in bench.phases(job)]
    assert "  t0: checks" in rows
    assert "requests: call 2" in rows and "requests: describe 1" in rows, rows
    assert rows[-1] == "student processes started: 1", rows
