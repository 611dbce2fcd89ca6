"""The simulator's inline event loop against a slow, obviously correct reference engine.

The reference (``tests/reference_engine.py``) is the simulator as it was written
before its loop was flattened for speed.  Random programs on every network,
port model and routing must give both the same results, finish times, messages
(in order), link loads (in order of first use) and errors.
"""
import gc

import pytest

from collective_lib import (CostModel, DeadlockError, FullyConnected, Hypercube, LinearArray,
                            Mesh, Ring, TwoLevel, TwoLevelModel, UnreceivedMessageError,
                            recv, send, sendrecv, simulate)
from reference_engine import random_program, reference


NETWORKS = [FullyConnected(6), Ring(6), LinearArray(5), Mesh(2, 3), Mesh(3, 3, wrap=True),
            Hypercube(3), TwoLevel(3, 2), TwoLevel(2, 3)]
MODELS = [CostModel(ts=1.1, tw=0.3, th=0.7, ports=ports, routing=routing)
          for ports in ("full-duplex", "half-duplex", "all")
          for routing in ("cut-through", "store-and-forward")]
# A model per level: every pair of port models, the routings crossed with them.
TWO_LEVEL_MODELS = [TwoLevelModel(inside=CostModel(ts=0.2, tw=0.1, th=0.3, ports=inside,
                                                   routing=MODELS[k % 2].routing),
                                  between=CostModel(ts=1.7, tw=0.9, th=0.4, ports=between,
                                                    routing=MODELS[(k + 1) % 2].routing))
                    for k, (inside, between) in enumerate(
                        (a, b) for a in ("full-duplex", "half-duplex", "all")
                        for b in ("full-duplex", "half-duplex", "all"))]


def outcome(run_it):
    """What a run gives, or the error it raises with everything the error says."""
    try:
        return run_it()
    except (DeadlockError, UnreceivedMessageError) as err:
        return type(err).__name__, str(err), getattr(err, "time", None)


@pytest.mark.parametrize("network", NETWORKS, ids=repr)
@pytest.mark.parametrize("model", MODELS, ids=lambda m: f"{m.ports}-{m.routing}")
def test_the_simulator_and_the_reference_agree_on_random_programs(network, model):
    kinds = set()
    for seed in range(4):
        program = random_program(network.p, seed)
        inputs = [None] * network.p

        def ours():
            run = simulate(program, network.p, inputs, network=network, model=model)
            return (run.results, run.finish_times, run.messages, list(run.link_load.items()),
                    run.operations)
        expected = outcome(lambda: reference(program, network.p, inputs, network, model))
        assert outcome(ours) == expected
        kinds.add(expected[0] if isinstance(expected[0], str) else "ok")
    assert kinds == {"ok"} or model.ports == "half-duplex"


def _levels(model):
    return f"{model.inside.ports}-{model.inside.routing}-then-{model.between.ports}"


@pytest.mark.parametrize("network", [TwoLevel(1, 5), TwoLevel(5, 1), TwoLevel(3, 2),
                                     TwoLevel(2, 3), TwoLevel(2, 4)], ids=repr)
@pytest.mark.parametrize("model", TWO_LEVEL_MODELS, ids=_levels)
def test_the_simulator_and_the_reference_agree_on_two_levels(network, model):
    half = "half-duplex" in (model.inside.ports, model.between.ports)
    kinds = set()
    for seed in range(4):
        program = random_program(network.p, seed)
        inputs = [None] * network.p

        def ours():
            run = simulate(program, network.p, inputs, network=network, model=model)
            return (run.results, run.finish_times, run.messages, list(run.link_load.items()),
                    run.operations)
        expected = outcome(lambda: reference(program, network.p, inputs, network, model))
        assert outcome(ours) == expected
        kinds.add(expected[0] if isinstance(expected[0], str) else "ok")
    assert kinds == {"ok"} or half


def test_a_streamed_trace_sees_the_messages_a_recorded_trace_keeps():
    program, p = random_program(6, 1), 6
    model = CostModel(ts=1, tw=0.5, ports="all")
    recorded = simulate(program, p, network=Ring(p), model=model)
    streamed = []
    run = simulate(program, p, network=Ring(p), model=model, trace=streamed.append)
    assert streamed == recorded.messages and run.messages == []
    assert run.results == recorded.results and run.link_load == recorded.link_load
    silent = simulate(program, p, network=Ring(p), model=model, trace=False)
    assert silent.messages == [] and silent.finish_times == recorded.finish_times


def test_traced_messages_share_the_network_s_path_tuples():
    def ring_allgather(me, p, data):
        got = [data]
        for _ in range(p - 1):
            got.append((yield sendrecv((me + 1) % p, got[-1], (me - 1) % p)))
        return got
    for network in (FullyConnected(8), Ring(8)):
        run = simulate(ring_allgather, 8, list(range(8)), network=network)
        assert len({id(m.path) for m in run.messages}) == 8


def test_a_channel_s_messages_share_its_path_whatever_operation_sent_them():
    def twice(me, p, data):                     # a send, then a sendrecv, on channel 0 -> dst
        dst = p - 1
        if me == 0:
            yield send(dst, "first")
            yield sendrecv(dst, "second", dst)
        elif me == dst:
            yield recv(0)
            yield sendrecv(0, "back", 0)
    one, two = (tuple(m for m in simulate(twice, p, network=LinearArray(p)).messages
                      if m.src == 0) for p in (2, 3))
    assert one[0].path == ((0, 1),) and one[0].path is one[1].path      # one link: kept
    assert two[0].path == two[1].path == ((0, 1), (1, 2))               # two: made afresh,
    assert all(a is b for a, b in zip(two[0].path, two[1].path))        # of shared pairs


def test_the_paths_of_routes_of_several_links_share_each_link_s_pair():
    def everyone_to_everyone(me, p, data):          # every channel once, over E-cube routes
        for k in range(1, p):
            yield sendrecv(me ^ k, me, me ^ k)
    network = Hypercube(3)
    run = simulate(everyone_to_everyone, 8, network=network)
    assert [m.path for m in run.messages] == [network.path(m.src, m.dst) for m in run.messages]
    pairs = [pair for m in run.messages if len(m.path) > 1 for pair in m.path]
    assert len(pairs) == 8 * (3 * 2 + 1 * 3) > len({id(pair) for pair in pairs}) == \
        len(set(pairs)) == 24                        # each link's pair made once


def test_paths_on_a_network_of_more_links_than_routes_kept_are_made_link_by_link():
    def far(me, p, data):                           # two messages over three links each
        if me in (0, 3):
            yield sendrecv(3 - me, me, 3 - me)
    network = Ring(33_000)                          # 66,000 links: no table of their pairs
    run = simulate(far, network.p, network=network)
    assert network.link_count > 1 << 16
    assert [m.path for m in run.messages] == [((0, 1), (1, 2), (2, 3)), ((3, 2), (2, 1), (1, 0))]


def test_trace_must_be_a_bool_or_a_callable():
    with pytest.raises(TypeError, match="trace must be True, False or a callable"):
        simulate(lambda me, p, data: (yield from ()), 2, trace="yes")


def test_the_garbage_collector_is_back_on_after_a_run_even_a_failing_one():
    def cycle(me, p, data):
        yield recv((me + 1) % p)
    assert gc.isenabled()
    with pytest.raises(DeadlockError):
        simulate(cycle, 3)
    assert gc.isenabled()
    gc.disable()
    try:
        simulate(random_program(4, 0), 4)
        assert not gc.isenabled()             # a caller's choice is kept
    finally:
        gc.enable()
