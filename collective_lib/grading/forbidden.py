"""Which library objects a name means, and how a refusal names them.

An exercise may forbid library functions by name (``forbid_library_calls``,
``forbid_library_execution``). The checks of :mod:`.library` and the poisoning
of a student process (:mod:`collective_lib.autograde.poison`, on the other
side of the trust boundary) both need to know what the library calls by a
name, including modules not imported yet, and both say :data:`FORBIDDEN`
followed by the name when they refuse; :func:`forbidden_name` reads it back.

Examples
--------
>>> library_definitions(["binomial_broadcast", "not_a_library_name"])
{'binomial_broadcast': ('collective_lib.algorithms.broadcast',)}
>>> forbidden_name(f"{FORBIDDEN} `gray`, which was called here")
'gray'
"""
from __future__ import annotations

import functools
import os
import re
import types

from ..errors import LIBRARY_DIR

__all__ = ["FORBIDDEN", "forbidden_name", "forbidden_detail", "library_definitions",
           "fingerprint"]

# What a poisoned function or a refusal says, followed by a forbidden name in backticks.
FORBIDDEN = "this exercise does not allow the library's"



def fingerprint(code: types.CodeType) -> tuple:
    """What two code objects share when one is the other compiled again under any name."""
    return (code.co_code, code.co_names)


def forbidden_name(text: str) -> str | None:
    """The forbidden name a message of this module gives, or None (also in a message
    whose lines were broken to fit Validate's width)."""
    text = " ".join(text.split())
    if FORBIDDEN not in text:
        return None
    match = re.search(re.escape(FORBIDDEN) + r" `([^`]+)`", text)
    return match.group(1) if match else None


def forbidden_detail(text: str) -> str | None:
    r"""What a message of this module says after :data:`FORBIDDEN`, in one line, or None:
    the lines of the refusal, which wrapping may have broken, up to the first indented
    line (a note or the student's line that follows it).

    >>> forbidden_detail(f"f(3) raised RuntimeError: {FORBIDDEN} `gray`, which was\n"
    ...                  "called here\n  at line 2 of f: `return gray(i)`")
    '`gray`, which was called here'
    """
    words = r"\s+".join(map(re.escape, FORBIDDEN.split()))
    match = re.search(words + r"\s(.*?)(?=\n\s|\Z)", text, re.S)
    return " ".join(match.group(1).split()) if match else None


def library_definitions(names) -> dict:
    """``{name: (module, ...)}``: the package's modules that define each of ``names`` at
    their top level (a function, class, assignment or ``import ... as name``), read from
    the source files, so that modules not imported yet count too. Names the library does
    not define are left out."""
    return dict(_scan(tuple(sorted({str(n) for n in names}))))


@functools.lru_cache(maxsize=64)
def _scan(names: tuple) -> tuple:
    if not names:
        return ()
    alternatives = "|".join(re.escape(n) for n in names)
    pattern = re.compile(rf"^(?:async[ \t]+def|def|class)[ \t]+({alternatives})\b"
                         rf"|^({alternatives})[ \t]*(?::[^=\n]*)?=(?!=)"
                         rf"|^(?:from[ \t]+[\w.]+[ \t]+)?import[ \t][^\n]*\bas[ \t]+"
                         rf"({alternatives})\b", re.MULTILINE)
    found: dict = {}
    parent = os.path.dirname(LIBRARY_DIR)
    for folder, dirs, files in os.walk(LIBRARY_DIR):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__pycache__")))
        for file in sorted(files):
            if not file.endswith(".py"):
                continue
            path = os.path.join(folder, file)
            try:
                with open(path, encoding="utf-8") as handle:
                    text = handle.read()
            except (OSError, UnicodeDecodeError):
                continue
            if not any(name in text for name in names):
                continue
            module = os.path.relpath(path, parent)[:-3].replace(os.sep, ".")
            if module.endswith(".__init__"):
                module = module[:-len(".__init__")]
            for match in pattern.finditer(text):
                name = match.group(1) or match.group(2) or match.group(3)
                found.setdefault(name, set()).add(module)
    return tuple((name, tuple(sorted(found[name]))) for name in names if name in found)
