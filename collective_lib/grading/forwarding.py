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
can be forwarded itself. Anything else a student may hand in as a function (the
builtin ``min``, a function memoized with ``functools.lru_cache``, a partial)
:func:`forward_calls_in` replaces where the functions of the student's cells
hold it: their default arguments and closures. A test cell replaces a student's
function with :func:`replaced`, which does both and puts everything back after,
so the student's notebook (Validate) and ``nbgrader autograde`` grade alike.
Under ``nbgrader autograde`` the test cell holds a stand-in, for which this
does nothing: the student's process does the same to the function it holds
whenever the checker rebinds its name (:mod:`collective_lib.autograde.student`).

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

import contextlib
import inspect
import types
from typing import Any, Callable, Iterator

from .standins import is_stand_in

__all__ = ["forward_calls", "forward_calls_in", "replaced", "own_code", "can_forward"]

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


def _held_by(value: Any, namespace: dict) -> list:
    """The plain functions of the cells whose globals are ``namespace`` that ``value`` is
    or wraps (``functools.lru_cache``, ``functools.wraps``)."""
    found = []
    for _ in range(20):
        if type(value) is types.FunctionType and value.__globals__ is namespace:
            found.append(value)
        value = getattr(value, "__wrapped__", None)
        if value is None:
            break
    return found


def forward_calls_in(namespace: dict, function: Any, to: Callable) -> Callable[[], None]:
    """Make every call of ``function`` a call of ``to`` for the code of ``namespace`` (a
    notebook's globals); returns the function that undoes it.

    A plain Python function is forwarded itself (:func:`forward_calls`). Anything else
    (a builtin such as ``min``, a memoized function, a partial) cannot be: it is replaced
    where the functions defined in ``namespace`` hold it, in their default arguments
    and closures, so that ``def runner(values, op=min_loc)`` calls ``to`` too. Does
    nothing (and the undo neither) for a stand-in or for data.

    Examples
    --------
    >>> pick = min                            # a student's min_loc = min
    >>> def runner(a, b, op=pick):
    ...     return op(a, b)
    >>> undo = forward_calls_in(globals(), pick, lambda a, b: "replaced")
    >>> runner(1, 2)
    'replaced'
    >>> undo()
    >>> runner(1, 2)
    1
    """
    if can_forward(function):
        return forward_calls(function, to)
    if not callable(function) or is_stand_in(function) or function is to:
        return lambda: None             # data (None, 5) is no function of the student's
    changes: list = []                  # (object, attribute, value before)
    for value in list(namespace.values()):
        for holder in _held_by(value, namespace):
            if holder is to:
                continue
            defaults = holder.__defaults__ or ()
            if any(default is function for default in defaults):
                changes.append((holder, "__defaults__", holder.__defaults__))
                holder.__defaults__ = tuple(to if default is function else default
                                            for default in defaults)
            keywords = holder.__kwdefaults__ or {}
            if any(default is function for default in keywords.values()):
                changes.append((holder, "__kwdefaults__", holder.__kwdefaults__))
                holder.__kwdefaults__ = {key: to if default is function else default
                                         for key, default in keywords.items()}
            for cell in holder.__closure__ or ():
                try:
                    held = cell.cell_contents
                except ValueError:      # an empty cell
                    continue
                if held is function:
                    changes.append((cell, "cell_contents", held))
                    cell.cell_contents = to

    def undo() -> None:
        for obj, attribute, before in reversed(changes):
            setattr(obj, attribute, before)
    return undo


@contextlib.contextmanager
def replaced(namespace: dict, name: str, value: Callable) -> Iterator[Any]:
    """Within the ``with`` block, ``value`` stands under ``name`` in ``namespace`` (a test
    cell's ``globals()``), and the student's function that stood there calls ``value``
    wherever the student's code holds it (:func:`forward_calls_in`); after it, the
    student's own is back. Yields the student's own, which runs its own code.

    Examples
    --------
    >>> def simulated_sum(values):
    ...     return sum(values)
    >>> def difference(values, total=simulated_sum):
    ...     return total(values) - total(values[::-1])
    >>> with replaced(globals(), "simulated_sum", lambda values: values[0]) as own:
    ...     difference([1, 2, 3]), own([1, 2, 3])
    (-2, 6)
    >>> difference([1, 2, 3])
    0
    """
    if name not in namespace:
        raise NameError(f"name {name!r} is not defined")
    original = namespace[name]
    own = own_code(original)
    namespace[name] = value
    undo = forward_calls_in(namespace, original, value)
    try:
        yield own
    finally:
        undo()
        namespace[name] = original


_forwarding_code(0)         # made on import, before a student's process may be poisoned
