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


@pytest.mark.parametrize("make", ["step_player", "cost_explorer", "lock_player",
                                  "choice_explorer"])
def test_nothing_runs_past_a_narrow_output_which_jupyterlab_would_cut_off(make):
    # Beside the file browser on a 1280-pixel screen JupyterLab's output is 846 pixels
    # wide: a 612-pixel picture right of the 300-pixel column lost its right edge, and on
    # a phone the whole picture lay outside the screen.  The row wraps (the picture goes
    # below the column), nothing is wider than the output, and a picture wider than a
    # phone scrolls sideways in its own box at its natural size.
    demo = getattr(widgets, make)()
    row = demo.widget.children[0]
    column, box = row.children
    assert row.layout.flex_flow == "row wrap"
    assert column.layout.max_width == "100%" and column.layout.min_width is None
    assert all(c.layout.max_width == "100%" for c in demo.controls.values())
    assert box.children == (demo.image,)
    assert box.layout.max_width == "100%" and box.layout.overflow.split()[0] == "auto"


def test_the_value_players_rows_wrap_and_its_table_scrolls_sideways():
    # On a phone the p slider beside the algorithm menu and the step slider beside the
    # play button ran past the output and were cut off, out of sight.
    player = widgets.value_player("reduce", p=16)
    rows = [c for c in player.widget.children if isinstance(c, W.HBox)]
    assert len(rows) == 3 and all(r.layout.flex_flow == "row wrap" for r in rows)
    assert player.controls["algorithm"].layout.max_width == "100%"
    assert '<div style="overflow-x:auto;width:0;min-width:100%"><table' in player.table.value
