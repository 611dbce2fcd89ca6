"""The shape every module of collective_lib keeps (CONTRIBUTING.md: every concept has one home).

Each module declares ``__all__`` at its top and lists exactly the public names it
defines, imports only at its top, never extends ``__all__`` with ``+=`` and stays
under about 800 lines; the packages that gather one concept's modules (viz,
widgets, shared_memory, grading) re-export exactly what their modules export.
"""
import importlib
import pkgutil

import pytest

import collective_lib
from package_checks import module_problems, package_problems

MODULES = sorted(info.name for info in pkgutil.walk_packages(collective_lib.__path__,
                                                             "collective_lib.")
                 if not info.name.endswith("__main__"))

REEXPORTING_PACKAGES = ["collective_lib.viz", "collective_lib.widgets",
                        "collective_lib.shared_memory", "collective_lib.grading"]


@pytest.mark.parametrize("name", MODULES)
def test_module_keeps_the_shape(name):
    assert module_problems(importlib.import_module(name)) == []


@pytest.mark.parametrize("name", REEXPORTING_PACKAGES)
def test_package_reexports_exactly_its_modules_names(name):
    assert package_problems(name) == []
