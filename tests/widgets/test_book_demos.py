"""Every widget of the chapters shows a picture at each end of each control (issue 29, point 10).

The demos are the chapters' own calls, found by ``benchmarks/widget_redraw.py``
(:func:`book_demos`), which also times every combination of the ends of every control.
Here each demo goes through the corners of that combination: every slider at its minimum,
then every slider at its maximum, each with every choice of every drop-down, toggle and
check box (the algorithm, the lock, the axis, the values, the dots), and after each the
controls that follow the run (the root, the step, the time) at each of their ends.  So
every control meets each end of its range, and every algorithm and lock meets its
smallest and its largest run.

Why these settings suffice for the budgets that could end a redraw in an error:

* the operation budget (:meth:`collective_lib.catalog.Algorithm.max_ops`) grows with the
  run, and a run only gets longer with p, k, rounds and hold, all at their maximum in the
  second corner; tests/core/test_operation_budget.py checks the budget against every
  catalog entry.  The cost explorer simulates a point only when p k <= 4,000 and p m <=
  1,000,000 (:data:`~collective_lib.widgets.MAX_SIMULATED_PACKETS`, ...), so none of its
  runs comes near the budget at any setting; over the 32 ends with dots of the broadcast
  and reduce explorers (2026-11-27) no run issued more than 4 operations per PE, as a
  redraw stops simulating where the next point would overrun its 0.3 s;
* the cost explorer's time budget (0.3 s of new simulations per redraw) is spent on the
  smallest points first and stops where the next would overrun it; its estimate for a
  first point comes from a much smaller run (tests/widgets/test_costs.py), so the
  corners with m and p at their maximum, on either axis, are where it is tried hardest;
* the memory check refuses only runs far larger than any slider allows;
* the lock player's shared-memory budget (1,000,000 operations) met at most 13,150 at
  its largest setting (reader_writer_lock, p = 16, 4 rounds, hold 200), measured over
  every end of its sliders.

The settings mixing ends (ts low and tw high, say) only change which points get dots;
the benchmark covers them, with its timings.
"""
import ipywidgets as W
import pytest
from benchmark_scripts import load_benchmark

bench = load_benchmark("widget_redraw")
DEMOS = bench.book_demos()
SLIDERS = (W.IntSlider, W.FloatSlider, W.FloatLogSlider)


def corners(demo) -> list:
    """The settings of :func:`leading_settings` whose sliders are all at the same end."""
    ends = {name: bench.ends(control) for name, control in demo.controls.items()
            if isinstance(control, SLIDERS) and name not in bench.FOLLOWERS}
    return [setting for setting in bench.leading_settings(demo)
            if any(all(setting[name] == values[end] for name, values in ends.items())
                   for end in (0, -1))]


def test_the_chapters_have_demos_of_every_kind():
    assert {call.split("(")[0] for _, call in DEMOS} == {
        f"widgets.{factory}" for factory in bench.FACTORIES}


def test_corners_put_every_control_at_each_end():
    demo = bench.build("widgets.cost_explorer('broadcast', p=8, m=16)")
    settings = corners(demo)
    assert len(settings) == 2 * 2 * 2          # two corners, two axes, dots on or off
    for name in ("ts", "tw", "p", "m", "vary", "simulate"):
        assert {s[name] for s in settings} == set(bench.ends(demo.controls[name]))
    low = [s for s in settings if s["p"] == 2]
    assert all(s["m"] == 1 and s["ts"] == pytest.approx(0.01) for s in low)


def test_a_setting_that_shows_no_picture_is_reported():
    player = bench.build("widgets.step_player('broadcast', algorithm='hypercube_broadcast')")
    player.controls["p"].value = 6                       # not a power of two
    assert "cannot run on p = 6" in bench.problem(player)
    player.controls["p"].value = 8
    assert bench.problem(player) is None


@pytest.mark.parametrize("chapter, call", DEMOS, ids=[f"{c}-{i}" for i, (c, _) in
                                                       enumerate(DEMOS)])
def test_every_end_of_every_control_shows_a_picture(chapter, call):
    demo = bench.build(call)
    settings = corners(demo)
    found = bench.redraws(demo, settings)
    assert len(found) >= len(settings)
    assert [(setting, wrong) for setting, _, wrong in found if wrong] == []
    # Every follower reached both ends somewhere (the root only where p > 1).
    for name in bench.FOLLOWERS:
        if name in demo.controls:
            assert any(f"{name}=" in setting for setting, _, _ in found), name
