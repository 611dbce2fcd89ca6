"""Reference answer of the assignment ``ring_reduction`` (instructor only).

Grama, Gupta, Karypis, Kumar, *Introduction to Parallel Computing* (2003),
§4.2.1, Algorithm 4.5 (``ALL_TO_ALL_RED_RING``) and Eq. 4.2: the all-to-all
reduction on a ring, the all-to-all broadcast of Algorithm 4.4 run backwards
with every PE adding its own contribution on the way.

The hidden tests of part (a) simulate it on symbolic operands to get the
tables, and ``tests/`` checks it against the catalog's other all-to-all
reductions.  This file stays in ``source/``: ``c.CourseDirectory.ignore`` in
``exercises/nbgrader_config.py`` keeps nbgrader from copying it into
``release/`` or ``autograded/``; the library does not ship this program.
"""
from collective_lib import sendrecv
from collective_lib.algorithms.reduce import add, combine

__all__ = ["all_to_all_red_ring"]


def all_to_all_red_ring(me, p, data, op=add):
    """All-to-all reduction on a ring (Grama et al. 2003, Algorithm 4.5).

    In step i = 1, ..., p - 1 combine my message for PE me + i with the
    partial sum received in the step before, send it to the left and receive
    the partial sum for PE me + i + 1 from the right; after step p - 1 my own
    message for me completes the partial sum that arrived.  PE j's result
    combines the messages in the cyclic order j, j+1, ..., j-1, so ``op`` must
    be commutative.  Full-duplex; time (ts + tw m)(p - 1), Eq. 4.2.
    """
    if not isinstance(data, (list, tuple)) or len(data) != p:
        raise ValueError(f"all_to_all_red_ring needs a list of p={p} messages on every PE "
                         f"(one per destination), got {data!r}")
    left, right = (me - 1) % p, (me + 1) % p
    received = None                                   # recv := 0
    for i in range(1, p):
        temp = combine(op, data[(me + i) % p], received)   # temp := msg[me + i] + recv
        received = yield sendrecv(left, temp, right)       # send left || receive from right
    return combine(op, data[me], received)                 # result := msg[me] + recv
