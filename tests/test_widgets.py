"""The widgets work without a kernel, follow their controls, and carry a static fallback."""
import subprocess
import sys

import pytest

from collective_lib import catalog
from collective_lib.widgets import cost_explorer, step_player

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def broadcast_names():
    return [name for name, e in catalog().items() if e.operation == "broadcast"]


def shown(widget):
    return widget.layout.display != "none"


# -- step player ---------------------------------------------------------------------------

def test_player_offers_every_broadcast_of_the_catalog():
    player = step_player("broadcast")
    assert list(player.controls["algorithm"].options) == broadcast_names()
    assert player.controls["algorithm"].value == broadcast_names()[0]


def test_player_time_follows_algorithm_and_p():
    player = step_player(algorithm="naive_broadcast", p=8)
    assert "simulated time <b>7</b>" in player.info.value
    player.controls["algorithm"].value = "binomial_broadcast"
    assert "simulated time <b>3</b>" in player.info.value
    assert "closed form 3" in player.info.value
    player.controls["p"].value = 16
    assert "simulated time <b>4</b>" in player.info.value and player.run.time == 4.0
    assert player.controls["step"].max == 4


def test_player_root_range_follows_p():
    player = step_player(algorithm="binomial_broadcast", p=8, root=7)
    player.controls["p"].value = 5
    assert player.controls["root"].max == 4 and player.controls["root"].value == 4
    assert [m.src for m in player.run.step(1)] == [4]


def test_player_shows_k_only_for_pipelined_algorithms():
    player = step_player(algorithm="binomial_broadcast", p=8)
    assert not shown(player.controls["k"])
    player.controls["algorithm"].value = "linear_pipeline_broadcast"
    assert shown(player.controls["k"])
    player.controls["k"].value = 4                        # m = k: one word per packet
    assert player.run.time == 8 + 4 - 2
    assert "simulated time <b>10</b>" in player.info.value


def test_player_explains_an_invalid_p():
    player = step_player(algorithm="hypercube_broadcast", p=8)
    player.controls["p"].value = 6
    assert player.run is None
    assert "cannot run on p = 6" in player.info.value
    assert "power of two" in player.info.value
    assert not shown(player.image)
    assert "power of two" in player.fallback_html()
    player.controls["p"].value = 4
    assert player.run.time == 2.0 and shown(player.image)


def test_player_offers_no_more_packets_than_words():
    player = step_player(algorithm="linear_pipeline_broadcast", p=4, m=2)
    assert player.controls["k"].max == 2
    player.controls["k"].value = 2
    assert player.run.time == 4 + 2 - 2
    with pytest.raises(ValueError, match="k=3 exceeds m=2"):
        step_player(algorithm="linear_pipeline_broadcast", k=3, m=2)


def test_player_step_slider_changes_the_picture():
    player = step_player(algorithm="binomial_broadcast", p=8)
    first = player.image.value
    assert first[:8] == b"\x89PNG\r\n\x1a\n"
    player.controls["step"].value = 3
    assert player.image.value != first


def test_player_single_pe_has_no_steps():
    player = step_player(algorithm="binomial_broadcast", p=1)
    assert player.run.time == 0 and player.controls["step"].disabled
    assert "<img" in player.fallback_html()


def test_player_bundle_has_widget_and_animation():
    player = step_player(algorithm="binomial_broadcast", p=8)
    bundle = player._repr_mimebundle_()
    assert bundle[WIDGET_VIEW]["model_id"] == player.widget.model_id
    page = bundle["text/html"]
    assert "simulated time <b>3</b>" in page
    assert page.count("<script") >= 1 and "animation" in page
    assert page.count("data:image/png;base64") == 3      # one frame per step


def test_player_rejects_unknown_names():
    with pytest.raises(ValueError, match="not a broadcast algorithm"):
        step_player(algorithm="quick_sort")
    with pytest.raises(ValueError, match="no algorithm in the catalog implements"):
        step_player("teleport")


# -- cost explorer -------------------------------------------------------------------------

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
    assert explorer.image in explorer.widget.children
    assert explorer.fallback_html() == bundle["text/html"]


def test_explorer_rejects_bad_vary():
    with pytest.raises(ValueError, match="vary"):
        cost_explorer(vary="time")


# -- import cost ---------------------------------------------------------------------------

def test_import_leaves_pyplot_and_the_backend_alone():
    code = ("import sys, collective_lib.widgets; "
            "print('matplotlib.pyplot' in sys.modules, 'matplotlib.animation' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["False", "False"] and out.stderr == ""


def test_the_cost_explorer_skips_simulating_all_to_all_inputs_that_are_too_large():
    # Every PE of an all-to-all exchange holds p messages, so the inputs grow like p*p*m.
    from collective_lib import widgets
    personalized = catalog()["alltoall_cyclic"]
    broadcast = catalog()["binomial_broadcast"]
    assert widgets._small_enough(broadcast, 256, 1024, {})
    assert not widgets._small_enough(personalized, 256, 1024, {})
    assert widgets._small_enough(personalized, 32, 512, {})
    assert widgets._input_words(personalized, 8, 3) == 8 * 8 * 3
