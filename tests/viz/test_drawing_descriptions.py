"""Every drawing says what it drew, generated from what it drew: exact texts for small
inputs, a summary within the length bound for large ones (issue 29, point 2)."""
import matplotlib.pyplot as plt
import networkx as nx
import pytest

from collective_lib import catalog, viz
from collective_lib.algorithms.sync import barrier_demo, cas_spin_lock, lock_demo, simple_barrier
from collective_lib.embeddings import h_tree
from collective_lib.networks import Hypercube, Mesh, Ring
from collective_lib.shared_memory import simulate_shared

ALGORITHMS = catalog()
#: The longest description of one picture of a large input.
BOUND = 420


def text(drawn):
    return viz.description(drawn if isinstance(drawn, plt.Figure) else drawn.figure)


def _small_multigraph():
    H = nx.MultiGraph()
    H.add_nodes_from([("s", 0), ("s", 1)], bipartite=0)
    H.add_nodes_from([("r", 0), ("r", 1)], bipartite=1)
    H.add_edges_from([(("s", 0), ("r", 1), 0), (("s", 0), ("r", 1), 1),
                      (("s", 1), ("r", 0), 0)])
    return H, {(("s", 0), ("r", 1), 0): 0, (("s", 0), ("r", 1), 1): 1,
               (("s", 1), ("r", 0), 0): 0}


SMALL = {
    "ring": (lambda: viz.draw_network(Ring(4)), "A ring of 4 PEs, 4 links."),
    "mesh": (lambda: viz.draw_network(Mesh(2, 3)), "A 2 x 3 mesh of 6 PEs, 7 links."),
    "hypercube": (lambda: viz.draw_network(Hypercube(3)),
                  "A 3-dimensional hypercube of 8 PEs, 12 links."),
    "link load": (
        lambda: viz.link_load_map(ALGORITHMS["naive_broadcast"].simulate(p=8, network=Ring(8))),
        "A ring of 8 PEs, 8 links. Each directed link is drawn by how many transfers crossed "
        "it (colour and width): 7 directed links carried traffic, the most, 4 transfers, on "
        "0 -> 1."),
    "step": (
        lambda: viz.draw_step(ALGORITHMS["binomial_broadcast"].simulate(p=8), 2),
        "Step 2 of 3 on a fully connected network of 8 PEs: 2 transfers, 0 -> 2 and 4 -> 6; "
        "no two of them share a link. PEs 0 and 4 hold data as it starts; the receivers have "
        "a thick red edge."),
    "steps": (
        lambda: viz.draw_steps(ALGORITHMS["binomial_broadcast"].simulate(p=4)),
        "2 steps of 2 of a run on a fully connected network of 4 PEs, one panel each. Step 1: "
        "1 transfer, 0 -> 2. Step 2: 2 transfers, 0 -> 1 and 2 -> 3; no two of them share a "
        "link."),
    "ring steps": (
        lambda: viz.draw_steps(ALGORITHMS["naive_broadcast"].simulate(p=4, network=Ring(4))),
        "3 steps of 3 of a run on a ring of 4 PEs, one panel each. Step 1: 1 transfer, 0 -> 1. "
        "Step 2: 1 transfer, 0 -> 2. Step 3: 1 transfer, 0 -> 3."),
    "space-time": (
        lambda: viz.space_time(ALGORITHMS["linear_pipeline_broadcast"].simulate(p=4, m=3, k=3)),
        "Space-time diagram of 9 messages among 4 PEs, time to the right; the run takes T = 5. "
        "PEs 2 and 3 finish last. The last transfer, 2 -> 3, ends at 5."),
    "cost curves": (
        lambda: viz.cost_curves(["binomial_broadcast", "naive_broadcast"], values=range(1, 9)),
        "Time against p (m = 1, ts = 1, tw = 0) of binomial_broadcast, naive_broadcast (lines: "
        "closed forms; markers: simulated times). Lowest: binomial_broadcast and "
        "naive_broadcast (equal) from p = 1 to 3; binomial_broadcast from p = 4 to 8."),
    "coinciding curves": (
        lambda: viz.cost_curves(["binomial_broadcast", "hypercube_broadcast"],
                                values=[2, 4, 8], simulate=False),
        "Time against p (m = 1, ts = 1, tw = 0) of binomial_broadcast, hypercube_broadcast. "
        "Lowest: binomial_broadcast and hypercube_broadcast (equal) from p = 2 to 8. "
        "binomial_broadcast and hypercube_broadcast coincide."),
    "no curve": (
        lambda: viz.cost_curves(["hypercube_broadcast"], values=[3, 5]),
        "No curve: none of these algorithms runs for p from 3 to 5."),
    "in-order tree": (
        lambda: viz.draw_in_order_tree(7, 3, edge_labels={(3, 1): "1, 2"}),
        "An in-order binary tree (x = rank) of 7 PEs, root 3, height 2. Children: 3: 1 and 5; "
        "1: 0 and 2; 5: 4 and 6. On the edges: 3-1: 1, 2."),
    "heap tree": (lambda: viz.draw_heap_tree(5),
                  "A binary tree numbered layer by layer of 5 PEs, root 0, height 2. Children: "
                  "0: 1 and 2; 1: 3 and 4."),
    "binomial run": (
        lambda: viz.draw_binomial_run(ALGORITHMS["binomial_gather"].simulate(4, 2), unit=2),
        "The messages of a run on 4 PEs drawn on the binomial tree of root 0 (x = rank, one "
        "level down per 1 bit), each arrow labelled with its step and its length in units of "
        "n = 2 words. Step 1: 1 -> 0 and 3 -> 2, n each. Step 2: 2 -> 0, 2n each."),
    "mesh tree": (
        lambda: viz.draw_mesh_tree(h_tree(4), 4, 4),
        "A tree of 16 PEs on a 4 x 4 mesh, root PE 10 (row 2, column 2), depth 4; each edge "
        "follows its message's XY route, coloured and thickened by level. 4 mesh connections "
        "carry two or more tree edges, at most 2."),
    "cube path": (
        lambda: viz.draw_cube_path([0, 1, 3], ax=viz.draw_cube(), labels="01"),
        "The 3-cube: nodes 000 to 111 (bit 0 to the right, bit 1 up, bit 2 into the page), an "
        "edge between every two nodes one bit apart. A path along arrows: 000 -> 001 -> 011, "
        "hops labelled 0 and 1."),
    "multigraph": (
        lambda: viz.draw_bipartite_multigraph(*_small_multigraph()),
        "A bipartite multigraph: 2 nodes on the left, 2 nodes on the right, 3 edges. The edges "
        "are coloured into 2 steps. Step 1: s0-r1, s1-r0. Step 2: s0-r1."),
    "one step of a multigraph": (
        lambda: viz.draw_bipartite_multigraph(*_small_multigraph(), only=[1]),
        "A bipartite multigraph: 2 nodes on the left, 2 nodes on the right, 3 edges. The edges "
        "are coloured into 2 steps; drawn strongly: step 2, the others faint. Step 2: s0-r1."),
    "waits": (
        lambda: viz.wait_graph(simulate_shared(barrier_demo, 4, barrier=simple_barrier,
                                               epochs=1), layout="circle"),
        "Who waited for whom among 4 PEs: an arrow from each waiting PE to the PE whose write "
        "ended its wait, 3 waits in all. PEs 0 to 2 waited together (dashed) for PE 3."),
    "memory": (
        lambda: viz.memory_timeline(simulate_shared(lock_demo, 2, lock=cas_spin_lock, rounds=1)),
        "Memory operations of PEs 0 and 1 over time 0 to 101, one lane per PE: 9 operations on "
        "lock and counter (7 line transfers, 2 cache hits). 2 stays in the critical section, "
        "at most 1 at once."),
    "measured": (
        lambda: viz.measured_vs_model(
            [viz.Timings("ring model", [8, 64], [1e-5, 2e-5], "model"),
             viz.Timings("ring measured", [8, 64], [3e-5, 8e-5], "measured")], p=4, cores=2),
        "Measured and model times for p = 4, oversubscribed: 4 processes on 2 cores (shaded, "
        "hollow markers). Message lengths from 8 to 64 words. ring model: 10 to 20 µs. ring "
        "measured: 30 to 80 µs, 3 to 4 times ring model."),
}


@pytest.mark.parametrize("name", sorted(SMALL))
def test_a_small_drawing_says_exactly_what_it_shows(name):
    draw, expected = SMALL[name]
    assert text(draw()) == expected


def test_a_step_of_many_pes_names_the_rule_of_its_transfers():
    run = ALGORITHMS["hypercube_allgather"].simulate(256, inputs=[[i] for i in range(256)])
    said = text(viz.draw_step(run, 3))
    assert said.startswith("Step 3 of 8 on an 8-dimensional hypercube of 256 PEs: 256 "
                           "transfers, each of PEs 0 to 255 sends to PE i XOR 4 (across "
                           "dimension 2); no two of them share a link. PEs 0 to 255 hold")
    assert len(said) <= BOUND


def test_a_shift_on_a_ring_reads_as_i_plus_a_constant():
    run = ALGORITHMS["all_to_all_bc_ring"].simulate(12, inputs=[[i] for i in range(12)])
    assert text(viz.draw_step(run, 5)) == (
        "Step 5 of 11 on a ring of 12 PEs: 12 transfers, each of PEs 0 to 11 sends to PE "
        "i + 1 mod 12; no two of them share a link. PEs 0 to 11 hold data as it starts; the "
        "receivers have a thick red edge.")
    one = ALGORITHMS["naive_broadcast"].simulate(3, network=Ring(3))
    assert text(viz.draw_step(one, 1)).endswith("PE 0 holds data as it starts; the receivers "
                                                "have a thick red edge.")


LARGE = {
    "steps of a ring of 64": lambda: viz.draw_steps(
        ALGORITHMS["all_to_all_bc_ring"].simulate(64, inputs=[[i] for i in range(64)]),
        range(1, 4), label=False),
    "e-cube steps on 64 PEs": lambda: viz.draw_steps(
        ALGORITHMS["all_to_all_personal_hcube_ecube"].simulate(64), range(1, 13), label=False),
    "space-time of 256 PEs": lambda: viz.space_time(ALGORITHMS["binomial_broadcast"].simulate(256)),
    "every broadcast": lambda: viz.cost_curves(
        [e for e in ALGORITHMS.values() if e.operation == "broadcast"], vary="m",
        values=[10 ** i for i in range(7)], p=1024, simulate=False),
    "in-order tree of 100": lambda: viz.draw_in_order_tree(100, 0),
    "heap tree of 100": lambda: viz.draw_heap_tree(100),
    "binomial run of 128": lambda: viz.draw_binomial_run(
        ALGORITHMS["binomial_broadcast"].simulate(128)),
    "waits of 64": lambda: viz.wait_graph(
        simulate_shared(barrier_demo, 64, barrier=simple_barrier, epochs=1), layout="circle"),
    "memory of 16": lambda: viz.memory_timeline(
        simulate_shared(lock_demo, 16, lock=cas_spin_lock, rounds=2)),
    "link load of 100": lambda: viz.link_load_map(
        ALGORITHMS["naive_broadcast"].simulate(100, network=Mesh(10, 10))),
}


@pytest.mark.parametrize("name", sorted(LARGE))
def test_a_large_drawing_is_summarised_within_the_bound(name):
    said = text(LARGE[name]())
    assert said and len(said) <= BOUND, (len(said), said)
