"""A catalog run's operation budget follows from what it runs (issue 29, point 10).

:meth:`Algorithm.max_ops` gives every PE, on top of the budget for endless programs, twice
the message start-ups its closed form counts (its time under ts = 1, tw = 0).  That covers
a run because no PE issues more operations than that count: each operation holds a port
of its PE for at least ts.  These tests check that fact on every entry for many p, and
that a pipeline far longer than the base budget runs to its end.
"""
import pytest

from collective_lib import catalog
from collective_lib.limits import default_max_ops

PS = [1, 2, 3, 5, 8, 13, 16, 31, 32, 64]
#: Packets of the long pipelines: 2 k operations per PE (a receive and a send per packet)
#: run past the base budget of 10,000 + 4p per PE.
LONG_K = 12_000


def startups(entry, p, m, params):
    """The closed form's time under ts = 1, tw = 0: the message start-ups it counts."""
    return entry.cost(p, m, entry.default_model(ts=1.0, tw=0.0), **{**entry.params, **params})


def settings(entry):
    """(p, m, params) over PS: one and many packets for a pipeline, two m for the others."""
    for p in filter(entry.valid, PS):
        for m, params in ([(64, {"k": 1}), (64, {"k": 7}), (64, {"k": 64})]
                          if "k" in entry.params else [(8, {}), (64, {})]):
            if entry.accepts(p, m, **params):
                yield p, m, params


@pytest.mark.parametrize("name", sorted(catalog()))
def test_no_run_issues_more_operations_than_its_closed_form_counts_start_ups(name):
    entry = catalog()[name]
    checked = 0
    for p, m, params in settings(entry):
        run = entry.simulate(p, m, trace=False, **params)
        # At p = 1 a program may still issue one operation (a local copy) in no time.
        assert run.operations <= p * max(1, startups(entry, p, m, params)), (p, m, params)
        assert run.operations <= entry.max_ops(p, m, **params)
        checked += 1
    assert checked >= 5


@pytest.mark.parametrize("name", sorted(n for n, e in catalog().items() if "k" in e.params))
@pytest.mark.parametrize("p", [2, 5])
def test_a_pipeline_longer_than_the_base_budget_runs_to_its_end(name, p):
    entry = catalog()[name]
    if not entry.accepts(p, LONG_K, k=LONG_K):
        pytest.skip(f"{name} does not run on p = {p} with {LONG_K} packets")
    run = entry.simulate(p, LONG_K, k=LONG_K, trace=False)
    assert run.operations > default_max_ops(p)          # past the base budget alone
    assert run.operations <= entry.max_ops(p, LONG_K, k=LONG_K)


def test_a_run_on_given_inputs_needs_no_message_length():
    """Chapters and tests pass their own inputs without m: the budget must not need it
    (a pipeline's k packets of a 1-word default, Rabenseifner's block per PE)."""
    for name, entry in catalog().items():
        for p in (1, 2, 5, 8, 16):
            if entry.valid(p):
                inputs = entry.make_inputs(p, 2 * p, 0)
                run = entry.simulate(p, inputs=inputs, trace=False)
                assert run.results == entry.expected(inputs), (name, p)
