"""Shared-memory pictures: spans, sections, caches and waits are read back from the run."""
import matplotlib.pyplot as plt
import pytest

from collective_lib import viz
from collective_lib.algorithms.sync import (barrier_demo, binomial_barrier, broken_lock,
                                            cas_spin_lock, lock_demo, simple_barrier,
                                            ttas_backoff_lock)
from collective_lib.shared_memory import fetch_add, pause, read, simulate_shared, write


def by_gid(ax, gid):
    artists = list(ax.patches) + list(ax.collections) + list(ax.lines)
    return [a for a in artists if a.get_gid() == gid]


# -- memory_spans -----------------------------------------------------------------------------

def test_spans_have_the_model_costs():
    def program(me, p, data):
        yield fetch_add("c", 1)            # a miss, then a contended access in the queue
        yield pause(5)
        yield read("c")
    run = simulate_shared(program, 2, memory={"c": 0})
    spans = viz.memory_spans(run)
    assert [(s.pe, s.op, s.start, s.end, s.kind) for s in spans] == [
        (0, "fetch_add", 0, 10, "transfer"), (1, "fetch_add", 0, 30, "transfer"),
        (0, "pause", 10, 15, "pause"),
        (0, "read", 15, 40, "transfer"),    # waits until PE 1's access leaves the line at 30
        (1, "pause", 30, 35, "pause"),
        (1, "read", 35, 36, "hit")]         # PE 1 still holds a copy


def test_spans_mark_hits_and_polls():
    def poller(me, p, data):
        for _ in range(4):
            yield read("flag")
    spans = viz.memory_spans(simulate_shared(poller, 1, memory={"flag": 0}))
    assert [s.kind for s in spans] == ["transfer", "hit", "hit", "hit"]
    assert [s.spin for s in spans] == [False, True, True, True]


def test_spans_of_an_interleaved_run_take_one_step_each():
    run = simulate_shared(lock_demo, 2, lock=broken_lock, rounds=1, seed=3)
    spans = viz.memory_spans(run)
    assert len(spans) == run.operations
    assert all(s.end == s.start + 1 and s.kind == "step" for s in spans)


def test_spans_need_a_trace_and_a_shared_run():
    run = simulate_shared(lock_demo, 2, lock=cas_spin_lock, trace=False)
    with pytest.raises(ValueError, match="trace=True"):
        viz.memory_spans(run)
    from collective_lib import catalog
    with pytest.raises(TypeError, match="SharedRun"):
        viz.memory_spans(catalog()["binomial_broadcast"].simulate(4))


# -- critical sections, cache holders -------------------------------------------------------

def test_critical_sections_follow_the_markers():
    run = simulate_shared(lock_demo, 3, lock=ttas_backoff_lock, rounds=2, hold=10)
    sections = viz.critical_sections(run)
    assert len(sections) == 6 and {s[0] for s in sections} == {0, 1, 2}
    for (_, _, a, b), (_, _, c, d) in zip(sections, sections[1:]):
        assert a < b <= c < d                          # one after the other: the lock works


def test_a_section_still_open_ends_with_the_run():
    run = simulate_shared(lock_demo, 2, lock=broken_lock, rounds=1, schedule=[0, 1, 0, 1],
                          stop_after=4)
    assert [(pe, end) for pe, _, _, end in viz.critical_sections(run)] == [(0, 4), (1, 4)]


def test_cache_holders_replay_the_coherence_rule():
    def program(me, p, data):
        yield read("x")
        if me == 0:
            yield pause(100)
            yield write("x", 1)
    run = simulate_shared(program, 3, memory={"x": 0})
    assert viz.cache_holders(run, 50) == {"x": [0, 1, 2]}
    assert viz.cache_holders(run, run.time) == {"x": [0]}


# -- memory_timeline --------------------------------------------------------------------------

def test_timeline_draws_sections_spans_pauses_and_polls():
    run = simulate_shared(lock_demo, 4, lock=ttas_backoff_lock, rounds=2, hold=40)
    ax = viz.memory_timeline(run, cursor=123)
    assert len(by_gid(ax, "section")) == 8
    hits = sum(len(c.get_paths()) for c in by_gid(ax, "span:hit"))
    moves = sum(len(c.get_paths()) for c in by_gid(ax, "span:transfer"))
    spans = [s for s in viz.memory_spans(run) if s.kind != "pause"]
    assert hits == sum(s.kind == "hit" for s in spans) and hits + moves == len(spans)
    assert by_gid(ax, "pause") and by_gid(ax, "poll")
    assert by_gid(ax, "cursor")[0].get_xdata()[0] == 123
    assert [t.get_text() for t in ax.get_yticklabels()] == ["PE 0", "PE 1", "PE 2", "PE 3"]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    # The cell is told by colour and hatch, a hit from a transfer by the bar's shade: the
    # legend names the shade, which a cell's solid patch shares in grey print.
    assert {"lock", "counter", "pale: cache hit", "solid: transfer",
            "critical section"} <= set(legend)


def test_timeline_window_and_lanes():
    run = simulate_shared(barrier_demo, 8, barrier=binomial_barrier, epochs=2)
    ax = viz.memory_timeline(run, start=50, stop=150, pes=[0, 4])
    assert ax.get_xlim() == (50, 150)
    assert [t.get_text() for t in ax.get_yticklabels()] == ["PE 0", "PE 4"]
    notes = by_gid(ax, "note:arrive") + by_gid(ax, "note:depart")
    assert all(50 <= line.get_xdata()[0] <= 150 for line in notes)
    assert "barrier.readyEpoch[*]" in [t.get_text() for t in ax.get_legend().get_texts()]
    with pytest.raises(ValueError, match="start < stop"):
        viz.memory_timeline(run, start=10, stop=5)


def test_timeline_of_an_interleaving_counts_steps():
    run = simulate_shared(lock_demo, 2, lock=broken_lock, rounds=1, schedule=[0, 1, 0, 1],
                          stop_after=4)
    ax = viz.memory_timeline(run)
    assert ax.get_xlabel() == "step of the interleaving"
    assert len(by_gid(ax, "section")) == 2


# -- waits_on / wait_graph --------------------------------------------------------------------

@pytest.mark.parametrize("p", [2, 5, 8, 16])
def test_tree_barrier_waits_follow_the_binomial_tree(p):
    from collective_lib.trees import binomial_children
    run = simulate_shared(barrier_demo, p, barrier=binomial_barrier, epochs=1)
    pairs = {(w.waiter, w.writer) for w in viz.waits_on(run)}
    tree = {(i, c) for i in range(p) for c in binomial_children(i, p)}
    assert pairs - {(i, 0) for i in range(1, p)} <= tree
    assert all(w.cell == ("barrier.readyEpoch", 0) for w in viz.waits_on(run) if w.writer == 0)


def test_counter_barrier_waits_for_the_last_arrival():
    def late(me, e):
        return 50 if me == 2 else 0
    run = simulate_shared(barrier_demo, 5, barrier=simple_barrier, epochs=1, work=late)
    assert {(w.waiter, w.writer) for w in viz.waits_on(run)} == {(0, 2), (1, 2), (3, 2), (4, 2)}


def test_no_wait_without_polling():
    def program(me, p, data):
        if me == 0:
            yield write("flag", 1)
        else:
            yield pause(100)
            yield read("flag")                # finds the value at the first look
    run = simulate_shared(program, 2, memory={"flag": 0})
    assert viz.waits_on(run) == []


def test_wait_graph_styles_point_to_point_and_broadcast_waits():
    run = simulate_shared(barrier_demo, 8, barrier=binomial_barrier, epochs=1)
    ax = viz.wait_graph(run)
    assert len(by_gid(ax, "wait:single")) == 7          # the tree edges
    assert len(by_gid(ax, "wait:broadcast")) == 7       # everybody waits for readyEpoch[0]
    assert by_gid(ax, "tree")
    with pytest.raises(ValueError, match="layout"):
        viz.wait_graph(run, layout="star")


# -- the timelines of Chapter 3 fit their axes ---------------------------------------------------

def drawn_right_ends(ax):
    """The right end of every bar, band, pause and mark a timeline drew on ``ax``."""
    ends = [max(x for x, _ in path.vertices) for c in by_gid(ax, "span:hit") + by_gid(ax, "span:transfer")
            for path in c.get_paths()]
    ends += [patch.get_x() + patch.get_width() for patch in by_gid(ax, "section")]
    ends += [max(x for x, _ in segment) for c in by_gid(ax, "pause") for segment in c.get_segments()]
    ends += [max(line.get_xdata()) for line in by_gid(ax, "poll")]
    ends += [line.get_xdata()[0] for gid in ("note:arrive", "note:depart") for line in by_gid(ax, gid)]
    return ends


def assert_inside(ax, run):
    left, right = ax.get_xlim()
    ends = drawn_right_ends(ax)
    assert ends and max(ends) == pytest.approx(run.time)
    # strictly inside: a mark drawn at time 0 or at the very end keeps room for its width
    assert max(ends) < right and left < 0


def test_chapter3_lock_timelines_on_shared_axes_fit():
    # Chapter 3's figure: two locks, one figure, sharex=True; the longer run comes first
    fig, axes = plt.subplots(2, 1, sharex=True)
    runs = [simulate_shared(lock_demo, 4, lock=lock, rounds=2, hold=100)
            for lock in (cas_spin_lock, ttas_backoff_lock)]
    assert runs[0].time > runs[1].time
    for ax, run in zip(axes, runs):
        viz.memory_timeline(run, ax=ax)
    for ax, run in zip(axes, runs):
        assert_inside(ax, run)
    plt.close(fig)


def test_chapter3_barrier_timeline_fits():
    def uneven(me, e):
        return 40 * ((3 * me + e) % 4)
    run = simulate_shared(barrier_demo, 8, barrier=binomial_barrier, epochs=2, work=uneven)
    ax = viz.memory_timeline(run)
    assert by_gid(ax, "note:depart")
    assert_inside(ax, run)
    assert ax.get_xlim()[1] < 1.05 * run.time      # a margin, not empty space
    plt.close(ax.figure)
