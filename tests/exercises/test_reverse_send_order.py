"""nbgrader round trip of every exercise: release, then autograde good and bad submissions.

For each assignment the source notebook is released with ``nbgrader
generate_assignment`` (the release must hide solutions and hidden tests), and
a set of submissions is autograded in one ``nbgrader autograde`` run: the
instructor's solution (full marks on every autograded cell), wrong programs
(partial marks, with the helpful message in the failing cell's output), and
crashing, deadlocking and endless ones (low marks, and grading still finishes
quickly because the exercises' guards stop them).
"""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

import nbgrader_harness as h

REPO_ROOT = Path(__file__).resolve().parents[2]
SOURCE = REPO_ROOT / "exercises" / "source"

# -- metadata ---------------------------------------------------------------------------

NOTEBOOKS = sorted(SOURCE.glob("*/*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_source_notebook_has_proper_nbgrader_metadata(path):
    from nbgrader.nbgraderformat import MetadataValidator

    nb = nbformat.read(path, as_version=4)
    MetadataValidator().validate_nb(nb)
    assert nb.metadata.kernelspec.name == "python3"
    assert path.stem == path.parent.name
    ids = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader")
        assert meta is not None, f"cell without nbgrader metadata: {cell.source[:60]!r}"
        assert meta["schema_version"] == 3
        assert set(meta) >= {"grade", "grade_id", "locked", "schema_version", "solution", "task"}
        ids.append(meta["grade_id"])
        if meta["grade"]:
            assert meta["points"] > 0
        if meta["solution"] and cell.cell_type == "code":
            assert "### BEGIN SOLUTION" in cell.source and not meta["locked"]
        if "BEGIN HIDDEN TESTS" in cell.source:
            assert meta["grade"] and meta["locked"] and not meta["solution"]
    assert len(ids) == len(set(ids)), "grade_ids must be unique"


# -- reverse_send_order (Sanders, Exercise 13.1) -------------------------------------------

RSO = "reverse_send_order"
RSO_SOLUTION_CELL = "smallest_first_solution"

LARGEST_FIRST = '''
rel = (me - root) % p
span = 1
if rel == 0:
    while span < p:
        span *= 2
else:
    span = rel & -rel
    data = yield recv((rel - span + root) % p)
step = span // 2
while step >= 1:                      # the library's order: farthest child first
    if rel + step < p:
        yield send((rel + step + root) % p, data)
    step //= 2
return data
'''

CALLS_THE_LIBRARY = '''
from collective_lib.algorithms.broadcast import binomial_broadcast
return (yield from binomial_broadcast(me, p, data, root, children_order="smallest-first"))
'''

CRASHES = '''
rel = (me - root) % p
children = [rel + 2 ** j for j in range(p)]
return children[p] / 0
yield
'''

DEADLOCKS = '''
data = yield recv((me + 1) % p)       # everybody waits for the right neighbour
yield send((me - 1) % p, data)
return data
'''

SPINS = '''
while True:                           # never yields, never returns
    pass
yield
'''

YIELDS_FOREVER = '''
from collective_lib import compute
while True:
    yield compute(0)
'''


def grade_rso(workdir: Path):
    def submissions(source):
        def bad(code):
            return h.replace_solution(source, RSO_SOLUTION_CELL, code)

        return {
            "solution": source,
            "largest_first": bad(LARGEST_FIRST),
            "calls_library": bad(CALLS_THE_LIBRARY),
            "crashes": bad(CRASHES),
            "deadlocks": bad(DEADLOCKS),
            "spins": bad(SPINS),
            "yields_forever": bad(YIELDS_FOREVER),
        }

    return h.release_and_grade(workdir / "course", RSO, submissions, grade=h.grade_all)


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Release and grade both assignments, side by side (nbgrader runs in subprocesses)."""
    jobs = {"rso": grade_rso, "pipe": grade_pipe}
    return h.grade_side_by_side(jobs, tmp_path_factory)


@pytest.fixture(scope="module")
def rso(graded):
    return graded["rso"]


@pytest.fixture(scope="module")
def pipe(graded):
    return graded["pipe"]


def test_rso_release_hides_solution_and_hidden_tests(rso):
    course, _, _ = rso
    text = h.released_text(course, RSO)
    for secret in ["BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS",
                   "rel & -rel", "span *= 2", "step *= 2", "(rel + step + root) % p",
                   "reversed(", "[::-1]", "children_order", "d * (d + 1)", "d(d+1)",
                   "largest_first = catalog", "0.45 * math.log2", "range(1, 41)",
                   "The root has $d$ children"]:
        assert secret not in text, f"the release gives away {secret!r}"
    assert "def binomial_broadcast_smallest_first(me, p, data, root=0):" in text
    assert "raise NotImplementedError()" in text
    assert "YOUR ANSWER HERE" in text
    # the visible sanity checks stay
    assert "check_broadcast_program(binomial_broadcast_smallest_first, [8]" in text


def test_rso_solution_gets_full_marks(rso):
    _, results, _ = rso
    result = results["solution"]
    assert set(h.autograded_ids(result)) == {"correctness_tests", "time_tests"}
    h.assert_full_marks(result)
    assert result.max_scores["explain_log_squared"] == 3      # graded by hand


def test_rso_largest_first_gets_partial_marks(rso):
    _, results, _ = rso
    result = results["largest_first"]
    assert result.scores["correctness_tests"] == 4
    assert result.scores["time_tests"] == 0
    assert "smallest-first broadcast should take 6 steps, yours took 3" in result.messages("time_tests")


def test_rso_calling_the_library_gets_no_credit(rso):
    _, results, _ = rso
    result = results["calls_library"]
    assert result.scores["correctness_tests"] == 0 and result.scores["time_tests"] == 0
    assert "uses the library's `binomial_broadcast`" in result.messages("correctness_tests")


@pytest.mark.parametrize("student, cell, message", [
    ("crashes", "correctness_tests", "raised IndexError: list index out of range"),
    ("crashes", "time_tests", "`return children[p] / 0`"),
    ("deadlocks", "correctness_tests", "deadlock in binomial_broadcast_smallest_first for p=8"),
    ("deadlocks", "correctness_tests", "PE 3 waits in recv(src=4)"),
    ("spins", "correctness_tests", "did not finish within 5 s of real time"),
    ("spins", "time_tests", "never yields an operation"),
    ("yields_forever", "correctness_tests", "keeps yielding operations"),
])
def test_rso_bad_submissions_get_zero_with_a_helpful_message(rso, student, cell, message):
    _, results, _ = rso
    result = results[student]
    assert result.scores["correctness_tests"] == 0 and result.scores["time_tests"] == 0
    assert message in result.messages(cell)


def test_rso_grading_is_quick(rso):
    _, _, seconds = rso
    assert seconds < 120, f"autograding 7 submissions took {seconds:.0f} s"


# -- pipelining_theorem_13_3 -----------------------------------------------------------------

PIPE = "pipelining_theorem_13_3"

EXCESS_WITHOUT_3BN = '''
k = best_k_by_simulation(n, p, alpha, beta)
return simulated_time(n, p, alpha, beta, k) - 2 * alpha * math.log2(p)
'''

BEST_K_OFF_BY_ONE = '''
height = max(1, math.ceil(math.log2(p)))
guess = math.sqrt(max(0.0, beta * n * (2 * height - 3)) / (3 * alpha))
times = [simulated_time(n, p, alpha, beta, k) for k in range(1, min(n, 2 * math.ceil(guess) + 4) + 1)]
return times.index(min(times))        # an index, not a number of packets
'''

BEST_K_CRASHES = '''
return int("the best k")
'''

BEST_K_SPINS = '''
k = 1
while k > 0:                          # the search never stops
    k += 1
return k
'''


def grade_pipe(workdir: Path):
    def submissions(source):
        return {
            "solution": source,
            "excess_without_3bn": h.replace_solution(source, "excess_solution", EXCESS_WITHOUT_3BN),
            "best_k_off_by_one": h.replace_solution(source, "best_k_solution", BEST_K_OFF_BY_ONE),
            "best_k_crashes": h.replace_solution(source, "best_k_solution", BEST_K_CRASHES),
            "best_k_spins": h.replace_solution(source, "best_k_solution", BEST_K_SPINS),
        }

    return h.release_and_grade(workdir / "course", PIPE, submissions, grade=h.grade_all)


def test_pipe_release_hides_solution_and_hidden_tests(pipe):
    course, _, _ = pipe
    text = h.released_text(course, PIPE)
    for secret in ["BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS",
                   "2 * math.ceil(guess) + 4", "key=lambda k: simulated_time",
                   "(3 * beta * n + 2 * alpha * math.log2(p))", "excess(n, p, alpha, beta) / math.sqrt",
                   "_best(", "sanders_optimal_k", "_students_best_k", "1.005",
                   "forbid_library_calls"]:
        assert secret not in text, f"the release gives away {secret!r}"
    for signature in ["def best_k_by_simulation(n, p, alpha, beta):",
                      "def excess(n, p, alpha, beta):",
                      "def excess_ratios(ns, p, alpha, beta):"]:
        assert signature in text
    assert text.count("raise NotImplementedError()") == 3


def test_pipe_solution_gets_full_marks(pipe):
    _, results, _ = pipe
    result = results["solution"]
    assert set(h.autograded_ids(result)) == {"best_k_tests", "excess_tests", "ratios_tests"}
    h.assert_full_marks(result)
    assert result.total == result.max_score == 10


def test_pipe_wrong_excess_gets_partial_marks(pipe):
    _, results, _ = pipe
    result = results["excess_without_3bn"]
    assert result.scores == {"best_k_tests": 4, "excess_tests": 0, "ratios_tests": 0}
    assert "excess(1000, 15, 1.0, 0.01) returned" in result.messages("excess_tests")
    assert "T(k*) - (3 beta n + 2 alpha log2 p) =" in result.messages("excess_tests")
    assert "outside [0.5, 5]" in result.messages("ratios_tests")


def test_pipe_wrong_best_k_costs_only_its_own_points(pipe):
    _, results, _ = pipe
    result = results["best_k_off_by_one"]
    assert result.scores == {"best_k_tests": 0, "excess_tests": 3, "ratios_tests": 3}
    assert ("returned k = 2 with simulated time 54; there is a k with a smaller simulated time"
            in result.messages("best_k_tests"))


@pytest.mark.parametrize("student, message", [
    ("best_k_crashes", "best_k_by_simulation(1000, 15, 1.0, 0.01) raised ValueError"),
    ("best_k_spins", "did not return within 5 s of real time"),
])
def test_pipe_bad_submissions_get_zero_with_a_helpful_message(pipe, student, message):
    _, results, _ = pipe
    result = results[student]
    assert result.total == 0
    assert message in result.messages("best_k_tests")


def test_pipe_grading_is_quick(pipe):
    _, _, seconds = pipe
    assert seconds < 120, f"autograding 5 submissions took {seconds:.0f} s"
