"""What the checks ask of a student's object that lives in another process.

In a student's own notebook the checks get the student's functions themselves
and read their code. Under ``nbgrader autograde`` they never do: the trusted
checker holds a *stand-in* for each of the student's names, and the student's
code runs only in sandboxed processes behind it
(:mod:`collective_lib.autograde.remote` implements this interface). A check
cannot read a stand-in's code objects, so it asks the stand-in instead, through
the few methods below, and nothing else crosses from the checks to the
sandbox. This module is the whole of what the checks know about the other side.

Examples
--------
>>> class Recorded(StandIn):
...     kind = "function"
...     def __init__(self):
...         self.forbidden = []
...     def student_sources(self):
...         return ["def mine(x):\\n    return x\\n"]
...     def forbid(self, names):
...         self.forbidden.append(sorted(names))
...     def each_pe_apart(self):
...         return self
...     def replayer(self):
...         raise NotImplementedError
>>> is_stand_in(Recorded()), is_stand_in(print)
(True, False)
"""
from __future__ import annotations

import abc
from typing import Any, Iterable

__all__ = ["StandIn", "is_stand_in"]


class StandIn(abc.ABC):
    """A student's function, program, class or instance, running in another process.

    ``kind`` says which: ``"program"`` (a generator function, one instance per
    PE), ``"function"``, ``"class"``, ``"instance"``; a name the student's cells
    do not define is a stand-in too, whose every use fails with the reason.
    """

    kind: str

    @abc.abstractmethod
    def student_sources(self) -> list:
        """The source of the student's cells, as the notebook holds it (never as the
        student's process reports it), for the checks that read code."""

    @abc.abstractmethod
    def forbid(self, names: Iterable[str]) -> None:
        """From now to the end of the graded cell, run the student's code where the
        library's objects called ``names`` cannot run."""

    @abc.abstractmethod
    def each_pe_apart(self) -> Any:
        """The same program with every PE (every call, every instance) in a process of
        its own; also a context manager that stops those processes on exit."""

    @abc.abstractmethod
    def replayer(self) -> Any:
        """A :class:`~collective_lib.shared_memory.Replayer` of this class whose
        instances answer from the student's process, one request per event."""


def is_stand_in(obj: Any) -> bool:
    """Whether ``obj`` is a stand-in, whose code the checks cannot read."""
    return isinstance(obj, StandIn)
