"""Reading a student's cells without running them: what a function uses, what it resembles.

The trusted checker never lets a student's object into its own process, so
the grading library cannot look at a student's code objects there. It reads
the source of the student's cells instead (the checker has it from the
notebook, not from the student's process):

* :func:`used_names` — every name, attribute and string a function reaches,
  following the student's own helper functions, as
  :func:`~collective_lib.grading.forbid_library_calls` needs;
* :func:`every_binding` and :func:`repetitions` — every statement that gives a
  value its value (a table or a schedule built at the top of a cell, in a loop),
  and whether they repeat or draw at random, for a value asked for by hand;
* :func:`dynamic_lookups` — the ways to reach an object without naming it
  (``getattr`` with a computed name, ``globals()``, ``eval``, ``importlib``,
  ``sys.modules``, ``inspect.getsource``...), which get a submission flagged
  for a human to look at;
* :func:`similarity` — how alike two functions are once names, docstrings and
  strings are ignored (1.0: the same syntax tree up to renaming), to flag a
  library function handed in with a few edits.

Examples
--------
>>> cells = ["def helper(x):\\n    return catalog()[x]\\n",
...          "def mine(me, p, data):\\n    return helper('ring')\\n    yield\\n"]
>>> sorted(used_names(cells, "mine") & {"catalog", "ring"})
['catalog', 'ring']
>>> a = "def f(me, p, data):\\n    x = data + me\\n    return x\\n"
>>> b = "def g(rank, size, d):\\n    '''Mine.'''\\n    y = d + rank\\n    return y\\n"
>>> similarity(a, b)
1.0
"""
from __future__ import annotations

import ast
import builtins
import difflib
import functools
import re
import textwrap

__all__ = ["definitions", "own_definitions", "every_binding", "used_names", "repetitions",
           "literal_tables", "dynamic_lookups", "canonical_labels", "similarity", "node_source", "likeness",
           "REVIEW_SIMILARITY", "REVIEW_MIN_NODES"]

# At least this similar to a library function: a human should look (flag, never zero).
# Measured on the course's assignments: a library function with names and a line or
# two changed scores 0.75 to 0.98; every reference solution is at most 0.54 similar
# to any catalog program. Functions smaller than REVIEW_MIN_NODES syntax-tree nodes
# (a one-line Gray code) look alike whoever writes them, and are never flagged.
REVIEW_SIMILARITY = 0.7
REVIEW_MIN_NODES = 40

_DYNAMIC_CALLS = {"getattr": "getattr with a computed name", "globals": "globals()",
                  "vars": "vars()", "locals": "locals()", "eval": "eval", "exec": "exec",
                  "__import__": "__import__", "compile": "compile",
                  "setattr": "setattr"}
_DYNAMIC_ATTRS = {"import_module": "importlib.import_module", "modules": "sys.modules",
                  "getsource": "inspect.getsource", "reload": "importlib.reload",
                  "__dict__": "__dict__", "__code__": "__code__", "__globals__": "__globals__"}


def _parse(source: str):
    try:
        return ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return None


def definitions(sources: list) -> dict:
    """``{name: node}`` of the top-level functions, classes and assignments, last one wins.

    A function or class defined in a block at the top (an ``if``, ``try``, ``with`` or
    loop) and a ``lambda`` assigned to a name there count too; a name memoized by
    rebinding (``f = functools.lru_cache(maxsize=None)(f)``) keeps the function it wraps.

    >>> found = definitions(["import functools", "if True:\\n    def f(): pass\\n",
    ...                      "f = functools.cache(f)"])
    >>> type(found["f"]).__name__
    'FunctionDef'
    """
    found, caches = {}, _functools_caches(sources)
    for statement, nested in _statements(sources):
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found[statement.name] = statement
        elif nested and not _assigns_a_lambda(statement):
            continue
        elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [
                statement.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name) and not (
                            name.id in found and _memoizes(statement, name.id, caches)):
                        found[name.id] = statement
    return found


def own_definitions(sources: list) -> set:
    """The names whose last binding in the cells is a ``def``, a ``class`` or the
    assignment of a ``lambda`` to the name alone (an import or another assignment after it
    makes the name another's), at the top or in a block there (:func:`definitions`); a
    memoizing rebinding (``f = functools.lru_cache()(f)``) keeps the name the student's. A
    name also imported in a block is never the student's: which branch runs is unknown.

    >>> sorted(own_definitions(["def f(): pass", "from m import g", "def g(): pass",
    ...                         "class C: pass", "def h(): pass", "h = g",
    ...                         "k = lambda i: i - (i & -i)"]))
    ['C', 'f', 'g', 'k']
    >>> sorted(own_definitions(["import functools", "if True:\\n    def a(): pass\\n",
    ...                         "def b(): pass",
    ...                         "b = functools.lru_cache(maxsize=None)(b)",
    ...                         "try:\\n    from m import c\\nexcept ImportError:\\n"
    ...                         "    def c(): pass\\n"]))
    ['a', 'b']
    """
    last, imported_in_a_block, caches = {}, set(), _functools_caches(sources)
    for statement, nested in _statements(sources):
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            names = {(alias.asname or alias.name).split(".")[0] for alias in statement.names}
            last.update(dict.fromkeys(names, False))
            if nested:
                imported_in_a_block |= names
            continue
        for bound in _bound_names(statement):
            if last.get(bound) and _memoizes(statement, bound, caches):
                continue
            last[bound] = _plainly_defines(statement, bound) and (isinstance(
                statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
                or _assigns_a_lambda(statement))
    return {name for name, defined in last.items()
            if defined and name not in imported_in_a_block}


def _statements(sources: list):
    """``(statement, nested)`` for every statement at the top of the cells and, in their
    order, every statement in a block there (``if``/``else``, ``try``, ``with``, a loop;
    not in a function or class), with ``nested`` True; a block's own statement comes
    first."""
    blocks = (ast.If, ast.Try, ast.With, ast.AsyncWith, ast.For, ast.AsyncFor, ast.While)
    for source in sources:
        tree = _parse(source)
        todo = [(statement, False) for statement in reversed(tree.body)] if tree else []
        while todo:
            statement, nested = todo.pop()
            yield statement, nested
            if isinstance(statement, blocks) or type(statement).__name__ == "TryStar":
                inner = [*statement.body, *getattr(statement, "orelse", ()),
                         *(line for handler in getattr(statement, "handlers", ())
                           for line in handler.body),
                         *getattr(statement, "finalbody", ())]
                todo.extend((line, True) for line in reversed(inner))


def _functools_caches(sources: list) -> set:
    """The spellings of functools' caches the cells may use: ``functools.cache`` and
    ``functools.lru_cache`` after ``import functools``, ``cache`` and ``lru_cache`` after
    ``from functools import ...``; none whose name the cells also bind otherwise (a
    function of the student's called ``cache``)."""
    imported, bound = set(), set()
    for statement, _ in _statements(sources):
        if isinstance(statement, ast.Import):
            imported |= {"functools" for alias in statement.names
                         if alias.name == "functools" and alias.asname is None}
        elif isinstance(statement, ast.ImportFrom) and statement.module == "functools":
            imported |= {alias.name for alias in statement.names
                         if alias.name in ("cache", "lru_cache") and alias.asname is None}
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            bound |= {(alias.asname or alias.name).split(".")[0] for alias in statement.names
                      if not (alias.name in ("functools", "cache", "lru_cache")
                              and alias.asname is None)}
        else:                           # assigned or defined anywhere in the statement
            bound |= {node.id if isinstance(node, ast.Name) else node.name
                      for node in ast.walk(statement)
                      if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del))
                      or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    usable = imported - bound
    return ({f"functools.{name}" for name in ("cache", "lru_cache")}
            if "functools" in usable else set()) | (usable & {"cache", "lru_cache"})


def _memoizes(statement, name: str, caches: set) -> bool:
    """Whether ``statement`` is ``name = <functools' cache or lru_cache>(name)`` (the
    cache called with constant options first, or not; spelled as the cells imported it,
    ``caches``: :func:`_functools_caches`): the name stays the function it wraps."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.targets[0], ast.Name)
            and statement.targets[0].id == name and isinstance(statement.value, ast.Call)):
        return False
    call = statement.value
    wrapper = call.func
    if isinstance(wrapper, ast.Call):           # lru_cache(maxsize=None)(name)
        if not all(isinstance(node, ast.Constant) for node in
                   [*wrapper.args, *(keyword.value for keyword in wrapper.keywords)]):
            return False
        wrapper = wrapper.func
    spelled = (wrapper.id if isinstance(wrapper, ast.Name) else
               f"{wrapper.value.id}.{wrapper.attr}" if isinstance(wrapper, ast.Attribute)
               and isinstance(wrapper.value, ast.Name) else "")
    return (spelled in caches and not call.keywords and len(call.args) == 1
            and isinstance(call.args[0], ast.Name) and call.args[0].id == name)


def _assigns_a_lambda(statement) -> bool:
    """Whether a top-level statement binds one name, and nothing else, to a ``lambda``
    (``parent = lambda i: i - (i & -i)``: a function of the student's own, as a ``def``)."""
    targets = (statement.targets if isinstance(statement, ast.Assign) else
               [statement.target] if isinstance(statement, ast.AnnAssign) else [])
    return (len(targets) == 1 and isinstance(targets[0], ast.Name)
            and isinstance(statement.value, ast.Lambda))


def _bound_names(statement) -> set:
    """The names a top-level statement defines, binds or changes anywhere inside it (in a
    loop, an ``if``, a ``with``...; not inside a function it defines): assigned, a loop's
    variable, an item or attribute assigned, or the object of a method call
    (``table.update(...)``)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {statement.name}
    found, todo = set(), [statement]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            found.add(node.id)
        elif (isinstance(node, (ast.Subscript, ast.Attribute))
              and isinstance(node.ctx, (ast.Store, ast.Del))
              or isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            base = node.func.value if isinstance(node, ast.Call) else node.value
            while isinstance(base, (ast.Subscript, ast.Attribute)):
                base = base.value
            if isinstance(base, ast.Name):
                found.add(base.id)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(node.name)
            continue
        if not isinstance(node, ast.Lambda):
            todo.extend(ast.iter_child_nodes(node))
    return found


def _plainly_defines(statement, name: str) -> bool:
    """Whether a top-level statement gives ``name`` a new value from scratch: a ``def`` or
    ``class`` of that name, or an assignment to the name itself."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return statement.name == name
    targets = (statement.targets if isinstance(statement, ast.Assign) else
               [statement.target] if isinstance(statement, ast.AnnAssign) else [])
    return any(isinstance(node, ast.Name) and node.id == name
               and isinstance(node.ctx, ast.Store)
               for target in targets for node in ast.walk(target))


def every_binding(sources: list) -> dict:
    """``{name: [statement, ...]}``: for every name, the top-level statements that give it
    its value, in order: the last that defines it from scratch (a ``def``, a ``class``, an
    assignment to the name), and every later one that binds or changes it anywhere inside
    (a loop that assigns it, ``table[k] = ...``, ``table.update(...)``)."""
    found = {}
    for source in sources:
        tree = _parse(source)
        for statement in tree.body if tree is not None else ():
            for bound in _bound_names(statement):
                if _plainly_defines(statement, bound):
                    found[bound] = [statement]
                else:
                    found.setdefault(bound, []).append(statement)
    return found


def _walk_reachable(sources: list, name: str, every: bool = False):
    """The nodes of ``name``'s definition and of the student's definitions it reaches
    (with ``every``, of every statement that gives each its value: :func:`every_binding`)."""
    defined = every_binding(sources) if every else {
        key: [node] for key, node in definitions(sources).items()}
    for statement in _statements_reached(defined, name, lambda statement: [
            node.id for node in ast.walk(statement)
            if isinstance(node, ast.Name) and node.id in defined]):
        yield from ast.walk(statement)


def _statements_reached(defined: dict, name: str, reads):
    """The statements of ``defined`` (``{name: the statements that bind it}``) of ``name``
    and of every name they read, ``reads(statement)``, each name's once, depth first."""
    todo, seen = [name.split(".")[0]], set()
    while todo:
        current = todo.pop()
        if current in seen or current not in defined:
            continue
        seen.add(current)
        for statement in defined[current]:
            yield statement
            todo.extend(reads(statement))


def _import_aliases(sources: list) -> dict:
    """``{alias: name}`` of every ``import ... as alias`` in ``sources``."""
    found = {}
    for tree in filter(None, map(_parse, sources)):
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found.update((alias.asname, alias.name.split(".")[-1])
                             for alias in node.names if alias.asname)
    return found


def used_names(sources: list, name: str, *, every: bool = False, own=()) -> set:
    """Names, attributes, imported names and string constants ``name`` reaches.

    A string counts with each of its words, so ``catalog()["binomial_broadcast"]``
    and ``getattr(module, "binomial_broadcast")`` use ``binomial_broadcast``; a name
    imported under another (``import ... as ei``) counts with its own name too.
    A name is followed to its last top-level definition; with ``every``, to every
    statement that gives it its value (:func:`every_binding`), as a value computed at
    the top of a cell (a table, a schedule found by a loop) needs. Those of the names
    ``own`` that the cells define themselves as a function or class
    (:func:`own_definitions`) are left out: what their definitions use counts instead.

    >>> cells = ["table = {}", "for p in (4, 8):\\n    table[p] = simulate(p)\\n"]
    >>> "simulate" in used_names(cells, "table"), "simulate" in used_names(
    ...     cells, "table", every=True)
    (False, True)
    """
    used, docstrings = set(), set()
    mine = own_definitions(sources) & set(own) if own else set()
    for node in _walk_reachable(sources, name, every):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
        if id(node) in docstrings:
            continue
        if isinstance(node, ast.Name):
            if node.id not in mine:
                used.add(node.id)
        elif isinstance(node, ast.Attribute):
            used.add(node.attr)
        elif isinstance(node, ast.alias):
            used.update({node.name.split(".")[-1], node.asname or ""})
        elif isinstance(node, ast.ImportFrom) and node.module:
            used.update(node.module.split("."))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            used.update(word for word in _words(node.value))
        elif isinstance(node, ast.ClassDef):
            used.update(base.id for base in node.bases if isinstance(base, ast.Name))
    used.discard("")
    aliases = _import_aliases(sources)
    return used | {aliases[alias] for alias in used & aliases.keys()}


def literal_tables(sources: list, name: str, at_least: int) -> list:
    """The values written into the cells as data that ``name`` reaches, when together they
    are at least ``at_least`` (else empty): ``(values, its first line)`` of every piece,
    largest first.

    A piece is a display (a list, tuple, set or dict written out) of constants and nothing
    else, outermost only; a constant index or value in an item assignment
    (``table[2] = 1.5``); the constants handed to a method that fills a container
    (``table.update(...)``, ``.append``, ``.setdefault``...); or a string, which counts
    with the numbers it holds (``"2:1.5 3:2.5"`` holds four), docstrings aside. Every
    statement that gives a reached name its value counts (:func:`every_binding`: a table
    filled after it is made), and the pieces add up, however a table is split.

    >>> cells = ["T = {p: p * p for p in range(9)}", "A = {2: 1.5, 3: 2.5, 4: 2.5}",
    ...          "def f(p):\\n    return A[p] + T[p] + sum([1, 2])\\n"]
    >>> literal_tables(cells, "f", at_least=8)
    [(6, '{2: 1.5, 3: 2.5, 4: 2.5}'), (2, '[1, 2]')]
    >>> literal_tables(cells, "f", at_least=9)
    []
    >>> split = ["A = {}", "A.update({2: 1.5})", "A[3] = 2.5", "B = '4:2.5 5:3.5'",
    ...          "def f(p):\\n    return A[p] + float(B.split()[0].split(':')[1])\\n"]
    >>> literal_tables(split, "f", at_least=8)
    [(4, "'4:2.5 5:3.5'"), (2, 'A.update({2: 1.5})'), (2, 'A[3] = 2.5')]
    """
    found, inside, docstrings = {}, set(), set()     # found: {id of a piece: [values, line]}

    def piece(node, counted_from=None) -> None:
        parts = list(ast.walk(node))
        if all(isinstance(part, _LITERAL_PARTS) for part in parts):
            inside.update(id(part) for part in parts)
            values = sum(_values_in(part) for part in parts if isinstance(part, ast.Constant))
            whole = counted_from or node        # an item assignment: its index and value
            if values:
                found.setdefault(id(whole), [0, node_source(whole).splitlines()[0][:60]])
                found[id(whole)][0] += values

    for node in _walk_data_reached(sources, name):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                docstrings.add(id(first.value))
        if id(node) in inside or id(node) in docstrings:
            continue
        if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
            piece(node)
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            items = [target for target in targets if isinstance(target, ast.Subscript)]
            for item in items:
                piece(item.slice, counted_from=node)
            if items and node.value is not None:
                piece(node.value, counted_from=node)
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in _FILLING):
            for argument in [*node.args, *(keyword.value for keyword in node.keywords)]:
                piece(argument, counted_from=node)
        elif isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)):
            piece(node)
    if sum(values for values, _ in found.values()) < at_least:
        return []
    return sorted(map(tuple, found.values()), key=lambda pair: -pair[0])   # else as met


def _walk_data_reached(sources: list, name: str):
    """The nodes of every statement that gives ``name`` its value (:func:`every_binding`),
    and of those of every name they read from the cells (in the order of their names), but
    a function's own parameters and locals (a loop over test cases at the top of a cell
    binds ``p`` too)."""
    defined = every_binding(sources)
    for statement in _statements_reached(defined, name, lambda statement: sorted(
            _free_names(statement) & defined.keys(), reverse=True)):
        yield from ast.walk(statement)


def _free_names(statement) -> set:
    """The names a statement reads and does not bind for itself: in a function or class, a
    parameter or a name assigned inside (unless declared ``global``) is its own."""
    read, own, declared = set(), set(), set()
    for node in ast.walk(statement):
        if isinstance(node, ast.Name):
            (read if isinstance(node.ctx, ast.Load) else own).add(node.id)
        elif isinstance(node, ast.arg):
            own.add(node.arg)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
    if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return read
    return read - (own - declared)


# What a table written out is made of: displays of constants (a minus sign included).
_LITERAL_PARTS = (ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Constant, ast.UnaryOp,
                  ast.USub, ast.UAdd, ast.Load)

# The methods that fill a container with the values handed to them.
_FILLING = {"update", "setdefault", "__setitem__", "append", "extend", "insert", "add",
            "fromkeys"}

# A number written in a string: 2, 1.5, 3e-7, whatever stands around it.
_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


def _values_in(constant: ast.Constant) -> int:
    """How many values a constant of a table holds: a string or bytes the numbers written in
    it, anything else one."""
    if isinstance(constant.value, (str, bytes)):
        text = (constant.value if isinstance(constant.value, str)
                else constant.value.decode("latin-1"))
        return len(_NUMBER.findall(text))
    return 1


#: Names that draw at random (the modules ``random`` and ``numpy.random``).
_RANDOM = {"random", "randrange", "randint", "choice", "choices", "shuffle", "sample",
           "default_rng", "integers", "permutation", "uniform"}


def repetitions(sources: list, name: str) -> list:
    """How the statements that give ``name`` its value (:func:`every_binding`), and the
    student's definitions they reach, repeat or draw at random: loops, comprehensions, a
    function that calls itself, random numbers, a ``seed=`` argument; empty for a value
    written as data or computed in one pass.

    >>> repetitions(["mine = [0, 1] * 2"], "mine")
    []
    >>> repetitions(["for s in range(9):\\n    mine = try_it(s)\\n"], "mine")
    ['a for loop']
    """
    found = []
    for node in _walk_reachable(sources, name, every=True):
        if isinstance(node, (ast.For, ast.AsyncFor)):
            found.append("a for loop")
        elif isinstance(node, ast.While):
            found.append("a while loop")
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            found.append("a comprehension")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                isinstance(inner, ast.Name) and inner.id == node.name
                for inner in ast.walk(node)):
            found.append(f"{node.name}, which calls itself")
        elif isinstance(node, ast.keyword) and node.arg == "seed":
            found.append("a seed")
        elif (isinstance(node, ast.Name) and node.id in _RANDOM
              or isinstance(node, ast.Attribute) and node.attr in _RANDOM):
            found.append("random numbers")
    return list(dict.fromkeys(found))


def _words(text: str) -> list:
    word, words = [], []
    for char in text + " ":
        if char.isalnum() or char == "_":
            word.append(char)
        elif word:
            words.append("".join(word))
            word = []
    return words


def dynamic_lookups(sources: list) -> list:
    """Where the student's cells reach objects without naming them (for a human to judge)."""
    found = []
    for source in sources:
        tree = _parse(source)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                what = _DYNAMIC_CALLS.get(node.func.id)
                computed = not (node.func.id in ("getattr", "setattr") and len(node.args) > 1
                                and isinstance(node.args[1], ast.Constant))
                if what and computed:
                    found.append(f"{what} (line {node.lineno})")
            elif isinstance(node, ast.Attribute) and node.attr in _DYNAMIC_ATTRS:
                found.append(f"{_DYNAMIC_ATTRS[node.attr]} (line {node.lineno})")
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                modules = ([a.name for a in node.names] if isinstance(node, ast.Import)
                           else [node.module or ""])
                for module in modules:
                    if module.split(".")[0] in ("importlib", "ctypes", "gc", "pickle",
                                                "marshal", "types"):
                        found.append(f"import {module} (line {node.lineno})")
    return sorted(set(found))


class _Canonical(ast.NodeTransformer):
    """Names become v0, v1, ... in order of first use; docstrings, decorators and
    annotations go; every string is the same string."""

    def __init__(self):
        self.names = {}
        self.keep = set(dir(builtins))

    def rename(self, name: str) -> str:
        return name if name in self.keep else self.names.setdefault(name, f"v{len(self.names)}")

    def visit_FunctionDef(self, node):
        node.name = self.rename(node.name)
        node.decorator_list, node.returns = [], None
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
        return self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_arg(self, node):
        node.arg, node.annotation = self.rename(node.arg), None
        return node

    def visit_Name(self, node):
        node.id = self.rename(node.id)
        return node

    def visit_Constant(self, node):
        return ast.Constant("S") if isinstance(node.value, str) else node


def canonical_labels(source: str) -> list:
    """The canonical tree of ``source`` as a sequence of node labels (empty if it does not parse)."""
    return list(_labels(source))


@functools.lru_cache(maxsize=1024)      # a checker compares each submission with every entry
def _labels(source: str) -> tuple:
    tree = _parse(source)
    if tree is None:
        return ()
    tree = _Canonical().visit(tree)
    labels = []
    for node in ast.walk(tree):
        label = (node.id if isinstance(node, ast.Name) else
                 repr(node.value) if isinstance(node, ast.Constant) else
                 node.attr if isinstance(node, ast.Attribute) else
                 node.arg if isinstance(node, ast.arg) else "")
        labels.append(f"{type(node).__name__}:{label}")
    return tuple(labels)


@functools.lru_cache(maxsize=4096)      # the same lock is checked in several cells
def similarity(source: str, other: str) -> float:
    """How alike two pieces of code are, from 0 to 1 (1: the same tree up to renaming)."""
    mine, theirs = _labels(source), _labels(other)
    if not mine or not theirs:
        return 0.0
    return round(difflib.SequenceMatcher(None, mine, theirs, autojunk=False).ratio(), 3)


def likeness(source: str, library_source: str) -> float:
    """:func:`similarity`, or 0.0 when ``source`` is too small to tell (REVIEW_MIN_NODES)."""
    if len(_labels(source)) < REVIEW_MIN_NODES:
        return 0.0
    return similarity(source, library_source)


def node_source(node) -> str:
    """The source text of a definition node, unparsed (comments are lost, which is fine here)."""
    return ast.unparse(node)
