"""A student's function replaced wherever the student's code holds it.

A later part of an exercise is graded with a function of the checks' own in the
place of a student's earlier one: the reference's, so that a slip is not paid
twice, or one that records its calls. Rebinding the name (``min_loc =
_counted``) reaches only code that looks the name up when it runs; code that
took the function when it was defined (a default argument ``op=min_loc``, a
saved reference, a ``functools.partial``) still called the student's own, and a
right answer lost its points ("combined only 0 pairs with min_loc").
:func:`forward_calls` makes the function object itself call the replacement,
however it is held, until the change is undone.

Only a plain Python function (``def`` or ``lambda``, not a generator function)
can be forwarded; anything else keeps being reached through its name only. In
the student's own notebook a test cell forwards the student's function itself;
under ``nbgrader autograde`` it holds a stand-in, for which this does nothing:
the student's process forwards the function it holds whenever the checker
rebinds its name (:mod:`collective_lib.autograde.student`).

>>> def double(x):
...     return 2 * x
>>> held = [double]                       # as a default argument or a partial would
>>> own = own_code(double)
>>> undo = forward_calls(double, lambda x: -x)
>>> held[0](3), own(3)
(-3, 6)
>>> undo()
>>> held[0](3)
6
"""
from __future__ import annotations

import inspect
import types
from typing import Any, Callable

__all__ = ["forward_calls", "own_code", "can_forward"]

# The keyword-only parameter whose default holds the replacement in a forwarded function.
_TARGET = "_collective_forwarded_to"
_NOT_PLAIN = (inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
              | inspect.CO_ITERABLE_COROUTINE)
_CODES: dict = {}


def can_forward(function: Any) -> bool:
    """Whether :func:`forward_calls` can reach every holder of ``function``."""
    return (type(function) is types.FunctionType
            and not function.__code__.co_flags & _NOT_PLAIN)


def _forwarding_code(free: int) -> types.CodeType:
    """The code of a function that calls its replacement, with ``free`` free variables
    (a function's code can only be swapped for one with as many as its closure)."""
    if free not in _CODES:
        cells = [f"_cell{i}" for i in range(free)]
        lines = ["def _outer():", *[f"    {cell} = None" for cell in cells],
                 f"    def forwarded(*args, {_TARGET}, **kwargs):"]
        if cells:
            lines += ["        if False:", f"            ({', '.join(cells)},)"]
        lines += [f"        return {_TARGET}(*args, **kwargs)", "    return forwarded"]
        namespace: dict = {}
        exec("\n".join(lines), namespace)
        code = namespace["_outer"]().__code__
        assert len(code.co_freevars) == free
        _CODES[free] = code
    return _CODES[free]


def own_code(function: Any) -> Any:
    """A copy of the Python function ``function`` that runs its own code, also while its
    calls are forwarded (take it before :func:`forward_calls`); anything else as it is."""
    if not can_forward(function):
        return function
    copy = types.FunctionType(function.__code__, function.__globals__, function.__name__,
                              function.__defaults__, function.__closure__)
    copy.__kwdefaults__ = dict(function.__kwdefaults__ or {}) or None
    copy.__dict__.update(function.__dict__)
    copy.__qualname__, copy.__module__ = function.__qualname__, function.__module__
    copy.__doc__, copy.__annotations__ = function.__doc__, dict(function.__annotations__)
    return copy


def forward_calls(function: Any, to: Callable) -> Callable[[], None]:
    """Make every call of ``function`` a call of ``to``, however the caller holds it
    (by its name, a default argument, a saved reference, a ``functools.partial``);
    returns the function that undoes it. Does nothing (and the undo neither) for
    anything but a plain Python function, a stand-in included."""
    if not can_forward(function) or function is to:
        return lambda: None
    saved = function.__code__, function.__defaults__, function.__kwdefaults__
    function.__code__ = _forwarding_code(len(function.__closure__ or ()))
    function.__defaults__ = None
    function.__kwdefaults__ = {_TARGET: to}

    def undo() -> None:
        function.__code__, function.__defaults__, function.__kwdefaults__ = saved
    return undo


_forwarding_code(0)         # made on import, before a student's process may be poisoned
