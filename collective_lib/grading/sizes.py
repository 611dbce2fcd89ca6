"""What a student's message carries, against the size it declares.

The simulator charges a message for the words its sender declares (``words=``),
so a check of the time must also check that no message declares fewer words
than it carries.  :func:`count_pieces` counts the input messages a payload holds
and refuses a payload that holds anything it cannot count, and :func:`pieces_in`
names them; :func:`count_words` counts
their words, also where a payload holds them one by one (a flat list or a numpy
array); :func:`check_declared_words` holds every message of a run to either.
"""
from __future__ import annotations

from numbers import Real
from typing import Any, Callable

import numpy as np

from ..runs import Run
from ..wording import plural
from ._advice import format_value
from .failures import CheckFailed

__all__ = ["count_pieces", "pieces_in", "count_words", "check_declared_words",
           "UncountablePayload"]

#: What a message may hold where :func:`count_pieces` counts it.
_PIECES_RULE = ("A message may hold only the input messages themselves,\n"
                "in lists, tuples or dicts, with ranks as labels.")
#: What a message may hold where :func:`count_words` counts it.
_WORDS_RULE = ("A message may hold only the input messages, whole or as their words\n"
               "in a flat list or numpy array, in lists, tuples or dicts,\n"
               "with ranks as labels.")


class UncountablePayload(ValueError):
    """A payload whose words cannot be counted; ``rule``: what a message may hold."""

    def __init__(self, message: str, rule: str = _PIECES_RULE):
        super().__init__(message)
        self.rule = rule


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
    return _count(payload, {piece: 1 for piece in pieces}, None, p)


def pieces_in(payload: Any, pieces, p: int) -> list:
    """The items of ``pieces`` a payload carries, as :func:`count_pieces` finds them.

    Each item as often as the payload holds it, in the order found, a list as a tuple;
    what :func:`count_pieces` refuses, this refuses. For a check of what a message
    carried, not only how much: e.g. that every message of an exchange reached the PE it
    is addressed to.

    >>> pieces_in([(0, [5, 6]), (2, (7, 8))], {(5, 6), (7, 8), (9, 9)}, p=4)
    [(5, 6), (7, 8)]
    >>> pieces_in(None, {(5, 6)}, p=4)
    []
    """
    found: list = []
    _count(payload, {piece: 1 for piece in pieces}, None, p, found)
    return found


def count_words(payload: Any, messages, p: int) -> int:
    """How many words of the input ``messages`` a payload carries.

    As :func:`count_pieces` (a whole input message counts its length), and a payload
    may also hold the messages' words one by one: a flat list or tuple of numbers, not
    all of them ranks (the words of several messages one after the other), counts one
    word per number, as the simulator counts it by default, provided every number is
    one of the words of the input messages (so that no number packs several). A numpy
    array counts as its ``tolist()``. Ranks (ints 0..p-1) elsewhere are labels, at most
    two per message or loose word and two more; anything else raises
    :class:`UncountablePayload` (a ValueError), naming it.

    >>> messages = [[0, 500, 501], [1, 600, 601], [2, 700, 701]]
    >>> count_words([[1, 600, 601], [2, 700, 701]], messages, p=3)
    6
    >>> count_words([1, 600, 601, 2, 700, 701], messages, p=3)
    6
    >>> count_words(np.array(messages[1:]), messages, p=3)
    6
    >>> count_words({2: (2, 700, 701)}, messages, p=3)
    3
    >>> try:
    ...     count_words([600601700701], messages, p=3)
    ... except ValueError as err:
    ...     print(err)
    it holds 600601700701,
    which is neither an input message, nor one of its words, nor a rank
    """
    messages = [m.tolist() if isinstance(m, np.ndarray) else m for m in messages]
    return _count(payload, {tuple(m): len(m) for m in messages},
                  {x for m in messages for x in m}, p)


def _count(payload: Any, whole: dict, loose, p: int, found: list | None = None) -> int:
    """The words in ``payload``: ``whole`` maps what counts as one piece (a tuple, or a
    hashable item) to its words; ``loose`` is the set of numbers that count one word
    each in a flat list (None: none do). Ranks are labels, at most two per piece or
    loose word and two more; anything else raises. The whole pieces found are appended
    to ``found`` if given."""
    labels: list = []
    units = [0]                 # the pieces and loose words found (the labels' limit)
    words = _words_in(payload, whole, loose, p, labels, units, found)
    if len(labels) > 2 * units[0] + 2:
        what = (f"{plural(units[0], 'input message')}, more than two labels for each"
                if loose is None else f"{words} words of the input messages,\nmore than two "
                "labels for each message or word")
        raise UncountablePayload(f"it holds {len(labels)} ranks besides {what}",
                                 _PIECES_RULE if loose is None else _WORDS_RULE)
    return words


def _is_rank(x: Any, p: int) -> bool:
    return type(x) is int and 0 <= x < p


def _is_number(x: Any) -> bool:
    return isinstance(x, Real) and not isinstance(x, bool)


def _words_in(payload: Any, whole: dict, loose, p: int, labels: list, units: list,
              found: list | None = None) -> int:
    """The words in ``payload`` (see :func:`_count`); its ranks go to ``labels``, its
    whole pieces to ``found`` (if given)."""
    if isinstance(payload, np.ndarray):
        payload = payload.tolist()
    if isinstance(payload, (list, tuple)):
        try:
            if tuple(payload) in whole:
                units[0] += 1
                if found is not None:
                    found.append(tuple(payload))
                return whole[tuple(payload)]
        except TypeError:           # an unhashable item inside
            pass
        if loose is not None and payload and all(_is_number(x) for x in payload) and \
                not all(_is_rank(x, p) for x in payload):
            for x in payload:       # the words of messages, one by one
                if x not in loose:
                    raise _not_counted(x, loose)
            units[0] += len(payload)
            return len(payload)
        return sum(_words_in(item, whole, loose, p, labels, units, found)
                   for item in payload)
    if isinstance(payload, dict):
        return sum(_words_in(key, whole, loose, p, labels, units, found) +
                   _words_in(value, whole, loose, p, labels, units, found)
                   for key, value in payload.items())
    if isinstance(payload, (set, frozenset)):
        return sum(_words_in(item, whole, loose, p, labels, units, found)
                   for item in payload)
    if payload is None:
        return 0
    if _is_rank(payload, p):
        labels.append(payload)
        return 0
    try:
        if payload in whole:
            units[0] += 1
            if found is not None:
                found.append(payload)
            return whole[payload]
    except TypeError:               # unhashable
        pass
    if loose is not None and _is_number(payload) and payload in loose:
        units[0] += 1
        return 1
    raise _not_counted(payload, loose)


def _not_counted(x: Any, loose) -> UncountablePayload:
    if loose is None:
        return UncountablePayload(f"it holds {format_value(x, 40)}, which is neither one of "
                                  "the input messages nor a rank")
    return UncountablePayload(
        f"it holds {format_value(x, 40)},\nwhich is neither an input message, nor one "
        "of its words, nor a rank", _WORDS_RULE)


def check_declared_words(run: Run, payload_words: Callable, where: str) -> None:
    """Fail unless every message of ``run`` declares at least the words it carries.

    ``payload_words(payload)`` is the words a payload carries (e.g. n times
    :func:`count_pieces`, or :func:`count_words`); a ValueError it raises (a payload
    that could hide words) fails the check with its reason, and with the rule of what a
    message may hold (the ``rule`` of an :class:`UncountablePayload`).  ``where`` names
    the run in the message.

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
                f"be checked:\n{err}.\n{getattr(err, 'rule', _PIECES_RULE)}",
                "message_size") from None
        if not msg.words >= carried:                    # fails on NaN too
            raise CheckFailed(
                f"{where}:\nthe message from PE {msg.src} to PE {msg.dst} carries {carried} "
                f"words of data\nbut is sent as {plural(msg.words, 'word')}, so the simulator "
                "charges too little for it.\nHint: a list of messages counts as one word per "
                "list item;\ngive the real size with `words=`, e.g. `words=n * len(bundle)` "
                "for a bundle\nof n-word messages.", "message_size")
