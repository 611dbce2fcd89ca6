"""Program listings for the book: a program's lines without its decorator and docstring.

A chapter that sets a program beside the pseudocode of its source shows the
lines that do the work; the ``@register(...)`` decorator and the docstring
are the library's, not the algorithm's.
"""
from __future__ import annotations

import ast
import inspect

__all__ = ["program_listing", "show_program"]


def program_listing(fn) -> str:
    """The source of the function ``fn`` without its decorators and docstring.

    >>> def double(x):
    ...     '''Twice x.'''
    ...     return 2 * x
    >>> print(program_listing(double))
    def double(x):
        return 2 * x
    """
    source = inspect.getsource(fn)
    node = ast.parse(source).body[0]
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise ValueError(f"program_listing needs a function, got {fn!r}")
    lines = source.splitlines()
    body = node.body
    has_docstring = (isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                     and isinstance(body[0].value.value, str))
    head = lines[node.lineno - 1:body[0].lineno - 1]
    rest = lines[body[0].end_lineno:] if has_docstring else lines[body[0].lineno - 1:]
    return "\n".join(head + rest)


def show_program(fn) -> None:
    """Print :func:`program_listing` of ``fn``."""
    print(program_listing(fn))
