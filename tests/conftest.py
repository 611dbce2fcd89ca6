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

# Every Jupyter application the tests start gives its kernels Unix sockets, not TCP ports
# that another process can take first (see jupyter_kernels.py).
from jupyter_kernels import CONFIG_DIR as _KERNELS_CONFIG  # noqa: E402  (needs the path above)

os.environ["JUPYTER_CONFIG_PATH"] = os.pathsep.join(
    filter(None, [str(_KERNELS_CONFIG), os.environ.get("JUPYTER_CONFIG_PATH")]))

# The longest modules, longest first (test-seconds on the 2-core machine of `make test`:
# the chapters under nbval, the whole book's build from those runs and its browser and PDF
# checks about 400, the course rehearsal 160, then the assignments' round trips). `make test` hands out whole files
# (--dist loadfile --no-loadscope-reorder) in collection order, so these start first and
# no long file is left running alone at the end while the other worker idles.
SLOWEST_FIRST = (
    "notebooks/test_built_book.py",
    "exercises/test_course_workflow.py",
    "exercises/test_broken_lock.py",
    "core/test_catalog.py",
    "exercises/test_scatter_any_root.py",
    "exercises/test_ring_reduction.py",
    "exercises/test_pipelining_theorem_13_3.py",
    "exercises/test_gray_codes.py",
    "exercises/test_adversarial.py",
    "exercises/test_adversarial_limits.py",
    "exercises/test_reverse_send_order.py",
    "exercises/test_grid_alltoall.py",
    "exercises/test_min_location.py",
    "algorithms/test_broadcast_book.py",
)


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """Absolute path of the repository root."""
    return REPO_ROOT


def pytest_collection_modifyitems(config, items):
    """Run the modules of SLOWEST_FIRST first, in that order; the rest as collected."""
    missing = [name for name in SLOWEST_FIRST if not (TESTS_DIR / name).is_file()]
    if missing:
        raise pytest.UsageError(f"tests/conftest.py: SLOWEST_FIRST names no file {missing}")
    rank = {name: index for index, name in enumerate(SLOWEST_FIRST)}

    def order(item):
        path = Path(str(item.path)).resolve()
        inside = path.is_relative_to(TESTS_DIR)
        return rank.get(path.relative_to(TESTS_DIR).as_posix() if inside else "", len(rank))

    items.sort(key=order)
