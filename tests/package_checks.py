"""Structural checks of a package split into modules (used by tests/viz and tests/widgets).

A package passes when every module declares ``__all__`` at the top, lists in it
exactly the public names it defines, stays under the size limit and imports
only at its top; and the package's own ``__all__`` re-exports exactly the
union of its modules' ``__all__``.
"""
import ast
import importlib
import pkgutil
from pathlib import Path

MAX_LINES = 800

#: Module-level names read by the library itself rather than imported by users: the
#: position of an algorithm module's entries in the catalog.
MARKERS = {"CATALOG_POSITION"}


def _defined_names(tree) -> set:
    """Names a module binds at its top level by def, class or assignment."""
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def _late_imports(tree) -> list:
    """Top-level imports that come after the first def or class."""
    seen_code, late = False, []
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            seen_code = True
        elif isinstance(node, (ast.Import, ast.ImportFrom)) and seen_code:
            late.append(node.lineno)
    return late


def _augmented_all(tree) -> bool:
    return any(isinstance(n, ast.AugAssign) and getattr(n.target, "id", None) == "__all__"
               for n in ast.walk(tree))


def module_problems(module) -> list:
    """What is wrong with one module's ``__all__``, size and imports."""
    name, problems = module.__name__, []
    source = Path(module.__file__).read_text()
    tree = ast.parse(source)
    exported = getattr(module, "__all__", None)
    if not isinstance(exported, (list, tuple)) or not all(isinstance(n, str) for n in exported):
        return [f"{name} has no __all__ list of names"]
    if len(set(exported)) != len(exported):
        problems.append(f"{name}.__all__ lists a name twice")
    problems += [f"{name}.__all__ names {n!r}, which it does not have"
                 for n in exported if not hasattr(module, n)]
    if not module.__file__.endswith("__init__.py"):
        public = {n for n in _defined_names(tree) if not n.startswith("_")} - MARKERS
        problems += [f"{name} defines the public name {n!r} but leaves it out of __all__"
                     for n in sorted(public - set(exported))]
    if _augmented_all(tree):
        problems.append(f"{name} extends __all__ with +=")
    problems += [f"{name} imports at line {line}, after its first definition"
                 for line in _late_imports(tree)]
    lines = source.count("\n")
    if lines > MAX_LINES:
        problems.append(f"{name} has {lines} lines (more than {MAX_LINES})")
    return problems


def package_problems(package_name: str) -> list:
    """What is wrong with a package and its modules (an empty list when nothing is)."""
    package = importlib.import_module(package_name)
    problems = module_problems(package)
    union = []
    for info in pkgutil.iter_modules(package.__path__, package_name + "."):
        module = importlib.import_module(info.name)
        problems += module_problems(module)
        for n in getattr(module, "__all__", ()):
            if n in union:
                problems.append(f"{n!r} is exported by two modules of {package_name}")
            union.append(n)
            if getattr(package, n, None) is not getattr(module, n, None):
                problems.append(f"{package_name}.{n} is not {info.name}.{n}")
    exported = list(getattr(package, "__all__", ()))
    if sorted(exported) != sorted(union):
        problems.append(f"{package_name}.__all__ differs from its modules' __all__: "
                        f"missing {sorted(set(union) - set(exported))}, "
                        f"extra {sorted(set(exported) - set(union))}")
    return problems
