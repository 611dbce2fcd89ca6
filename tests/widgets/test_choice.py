"""The choice explorer follows its controls and has a static picture for a page without a kernel."""
import pytest

from collective_lib.widgets import CHOICE_PS, choice_explorer
from collective_lib.widgets._demo import html_text

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def test_explorer_follows_its_controls():
    explorer = choice_explorer("allreduce", m_max=1000)
    assert "The fastest allreduce" in explorer.caption.value
    before = explorer.image.value
    explorer.set_controls(operation="broadcast", ts=1.0, tw=0.01)
    assert "The fastest broadcast" in explorer.caption.value
    assert "ts = 1, tw = 0.01" in explorer.caption.value
    assert explorer.image.value != before
    assert explorer.alt_text.startswith("Fastest broadcast by the closed forms, ts = 1, tw = 0.01")


def test_mpich_check_box_adds_and_removes_its_lines():
    explorer = choice_explorer("broadcast", m_max=100_000)
    assert "Dashed lines: MPICH's switches" in explorer.alt_text
    explorer.controls["mpich"].value = False
    assert "MPICH" not in explorer.alt_text


def test_static_fallback_is_the_picture_with_its_caption_and_alt_text():
    explorer = choice_explorer("allreduce", m_max=100)
    bundle = explorer._repr_mimebundle_()
    assert WIDGET_VIEW in bundle
    page = bundle["text/html"]
    assert '<img src="data:image/png;base64,' in page and 'alt="Fastest allreduce' in page
    assert "The fastest allreduce by the catalog" in html_text(page)


def test_a_hypercube_only_operation_keeps_the_p_it_runs_on():
    explorer = choice_explorer("prefix_sum_and_total", m_max=10, mpich=False)
    assert explorer._ps(explorer._settings()) == [p for p in CHOICE_PS if p & (p - 1) == 0]


def test_unknown_operation_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown operation 'broadcats'; the catalog's "
                                         r"operations are \['broadcast'"):
        choice_explorer("broadcats")


def test_the_choice_and_cost_explorers_share_one_picture_demo():
    """The set-up, redraw and static page of a one-picture explorer live in
    widgets._demo.PictureDemo; the explorers only draw and caption."""
    from collective_lib.widgets import ChoiceExplorer, CostExplorer
    from collective_lib.widgets._demo import PictureDemo
    for explorer in (ChoiceExplorer, CostExplorer):
        assert issubclass(explorer, PictureDemo)
        assert not {"_start", "_redraw", "_resimulate", "fallback_html"} & set(vars(explorer))
