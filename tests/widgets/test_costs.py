"""The cost explorer follows its controls and simulates only points small enough to be quick."""
import base64
import re

import ipywidgets as W
import pytest

from collective_lib import catalog
from collective_lib.viz.style import READABLE_SHARE
from collective_lib.widgets import MAX_SIMULATED_P, cost_explorer
from collective_lib.widgets._demo import MAX_PICTURE_HEIGHT, SNAPSHOT_SCALE, png_size
from collective_lib.widgets.costs import (SIMULATION_BUDGET, _estimate, _probe,
                                          _small_enough)

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def descendants(widget):
    """Every widget inside ``widget`` (boxes opened)."""
    for child in getattr(widget, "children", ()):
        yield child
        yield from descendants(child)


def test_explorer_follows_its_controls():
    explorer = cost_explorer(p=8, m=16)
    assert "p from 1 to 8 with m = 16" in explorer.caption.value
    before = explorer.image.value
    explorer.controls["vary"].value = "m"
    assert "m from 1 to 16 words with p = 8" in explorer.caption.value
    explorer.controls["tw"].value = 1.0
    assert "tw = 1." in explorer.caption.value
    assert explorer.image.value != before


def test_explorer_bundle_has_widget_and_picture():
    explorer = cost_explorer(p=8, m=16)
    bundle = explorer._repr_mimebundle_()
    assert WIDGET_VIEW in bundle
    assert '<img src="data:image/png;base64,' in bundle["text/html"]
    assert explorer.image in descendants(explorer.widget)
    assert bundle["text/html"] == explorer.static_note() + explorer.fallback_html()
    assert "In the notebook, controls change ts, tw, p, m (words), vary" in explorer.static_note()


def test_explorer_rejects_bad_vary():
    with pytest.raises(ValueError, match="vary"):
        cost_explorer(vary="time")


def test_the_cost_explorer_skips_simulating_all_to_all_inputs_that_are_too_large():
    # Every PE of an all-to-all exchange holds p messages, so the inputs grow like p*p*m.
    personalized = catalog()["alltoall_cyclic"]
    broadcast = catalog()["binomial_broadcast"]
    assert _small_enough(broadcast, MAX_SIMULATED_P, 1024, {})
    assert not _small_enough(personalized, MAX_SIMULATED_P, 1024, {})
    assert _small_enough(personalized, 32, 512, {})


def test_no_point_beyond_the_largest_simulated_p_is_simulated():
    # An all-to-all exchange on p PEs sends about p * p messages, whatever m is.
    assert not _small_enough(catalog()["binomial_broadcast"], MAX_SIMULATED_P + 1, 1, {})
    explorer = cost_explorer("allgather", vary="m", p=256, m=10, simulation_budget=None)
    assert explorer.simulated == set()
    explorer.controls["p"].value = 8
    assert {(name, p) for name, p, m in explorer.simulated} == {
        (name, 8) for name, e in catalog().items() if e.operation == "allgather" and e.valid(8)}


def test_the_picture_is_shown_at_its_natural_size_beside_the_controls():
    explorer = cost_explorer(p=8, m=16)
    width, height = png_size(explorer.image.value)
    assert height <= MAX_PICTURE_HEIGHT
    # natural size where there is room; in a narrower output (JupyterLab at 400 px) it
    # shrinks to the width at which its smallest text stays readable, then its box scrolls
    layout = explorer.image.layout
    assert (layout.width, layout.height, layout.max_width, layout.min_width) == (
        f"{width}px", "auto", "100%", f"{width * READABLE_SHARE:.0f}px")
    row = explorer.widget.children[0]
    assert isinstance(row, W.HBox) and row.children[1].children == (explorer.image,)
    assert explorer.controls["p"] in row.children[0].children
    assert f'width="{width}" height="{height}"' in explorer.fallback_html()


def test_the_snapshot_of_a_built_page_is_sharp_at_the_live_pictures_size():
    explorer = cost_explorer(p=8, m=16)
    page = explorer.fallback_html()
    (data,) = re.findall(r'src="data:image/png;base64,([^"]+)"', page)
    shown = tuple(map(int, re.search(r'width="(\d+)" height="(\d+)"', page).groups()))
    assert shown == png_size(explorer.image.value)
    pixels = png_size(base64.b64decode(data))
    assert all(abs(side - SNAPSHOT_SCALE * css) <= 1 for side, css in zip(pixels, shown)), \
        (pixels, shown)


def test_a_redraw_says_computing_while_it_runs():
    explorer = cost_explorer(p=8, m=16)
    seen = []
    explorer.status.observe(lambda change: seen.append(change["new"]), names="value")
    explorer.controls["p"].value = 9
    assert "computing" in seen[0] and seen[-1] == "" == explorer.status.value


def test_a_budget_of_zero_draws_no_dots():
    explorer = cost_explorer(p=8, m=16, simulation_budget=0)
    assert explorer.simulated == set()
    with pytest.raises(ValueError, match="simulation_budget"):
        cost_explorer(simulation_budget=-1)


def test_set_controls_updates_once():
    explorer = cost_explorer(p=8, m=16)
    seen = []
    explorer.caption.observe(lambda change: seen.append(change["new"]), names="value")
    explorer.set_controls(p=16, vary="m", m=100)
    assert len(seen) == 1 and "m from 1 to 100 words with p = 16" in seen[0]
    with pytest.raises(ValueError, match="no control named"):
        explorer.set_controls(q=3)


def test_the_caption_names_the_algorithms_that_do_not_run_on_this_p():
    explorer = cost_explorer("all_to_all_reduction", vary="m", p=15, m=16)
    caption = explorer.caption.value
    assert "Not drawn, as they do not run on p = 15: " in caption
    for name in ("all_to_all_red_hcube", "all_to_all_red_mesh", "one_cycle_reduce"):
        assert name in caption
    explorer.controls["p"].value = 16
    assert "Not drawn" not in explorer.caption.value


def test_without_simulated_points_the_caption_does_not_describe_them():
    explorer = cost_explorer(p=8, m=16)
    assert "Dots: simulated times" in explorer.caption.value
    explorer.controls["simulate"].value = False
    assert "Dots" not in explorer.caption.value and "Lines: closed forms" in explorer.caption.value


def test_a_first_point_of_many_words_is_estimated_before_it_is_simulated():
    # The edge-coloured non-uniform all-to-all grows like m squared: 8 s at m = 10,000 on
    # 2 PEs, some 800 s at 100,000.  The explorer once ran such a point blind: its only
    # base was the p = 1 point, which sends nothing.
    entry = catalog()["alltoallv_edge_coloring"]
    model = entry.default_model(ts=1.0, tw=1.0)
    p0, m0, seconds = _probe(entry, model, 2, 100_000)
    assert (p0, m0) == (2, 100_000 // 64) and seconds > 0
    assert _estimate((p0, m0, seconds), 2, 100_000) > SIMULATION_BUDGET
    assert _probe(entry, model, 2, 63) is None            # small already: simulated at once
    explorer = cost_explorer("alltoallv", vary="p", p=16, m=10)
    explorer.set_controls(m=100_000.0)
    assert not any(name == entry.name and p > 1 for name, p, _ in explorer.simulated)


def test_explorer_static_picture_says_what_its_curves_show():
    page = cost_explorer("broadcast", p=8, m=16).fallback_html()
    alt = re.search(r'<img [^>]*alt="([^"]*)"', page).group(1)
    assert alt.startswith("Time against p (m = 16, ts = 1, tw = 0.01) of ")
    assert "Lowest:" in alt


@pytest.mark.parametrize("m", [1, 10 ** 1.25, 1000, 10 ** 3.25, 10 ** 4.75])
def test_the_m_slider_reads_out_the_words_the_curves_are_drawn_for(m):
    # the slider's readout (1,778, once 1.78e+3) is the m the caption and the run say
    explorer = cost_explorer(p=8, vary="p", m=16, simulation_budget=None)
    slider = explorer.controls["m"]
    slider.value = m
    readout = format(slider.value, slider.readout_format)
    assert "e" not in readout
    assert f"with m = {readout}, " in explorer.caption.value, (readout, explorer.caption.value)
