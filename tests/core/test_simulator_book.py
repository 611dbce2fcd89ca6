"""Chapter 0's claims about the simulator, cost model and networks (book/ch0_machine_model).

The programs below are the chapter's own, copied from its visible cells; each test
names the section it checks.
"""
import json
from pathlib import Path

import pytest

from collective_lib import (CostModel, DeadlockError, FullyConnected, Hypercube, LinearArray,
                            Mesh, OperationLimitError, Ring, UnreceivedMessageError, catalog,
                            compute, exchange, multi, recv, send, sendrecv, simulate)

#: Where each claim of the chapter's prose ("never", "always", "exactly", ...) is checked
#: (tests/notebooks/test_prose_claims.py).
PROSE_CLAIMS = {
    "A program never looks at a clock": "test_no_operation_gives_a_program_the_time",
    "every message costs exactly one unit, whatever its length":
        "test_model_of_the_chapter_and_the_default_model",
    "In this book *half-duplex* always means the port model":
        "no claim: how the book uses a word; the port model itself is checked in "
        "test_port_models",
    "linked when their ranks differ in exactly one bit":
        "test_hypercube_links_join_the_ranks_that_differ_in_one_bit",
    "without `yield` the simulator never sees it":
        "test_an_operation_built_without_yield_is_never_sent",
    "**A program that never ends.**":
        "test_an_endless_token_never_deadlocks_and_stops_at_the_budget",
    "every PE always has a message to pass on":
        "test_an_endless_token_never_deadlocks_and_stops_at_the_budget",
    "equal the simulated times exactly where the catalog marks them exact":
        "core/test_catalog.py::test_small_p_every_root",
}


# §0.1
def relay(me, p, data):
    if me > 0:
        data = yield recv(me - 1)
        data = data + me
    if me < p - 1:
        yield send(me + 1, data)
    return data


# §0.2
def one_message(me, p, data):
    if me == 0:
        yield send(1, data)
    else:
        return (yield recv(0))


# §0.3
def swap(me, p, data):
    return (yield exchange(1 - me, data))


def fan_out(me, p, data):
    if me == 0:
        yield multi(sends=[(dst, data) for dst in range(1, p)])
        return data
    return (yield recv(0))


def talk_first(me, p, data):
    other = 1 - me
    yield send(other, data)
    return (yield recv(other))


def take_turns(me, p, data):
    other = 1 - me
    if me == 0:
        yield send(other, data)
        return (yield recv(other))
    got = yield recv(other)
    yield send(other, data)
    return got


# §0.5
def halves(me, p, data):
    half = p // 2
    if me < half:
        yield send(me + half, data)
    else:
        return (yield recv(me - half))


def shift_by_half(net):
    return simulate(halves, net.p, inputs=list(range(net.p)), network=net)


# §0.6
def tiny_tree(me, p, data):
    if me == 0:
        yield send(1, data)
        yield send(2, data)
    elif me in (1, 2):
        data = yield recv(0)
        if me == 1:
            yield send(3, data)
    else:
        data = yield recv(1)
    return data


# §0.7: four bugs
def listen_first(me, p, data):
    other = 1 - me
    got = yield recv(other)
    yield send(other, data)
    return got


def forgot_yield(me, p, data):
    if me == 0:
        send(1, data)
        yield compute(1)
        return data
    return (yield recv(0))


def one_too_many(me, p, data):
    if me == 0:
        yield send(1, data)
        yield send(1, data)
        return data
    return (yield recv(0))


def off_by_one(me, p, data):
    if me > 0:
        data = yield recv(me - 1)
    yield send(me + 1, data)
    return data


@pytest.mark.parametrize("p", [1, 2, 4, 9, 33])
def test_relay_adds_the_ranks_one_step_per_hop(p):
    run = simulate(relay, p, inputs=[100] + [None] * (p - 1))
    assert run.results == [100 + i * (i + 1) // 2 for i in range(p)]
    assert run.time == p - 1 and len(run.messages) == p - 1


def test_relay_of_the_chapter():
    run = simulate(relay, 4, inputs=[100, None, None, None])
    assert run.results == [100, 101, 103, 106] and run.time == 3 and len(run.messages) == 3


@pytest.mark.parametrize("ts, tw", [(10, 2), (1, 0), (0.5, 3)])
@pytest.mark.parametrize("m", [1, 5, 100, 1000])
def test_one_message_costs_ts_plus_tw_m(ts, tw, m):
    model = CostModel(ts=ts, tw=tw)
    assert simulate(one_message, 2, [list(range(m)), None], model=model).time == ts + tw * m


def test_model_of_the_chapter_and_the_default_model():
    model = CostModel(ts=10, tw=2)
    assert model.ts / model.tw == 5 and (model.alpha, model.beta) == (10, 2)
    assert simulate(one_message, 2, [list(range(1000)), None]).time == 1
    # the default model: one unit per message, whatever its length
    for words in (0, 1, 5, 1000, 10 ** 5):
        assert simulate(one_message, 2, [list(range(words)), None]).time == 1


def every_operation(me, p, data):
    """Yields each operation of §0.1's table once and keeps what each gives back."""
    other = 1 - me
    got = [(yield send(other, data)) if me == 0 else (yield recv(other))]
    got.append((yield compute(5)))
    got.append((yield sendrecv(other, data + "2", other)))
    got.append((yield exchange(other, data + "3")))
    got.append((yield multi(sends=[(other, data + "4")], recvs=[other])))
    return got


@pytest.mark.parametrize("model", [CostModel(), CostModel(ts=10, tw=2),
                                   CostModel(ts=0.5, tw=3, ports="half-duplex"),
                                   CostModel(ports="all")])
def test_no_operation_gives_a_program_the_time(model):
    # §0.1: what a yield gives back is the table's (None or messages), never a time, so
    # the results are the same whatever the cost model and the clock.
    run = simulate(every_operation, 2, ["a", "b"], model=model)
    assert run.results == [[None, None, "b2", "b3", ["b4"]], ["a", None, "a2", "a3", ["a4"]]]


@pytest.mark.parametrize("d", range(6))
def test_hypercube_links_join_the_ranks_that_differ_in_one_bit(d):
    cube = Hypercube(d)
    assert sorted(cube.links()) == [(a, b) for a in range(2 ** d) for b in range(2 ** d)
                                    if bin(a ^ b).count("1") == 1]


@pytest.mark.parametrize("ports, t_swap, t_fan", [("full-duplex", 1, 3), ("half-duplex", 2, 3),
                                                  ("all", 1, 1)])
def test_port_models(ports, t_swap, t_fan):
    model = CostModel(ports=ports)
    assert simulate(swap, 2, ["a", "b"], model=model).time == t_swap
    assert simulate(fan_out, 4, ["x", None, None, None], model=model).time == t_fan


@pytest.mark.parametrize("p", [2, 5, 16])
def test_fan_out_costs_p_minus_1_on_one_port_and_1_on_all(p):
    inputs = ["x"] + [None] * (p - 1)
    assert simulate(fan_out, p, inputs, model=CostModel(ports="full-duplex")).time == p - 1
    assert simulate(fan_out, p, inputs, model=CostModel(ports="all")).time == 1


def test_talking_first_deadlocks_only_on_half_duplex_ports():
    half = CostModel(ports="half-duplex")
    assert simulate(talk_first, 2, ["hi", "hello"]).time == 1
    with pytest.raises(DeadlockError):
        simulate(talk_first, 2, ["hi", "hello"], model=half)
    run = simulate(take_turns, 2, ["hi", "hello"], model=half)
    assert run.results == ["hello", "hi"] and run.time == 2


def diameter(net):
    return max(net.hops(a, b) for a in range(net.p) for b in range(net.p) if a != b)


@pytest.mark.parametrize("net, links, diam", [
    (LinearArray(8), 14, 7), (Ring(8), 16, 4), (Mesh(4, 4), 48, 6), (Mesh(4, 4, wrap=True), 64, 4),
    (Hypercube(3), 24, 3), (Hypercube(4), 64, 4), (FullyConnected(8), 56, 1)])
def test_network_sizes_and_diameters(net, links, diam):
    assert len(net.links()) == links and diameter(net) == diam


def one_transfer(dst, model, p=8, words=50):
    def program(me, p, data):
        if me == 0:
            yield send(dst, data)
        elif me == dst:
            return (yield recv(0))
    return simulate(program, p, inputs=[list(range(words))] + [None] * (p - 1),
                    network=LinearArray(p), model=model)


@pytest.mark.parametrize("dst", range(1, 8))
def test_cut_through_and_store_and_forward_closed_forms(dst):
    cut = CostModel(ts=10, tw=1, th=2, routing="cut-through")
    saf = CostModel(ts=10, tw=1, th=2, routing="store-and-forward")
    assert one_transfer(dst, cut).time == cut.transfer_time(50, dst) == 10 + 2 * dst + 50
    assert one_transfer(dst, saf).time == saf.transfer_time(50, dst) == 10 + 52 * dst


def test_cut_through_and_store_and_forward_numbers_of_the_chapter():
    assert one_transfer(7, CostModel(ts=10, tw=1, th=2, routing="cut-through")).time == 74
    assert one_transfer(7, CostModel(ts=10, tw=1, th=2, routing="store-and-forward")).time == 374


def test_four_transfers_across_the_middle_of_a_line_take_four_times_as_long():
    crowded = shift_by_half(LinearArray(8))
    neighbour = simulate(one_message, 2, inputs=[[0], None], network=LinearArray(2))
    assert crowded.time == 4 * neighbour.time == 4
    assert crowded.link_load[(3, 4)] == 4 and crowded.max_link_load() == 4


@pytest.mark.parametrize("net, time, load", [(LinearArray(8), 4, 4), (Ring(8), 4, 4),
                                             (Hypercube(3), 1, 1), (FullyConnected(8), 1, 1)])
def test_shift_by_half_on_each_network(net, time, load):
    run = shift_by_half(net)
    assert run.time == time and run.max_link_load() == load
    if load == 4:
        assert run.link_load[(3, 4)] == 4


def test_tiny_tree_trace():
    run = simulate(tiny_tree, 4, inputs=[[7, 8, 9, 10], None, None, None],
                   model=CostModel(ts=2, tw=1))
    assert run.time == 12 and run.finish_times == [12, 12, 12, 12]
    assert [(m.src, m.dst, m.start, m.end) for m in run.messages] == [
        (0, 1, 0, 6), (0, 2, 6, 12), (1, 3, 6, 12)]
    again = simulate(tiny_tree, 4, inputs=[[7, 8, 9, 10], None, None, None],
                     model=CostModel(ts=2, tw=1))
    assert again.messages == run.messages and again.results == run.results


@pytest.mark.parametrize("program, p, inputs, error", [
    (listen_first, 2, ["a", "b"], DeadlockError),
    (forgot_yield, 2, ["a", None], DeadlockError),
    (one_too_many, 2, ["a", None], UnreceivedMessageError),
    (off_by_one, 4, [1, None, None, None], ValueError)])
def test_the_four_bugs_are_reported(program, p, inputs, error):
    with pytest.raises(error):
        simulate(program, p, inputs)


def test_an_operation_built_without_yield_is_never_sent():
    # §0.8: forgot_yield deadlocks because the send never happened; without a waiting
    # receiver the same slip goes through with no message at all.
    with pytest.raises(DeadlockError, match="PE 1"):
        simulate(forgot_yield, 2, ["a", None])

    def built_only(me, p, data):
        if me == 0:
            send(1, data)
        yield compute(1)
        return data

    run = simulate(built_only, 2, ["a", None])
    assert run.messages == [] and run.time == 1


def endless_token(me, p, data):
    while True:
        data = yield sendrecv((me + 1) % p, data, (me - 1) % p)


@pytest.mark.parametrize("p", [2, 3, 4, 7])
def test_an_endless_token_never_deadlocks_and_stops_at_the_budget(p):
    # §0.8: every PE always has a message to pass on, so no budget is too large to run
    # out: the run ends at the operation limit, never in a deadlock.
    for max_ops in (10, 100, 1000):
        with pytest.raises(OperationLimitError, match=f"max_ops={max_ops:,}"):
            simulate(endless_token, p, inputs=list(range(p)), max_ops=max_ops)
    with pytest.raises(OperationLimitError, match=r"default_max_ops\(4\).*PE \d+"):
        simulate(endless_token, 4, inputs=[0, 1, 2, 3])


# A note on the model: SimGrid. The chapter prints the stored results of
# benchmarks/simgrid_compare.py; our column of them must be what the simulator gives today.
SIMGRID_RESULTS = Path(__file__).resolve().parents[2] / "benchmarks" / "simgrid_results.json"


def gather_at_once(me, p, data):
    if me == 0:
        return (yield multi(recvs=list(range(1, p))))   # every receive posted together
    yield send(0, data)


@pytest.fixture(scope="module")
def simgrid():
    return json.loads(SIMGRID_RESULTS.read_text(encoding="utf-8"))


def test_our_column_of_the_simgrid_table_is_what_the_simulator_gives(simgrid):
    # the agreeing points: the catalog's programs on FullyConnected(p), full-duplex, and
    # the stored "agree" says whether the stored SimGrid time is ours within the tolerance
    ts, tw = simgrid["ts"], simgrid["tw"]
    assert len(simgrid["points"]) == 27
    for row in simgrid["points"]:
        p, m = row["p"], row["m"]
        ours = catalog()[row["program"]].simulate(p, m, model=CostModel(ts=ts, tw=tw),
                                                  network=FullyConnected(p), trace=False).time
        assert ours == row["ours"], (row, ours)
        assert row["agree"] == (abs(ours - row["simgrid"]) < simgrid["tolerance"] * ours), row


def test_the_gathers_where_simgrid_and_we_differ_are_stored_as_we_run_them(simgrid):
    # the naive gather receives in turn, the chapter's gather_at_once posts every receive
    # together; SimGrid's stored time for the latter pays one start-up, ts + (p-1) tw m
    ts, tw = simgrid["ts"], simgrid["tw"]
    kinds = {row["receives"] for row in simgrid["differ"]}
    assert kinds == {"in turn", "at once"}
    for row in simgrid["differ"]:
        p, m = row["p"], row["m"]
        for ports, column in (("full-duplex", "ours_full_duplex"), ("all", "ours_all")):
            model = CostModel(ts=ts, tw=tw, ports=ports)
            if row["receives"] == "in turn":
                ours = catalog()["naive_gather"].simulate(
                    p, m, model=model, network=FullyConnected(p), trace=False).time
            else:
                ours = simulate(gather_at_once, p, inputs=[list(range(m))] * p,
                                model=model).time
            assert ours == row[column], (row, ports, ours)
        if row["receives"] == "at once":
            assert row["simgrid"] == ts + (p - 1) * tw * m, row
