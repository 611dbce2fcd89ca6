"""Networks and steps: arrows, labels, holders and link loads are read back from the picture."""
import io

import matplotlib.pyplot as plt
import pytest

from collective_lib import FullyConnected, Hypercube, Mesh, Ring, catalog, viz


def by_gid(ax, gid):
    return [a for a in ax.patches if a.get_gid() == gid]


def labels(ax):
    return sorted(t.get_text() for t in ax.texts if t.get_gid() == "label")


def filled_nodes(ax):
    nodes = by_gid(ax, "node")
    return {pe for pe, c in enumerate(nodes) if c.get_facecolor()[:3] != (1.0, 1.0, 1.0)}


# -- draw_step -----------------------------------------------------------------------------

@pytest.mark.parametrize("step, count", [(1, 1), (2, 2), (3, 4)])
def test_binomial_step_has_one_arrow_and_label_per_message(step, count):
    run = catalog()["binomial_broadcast"].simulate(p=8)
    ax = viz.draw_step(run, step)
    assert len(run.step(step)) == count
    assert len(by_gid(ax, "message")) == count
    assert labels(ax) == [f"{step} (0)"] * count
    assert ax.get_title() == f"step {step} of 3"


def test_labels_name_the_root_as_origin():
    run = catalog()["binomial_broadcast"].simulate(p=8, root=5)
    assert labels(viz.draw_step(run, 3)) == ["3 (5)"] * 4


def test_holders_are_filled_and_receivers_ringed():
    run = catalog()["hypercube_broadcast"].simulate(p=8, root=3)
    ax = viz.draw_step(run, 2)
    # Step 1 sent 3 -> 7; in step 2 both of them send.
    assert filled_nodes(ax) == {3, 7}
    ringed = {pe for pe, c in enumerate(by_gid(ax, "node")) if c.get_linewidth() > 1.5}
    assert ringed == {m.dst for m in run.step(2)} == {1, 5}


def test_routed_message_is_one_arrow_along_its_path():
    run = catalog()["naive_broadcast"].simulate(p=8, network=Ring(8))
    ax = viz.draw_step(run, 4)                    # 0 -> 4 crosses four links
    (arrow,) = by_gid(ax, "message")
    assert len(arrow.get_path().vertices) >= 5
    assert labels(ax) == ["4 (0)"]


@pytest.mark.parametrize("name, p", [("binomial_scatter", 23), ("binomial_gather", 11),
                                     ("binomial_broadcast", 32)])
def test_labels_keep_clear_of_every_node(name, p):
    # on a crowded ring an arrow passes close to the PEs between its ends: its label
    # must not hide their numbers
    run = catalog()[name].simulate(p=p)
    for step in range(1, len(run.step_starts()) + 1):
        ax = viz.draw_step(run, step)
        nodes = by_gid(ax, "node")
        placed = [t.get_position() for t in ax.texts if t.get_gid() == "label"]
        assert len(placed) == len(run.step(step))
        for x, y in placed:
            closest = min(((x - c.center[0]) ** 2 + (y - c.center[1]) ** 2) ** 0.5
                          for c in nodes)
            assert closest >= 1.5 * nodes[0].radius, (step, (x, y))
        plt.close(ax.figure)


def test_custom_and_no_labels():
    run = catalog()["binomial_broadcast"].simulate(p=4)
    ax = viz.draw_step(run, 2, label=lambda m, s: f"{m.src}->{m.dst}")
    assert labels(ax) == ["0->1", "2->3"]
    assert labels(viz.draw_step(run, 2, label=False)) == []


def test_draw_step_rejects_bad_step_and_untraced_run():
    entry = catalog()["binomial_broadcast"]
    with pytest.raises(ValueError, match="step must be in 1..3"):
        viz.draw_step(entry.simulate(p=8), 4)
    with pytest.raises(ValueError, match="trace=True"):
        viz.draw_step(entry.simulate(p=8, trace=False), 1)


def test_draw_steps_makes_one_panel_per_step():
    run = catalog()["linear_pipeline_broadcast"].simulate(p=4, m=2, k=2)
    fig = viz.draw_steps(run, cols=2)
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == [f"step {s} of 4" for s in range(1, 5)]
    assert len(fig.axes) == 4


def test_pictures_are_deterministic():
    def png():
        run = catalog()["hypercube_broadcast"].simulate(p=16, root=5)
        ax = viz.draw_step(run, 3)
        buf = io.BytesIO()
        ax.figure.savefig(buf, format="png")
        plt.close(ax.figure)
        return buf.getvalue()
    assert png() == png()


def test_drawing_is_silent(capfd):
    run = catalog()["binomial_broadcast"].simulate(p=8)
    viz.draw_steps(run)
    viz.space_time(run)
    viz.link_load_map(run)
    out, err = capfd.readouterr()
    assert out == "" and err == ""


# -- draw_network and link load ------------------------------------------------------------

def segments(ax):
    return sum(len(c.get_segments()) for c in ax.collections)


def test_small_clique_draws_every_link_large_clique_none():
    assert segments(viz.draw_network(FullyConnected(8))) == 28
    ax = viz.draw_network(FullyConnected(16))
    assert segments(ax) == 0 and len(by_gid(ax, "node")) == 16


def test_node_labels_can_be_switched_off():
    ax = viz.draw_network(Hypercube(3), node_labels=False)
    assert not [t for t in ax.texts if t.get_gid() == "node-label"]
    assert len([t for t in viz.draw_network(Hypercube(3)).texts]) == 8


def test_wraparound_links_curve_instead_of_crossing_nodes():
    ax = viz.draw_network(Mesh(3, 3, wrap=True))
    curved = [a for a in ax.patches if a.get_gid() is None]
    assert len(curved) == 6                       # three row and three column wraps
    assert segments(ax) == 12


def test_link_load_map_scale_ends_at_the_largest_load():
    run = catalog()["naive_broadcast"].simulate(p=8, network=Ring(8))
    ax = viz.link_load_map(run)
    colour_bar = ax.figure.axes[-1]
    assert run.max_link_load() == 4
    assert colour_bar.get_ylim() == (0.0, 4.0)
    assert ax.get_title() == "link load: at most 4 transfers on one link"
    assert len(by_gid(ax, "link")) == len(Ring(8).links())


def test_link_load_on_a_clique_draws_only_used_links():
    run = catalog()["binomial_broadcast"].simulate(p=16)
    ax = viz.link_load_map(run)
    assert len(by_gid(ax, "link")) == 15
    assert ax.figure.axes[-1].get_ylim() == (0.0, 1.0)


# -- labels naming the sources -------------------------------------------------------------

def test_sources_label_names_every_pe_whose_input_a_message_carries():
    run = catalog()["all_to_all_bc_ring"].simulate(8, inputs=[[i] for i in range(8)])
    ax = viz.draw_step(run, 3, label=viz.sources_label)
    assert labels(ax) == sorted(f"3 ({(i - 2) % 8})" for i in range(8))
    assert viz.payload_sources([[2], [[0], [1]], None]) == [2, 0, 1]
    assert viz.payload_sources(None) == []


@pytest.mark.parametrize("name, p, steps", [("all_to_all_bc_hcube", 8, [3]),
                                            ("all_to_all_bc_mesh", 9, None),
                                            ("all_to_all_bc_ring", 8, None)])
def test_the_labels_of_a_step_do_not_cover_each_other(name, p, steps):
    # Chapter 5's Fig. 4.11: in the hypercube's last step eight labels of parallel arrows
    # sat on top of each other (ten pairs), unreadable; they keep apart now. (Its step 2,
    # two labels on each short edge, still has labels touching.)
    run = catalog()[name].simulate(p, inputs=[[i] for i in range(p)])
    fig = viz.draw_steps(run, cols=3, label=viz.sources_label)
    renderer = fig.canvas.get_renderer()
    for number, ax in enumerate(fig.axes, 1):
        if steps is not None and number not in steps:
            continue
        boxes = [t.get_window_extent(renderer) for t in ax.texts if t.get_gid() == "label"]
        overlapping = [(a, b) for i, a in enumerate(boxes) for b in boxes[i + 1:]
                       if a.overlaps(b)]
        assert not overlapping, (ax.get_title(), overlapping[:2])
    plt.close(fig)
