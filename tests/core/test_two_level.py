"""Two-level networks: nodes of PEs, a cost model per level, contention on a node's link.

Every catalog program runs unchanged on ``TwoLevel`` networks of every node size
(one PE per node, one node, and shapes whose p is not a power of two), under
one model and under a model per level: it returns what it returns on a fully
connected network, and its times are the reference engine's.
"""
from functools import partial

import pytest

from collective_lib import (CostModel, FullyConnected, Ring, TwoLevel, TwoLevelModel, catalog,
                            compute, multi, recv, send, sendrecv,
                            simulate)
from reference_engine import reference


# -- the network ----------------------------------------------------------------------------

SHAPES = [(1, 1), (1, 5), (5, 1), (2, 2), (2, 3), (3, 2), (2, 4), (3, 4), (4, 3)]


@pytest.mark.parametrize("nodes, per_node", SHAPES)
def test_link_ids_name_the_links_of_each_path_one_to_one(nodes, per_node):
    network = TwoLevel(nodes, per_node)
    names = {}
    for src in range(network.p):
        for dst in range(network.p):
            if src == dst:
                continue
            ids = network.link_ids(src, dst)
            assert tuple(map(network.link_pair, ids)) == network.path(src, dst)
            for link, pair in zip(ids, network.path(src, dst)):
                assert 0 <= link < network.link_count and network.link_id(*pair) == link
                assert names.setdefault(link, pair) == pair
            assert len(ids) == 1 + network.level(src, dst)
    assert {network.link_pair(network.link_id(u, v)) for u, v in network.links()} \
        == set(network.links()) == set(names.values())
    inside = nodes * per_node * (per_node - 1)
    assert len(network.links()) == inside + (2 * nodes if nodes > 1 else 0)


def test_a_route_between_nodes_takes_the_sender_node_s_uplink_and_the_receiver_node_s_downlink():
    net = TwoLevel(3, 4)
    assert [net.node_of(pe) for pe in (0, 3, 4, 11)] == [0, 0, 1, 2]
    assert net.switch == 15 and [net.gateway(n) for n in range(3)] == [12, 13, 14]
    uplink, downlink = (net.gateway(0), net.switch), (net.switch, net.gateway(2))
    for src in range(4):
        for dst in range(8, 12):
            assert net.path(src, dst) == (uplink, downlink)
    assert net.path(5, 6) == ((5, 6),) and net.level(5, 6) == 0 and net.level(3, 4) == 1
    assert TwoLevel.of_size(12, 4) == net and net != TwoLevel(4, 3)
    assert repr(net) == "TwoLevel(3, 4)" and not net.direct


@pytest.mark.parametrize("call, message", [
    (lambda: TwoLevel(0, 4), "nodes must be an integer >= 1, got 0"),
    (lambda: TwoLevel(2, 2.0), "per_node must be an integer >= 1, got 2.0"),
    (lambda: TwoLevel(True, 2), "nodes must be an integer >= 1, got True"),
    (lambda: TwoLevel.of_size(10, 4), "needs p to be a multiple of 4, got p=10"),
    (lambda: TwoLevel.of_size(0, 4), "p must be an integer >= 1, got 0"),
    (lambda: TwoLevelModel().level(2), r"level must be 0 \(inside a node\) or 1"),
])
def test_bad_shapes_and_levels_are_refused_by_name(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_a_model_per_level_needs_cost_models_and_a_two_level_network():
    with pytest.raises(TypeError, match="TwoLevelModel between must be a CostModel, got 3"):
        TwoLevelModel(inside=CostModel(), between=3)
    with pytest.raises(TypeError, match=r"model must be a CostModel, a LogGPModel, or a "
                                        r"TwoLevelModel on a TwoLevel network; got "
                                        r"model=TwoLevelModel\(.*\) on "
                                        r"network=Ring\(4\)"):
        simulate(_to_next_node, 4, network=Ring(4), model=TwoLevelModel())
    with pytest.raises(TypeError, match="got model='fast' on network=TwoLevel"):
        simulate(_to_next_node, 4, network=TwoLevel(2, 2), model="fast")


# -- contention on a node's external link ---------------------------------------------------

def _to_next_node(me, p, data, per_node=2):
    """Every PE sends one word to its counterpart on the next node and receives from the last."""
    dst, src = (me + per_node) % p, (me - per_node) % p
    return (yield sendrecv(dst, me, src))


LEVELS = TwoLevelModel(inside=CostModel(ts=1, tw=0.5), between=CostModel(ts=10, tw=2))


@pytest.mark.parametrize("per_node", [1, 2, 3, 5])
def test_the_pes_of_a_node_queue_for_its_uplink(per_node):
    # Each PE of a node sends to the next node at once: the node's uplink carries them one
    # after the other, so the last arrives after per_node transfers of 10 + 2 * 1.
    net = TwoLevel(3, per_node)
    run = simulate(partial(_to_next_node, per_node=per_node), net.p, network=net, model=LEVELS)
    assert run.results == [(me - per_node) % net.p for me in range(net.p)]
    assert sorted({m.end for m in run.messages}) == [12.0 * k for k in range(1, per_node + 1)]
    assert run.time == 12.0 * per_node
    for node in range(3):
        assert run.link_load[(net.gateway(node), net.switch)] == per_node
        assert run.link_load[(net.switch, net.gateway(node))] == per_node
    # The same traffic on a fully connected network: no link is shared, one step.
    flat = simulate(partial(_to_next_node, per_node=per_node), net.p,
                    model=CostModel(ts=10, tw=2))
    assert flat.results == run.results and flat.time == 12.0


def _inside_and_out(me, p, data):
    """PE 0 sends to PE 1 (its node) and to PE 2 (the other node) at once."""
    if me == 0:
        yield multi([(1, "near", 1), (2, "far", 1)])
    elif me in (1, 2):
        return (yield recv(0))


def test_each_level_has_its_own_ports_under_a_model_per_level():
    net = TwoLevel(2, 2)
    two = simulate(_inside_and_out, 4, network=net, model=LEVELS)
    assert [(m.dst, m.start, m.end) for m in two.messages] == [(1, 0.0, 1.5), (2, 0.0, 12.0)]
    # One CostModel: one send port for both levels, so the second send waits for the first.
    one = simulate(_inside_and_out, 4, network=net, model=CostModel(ts=1, tw=0.5))
    assert [(m.dst, m.start, m.end) for m in one.messages] == [(1, 0.0, 1.5), (2, 1.5, 3.0)]
    assert two.results == one.results == [None, "near", "far", None]


def test_a_half_duplex_level_waits_for_its_receiver_and_the_other_level_does_not():
    def late_receivers(me, p, data):
        if me == 0:
            yield send(1, "near")               # its own node, full-duplex: eager
            yield send(2, "far")                # between nodes, half-duplex: waits for PE 2
        elif me in (1, 2):
            yield compute(2 * me + 1)           # PE 1 listens at 3, PE 2 at 5
            return (yield recv(0))
    model = TwoLevelModel(inside=CostModel(ts=1), between=CostModel(ts=2, ports="half-duplex"))
    run = simulate(late_receivers, 4, network=TwoLevel(2, 2), model=model)
    assert run.results == [None, "near", "far", None]
    assert [(m.payload, m.start, m.end) for m in run.messages] == [("near", 0.0, 1.0),
                                                                   ("far", 5.0, 7.0)]
    assert run.finish_times == [7.0, 3.0, 7.0, 0.0]
    assert reference(late_receivers, 4, [None] * 4, TwoLevel(2, 2), model)[1] == [7, 3, 7, 0]


# -- every catalog program, unchanged ---------------------------------------------------------

def _models(entry):
    """A model per level with the entry's ports (inside a node cheap, between nodes dear),
    one with shared memory inside ("all") where the entry's ports allow, and one CostModel."""
    inside, between = entry.ports, entry.ports
    models = [TwoLevelModel(inside=CostModel(ts=1, tw=0.25, ports=inside),
                            between=CostModel(ts=6, tw=1.5, th=0.5, ports=between))]
    if entry.ports == "full-duplex":
        models.append(TwoLevelModel(inside=CostModel(ts=0.5, tw=0.125, ports="all"),
                                    between=CostModel(ts=4, tw=1, ports="full-duplex",
                                                      routing="store-and-forward")))
    return models + [CostModel(ts=2, tw=0.5, ports=entry.ports)]


CATALOG_SHAPES = [(1, 4), (4, 1), (2, 3), (3, 2), (2, 4), (4, 2), (3, 3), (5, 2), (2, 5)]


@pytest.mark.parametrize("name", list(catalog()))
def test_every_catalog_program_runs_unchanged_on_two_levels(name):
    entry = catalog()[name]
    ran = 0
    for nodes, per_node in CATALOG_SHAPES:
        p = nodes * per_node
        m = 2 * p
        if not entry.accepts(p, m):
            continue
        network = TwoLevel(nodes, per_node)
        inputs = entry.make_inputs(p, m, seed=p)
        expected = entry.expected(inputs)
        flat = entry.simulate(p, m, inputs=inputs, network=FullyConnected(p), trace=False)
        assert flat.results == expected
        program = partial(entry.program, **entry.params)
        for model in _models(entry):
            run = entry.simulate(p, m, inputs=inputs, network=network, model=model)
            where = f"{name} on {network!r} under {model!r}"
            assert run.results == expected, where
            results, finish, messages, loads, _ = reference(program, p, inputs, network, model)
            assert run.finish_times == finish and run.messages == messages, where
            assert list(run.link_load.items()) == loads, where
        ran += 1
    assert ran >= 2 or not entry.valid(6)


def test_contention_shows_in_a_catalog_program_between_nodes():
    # The ring all-gather's neighbour PEs sit on one node except at the node's edge, so
    # each node's uplink carries one transfer per step: two levels cost exactly
    # (p - 1) steps of the dearer level.  Pairwise exchange all-to-all is different:
    # in many steps every PE of a node talks to another node, and the uplink queues them.
    ring = catalog()["all_to_all_bc_ring"]
    model = TwoLevelModel(inside=CostModel(ts=1), between=CostModel(ts=10))
    run = ring.simulate(8, 1, network=TwoLevel(2, 4), model=model)
    assert run.time == 7 * 10
    assert run.max_link_load() == 7
    pairwise = [e for e in catalog().values() if e.operation == "alltoall"
                and e.ports == "full-duplex" and e.accepts(8, 8)][0]
    flat = pairwise.simulate(8, 8, model=CostModel(ts=10, tw=1))
    two = pairwise.simulate(8, 8, network=TwoLevel(2, 4),
                            model=TwoLevelModel(inside=CostModel(ts=10, tw=1),
                                                between=CostModel(ts=10, tw=1)))
    assert two.results == flat.results and two.time > flat.time
