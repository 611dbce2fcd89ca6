"""Tests of collective_lib.grading.library: forbid_library_calls finds the library's code.

A student's own program passes; every way of reaching a forbidden library object
(a call, a catalog lookup, a computed name, an alias, a partial, a closure, a
default argument, a helper function) is caught and named, statically by
forbid_library_calls and, for what only running shows (a computed name, a copy of
the code), by forbid_library_execution.
"""
import functools
import re
import sys
import textwrap

import pytest

from all_to_all_submissions import (CALL_CHEATS, REDUCTIONS, RUN_CHEATS, by_computed_name,
                                    by_importlib, own_ring, through_a_code_copy,
                                    through_a_source_copy)
from collective_lib import catalog, recv, send
from collective_lib.grading import forbid_library_calls, forbid_library_execution
from collective_lib.networks import Ring
from collective_lib.grading.standins import StandIn
from messages import flat


def own_linear_broadcast(me, p, data, root=0):
    """A correct broadcast written from send and recv: the root sends to every PE in turn."""
    if me == root:
        for dst in range(p):
            if dst != root:
                yield send(dst, data)
        return data
    return (yield recv(root))


# -- forbid_library_calls ----------------------------------------------------------------

FORBIDDEN = ["binomial_broadcast", "catalog"]


def test_own_program_is_allowed():
    forbid_library_calls(own_linear_broadcast, FORBIDDEN)

    def documented(me, p, data, root=0):
        """Unlike binomial_broadcast from the catalog, this one is mine."""
        catalog = [me]                  # a local that merely shares a name
        # binomial_broadcast would be cheating
        return catalog and data
        yield

    forbid_library_calls(documented, FORBIDDEN)


def _assert_forbidden(program, name="binomial_broadcast"):
    with pytest.raises(AssertionError) as err:
        forbid_library_calls(program, FORBIDDEN)
    assert f"uses the library's `{name}`" in flat(err.value)
    assert "Not allowed here" in flat(err.value)


def test_direct_call_is_caught():
    from collective_lib.algorithms.broadcast import binomial_broadcast

    def copied(me, p, data, root=0):
        return (yield from binomial_broadcast(me, p, data, root))

    _assert_forbidden(copied)


def test_catalog_lookup_is_caught():
    def looked_up(me, p, data, root=0):
        program = catalog()["binomial_broadcast"].program
        return (yield from program(me, p, data, root))

    _assert_forbidden(looked_up, "catalog")

    def by_string(me, p, data, root=0):
        import collective_lib.algorithms.broadcast as module
        program = getattr(module, "binomial_" "broadcast")
        return (yield from program(me, p, data, root))

    _assert_forbidden(by_string)


def test_alias_partial_closure_default_and_helpers_are_caught():
    import collective_lib.algorithms.broadcast as module

    alias = module.binomial_broadcast
    globals()["_ALIAS"] = alias

    def via_alias(me, p, data, root=0):
        return (yield from _ALIAS(me, p, data, root))  # noqa: F821

    _assert_forbidden(via_alias)

    _assert_forbidden(functools.partial(alias, root=0))
    with pytest.raises(AssertionError, match=r"^partial\(binomial_broadcast\) uses"):
        forbid_library_calls(functools.partial(alias, root=0), FORBIDDEN)
    _assert_forbidden(alias)

    def via_closure(me, p, data, root=0):
        return (yield from alias(me, p, data, root))

    _assert_forbidden(via_closure)

    def via_default(me, p, data, root=0, impl=alias):
        return (yield from impl(me, p, data, root))

    _assert_forbidden(via_default)

    def via_attribute(me, p, data, root=0):
        return (yield from module.binomial_broadcast(me, p, data, root))

    _assert_forbidden(via_attribute)

    def via_nested(me, p, data, root=0):
        def inner():
            return module.binomial_broadcast
        return (yield from inner()(me, p, data, root))

    _assert_forbidden(via_nested)

    via_lambda = lambda me, p, data, root=0: module.binomial_broadcast(me, p, data, root)  # noqa: E731
    _assert_forbidden(via_lambda)


def _helper_that_cheats(me, p, data, root):
    return catalog()["binomial_broadcast"].program(me, p, data, root)


def test_a_helper_function_is_followed():
    def uses_helper(me, p, data, root=0):
        return (yield from _helper_that_cheats(me, p, data, root))

    with pytest.raises(AssertionError) as err:
        forbid_library_calls(uses_helper, FORBIDDEN)
    assert "`catalog` (in _helper_that_cheats)" in flat(err.value)
    assert "(in _helper_that_cheats)" in flat(err.value)        # the place is not broken


def test_library_helpers_that_are_not_forbidden_are_fine():
    from collective_lib.trees import binomial_children

    def uses_trees(me, p, data, root=0, children=binomial_children):
        return data
        yield

    forbid_library_calls(uses_trees, FORBIDDEN)
    forbid_library_calls(uses_trees, [])


def test_custom_reason_is_in_the_message():
    def best_k(n, p, alpha, beta):
        entry = catalog()["pipelined_binary_tree_broadcast"]
        return entry.optimal_k(p, n, entry.default_model(alpha, beta))

    with pytest.raises(AssertionError) as err:
        forbid_library_calls(best_k, ["optimal_k"], reason="find k by simulation")
    assert re.search("uses the library's `optimal_k`.*find k by simulation", flat(flat(err.value)))


# -- a student's object in a sandboxed process ----------------------------------------------

class _RecordedStandIn(StandIn):
    """A stand-in as the checks see one: its cells' source, and what it was forbidden."""

    kind = "function"

    def __init__(self, name, sources):
        self.__name__ = name
        self.sources, self.forbidden = sources, []

    def student_sources(self):
        return self.sources

    def forbid(self, names):
        self.forbidden.append(list(names))

    def each_pe_apart(self):
        raise NotImplementedError

    replayer = each_pe_apart


def test_a_stand_in_is_read_by_source_and_its_processes_are_poisoned():
    own = "def gray_of(i):\n    return i ^ (i >> 1)\n"
    standin = _RecordedStandIn("gray_of", [own])
    # the library's names are poisoned from now on, even those in modules not imported
    # here (fit_ts_tw); a name only the notebook defines is left to the source check
    forbid_library_calls(standin, ["gray", "fit_ts_tw", "simulated_time_of"])
    assert standin.forbidden == [["fit_ts_tw", "gray"]]

    standin = _RecordedStandIn("gray_of",
                               ["def gray_of(i):\n    return simulated_time_of(i)\n"])
    with pytest.raises(AssertionError, match="gray_of uses the library's `simulated_time_of`"):
        forbid_library_calls(standin, ["gray", "simulated_time_of"])
    assert standin.forbidden == [["gray"]]

    standin = _RecordedStandIn("gray_of", [own])
    forbid_library_calls(standin, ["simulated_time_of"])
    assert standin.forbidden == []          # nothing of the library's: no process replaced


# -- forbidding the library ----------------------------------------------------------------------

def _one_run(program, p=4):
    forbid_library_execution(program, REDUCTIONS, p, [[[i, j] for j in range(p)]
                                                      for i in range(p)], network=Ring(p))


def test_an_own_program_is_allowed():
    forbid_library_calls(own_ring, REDUCTIONS + ["catalog"])
    _one_run(own_ring)
    assert sys.getprofile() is None


@pytest.mark.parametrize("program", CALL_CHEATS, ids=lambda f: f.__name__)
def test_the_static_check_catches_calls_aliases_helpers_and_lookups(program):
    with pytest.raises(AssertionError) as err:
        forbid_library_calls(program, REDUCTIONS + ["catalog"])
    assert f"{program.__name__} uses the library's `" in flat(err.value)


@pytest.mark.parametrize("program", RUN_CHEATS, ids=lambda f: f.__name__)
def test_the_runtime_check_catches_every_way_to_reach_the_library(program):
    with pytest.raises(AssertionError) as err:
        _one_run(program)
    assert flat(err.value).startswith(f"{program.__name__} runs the library's "
                                     "`all_to_all_red_mesh` (its code ran when")
    assert sys.getprofile() is None


def test_the_runtime_check_restores_a_previous_profiler_and_reports_other_failures():
    calls = []

    def outer(frame, event, arg):
        calls.append(event)

    def deadlocks(me, p, data):
        return (yield recv((me + 1) % p))

    sys.setprofile(outer)
    try:
        with pytest.raises(AssertionError) as err:
            forbid_library_execution(deadlocks, REDUCTIONS, 3)
    finally:
        restored = sys.getprofile()
        sys.setprofile(None)
    assert restored is outer
    assert "deadlock in deadlocks for p=3" in flat(err.value)
    with pytest.raises(ValueError, match="unknown algorithm 'no_such_thing'"):
        forbid_library_execution(own_ring, ["no_such_thing"], 2)


@pytest.mark.parametrize("program", RUN_CHEATS[:1], ids=lambda f: f.__name__)
def test_without_report_failures_only_the_library_fails(program):
    # a program's own failure is left to the test of its results (one bug, one deduction);
    # reaching the library still fails
    def crashes(me, p, data):
        raise ValueError("not yet")
        yield

    forbid_library_execution(crashes, REDUCTIONS, 3, report_failures=False)
    with pytest.raises(AssertionError, match="runs the library's `all_to_all_red_mesh`"):
        forbid_library_execution(program, REDUCTIONS, 4, [[[i, j] for j in range(4)]
                                                          for i in range(4)],
                                 network=Ring(4), report_failures=False)



@pytest.mark.parametrize("program", [by_computed_name, by_importlib, through_a_code_copy,
                                     through_a_source_copy], ids=lambda f: f.__name__)
def test_some_cheats_need_the_runtime_check(program):
    # a name computed at run time, or a copy of the code, is invisible to the static check
    forbid_library_calls(program, REDUCTIONS)
    with pytest.raises(AssertionError, match="runs the library's `all_to_all_red_mesh`"):
        _one_run(program)


def test_the_forbidden_name_is_on_the_first_line_validate_shows():
    def a_program_with_a_long_descriptive_name(me, p, data, root=0):
        return catalog()["binomial_broadcast"]

    with pytest.raises(AssertionError) as err:
        forbid_library_calls(a_program_with_a_long_descriptive_name, FORBIDDEN)
    lines = str(err.value).split("\n")
    # Validate cuts a line at about 90 characters, the first after "AssertionError: "
    assert len(lines[0]) <= 64 and all(len(line) <= 80 for line in lines), lines
    assert "uses the library's `catalog`" in flat(err.value)


# -- every program a student could drive, and the tree helpers ------------------------------

def test_library_programs_names_every_catalog_program_and_the_generic_tree_ones():
    # reverse_send_order: embedded_tree_broadcast on the binomial tree's parents got 7/7, an
    # allreduce whose operator keeps the first value 4/7; the rule is computed, not listed
    from collective_lib.grading import TREE_HELPERS, TREE_PROGRAMS, library_programs
    names = set(library_programs())
    assert set(catalog()) <= names
    assert {entry.program.__name__ for entry in catalog().values()} <= names
    assert set(TREE_PROGRAMS) <= names and "embedded_tree_broadcast" in TREE_PROGRAMS
    assert set(TREE_HELPERS) == {"binomial_parent", "binomial_children", "tree_children"}


def test_a_refusal_names_the_catalogs_programs_in_one_phrase():
    from collective_lib.embeddings import embedded_tree_broadcast
    from collective_lib.grading import TREE_HELPERS, library_programs

    def generic(me, p, data, root=0):
        return (yield from embedded_tree_broadcast(me, p, data, [None] + [0] * (p - 1)))

    with pytest.raises(AssertionError) as err:
        forbid_library_calls(generic, [*library_programs(), *TREE_HELPERS])
    text = flat(flat(err.value))
    assert "generic uses the library's `embedded_tree_broadcast`" in text
    assert text.endswith("Not allowed here: `binomial_children`, `binomial_parent`, "
                         "`embedded_tree_broadcast`, `tree_children` and every program of "
                         "the catalog."), text
    assert all(len(line) <= 80 for line in str(err.value).splitlines())
    # a few programs of the catalog are still named one by one
    with pytest.raises(AssertionError) as err:
        forbid_library_calls(generic, ["binomial_broadcast", "embedded_tree_broadcast"])
    assert flat(flat(err.value)).endswith(
        "Not allowed here: `binomial_broadcast`, `embedded_tree_broadcast`.")


# A student's own tree arithmetic under the library's name (an honest answer to
# reverse_send_order, whose checks forbid the library's binomial_children): it was refused
# as "uses the library's `binomial_children`".
OWN_CHILDREN = '''
def binomial_children(i, p):
    children, k = [], 1
    while k < p and not i & k:
        if i + k < p:
            children.append(i + k)
        k *= 2
    return children
'''
OWN_PROGRAM = '''
def smallest_first(me, p, data, root=0):
    for child in binomial_children(me, p):
        yield send(child, data)
    return data
'''


def _defined(*sources):
    namespace = {"send": send, "__name__": "__main__"}
    for source in sources:
        exec(source, namespace)
    return namespace["smallest_first"]


@pytest.mark.parametrize("helpers", [OWN_CHILDREN, "class binomial_children(list):\n    pass\n"])
def test_a_helper_of_ones_own_under_a_forbidden_name_is_no_use_of_it(helpers):
    forbid_library_calls(_defined(helpers, OWN_PROGRAM), ["binomial_children"])
    forbid_library_calls(_RecordedStandIn("smallest_first", [helpers, OWN_PROGRAM]),
                         ["binomial_children"])


@pytest.mark.parametrize("helpers", [
    # a wrapper of the library's helper under its name
    "from collective_lib import trees\n\ndef binomial_children(i, p):\n"
    "    return trees.binomial_children(i, p)\n",
    # the library's helper imported after one's own
    OWN_CHILDREN + "\nfrom collective_lib.trees import binomial_children\n",
    # a class of one's own whose method calls the library's helper
    "from collective_lib import trees\n\nclass binomial_children(list):\n"
    "    def __init__(self, i, p):\n"
    "        super().__init__(trees.binomial_children(i, p))\n",
])
def test_the_librarys_helper_behind_ones_own_name_is_still_refused(helpers):
    with pytest.raises(AssertionError, match="uses the library's `binomial_children`"):
        forbid_library_calls(_defined(helpers, OWN_PROGRAM), ["binomial_children"])
    with pytest.raises(AssertionError, match="uses the library's `binomial_children`"):
        forbid_library_calls(_RecordedStandIn("smallest_first", [helpers, OWN_PROGRAM]),
                             ["binomial_children"], at_run_time=False)


def _defined_in_cells(*sources):
    """``smallest_first`` of ``sources`` run as a notebook's cells: each cell's source is
    where ``inspect.getsource`` finds it, as IPython keeps it (Validate reads it there)."""
    import linecache
    namespace = {"send": send, "__name__": "__main__"}
    for number, source in enumerate(sources):
        filename = f"<ipython-input-{number}-own>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(compile(source, filename, "exec"), namespace)
    return namespace["smallest_first"]


OWN_PARENT = "def binomial_parent(i):\n    return i - (i & -i) if i else None\n"
OWN_PROGRAM_WITH_PARENT = '''
def smallest_first(me, p, data, root=0):
    if binomial_parent(me) is not None:
        data = yield recv(binomial_parent(me))
    for child in binomial_children(me, p):
        yield send(child, data)
    return data
'''


# The eleventh round's own helpers as a student's notebook holds them (the source of each
# cell readable, as in Validate): the `def` line of one's own binomial_children named the
# library's, and a memoized helper or a lambda was not seen as one's own.
@pytest.mark.parametrize("helpers", [
    OWN_PARENT + OWN_CHILDREN,
    "import functools\n\n" + OWN_PARENT + "\n@functools.lru_cache(maxsize=None)"
    + OWN_CHILDREN,
    "binomial_parent = lambda i: i - (i & -i) if i else None\n" + OWN_CHILDREN,
    # the twelfth round's fixers: in a block at the top, and memoized by rebinding
    "if True:\n" + textwrap.indent(OWN_PARENT + OWN_CHILDREN, "    "),
    "import functools\n\n" + OWN_PARENT + OWN_CHILDREN
    + "binomial_children = functools.lru_cache(maxsize=None)(binomial_children)\n",
], ids=["defs", "lru_cache", "lambda", "in_a_block", "memoized_by_rebinding"])
def test_helpers_of_ones_own_in_a_notebooks_cells_are_no_use_of_the_librarys(helpers):
    forbidden = ["binomial_children", "binomial_parent"]
    forbid_library_calls(_defined_in_cells(helpers, OWN_PROGRAM_WITH_PARENT), forbidden)
    forbid_library_calls(_RecordedStandIn("smallest_first", [helpers, OWN_PROGRAM_WITH_PARENT]),
                         forbidden, at_run_time=False)


@pytest.mark.parametrize("helpers", [
    # a lambda that calls the library's helper
    "from collective_lib import trees\n\nbinomial_parent = lambda i: trees.binomial_parent(i)\n"
    + OWN_CHILDREN,
    # the library's helper memoized under its own name
    "import functools\nfrom collective_lib import trees\n\n" + OWN_PARENT
    + "binomial_children = functools.lru_cache(trees.binomial_children)\n",
    # one's own helper memoized, calling the library's
    "import functools\nfrom collective_lib import trees\n\n" + OWN_PARENT
    + "\n@functools.lru_cache(maxsize=None)\ndef binomial_children(i, p):\n"
    "    return trees.binomial_children(i, p)\n",
    # one's own helper in a block, calling the library's
    "from collective_lib import trees\n\n" + OWN_PARENT + "if True:\n"
    "    def binomial_children(i, p):\n        return trees.binomial_children(i, p)\n",
    # one's own helper, or else the library's: which one runs is not known
    OWN_PARENT + "try:\n    from collective_lib.trees import binomial_children\n"
    "except ImportError:\n" + textwrap.indent(OWN_CHILDREN, "    "),
    # one's own helper rebound to what a wrapper that is no cache gives
    "from collective_lib import trees\n\n" + OWN_PARENT + OWN_CHILDREN
    + "binomial_children = (lambda f: trees.binomial_children)(binomial_children)\n",
    # ... by a function of one's own named as functools' cache
    "from collective_lib import trees\n\n" + OWN_PARENT + OWN_CHILDREN
    + "def cache(f):\n    return trees.binomial_children\n\n"
    + "binomial_children = cache(binomial_children)\n",
    # ... by a module of one's own named functools
    "import types\nfrom collective_lib import trees\n\n" + OWN_PARENT + OWN_CHILDREN
    + "functools = types.SimpleNamespace(cache=lambda f: trees.binomial_children)\n"
    + "binomial_children = functools.cache(binomial_children)\n",
], ids=["lambda", "library_memoized", "own_memoized_wrapper", "block_wrapper",
        "own_or_the_librarys", "rebound_by_no_cache", "own_cache", "own_functools"])
def test_the_librarys_helper_behind_a_lambda_or_a_cache_is_still_refused(helpers):
    forbidden = ["binomial_children", "binomial_parent"]
    with pytest.raises(AssertionError, match="uses the library's `binomial_"):
        forbid_library_calls(_defined_in_cells(helpers, OWN_PROGRAM_WITH_PARENT), forbidden)
    with pytest.raises(AssertionError, match="uses the library's `binomial_"):
        forbid_library_calls(_RecordedStandIn("smallest_first",
                                              [helpers, OWN_PROGRAM_WITH_PARENT]),
                             forbidden, at_run_time=False)


def test_a_table_written_into_the_cells_is_flagged_for_review():
    # a student audit: tables of the simulator's outputs pasted for the p tested
    from collective_lib.grading import TABLE_CONSTANTS, take_review_flags
    take_review_flags()
    table = {p: 1.5 * p for p in range(2, 2 + TABLE_CONSTANTS // 2)}
    pasted = [f"A = {table!r}", "def t(p, m, ts, tw):\n    return A[p] * ts\n"]
    forbid_library_calls(_RecordedStandIn("t", pasted), ["simulate"], at_run_time=False)
    flags = take_review_flags()
    assert len(flags) == 1 and flags[0].startswith(
        f"t reads a table of {TABLE_CONSTANTS} values written into the cells ({{2: 3.0, 3: "), flags
    small = [f"A = {dict(list(table.items())[:-1])!r}", pasted[1]]
    forbid_library_calls(_RecordedStandIn("t", small), ["simulate"], at_run_time=False)
    assert take_review_flags() == []


#: A table of a(p) for p = 2..21 (40 values), written so that no display holds 40 (an audit:
#: 9/9 in reading_a_run, no flag): in pieces merged, filled by a later .update(...) or item
#: by item, in a string parsed inside the function, in default arguments.
_TABLE = {p: 1.5 * p for p in range(2, 22)}
_ITEMS = list(_TABLE.items())
_READS_A = "def t(p, m, ts, tw):\n    return A[p] * ts\n"
_SPLIT_TABLES = {
    "merged pieces": [f"A0 = {dict(_ITEMS[:10])!r}", f"A1 = {dict(_ITEMS[10:])!r}",
                      "A = {**A0, **A1}", _READS_A],
    "filled later": ["A = {}", f"A.update({dict(_ITEMS[:10])!r})",
                     f"A.update({dict(_ITEMS[10:])!r})", _READS_A],
    "item by item": ["A = {}", "\n".join(f"A[{p}] = {a!r}" for p, a in _ITEMS), _READS_A],
    "in a string": ["ROWS = " + repr(" ".join(f"{p}:{a!r}" for p, a in _ITEMS)),
                    "def t(p, m, ts, tw):\n    rows = dict(row.split(':') for row in "
                    "ROWS.split())\n    return float(rows[str(p)]) * ts\n"],
    "default arguments": [f"def t(p, m, ts, tw, a={dict(_ITEMS[:10])!r}, "
                          f"b={dict(_ITEMS[10:])!r}):\n    return {{**a, **b}}[p] * ts\n"],
}


@pytest.mark.parametrize("how, pieces, start", [
    ("merged pieces", 2, "{2: 3.0, 3: 4.5, 4: 6.0"),
    ("filled later", 2, "A.update({2: 3.0, 3: 4.5"),
    ("item by item", 20, "A[2] = 3.0"),
    ("in a string", 1, "'2:3.0 3:4.5 4:6.0 5:7.5"),
    ("default arguments", 2, "{2: 3.0, 3: 4.5"),
])
def test_a_table_in_pieces_is_flagged_as_one(how, pieces, start):
    # an audit: dicts of 19 entries merged, a string parsed inside the function, a table
    # filled by .update(...) after it was made: 9/9 in reading_a_run, never flagged
    from collective_lib.grading import TABLE_CONSTANTS, take_review_flags
    take_review_flags()
    cells = _SPLIT_TABLES[how]
    forbid_library_calls(_RecordedStandIn("t", cells), ["simulate"], at_run_time=False)
    flags = take_review_flags()
    in_pieces = f", in {pieces} pieces" if pieces > 1 else ""
    assert len(flags) == 1 and flags[0].startswith(
        f"t reads a table of {TABLE_CONSTANTS} values written into the cells{in_pieces} "
        f"({start}"), flags
    assert flags[0].endswith(" ...): worked out, or pasted from runs?"), flags
    # one value less, and nothing is flagged
    fewer = [cell.replace("21: 31.5", "").replace("21:31.5", "").replace("A[21] = 31.5", "")
             for cell in cells]
    assert fewer != cells
    forbid_library_calls(_RecordedStandIn("t", fewer), ["simulate"], at_run_time=False)
    assert take_review_flags() == []


def test_the_cases_a_cell_tries_and_a_table_not_read_are_no_table():
    # a function's parameters are its own: a loop over test cases at the top of a cell that
    # binds p, m, ts and tw is not the function's data, nor is a table it never reads, nor
    # the numbers of its docstring and messages
    from collective_lib.grading import take_review_flags
    take_review_flags()
    cells = ['def t(p, m, ts, tw):\n    """Time for p = 2, 4, 8, 16, 32, 64, 128, 256."""\n'
             '    if p < 2:\n        raise ValueError(f"p = {p} < 2: at least 2 PEs")\n'
             "    return (p - 1) * (ts + tw * m) + 3 * (ts + 2 * tw * m)\n",
             "for p, m, ts, tw in " + repr([(p, 1, 1.0, 0.5) for p in range(2, 20)]) +
             ":\n    print(t(p, m, ts, tw))\n",
             f"UNUSED = {_TABLE!r}"]
    forbid_library_calls(_RecordedStandIn("t", cells), ["simulate"], at_run_time=False)
    assert take_review_flags() == []


def test_a_forbidden_helper_of_the_notebook_is_refused_by_its_name():
    # the set-up cell's simulated_time_of (reading_a_run) lives beside the student's code:
    # only its name tells it apart, as the library defines no such function
    namespace = {"__name__": "__main__"}
    exec("def simulated_time_of(p):\n    return 2.0 * p\n\n"
         "def predicted(p):\n    return simulated_time_of(p)\n", namespace)
    with pytest.raises(AssertionError, match="uses the library's `simulated_time_of`"):
        forbid_library_calls(namespace["predicted"], ["simulated_time_of"])


# Twelfth round (B-F5): allreduce_switch_point asks for a switch point derived, not searched;
# a bisection over blocks and sizes gave every graded case (4 of 4), unflagged.
_BISECTION = '''
def switch_point(p, ts, tw):
    log_p = p.bit_length() - 1
    def wins(m):
        return 2 * (p - 1) * (ts + tw * (-(-m // p))) < log_p * (ts + tw * m)
    hi = 1
    while not wins(hi * p):
        hi *= 2
    lo, hi = (hi // 2) * p, hi * p
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if wins(mid) else (mid, hi)
    return hi
'''

_RECURSION = '''
def gallop(p, ts, tw, c):
    return c if ts < c * tw * p else gallop(p, ts, tw, 2 * c)
def switch_point(p, ts, tw):
    return gallop(p, ts, tw, 1) * p
'''

_FORMULA = '''
def switch_point(p, ts, tw):
    log_p = p.bit_length() - 1
    slope = (log_p * p - 2 * (p - 1)) * tw
    if slope <= 0:
        return None
    c = math.floor((2 * (p - 1) - log_p) * ts / slope) + 1
    x = (2 * (p - 1) * (ts + tw * c) - log_p * ts) / (log_p * tw)
    return max((c - 1) * p + 1, math.floor(x) + 1)
'''


@pytest.mark.parametrize("cells, found", [
    ([_BISECTION], ["a while loop"]),
    (["import math", _RECURSION], ["gallop, which calls itself"]),
    (["import math", _FORMULA], []),
])
def test_a_search_where_a_derivation_is_asked_for_is_flagged_for_review(cells, found):
    from collective_lib.grading import flag_searched_answer, take_review_flags
    take_review_flags()
    standin = _RecordedStandIn("switch_point", cells)
    assert flag_searched_answer(standin, asks="derive it") == found
    assert take_review_flags() == (
        [f"switch_point: its definition uses {found[0]}; derive it"] if found else [])
