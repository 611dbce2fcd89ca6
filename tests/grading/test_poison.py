"""A poisoned student process: the library code a test cell forbids cannot run, however reached.

Each test forks this process, poisons the library's forbidden names in the child
(collective_lib.autograde.poison, as a student process does before the
student's cells run), tries ways to reach the forbidden code there, and reports
what each did through a pipe: the hostile ways raise the FORBIDDEN error naming
a forbidden function, or are refused; honest work (an own program, numpy,
threads, own files, IPython cells) runs. The last tests go through the trusted
checker: from a test cell's forbid to the end of that cell, the student's
calls run in poisoned processes.
"""
import dis
import gc
import importlib
import inspect
import io
import json
import marshal
import multiprocessing.util
import operator
import os
import pydoc
import subprocess
import sys
import tempfile
import textwrap
import threading
import types

import numpy as np
import pytest

import collective_lib.cm200.gray as gray_module
from collective_lib import catalog, recv, send, simulate
from collective_lib.autograde import poison, sandbox
from collective_lib.autograde.checker import check_notebook
from collective_lib.grading.forbidden import FORBIDDEN, forbidden_name, library_definitions
from collective_lib.cm200 import schedules
from messages import flat

NAMES = ["gray", "gray_inverse", "gray_code", "binomial_broadcast", "catalog",
         "d_cycles_schedule"]
ROOT = os.geteuid() == 0


def _read_all(fd) -> bytes:
    data = b""
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return data
        data += chunk


def _poisoned_child(routes: dict, names=NAMES, before=None, prepared=False) -> dict:
    """``{route: [outcome, text]}``: each of ``routes`` run in a forked child poisoned with
    ``names``; outcome "ok" (text: the value's repr) or the exception's type name.

    ``before()`` runs in the child before the poisoning; what it returns is given to
    every route (what a program could have kept from before, in a test only).
    ``prepared``: this process looks up the poisoning before the fork, as the student
    host does (:func:`poison.prepare`).
    """
    read, write = os.pipe()
    if prepared:
        poison.prepare(names)
    pid = os.fork()
    if pid and prepared:
        poison._PREPARED.clear()
    if pid == 0:                                        # the child: never returns
        try:
            os.close(read)
            null = os.open(os.devnull, os.O_RDWR)
            os.dup2(null, 1)
            os.dup2(null, 2)
            kept = before() if before else {}
            poison.poison(names)
            out = {}
            for label, route in routes.items():
                try:
                    out[label] = ["ok", repr(route(kept))[:300]]
                except BaseException as err:            # what the route raised
                    out[label] = [type(err).__name__, str(err)[:600]]
            data = json.dumps(out).encode()
        except BaseException as err:
            data = json.dumps({"__child__": [type(err).__name__, str(err)]}).encode()
        while data:
            data = data[os.write(write, data):]
        os._exit(0)
    os.close(write)
    try:
        data = _read_all(read)
    finally:
        os.close(read)
        os.waitpid(pid, 0)
    result = json.loads(data)
    assert "__child__" not in result, result
    return result


def _assert_forbidden(result: dict, expected=None) -> None:
    """Every route raised the FORBIDDEN error naming a forbidden function (``expected``:
    ``{route: name}`` where the name is known)."""
    for label, (outcome, text) in result.items():
        assert outcome in ("RuntimeError", "PermissionError"), (label, outcome, text)
        assert FORBIDDEN in text, (label, text)
        assert forbidden_name(text) in NAMES, (label, text)
        if expected and label in expected:
            assert forbidden_name(text) == expected[label], (label, text)


# -- computed lookups: the object itself raises --------------------------------------------

class _Spy:
    """Compared inside the library, it takes the caller's module globals (sys._getframe)."""
    found = None

    def __eq__(self, other):
        _Spy.found = sys._getframe(1).f_globals["gr" + "ay"]
        return True

    __hash__ = object.__hash__


def _frame_globals(kept):
    schedules._check_order(_Spy())                   # its frame's globals hold `gray`
    return _Spy.found(5)


def _garbage_collector(kept):
    # the library's gray: matplotlib.pyplot has a gray() of its own (a colour map, no
    # arguments) wherever a test before this one in the process imported pyplot
    found = [f for f in gc.get_objects()
             if isinstance(f, types.FunctionType) and f.__name__ == "gr" + "ay"
             and (f.__module__ or "").startswith("collective_lib")]
    assert found, "the garbage collector knows no library function called gray"
    return [f(5) for f in found]


LOOKUPS = {
    "getattr": lambda kept: getattr(gray_module, "gr" + "ay")(5),
    "operator.attrgetter": lambda kept: operator.attrgetter("gr" + "ay")(gray_module)(5),
    "__getattribute__": lambda kept: gray_module.__getattribute__("gr" + "ay")(5),
    "inspect.getmembers": lambda kept: dict(inspect.getmembers(gray_module))["gr" + "ay"](5),
    "sys._getframe().f_globals": _frame_globals,
    "pydoc.locate": lambda kept: pydoc.locate("collective_lib.cm200.gray.gr" + "ay")(5),
    "gc.get_objects": _garbage_collector,
    "__wrapped__": lambda kept: schedules.d_cycles_schedule.__wrapped__(3),
    "the lru_cache wrapper": lambda kept: schedules.d_cycles_schedule(3),
    "a catalog entry kept from before": lambda kept: kept["entry"].program(0, 1, [7]),
    "a reference kept from before": lambda kept: kept["alias"](5),
}


@pytest.mark.parametrize("prepared", [False, True], ids=["looked_up_here", "prepared_by_host"])
def test_every_computed_lookup_reaches_a_function_that_raises(prepared):
    def before():
        return {"entry": catalog()["binomial_broadcast"], "alias": gray_module.gray}

    result = _poisoned_child(LOOKUPS, before=before, prepared=prepared)
    assert set(result) == set(LOOKUPS)
    _assert_forbidden(result, {"getattr": "gray", "operator.attrgetter": "gray",
                               "sys._getframe().f_globals": "gray", "gc.get_objects": "gray",
                               "__wrapped__": "d_cycles_schedule",
                               "the lru_cache wrapper": "d_cycles_schedule",
                               "a catalog entry kept from before": "binomial_broadcast",
                               "a reference kept from before": "gray"})
    for label, (_, text) in result.items():
        assert "which was called here" in text, (label, text)


# -- re-creating the code: refused ---------------------------------------------------------

def _source_file_run(kept):
    space = {}
    exec(open(gray_module.__file__).read(), space)
    return space["gray"](5)


def _reimport(kept):
    del sys.modules["collective_lib.cm200.gray"]
    return importlib.import_module("collective_lib.cm200.gray").gray(5)


def _copy_under_another_name(kept):
    source = kept["source"].replace("def gray_inverse(", "def mine(")
    space = dict(vars(gray_module))
    exec(compile(source, "mine.py", "exec"), space)
    return space["mine"](6)


def _nested_copy_as_function(kept):
    code = compile(kept["source"].replace("def gray_inverse(", "def mine("), "mine.py", "exec")
    inner = [c for c in code.co_consts if isinstance(c, types.CodeType)][0]
    return types.FunctionType(inner, vars(gray_module))(6)


def _marshal_copy(kept):
    return types.FunctionType(marshal.loads(kept["marshalled"]), vars(gray_module))(6)


def _assigned_code(kept):
    def mine(g):
        return g
    mine.__code__ = kept["code"]
    return mine(6)


def _symlink(kept):
    link = os.path.join(tempfile.mkdtemp(), "copy.py")
    os.symlink(gray_module.__file__, link)
    return open(link).read()


def _folder_descriptor(kept):
    folder = os.open(os.path.dirname(gray_module.__file__), os.O_RDONLY)
    return os.read(os.open("gray.py", os.O_RDONLY, dir_fd=folder), 100)


def _builtins_rebound(kept):
    import builtins
    saved = builtins.isinstance, builtins.len, os.stat
    builtins.isinstance, builtins.len, os.stat = (lambda *a: False), (lambda *a: 0), None
    try:
        return open(gray_module.__file__).read()
    finally:
        builtins.isinstance, builtins.len, os.stat = saved


def _guard(kept):
    return [f for f in gc.get_objects()
            if type(f) is types.FunctionType and f.__name__ == "_forbidden_guard"]


def _guard_switched_off(kept):
    guards = _guard(kept)
    assert guards, "no guard found"
    guards[0].__defaults__ = tuple(None for _ in guards[0].__defaults__)
    return open(gray_module.__file__).read()


def _guard_code_replaced(kept):
    _guard(kept)[0].__code__ = (lambda event, args: None).__code__
    return open(gray_module.__file__).read()


class _Disguised:
    """A path that claims to be a str and names another file each time it is asked."""
    asked = 0

    @property
    def __class__(self):
        return str

    def __fspath__(self):
        _Disguised.asked += 1
        return gray_module.__file__ if _Disguised.asked % 2 else "/nothing/here.py"


def _fork():
    pid = os.fork()
    if pid == 0:                                # were it allowed: the copy leaves at once
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


def _traced_guard(kept):
    """A trace function let into the guard could clear the files it refuses."""
    guard = _guard(kept)[0]
    guard.__cantrace__ = True                  # an attribute, no audit event

    def trace(frame, event, arg):
        if frame.f_code is guard.__code__ and "_files" in frame.f_locals:
            frame.f_locals["_files"] = frozenset()
        return trace
    sys.settrace(trace)
    try:
        return open(gray_module.__file__).read()
    finally:
        sys.settrace(None)


SCRIPT = "from collective_lib.cm200.gray import gray; print(gray(5))"

REBUILDS = {
    "importlib.reload": lambda kept: importlib.reload(gray_module).gray(5),
    "a fresh import": _reimport,
    "exec(open(file).read())": _source_file_run,
    "a copy compiled under another name": _copy_under_another_name,
    "a function made from a compiled copy": _nested_copy_as_function,
    "marshal": _marshal_copy,
    "the original code (types.FunctionType)":
        lambda kept: types.FunctionType(kept["code"], vars(gray_module))(6),
    "the original code (exec)": lambda kept: exec(kept["code"], vars(gray_module)),
    "the original code (assigned to __code__)": _assigned_code,
    "code.replace": lambda kept: (lambda: 0).__code__.replace(co_name="x"),
    "numpy.fromfile": lambda kept: np.fromfile(gray_module.__file__, dtype=np.uint8)[:10],
    "a path that changes when asked again": lambda kept: io.FileIO(_Disguised()).read(20),
    "a symbolic link": _symlink,
    "a folder's descriptor (dir_fd)": _folder_descriptor,
    "os.chdir": lambda kept: os.chdir(os.path.dirname(gray_module.__file__)),
    "/proc/self/mem": lambda kept: open("/proc/self/mem", "r+b"),
    "subprocess": lambda kept: subprocess.run([sys.executable, "-c", SCRIPT],
                                              capture_output=True, text=True).stdout,
    "os.system": lambda kept: os.system(f"{sys.executable} -c '{SCRIPT}'"),
    "os.fork": lambda kept: _fork(),
    "os.posix_spawn": lambda kept: os.posix_spawn(sys.executable, [sys.executable], {}),
    "_posixsubprocess (multiprocessing)": lambda kept: multiprocessing.util.spawnv_passfds(
        sys.executable.encode(), [sys.executable.encode(), b"-c", SCRIPT.encode()], []),
    "ctypes": lambda kept: __import__("ctypes").CDLL(None).getpid(),
    "cffi": lambda kept: __import__("cffi"),
    "builtins and os.stat rebound": _builtins_rebound,
    "the guard's defaults replaced": _guard_switched_off,
    "the guard's code replaced": _guard_code_replaced,
    "a trace function in the guard": _traced_guard,
    "another thread's frames": lambda kept: sys._current_frames(),
}


@pytest.mark.parametrize("prepared", [False, True], ids=["looked_up_here", "prepared_by_host"])
def test_every_way_to_re_create_the_code_is_refused(prepared):
    def before():
        return {"source": inspect.getsource(gray_module.gray_inverse),
                "marshalled": marshal.dumps(gray_module.gray_inverse.__code__),
                "code": gray_module.gray_inverse.__code__}

    result = _poisoned_child(REBUILDS, before=before, prepared=prepared)
    assert set(result) == set(REBUILDS)
    for label in ("a copy compiled under another name", "a function made from a compiled copy",
                  "marshal", "the original code (types.FunctionType)",
                  "the original code (exec)", "the original code (assigned to __code__)"):
        assert "a copy of its code cannot run here" in result[label][1], result[label]
    _assert_forbidden(result, {label: "gray_inverse" for label in (
        "a copy compiled under another name", "a function made from a compiled copy",
        "marshal", "the original code (types.FunctionType)")})
    assert result["the guard's defaults replaced"][1].endswith("this process's guard cannot change")


def _original_code_holders(kept):
    """The types of the objects that hold the library's code of gray_inverse, whatever
    reaches them from the garbage collector's objects (a dict of code objects alone is
    not one of those, but what holds it is). Level by level: the referents of a whole
    level are listed at once."""
    def original(obj):
        return (type(obj) is types.CodeType and obj.co_name == "gray_inverse"
                and obj.co_filename == gray_module.__file__)

    level, seen, holders = gc.get_objects(), set(), set()
    while level:
        seen.update(map(id, level))
        below = gc.get_referents(*level)
        if any(map(original, below)):
            holders.update(type(obj).__name__ for obj in level
                           if any(map(original, gc.get_referents(obj))))
        level = list({id(obj): obj for obj in below if id(obj) not in seen}.values())
    return sorted(holders)


def test_a_prepared_poisoning_leaves_no_plan_and_no_original_code_behind():
    """The host's plans hold the original code objects: a poisoned process drops them all
    (also a plan for other names), so no walk of its objects finds one to copy."""
    poison.prepare(["gray_inverse"])                # another cell's names, also gone
    try:
        result = _poisoned_child({
            "plans left": lambda kept: len(poison._PREPARED),
            "original code reachable": _original_code_holders,
            "gray_inverse": lambda kept: gray_module.gray_inverse(5)}, prepared=True)
    finally:
        poison._PREPARED.clear()
    assert result["plans left"] == ["ok", "0"]
    assert result["original code reachable"] == ["ok", "[]"]
    _assert_forbidden({"gray_inverse": result["gray_inverse"]}, {"gray_inverse": "gray_inverse"})


def test_the_source_is_nowhere_to_be_read():
    routes = {"inspect.getsource of the module": lambda kept: inspect.getsource(gray_module),
              "inspect.getsource of the function":
                  lambda kept: inspect.getsource(gray_module.gray_inverse),
              "linecache": lambda kept: __import__("linecache").getlines(gray_module.__file__),
              "the original code object": lambda kept: kept["alive"]()}

    def before():
        import weakref
        inspect.getsource(gray_module)                  # cached in linecache before the fork
        return {"alive": weakref.ref(gray_module.gray_inverse.__code__)}

    result = _poisoned_child(routes, before=before)
    assert result["inspect.getsource of the module"][0] == "OSError"
    assert result["inspect.getsource of the function"][0] == "OSError"
    assert result["linecache"] == ["ok", "[]"]
    assert result["the original code object"] == ["ok", "None"]     # gone: nothing to copy


def test_the_guard_uses_no_globals_and_no_closure():
    guard = poison._hook({}, {}, {}, "`x`")
    assert guard.__closure__ is None
    loads = [i.opname for i in dis.get_instructions(guard)
             if i.opname in ("LOAD_GLOBAL", "LOAD_NAME", "LOAD_DEREF", "LOAD_CLASSDEREF")]
    assert loads == []
    assert not [c for c in guard.__code__.co_consts if isinstance(c, types.CodeType)]


def test_no_process_starts_whatever_asks_for_it():
    """The seccomp filter alone (no audit hook): fork and exec fail, threads start."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        out = {}
        try:
            out["installed"] = poison._no_new_processes()
            try:
                child = os.fork()
                if child == 0:
                    os._exit(0)
                out["fork"] = "forked"
            except OSError as err:
                out["fork"] = err.errno
            try:
                out["subprocess"] = subprocess.run(["true"]).returncode
            except OSError as err:
                out["subprocess"] = err.errno
            box = []
            thread = threading.Thread(target=lambda: box.append(sum(range(10))))
            thread.start()
            thread.join()
            out["thread"] = box
        except BaseException as err:
            out["error"] = repr(err)
        os.write(write, json.dumps(out).encode())
        os._exit(0)
    os.close(write)
    out = json.loads(_read_all(read))
    os.close(read)
    os.waitpid(pid, 0)
    if not out.get("installed"):
        pytest.skip(f"no seccomp filter here: {out}")
    assert out == {"installed": True, "fork": 1, "subprocess": 1, "thread": [45]}   # EPERM


# -- honest work runs ----------------------------------------------------------------------

def own_broadcast(me, p, data, root=0):
    if me == root:
        for dst in range(p):
            if dst != root:
                yield send(dst, data)
        return data
    return (yield recv(root))


def _same_shape_as_gray(kept):
    """The library's gray with another check: the same bytecode, other names."""
    def validate(name, x):
        return int(x)

    def gray_of(i):
        i = validate("i", i)
        return i ^ (i >> 1)
    assert len(gray_of.__code__.co_code) >= poison._DISTINCTIVE_BYTES
    return [gray_of(i) for i in range(8)]


def _own_files(kept):
    folder = tempfile.mkdtemp()
    with open(os.path.join(folder, "notes.txt"), "w") as handle:
        handle.write("mine")
    return os.listdir(folder), open(os.path.join(folder, "notes.txt")).read()


def _new_import(kept):
    sys.modules.pop("colorsys", None)
    return importlib.import_module("colorsys").rgb_to_hsv(1.0, 0.0, 0.0)


def _threads(kept):
    box = []
    thread = threading.Thread(target=lambda: box.append(np.arange(4).sum()))
    thread.start()
    thread.join()
    return [int(x) for x in box]


HONEST = {
    "own program in the simulator": lambda kept: simulate(own_broadcast, 4, [9, None, None, None],
                                                          ).results,
    "numpy": lambda kept: float(np.linalg.norm(np.ones(4))),
    "library code not forbidden": lambda kept: gray_module.sh(0b011, 3),
    "the shape of gray under other names": _same_shape_as_gray,
    "own files": _own_files,
    "a module imported afresh": _new_import,
    "threads": _threads,
}


def test_honest_work_runs():
    result = _poisoned_child(HONEST)
    assert result == {
        "own program in the simulator": ["ok", "[9, 9, 9, 9]"],
        "numpy": ["ok", "2.0"],
        "library code not forbidden": ["ok", "6"],
        "the shape of gray under other names": ["ok", "[0, 1, 3, 2, 6, 7, 5, 4]"],
        "own files": ["ok", "(['notes.txt'], 'mine')"],
        "a module imported afresh": ["ok", "(0.0, 1.0, 1.0)"],
        "threads": ["ok", "[6]"],
    }


def test_ipython_runs_the_students_cells_in_a_poisoned_process():
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance(history_length=0)
    cells = ["import numpy as np\ndef gray_of(i):\n    return i ^ (i >> 1)\n",
             "table = [gray_of(i) for i in range(8)]\ntotal = int(np.sum(table))\n",
             "import operator, collective_lib.cm200 as cm\n"
             "reached = operator.attrgetter('gr' + 'ay.gr' + 'ay')(cm)\n"]

    def run(kept):
        errors = []
        for cell in cells:
            outcome = shell.run_cell(cell, store_history=False, silent=True)
            errors.append(repr(outcome.error_before_exec or outcome.error_in_exec))
        return errors, shell.user_ns["table"], shell.user_ns["total"]

    def call(kept):
        return shell.user_ns["reached"](5)

    result = _poisoned_child({"cells": run, "the reached function": call})
    assert result["cells"] == ["ok", "(['None', 'None', 'None'], [0, 1, 3, 2, 6, 7, 5, 4], 28)"]
    _assert_forbidden({"the reached function": result["the reached function"]},
                      {"the reached function": "gray"})


# -- which names, and the message ----------------------------------------------------------

def test_the_library_definitions_are_found_in_modules_not_imported_yet():
    found = library_definitions(["gray", "fit_ts_tw", "simulated_time_of", "crossover"])
    assert found == {"gray": ("collective_lib.cm200.gray",),
                     "fit_ts_tw": ("collective_lib.mpi.calibrate",)}
    script = textwrap.dedent("""
        import importlib, json, sys
        from collective_lib.autograde import poison
        assert "collective_lib.mpi" not in sys.modules
        poison.poison(["fit_ts_tw"])
        module = importlib.import_module("collective_lib." + "mpi")
        try:
            getattr(module, "fit_" + "ts_tw")([1, 2, 4], [1.0, 2.0, 3.0])
            print(json.dumps("ran"))
        except RuntimeError as err:
            print(json.dumps(str(err)))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert forbidden_name(json.loads(out.stdout)) == "fit_ts_tw", out.stdout


def test_forbidden_name_reads_the_name_back():
    assert forbidden_name(f"gray_of(3) raised RuntimeError: {FORBIDDEN} `gray`, which was "
                          "called here") == "gray"
    assert forbidden_name(f"{FORBIDDEN} `gray`, `gray_code`: a folder ...") == "gray"
    assert forbidden_name("gray_of(3) raised RuntimeError: something else") is None


# -- through the trusted checker: from the forbid to the end of the cell ---------------------

def _verdicts(student, *tests):
    cells = [{"role": "student", "source": student, "id": "answer"}]
    cells += [{"role": "graded", "source": s, "id": f"t{i}"} for i, s in enumerate(tests)]
    job = {"cells": cells, "hide": []}
    if not ROOT:
        return check_notebook({**job, "uid": None})
    with sandbox.SandboxUser(61500, 8) as user:
        return check_notebook({**job, "uid": user.uid})


STUDENT = '''
import operator, collective_lib.cm200 as _cm

def gray_of(i):
    return operator.attrgetter("gr" + "ay.gr" + "ay")(_cm)(i)

def honest(i):
    return i ^ (i >> 1)
'''

FORBIDDING = '''
from collective_lib.grading import forbid_library_calls, guarded_call
assert guarded_call(gray_of, 3) == 2            # before the forbid: the library's gray ran
forbid_library_calls(gray_of, ["gray", "gray_inverse", "simulated_time_of"])
assert guarded_call(gray_of, 3) == 2
'''

HONEST_CELL = '''
from collective_lib.grading import forbid_library_calls, guarded_call
forbid_library_calls(honest, ["gray", "gray_inverse"])
assert [guarded_call(honest, i) for i in range(4)] == [0, 1, 3, 2]
'''

LATER_CELL = '''
from collective_lib.grading import guarded_call
assert guarded_call(gray_of, 3) == 2            # this cell forbids nothing
'''


def test_after_a_forbid_the_cells_checks_run_where_the_library_cannot():
    verdicts = _verdicts(STUDENT, FORBIDDING, HONEST_CELL, LATER_CELL)
    forbidden = verdicts["t0"]
    assert not forbidden["passed"]
    assert forbidden_name(forbidden["message"]) == "gray", forbidden["message"]
    assert "gray_of(3) raised RuntimeError" in forbidden["message"]
    assert 'operator.attrgetter("gr" + "ay.gr" + "ay")(_cm)(i)' in forbidden["message"]
    assert verdicts["t1"]["passed"], verdicts["t1"]
    assert verdicts["t2"]["passed"], verdicts["t2"]        # the next cell starts anew


RELAYS = '''
import subprocess, sys
from collective_lib import catalog

def relay(me, p, data, root=0):
    program = catalog()["binomial_" + "broadcast"].program
    return (yield from program(me, p, data, root))

def relay_elsewhere(me, p, data, root=0):
    if me == root:
        subprocess.run([sys.executable, "-c", "print(1)"], check=True)
    return data
    yield
'''

EXECUTION = '''
from collective_lib.grading import forbid_library_execution
forbid_library_execution({program}, ["binomial_broadcast"], 4, [7, None, None, None])
'''


def test_forbid_library_execution_names_the_function_the_program_reached():
    verdicts = _verdicts(RELAYS, EXECUTION.format(program="relay"),
                         EXECUTION.format(program="relay_elsewhere"))
    called, refused = flat(verdicts["t0"]["message"]), flat(verdicts["t1"]["message"])
    assert called.startswith("relay runs the library's `binomial_broadcast` (it called it when "
                             "relay was simulated on p=4)"), called
    assert refused.startswith(
        "relay_elsewhere tries to run the library's `binomial_broadcast` (no process or "
        "interpreter can start here (subprocess.Popen)"), refused


def test_a_method_an_allowed_class_inherits_stays_and_the_forbidden_one_goes():
    # broken_lock, which the broken_lock exercise hands out, inherits __init__, memory and
    # release from the forbidden cas_spin_lock: they stay; cas_spin_lock's own acquire goes
    from collective_lib.algorithms import sync

    def step(gen):
        return type(next(gen)).__name__

    out = _poisoned_child({
        "broken release": lambda _: step(sync.broken_lock(0, 2).release()),
        "broken acquire": lambda _: step(sync.broken_lock(0, 2).acquire()),
        "broken memory": lambda _: sync.broken_lock.memory(2),
        "spin acquire": lambda _: step(sync.cas_spin_lock(0, 2).acquire()),
        "ttas acquire": lambda _: step(sync.ttas_backoff_lock(0, 2).acquire()),
    }, names=["cas_spin_lock", "ttas_backoff_lock", "reader_writer_lock", "LOCKS"])
    assert out["broken release"][0] == "ok" and out["broken acquire"][0] == "ok", out
    assert out["broken memory"] == ["ok", "{'lock': 0}"], out
    for route in ("spin acquire", "ttas acquire"):
        assert out[route][0] == "RuntimeError" and FORBIDDEN in out[route][1], out


LOCKS = '''
import importlib
from collective_lib.algorithms.sync import broken_lock

_sync = importlib.import_module("collective_lib.algorithms." + "sync")

class FixedLock(broken_lock):
    # the library's spin lock, reached by a computed name: the source check cannot see it
    acquire = getattr(_sync, "cas_" + "spin_lock").acquire

class HonestLock(broken_lock):
    def acquire(self):
        from collective_lib.shared_memory import cas, pause, read
        while True:
            while (yield read(self.cell)) != 0:
                yield pause(1)
            if (yield cas(self.cell, 0, 1)):
                return
'''

LOCK_CELL = '''
from collective_lib.grading import check_lock_progress, check_own_lock
check_own_lock({lock})
check_lock_progress({lock}, [1, 2, 3], rounds=2, time_limit_s=10, exclusion=False)
'''


def test_a_lock_that_reaches_the_librarys_lock_by_a_computed_name_fails_at_run_time():
    verdicts = _verdicts(LOCKS, LOCK_CELL.format(lock="FixedLock"),
                         LOCK_CELL.format(lock="HonestLock"))
    cheat = verdicts["t0"]
    assert not cheat["passed"]
    assert forbidden_name(cheat["message"]) == "cas_spin_lock", cheat["message"]
    assert verdicts["t1"]["passed"], verdicts["t1"]     # broken_lock's release still works
