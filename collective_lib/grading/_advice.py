"""What the checks share: running a student's code quietly, and putting what they
found into words (package-internal: the checks import it, nothing outside does)."""
from __future__ import annotations

import contextlib
import functools
import io
import os
import re
import textwrap
import warnings
from typing import Any

import numpy as np

from ..errors import LIBRARY_DIR, student_line

__all__ = ["quiet", "name_of", "explain_exception", "format_value", "same_value",
           "root_list", "in_library", "wrapped", "first_line"]

#: Longest line of a message: Validate cuts the lines of an error at 87 characters,
#: after four blanks of indentation (and, on the first line, the exception's name).
_WIDTH = 80

#: Longest code span a message quotes (a student's line of code): it must fit on a line
#: of its own, below an indented line.
_CODE_WIDTH = _WIDTH - 8

_CODE_SPAN = re.compile(r"`[^`\n]*`")

#: Longest word a message shows, broken over lines: a value's repr beyond it (700,000
#: commas, an int of 400 digits) is cut, since its start shows what it is.
_LONGEST_WORD = 3 * _WIDTH

_LONG_WORD = re.compile(r"[^\s\0]{%d,}" % (_LONGEST_WORD + 1))

# A line that ends a sentence, or opens what follows (a list, a trace, a schedule): the
# next line starts anew. Any other line of prose breaks a sentence by hand: what does not
# fit joins the next line of prose. An indented line is an item (a PE that waits, a step
# of a trace): its rest goes on its own lines.
_ENDS = (".", "!", "?", ":", ")")


def wrapped(text: str, name: str = "AssertionError") -> str:
    r"""``text`` with every line fitting the width Validate shows (:data:`_WIDTH`), the
    first after ``name + ": "`` (the exception's name, which IPython shows before it).

    A line that is too long is broken at blanks, the rest of it indented as it was;
    where a line of prose (not indented) breaks a sentence by hand, what does not fit
    joins the next line of prose, so a message written with its own breaks reads as one
    paragraph. Lines that fit
    (traces, schedules) are left as they are. A code span is never broken (one longer
    than :data:`_CODE_WIDTH` is cut), nor a run of words joined by ``"\0"``, which
    becomes a blank. A word longer than a line is broken, one longer than
    :data:`_LONGEST_WORD` first cut to that, ending in ``...``. Text that fits is returned
    unchanged: wrapping twice changes nothing.

    >>> print(wrapped("the time is measured on the runs that finish with messages "
    ...               "that carry\nthe whole vector"))
    the time is measured on the runs that finish with messages that
    carry the whole vector
    """
    text = _LONG_WORD.sub(lambda word: word.group()[:_LONGEST_WORD - 3] + "...",
                          _CODE_SPAN.sub(_held_span, text))
    lines, carry = [], ""
    source = text.split("\n")
    for number, line in enumerate(source):
        indent = _indent(line)
        if carry:
            line, carry = f"{indent}{carry} {line.lstrip()}", ""
        # the first line leaves room for the name (a blank per character)
        room = " " * (len(name) + 2) if number == 0 else ""
        if len(room + line) <= _WIDTH:
            lines.append(line)
            continue
        parts = textwrap.wrap(line, _WIDTH, initial_indent=room,
                              subsequent_indent=indent + "  " * bool(indent),
                              break_on_hyphens=False) or [line]
        parts[0] = parts[0][len(room):]
        following = source[number + 1] if number + 1 < len(source) else ""
        if (len(parts) > 1 and not indent and following.strip()
                and not line.endswith(_ENDS) and not _indent(following)):
            carry = " ".join(part.strip() for part in parts[1:])
            parts = parts[:1]
        lines += parts
    return "\n".join(lines).replace("\0", " ")


def first_line(text: str) -> str:
    r"""The first line of a message as it was written, before :func:`wrapped` broke it:
    its lines up to the first that ends a sentence or opens a list, joined.

    >>> first_line(wrapped("deadlock in ring for p=4: at simulated time 0 no PE can go "
    ...                    "on, but 4 PE(s) still wait:\n  PE 0 waits in recv(3)"))
    'deadlock in ring for p=4: at simulated time 0 no PE can go on, but 4 PE(s) still wait:'
    """
    lines = []
    for line in text.split("\n"):
        if lines and _indent(line):
            break
        lines.append(line.strip())
        if line.endswith(_ENDS):
            break
    return " ".join(lines)


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def _held_span(span: re.Match) -> str:
    r"""A code span with its blanks held (``"\0"``), cut to :data:`_CODE_WIDTH`."""
    code = span.group()
    if len(code) > _CODE_WIDTH:
        code = code[:_CODE_WIDTH - 4] + "...`"
    return code.replace(" ", "\0")


@contextlib.contextmanager
def quiet():
    """Swallow warnings and stderr output of the student's code (nbgrader zeroes a cell
    that writes to stderr)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with contextlib.redirect_stderr(io.StringIO()):
            yield


def name_of(func) -> str:
    """What a message calls ``func``."""
    if isinstance(func, functools.partial):
        return f"partial({name_of(func.func)})"
    return getattr(func, "__name__", None) or type(func).__name__


def explain_exception(exc: Exception, what: str) -> str:
    """A sentence about an exception raised while running ``what``."""
    text = str(exc).strip()
    notes = [n for n in getattr(exc, "__notes__", ()) if n]
    hint = ""
    if isinstance(exc, NotImplementedError):
        hint = ("\nHint: replace `raise NotImplementedError()` in the exercise cell with your "
                "code, then run that cell again.")
    elif isinstance(exc, TypeError) and "not a generator function" in text:
        hint = ("\nHint: an SPMD program must be a generator function: every PE yields its "
                "operations, e.g. `x = yield recv(src)` and `yield send(dst, x)`, "
                "and returns its result.")
    detail = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
    lines = [f"{what} raised {detail}"]
    lines += [f"  ({note})" for note in notes]
    frame = student_line(exc)
    if frame:
        lines.append(f"  at {frame}")
    return "\n".join(lines) + hint


def format_value(value: Any, limit: int = 120) -> str:
    """``value`` as a message shows it, cut to ``limit`` characters."""
    text = repr(value.tolist() if isinstance(value, np.ndarray) else value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def same_value(a: Any, b: Any) -> bool:
    """Equality that also works for numpy arrays and never raises."""
    try:
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return bool(np.array_equal(np.asarray(a, dtype=object), np.asarray(b, dtype=object)))
        return bool(a == b)
    except Exception:
        return False


def root_list(roots, p: int) -> list:
    """The ranks a check runs from: ``"all"``, a list (ranks outside 0..p-1 dropped) or a
    function of p."""
    if isinstance(roots, str):
        if roots != "all":
            raise ValueError(f'roots must be "all", a list of ranks or a function of p, got {roots!r}')
        return list(range(p))
    if callable(roots):
        chosen = roots(p)
    else:
        chosen = roots
    return sorted({r for r in chosen if 0 <= r < p})


def in_library(obj) -> bool:
    """Whether ``obj`` (a function, or a partial of one) is the library's own code."""
    func = getattr(obj, "func", obj)
    code = getattr(func, "__code__", None)
    if code is None:
        return False
    return os.path.abspath(code.co_filename).startswith(LIBRARY_DIR + os.sep)
