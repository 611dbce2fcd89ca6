"""The grading-cost benchmark's round trip to a student's process runs (it had fallen behind
the Sandbox's signature and stopped with a TypeError before printing a figure)."""

BENCHMARK = "grading_cost"   # benchmarks/grading_cost.py, loaded by the bench fixture


def test_one_call_of_a_student_s_function_is_timed_on_each_cpu_placement(bench):
    rows = bench.round_trips(calls=50)
    assert rows[0][0] == "one call of a student's function, its process on the checker's CPU (us)"
    assert all(wall > 0 and cpu >= 0 for _, wall, cpu in rows)
    assert len(rows) in (1, 2)             # a second row where the checker may use another CPU
