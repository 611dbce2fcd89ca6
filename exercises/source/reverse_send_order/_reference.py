"""Reference answer of the assignment ``reverse_send_order`` (instructor only).

Sanders, Mehlhorn, Dietzfelbinger, Dementiev, *Sequential and Parallel
Algorithms and Data Structures* (2019), §13.1.1 (``Tree::broadcast``, Fig. 13.3)
and Exercise 13.1: the binomial tree broadcast in which every PE serves its
children in increasing order of subtree size, and its number of steps.

This file stays in ``source/``: ``c.CourseDirectory.ignore`` in
``exercises/nbgrader_config.py`` keeps nbgrader from copying it into
``release/`` or ``autograded/``; the library does not ship this program.
"""
from functools import lru_cache

from collective_lib import recv, send

__all__ = ["binomial_broadcast_smallest_first", "smallest_first_steps"]


def binomial_broadcast_smallest_first(me, p, data, root=0):
    """Binomial tree broadcast from ``root`` in which every PE serves its nearest child first."""
    rel = (me - root) % p                  # rank relative to the root
    if rel == 0:
        span = 1                           # the root behaves like a rank ending in
        while span < p:                    # ceil(log2 p) zero bits
            span *= 2
    else:
        span = rel & -rel                  # the lowest set bit of rel
        data = yield recv((rel - span + root) % p)
    step = 1
    while step < span:                     # children rel+1, rel+2, rel+4, ... (nearest first)
        if rel + step < p:
            yield send((rel + step + root) % p, data)
        step *= 2
    return data


@lru_cache(maxsize=None)
def smallest_first_steps(p: int) -> int:
    """Steps of :func:`binomial_broadcast_smallest_first` on p PEs (one port, any root).

    The root's j-th send (j = 0, 1, ...) goes to relative rank 2**j in step
    j + 1; that child then broadcasts, by the same rule, to its subtree of
    min(2**j, p - 2**j) PEs.  No two transfers compete for a port, so
    T(1) = 0 and T(p) = max_j (j + 1 + T(min(2**j, p - 2**j))), which is
    d(d+1)/2 for p = 2**d.

    >>> [smallest_first_steps(p) for p in (1, 2, 4, 8, 16, 5)]
    [0, 1, 3, 6, 10, 3]
    """
    return max((j + 1 + smallest_first_steps(min(1 << j, p - (1 << j)))
                for j in range(max(p - 1, 0).bit_length()) if 1 << j < p), default=0)
