"""The shape every module of collective_lib keeps (CONTRIBUTING.md: every concept has one home).

Each module declares ``__all__`` at its top and lists exactly the public names it
defines, imports only at its top, never extends ``__all__`` with ``+=`` and stays
under about 800 lines; the packages that gather one concept's modules (viz,
widgets, shared_memory, grading) re-export exactly what their modules export.
The package is built in floors (CONTRIBUTING.md, "The layers"): a module imports
only from floors below its own, so the checks of a student's code (grading) never
reach the nbgrader integration (autograde) on top of them; no module imports
another's private name.
"""
import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import collective_lib
from package_checks import (internal_module_imports, module_problems, package_problems,
                            private_imports)

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


# From the ground up, as CONTRIBUTING.md's table of the layers lists them: each
# top-level module or package of collective_lib, and the floor it stands on. Two modules
# of cm200/ stand lower than their package: the Gray codes and index formulas that the
# catalog's CM-200 programs (algorithms/cm200.py) are built on.
FLOORS = [
    {"errors", "validate", "ops", "model", "networks", "limits", "spans", "wording",
     "listing", "cm200.gray"},
    {"trees", "coloring", "collectives", "packets", "groups", "runs", "cm200.schedules"},
    {"simulator", "embeddings"},
    {"catalog", "shared_memory"},
    {"algorithms", "recording", "summary", "mpi", "selection"},
    {"grading", "viz"},
    {"autograde", "widgets", "cm200"},
]
PACKAGE = Path(collective_lib.__file__).parent


LOWER_MODULES = {"cm200.gray", "cm200.schedules"}


def _room(module: str) -> str:
    """The top-level module or package of collective_lib that ``module`` belongs to (or
    one of the :data:`LOWER_MODULES`)."""
    parts = module.split(".")
    if ".".join(parts[1:3]) in LOWER_MODULES:
        return ".".join(parts[1:3])
    return parts[1] if len(parts) > 1 else "__init__"


def import_rooms() -> dict:
    """``{room: {room it imports, ...}}`` from every import in the package, also those
    inside functions (an import on first use is an import all the same)."""
    found: dict = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
        if parts[-1] == "__init__":
            parts = parts[:-1]
        room = _room(".".join(parts))
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = package[:len(package) - node.level + 1] if node.level else []
                module = ".".join(base + ([node.module] if node.module else []))
                targets = [module] if node.module else [f"{module}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            for target in targets:
                if target.split(".")[0] == "collective_lib" and _room(target) != room:
                    found.setdefault(room, set()).add(_room(target))
    return found


def test_every_room_has_a_floor_and_imports_only_from_below():
    floor = {room: level for level, rooms in enumerate(FLOORS) for room in rooms}
    rooms = {info.name for info in pkgutil.iter_modules(collective_lib.__path__)} | LOWER_MODULES
    assert rooms == set(floor), (f"rooms without a floor: {sorted(rooms - set(floor))}; "
                                 f"floors naming no room: {sorted(set(floor) - rooms)}")
    upward = [f"{room} (floor {floor[room] + 1}) imports {other} (floor {floor[other] + 1})"
              for room, others in sorted(import_rooms().items()) if room != "__init__"
              for other in sorted(others) if floor[other] >= floor[room]]
    assert upward == []


def test_the_checks_never_reach_the_nbgrader_integration_above_them():
    assert "autograde" not in import_rooms().get("grading", set())
    uses_nbgrader = sorted(
        str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
        if any(isinstance(node, (ast.Import, ast.ImportFrom)) and any(
            name.split(".")[0] == "nbgrader" for name in (
                [node.module or ""] if isinstance(node, ast.ImportFrom)
                else [alias.name for alias in node.names]))
            for node in ast.walk(ast.parse(path.read_text()))))
    assert uses_nbgrader and all(path.startswith("autograde/") for path in uses_nbgrader), \
        uses_nbgrader


def test_no_module_imports_a_private_name_of_another():
    assert private_imports() == []


def test_no_package_internal_module_is_imported_from_outside_its_package():
    assert internal_module_imports() == []


KINDS = {"Send", "Recv", "SendRecv", "Compute", "Multi"}
# The kinds say themselves what they send and receive (ops.py); only the engine's hot
# path may look at the type itself, since it is measured (benchmarks/scale.py).
MAY_SWITCH_ON_KINDS = {"ops.py", "simulator.py"}


def _names(node) -> set:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | \
           {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}


def test_no_type_switch_on_operation_kinds_outside_the_kinds_and_the_engine():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        where = str(path.relative_to(PACKAGE))
        for node in ast.walk(ast.parse(path.read_text())):
            switch = (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "isinstance"
                      and len(node.args) == 2 and _names(node.args[1]) & KINDS) or (
                isinstance(node, ast.Compare) and any(isinstance(o, (ast.Is, ast.IsNot))
                                                      for o in node.ops)
                and _names(ast.Tuple(elts=node.comparators, ctx=ast.Load())) & KINDS)
            if switch and where not in MAY_SWITCH_ON_KINDS:
                found.append(f"{where}:{node.lineno}")
    assert found == []
