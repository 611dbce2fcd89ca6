"""The simulator under LogGP (Culler et al. 1993; Alexandrov et al. 1995): times by hand.

A send holds its PE's CPU for the overhead o and completes then; its message holds the
sender's injection stream for max(g, (m - 1) G), arrives o + (m - 1) G + L after its
start (later if the receiver's reception stream is busy), and the receiver's CPU takes
it in for o (``LogGPModel``'s docstring has every rule).  Small cases are computed by
hand here, catalog programs and random ones against the reference engine
(``tests/reference_engine.py``), and one comparison shows an algorithm that wins under
``ts + tw m`` losing under LogGP.
"""
import math
import random
from functools import partial

import pytest

from collective_lib import (CostModel, FullyConnected, LogGPModel, Ring, TwoLevel, catalog,
                            compute, multi, recv, send, sendrecv, simulate)
from reference_engine import random_program, reference

MODEL = LogGPModel(L=5, o=1, g=2, G=0.5)


def _ping(me, p, data):
    if me == 0:
        yield send(1, data)
        return None
    return (yield recv(0))


def _root_sends(me, p, data, words=1):
    """PE 0 sends ``words`` words to each other PE in turn (a naive broadcast)."""
    if me == 0:
        for dst in range(1, p):
            yield send(dst, data, words)
        return data
    return (yield recv(0))


# -- hand-computed times ---------------------------------------------------------------------

def test_a_single_send_frees_its_sender_after_o_and_arrives_after_o_wire_and_latency():
    run = simulate(_ping, 2, [[1, 2, 3], None], model=MODEL)
    # start 0; the sender is free at o = 1; arrival o + 2 G + L = 7; taken in by 8
    assert run.finish_times == [1, 8] and run.time == 8 == MODEL.message_time(3)
    assert [(m.start, m.end, m.words) for m in run.messages] == [(0, 7, 3)]
    assert run.results == [None, [1, 2, 3]] and dict(run.link_load) == {(0, 1): 1}


@pytest.mark.parametrize("model, words, starts", [
    (LogGPModel(L=5, o=1, g=2, G=0), 1, [0, 2, 4]),        # gap-limited: g > o
    (LogGPModel(L=5, o=3, g=1, G=0), 1, [0, 3, 6]),        # overhead-limited: o > g
    (LogGPModel(L=5, o=1, g=1, G=1), 5, [0, 4, 8]),        # long messages: (m - 1) G > g, o
])
def test_a_chain_of_sends_from_one_pe_is_spaced_by_the_larger_of_o_g_and_the_wire(
        model, words, starts):
    run = simulate(_root_sends, 4, [7, None, None, None], model=model, words=words)
    wire = (words - 1) * model.G
    assert [m.start for m in run.messages] == starts
    assert [m.end for m in run.messages] == [s + model.o + wire + model.L for s in starts]
    assert run.finish_times == [starts[-1] + model.o] + [
        s + model.o + wire + model.L + model.o for s in starts]


def test_a_ping_pong_takes_two_isolated_messages():
    def ping_pong(me, p, data):
        if me == 0:
            yield send(1, data)
            return (yield recv(1))
        got = yield recv(0)
        yield send(0, got + 1)
        return got
    run = simulate(ping_pong, 2, [1, None], model=MODEL)
    # 0 -> 1: start 0, arrives 6, taken in by 7; 1 -> 0: start 7, arrives 13, taken by 14
    assert [(m.start, m.end) for m in run.messages] == [(0, 6), (7, 13)]
    assert run.finish_times == [14, 8] and run.time == 2 * MODEL.message_time(1)
    assert run.results == [2, 1]


def test_sendrecv_takes_its_message_in_after_its_own_send_overhead():
    def swap(me, p, data):
        return (yield sendrecv(1 - me, data, 1 - me))
    run = simulate(swap, 2, ["a", "b"], model=MODEL)
    assert run.finish_times == [7, 7] and run.results == ["b", "a"]   # o + L, then o

    def late(me, p, data):
        if me == 0:
            yield send(1, data)
            return (yield recv(1))
        yield compute(10)
        return (yield sendrecv(0, data, 0))
    run = simulate(late, 2, ["a", "b"], model=MODEL)
    # PE 1 at 10: its send holds its CPU until 11, then it takes "a" (there since 6) by 12;
    # its message starts at 10, arrives 16, and PE 0 has it by 17.
    assert run.finish_times == [17, 12] and run.results == ["b", "a"]
    assert [(m.start, m.end) for m in run.messages] == [(0, 6), (10, 16)]


def test_multi_injects_its_sends_in_order_and_takes_in_its_messages_one_by_one():
    model = LogGPModel(L=5, o=1, g=2, G=0)

    def star(me, p, data):
        if me == 0:
            return (yield multi([(dst, data, 1) for dst in range(1, p)], list(range(1, p))))
        return (yield sendrecv(0, me, 0))
    run = simulate(star, 4, [0, 1, 2, 3], model=model)
    # PE 0 injects at 0, 2, 4 (g); PE i injects at 0, and PE 0's reception stream spaces
    # the arrivals g apart: 6, 8, 10; PE 0's CPU takes each in for o: by 7, 9, 11.
    assert [(m.src, m.dst, m.start, m.end) for m in run.messages] == [
        (0, 1, 0, 6), (0, 2, 2, 8), (0, 3, 4, 10), (1, 0, 0, 6), (2, 0, 0, 8), (3, 0, 0, 10)]
    assert run.finish_times == [11, 7, 9, 11] and run.results == [[1, 2, 3], 0, 0, 0]


def test_half_duplex_gives_a_pe_one_stream_for_its_sends_and_its_receptions():
    def swap(me, p, data):
        return (yield sendrecv(1 - me, data, 1 - me))
    for ports, finish in (("full-duplex", [5, 5]), ("half-duplex", [9, 6])):
        run = simulate(swap, 2, ["a", "b"], model=LogGPModel(L=3, o=1, g=4, ports=ports))
        assert run.finish_times == finish, ports
    # Half-duplex: PE 0's message (start 0, arrives 4) holds PE 1's one stream over [0, 4]
    # (g before its arrival), so PE 1's own message starts at 4 and holds PE 1's stream
    # until 8; it arrives at 4 + o + L = 8, when PE 0's stream is free again (its own
    # message held it until 0 + g = 4, and a reception needs g more); PE 0 has it by 9.
    # PE 1 takes "a" (there since 4) once its CPU is free at 4 + o = 5: by 6.
    assert [(m.start, m.end) for m in run.messages] == [(0, 4), (4, 8)]


# -- the mapping to ts + tw m ------------------------------------------------------------------

@pytest.mark.parametrize("cost, o", [(CostModel(ts=3, tw=0.5), 0), (CostModel(ts=3, tw=0.5), 1),
                                     (CostModel(ts=2, tw=0, th=1), 0.25)])
def test_one_message_takes_what_the_cost_model_it_maps_to_says(cost, o):
    model = LogGPModel.from_cost_model(cost, o=o)
    assert (model.G, model.g, model.o) == (cost.tw, cost.tw, o)
    assert model.L == cost.ts + cost.th + cost.tw - 2 * o
    for words in (1, 2, 7, 30):
        loggp = simulate(_ping, 2, [list(range(words)), None], model=model).time
        assert loggp == pytest.approx(cost.transfer_time(words))
        assert loggp == pytest.approx(model.as_cost_model().transfer_time(words))
        assert model.message_time(words) == pytest.approx(model.ts + model.tw * words)


def test_as_cost_model_and_back():
    model = LogGPModel(L=4, o=0.5, g=1, G=0.25, ports="half-duplex")
    back = LogGPModel.from_cost_model(model.as_cost_model(), o=model.o, g=model.g)
    assert back == model and model.as_cost_model() == CostModel(ts=4.75, tw=0.25,
                                                                ports="half-duplex")


def test_broadcast_best_under_ts_tw_loses_under_loggp():
    """Binomial beats the root's p - 1 sends under ts + tw m; under LogGP the root's sends
    overlap after o (here g), so the naive broadcast wins: log p latencies against one."""
    model, p = LogGPModel(L=10, o=0.5, g=1, G=0), 8
    cost = model.as_cost_model()                 # ts = 2 o + L - G = 11, one message each
    times = {}
    for name in ("naive_broadcast", "binomial_broadcast"):
        entry = catalog()[name]
        times[name] = tuple(entry.simulate(p, 1, model=m, network=FullyConnected(p)).time
                            for m in (cost, model))
    assert times["naive_broadcast"] == (7 * 11, 6 * 1 + 0.5 + 10 + 0.5)   # last send at 6
    assert times["binomial_broadcast"] == (3 * 11, 3 * (0.5 + 10 + 0.5))
    assert times["binomial_broadcast"][0] < times["naive_broadcast"][0]
    assert times["naive_broadcast"][1] < times["binomial_broadcast"][1]


# -- against the reference engine --------------------------------------------------------------

def _random_model(rng):
    """Parameters in eighths, so that both engines add exactly."""
    return LogGPModel(L=rng.randint(0, 40) / 8, o=rng.randint(0, 16) / 8,
                      g=rng.randint(0, 24) / 8, G=rng.randint(0, 8) / 8,
                      ports=rng.choice(["full-duplex", "half-duplex"]))


@pytest.mark.parametrize("name", ["binomial_broadcast", "all_to_all_bc_ring",
                                  "recursive_doubling_allreduce", "naive_gather"])
def test_catalog_programs_agree_with_the_reference(name):
    entry, rng, ran = catalog()[name], random.Random(name), 0
    for p in (1, 2, 3, 5, 8, 13):
        m = 3
        if not entry.accepts(p, m):
            continue
        model, inputs = _random_model(rng), entry.make_inputs(p, m, seed=p)
        run = entry.simulate(p, m, inputs=inputs, network=FullyConnected(p), model=model)
        where = f"{name}, p={p}, {model!r}"
        assert run.results == entry.expected(inputs), where
        results, finish, messages, loads, ops = reference(
            partial(entry.program, **entry.params), p, inputs, FullyConnected(p), model)
        assert (run.finish_times, run.messages, list(run.link_load.items()), run.operations) \
            == (finish, messages, loads, ops), where
        ran += 1
    assert ran >= 4


def test_random_programs_agree_with_the_reference():
    for seed in range(12):
        rng = random.Random(seed)
        model, p = _random_model(rng), rng.choice([2, 3, 5, 8])
        program = random_program(p, seed)
        run = simulate(program, p, None, model=model)
        assert (run.results, run.finish_times, run.messages, list(run.link_load.items()),
                run.operations) == reference(program, p, [None] * p, FullyConnected(p), model), \
            (seed, p, model)


def test_a_large_run_without_a_trace_counts_its_channels():
    p, entry = 1100, catalog()["binomial_broadcast"]    # beyond 1024: channels in a dict
    inputs = entry.make_inputs(p, 1, seed=0)
    run = entry.simulate(p, 1, inputs=inputs, model=MODEL, trace=False)
    assert run.messages == [] and sum(run.link_load.values()) == p - 1
    _, finish, _, loads, _ = reference(partial(entry.program, **entry.params), p, inputs,
                                       FullyConnected(p), MODEL)
    assert run.finish_times == finish and list(run.link_load.items()) == loads
    # the root's sends overlap: sooner than ceil(log2 p) isolated messages in a row
    assert run.time < math.ceil(math.log2(p)) * MODEL.message_time(1)


# -- what is refused ------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs, message", [
    ({"L": -1}, "LogGPModel L must be a finite non-negative number, got -1"),
    ({"o": float("nan")}, "LogGPModel o must be a finite non-negative number, got nan"),
    ({"g": float("inf")}, "LogGPModel g must be a finite non-negative number, got inf"),
    ({"G": True}, "LogGPModel G must be a finite non-negative number, got True"),
    ({"G": "1"}, "LogGPModel G must be a finite non-negative number, got '1'"),
    ({"ports": "all"}, "LogGPModel ports must be 'full-duplex' .* got 'all'"),
])
def test_bad_parameters_are_refused_by_name(kwargs, message):
    with pytest.raises(ValueError, match=message):
        LogGPModel(**kwargs)


def test_mappings_that_would_need_negative_times_are_refused():
    with pytest.raises(ValueError, match=r"G=5 > 2 o \+ L = 3: ts = 2 o \+ L - G would be "
                                         r"negative"):
        LogGPModel(L=1, o=1, G=5).as_cost_model()
    with pytest.raises(ValueError, match="o=2 is too large for CostModel.*would be -1.0"):
        LogGPModel.from_cost_model(CostModel(ts=3), o=2)


@pytest.mark.parametrize("network", [TwoLevel(2, 2), Ring(4)], ids=repr)
def test_loggp_runs_only_on_a_fully_connected_network(network):
    with pytest.raises(ValueError, match=rf"a LogGPModel has no links and no levels .* "
                                         rf"got network={network!r}".replace("(", r"\(")
                       .replace(")", r"\)")):
        simulate(_ping, 4, model=MODEL, network=network)
