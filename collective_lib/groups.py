"""Collectives on a subgroup of the PEs.

Many applications run a collective among some PEs only: the columns or rows of
a two-dimensional array of nodes (Mathur and Johnsson's matrix-vector product,
:mod:`collective_lib.cm200.matvec`), the halves of a recursive algorithm.
:func:`in_group` runs any SPMD program of the library on such a group: the
program sees ranks 0..len(members)-1, and every operation it yields is
translated to the global ranks on its way to the simulator (or any other
backend).
"""
from __future__ import annotations

import functools

from .ops import mapped, relay, valid_rank

__all__ = ["in_group"]


def in_group(program, members, me, data, **params):
    """Run the SPMD ``program`` among the PEs ``members`` only; return my result.

    Use it as ``result = yield from in_group(program, members, me, data)``.
    Inside, ``program`` sees ranks 0..len(members)-1 (its rank is
    ``members.index(me)``); every operation it yields is translated to the
    global ranks before it reaches the simulator, and the results come back
    unchanged.  All members must call it with the same ``members`` list.

    Parameters
    ----------
    program : generator function
        ``program(me, p, data, **params)``, any SPMD program of the library.
    members : sequence of int
        The global ranks of the group, each once; group rank k is ``members[k]``.
    me : int
        The calling PE's global rank; it must be one of ``members``.
    data
        The calling PE's input to ``program``.
    **params
        Passed on to ``program``.

    Examples
    --------
    An all-gather among the even PEs of five:

    >>> from collective_lib import simulate
    >>> from collective_lib.algorithms.alltoall import all_to_all_bc_ring
    >>> def evens_gather(me, p, data):
    ...     if me % 2 == 0:
    ...         return (yield from in_group(all_to_all_bc_ring, [0, 2, 4], me, data))
    ...     yield from ()
    >>> simulate(evens_gather, 5, ["a", "b", "c", "d", "e"]).results
    [['a', 'c', 'e'], None, ['a', 'c', 'e'], None, ['a', 'c', 'e']]
    """
    members = tuple(members)
    if me not in members:
        raise ValueError(f"PE {me} runs a collective of the group {list(members)} it is not in")
    if len(set(members)) != len(members):
        raise ValueError(f"a group lists each PE once, got {list(members)}")
    size = len(members)

    def global_rank(rank):              # a group rank out of range names no member
        return members[valid_rank(rank, size, "a rank in the group")]

    steps = program(members.index(me), size, data, **params)
    return (yield from relay(steps, functools.partial(mapped, rank=global_rank)))
