"""A student process in which the library code an exercise forbids cannot run.

When a test cell forbids library functions (``forbid_library_calls``,
``forbid_library_execution``), the student processes of the rest of that cell
are forked with those names (:meth:`.remote.Sandbox.forbid`), and
:func:`poison` runs in each of them after the sandbox is entered and before the
student's cells run. Reading a student's cells for names cannot see a lookup by
computed name (``getattr``, ``operator.attrgetter``, ``__getattribute__``,
``inspect.getmembers``, ``gc.get_objects()``, ``sys._getframe().f_globals``,
``pydoc.locate``...). Here the spelling does not matter: the code itself is
changed, and every way to re-create it is guarded.

1. **The objects are poisoned, not their names.** Every function behind a
   forbidden name (in any module of the package, imported already or not, or in
   the catalog; following ``__wrapped__``, ``functools.partial``, bound,
   static and class methods and a class's own methods) gets a new ``__code__``
   that raises a ``RuntimeError`` saying :data:`FORBIDDEN` and the name; so
   does every other function object with the same code. However a program
   reaches such a function (an alias, a registry, a closure, the garbage
   collector, a frame's globals), calling it raises. The original code objects
   are then unreachable (only their fingerprints are kept), the package's
   ``lru_cache`` results and ``linecache`` are emptied: no result or source
   text computed before the fork is left.

2. **Re-creating the code is refused** by an audit hook
   (:func:`sys.addaudithook`, which cannot be removed; see :func:`_hook` for
   why rebinding builtins or module names cannot switch it off either), with a
   ``PermissionError`` saying :data:`FORBIDDEN` and a name:

   * opening the source or bytecode files of the modules that define the
     forbidden functions, however the path is spelled (files are compared by
     device and inode, after links and ``/proc/self/fd``): so
     ``importlib.reload``, re-importing, ``exec(open(...).read())`` and
     ``inspect.getsource`` fail. So that a path names the same file when the
     hook looks and when it is opened, making links, changing the working
     folder, opening a folder (its descriptor would let ``dir_fd`` reach a
     file unseen) and opening by an object's ``__fspath__`` are refused too;
     so is writing to ``/proc`` (``/proc/self/mem``);
   * running code with a forbidden function's bytecode and names (its
     :func:`fingerprint`, for code of at least ``_DISTINCTIVE_BYTES``) or, for
     long code, its bytecode alone: checked where code starts to run, ``exec``
     (and every code object it holds: a module, a class, a cell), building a
     function (``types.FunctionType``) and assigning ``__code__``. A copy
     compiled from the source under another name or a ``marshal`` round trip
     is refused; so is making code objects (``types.CodeType``,
     ``code.replace``), which could change a copy's names;
   * starting a process or an interpreter, which would run without this hook:
     ``subprocess``, ``os.system``, ``os.exec*``, ``os.posix_spawn``,
     ``os.fork``, ``os.forkpty``, sub-interpreters, and the unaudited
     ``_posixsubprocess.fork_exec`` (rebound wherever it is held; its module
     cannot be imported again);
   * ``ctypes`` (it could remove the hook or patch memory), modules that read
     files or call C without an audit event (``readline``, ``cffi``,
     ``_tkinter``, ``_testcapi``...), and tracing, profiling and other threads'
     frames (a trace function could rewrite the hook's locals).

   Behind the hook, where the kernel allows it, a seccomp filter makes
   ``fork``, ``vfork``, ``clone`` without ``CLONE_THREAD`` and ``execve`` fail
   for this process whatever calls them (threads still start).

:func:`~collective_lib.grading.forbidden.forbidden_name` reads the name back from a
message. Honest work is unaffected: the student's cells compile and run (only code
with a forbidden function's fingerprint is refused, and code under
``_DISTINCTIVE_BYTES`` never is), numpy and threads work, and the student's own
files open as usual.

What this does not cover: the library's source text found elsewhere on the
machine (a copy of the repository) and compiled with changes, which is a copy
of the library's code for the similarity review to flag; native code that reads
files or starts processes without an audit event, in a module already loaded
that is not in ``_NATIVE_FUNCTIONS`` (the seccomp filter still stops the
processes); and a code object built by hand from a ``marshal`` stream with a
medium-sized function's bytecode under other global names (its bytecode is
nowhere to copy from: the originals are gone).
"""
from __future__ import annotations

import functools
import gc
import inspect
import linecache
import os
import sys
import types

from ..errors import LIBRARY_DIR
from ..grading.forbidden import FORBIDDEN, fingerprint, library_definitions

_PACKAGE = __name__.split(".")[0]

__all__ = ["poison", "prepare"]

# Code of at least _DISTINCTIVE_BYTES (20 code units, instructions and their caches) is
# compared by its fingerprint, bytecode and global names; smaller code looks alike
# whoever writes it (``return i ^ (i >> 1)``). Code of at least _LONG_BYTES is compared
# by its bytecode alone: that much identical bytecode is a copy, whatever its globals
# are called (a medium-sized function can be rewritten with other helper names).
_DISTINCTIVE_BYTES = 40
_LONG_BYTES = 200

# Modules that run native code or read files without an audit event: not imported again.
_NATIVE = frozenset({"_posixsubprocess", "_ctypes", "ctypes", "_cffi_backend", "cffi",
                     "readline", "_tkinter", "tkinter", "_testcapi", "_testinternalcapi",
                     "_testmultiphase", "_testbuffer", "_testimportmultiple", "_testclinic",
                     "_xxsubinterpreters", "_xxinterpchannels", "_xxtestfuzz"})
_PROCESS_EVENTS = frozenset({"subprocess.Popen", "os.system", "os.exec", "os.posix_spawn",
                             "os.spawn", "os.fork", "os.forkpty", "os.startfile",
                             "pty.spawn", "cpython.PyInterpreterState_New"})
# Functions of native modules already loaded that start processes or read files unaudited.
_NATIVE_FUNCTIONS = (("_posixsubprocess", "fork_exec"), ("readline", "read_history_file"),
                     ("readline", "read_init_file"), ("readline", "append_history_file"))


def _package_modules() -> list:
    return [module for name, module in list(sys.modules.items())
            if module is not None and (name == _PACKAGE or name.startswith(_PACKAGE + "."))]


def _in_package(func: types.FunctionType) -> bool:
    """A function of the library (not of the grading machinery this process runs on)."""
    path = os.path.abspath(func.__code__.co_filename)
    return (path.startswith(LIBRARY_DIR + os.sep)
            and not path.startswith(os.path.dirname(os.path.abspath(__file__)) + os.sep))


def _targets(names: set) -> tuple:
    """``([(object, name)], {name: (module, ...)})``: what the library calls ``names``, in
    its modules and its catalog, and where the names not found in a module already
    imported are defined (those modules are imported here)."""
    try:
        from collective_lib.catalog import catalog
        entries = catalog()
    except Exception:
        entries = {}

    def look() -> list:
        found = [(entries[name].program, name) for name in sorted(names) if name in entries]
        for module in _package_modules():
            space = getattr(module, "__dict__", {})
            for name in sorted(names):
                if name in space and not isinstance(space[name], types.ModuleType):
                    found.append((space[name], name))
        return found

    found = look()
    elsewhere = library_definitions(names - {name for _, name in found})
    for modules in elsewhere.values():
        for module in modules:
            if module not in sys.modules:
                try:
                    __import__(module)
                except Exception:       # its files are refused all the same
                    pass
    return (look() if elsewhere else found), elsewhere


def _functions(obj, limit: int = 200) -> list:
    """The Python functions behind ``obj``: itself, what it wraps, a class's methods.

    An ``lru_cache`` met on the way is emptied (its results came from the code).
    """
    todo, seen, found = [obj], set(), []
    while todo and len(seen) < limit:
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, types.FunctionType):
            found.append(item)
        elif isinstance(item, functools.partial):
            todo.append(item.func)
        elif isinstance(item, (types.MethodType, staticmethod, classmethod)):
            todo.append(item.__func__)
        elif isinstance(item, property):
            todo.extend(f for f in (item.fget, item.fset, item.fdel) if f is not None)
        elif isinstance(item, type):
            todo.extend(value for value in vars(item).values()
                        if isinstance(value, (types.FunctionType, staticmethod, classmethod,
                                              property)))
        if not isinstance(item, type):
            clear = getattr(item, "cache_clear", None)
            if callable(clear) and hasattr(item, "cache_info"):
                clear()
            wrapped = getattr(item, "__wrapped__", None)
            if wrapped is not None:
                todo.append(wrapped)
    return found


def _inherited_by_others(forbidden: set) -> set:
    """The ids of the functions that a library class not in ``forbidden`` (ids) inherits
    from one that is.

    Such a function stays: the student may reach it through the class that is allowed
    (``broken_lock``, handed out by an exercise, inherits ``release`` from the forbidden
    ``cas_spin_lock``), so poisoning it would break what the exercise gives, and refuse
    nothing the student cannot have.
    """
    kept = set()
    for module in _package_modules():
        for value in list(getattr(module, "__dict__", {}).values()):
            if not isinstance(value, type) or id(value) in forbidden or \
                    getattr(value, "__module__", "").split(".")[0] != _PACKAGE:
                continue
            for base in value.__mro__[1:]:
                if id(base) in forbidden:
                    kept.update(id(func) for func in _functions(base)
                                if _resolves_to(value, func))
    return kept


def _resolves_to(cls: type, func: types.FunctionType) -> bool:
    """Whether ``cls`` reaches ``func`` by one of its attributes (its own or inherited)."""
    for name in dir(cls):
        try:
            attr = inspect.getattr_static(cls, name)
        except AttributeError:
            continue
        if isinstance(attr, (staticmethod, classmethod)):
            attr = attr.__func__
        if attr is func:
            return True
    return False


# -- the poisoned code -------------------------------------------------------------------

def _raiser(name: str, free: int) -> types.CodeType:
    """Code that raises FORBIDDEN for ``name``, with ``free`` free variables (so that it
    can replace the code of a closure)."""
    cells = [f"cell{i}" for i in range(free)]
    message = f"{FORBIDDEN} `{name}`, which was called here instead of your own code"
    source = "def outer():\n"
    source += "".join(f"    {cell} = None\n" for cell in cells)
    source += "    def forbidden(*args, **kwargs):\n"
    source += f"        raise RuntimeError({message!r})\n"
    if cells:                          # never run: it makes the cells free variables
        source += f"        return ({', '.join(cells)},)\n"
    source += "    return forbidden\n"
    space: dict = {}
    # a file name that says whose it is (a student's error points at the student's line)
    exec(compile(source, f"<{_PACKAGE}: the library's {name}, forbidden>", "exec"), space)
    code = space["outer"]().__code__
    assert len(code.co_freevars) == free
    return code


def _source_files(filename: str) -> list:
    """A module's source file and its compiled forms in ``__pycache__``."""
    path = os.path.abspath(filename)
    folder, base = os.path.split(path)
    stem = os.path.splitext(base)[0]
    files = [path]
    cache = os.path.join(folder, "__pycache__")
    try:
        files += [os.path.join(cache, f) for f in os.listdir(cache)
                  if f.startswith(stem + ".") and f.endswith(".pyc")]
    except OSError:
        pass
    return files


_PROTECTED_ATTRIBUTES = ("__code__", "__defaults__", "__kwdefaults__")
_REFUSED_EVENTS = {   # event: what the refusal says
    "code.__new__": "code objects cannot be made here (code.__new__, code.replace)",
    "os.symlink": "links cannot be made here",
    "os.link": "links cannot be made here",
    "os.chdir": "the working folder cannot change here",
    # a trace or profile function could rewrite this hook's locals or jump over a refusal
    # (if the hook's __cantrace__ were set), and other threads' frames are the hook's too
    "sys.settrace": "tracing is not available here",
    "sys.setprofile": "profiling is not available here",
    "sys._current_frames": "other threads' frames are not available here",
    "sqlite3.enable_load_extension": "native extensions cannot be loaded here",
    "sqlite3.load_extension": "native extensions cannot be loaded here",
    **{event: f"no process or interpreter can start here ({event}): it would run without "
              "this guard" for event in _PROCESS_EVENTS},
}


def _hook(prints: dict, long: dict, files: dict, who: str):
    """The audit hook: a function that uses neither globals, builtins nor a closure.

    Everything it needs is a default argument, held in an immutable tuple of immutable
    objects (builtin functions and types, frozensets, tuples, strings), and it refuses
    any change of its own ``__code__`` or defaults: rebinding ``builtins.isinstance``,
    a module's names or a closure cell, or emptying a dict found with ``gc``, cannot
    switch it off. Its checks:

    * ``exec``, ``function.__new__`` and assigning ``__code__``: the code and every code
      object among its constants are compared with the forbidden functions' code (the
      same :func:`fingerprint`, or for long code the same bytecode);
    * ``open``: a forbidden module's files (by device and inode, after links), a folder
      (a descriptor for ``dir_fd``), writing to ``/proc``, and a path given as an object
      (its ``__fspath__`` could answer this hook differently from ``open``);
    * ``import`` of the modules in ``_NATIVE``, ``ctypes.*`` and the events of
      ``_REFUSED_EVENTS``: refused.

    Links and a change of working folder are refused, so that a path names the same file
    when this hook looks at it and when it is opened.
    """
    def _forbidden_guard(event, args,
                         _prints=frozenset(prints), _printed=tuple(prints.items()),
                         _long=frozenset(long), _longs=tuple(long.items()),
                         _files=frozenset(files), _filed=tuple(files.items()),
                         _refused=tuple(_REFUSED_EVENTS.items()),
                         _refused_events=frozenset(_REFUSED_EVENTS), _native=_NATIVE,
                         _protected=_PROTECTED_ATTRIBUTES, _who=who, _forbidden=FORBIDDEN,
                         _distinctive=_DISTINCTIVE_BYTES, _long_bytes=_LONG_BYTES,
                         _proc=_identity("/proc"),
                         _writing=os.O_WRONLY | os.O_RDWR, _stat=os.stat, _type=type,
                         _len=len, _issubclass=issubclass, _str=str, _bytes=bytes, _int=int,
                         _code=types.CodeType, _function=types.FunctionType,
                         _error=PermissionError, _os_error=OSError, _value_error=ValueError,
                         _type_error=TypeError, _me=("_forbidden_guard", __file__)):
        if event == "exec" or event == "function.__new__" or event == "object.__setattr__" \
                or event == "object.__delattr__":
            if event[:7] == "object.":
                if _len(args) < 2 or args[1] not in _protected:
                    return
                target = args[0]
                if _type(target) is _function and (target.__code__.co_name,
                                                   target.__code__.co_filename) == _me:
                    raise _error(f"{_forbidden} {_who}: this process's guard cannot change")
                if event == "object.__delattr__" or args[1] != "__code__" or _len(args) < 3:
                    return
                todo = [args[2]]
            else:
                todo = [args[0]] if args else []
            while todo:
                item = todo.pop()
                if _type(item) is not _code:
                    continue
                name = None
                size = _len(item.co_code)
                if size >= _distinctive:
                    print_ = (item.co_code, item.co_names)
                    if print_ in _prints:
                        for known, label in _printed:
                            if known == print_:
                                name = label
                    elif size >= _long_bytes and print_[0] in _long:
                        for known, label in _longs:
                            if known == print_[0]:
                                name = label
                if name is not None:
                    how = "assigned to __code__" if event[:7] == "object." else event
                    raise _error(f"{_forbidden} `{name}`: a copy of its code cannot run here "
                                 f"({how})")
                todo.extend(item.co_consts)
        elif event == "open":
            path = args[0] if args else None
            kind = _type(path)                  # (isinstance would believe a __class__)
            if path is None or _issubclass(kind, _int):
                return
            if not _issubclass(kind, (_str, _bytes)):
                raise _error(f"{_forbidden} {_who}: open files here by their name, a str, "
                             f"not a {kind.__name__}")
            try:
                st = _stat(path)
            except (_os_error, _value_error, _type_error):
                return                  # nothing there (yet): nothing of the library's
            key = (st.st_dev, st.st_ino)
            if key in _files:
                for known, label in _filed:
                    if known == key:
                        raise _error(f"{_forbidden} `{label}`: its module's files cannot be "
                                     f"read here ({path!r})")
            if st.st_mode & 0o170000 == 0o040000:
                raise _error(f"{_forbidden} {_who}: a folder cannot be opened here ({path!r}); "
                             "list it with os.listdir")
            flags = args[2] if _len(args) > 2 else 0
            if _proc is not None and st.st_dev == _proc[0] and _type(flags) is _int \
                    and flags & _writing:
                raise _error(f"{_forbidden} {_who}: /proc cannot be written here ({path!r})")
        elif event == "import":
            module = args[0] if args else ""
            if _type(module) is _str and (module in _native
                                              or module.split(".")[0] in _native):
                raise _error(f"{_forbidden} {_who}: the module {module} is not available here")
        elif event in _refused_events:
            for known, what in _refused:
                if known == event:
                    raise _error(f"{_forbidden} {_who}: {what}")
        elif event[:7] == "ctypes.":
            raise _error(f"{_forbidden} {_who}: ctypes is not available here ({event})")

    return _forbidden_guard


def _identity(path: str):
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino)


def _protect(files: dict, filename: str, name: str) -> None:
    """Refuse to open ``filename`` (a module's source) and its compiled forms."""
    for path in _source_files(filename):
        key = _identity(path)
        if key is not None:
            files.setdefault(key, name)


def _who(names: list) -> str:
    shown = ", ".join(f"`{n}`" for n in names[:3])
    return shown + (f" and {len(names) - 3} more" if len(names) > 3 else "")


# -- poisoning -----------------------------------------------------------------------------

def poison(names, own_sources=()) -> None:
    """Make this process one where the library's ``names`` cannot run (see the module's note).

    Call it once, before any student code runs; it cannot be undone. ``own_sources``
    are the student's cells as they will run: code written in them is the student's
    own text, which the static likeness review judges, so it is never refused for
    having the same bytecode as a library function (a short canonical lock or Gray
    code is often written the library's way).
    """
    names = tuple(sorted({str(n) for n in names}))
    if not names:
        return
    plan = _PREPARED.get(names) or _Plan(names)
    for generator in plan.suspended:
        generator.close()
    for holder, key, module_name, attr in plan.holders:
        holder[key] = _refusal(list(names), f"{module_name}.{attr}")
    own = _own_code(own_sources)
    own_bytecode = {c for c, _ in own}
    prints: dict = {}
    long: dict = {}
    for code, name in plan.codes.items():
        if len(code.co_code) >= _DISTINCTIVE_BYTES and fingerprint(code) not in own:
            prints.setdefault(fingerprint(code), name)
        if len(code.co_code) >= _LONG_BYTES and code.co_code not in own_bytecode:
            long.setdefault(code.co_code, name)
    for func, name in plan.victims.values():
        func.__code__ = plan.raisers[name, len(func.__code__.co_freevars)]
    # Once this returns nothing keeps the original code objects (the hook keeps their
    # fingerprints): no walk of the garbage collector's objects finds one to copy. The
    # plans the host prepared hold them too.
    plan.codes.clear()
    _PREPARED.clear()
    _forget_results()
    _no_new_processes()
    sys.addaudithook(_hook(prints, long, plan.files, _who(list(names))))


class _Plan:
    """What :func:`poison` of ``names`` changes in this process: every step that only looks.

    ``victims`` (id -> (function, name)): the functions whose code is replaced by
    ``raisers[name, free variables]``; ``codes``: their original code objects;
    ``suspended``: generators running such code; ``holders``: ``(dict, key, module,
    attribute)`` where a native function that starts processes is held; ``files``:
    the identities of the source and compiled files to refuse.
    """

    def __init__(self, names: tuple):
        targets, elsewhere = _targets(set(names))
        handed_out = _inherited_by_others({id(obj) for obj, _ in targets})
        self.victims: dict = {}
        for obj, name in targets:
            try:
                functions = _functions(obj)
            except Exception:               # an odd object: its functions stay as they are
                continue
            for func in functions:
                if _in_package(func) and id(func) not in handed_out:
                    self.victims.setdefault(id(func), (func, name))
        self.codes: dict = {}
        for func, name in self.victims.values():
            self.codes.setdefault(func.__code__, name)
        natives = {}
        for module_name, attr in _NATIVE_FUNCTIONS:
            original = getattr(sys.modules.get(module_name), attr, None)
            if original is not None:
                natives[id(original)] = (module_name, attr, original)
        # One pass of the garbage collector's view: other functions with the same code (made
        # by a factory, or copied), suspended runs of it, and whatever holds a native
        # function.
        self.suspended, self.holders = [], []
        wanted = list(self.codes) + [original for _, _, original in natives.values()]
        for holder in gc.get_referrers(*wanted) if wanted else ():
            if isinstance(holder, types.FunctionType) and holder.__code__ in self.codes:
                self.victims.setdefault(id(holder), (holder, self.codes[holder.__code__]))
            elif isinstance(holder, types.GeneratorType) and holder.gi_code in self.codes:
                self.suspended.append(holder)
            elif isinstance(holder, dict):
                self.holders.extend(
                    (holder, key, *natives[id(value)][:2]) for key, value in list(holder.items())
                    if id(value) in natives and value is natives[id(value)][2])
        self.files: dict = {}
        for code, name in self.codes.items():
            _protect(self.files, code.co_filename, name)
        for name, modules in elsewhere.items():
            for module in modules:
                found = sys.modules.get(module)
                _protect(self.files, getattr(found, "__file__", None) or os.path.join(
                    os.path.dirname(LIBRARY_DIR), *module.split(".")) + ".py", name)
        self.raisers: dict = {}
        for func, name in self.victims.values():
            free = len(func.__code__.co_freevars)
            if (name, free) not in self.raisers:
                self.raisers[name, free] = _raiser(name, free)


# What prepare() looked up in the host before it forked this process: the same objects here.
_PREPARED: dict = {}        # sorted names -> _Plan


def prepare(names) -> None:
    """Look up now what :func:`poison` of ``names`` will change, for the processes forked
    from this one after it (some 30 ms that each of them no longer spends).

    Only for a process that never runs a student's code (the student host, which
    forks every student process and runs nothing between a fork and the poisoning
    but the sandbox's own set-up): what it finds are its own pristine objects, and a
    forked process holds the very same ones. The changes themselves are made by
    :func:`poison` in the forked process.
    """
    key = tuple(sorted({str(n) for n in names}))
    if key and key not in _PREPARED:
        _PREPARED[key] = _Plan(key)


def _own_code(sources) -> set:
    """The fingerprints of every code object written in the cells ``sources``."""
    found = set()
    for source in sources:
        try:
            todo = [compile(source, "<cell>", "exec")]
        except (SyntaxError, ValueError):     # IPython syntax: its own run reports it
            continue
        while todo:
            code = todo.pop()
            found.add(fingerprint(code))
            todo.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return found


def _refusal(names: list, what: str):
    message = f"{FORBIDDEN} {_who(names)}: {what} is not available here"

    def refused(*args, **kwargs):
        raise PermissionError(message)
    return refused


def _forget_results() -> None:
    """Empty what could hold results or source text computed before the fork."""
    linecache.clearcache()
    for module in _package_modules():
        for value in list(getattr(module, "__dict__", {}).values()):
            clear = getattr(value, "cache_clear", None) if not isinstance(value, type) else None
            if callable(clear) and hasattr(value, "cache_info"):
                try:
                    clear()
                except Exception:
                    pass


# -- seccomp: no new process, whoever asks -------------------------------------------------

_SECCOMP = {   # machine: (AUDIT_ARCH, {syscall: number})
    "x86_64": (0xC000003E, {"clone": 56, "fork": 57, "vfork": 58, "execve": 59,
                            "execveat": 322, "clone3": 435}),
    "aarch64": (0xC00000B7, {"clone": 220, "execve": 221, "execveat": 281, "clone3": 435}),
}


def _no_new_processes() -> bool:
    """A seccomp filter on this process: fork, vfork, clone without CLONE_THREAD, execve
    and execveat fail with EPERM, clone3 with ENOSYS (so that threads fall back to clone).
    False where the kernel or the machine does not allow it (the audit hook still refuses
    every audited way)."""
    import ctypes
    import errno
    import platform
    import struct
    arch = _SECCOMP.get(platform.machine())
    if arch is None:
        return False
    audit_arch, numbers = arch
    load, jeq, jset, jge, ret = 0x20, 0x15, 0x45, 0x35, 0x06
    allow, deny = 0x7FFF0000, 0x00050000 | errno.EPERM
    nosys = 0x00050000 | errno.ENOSYS
    clone_thread = 0x00010000
    denied = [numbers[n] for n in ("fork", "vfork", "execve", "execveat") if n in numbers]
    prog = [(load, 0, 0, 4),                    # A = the ABI
            (jeq, 1, 0, audit_arch),
            (ret, 0, 0, deny),                  # another ABI (i386 on x86_64): refuse all
            (load, 0, 0, 0),                    # A = the syscall's number
            (jge, 0, 1, 0x40000000),            # x32 numbers
            (ret, 0, 0, deny)]
    for number in denied:
        prog += [(jeq, 0, 1, number), (ret, 0, 0, deny)]
    prog += [(jeq, 0, 1, numbers["clone3"]), (ret, 0, 0, nosys),
             (jeq, 0, 4, numbers["clone"]),     # not clone: to the last instruction
             (load, 0, 0, 16),                  # A = the low word of clone's flags
             (jset, 0, 1, clone_thread),
             (ret, 0, 0, allow),                # a thread
             (ret, 0, 0, deny),                 # a process
             (ret, 0, 0, allow)]                # any other syscall
    code = b"".join(struct.pack("HBBI", *instruction) for instruction in prog)
    buffer = ctypes.create_string_buffer(code)
    fprog = struct.pack("HxxxxxxP", len(prog), ctypes.addressof(buffer))
    fprog_buffer = ctypes.create_string_buffer(fprog)
    prctl = ctypes.CDLL(None, use_errno=True).prctl
    prctl.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4
    if prctl(38, 1, 0, 0, 0) != 0:                        # PR_SET_NO_NEW_PRIVS
        return False
    return prctl(22, 2, ctypes.addressof(fprog_buffer), 0, 0) == 0   # PR_SET_SECCOMP, filter
