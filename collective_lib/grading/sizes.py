"""What a student's message carries, against the size it declares.

The simulator charges a message for the words its sender declares (``words=``),
so a check of the time must also check that no message declares fewer words
than it carries.  :func:`count_pieces` counts the input messages a payload holds
and refuses a payload that holds anything it cannot count; :func:`check_declared_words`
holds every message of a run to it.
"""
from __future__ import annotations

from typing import Any, Callable

from ..runs import Run
from ..wording import plural
from ._advice import format_value
from .failures import CheckFailed

__all__ = ["count_pieces", "check_declared_words"]


def count_pieces(payload: Any, pieces, p: int) -> int:
    """How many items of ``pieces`` a payload carries, looking inside lists, tuples, sets and dicts.

    ``pieces`` is a set of hashable items (lists are compared as tuples), the input
    messages whose words a message may carry; use it to check a message's declared
    size, whatever the bundle's layout (a list of messages, of (source, message)
    pairs, a dict ...).  Besides the pieces, a payload may hold only ranks (ints
    0..p-1) as labels, at most two per piece and two more, and None: anything else
    could carry pieces unseen (a string, a flattened list, a big number), so it raises
    ValueError, naming it.

    >>> count_pieces([(0, (5, 6)), (2, (7, 8))], {(5, 6), (7, 8), (9, 9)}, p=4)
    2
    >>> count_pieces({3: [5, 6]}, {(5, 6)}, p=4)
    1
    >>> try:
    ...     count_pieces(["[5, 6]"], {(5, 6)}, p=4)
    ... except ValueError as err:
    ...     print(err)
    it holds '[5, 6]', which is neither one of the input messages nor a rank
    """
    labels: list = []
    count = _pieces_in(payload, pieces, p, labels)
    if len(labels) > 2 * count + 2:
        raise ValueError(f"it holds {len(labels)} ranks besides "
                         f"{plural(count, 'input message')}, more than two labels for each")
    return count


def _pieces_in(payload: Any, pieces, p: int, labels: list) -> int:
    """The pieces in ``payload``; its ranks go to ``labels``; anything else raises."""
    if isinstance(payload, (list, tuple)):
        try:
            if tuple(payload) in pieces:
                return 1
        except TypeError:           # an unhashable item inside
            pass
        return sum(_pieces_in(item, pieces, p, labels) for item in payload)
    if isinstance(payload, dict):
        return sum(_pieces_in(key, pieces, p, labels) + _pieces_in(value, pieces, p, labels)
                   for key, value in payload.items())
    if isinstance(payload, (set, frozenset)):
        return sum(_pieces_in(item, pieces, p, labels) for item in payload)
    if payload is None:
        return 0
    if type(payload) is int and 0 <= payload < p:
        labels.append(payload)
        return 0
    try:
        if payload in pieces:
            return 1
    except TypeError:               # unhashable
        pass
    raise ValueError(f"it holds {format_value(payload, 40)}, which is neither one of the "
                     "input messages nor a rank")


def check_declared_words(run: Run, payload_words: Callable, where: str) -> None:
    """Fail unless every message of ``run`` declares at least the words it carries.

    ``payload_words(payload)`` is the words a payload carries (e.g. n times
    :func:`count_pieces`); a ValueError it raises (a payload that could hide words)
    fails the check with its reason.  ``where`` names the run in the message.

    >>> from collective_lib import recv, send, simulate
    >>> def hider(me, p, data):
    ...     if me == 0:
    ...         yield send(1, str(data), words=0)      # the words in a string, declared as 0
    ...     else:
    ...         yield recv(0)
    >>> run = simulate(hider, 2, [[[4, 5]], None], trace=True)
    >>> try:
    ...     check_declared_words(run, lambda x: 2 * count_pieces(x, {(4, 5)}, 2), "hider")
    ... except AssertionError as err:
    ...     print(str(err).splitlines()[2])
    it holds '[[4, 5]]', which is neither one of the input messages nor a rank.
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    for msg in run.messages:
        try:
            carried = payload_words(msg.payload)
        except ValueError as err:
            raise CheckFailed(
                f"{where}:\nthe size of the message from PE {msg.src} to PE {msg.dst} cannot "
                f"be checked:\n{err}.\nA message may hold only the input messages themselves,"
                "\nin lists, tuples or dicts, with ranks as labels.", "message_size") from None
        if not msg.words >= carried:                    # fails on NaN too
            raise CheckFailed(
                f"{where}:\nthe message from PE {msg.src} to PE {msg.dst} carries {carried} "
                f"words of data\nbut is sent as {plural(msg.words, 'word')}, so the simulator "
                "charges too little for it.\nHint: a list of messages counts as one word per "
                "list item;\ngive the real size with `words=`, e.g. `words=n * len(bundle)` "
                "for a bundle\nof n-word messages.", "message_size")
