"""Networks route deterministically, number their links, and keep a bounded number of routes."""
import pytest

from collective_lib import (CostModel, FullyConnected, Hypercube, LinearArray, Mesh, Ring,
                            TwoLevel, simulate)
from collective_lib.algorithms.personalized import alltoall_cyclic
from collective_lib.networks import ROUTE_CACHE_SIZE


def test_route_cache_stays_bounded_after_a_cyclic_all_to_all_on_a_torus():
    torus = Mesh(12, 12, wrap=True)          # 144 * 143 = 20,592 distinct routes
    p = torus.p
    data = [[i * p + j for j in range(p)] for i in range(p)]
    model = CostModel(ts=1.0, tw=0.0, ports="full-duplex")
    run = simulate(alltoall_cyclic, p, data, network=torus, trace=False, model=model)
    assert run.results[5] == [i * p + 5 for i in range(p)]
    assert torus._route.cache_info().currsize == 0     # untraced runs route by link ids
    traced = simulate(alltoall_cyclic, p, data, network=torus, model=model)
    assert traced.link_load == run.link_load and len(traced.messages) == p * (p - 1)
    assert torus._route.cache_info().currsize == 0     # traced paths come from the routes
    assert all(m.path == torus.path(m.src, m.dst) for m in traced.messages)
    info = torus._route.cache_info()
    assert info.misses > ROUTE_CACHE_SIZE
    assert info.currsize <= ROUTE_CACHE_SIZE


def test_evicted_routes_are_recomputed_identically():
    ring = Ring(ROUTE_CACHE_SIZE + 8)
    first = ring.path(0, 5)
    for dst in range(1, ring.p):               # push every other route through the cache
        ring.path(1, dst)
    assert ring.path(0, 5) == first == ((0, 1), (1, 2), (2, 3), (3, 4), (4, 5))


@pytest.mark.parametrize("network", [
    FullyConnected(5), Ring(1), Ring(2), Ring(7), Ring(8), LinearArray(6),
    Mesh(1, 4), Mesh(3, 2), Mesh(3, 4), Mesh(2, 2, wrap=True), Mesh(3, 5, wrap=True),
    Hypercube(0), Hypercube(4)], ids=repr)
def test_link_ids_name_the_links_of_each_path_one_to_one(network):
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
    if not network.direct:
        assert {network.link_pair(network.link_id(u, v)) for u, v in network.links()} \
            == set(network.links())


@pytest.mark.parametrize("network", [FullyConnected(5), LinearArray(6), Ring(7), Mesh(3, 4),
                                     Mesh(3, 4, wrap=True), Hypercube(4), TwoLevel(3, 4)],
                         ids=repr)
def test_link_pairs_holds_each_link_s_pair_at_its_id_and_none_elsewhere(network):
    pairs = network.link_pairs()
    assert len(pairs) == network.link_count
    named = {network.link_id(u, v): (u, v) for u, v in network.links()}
    assert {link: pair for link, pair in enumerate(pairs) if pair is not None} == named
    assert all(network.link_pair(link) == pair for link, pair in named.items())
