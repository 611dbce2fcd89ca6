"""Every control and picture of a demo has a name a screen reader can read in JupyterLab.

ipywidgets names a slider, drop-down or check box by its ``description``, a button by its
text; an image widget has no alt text, so the demos give it a title (``tooltip``), which
a screen reader reads instead. ``ipywidgets.Play`` draws icon buttons without a name, so
the demos keep it hidden and show a "play" toggle that drives it.
"""
from __future__ import annotations

import ipywidgets as W
import pytest

from collective_lib import widgets

DEMOS = {
    "step_player": lambda: widgets.step_player("broadcast", algorithm="binomial_broadcast", p=8),
    "value_player": lambda: widgets.value_player("reduce", p=6),
    "cost_explorer": lambda: widgets.cost_explorer("broadcast", p=8, m=16),
    "lock_player": lambda: widgets.lock_player("cas_spin_lock", p=3, rounds=1),
}
NAMED_BY_DESCRIPTION = (W.IntSlider, W.FloatSlider, W.FloatLogSlider, W.Dropdown, W.Checkbox,
                        W.ToggleButton, W.Button)


def tree(widget):
    """``widget`` and every widget inside it."""
    yield widget
    for child in getattr(widget, "children", ()):
        yield from tree(child)


@pytest.mark.parametrize("name", DEMOS)
def test_every_control_and_picture_has_a_name(name):
    demo = DEMOS[name]()
    unnamed = []
    for widget in tree(demo.widget):
        if isinstance(widget, W.Play):
            assert widget.layout.display == "none", f"{name}: a Play widget shows its icons"
        elif isinstance(widget, NAMED_BY_DESCRIPTION) and not widget.description.strip():
            unnamed.append(type(widget).__name__)
        elif isinstance(widget, W.ToggleButtons) and not all(
                str(label).strip() for label in widget._options_labels):
            unnamed.append("ToggleButtons option")
        elif isinstance(widget, W.Image) and widget.value and len(widget.tooltip or "") < 20:
            unnamed.append(f"Image titled {widget.tooltip!r}")
    assert not unnamed, f"{name}: without a name for a screen reader: {unnamed}"


@pytest.mark.parametrize("name", ["step_player", "value_player", "lock_player"])
def test_the_play_toggle_drives_a_hidden_player_over_the_slider(name):
    demo = DEMOS[name]()
    button = demo.controls["play"]
    assert isinstance(button, W.ToggleButton) and button.description == "play"
    slider = demo.controls["time" if name == "lock_player" else "step"]
    assert (demo.player.min, demo.player.max) == (slider.min, slider.max)
    assert demo.player in set(tree(demo.widget))       # rendered, so it can animate


def test_a_picture_title_says_what_it_shows():
    player = DEMOS["step_player"]()
    first = player.image.tooltip
    player.controls["step"].value = 2
    assert player.image.tooltip != first and "PE" in player.image.tooltip
