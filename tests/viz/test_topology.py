"""Networks and steps: arrows, labels, holders and link loads are read back from the picture."""
import gc
import io
import weakref

import matplotlib.pyplot as plt
import numpy as np
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
    lay = viz._drawing.network_layout(run.network)
    for step in range(1, len(run.step_starts()) + 1):
        ax = viz.draw_step(run, step)
        ax.figure.canvas.draw()
        renderer = ax.figure.canvas.get_renderer()
        boxes = [t.get_window_extent(renderer) for t in ax.texts if t.get_gid() == "label"]
        assert len(boxes) == len(run.step(step))
        for box in boxes:
            assert_clear_of_nodes(ax, lay, box)
        plt.close(ax.figure)


def test_a_drawing_of_steps_is_let_go_once_closed():
    # the labels' bookkeeping per figure must not keep the figure alive
    run = catalog()["all_to_all_bc_hcube"].simulate(8, inputs=[[i] for i in range(8)])
    fig = viz.draw_steps(run, cols=3, label=viz.sources_label)
    plt.close(fig)
    gone = weakref.ref(fig)
    del fig
    gc.collect()
    assert gone() is None


def assert_clear_of_nodes(ax, lay, box):
    """The drawn ``box`` (display pixels) reaches into no node's circle by more than a
    tenth of its radius."""
    centres = ax.transData.transform(lay.xy)
    radius = ax.transData.transform((lay.radius, 0))[0] - ax.transData.transform((0, 0))[0]
    nearest = np.clip(centres, box.p0, box.p1)
    closest = np.hypot(*(centres - nearest).T).min()
    assert closest >= 0.9 * radius, (ax.get_title(), box, closest, radius)


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


@pytest.mark.parametrize("name, p, cols", [("all_to_all_bc_hcube", 8, 3),
                                           ("all_to_all_bc_mesh", 9, 4),
                                           ("all_to_all_bc_ring", 8, 3),
                                           ("binomial_broadcast", 8, 3)])
def test_the_labels_of_a_step_cover_no_label_node_or_other_panel(name, p, cols):
    # Chapter 5's Figs. 4.9-4.11 as the chapters draw them. In the hypercube's last step
    # eight labels of parallel arrows sat on top of each other, in its second step the
    # two labels of each short edge met, and on the mesh labels hid PE numbers; a layout
    # after the labels shrank the panels under them. Labels now keep clear of labels
    # and nodes in every panel, and stay within the figure.
    run = catalog()[name].simulate(p, inputs=[[i] for i in range(p)])
    fig = viz.draw_steps(run, cols=cols, label=viz.sources_label)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    lay = viz._drawing.network_layout(run.network)
    labels = [(ax, t.get_window_extent(renderer)) for ax in fig.axes for t in ax.texts
              if t.get_gid() == "label"]
    assert len(labels) == sum(len(run.step(s)) for s in range(1, len(run.step_starts()) + 1))
    overlapping = [(a.get_title(), b.get_title()) for i, (a, box) in enumerate(labels)
                   for b, other in labels[i + 1:] if box.overlaps(other)]
    assert not overlapping, overlapping[:3]
    for ax, box in labels:
        for panel in fig.axes:
            if panel.has_data():
                assert_clear_of_nodes(panel, lay, box)
        assert fig.bbox.x0 <= box.x0 and box.x1 <= fig.bbox.x1, ax.get_title()
        assert fig.bbox.y0 <= box.y0 and box.y1 <= fig.bbox.y1, ax.get_title()
    plt.close(fig)
