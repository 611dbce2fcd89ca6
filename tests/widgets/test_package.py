"""widgets is a package of small modules, each with its own __all__, re-exported as one."""
import subprocess
import sys

import ipywidgets as W
import pytest
from package_checks import package_problems

from collective_lib import widgets
from collective_lib.widgets._demo import CONTROLS_WIDTH


def test_every_module_exports_exactly_its_public_names_and_widgets_all_of_them():
    assert package_problems("collective_lib.widgets") == []


def test_import_leaves_pyplot_and_the_backend_alone():
    code = ("import sys, collective_lib.widgets; "
            "print('matplotlib.pyplot' in sys.modules, 'matplotlib.animation' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["False", "False"] and out.stderr == ""


@pytest.mark.parametrize("make", ["step_player", "cost_explorer", "lock_player"])
def test_controls_fit_their_column_so_it_shows_no_scroll_bar(make):
    # JupyterLab draws a slider, a labelled drop-down or a check box 300 pixels wide plus
    # 2-pixel side margins: at that width they overran the 300-pixel column.
    demo = getattr(widgets, make)()
    column = demo.widget.children[0].children[0]
    assert column.layout.width == CONTROLS_WIDTH
    inline = [c for c in column.children
              if isinstance(c, (W.IntSlider, W.FloatLogSlider, W.Dropdown, W.Checkbox))]
    assert inline
    for control in inline:
        assert control.layout.width == "auto" or (control.layout.width == CONTROLS_WIDTH
                                                  and control.layout.margin.split()[1] == "0")
