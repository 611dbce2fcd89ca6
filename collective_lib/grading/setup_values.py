"""The values a locked set-up cell gives: a student's cell that changes one is named.

A set-up cell gives an assignment's values (a student's variant, ``BLOCKS``; the
machine of part (ii), ``MACHINE``). The graded tests use those values whatever the
student's cells do, since the trusted checker never asks the student for a name an
instructor cell defines; but in the student's own notebook a cell that sets one
(``BLOCKS = 1``, to compare with a table of the book) changes what the visible
checks and the instructor's functions of the set-up cell read there. A visible test
cell calls :func:`check_set_up_unchanged` first, with the value each name has now and
the value the set-up cell gives, so that Validate names the change instead of passing
a notebook the graded tests then fail (under autograde the two are the same).
"""
from __future__ import annotations

from ._advice import format_value, same_value
from .failures import CheckFailed

__all__ = ["check_set_up_unchanged"]

#: The longest value a message shows (a longer one is only said to differ).
_SHOWN = 24


def check_set_up_unchanged(**values: tuple) -> None:
    """Fail when a name the set-up cell gives no longer has the set-up cell's value.

    Parameters
    ----------
    **values : tuple
        For each name, ``(value it has now, value the set-up cell gives)``: the first
        as the notebook reads it, the second computed again as the set-up cell does
        (``variant("cycles_crossover").blocks``, or a constant).

    Raises
    ------
    CheckFailed
        Of kind ``"wrong_form"``, naming the first changed name, both values (when short)
        and what to do.

    Examples
    --------
    >>> check_set_up_unchanged(BLOCKS=(5, 5), M_MAX=(512, 512))
    >>> try:
    ...     check_set_up_unchanged(BLOCKS=(1, 5))
    ... except AssertionError as err:
    ...     print(err)
    your cells changed BLOCKS: they set it to 1, the set-up cell gives
    5. The graded tests use the set-up cell's value: remove the line of
    your own that sets BLOCKS and run all cells again.
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    for name, (now, given) in values.items():
        if same_value(now, given):
            continue
        shown, expected = format_value(now), format_value(given)
        differs = (f"they set it to {shown}, the set-up cell gives {expected}"
                   if len(shown) <= _SHOWN and len(expected) <= _SHOWN
                   else "it no longer has the value the set-up cell gives")
        raise CheckFailed(
            f"your cells changed {name}: {differs}. The graded tests use the set-up "
            f"cell's value: remove the line of your own that sets {name} and run all "
            "cells again.", "wrong_form")
