"""The shape of collective_lib.shared_memory: one module per concept, each with its own
``__all__``, and the package re-exporting exactly their public names."""
import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import collective_lib.shared_memory as shared_memory

MODULES = sorted(m.name for m in pkgutil.iter_modules(shared_memory.__path__,
                                                      "collective_lib.shared_memory."))

# The public names of the single module this package replaced; chapters, exercises and the
# rest of the library import them from the package.
PUBLIC_NAMES = {
    "Read", "Write", "CAS", "FetchAdd", "Pause", "Marker",
    "read", "write", "cas", "fetch_add", "pause", "enter", "leave", "note",
    "cell_array", "packed_lines", "uses_memory",
    "CoherenceModel", "Event", "SharedRun", "Violation",
    "simulate_shared", "run_with_threads", "find_violation", "explore_interleavings",
    "format_trace", "exclusion_violation", "mutual_exclusion",
}


def test_the_package_has_one_module_per_concept():
    assert MODULES == ["collective_lib.shared_memory." + name
                       for name in ("checking", "machine", "ops", "runners")]


@pytest.mark.parametrize("name", MODULES)
def test_each_module_declares_what_it_exports(name):
    module = importlib.import_module(name)
    assert isinstance(module.__all__, list) and module.__all__
    assert len(set(module.__all__)) == len(module.__all__), f"{name}.__all__ repeats a name"
    for public in module.__all__:
        assert getattr(module, public).__module__ == name, \
            f"{name}.__all__ lists {public}, which is defined elsewhere"


@pytest.mark.parametrize("name", MODULES)
def test_each_module_is_short_and_imports_only_at_its_top(name):
    path = Path(importlib.import_module(name).__file__)
    text = path.read_text()
    assert len(text.splitlines()) < 800
    body = ast.parse(text).body
    first_definition = next(i for i, node in enumerate(body)
                            if isinstance(node, (ast.FunctionDef, ast.ClassDef)))
    late = [node.lineno for node in body[first_definition:]
            if isinstance(node, (ast.Import, ast.ImportFrom))]
    assert not late, f"{path.name} imports in the middle of the module (lines {late})"


def test_the_package_reexports_every_module_name_and_nothing_else():
    exported = [n for name in MODULES for n in importlib.import_module(name).__all__]
    assert len(exported) == len(set(exported)), "two modules export the same name"
    assert sorted(shared_memory.__all__) == sorted(exported)
    assert set(shared_memory.__all__) == PUBLIC_NAMES
    for name in MODULES:
        module = importlib.import_module(name)
        for public in module.__all__:
            assert getattr(shared_memory, public) is getattr(module, public)
