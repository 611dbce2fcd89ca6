"""Errors raised when a collective program misbehaves, under any backend, and where in the
student's code an exception comes from."""
from __future__ import annotations

import os
import sys
import traceback

__all__ = ["CommunicationError", "DeadlockError", "UnreceivedMessageError", "OperationLimitError",
           "student_line", "LIBRARY_DIR"]

#: The library's own directory: a frame in a file under it is not the student's.
LIBRARY_DIR = os.path.dirname(os.path.abspath(__file__))


def _machinery(filename: str) -> bool:
    """A frame of the library (also code it compiles at run time, named ``<collective_lib:
    ...>``, such as a forbidden function's stand-in) or of IPython's cell runner."""
    if filename.startswith(f"<{__name__.split('.')[0]}:"):
        return True
    path = os.path.abspath(filename)
    if path.startswith(LIBRARY_DIR + os.sep):
        return True
    ipython = sys.modules.get("IPython")           # loaded wherever its frames can be
    home = os.path.dirname(getattr(ipython, "__file__", "") or "")
    return bool(home) and path.startswith(home + os.sep)


def student_line(exc: BaseException) -> str:
    """Where the student's code raised ``exc``: ``"line 7 of my_func: `x = y / 0`"``, the
    innermost frame outside the library and IPython, or "" when there is none.

    An exception that crossed from a student's sandboxed process carries the line found
    there, as ``student_where``.

    >>> def my_func():
    ...     return 1 / 0
    >>> try:
    ...     my_func()
    ... except ZeroDivisionError as exc:
    ...     print(student_line(exc))
    line 2 of my_func: `return 1 / 0`
    """
    if getattr(exc, "student_where", ""):
        return exc.student_where
    for frame in reversed(traceback.extract_tb(exc.__traceback__)):
        if not _machinery(frame.filename):
            code = (frame.line or "").strip()
            return f"line {frame.lineno} of {frame.name}" + (f": `{code}`" if code else "")
    return ""


class CommunicationError(RuntimeError):
    """A program's communication cannot complete as written."""


class DeadlockError(CommunicationError):
    """No PE can proceed, but some still wait.

    ``blocked`` maps each waiting PE to a description of what it waits for.
    """

    def __init__(self, blocked: dict, time: float):
        self.blocked = dict(blocked)
        self.time = time
        lines = [f"  PE {pe}: {what}" for pe, what in sorted(self.blocked.items())]
        super().__init__(f"deadlock at time {time:g}: {len(self.blocked)} PE(s) wait forever\n"
                         + "\n".join(lines))


class UnreceivedMessageError(CommunicationError):
    """Every PE returned, but some messages were sent and never received.

    ``unreceived`` maps ``(src, dst)`` to the number of messages left over.
    """

    def __init__(self, unreceived: dict):
        self.unreceived = dict(unreceived)
        lines = [f"  {n} message(s) from PE {s} to PE {d} were never received"
                 for (s, d), n in sorted(self.unreceived.items())]
        super().__init__("messages were sent but never received (the receiving PE "
                         "returned without a matching recv):\n" + "\n".join(lines))


class OperationLimitError(CommunicationError):
    """The PEs together issued more operations than the run allows (an endless program?)."""
