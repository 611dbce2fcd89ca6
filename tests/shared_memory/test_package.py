"""The shape of collective_lib.shared_memory: one module per concept, each with its own
``__all__``, and the package re-exporting exactly their public names."""
import pkgutil

import collective_lib.shared_memory as shared_memory
from package_checks import package_problems

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
    modules = sorted(m.name for m in pkgutil.iter_modules(shared_memory.__path__))
    assert modules == ["_engine", "checking", "machine", "ops", "runners"]


def test_every_module_exports_exactly_its_public_names_and_the_package_all_of_them():
    assert package_problems("collective_lib.shared_memory") == []


def test_the_package_keeps_the_public_names_of_the_module_it_replaced():
    assert set(shared_memory.__all__) >= PUBLIC_NAMES
