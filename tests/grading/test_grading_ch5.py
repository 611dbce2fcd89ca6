"""Grading helpers of the chapter 4-5 exercises: any collective, library code, hand-filled tables.

check_collective_program must pass correct programs and explain wrong results,
wrong or too long times and under-declared message sizes; forbid_library_calls
and forbid_library_execution together must catch every way a submission can
reuse one of the library's all-to-all reductions (the mesh's: the ring's, Algorithm
4.5, is not in the library but in the assignment's _reference.py); parse_terms, sends_by_step and
check_answer_table must grade a table of symbolic partial sums.
"""
import ast
import functools
import importlib
import inspect
import operator
import signal
import sys
import types

import numpy as np
import pytest

from collective_lib import CostModel, catalog, recv, send, sendrecv, simulate
from collective_lib.algorithms import alltoall
from collective_lib.algorithms.alltoall import all_to_all_red_mesh
from collective_lib.algorithms.reduce import add, combine
from collective_lib.grading import (check_answer_table, check_collective_program,
                                    count_pieces, forbid_library_calls,
                                    forbid_library_execution, format_terms, parse_terms,
                                    sends_by_step)
from collective_lib.networks import Ring
from exercise_references import load_reference

needs_alarm = pytest.mark.skipif(not hasattr(signal, "setitimer"),
                                 reason="the wall-clock guard needs SIGALRM and setitimer")

REDUCTIONS = [n for n, e in catalog().items() if e.operation == "all_to_all_reduction"]
REFERENCE_RING = load_reference("ring_reduction").all_to_all_red_ring     # Algorithm 4.5


def vectors(p, rng, **_):
    return [[rng.integers(0, 50, size=2).tolist() for _ in range(p)] for _ in range(p)]


def reduced(inputs, op=add, **_):
    return [combine(op, *(row[j] for row in inputs)) for j in range(len(inputs))]


def ring_time(p, **_):
    return p - 1


# -- "student" programs -----------------------------------------------------------------------

def own_ring(me, p, data, op=add):
    """A correct Algorithm 4.5 written from scratch."""
    received = None
    for i in range(1, p):
        mine = data[(me + i) % p]
        partial = mine if received is None else op(mine, received)
        received = yield sendrecv((me - 1) % p, partial, (me + 1) % p)
    return data[me] if received is None else op(data[me], received)


def rightwards(me, p, data, op=add):
    """Sends to the right instead of the left: partial sums end up at the wrong PEs."""
    received = None
    for i in range(1, p):
        mine = data[(me + i) % p]
        partial = mine if received is None else op(mine, received)
        received = yield sendrecv((me + 1) % p, partial, (me - 1) % p)
    return data[me] if received is None else op(data[me], received)


def direct(me, p, data, op=add):
    """Right result, but every message goes straight to its destination: slow on a ring."""
    total = data[me]
    for s in range(1, p):
        total = op(total, (yield sendrecv((me + s) % p, data[(me + s) % p], (me - s) % p)))
    return total


def all_at_once(me, p, data, op=add):
    """Right result, but sends its whole list in every step: p times the words."""
    total = data[me]
    for s in range(1, p):
        got = yield sendrecv((me + s) % p, data, (me - s) % p)
        total = op(total, got[me])
    return total


def yields_from_library(me, p, data, op=add):
    return (yield from all_to_all_red_mesh(me, p, data, op))


ALIAS = all_to_all_red_mesh


def through_an_alias(me, p, data, op=add):
    return (yield from ALIAS(me, p, data, op))


def _helper(me, p, data, op):
    return all_to_all_red_mesh(me, p, data, op)


def through_a_helper(me, p, data, op=add):
    return (yield from _helper(me, p, data, op))


def by_catalog_name(me, p, data, op=add):
    return (yield from catalog()["all_to_all_red_mesh"].program(me, p, data, op=op))


def by_computed_name(me, p, data, op=add):
    name = "_".join(["all", "to", "all", "red", "mesh"])     # a constant would be seen
    return (yield from getattr(alltoall, name)(me, p, data, op))


def by_importlib(me, p, data, op=add):
    module = importlib.import_module(".".join(["collective_lib", "algorithms", "alltoall"]))
    program = vars(module)["_".join(["all", "to", "all", "red", "mesh"])]
    return (yield from program(me, p, data, op))


def _by_operation():
    return next(e.program for e in catalog().values() if e.operation == "all_to_all_reduction")


def by_operation(me, p, data, op=add):
    return (yield from _by_operation()(me, p, data, op=op))


CODE_COPY = types.FunctionType(all_to_all_red_mesh.__code__, vars(alltoall), "mine")


def through_a_code_copy(me, p, data, op=add):
    return (yield from CODE_COPY(me, p, data, op))


def _recompiled(func):
    """The function compiled again from its source text, without its decorator."""
    tree = ast.parse(inspect.getsource(func))
    tree.body[0].decorator_list = []
    namespace = dict(func.__globals__)
    exec(compile(tree, "<copy>", "exec"), namespace)
    return namespace[func.__name__]


SOURCE_COPY = _recompiled(all_to_all_red_mesh)


def through_a_source_copy(me, p, data, op=add):
    return (yield from SOURCE_COPY(me, p, data, op))


PARTIAL = functools.partial(all_to_all_red_mesh, op=add)


def through_a_partial(me, p, data, op=add):
    return (yield from PARTIAL(me, p, data))


CALL_CHEATS = [yields_from_library, through_an_alias, through_a_helper, by_catalog_name,
               through_a_partial]
RUN_CHEATS = CALL_CHEATS + [by_computed_name, by_importlib, by_operation,
                            through_a_code_copy, through_a_source_copy]


# -- check_collective_program -----------------------------------------------------------------

def test_a_correct_program_passes_with_the_exact_time():
    for model, m in [(CostModel(ts=1.0, tw=0.0), 2), (CostModel(ts=2.0, tw=0.5), 2)]:
        check_collective_program(own_ring, range(1, 20), make_inputs=vectors, expected=reduced,
                                 network=Ring, model=model,
                                 expected_time=lambda p: (model.ts + model.tw * m) * (p - 1))
    check_collective_program(REFERENCE_RING, [(p, {"op": operator.or_}) for p in range(1, 9)],
                             make_inputs=lambda p, rng, **_: [[frozenset({(i, j)})
                                                              for j in range(p)]
                                                             for i in range(p)],
                             expected=reduced, network=Ring)


def test_a_wrong_result_names_the_case_the_pe_and_the_first_wrong_word():
    with pytest.raises(AssertionError) as err:
        check_collective_program(rightwards, [1, 2, 3], make_inputs=vectors, expected=reduced,
                                 network=Ring, item="word", hint="Hint: send to the left.")
    text = str(err.value)
    assert text.startswith("wrong result of rightwards for p=3: PE 0 returned [")
    assert "was expected (word 0 is " in text
    assert text.endswith("Hint: send to the left.")


def test_params_are_passed_and_named():
    def maximum(a, b):
        return [max(x, y) for x, y in zip(a, b)]

    with pytest.raises(AssertionError) as err:
        check_collective_program(rightwards, [(4, {"op": maximum})], make_inputs=vectors,
                                 expected=reduced, network=Ring)
    assert "wrong result of rightwards for p=4, op=maximum: PE 0 returned" in str(err.value)


def test_an_exact_time_is_enforced_with_the_traffic():
    check_collective_program(direct, range(1, 9), make_inputs=vectors, expected=reduced)
    with pytest.raises(AssertionError) as err:
        check_collective_program(direct, range(1, 9), make_inputs=vectors, expected=reduced,
                                 network=Ring, expected_time=ring_time,
                                 time_label="(ts + tw m)(p - 1)", time_hint="Hint: neighbours.")
    text = str(err.value)
    assert text.startswith("wrong time of direct for p=4, alpha=1, beta=0, ports='full-duplex': "
                           "the simulated time is 5, but (ts + tw m)(p - 1) = 3 (the PEs sent "
                           "12 messages in 5 rounds; the longest was 2 words).")
    assert text.endswith("Hint: neighbours.")


def test_a_time_bound_is_enforced():
    model = CostModel(ts=1.0, tw=1.0)

    def bound(p):
        return (p - 1) * 3.0

    check_collective_program(own_ring, range(1, 9), make_inputs=vectors, expected=reduced,
                             network=Ring, model=model, time_bound=bound)
    with pytest.raises(AssertionError) as err:
        check_collective_program(all_at_once, range(1, 9), make_inputs=vectors, expected=reduced,
                                 network=Ring, model=model, time_bound=bound,
                                 time_label="3(p - 1)")
    # p = 2 passes: its list of two 2-word messages counts as 2 words (one per item)
    assert str(err.value) == ("too slow: all_at_once for p=3, alpha=1, beta=1, "
                              "ports='full-duplex' takes 8, more than 3(p - 1) = 6 (the PEs "
                              "sent 6 messages in 2 rounds; the longest was 3 words).")


def test_under_declared_words_are_caught():
    def bundles(me, p, data):
        got = yield sendrecv((me + 1) % p, [data], (me - 1) % p)     # 1 word declared
        return got[0]

    def inputs(p, rng, **_):
        return [[10 * i, 10 * i + 1, 10 * i + 2] for i in range(p)]

    def words(payload, inputs):
        return 3 * count_pieces(payload, {tuple(x) for x in inputs})

    with pytest.raises(AssertionError) as err:
        check_collective_program(bundles, [3], make_inputs=inputs,
                                 expected=lambda x: [x[-1]] + x[:-1], payload_words=words)
    assert ("bundles for p=3: the message from PE 0 to PE 1 carries 3 words of data but is sent "
            "as 1 word") in str(err.value)
    assert "words=" in str(err.value)


def test_declared_words_are_checked_against_what_was_sent_not_what_became_of_it():
    def words(payload, inputs):
        return 3 * count_pieces(payload, {tuple(x) for x in inputs})

    def inputs(p, rng, **_):
        return [[10 * i, 10 * i + 1, 10 * i + 2] for i in range(p)]

    def grows_what_it_received(me, p, data):      # honest: 3 words sent, then the list grows
        got = yield sendrecv((me + 1) % p, [data], (me - 1) % p, words=3)
        got.append(data)
        got.append(data)
        return got[0]

    check_collective_program(grows_what_it_received, [3, 4], make_inputs=inputs,
                             expected=lambda x: [x[-1]] + x[:-1], payload_words=words)

    def empties_what_it_sent(me, p, data):        # 1 word declared for 3, then hidden
        bundle = [data]
        got = yield sendrecv((me + 1) % p, bundle, (me - 1) % p, words=1)
        bundle.clear()
        return got[0]

    with pytest.raises(AssertionError, match="carries 3 words of data but is sent as 1 word"):
        check_collective_program(empties_what_it_sent, [3], make_inputs=inputs,
                                 expected=lambda x: [x[-1]] + x[:-1], payload_words=words)


def test_failures_of_the_program_are_explained():
    def deadlocks(me, p, data):
        return (yield recv((me + 1) % p))

    def crashes(me, p, data):
        yield send((me + 1) % p, 1)
        return 1 / 0

    for program, words in [(deadlocks, "deadlock in deadlocks for p=3"),
                           (crashes, "crashes for p=3 raised ZeroDivisionError")]:
        with pytest.raises(AssertionError) as err:
            check_collective_program(program, [3], make_inputs=vectors, expected=reduced)
        assert words in str(err.value)


def test_the_expected_results_do_not_depend_on_changes_to_the_inputs():
    def clobbers(me, p, data, op=add):
        result = yield from own_ring(me, p, data, op)
        data.clear()
        return result

    check_collective_program(clobbers, range(1, 6), make_inputs=vectors, expected=reduced)


@needs_alarm
def test_an_endless_loop_is_stopped():
    def spins(me, p, data):
        while True:
            pass
        yield

    with pytest.raises(AssertionError) as err:
        check_collective_program(spins, [2], make_inputs=vectors, expected=reduced,
                                 time_limit_s=0.3)
    assert "did not finish within 0.3 s of real time" in str(err.value)


# -- forbidding the library ----------------------------------------------------------------------

def _one_run(program, p=4):
    forbid_library_execution(program, REDUCTIONS, p, [[[i, j] for j in range(p)]
                                                      for i in range(p)], network=Ring(p))


def test_an_own_program_is_allowed():
    forbid_library_calls(own_ring, REDUCTIONS + ["catalog"])
    _one_run(own_ring)
    assert sys.getprofile() is None


@pytest.mark.parametrize("program", CALL_CHEATS, ids=lambda f: f.__name__)
def test_the_static_check_catches_calls_aliases_helpers_and_lookups(program):
    with pytest.raises(AssertionError) as err:
        forbid_library_calls(program, REDUCTIONS + ["catalog"])
    assert f"{program.__name__} uses the library's `" in str(err.value)


@pytest.mark.parametrize("program", RUN_CHEATS, ids=lambda f: f.__name__)
def test_the_runtime_check_catches_every_way_to_reach_the_library(program):
    with pytest.raises(AssertionError) as err:
        _one_run(program)
    assert str(err.value).startswith(f"{program.__name__} runs the library's "
                                     "`all_to_all_red_mesh` (its code ran when")
    assert sys.getprofile() is None


def test_the_runtime_check_restores_a_previous_profiler_and_reports_other_failures():
    calls = []

    def outer(frame, event, arg):
        calls.append(event)

    def deadlocks(me, p, data):
        return (yield recv((me + 1) % p))

    sys.setprofile(outer)
    try:
        with pytest.raises(AssertionError) as err:
            forbid_library_execution(deadlocks, REDUCTIONS, 3)
    finally:
        restored = sys.getprofile()
        sys.setprofile(None)
    assert restored is outer
    assert "deadlock in deadlocks for p=3" in str(err.value)
    with pytest.raises(ValueError, match="unknown algorithm 'no_such_thing'"):
        forbid_library_execution(own_ring, ["no_such_thing"], 2)


@pytest.mark.parametrize("program", RUN_CHEATS[:1], ids=lambda f: f.__name__)
def test_without_report_failures_only_the_library_fails(program):
    # a program's own failure is left to the test of its results (one bug, one deduction);
    # reaching the library still fails
    def crashes(me, p, data):
        raise ValueError("not yet")
        yield

    forbid_library_execution(crashes, REDUCTIONS, 3, report_failures=False)
    with pytest.raises(AssertionError, match="runs the library's `all_to_all_red_mesh`"):
        forbid_library_execution(program, REDUCTIONS, 4, [[[i, j] for j in range(4)]
                                                          for i in range(4)],
                                 network=Ring(4), report_failures=False)


# -- tables of partial sums ------------------------------------------------------------------------

def test_parse_terms_reads_strings_lists_and_pairs():
    want = frozenset({(3, 5), (4, 5)})
    for entry in ["x3[5] + x4[5]", "x4[5]+x3[5]", "x_3[5], x_{4}[5]", ["x3[5]", (4, 5)],
                  {(3, 5), (4, 5)}, ("x3[5]", "x4[5]")]:
        assert parse_terms(entry) == want, entry
    assert parse_terms((3, 5)) == {(3, 5)}
    assert format_terms(want) == "x3[5] + x4[5]"
    for bad, words in [("", "empty"), ("y3[5]", "cannot read the term 'y3[5]'"),
                       ("x3[5] + ", "cannot read the term ''"), (7, "cannot read 7 (int)"),
                       ([], "no terms")]:
        with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")
                           .replace("[", r"\[").replace("]", r"\]")):
            parse_terms(bad)


def test_count_pieces_looks_inside_any_bundle():
    pieces = {(1, 2), (3, 4)}
    assert count_pieces([[1, 2], [3, 4], [5, 6]], pieces) == 2
    assert count_pieces([(0, 1, [1, 2]), (2, 3, (3, 4))], pieces) == 2
    assert count_pieces({0: [1, 2], (3, 4): None}, pieces) == 2
    assert count_pieces(7, pieces) == 0 and count_pieces([[1, 2, 3]], pieces) == 0


def _ring_table(p):
    inputs = [[frozenset({(i, j)}) for j in range(p)] for i in range(p)]
    run = simulate(REFERENCE_RING, p, inputs, network=Ring(p), op=operator.or_)
    return sends_by_step(run), run.results


def test_sends_by_step_shows_algorithm_4_5():
    steps, results = _ring_table(4)
    assert list(steps) == [1, 2, 3]
    # in step i node me sends the partial sum for me + i: the messages of me .. me + i - 1
    for i, row in steps.items():
        for me, payload in row.items():
            assert payload == {((me + s) % 4, (me + i) % 4) for s in range(i)}
    assert results[2] == {(s, 2) for s in range(4)}
    assert format_terms(steps[2][3]) == "x0[1] + x3[1]"
    run = catalog()["binomial_broadcast"].simulate(4)
    with pytest.raises(ValueError, match="PE 0 sends more than one message in step 1"):
        sends_by_step(type(run)(**{**vars(run), "messages": run.messages * 2}))


def test_check_answer_table_accepts_the_right_table_and_names_the_first_wrong_entry():
    steps, results = _ring_table(3)
    want = {s: [steps[s][node] for node in range(3)] for s in steps}
    right = {1: ["x0[1]", "x1[2]", "x2[0]"],
             2: ["x0[2] + x1[2]", "x1[0] + x2[0]", [(2, 1), (0, 1)]]}
    check_answer_table(right, want, name="sends_3", normalize=parse_terms, show=format_terms)
    check_answer_table(["x0[0]+x1[0]+x2[0]", "x1[1]+x2[1]+x0[1]", "x2[2]+x0[2]+x1[2]"],
                       results, name="results_3", normalize=parse_terms)
    cases = [
        ({**right, 2: ["x0[2] + x1[2]", "x1[0]", "x2[1] + x0[1]"]},
         "sends_3[2][1] is x1[0], but x1[0] + x2[0] was expected (missing: x2[0])\n"
         "Hint: look left."),
        ({1: right[1]}, "sends_3 must have the entries 1, 2; 2 is missing"),
        ([right[1], right[2]], "sends_3 must have the entries 1, 2; 2 is missing; 0 should "
                               "not be there"),
        ({**right, 2: right[2][:2]}, "sends_3[2] must have the entries 0, 1, 2; 2 is missing"),
        ({**right, 1: "x0[1]"}, "sends_3[1] must be a list with the entries 0, 1, 2, got"),
        ({**right, 1: ["x0[1]", "x1(2)", "x2[0]"]}, "sends_3[1][1]: cannot read the term 'x1(2)'"),
    ]
    for answer, message in cases:
        with pytest.raises(AssertionError) as err:
            check_answer_table(answer, want, name="sends_3", normalize=parse_terms,
                               show=format_terms, hint="Hint: look left.")
        assert str(err.value).startswith(message), (str(err.value), message)


@pytest.mark.parametrize("program", [by_computed_name, by_importlib, through_a_code_copy,
                                     through_a_source_copy], ids=lambda f: f.__name__)
def test_some_cheats_need_the_runtime_check(program):
    # a name computed at run time, or a copy of the code, is invisible to the static check
    forbid_library_calls(program, REDUCTIONS)
    with pytest.raises(AssertionError, match="runs the library's `all_to_all_red_mesh`"):
        _one_run(program)
