"""The cost explorer follows its controls and simulates only points small enough to be quick."""
import pytest

from collective_lib import catalog
from collective_lib.widgets import cost_explorer
from collective_lib.widgets.costs import _small_enough

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


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


def test_the_cost_explorer_skips_simulating_all_to_all_inputs_that_are_too_large():
    # Every PE of an all-to-all exchange holds p messages, so the inputs grow like p*p*m.
    personalized = catalog()["alltoall_cyclic"]
    broadcast = catalog()["binomial_broadcast"]
    assert _small_enough(broadcast, 256, 1024, {})
    assert not _small_enough(personalized, 256, 1024, {})
    assert _small_enough(personalized, 32, 512, {})
