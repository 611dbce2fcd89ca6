"""The chapter's pictures of Fig. 22, Table 18 and Fig. 23 draw the report's numbers."""
import matplotlib.pyplot as plt
import numpy as np
import pytest

from collective_lib.cm200 import drawings
from collective_lib.cm200.models import cm200_table


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_figure_22_plots_table_8():
    fig = drawings.broadcast_times_figure()
    left, right = fig.axes
    t8 = cm200_table(8)
    measured = [line for line in left.lines if line.get_label().endswith("Table 8")]
    assert len(measured) == 3
    assert np.allclose(measured[0].get_ydata(), t8["one_total"] / 1000)
    assert left.get_xscale() == "log" and left.get_yscale() == "log"
    assert [line.get_label().split(":")[0] for line in right.lines[:3]] == \
        ["Table 7", "Table 8", "Table 17"]


def test_table_18_picture_has_every_column():
    ax = drawings.data_rates_figure().axes[0]
    assert len(ax.lines) == 12
    assert np.allclose(ax.lines[4].get_ydata(), cm200_table(18)["d_cycles"])


def test_figure_23_plots_every_printed_rate():
    fig = drawings.matvec_rates_figure()
    mv = fig.axes[0]
    dots = [line for line in mv.lines if line.get_gid() == "table19"]
    assert sum(len(line.get_xdata()) for line in dots) == 15
    assert max(max(line.get_ydata()) for line in dots) == pytest.approx(10.785)
