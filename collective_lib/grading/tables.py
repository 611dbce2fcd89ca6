"""Tables filled in by hand (chapters 4 and 5): symbolic partial sums, what each PE sends.

:func:`parse_terms` and :func:`format_terms` read and write a partial sum such as
``x3[5] + x4[5]``, :func:`sends_by_step` tabulates what a run sent, and
:func:`check_answer_table` compares a student's table with the expected one,
entry by entry.
"""
from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from ..runs import Run
from ._advice import format_value, same_value
from .failures import CheckFailed

__all__ = ["parse_terms", "format_terms", "sends_by_step", "check_answer_table"]


_TERM = re.compile(r"^\s*([A-Za-z]+)_?\{?\s*(-?\d+)\s*\}?\s*\[\s*(-?\d+)\s*\]\s*$")


def parse_terms(entry: Any, letter: str = "x") -> frozenset:
    """The set of ``(source, destination)`` pairs of a symbolic partial sum.

    A term ``x3[5]`` (also ``x_3[5]``) stands for the message that PE 3 holds
    for PE 5, and a partial sum lists its terms: a string joined with ``+``
    or commas (``"x3[5] + x4[5]"``), or a list, tuple or set of terms, each a
    string or a pair ``(3, 5)``.

    Raises
    ------
    ValueError
        Saying which part could not be read.

    Examples
    --------
    >>> sorted(parse_terms("x3[5] + x4[5]"))
    [(3, 5), (4, 5)]
    >>> sorted(parse_terms(["x_0[1]", (2, 1)]))
    [(0, 1), (2, 1)]
    >>> parse_terms("x3 + x4")
    Traceback (most recent call last):
    ...
    ValueError: cannot read the term 'x3' (write a term as x3[5]: the message PE 3 holds for PE 5)
    """
    if isinstance(entry, str):
        parts = [t for t in re.split(r"[+,]", entry)]
        if not entry.strip():
            raise ValueError("the entry is empty (write its terms, e.g. 'x3[5] + x4[5]')")
    elif isinstance(entry, (list, tuple, set, frozenset)):
        if isinstance(entry, tuple) and len(entry) == 2 and all(
                isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in entry):
            parts = [entry]                   # one (source, destination) pair
        else:
            parts = list(entry)
    else:
        raise ValueError(f"cannot read {format_value(entry, 60)} ({type(entry).__name__}); "
                         "write a partial sum as a string such as 'x3[5] + x4[5]' or a list of "
                         "terms")
    terms = set()
    for part in parts:
        if isinstance(part, tuple) and len(part) == 2 and all(
                isinstance(x, (int, np.integer)) and not isinstance(x, bool) for x in part):
            terms.add((int(part[0]), int(part[1])))
            continue
        found = _TERM.match(part) if isinstance(part, str) else None
        if not found or found.group(1) != letter:
            shown = part.strip() if isinstance(part, str) else format_value(part, 40)
            raise ValueError(f"cannot read the term {shown!r} "
                             f"(write a term as {letter}3[5]: the message PE 3 holds for PE 5)")
        terms.add((int(found.group(2)), int(found.group(3))))
    if not terms:
        raise ValueError("the entry has no terms (write them, e.g. 'x3[5] + x4[5]')")
    return frozenset(terms)


def format_terms(terms, letter: str = "x") -> str:
    """``'x3[5] + x4[5]'``: a set of (source, destination) pairs as text, sorted.

    >>> format_terms({(4, 5), (3, 5)})
    'x3[5] + x4[5]'
    """
    return " + ".join(f"{letter}{s}[{d}]" for s, d in sorted(terms, key=lambda t: (t[1], t[0])))


def sends_by_step(run: Run) -> dict:
    """``{step: {source: payload}}``: what each PE sent in each step of a traced run.

    Steps are counted from 1 as in the figures (:meth:`Run.step`).

    >>> from collective_lib import catalog
    >>> run = catalog()["all_to_all_bc_ring"].simulate(3, inputs=[10, 11, 12])
    >>> sends_by_step(run)
    {1: {0: 10, 1: 11, 2: 12}, 2: {0: 12, 1: 10, 2: 11}}
    """
    table = {}
    for s in range(1, len(run.step_starts()) + 1):
        row = {}
        for msg in run.step(s):
            if msg.src in row:
                raise ValueError(f"PE {msg.src} sends more than one message in step {s}; "
                                 "read run.step(s) instead")
            row[msg.src] = msg.payload
        table[s] = dict(sorted(row.items()))
    return table


def _set_difference(got, want, show) -> str:
    """' (missing: ...; not expected: ...)' for two sets, else ''."""
    if not (isinstance(got, (set, frozenset)) and isinstance(want, (set, frozenset))):
        return ""
    parts = []
    if want - got:
        parts.append(f"missing: {show(frozenset(want - got))}")
    if got - want:
        parts.append(f"not expected: {show(frozenset(got - want))}")
    return f" ({'; '.join(parts)})" if parts else ""


def _keys_text(keys) -> str:
    return ", ".join(repr(k) for k in keys)


def check_answer_table(answer: Any, expected: Any, *, name: str, normalize: Callable = None,
                       show: Callable = None, hint: str = "") -> None:
    """Compare a table a student filled in by hand with the expected one, entry by entry.

    ``expected`` is a (nested) dict or list; ``answer`` must have the same
    shape: the same keys for a dict (a list may stand for a dict with the keys
    0, 1, ...), the same length for a list.  Each leaf of the answer is read
    with ``normalize`` (a ValueError it raises is reported with the entry's
    place) and compared with the expected leaf.

    Parameters
    ----------
    answer, expected : dict, list or leaf
        The student's table and the right one.
    name : str
        The student's variable, to name an entry (``sends_4[2][3]``).
    normalize : callable, optional
        Reads one answer leaf (e.g. :func:`parse_terms`); default: as it is.
    show : callable, optional
        Formats an expected or normalized leaf for messages; default ``repr``.
    hint : str
        Appended to a wrong-entry message.

    Raises
    ------
    AssertionError
        At the first entry that is missing, unreadable or wrong.

    Examples
    --------
    >>> check_answer_table({1: ["a", "b"]}, {1: {0: "a", 1: "b"}}, name="t")
    >>> try:
    ...     check_answer_table({1: ["a", "c"]}, {1: ["a", "b"]}, name="t")
    ... except AssertionError as err:
    ...     print(err)
    t[1][1] is 'c', but 'b' was expected
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    normalize = normalize or (lambda x: x)
    show = show or repr

    def compare(got, want, path):
        __tracebackhide__ = True
        if isinstance(want, dict) or isinstance(want, (list, tuple)):
            keys = list(want) if isinstance(want, dict) else list(range(len(want)))
            if isinstance(got, (list, tuple)):
                got = dict(enumerate(got))
            if not isinstance(got, dict):
                raise CheckFailed(f"{path} must be a {'dict' if isinstance(want, dict) else 'list'}"
                                  f" with the entries {_keys_text(keys)}, got "
                                  f"{format_value(got, 80)}", "wrong_form")
            missing = [k for k in keys if k not in got]
            extra = [k for k in got if k not in keys]
            if missing or extra:
                text = f"{path} must have the entries {_keys_text(keys)}"
                if missing:
                    text += f"; {_keys_text(missing)} {'is' if len(missing) == 1 else 'are'} missing"
                if extra:
                    text += f"; {_keys_text(extra)} should not be there"
                raise CheckFailed(text, "wrong_form")
            for k in keys:
                compare(got[k], want[k] if isinstance(want, dict) else want[k], f"{path}[{k!r}]")
            return
        try:
            value = normalize(got)
        except ValueError as exc:
            raise CheckFailed(f"{path}: {exc}", "wrong_form") from None
        if not same_value(value, want):
            raise CheckFailed(f"{path} is {show(value)}, but {show(want)} was expected"
                              f"{_set_difference(value, want, show)}"
                              + (f"\n{hint}" if hint else ""), "wrong_entry")

    compare(answer, expected, name)
