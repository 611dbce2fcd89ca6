"""The CM-200 algorithms and schedules (Mathur and Johnsson 1993, §4-§5, Figs. 5-21).

* the six catalog programs against their operations and closed forms, with
  link-use checks on the event simulator;
* the index formulas of §4.1, §4.2.1 and §4.2.3 against the simulated data
  movement, for every node, memory slot and step;
* the numpy path: d-cycles broadcast and reduction correct and edge-disjoint
  per step for d = 0..11 (the real machine's 2048 nodes);
* every regenerated figure equals the paper's table up to the documented
  differences.
"""
import math
import operator
from collections import Counter

import numpy as np
import pytest

from collective_lib import CostModel, Hypercube, catalog, simulate
from collective_lib.algorithms import cm200
from collective_lib.algorithms.cm200 import (
    d_cycles_broadcast, d_cycles_broadcast_index, d_cycles_reduce, d_cycles_reduce_blocks,
    d_cycles_reduce_nodes, d_cycles_reduce_start, d_cycles_schedule, d_cycles_source,
    element_transfers, one_cycle_broadcast, one_cycle_index, one_cycle_reduce,
    run_d_cycles_broadcast, run_d_cycles_reduce, split_subblocks)
from collective_lib.algorithms.reduce import elementwise
from collective_lib.cm200_figures import (FIGURES, compare, documented_differences,
                                          format_table, paper_figure, regenerate)
from collective_lib.gray import gray, gray_inverse, sh

NAMES = ["one_cycle_broadcast", "d_cycles_broadcast", "send_and_spread", "one_cycle_reduce",
         "d_cycles_reduce", "reduce_and_spread"]
UNIT = CostModel(ts=1.0, tw=0.0, ports="all")
concat = elementwise(lambda a, b: f"{a}+{b}")


def run(program, d, inputs, model=UNIT, **params):
    return simulate(program, 1 << d, inputs, network=Hypercube(d), model=model, **params)


# -- the catalog programs ------------------------------------------------------------------------

@pytest.mark.parametrize("name", NAMES)
def test_registered_on_the_all_port_hypercube(name):
    entry = catalog()[name]
    assert entry.ports == "all" and entry.network(8) == Hypercube(3)
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


def test_element_transfers_match_table_2_as_counted():
    for d in range(1, 6):
        p = 1 << d
        for m in (1, 3, 2 * d, 7 * d + 1):
            assert element_transfers("one_cycle_broadcast", d, m) == (p - 1) * m
            assert element_transfers("d_cycles_broadcast", d, m) == (p - 1) * math.ceil(m / d)
            assert element_transfers("d_cycles_reduce", d, m) == (p - 1) * math.ceil(m / d)
            assert element_transfers("one_cycle_broadcast", d, m, channels=2) == \
                (p - 1) * math.ceil(m / 2)
            assert element_transfers("d_cycles_broadcast", d, m, channels=2) == \
                (p - 1) * math.ceil(m / (2 * d))
            assert element_transfers("reduce_and_spread", d, m) == d * math.ceil(p * m / d)
    with pytest.raises(ValueError, match="'ring'"):
        element_transfers("ring", 3, 4)


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


# -- index formulas against the simulated movement ----------------------------------------------

@pytest.mark.parametrize("d", range(1, 7))
def test_one_cycle_index_formula(d):
    """Fig. 7 (binary node order) and Fig. 5 (Gray code node order), every node and address."""
    p = 1 << d
    binary = run(one_cycle_broadcast, d, list(range(p)), reorder=False).results
    graycoded = run(one_cycle_broadcast, d, lambda pa: gray_inverse(pa), reorder=False).results
    s = np.arange(p)
    for pa in range(p):
        assert binary[pa] == one_cycle_index(pa, s, d).tolist()
        assert graycoded[pa] == one_cycle_index(pa, s, d, order="gray").tolist()
        assert graycoded[pa] == ((s + gray_inverse(pa)) % p).tolist()   # s <- (s - j) mod N


@pytest.mark.parametrize("d", range(1, 6))
@pytest.mark.parametrize("order", ["binary", "gray"])
def test_d_cycles_broadcast_index_formula(d, order):
    """§4.2.1: local address s = j M' + k d + i holds the predicted global index."""
    p = 1 << d
    for m in sorted({1, d, 2 * d, 2 * d + 1}):
        def label(pa):
            node = pa if order == "binary" else gray_inverse(pa)
            return [node * m + a for a in range(m)]
        memory = run(d_cycles_broadcast, d, label, reorder=False).results
        s = np.arange(p * m)
        for pa in range(p):
            got = [x for row in memory[pa] for x in row]
            assert got == d_cycles_broadcast_index(pa, s, d, m, order).tolist(), (pa, m)


@pytest.mark.parametrize("d", range(1, 6))
def test_d_cycles_reduce_block_formulas(d):
    """§4.2.3: the block each node sends from and adds into, every node, slot and step."""
    p = 1 << d
    results = run(d_cycles_reduce, d, lambda pa: [[f"{i}.{j}.{pa}" for i in range(d)]
                                                   for j in range(p)], op=concat,
                  history=True).results
    for pa, (_, history) in enumerate(results):
        for u in range(p - 1):
            before, after = history[u], history[u + 1]
            for i in range(d):
                sent = [j for j in range(p) if before[j][i] is not None and after[j][i] is None]
                added = [j for j in range(p) if after[j][i] not in (None, before[j][i])]
                assert (sent[0], added[0]) == d_cycles_reduce_blocks(pa, u, i, d), (pa, u, i)
                assert len(sent) == len(added) == 1
                j = sent[0]
                assert d_cycles_reduce_nodes(j, i, u, d)[0] == pa
                if u == 0:
                    assert d_cycles_reduce_start(j, i, d) == pa


def test_the_papers_receiving_formula_is_off_by_two():
    """§4.2.3 prints the receiver of step u as j XOR sh^i(G(2^d - u)); the movement needs 2^d - 2 - u."""
    d = 3
    n = 1 << d
    for u in range(n - 1):
        sender, receiver = d_cycles_reduce_nodes(0, 0, u, d)
        assert receiver == d_cycles_reduce_nodes(0, 0, u + 1, d)[0] if u < n - 2 else receiver == 0
        printed = sh(gray(n - u) % n, d, 0)
        assert printed != receiver, u


@pytest.mark.parametrize("d", range(1, 6))
def test_gray_code_order_reduction_blocks(d):
    """§4.2.3, nodes in Gray code order: the Gray-code block indices are G^-1 of the binary ones."""
    p = 1 << d
    for pa in range(p):
        for u in range(p - 1):
            for i in range(d):
                send, recv = d_cycles_reduce_blocks(pa, u, i, d)
                assert d_cycles_reduce_blocks(pa, u, i, d, "gray") == \
                    (gray_inverse(send), gray_inverse(recv))


def test_the_schedule_is_what_the_programs_do():
    d, p = 4, 16
    sched = d_cycles_schedule(d)
    result = catalog()["d_cycles_broadcast"].simulate(p, d, model=UNIT)
    starts = result.step_starts()
    for msg in result.messages:
        u = starts.index(msg.start)
        dim = (msg.src ^ msg.dst).bit_length() - 1
        assert dim in sched.dims[u]
    assert np.array_equal(sched.arrival[:, 0], gray(np.arange(p)))
    assert all(d_cycles_source(5, j, i, d) == 5 ^ int(sched.arrival[j, i])
               for j in range(p) for i in range(d))


# -- the numpy path at the CM-200's size ------------------------------------------------------------

@pytest.mark.parametrize("d", range(0, 12))
def test_numpy_d_cycles_broadcast(d):
    check = run_d_cycles_broadcast(d)
    assert check.ok, check
    assert check.steps == (1 << d) - 1 and check.link_uses == check.steps


@pytest.mark.parametrize("d", range(0, 12))
def test_numpy_d_cycles_reduce(d):
    check = run_d_cycles_reduce(d)
    assert check.ok, check
    assert check.steps == (1 << d) - 1 and check.link_uses == check.steps


# -- the figures --------------------------------------------------------------------------------------

@pytest.mark.parametrize("key", sorted(FIGURES))
def test_regenerated_figure_equals_the_paper(key):
    differences = compare(key)
    assert differences == documented_differences(key), format_table(regenerate(key))
    for entry in paper_figure(key).get("differences", []):
        assert len(entry["explanation"]) > 40, entry


def test_the_documented_differences_are_few_and_explained():
    counts = {key: len(documented_differences(key)) for key in FIGURES}
    assert counts == {**{key: 0 for key in FIGURES}, "figure_10": 3, "figure_11": 48,
                      "figure_17": 5, "figure_18": 1, "figure_19": 7}


def test_figure_11_step_3_lacks_only_the_block_digit():
    for _, _, paper, ours in documented_differences("figure_11"):
        assert paper == ours[0] + ours[2]


def test_figure_10_step_3_misnumbers_memory():
    assert [(p, o) for _, column, p, o in documented_differences("figure_10")] == \
        [("4", "3"), ("5", "4"), ("6", "5")]


def test_reduction_figures_have_one_sender_and_receiver_per_row():
    for u in range(7):
        for row in regenerate(f"figure_{13 + u}")["rows"]:
            cells = row[1:9]
            assert cells.count("●") == 1 and cells.count("+") == 1
            assert cells.count("○") == u, "after step u, u nodes have already sent"


def test_paper_layout_when_printed():
    text = format_table(regenerate("figure_8"))
    lines = text.splitlines()
    assert lines[0].split() == ["Step", "Mem", "P0", "P1", "P2", "P3", "P4", "P5", "P6", "P7",
                                "Dim"]
    assert lines[1].split() == ["Init.", "0", "00", "01", "02", "03", "04", "05", "06", "07"]
    assert lines[4].split() == ["0", "0", "01", "00", "03", "02", "05", "04", "07", "06", "0"]
    with pytest.raises(ValueError, match="figure_99"):
        regenerate("figure_99")


def test_figure_21_is_the_butterfly():
    rows = regenerate("figure_21")["rows"]
    assert rows[1][1] == "00+01 10+12 20+24" and rows[-1][-1] == "2 0 1"
    assert all(cell == "00 - 07 10 - 17 20 - 27" for cell in rows[-1][1:9])


def test_one_cycle_reduce_history_is_figure_6():
    results = run(one_cycle_reduce, 2, lambda pa: [f"Y{gray_inverse(x)}" for x in range(4)],
                  op=lambda a, b: f"{a}+{b}", history=True).results
    final = [results[int(gray(q))][0] for q in range(4)]
    assert final == ["Y0+Y0+Y0+Y0", "Y1+Y1+Y1+Y1", "Y2+Y2+Y2+Y2", "Y3+Y3+Y3+Y3"]
    assert operator.eq(results[0][1][0], [f"Y{gray_inverse(x)}" for x in range(4)])


def test_the_catalog_caps_the_event_simulation_of_the_cycle_programs():
    for name in ["one_cycle_broadcast", "one_cycle_reduce", "d_cycles_broadcast", "d_cycles_reduce"]:
        entry = catalog()[name]
        assert entry.valid(cm200.EVENT_MAX_P) and not entry.valid(2 * cm200.EVENT_MAX_P)
        with pytest.raises(ValueError, match="p=512.*run_d_cycles_broadcast"):
            entry.simulate(512, 1)
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


def test_two_channel_counts_are_refused_when_the_nodes_drift_out_of_lock_step():
    # send_and_spread's trees drift apart when M' is not a multiple of d; the
    # one-channel run then cannot be rescaled step by step.
    with pytest.raises(ValueError, match="lock step"):
        element_transfers("send_and_spread", 3, 7, channels=2)
    one, two = (element_transfers("send_and_spread", 3, 12, channels=c) for c in (1, 2))
    assert one / 2 <= two < one           # two channels at most halve every step
