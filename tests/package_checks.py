"""Structural checks of a package split into modules (used by tests/viz and tests/widgets).

A package passes when every module declares ``__all__`` at the top, lists in it
exactly the public names it defines, stays under the size limit and imports
only at its top; and the package's own ``__all__`` re-exports exactly the
union of its public modules' ``__all__``.

Helpers that the modules of one package share live in a package-internal
module whose file name starts with an underscore (``viz/_drawing.py``): inside
it the names are public and listed in its ``__all__``, the package does not
re-export them, and nothing outside the package imports it.  No module imports
another module's underscore name (:func:`private_imports`,
:func:`internal_module_imports`).
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
        if info.name.rpartition(".")[2].startswith("_"):
            for n in getattr(module, "__all__", ()):
                if n in getattr(package, "__all__", ()):
                    problems.append(f"{package_name} re-exports {n!r} of its internal "
                                    f"module {info.name}")
            continue
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


PACKAGE = Path(__file__).resolve().parent.parent / "collective_lib"


def _imports(root: Path = PACKAGE):
    """(file, line, imported module, names) of every import in the package, also inside
    functions; the module is absolute (``collective_lib.viz.style``), the names are those
    of a ``from ... import`` (empty for ``import x``)."""
    for path in sorted(root.rglob("*.py")):
        package = path.relative_to(root.parent).with_suffix("").parts[:-1]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = list(package[:len(package) - node.level + 1])
                    module = ".".join(base + ([node.module] if node.module else []))
                else:
                    module = node.module
                names = [alias.name for alias in node.names]
                yield path, node.lineno, module, names
                for name in names:        # from . import _drawing: a module, not a name
                    yield path, node.lineno, f"{module}.{name}", []
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    yield path, node.lineno, alias.name, []


def _where(path: Path, line: int) -> str:
    return f"{path.relative_to(PACKAGE.parent)}:{line}"


def _is_module(top: Path, parts) -> bool:
    where = top.joinpath(*parts)
    return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def private_imports(root: Path = PACKAGE) -> list:
    """Every ``from x import _name`` in collective_lib, as 'file:line: module._name'.

    A name with one leading underscore belongs to its module; what modules share
    lives public in an underscore module of their package, or public in its own.
    """
    return [f"{_where(path, line)}: {module}.{name}"
            for path, line, module, names in _imports(root)
            for name in names if _private(name)]


def internal_module_imports(root: Path = PACKAGE) -> list:
    """Imports of a package's underscore module from outside that package.

    ``collective_lib.viz._drawing`` may be imported by the modules of
    ``collective_lib.viz`` (and below it), by no one else.
    """
    found = []
    for path, line, module, _ in _imports(root):
        parts = module.split(".")
        importer = ".".join(path.relative_to(root.parent).with_suffix("").parts)
        for i, part in enumerate(parts):
            if _private(part) and _is_module(root.parent, parts[:i + 1]):
                owner = ".".join(parts[:i])
                if not (importer + ".").startswith(owner + "."):
                    found.append(f"{_where(path, line)}: {module}")
                break
    return sorted(set(found))
