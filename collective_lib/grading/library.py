"""Is it the student's own work? Catching a submission that uses the library's code.

:func:`forbid_library_calls` reads what a function can reach (names, closures,
helpers, aliases, its source); :func:`forbid_library_execution` watches a run
for the code of the library's algorithms, however the program got hold of it.

A student's object in a sandboxed process (a stand-in, :mod:`.standins`) cannot
be inspected here. Its cells' source is read instead: a forbidden name it uses fails, and
a lookup by computed name or a close copy of a library function is flagged for
review. That reading depends on spelling, so it is not what stops a computed
lookup: from the first forbid of a test cell to the end of that cell, the
student's code runs only in processes where the forbidden library functions
cannot run at all, however they are reached, and where their code cannot be
re-created (:mod:`collective_lib.autograde.poison`). A check that follows in
the cell then fails with a message naming the library function.
"""
from __future__ import annotations

import dis
import functools
import inspect
import io
import re
import sys
import tokenize
import types
from typing import Callable, Iterable

from ..model import CostModel
from . import static
from .forbidden import fingerprint, forbidden_detail, forbidden_name, library_definitions
from ._advice import in_library, name_of
from .failures import CheckFailed
from .programs import run_program
from .review import flag_for_review
from .standins import is_stand_in

__all__ = ["forbid_library_calls", "forbid_library_execution", "forbid_computed_with",
           "flag_searched_answer", "SIMULATION", "library_programs", "TREE_PROGRAMS",
           "TREE_HELPERS", "TABLE_CONSTANTS"]


# -- what a student could drive to run a collective -------------------------------------------

#: The library's programs that run a collective along any tree their caller gives (a parent
#: table), outside the catalog, whose programs each build their source's own tree.
TREE_PROGRAMS = ("embedded_tree_broadcast",)

#: A student's function that reads a table of this many constants written into the cells
#: is flagged for a human (a table of the simulator's outputs pasted for the p tested).
TABLE_CONSTANTS = 40

#: The library's helpers that give a PE's parent or children in a tree (in order).
TREE_HELPERS = ("binomial_children", "binomial_parent", "tree_children")


def library_programs() -> tuple:
    """The names of every program of the library that a student's program could drive to
    do a collective's work for it: every program of the catalog, whatever its operation
    (an allreduce whose operator keeps the first value it meets broadcasts), and
    :data:`TREE_PROGRAMS`, which run along a tree the student only names.

    >>> names = library_programs()
    >>> {"binomial_broadcast", "ring_allreduce", "embedded_tree_broadcast"} <= set(names)
    True
    """
    return tuple(sorted(_catalog_programs() | set(TREE_PROGRAMS)))


def _catalog_programs() -> set:
    """The catalog's names and its programs' own names (a program may be registered
    under another)."""
    from ..catalog import catalog
    names = set()
    for name, entry in catalog().items():
        names.update({name, getattr(entry.program, "__name__", name)})
    return names


# -- what a function can reach -------------------------------------------------------------

def _unwrap(obj, limit: int = 20) -> list:
    """``obj`` and what it wraps: partials, bound methods, ``__wrapped__``."""
    found = []
    for _ in range(limit):
        found.append(obj)
        if isinstance(obj, functools.partial):
            found.extend(obj.args)
            found.extend(obj.keywords.values())
            obj = obj.func
        elif isinstance(obj, types.MethodType):
            obj = obj.__func__
        elif getattr(obj, "__wrapped__", None) is not None:
            obj = obj.__wrapped__
        else:
            break
    return found


def _code_objects(code: types.CodeType):
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


def _library_objects(names: set) -> dict:
    """``{id(obj): (obj, name)}`` of every library object called one of ``names``."""
    from ..catalog import catalog
    objects = {}
    entries = catalog()
    for name in names:
        if name in entries:
            objects[id(entries[name].program)] = (entries[name].program, name)
    for modname, module in list(sys.modules.items()):
        if module is None or not (modname == "collective_lib" or modname.startswith("collective_lib.")):
            continue
        for name in names:
            obj = getattr(module, name, None)
            if obj is not None and not isinstance(obj, (int, float, str, bool)):
                objects[id(obj)] = (obj, name)
    return objects


#: The instructions that name an attribute or what an import takes from a module: such a
#: name is never the student's own global.
_ATTRIBUTE_OPS = {"LOAD_ATTR", "LOAD_METHOD", "STORE_ATTR", "DELETE_ATTR", "IMPORT_FROM",
                  "IMPORT_NAME"}


def _library_names(names: set, forbidden: dict) -> set:
    """Those of ``names`` that the library defines. A function or class of the student's
    own under one of them (their own ``binomial_children``) is theirs, not the library's;
    a forbidden name the library does not define is the notebook's own helper (the
    set-up cell's ``simulated_time_of``), which only its name can tell apart from a
    student's function in the notebook."""
    return set(library_definitions(names)) | {label for _, label in forbidden.values()}


#: What ``functools.lru_cache`` and ``functools.cache`` make of a function.
_CACHE_WRAPPER = type(functools.lru_cache(maxsize=None)(lambda: None))


def _own_definition(obj, home: dict | None) -> bool:
    """Whether ``obj`` is a function or class the student's cells (globals ``home``)
    define, not the library's; a function of theirs memoized with ``functools.lru_cache``
    or ``functools.cache`` is theirs too."""
    while type(obj) is _CACHE_WRAPPER:
        obj = obj.__wrapped__
    if isinstance(obj, types.FunctionType):
        return obj.__globals__ is home and not in_library(obj)
    return (isinstance(obj, type) and home is not None and not in_library(obj)
            and obj.__module__ == home.get("__name__"))


def _source_names(func) -> set:
    """The identifiers in ``func``'s source text (comments and strings excluded)."""
    try:
        source = inspect.getsource(func)
    except (OSError, TypeError):
        return set()
    names = set()
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.NAME:
                names.add(tok.string)
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return names


def forbid_library_calls(program: Callable, names: Iterable[str], *,
                         reason: str = "this exercise asks for your own program, built from "
                                       "send and recv", at_run_time: bool = True) -> None:
    """Fail when ``program`` uses any of the library's objects called ``names``.

    Looks at everything the function can reach: the names and string
    constants of its code and of every nested function, lambda and
    comprehension; its closures and default arguments; the global helper
    functions it calls that are defined next to it (recursively); aliases
    (``bb = binomial_broadcast``) and ``functools.partial`` wrappers; and, if
    available, the identifiers of its source text.  Comments, the docstring
    and local variables that merely share a name do not count.

    A student's object in a sandboxed process (the trusted checker's stand-in)
    is checked by its cells' source; and from this call to the end of the test
    cell, the student's code runs only where the library objects called
    ``names`` cannot run, however they are reached: a check that follows fails
    if the program runs one (:mod:`collective_lib.autograde.poison`). Call it
    before the checks it should cover.

    Parameters
    ----------
    program : callable
        The student's function.
    names : iterable of str
        Forbidden names, e.g. ``["binomial_broadcast", "catalog"]``.
    reason : str
        Appended to the message.
    at_run_time : bool
        For a student's object in a sandboxed process, also poison the forbidden
        functions in its processes for the rest of the cell (the default).

    Raises
    ------
    AssertionError
        Naming the forbidden object and the function that uses it.

    Examples
    --------
    >>> from collective_lib import recv, send
    >>> def mine(me, p, data, root=0):
    ...     return data
    ...     yield
    >>> forbid_library_calls(mine, ["binomial_broadcast", "catalog"])
    >>> from collective_lib.algorithms.broadcast import binomial_broadcast
    >>> def copied(me, p, data, root=0):
    ...     return (yield from binomial_broadcast(me, p, data, root))
    >>> try:
    ...     forbid_library_calls(copied, ["binomial_broadcast"])
    ... except AssertionError as err:
    ...     print(str(err).split(";")[0])
    copied uses the library's `binomial_broadcast` (in copied)
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    names = {n for n in names}
    if not names:
        return
    forbidden = _library_objects(names)
    top = name_of(program)
    if is_stand_in(program):
        if at_run_time:
            _forbid_at_run_time(program, names, forbidden)
        _forbid_by_source(program, names, forbidden, reason)
        return
    word = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(names)) + r")\b")
    ours = _library_names(names, forbidden)

    def fail(name, where):
        raise _uses_library(top, name, names, reason, where)

    seen: set = set()
    home = getattr(program, "__globals__", None)

    def visit(obj, where):
        """Fail on a forbidden object; look inside the student's own functions and
        classes (their bases and members)."""
        for item in _unwrap(obj):
            if id(item) in forbidden:
                fail(forbidden[id(item)][1], where)
            if id(item) in seen:
                continue
            if isinstance(item, types.FunctionType) and (
                    item is program or _own_definition(item, home)):
                seen.add(id(item))
                visit_function(item)
            elif isinstance(item, type) and _own_definition(item, home):
                seen.add(id(item))
                for member in [*item.__bases__, *vars(item).values()]:
                    visit(member, f"{where}, in `{item.__name__}`")

    def visit_function(func):
        where = name_of(func)
        local_names, used_names, attributes = set(), set(), set()
        strings = []
        for c in _code_objects(func.__code__):
            local_names.update(c.co_varnames, c.co_cellvars)
            used_names.update(c.co_names, c.co_freevars)
            attributes.update(ins.argval for ins in dis.get_instructions(c)
                              if ins.opname in _ATTRIBUTE_OPS)
            strings += [const for const in c.co_consts
                        if isinstance(const, str) and const != func.__doc__]
        # a helper of the student's own that shares a forbidden name (their own
        # binomial_children) is no use of the library's: its body is looked at below; so
        # is the name a helper's own source gives it (its `def` line, or the assignment
        # of a lambda)
        source_names = _source_names(func)
        own = {name for name in (used_names | source_names) & ours - attributes
               if _own_definition(func.__globals__.get(name), home)}
        for name in sorted(used_names & names - own):
            fail(name, where)
        for name in sorted((source_names & names) - local_names - own):
            fail(name, where)
        for text in strings:            # getattr(module, "name"), catalog()["name"], eval("...")
            hit = word.search(text)
            if hit:
                fail(hit.group(1), where)
        for cell in func.__closure__ or ():
            try:
                contents = cell.cell_contents
            except ValueError:          # an empty cell
                continue
            visit(contents, where)
        for value in list(func.__defaults__ or ()) + list((func.__kwdefaults__ or {}).values()):
            visit(value, where)
        glob = func.__globals__
        for name in sorted(used_names):
            if name in glob:            # a global the code refers to: an alias or a helper
                visit(glob[name], f"{where}, as `{name}`")

    visit(program, top)


def _uses_library(top: str, name: str, names: set, reason: str,
                  where: str | None = None) -> CheckFailed:
    """The failure of a student's ``top`` that uses the library's ``name``, in lines that
    Validate shows whole (a long function name pushed the forbidden one off the first)."""
    place = " (in\0" + where.replace(" ", "\0") + ")" if where is not None else ""
    return CheckFailed(
        f"{top} uses the library's `{name}`{place}; {reason}. "
        f"Not allowed here: {_not_allowed(names)}.", "uses_library")


def _not_allowed(names: set) -> str:
    """The forbidden names for a message: each one, but the catalog's programs, when more
    than a few of them are forbidden, as one phrase (a list of fifty names helps nobody)."""
    programs = _catalog_programs() & set(names)
    if len(programs) <= 3:
        return ", ".join(f"`{n}`" for n in sorted(names))
    rest = [f"`{n}`" for n in sorted(set(names) - programs)]
    return ", ".join(rest) + (" and " if rest else "") + "every program of the catalog"


def _forbid_at_run_time(standin, names: set, forbidden: dict) -> None:
    """From now to the end of the test cell, run the student's code where the library's
    objects called ``names`` cannot run (the names the library defines, in a module
    imported here or not; a name only the notebook defines is for the source check)."""
    library = {label for _, label in forbidden.values()} | set(library_definitions(names))
    if library:
        standin.forbid(sorted(library))


def _forbid_by_source(standin, names: set, forbidden: dict, reason: str) -> None:
    """:func:`forbid_library_calls` for a student's object in its sandboxed process.

    Its code cannot be inspected here, so the source of the student's cells is
    read instead (:mod:`.static`): a forbidden name the function reaches fails;
    computed lookups, a close likeness to a library function and a table of at least
    :data:`TABLE_CONSTANTS` values written into the cells (in one piece or many:
    :func:`.static.literal_tables`) raise a flag for a human (:mod:`.review`).
    """
    sources = standin.student_sources()
    top = name_of(standin)
    used = static.used_names(sources, top, own=_library_names(names, forbidden))
    for name in sorted(used & names):
        raise _uses_library(top, name, names, reason)
    tricks = static.dynamic_lookups(sources)
    if tricks:
        flag_for_review(f"{top}: the cells reach objects by computed names: {', '.join(tricks)}")
    tables = static.literal_tables(sources, top, at_least=TABLE_CONSTANTS)
    if tables:
        pieces = f", in {len(tables)} pieces" if len(tables) > 1 else ""
        flag_for_review(f"{top} reads a table of {sum(values for values, _ in tables)} values "
                        f"written into the cells{pieces} ({tables[0][1]} ...): worked out, "
                        "or pasted from runs?")
    definition = static.definitions(sources).get(top.split(".")[0])
    if definition is None:
        return
    mine = static.node_source(definition)
    for obj, label in _library_candidates(forbidden):
        likeness = static.likeness(mine, obj)
        if likeness >= static.REVIEW_SIMILARITY:
            flag_for_review(f"{top} is {likeness:.2f} similar to the library's {label} "
                        "(the same code up to renaming?)")


@functools.lru_cache(maxsize=1)
def _library_sources() -> tuple:
    """``(source, label)`` of every catalog program, for comparing a submission with."""
    from ..catalog import catalog
    found = []
    for name, entry in catalog().items():
        try:
            found.append((inspect.getsource(entry.program), name))
        except (OSError, TypeError):
            pass
    return tuple(found)


def _library_candidates(forbidden: dict) -> list:
    """Sources of the forbidden library objects and of every catalog program."""
    found = []
    for obj, label in forbidden.values():
        try:
            found.append((inspect.getsource(obj), label))
        except (OSError, TypeError):
            pass
    return found + list(_library_sources())


# -- a value asked for by hand ----------------------------------------------------------------

#: The library's ways to run a program and read what it sent: a table asked for by hand
#: must not come from them.
SIMULATION = ("simulate", "simulate_shared", "run_program", "simulated_time",
              "check_collective_program", "check_broadcast_program", "check_pe_isolation",
              "sends_by_step", "record_run", "catalog", "start_programs", "schedule_resume",
              "_Engine")

#: Names by which a cell reaches an object without naming it (flagged for a human).
_COMPUTED = {"getattr", "globals", "vars", "locals", "eval", "exec", "compile",
             "__import__", "import_module", "modules", "__dict__"}


def _history() -> list:
    """The cells the IPython kernel has run, in order (a student's own notebook), or []."""
    try:
        from IPython import get_ipython
    except ImportError:
        return []
    shell = get_ipython()
    history = shell.user_ns.get("In") if shell is not None else None
    return [cell for cell in history if isinstance(cell, str)] if isinstance(
        history, list) else []


def forbid_computed_with(name: str, cells, names: Iterable[str], *, asks: str) -> list | None:
    """Fail when the student's cells compute the value ``name`` with one of the library's
    ``names``.

    A value asked for by hand (a schedule, a table) is data; what computed it is read
    from the source of the student's cells: every statement that gives it its value
    (at the top of a cell, in a loop, ``table.update(...)``), and the student's
    definitions they reach (:func:`~.static.used_names` with ``every``), import aliases
    resolved. ``cells`` is where that source comes from: a stand-in of the same notebook
    (under ``nbgrader autograde``: its ``student_sources()``), a list of cell sources, or
    anything else (None, or the student's own object in their notebook) for the cells
    the IPython kernel ran (outside IPython nothing is checked). ``asks`` says what the
    task asks for instead. A lookup by computed name is flagged for review. Returns the
    sources read, or None when there were none to read (for checks of their own).

    >>> forbid_computed_with("sends_4", ["sends_4 = {1: ['x0[1]']}"], SIMULATION, asks="")
    ["sends_4 = {1: ['x0[1]']}"]
    >>> cells = ["run = simulate(ring, 4, inputs)", "sends_4 = sends_by_step(run)"]
    >>> try:
    ...     forbid_computed_with("sends_4", cells, ["simulate", "sends_by_step"],
    ...                          asks="work it out by hand")
    ... except AssertionError as err:
    ...     print(err)
    sends_4 is computed with the library's `sends_by_step`; work it out by hand.
    Not allowed here: `sends_by_step`, `simulate`.
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    if is_stand_in(cells):
        try:
            sources = cells.student_sources()
        except Exception:              # no stand-in to read: the name's own cell fails
            return None
    elif isinstance(cells, (list, tuple)):
        sources = [str(cell) for cell in cells]
    else:                              # the student's own objects, in their notebook
        sources = _history()
    names = set(names)
    used = static.used_names(sources, name, every=True)
    found = sorted(used & names)
    if found:
        raise CheckFailed(
            f"{name} is computed with the library's `{found[0]}`; {asks}.\nNot allowed "
            f"here: {', '.join(f'`{n}`' for n in sorted(names))}.", "uses_library")
    computed = sorted(used & _COMPUTED)
    if computed:
        flag_for_review(f"{name}: its cells reach objects by computed names "
                        f"({', '.join(computed)})")
    return sources


def flag_searched_answer(function: Callable, cells=None, *, asks: str) -> list:
    """Flag for a human a function that a task asks to derive, when it searches instead.

    A search may well give the right answers on every case a test can try in time
    (a bisection finds a switch point far beyond what a loop over every size reaches),
    so it keeps its score; but the task asked for a formula, and the grader reads it.
    What the function does is read from the source of the student's cells: its
    definition and the student's definitions it reaches loop, call themselves or draw
    at random (:func:`~.static.repetitions`). ``cells`` is where that source comes from,
    as for :func:`forbid_computed_with`; by default the stand-in ``function`` itself
    (under ``nbgrader autograde``), or the cells the IPython kernel ran.

    Parameters
    ----------
    function : callable
        The student's function (or its stand-in).
    cells : stand-in, list of str or None
        Where the student's cells are read; None for ``function``'s own.
    asks : str
        What the task asks for instead, ending the reason the grader reads.

    Returns
    -------
    list of str
        What repeats in the definition (``"a while loop"``...); empty for a formula.

    Examples
    --------
    >>> from collective_lib.grading import take_review_flags
    >>> def first(p):
    ...     return 0
    >>> flag_searched_answer(first, ["def first(p):\\n    return 2 * p - 1\\n"], asks="")
    []
    >>> cells = ["def first(p):\\n    m = 1\\n    while m * m < p:\\n        m += 1\\n"
    ...          "    return m\\n"]
    >>> flag_searched_answer(first, cells, asks="derive it")
    ['a while loop']
    >>> take_review_flags()
    ['first: its definition uses a while loop; derive it']
    """
    if cells is None:
        cells = function
    if is_stand_in(cells):
        try:
            sources = cells.student_sources()
        except Exception:              # no stand-in to read: the name's own cell fails
            return []
    elif isinstance(cells, (list, tuple)):
        sources = [str(cell) for cell in cells]
    else:                              # the student's own objects, in their notebook
        sources = _history()
    name = name_of(function)
    found = static.repetitions(sources, name)
    if found:
        flag_for_review(f"{name}: its definition uses {' and '.join(found)}; {asks}")
    return found


# -- did the library's code run? --------------------------------------------------------------

def forbid_library_execution(program: Callable, algorithms: Iterable, p: int, inputs=None, *,
                             model: CostModel | None = None, network=None,
                             reason: str = "this exercise asks for your own program, built "
                                           "from send and recv",
                             time_limit_s: float = 10.0, report_failures: bool = True,
                             **params) -> None:
    """Fail when the library's code of ``algorithms`` runs while ``program`` is simulated.

    A runtime complement to :func:`forbid_library_calls`: the program runs once
    on ``p`` PEs under a profiler that watches for the code of the named
    algorithms, however the program reached it (a call, ``yield from``, an
    alias, ``getattr`` with a computed name, ``importlib``, a copy of the
    function object, or even its source text compiled again).

    Parameters
    ----------
    program : generator function
        The student's program.
    algorithms : iterable
        Catalog names or programs whose code must not run.
    p, inputs, model, network, **params :
        One run, as for :func:`run_program`.
    reason : str
        Appended to the message.
    time_limit_s : float
        Real-time budget of the run.
    report_failures : bool
        False leaves a failure of the program itself (a crash, a deadlock, an
        endless loop, when no library code ran) to the test that checks its
        results, so that one bug costs one test.

    Raises
    ------
    AssertionError
        Naming the library's algorithm that ran.  A program that fails in
        another way (a wrong result is not checked here) raises the
        AssertionError of :func:`run_program` only if no library code ran,
        and only with ``report_failures``.

    Examples
    --------
    >>> from collective_lib import catalog, recv, send
    >>> def relay(me, p, data, root=0):
    ...     program = catalog()["binomial_" + "broadcast"].program
    ...     return (yield from program(me, p, data, root))
    >>> try:
    ...     forbid_library_execution(relay, ["binomial_broadcast"], 4, [7, None, None, None])
    ... except AssertionError as err:
    ...     print(str(err).split(";")[0])
    relay runs the library's `binomial_broadcast` (its code ran when relay was simulated on p=4)
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    from ..catalog import catalog
    entries = catalog()
    targets = {}
    for algorithm in algorithms:
        if isinstance(algorithm, str):
            if algorithm not in entries:
                raise ValueError(f"unknown algorithm {algorithm!r}")
            func, label = entries[algorithm].program, algorithm
        else:
            func, label = algorithm, name_of(algorithm)
        for item in _unwrap(func):
            code = getattr(item, "__code__", None)
            if code is not None:
                targets[fingerprint(code)] = label
    seen: dict = {}
    ran: list = []

    def watch(frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        label = seen.get(code, False)
        if label is False:
            label = seen[code] = targets.get(fingerprint(code))
        if label is not None and not ran:
            ran.append(label)

    name = name_of(program)
    if is_stand_in(program):
        _forbid_by_poison(program, sorted(set(targets.values())), p, inputs, model, network,
                          reason, time_limit_s, report_failures, params)
        return
    failure = None
    old = sys.getprofile()
    sys.setprofile(watch)
    try:
        run_program(program, p, inputs, model=model, network=network,
                    time_limit_s=time_limit_s, **params)
    except AssertionError as exc:
        failure = exc
    finally:
        sys.setprofile(old)
    if ran:
        raise CheckFailed(f"{name} runs the library's `{ran[0]}` (its code ran when {name} "
                          f"was simulated on p={p}); {reason}.", "uses_library")
    if failure is not None and report_failures:
        raise failure


def _forbid_by_poison(standin, labels, p, inputs, model, network, reason, time_limit_s,
                      report_failures, params) -> None:
    """:func:`forbid_library_execution` for a student's program in its sandboxed process:
    it runs once in a process where the library's ``labels`` cannot run, as do the
    student's processes for the rest of the cell (:mod:`collective_lib.autograde.poison`)."""
    name = name_of(standin)
    try:
        standin.forbid(labels)
        run_program(standin, p, inputs, model=model, network=network,
                    time_limit_s=time_limit_s, **params)
    except AssertionError as exc:
        text = str(exc)
        label = forbidden_name(text)
        if label is None:
            if report_failures:
                raise
            return
        detail = forbidden_detail(text)
        if "which was called here" in detail:
            raise CheckFailed(f"{name} runs the library's `{label}` (it called it when "
                              f"{name} was simulated on p={p}); {reason}.",
                              "uses_library") from None
        how = detail.split(":", 1)[1].strip() if ":" in detail else "a way refused here"
        raise CheckFailed(f"{name} tries to run the library's `{label}` ({how}, when "
                          f"{name} was simulated on p={p}); {reason}.",
                          "uses_library") from None
