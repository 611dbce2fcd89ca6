"""The trusted checker: runs a notebook's tests, never its student's code.

``TrustedVerdict`` (:mod:`.verdict`) starts this module as a process of its
own for each submitted notebook and sends it, on stdin, the notebook's code
cells with their roles, decided from the gradebook:

* ``trusted`` — a locked instructor cell (set-up, examples);
* ``graded`` — an autograded test cell, hidden tests included;
* ``student`` — everything else.

The checker starts a pristine student host (:mod:`.student`) with the cells a
student may see (all but the graded ones, of which only the imports of their visible
part, :func:`visible_imports`), then runs the trusted and graded
cells here, in order, in one namespace. A name a graded cell needs that no
instructor cell defines (anywhere in the notebook) and no earlier graded cell
defined is asked of the student's side and bound to a
stand-in (:mod:`.remote`): data is copied, functions, programs and classes
stay in sandboxed student processes. A graded cell passes if its whole source
ran here without an exception; its verdict, its output, the kind of its
failure (:data:`collective_lib.grading.KINDS`) and the flags raised for review
(:mod:`collective_lib.grading.review`) go back as JSON on stdout.

Whatever the student's cells do to their own interpreter cannot change a
verdict: this process runs none of their code, and takes from them only
decoded data.
"""
from __future__ import annotations

import ast
import builtins
import contextlib
import io
import json
import os
import signal
import socket
import symtable
import sys
import threading

from ..grading import CheckFailed, failure_kind, scaled_time_limits, take_review_flags
from ..grading.static import definitions
from .remote import CELLS_S, Host, Sandbox, StartFailed
from .variants import use_student

__all__ = ["check_notebook", "loaded_names", "global_reads", "defined_names",
           "visible_imports", "main", "TIME_SCALE"]

#: Factor on every real-time budget of the checks and on the time the student's cells get in
#: each new process (``TrustedVerdict.time_scale``): each step of a student's code crosses
#: to a sandboxed process and back.
TIME_SCALE = 1.5

_MAX_OUTPUT = 20_000
_MAX_MESSAGE = 4_000


def defined_names(source: str) -> set:
    """Names a cell binds at its top level (functions, classes, assignments, imports)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
    return names


def global_reads(source: str) -> set:
    """Names a cell reads from its globals and never assigns at its top level: read at
    the top level, or in a function or class body where they are not local (a
    function's parameters are not among them).

    >>> sorted(global_reads("def f(p, rng):\\n    return rng(p) + table\\nq = 1\\nf(q, w)"))
    ['table', 'w']
    """
    try:
        top = symtable.symtable(source, "<cell>", "exec")
    except (SyntaxError, ValueError):         # ValueError: a null byte in the source
        return set()
    names = {sym.get_name() for sym in top.get_symbols()
             if sym.is_referenced() and not (sym.is_assigned() or sym.is_imported())}
    inner = list(top.get_children())
    while inner:
        table = inner.pop()
        inner.extend(table.get_children())
        names |= {sym.get_name() for sym in table.get_symbols()
                  if sym.is_global() and sym.is_referenced() and not sym.is_assigned()}
    return names - {sym.get_name() for sym in top.get_symbols()
                    if sym.is_assigned() or sym.is_imported()}


def loaded_names(source: str) -> set:
    """Names a cell reads (candidates for the student's definitions)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    return {node.id for node in ast.walk(tree)
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)}


def visible_imports(source: str) -> str:
    """The imports at the top level of a test cell's visible part, as code that binds them.

    In the student's notebook a test cell runs after the answer cells above it, so a
    module its visible part imports (``import math``) is a name the student's functions
    may use from then on, though no cell of the student's imports it. The student's
    processes run this code where the test cell stands, so those functions work there
    as they did in the notebook. The hidden tests' lines are left out as nbgrader
    leaves them out of the release (a line naming ``BEGIN HIDDEN TESTS`` to one naming
    ``END HIDDEN TESTS``), and an import that fails (``_reference``, which the
    student's processes cannot see) binds nothing and is nobody's error.

    Parameters
    ----------
    source : str
        The test cell's source as the gradebook holds it, hidden tests included.

    Returns
    -------
    str
        Each import alone in a ``try`` that ignores its failure; ``""`` for none, or for
        a visible part that is not valid Python (its cell stops before any import).

    Examples
    --------
    >>> print(visible_imports("import math\\nfrom x import y as z\\n"
    ...                       "### BEGIN HIDDEN TESTS\\nimport secret\\n"
    ...                       "### END HIDDEN TESTS\\nassert f(2) == 3\\n"))
    try:
        import math
    except Exception:
        pass
    try:
        from x import y as z
    except Exception:
        pass
    <BLANKLINE>
    """
    visible, hidden = [], False
    for line in source.splitlines():
        if "BEGIN HIDDEN TESTS" in line:
            hidden = True
        elif "END HIDDEN TESTS" in line:
            hidden = False
        elif not hidden:
            visible.append(line)
    try:
        tree = ast.parse("\n".join(visible))
    except SyntaxError:
        return ""
    return "".join(f"try:\n    {ast.unparse(node)}\nexcept Exception:\n    pass\n"
                   for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom)))


class _CellTimeout(BaseException):
    """A graded cell ran longer than the checker allows one cell."""


_ARMED = {"now": False}                # whether a cell's deadline is in force


def _expire(signum, frame):
    if _ARMED["now"]:
        _ARMED["now"] = False
        raise _CellTimeout()


@contextlib.contextmanager
def _deadline(seconds: float):
    """Stop the main thread's work after ``seconds``.

    A timer thread sends the main thread SIGUSR1, whose handler is ours: the
    signal breaks a blocking wait for a student's answer. It is not SIGINT,
    which a checker may not be able to catch: a process started from a Jupyter
    kernel inherits SIGINT ignored. SIGALRM stays the grading library's. The
    handler stays installed and does nothing once disarmed, so a signal still
    on its way when the cell ends cannot stop the process.
    """
    signal.signal(signal.SIGUSR1, _expire)
    timer = threading.Timer(seconds, signal.pthread_kill,
                            (threading.main_thread().ident, signal.SIGUSR1))
    _ARMED["now"] = True
    timer.start()
    try:
        yield
    finally:
        _ARMED["now"] = False
        timer.cancel()


def _message(err: BaseException) -> str:
    """What the feedback says of a failed cell: a failed check's message as it is, any
    other error's wrapped alike (a test cell's own assert, a name the student's cells lack,
    a process that could not start)."""
    if isinstance(err, CheckFailed):
        text = str(err)
    elif isinstance(err, AssertionError):
        text = str(CheckFailed(str(err).strip() or "a check failed"))
    else:
        text = str(CheckFailed(f"{type(err).__name__}: {err}".strip()))
    return text[:_MAX_MESSAGE]


def check_notebook(job: dict) -> dict:
    """``{grade_id: {"passed", "output", "message", "flags", "kind"}}`` for the graded cells
    of ``job`` (``kind``: why a failed cell failed, :data:`collective_lib.grading.KINDS`).

    ``job`` holds ``cells`` (``[{"role", "source", "id"}]`` in notebook order),
    ``hide`` (folders the student's processes must not see), ``uid`` (the
    sandbox uid, or None for an unconfined run), ``limits`` and optionally
    ``reference_dir`` (the assignment's ``source/`` folder, whose
    ``_reference.py`` the hidden tests may import), ``cell_timeout_s``,
    ``time_scale`` (the factor on the checks' real-time budgets and on the time the
    student's cells get in each new process, :data:`TIME_SCALE`), ``scratch`` (a folder
    for the host's own, which the caller removes: see :class:`~.remote.Host`),
    ``template_fd`` (a socket to a :class:`~.remote.HostTemplate` that forks the
    student host; without it the host starts a template of its own) and ``student``
    (the id nbgrader grades the submission under: :mod:`.variants` then gives this
    student's values here and in the student's processes, whatever the notebook says).
    """
    cells = job["cells"]
    student = job.get("student")
    use_student(student)
    # the student's processes fix the same id before any cell of the notebook runs
    fixed = ([] if student is None else
             [f"import collective_lib.autograde.variants\n"
              f"collective_lib.autograde.variants.use_student({str(student)!r})"])
    if job.get("reference_dir"):
        sys.path.insert(0, job["reference_dir"])
    if job.get("cpu") is not None:      # see verdict.notebook_cpu: the host keeps to it too
        os.sched_setaffinity(0, {job["cpu"]})
    template = job.get("template_fd")
    scale = job.get("time_scale", TIME_SCALE)
    # what the student's notebook runs: every cell but the tests, and in each test cell's
    # place the imports of its visible part
    seen = [c["source"] if c["role"] != "graded" else visible_imports(c["source"])
            for c in cells]
    host = Host(fixed + [source for source in seen if source],
                job.get("hide", []), job.get("uid"), job.get("limits"), cpu=job.get("cpu"),
                template=None if template is None else socket.socket(fileno=template),
                cells_s=CELLS_S * scale, scratch=job.get("scratch"))
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    sandbox = Sandbox(host, namespace, [c["source"] for c in cells if c["role"] == "student"])
    # A name any instructor cell defines is never asked of the student, wherever the
    # student's cells stand and whatever they define.
    ours = set(dir(builtins)).union(*(defined_names(c["source"]) for c in cells
                                      if c["role"] == "trusted"))
    students = set(definitions(sandbox.sources))
    verdicts = {}
    try:
        with scaled_time_limits(scale):
            for cell in cells:
                if cell["role"] == "trusted":
                    _run(cell["source"], namespace)
                elif cell["role"] == "graded":
                    assigned = defined_names(cell["source"])
                    own = assigned - students
                    wanted = ((loaded_names(cell["source"]) | (assigned & students))
                              - ours - own - set(namespace))
                    ours |= own
                    verdicts[cell["id"]] = _grade(cell, namespace, sandbox,
                                                  job.get("cell_timeout_s", 600), wanted)
    finally:
        sandbox.end_cell()
        host.close()
    return verdicts


def _run(source: str, namespace: dict) -> tuple:
    """Run one cell here; ``(output, exception or None)``."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
            exec(compile(source, "<cell>", "exec"), namespace)
        return out.getvalue(), None
    except _CellTimeout:
        raise
    except BaseException as err:    # SystemExit too: it ends a cell, never the checker
        return out.getvalue(), err


def _grade(cell: dict, namespace: dict, sandbox: Sandbox, timeout_s: float,
           wanted: set) -> dict:
    """The verdict of one graded cell, after binding the names ``wanted`` from the
    student's cells: whatever fails in either is this cell's failure, not the notebook's."""
    take_review_flags()
    try:
        with _deadline(timeout_s):
            try:
                namespace.update(sandbox.bind(sorted(wanted), global_reads(cell["source"])))
            except Exception as error:         # whatever the student's process sent
                output, err = "", error
            else:
                output, err = _run(cell["source"], namespace)
    except _CellTimeout:
        output, err = "", CheckFailed(
            f"the checks of this cell took longer than {timeout_s:g} s and were stopped",
            "time_limit")
    finally:
        sandbox.end_cell()
        # a guard stopped in its exit by the cell deadline would still be armed: no alarm
        # of this cell may interrupt the next one
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
    return {"passed": err is None, "output": output[-_MAX_OUTPUT:],
            "message": "" if err is None else _message(err), "flags": take_review_flags(),
            "kind": None if err is None else _kind(err)}


def _kind(err: BaseException) -> str:
    """Why a cell failed, from :data:`collective_lib.grading.KINDS`: ``"not_run"`` when the
    student's cells could not be run (also where a check explained that as an exception),
    ``"missing_name"`` for a name the student's cells do not define, else the failed check's
    kind (``"other"`` for a plain assert)."""
    cause, seen = err, 0
    while cause is not None and seen < 8:
        if isinstance(cause, StartFailed):
            return "not_run"
        cause, seen = cause.__context__, seen + 1
    return "missing_name" if isinstance(err, NameError) else failure_kind(err)


def main() -> None:
    job = json.load(sys.stdin)
    real_stdout = os.fdopen(os.dup(1), "w")
    sys.stdout = sys.stderr = io.StringIO()      # nothing but the verdicts on stdout
    os.environ.setdefault("MPLBACKEND", "Agg")
    try:
        verdicts = {"verdicts": check_notebook(job)}
    except BaseException as err:                  # the checker itself failed
        verdicts = {"error": f"{type(err).__name__}: {err}"}
    json.dump(verdicts, real_stdout)
    real_stdout.close()


if __name__ == "__main__":
    main()
