"""The CM-200 programs of the catalog (Mathur and Johnsson 1993, §4-§5).

The six catalog programs against their operations and closed forms, with
link-use checks on the event simulator; the butterfly all-reduce; the
histories the figures are drawn from.
"""
import operator
from collections import Counter

import numpy as np
import pytest

from collective_lib import CostModel, Hypercube, catalog, simulate
from collective_lib.algorithms import cm200
from collective_lib.algorithms.cm200 import d_cycles_broadcast, d_cycles_reduce, one_cycle_reduce
from collective_lib.cm200.gray import gray, gray_inverse
from collective_lib.cm200.schedules import one_cycle_index, split_subblocks

NAMES = ["one_cycle_broadcast", "d_cycles_broadcast", "send_and_spread", "one_cycle_reduce",
         "d_cycles_reduce", "reduce_and_spread"]
UNIT = CostModel(ts=1.0, tw=0.0, ports="all")


def run(program, d, inputs, model=UNIT, **params):
    return simulate(program, 1 << d, inputs, network=Hypercube(d), model=model, **params)


@pytest.mark.parametrize("name", NAMES)
def test_registered_on_the_all_port_hypercube(name):
    entry = catalog()[name]
    assert entry.ports == "all" and entry.network_for(8) == Hypercube(3)
    assert "Mathur and Johnsson 1993" in entry.source
    for p in (3, 6, 12):
        with pytest.raises(ValueError, match=f"p={p}"):
            entry.predict(p, 4)


@pytest.mark.parametrize("name", NAMES)
def test_correct_and_exact_for_awkward_message_lengths(name):
    """m below, equal to and not a multiple of d; three cost models; seeds vary the data."""
    entry = catalog()[name]
    models = [CostModel(1, 0, ports="all"), CostModel(1, 0.25, ports="all"),
              CostModel(0.5, 1, ports="all")]
    for d in range(0, 6):
        for m in sorted({1, 2, d, d + 1, 2 * d + 1} - {0}):
            model = models[(d + m) % 3]
            inputs = entry.make_inputs(1 << d, m, seed=10 * d + m)
            result = entry.simulate(1 << d, m, inputs=inputs, model=model)
            assert result.results == entry.expected(inputs), (name, d, m)
            assert result.time == pytest.approx(entry.predict(1 << d, m, model)), (name, d, m)


def test_closed_forms_as_the_paper_states_them():
    model = CostModel(ts=2.0, tw=1.0, ports="all")
    c = catalog()
    for d in range(1, 8):
        p, m = 1 << d, 6 * d
        assert c["one_cycle_broadcast"].predict(p, m, model) == (p - 1) * (2 + m)
        assert c["d_cycles_broadcast"].predict(p, m, model) == (p - 1) * (2 + m / d)
        assert c["d_cycles_reduce"].predict(p, m, model) == (p - 1) * (2 + m / d)
        # reduce-and-spread moves about d times the elements of the d-cycles reduction (§5)
        rs = c["reduce_and_spread"].predict(p, m, CostModel(0, 1, ports="all"))
        dc = c["d_cycles_reduce"].predict(p, m, CostModel(0, 1, ports="all"))
        assert rs / dc == pytest.approx(d * p / (p - 1))


@pytest.mark.parametrize("name", ["d_cycles_broadcast", "d_cycles_reduce", "one_cycle_broadcast",
                                  "one_cycle_reduce", "reduce_and_spread", "send_and_spread"])
@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_each_directed_link_carries_one_transfer_per_step(name, d):
    entry = catalog()[name]
    p, m = 1 << d, 2 * d
    result = entry.simulate(p, m, model=UNIT)
    per_step = Counter((msg.start, msg.path) for msg in result.messages)
    assert max(per_step.values()) == 1, f"{name} d={d}: a link was used twice in one step"
    assert all(len(msg.path) == 1 for msg in result.messages), "neighbours only"
    if name.startswith("d_cycles"):
        # all d links of every node busy in each of the 2**d - 1 steps
        assert len(result.step_starts()) == p - 1
        assert result.link_load == {link: p - 1 for link in Hypercube(d).links()}
    if name.startswith("one_cycle"):
        # one direction of the Gray code ring: left shifts to broadcast, right to reduce
        step = -1 if name == "one_cycle_broadcast" else 1
        ring = {(int(gray(q)), int(gray((q + step) % p))) for q in range(p)}
        assert result.link_load == {link: p - 1 for link in ring}


def test_idle_links_when_a_node_has_fewer_than_d_elements():
    entry = catalog()["d_cycles_broadcast"]
    result = entry.simulate(16, 2, model=UNIT)                # d = 4, two slots busy
    assert all(len([x for x in result.messages if x.start == s and x.src == 0]) == 2
               for s in result.step_starts())


def test_bad_inputs_are_named():
    with pytest.raises(ValueError, match="list of p=4 messages"):
        run(d_cycles_reduce, 2, [[1, 2]] * 4)
    with pytest.raises(ValueError, match="one length"):
        run(d_cycles_reduce, 1, [[[1], [2, 3]], [[1], [2, 3]]])
    with pytest.raises(ValueError, match="needs a list"):
        run(d_cycles_broadcast, 1, [5, 6])
    with pytest.raises(ValueError, match="order must be one of"):
        one_cycle_index(0, 0, 3, order="octal")
    assert split_subblocks(list(range(10)), 4) == [[0, 1, 2], [3, 4, 5], [6, 7], [8, 9]]


def test_one_cycle_reduce_history_is_figure_6():
    results = run(one_cycle_reduce, 2, lambda pa: [f"Y{gray_inverse(x)}" for x in range(4)],
                  op=lambda a, b: f"{a}+{b}", history=True).results
    final = [results[int(gray(q))][0] for q in range(4)]
    assert final == ["Y0+Y0+Y0+Y0", "Y1+Y1+Y1+Y1", "Y2+Y2+Y2+Y2", "Y3+Y3+Y3+Y3"]
    assert operator.eq(results[0][1][0], [f"Y{gray_inverse(x)}" for x in range(4)])


def test_the_catalog_accepts_the_cycle_programs_at_the_machines_size():
    """No cap below the CM-200's 2048 nodes (benchmarks/cm200_scale.py runs them there)."""
    for name in ["one_cycle_broadcast", "one_cycle_reduce", "d_cycles_broadcast", "d_cycles_reduce"]:
        entry = catalog()[name]
        assert entry.valid(512) and entry.valid(2048) and not entry.valid(1536)
    assert catalog()["send_and_spread"].valid(1024)


def test_butterfly_reduce_and_spread_is_an_exact_all_reduce():
    rng = np.random.default_rng(3)
    for d in range(0, 6):
        p = 1 << d
        for m in sorted({1, d, d + 2, 3 * d} - {0}):
            model = CostModel(ts=1.0, tw=0.5, ports="all")
            inputs = rng.integers(0, 100, size=(p, m)).tolist()
            result = run(cm200.butterfly_reduce_and_spread, d, inputs, model=model)
            total = np.sum(inputs, axis=0).tolist()
            assert result.results == [total] * p, (d, m)
            assert result.time == pytest.approx(cm200.butterfly_cost(p, m, model)), (d, m)
