"""Shared pytest set-up for the library, notebook and exercise tests."""

import os
import sys
from pathlib import Path

import pytest

TESTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parent

# Make the helper modules in tests/ (e.g. nbgrader_harness) importable however
# pytest was started and whatever import mode it uses.
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

# Tests run without a display: draw with the non-interactive backend.
os.environ.setdefault("MPLBACKEND", "Agg")


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """Absolute path of the repository root."""
    return REPO_ROOT
