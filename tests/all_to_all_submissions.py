"""Hand-written all-to-all reductions, as students write them, for the grading tests.

Correct programs (an own Algorithm 4.5, the reference ring), wrong ones (a wrong
result, a wrong time, under-declared words, crashes, endless loops) and every way a
submission can run one of the library's all-to-all reductions instead of its own
(calls, aliases, helpers, the catalog, computed names, copies of the code). Used by
tests/grading/test_programs.py (check_collective_program) and test_library.py
(forbid_library_calls, forbid_library_execution).
"""
import ast
import functools
import importlib
import inspect
import signal
import types

import pytest

from collective_lib import catalog, sendrecv
from collective_lib.algorithms import alltoall
from collective_lib.algorithms.alltoall import all_to_all_red_mesh
from collective_lib.algorithms.reduce import add, combine
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


