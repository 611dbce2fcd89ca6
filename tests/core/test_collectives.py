"""The operations are declared once, and the catalog finds its algorithm modules by itself.

Covers :mod:`collective_lib.collectives` (inputs, expected results, words, accepted m,
MPI names), the constraints an algorithm declares when it registers (``valid_p``,
``valid_m``, :meth:`Algorithm.accepts`), what a PE holds (``held``), and the
discovery of algorithm modules in :mod:`collective_lib.algorithms`.
"""
import importlib
import sys
import textwrap
from types import SimpleNamespace

import numpy as np
import pytest

import collective_lib.algorithms
from collective_lib import catalog
from collective_lib.mpi.reference import MPI_COLLECTIVES, mpi_collective_name
from collective_lib.collectives import Operation, add, operations

catalog_module = importlib.import_module("collective_lib.catalog")

PS = [*range(1, 10), 16, 31]
MS = [1, 2, 5]
CHAPTER_ORDER = ["broadcast", "reduce", "allreduce", "prefix_sum", "prefix_sum_and_total",
                 "barrier", "gather", "scatter", "allgather", "all_to_all_reduction",
                 "alltoall", "alltoallv"]


def words(value) -> int:
    """Words in an input: 0 for None, 1 for a scalar, the sum over a (nested) list."""
    if value is None:
        return 0
    if isinstance(value, (list, tuple)):
        return sum(words(x) for x in value)
    return 1


def test_every_operation_is_declared_once_in_chapter_order():
    ops = operations()
    assert list(ops) == CHAPTER_ORDER
    assert all(isinstance(op, Operation) and op.name == name for name, op in ops.items())
    with pytest.raises(TypeError):
        ops["new"] = None
    assert not hasattr(catalog_module, "register_operation")


def test_every_catalog_entry_implements_a_declared_operation():
    assert {entry.operation for entry in catalog().values()} <= set(operations())


@pytest.mark.parametrize("name", CHAPTER_ORDER)
def test_inputs_results_and_words_agree(name):
    op = operations()[name]
    for p in PS:
        for m in MS:
            if name == "barrier":
                m = 0
            inputs = op.make_inputs(p, m, np.random.default_rng(p * 100 + m))
            assert len(inputs) == p
            held = words(inputs)
            if name == "alltoallv":            # random lengths: at most the declared bound
                assert held <= op.input_words(p, m), (p, m)
                sent = [words(row) - words(row[i]) for i, row in enumerate(inputs)]
                assert max(sent) <= m
            else:
                assert held == op.input_words(p, m), (name, p, m)
            assert len(op.expected(inputs)) == p


@pytest.mark.parametrize("name", CHAPTER_ORDER)
def test_check_m_refuses_bad_m_naming_it(name):
    op = operations()[name]
    assert op.check_m(op.least_m) == op.least_m
    assert op.check_m(op.least_m + 3) == op.least_m + 3
    for bad in (op.least_m - 1, -5, 2.5, "4", True, None):
        with pytest.raises(ValueError, match=r"\bm must be an integer >= "):
            op.check_m(bad)
        with pytest.raises(ValueError, match=r"\bm\b"):
            op.make_inputs(4, bad, np.random.default_rng(0))
        with pytest.raises(ValueError, match=r"\bm\b"):
            op.input_words(4, bad)
    with pytest.raises(ValueError, match="p must be"):
        op.make_inputs(0, 1, np.random.default_rng(0))


def test_expected_results_by_hand():
    ops = operations()
    assert ops["broadcast"].expected([None, [7], None], root=1) == [[7], [7], [7]]
    assert ops["reduce"].expected([[1], [2], [3]], root=2) == [None, None, [6]]
    assert ops["allreduce"].expected([[1], [2]]) == [[3], [3]]
    assert ops["prefix_sum"].expected([[1], [2], [3]]) == [[1], [3], [6]]
    assert ops["prefix_sum"].expected([[1], [2], [3]], exclusive=True) == [None, [1], [3]]
    assert ops["prefix_sum_and_total"].expected([[1], [2]]) == [([1], [3]), ([3], [3])]
    assert ops["barrier"].expected([None] * 3) == [None] * 3
    assert ops["gather"].expected([[1], [2]], root=1) == [None, [[1], [2]]]
    assert ops["scatter"].expected([None, [[1], [2]]], root=1) == [[1], [2]]
    assert ops["allgather"].expected([[1], [2]]) == [[[1], [2]], [[1], [2]]]
    assert ops["all_to_all_reduction"].expected([[[1], [2]], [[10], [20]]]) == [[11], [22]]
    assert ops["alltoall"].expected([["a", "b"], ["c", "d"]]) == [["a", "c"], ["b", "d"]]
    assert ops["alltoallv"].expected([[[], [1, 2]], [[3], []]]) == [[[], [3]], [[1, 2], []]]


def test_every_operation_names_its_mpi_counterpart_and_mpi_reads_it():
    assert set(MPI_COLLECTIVES) == set(operations())
    for name, op in operations().items():
        assert op.mpi.startswith("MPI_") and op.summary
        assert mpi_collective_name(name, {}) == op.mpi
    assert operations()["prefix_sum"].mpi == "MPI_Scan"
    assert mpi_collective_name("prefix_sum", {"exclusive": True}) == "MPI_Exscan"
    assert mpi_collective_name("reduce", {"op": add}) == "MPI_Reduce"


# -- the constraints an algorithm declares -----------------------------------------------

def _raises_value_error(call) -> bool:
    try:
        call()
    except ValueError:
        return True
    return False


@pytest.mark.parametrize("name", list(catalog()))
def test_accepts_says_what_predict_and_simulate_do(name):
    """accepts(p, m, **params) is True exactly when the closed form and the program run."""
    entry = catalog()[name]
    ks = [None] if "k" not in entry.params else [0, 1, 2, 3, 4, 6]
    for p in [1, 2, 3, 4, 7, 8, 9]:
        for m in [1, 2, 3, 4, 8]:
            for k in ks:
                params = {} if k is None else {"k": k}
                refused = _raises_value_error(lambda: entry.predict(p, m, **params)) or \
                    _raises_value_error(lambda: entry.simulate(p, m, trace=False, **params))
                assert entry.accepts(p, m, **params) == (not refused), (p, m, params)
                if refused:
                    with pytest.raises(ValueError):
                        entry.check(p, m, **params)
                    assert entry.refusal(p, m, **params)
                else:
                    assert entry.check(p, m, **params) is None
                    assert entry.refusal(p, m, **params) is None


def test_check_names_the_bad_value():
    with pytest.raises(ValueError, match="m >= p words, got m=4 for p=8"):
        catalog()["rabenseifner_allreduce"].check(8, 4)
    with pytest.raises(ValueError, match="p to be a power of two, got p=6"):
        catalog()["hypercube_broadcast"].check(6, 4)
    with pytest.raises(ValueError, match="k=5 packets; choose k <= 4"):
        catalog()["linear_pipeline_broadcast"].check(6, 4, k=5)
    with pytest.raises(ValueError, match="k must be an integer >= 1, got 0"):
        catalog()["golden_tree_broadcast"].check(6, 4, k=0)
    with pytest.raises(ValueError, match="even number of packets"):
        catalog()["two_tree_broadcast"].check(6, 4, k=3)
    with pytest.raises(ValueError, match="m must be an integer >= 1, got 0"):
        catalog()["naive_broadcast"].check(6, 0)
    assert catalog()["barrier"].accepts(5, 0)


# -- what a PE holds -------------------------------------------------------------------------

# The algorithms whose tables of values show more than "the last payload received".
HELD = [name for name, entry in catalog().items() if entry.held is not None]
STATE_ATTRIBUTES = {"result", "received", "heard"}      # what a name reads if not a local


def _local_names(program) -> set:
    code = program.__code__
    return set(code.co_varnames) | set(code.co_cellvars)


@pytest.mark.parametrize("name", HELD)
def test_held_names_real_locals_or_functions_of_the_state(name):
    entry = catalog()[name]
    assert entry.held is not None
    specs = entry.held.values() if isinstance(entry.held, dict) else [entry.held]
    for spec in specs:
        if isinstance(spec, str):
            assert spec in _local_names(entry.program) | STATE_ATTRIBUTES, \
                f"{name}: held={spec!r} is neither a local variable nor a state attribute"
        else:
            assert callable(spec)


def test_held_functions_read_the_state():
    held = catalog()["binary_tree_reduce"].held
    state = SimpleNamespace(locals={"op": add, "x": [1], "data": [2], "z": None}, done=False,
                            result=None, received=None, heard=frozenset())
    assert held(state) == [3]
    assert catalog()["pipelined_binary_tree_reduce"].held(
        SimpleNamespace(locals={"packets": [[1], [2, 3]], "data": [9, 9, 9]})) == [1, 2, 3]
    prefix = catalog()["binary_tree_prefix_sum"].held
    assert prefix["prefix"](SimpleNamespace(locals={"mine": [4]})) == [4]
    both = catalog()["reduce_broadcast_allreduce"].held
    assert both(SimpleNamespace(locals={"x": [5], "data": [1]})) == [5]
    assert both(SimpleNamespace(locals={"total": None, "data": [8]})) == [8]


def test_register_refuses_a_held_of_the_wrong_form(monkeypatch):
    monkeypatch.setattr(catalog_module, "_ALGORITHMS", dict(catalog_module._ALGORITHMS))

    def made_up(me, p, data):
        return data
        yield

    for bad in (3, {"x": 3}, {1: "x"}, ["x"]):
        with pytest.raises(ValueError, match="held= of 'made_up'"):
            catalog_module.register(operation="broadcast", cost=lambda p, m, model, **_: 0.0,
                                    exact=True, source="none", tex="0", held=bad)(made_up)
    with pytest.raises(ValueError, match="unknown operation 'broadcastt'"):
        catalog_module.register(operation="broadcastt", cost=lambda p, m, model, **_: 0.0,
                                exact=True, source="none", tex="0")(made_up)


# -- discovery ---------------------------------------------------------------------------

MADE_UP_MODULE = '''
"""A made-up topic: one generator and one register(...), nothing else."""
from ..catalog import register
from ..ops import recv, send

__all__ = ["zz_made_up_broadcast"]


def zz_made_up_broadcast_cost(p, m, model, **_):
    return (p - 1) * model.transfer_time(m, hops=1)


@register(operation="broadcast", cost=zz_made_up_broadcast_cost, exact=True,
          tex=r"(p - 1)(t_s + t_w m)", params={"root": 0}, source="made up for a test")
def zz_made_up_broadcast(me, p, data, root=0):
    """The root sends to every PE in turn."""
    if me == root:
        for i in range(p):
            if i != root:
                yield send(i, data)
        return data
    return (yield recv(root))
'''


def test_a_new_algorithm_module_is_discovered(tmp_path, monkeypatch):
    name = "collective_lib.algorithms.zz_made_up"
    (tmp_path / "zz_made_up.py").write_text(textwrap.dedent(MADE_UP_MODULE))
    before = list(catalog())
    monkeypatch.setattr(catalog_module, "_ALGORITHMS", dict(catalog_module._ALGORITHMS))
    monkeypatch.setattr(collective_lib.algorithms, "__path__",
                        [*collective_lib.algorithms.__path__, str(tmp_path)])
    try:
        catalog_module.discover()
        entries = catalog()
        assert list(entries) == before + ["zz_made_up_broadcast"]   # no position: last
        entry = entries["zz_made_up_broadcast"]
        run = entry.simulate(5, 3, root=2)
        assert run.results == entry.expected(entry.make_inputs(5, 3, root=2), root=2)
        assert run.time == entry.predict(5, 3)
    finally:
        sys.modules.pop(name, None)
        if hasattr(collective_lib.algorithms, "zz_made_up"):
            delattr(collective_lib.algorithms, "zz_made_up")
    monkeypatch.undo()
    assert list(catalog()) == before


def test_catalog_order_is_the_modules_position_then_registration():
    positions = []
    for entry in catalog().values():
        key = catalog_module._position(entry.program.__module__)
        if not positions or positions[-1] != key:
            positions.append(key)
    assert positions == sorted(positions)
    assert len(positions) == len(set(positions))           # each module's entries together
    modules = [key[2].rsplit(".", 1)[1] for key in positions]
    assert modules == ["broadcast", "reduce", "two_tree_prefix", "gather", "alltoall",
                       "personalized", "hrelation", "cm200", "allreduce"]
