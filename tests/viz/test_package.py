"""viz is a package of small modules, each with its own __all__, re-exported as one."""
import importlib
import sys

import pytest

from collective_lib import viz
from package_checks import module_problems, package_problems


def test_every_module_exports_exactly_its_public_names_and_viz_all_of_them():
    assert package_problems("collective_lib.viz") == []


def test_the_chapters_names_are_still_reachable_as_viz_attributes():
    for name in ("draw_network", "draw_step", "draw_steps", "space_time", "link_load_map",
                 "cost_curves", "optimal_params", "holdings_table", "values_table",
                 "memory_timeline", "memory_spans", "critical_sections", "cache_holders",
                 "waits_on", "wait_graph", "draw_bipartite_multigraph"):
        assert callable(getattr(viz, name)), name


def test_recording_and_spans_are_not_pictures():
    # One way of doing each thing: recording a run and symbolic operands live beside the simulator.
    for name in ("record_run", "RecordedRun", "PEState", "Span", "span_op", "span_inputs"):
        assert name not in viz.__all__ and not hasattr(viz, name), name


def _problems_of_fresh(package_name):
    """package_problems on a package imported anew (its files may have changed)."""
    for name in [n for n in sys.modules if n == package_name or n.startswith(package_name + ".")]:
        del sys.modules[name]
    return package_problems(package_name)


def test_the_check_catches_a_module_without_all_and_a_late_import(tmp_path, monkeypatch):
    package = tmp_path / "fake_viz_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("from .good import shown\n__all__ = ['shown']\n")
    (package / "good.py").write_text("__all__ = ['shown']\n\n\ndef shown():\n    pass\n")
    (package / "bad.py").write_text("def hidden():\n    pass\n\n\nimport os\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "modules", dict(sys.modules))     # forget the fake package after
    assert _problems_of_fresh("fake_viz_pkg") == ["fake_viz_pkg.bad has no __all__ list of names"]
    (package / "bad.py").write_text("__all__ = []\n\n\ndef hidden():\n    pass\n\n\nimport os\n")
    assert _problems_of_fresh("fake_viz_pkg") == [
        "fake_viz_pkg.bad defines the public name 'hidden' but leaves it out of __all__",
        "fake_viz_pkg.bad imports at line 8, after its first definition"]
    (package / "__init__.py").write_text("from .good import shown\n__all__ = []\n")
    (package / "bad.py").write_text("__all__ = []\n")
    assert _problems_of_fresh("fake_viz_pkg") == [
        "fake_viz_pkg.__all__ differs from its modules' __all__: missing ['shown'], extra []"]


@pytest.mark.parametrize("module", ["collective_lib.recording", "collective_lib.spans"])
def test_recording_and_spans_modules_are_shaped_like_the_viz_modules(module):
    assert module_problems(importlib.import_module(module)) == []
