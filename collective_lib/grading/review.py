"""Flags for a human: what a check saw that is suspicious but not wrong.

A check in the trusted checker may find that a submission resembles a library
function closely, or reaches objects through computed names. Such a finding
must not cost points by itself (an honest solution can look like the book's),
nor pass unnoticed: the check calls :func:`flag_for_review`, the checker collects the
flags of each graded cell with :func:`take_review_flags`, and the ``FlagForReview`` step of
autograde marks that cell for manual grading with the reasons as a comment.

Examples
--------
>>> flag_for_review("0.98 similar to the library's all_to_all_red_ring")
>>> take_review_flags()
["0.98 similar to the library's all_to_all_red_ring"]
>>> take_review_flags()
[]
"""
from __future__ import annotations

__all__ = ["flag_for_review", "take_review_flags"]

_FLAGS: list = []


def flag_for_review(reason: str) -> None:
    """Ask a human to look at the graded cell being checked, saying why."""
    if reason not in _FLAGS:
        _FLAGS.append(reason)


def take_review_flags() -> list:
    """The flags raised since the last call, in order (and forget them)."""
    found = list(_FLAGS)
    _FLAGS.clear()
    return found
