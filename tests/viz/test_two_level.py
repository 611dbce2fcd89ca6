"""draw_two_level: nodes as boxes of PEs, the switch, each node's external links and their loads."""
import matplotlib.pyplot as plt
import pytest

from collective_lib import CostModel, Ring, TwoLevel, TwoLevelModel, catalog, simulate, viz
from collective_lib.ops import recv, send

MODEL = TwoLevelModel(inside=CostModel(ts=1, tw=0.5), between=CostModel(ts=10, tw=2))


def _gids(ax, gid):
    return [a for a in [*ax.patches, *ax.texts, *ax.lines] if a.get_gid() == gid]


def _to_node_one(me, p, data):
    """Every PE of node 0 (PEs 0 to 2) sends to its counterpart on node 1."""
    if me < 3:
        yield send(me + 3, me)
    else:
        return (yield recv(me - 3))


def test_a_run_s_external_links_carry_their_counts_and_the_text_names_the_busiest():
    run = simulate(_to_node_one, 6, network=TwoLevel(2, 3), model=MODEL)
    ax = viz.draw_two_level(run)
    assert len(_gids(ax, "box")) == 2 and len(_gids(ax, "node")) == 6
    assert len(_gids(ax, "switch")) == 1 and len(_gids(ax, "external")) == 4
    assert len(_gids(ax, "inside")) == 2 * 3                # 3 links in each node of 3
    assert sorted(t.get_text() for t in _gids(ax, "load")) == ["0", "0", "3", "3"]
    assert viz.description(ax.figure) == (
        "A two-level network, 2 nodes of 3 PEs: the PEs of a node (a box) are all linked; "
        "each node has an uplink to a switch and a downlink from it. Inside a node: ts = 1, "
        "tw = 0.5 (full-duplex); between nodes: ts = 10, tw = 2 (full-duplex). Link loads in "
        "colour and width, external ones also as numbers: 3 transfers went between nodes; the "
        "most on one link, 3, on node 0's uplink and 1 other.")
    plt.close(ax.figure)


def test_the_network_alone_one_node_and_one_pe_per_node():
    ax = viz.draw_two_level(TwoLevel(1, 5))
    assert not _gids(ax, "switch") and not _gids(ax, "external") and not _gids(ax, "load")
    assert viz.description(ax.figure) == "A single node of 5 PEs, all linked; no link leaves it."
    plt.close(ax.figure)
    ax = viz.draw_two_level(TwoLevel(6, 1), model=CostModel(ts=2, tw=1))
    assert len(_gids(ax, "box")) == 6 and len(_gids(ax, "external")) == 12
    assert not _gids(ax, "inside")
    assert "Both levels: ts = 2, tw = 1 (full-duplex), one set of ports per PE." in \
        viz.description(ax.figure)
    plt.close(ax.figure)


def test_traffic_that_stays_in_its_node_is_said_so():
    run = simulate(_to_node_one, 6, network=TwoLevel(1, 6))
    ax = viz.draw_two_level(run)
    assert viz.description(ax.figure).endswith(
        "Link loads in colour and width: no transfer left a node; the busiest link carried 1.")
    plt.close(ax.figure)


@pytest.mark.parametrize("nodes, per_node", [(2, 4), (3, 4), (8, 4), (16, 2), (4, 8)])
def test_text_stays_readable_as_the_machine_grows(nodes, per_node):
    run = catalog()["all_to_all_bc_ring"].simulate(nodes * per_node, network=TwoLevel(
        nodes, per_node), model=MODEL, trace=False)
    ax = viz.draw_two_level(run, title="ring all-gather")
    assert viz.smallest_font(ax.figure).px >= viz.MIN_FONT_PX
    assert len(viz.description(ax.figure)) <= 420
    plt.close(ax.figure)


def test_only_two_level_networks_are_drawn():
    with pytest.raises(TypeError, match=r"draws a TwoLevel network \(or a run on one\), "
                                        r"got Ring\(4\)"):
        viz.draw_two_level(Ring(4))
    with pytest.raises(TypeError, match="model must be a TwoLevelModel or a CostModel, got 3"):
        viz.draw_two_level(TwoLevel(2, 2), model=3)


@pytest.mark.parametrize("draw", ["network", "step", "link_load_map"])
def test_the_drawings_of_one_level_refuse_a_two_level_network_by_name(draw):
    from collective_lib import catalog
    from collective_lib.viz import draw_network, draw_step, link_load_map

    net = TwoLevel(2, 2)
    run = catalog()["binomial_broadcast"].simulate(4, network=net)
    call = {"network": lambda: draw_network(net), "step": lambda: draw_step(run, 1),
            "link_load_map": lambda: link_load_map(run)}[draw]
    with pytest.raises(ValueError, match="draw it with viz.draw_two_level"):
        call()
