"""The instructor's reference answers, ``exercises/source/<assignment>/_reference.py``, for the tests.

The reference answers are not part of ``collective_lib`` (a student could call
or copy them) and nbgrader never releases them; tests that need one load it
from the assignment's source directory::

    ring = load_reference("ring_reduction").all_to_all_red_ring

This module is a helper, not a test.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SOURCE_DIR = Path(__file__).resolve().parents[1] / "exercises" / "source"


def reference_file(assignment: str) -> Path:
    """``exercises/source/<assignment>/_reference.py``; a clear error if it does not exist."""
    path = SOURCE_DIR / assignment / "_reference.py"
    if not path.is_file():
        raise FileNotFoundError(f"assignment {assignment!r} has no reference answer {path}")
    return path


def load_reference(assignment: str) -> ModuleType:
    """Import ``assignment``'s ``_reference.py`` (once) as module ``_reference_<assignment>``."""
    name = f"_reference_{assignment}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, reference_file(assignment))
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def assignments_with_reference() -> list:
    """The assignments that have a ``_reference.py``, sorted."""
    return sorted(p.parent.name for p in SOURCE_DIR.glob("*/_reference.py"))
