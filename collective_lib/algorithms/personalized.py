"""All-to-all personalized communication (chapter 5): the total exchange.

Every PE i holds a list of p messages, ``data[j]`` being its message m_ij for
PE j (its own m_ii included); every PE j returns the list of the p messages
destined for it, indexed by source: ``result[i]`` is PE i's ``data[j]``.  Seen
as a p x p matrix of messages distributed by rows, the operation transposes
it (Grama §4.5, Fig. 4.16; :func:`transpose_by_alltoall` does Example 4.2).

The exchange is *uniform* (Grama: every message m words; Sanders §13.6.1:
"all messages have the same size n"): a PE's p messages must have one size,
and a PE checks that every message it receives has its own messages' size.
A message that concatenates k messages is then charged k m words.

Direct delivery sends each message straight to its destination in p - 1
rounds (:func:`alltoall_cyclic`, :func:`alltoall_direct_xor`,
:func:`alltoall_one_factor`, :func:`all_to_all_personal_hcube_ecube`);
indirect delivery forwards consolidated messages through log p rounds
(:func:`all_to_all_personal_hcube`, :func:`alltoall_hypercube`,
:func:`bruck_alltoall`), paying fewer startups for more words.
:func:`direct_indirect_crossover` says where one overtakes the other.

Cost convention: communication only (alpha = ts, beta = tw, m words per
message), as in the sources.  The local rearrangement of the mesh and
hypercube procedures (Grama's t_r) is charged only when the program is given
``tr > 0``: it then computes for ``tr`` times the words it rearranges
(:func:`rearranged_words_mesh`, :func:`rearranged_words_hcube`).

Sources: Grama, Gupta, Karypis, Kumar, Introduction to Parallel Computing
(2003), §4.5, Eqs. 4.7-4.10, Algorithm 4.10, Figs. 4.16-4.21; Sanders,
Mehlhorn, Dietzfelbinger, Dementiev, Sequential and Parallel Algorithms and
Data Structures (2019), §13.6.1-13.6.2, Eqs. 13.3-13.4, Figs. 13.13-13.14;
Bruck, Ho, Kipnis, Upfal, Weathersby, Efficient algorithms for all-to-all
communications in multiport message-passing systems, IEEE TPDS 8(11), 1997.
"""
from __future__ import annotations

from ..catalog import register, register_operation
from ..ops import sendrecv, size_in_words
from .alltoall import _check_messages, _p_messages, _step

__all__ = ["alltoall_cyclic"]


# -- the operation ------------------------------------------------------------------------

def _alltoall_expected(inputs, **_):
    """PE j gets column j of the matrix of messages: ``[inputs[i][j] for i]``."""
    return [[row[j] for row in inputs] for j in range(len(inputs))]


register_operation("alltoall", make_inputs=_p_messages, expected=_alltoall_expected)


def _uniform_messages(algorithm, data, p):
    """My p messages and their common size in words (the exchange is uniform).

    >>> _uniform_messages("demo", [[1, 2], [3, 4]], 2)
    ([[1, 2], [3, 4]], 2)
    """
    msgs = _check_messages(algorithm, data, p)
    m = size_in_words(msgs[0])
    for j, x in enumerate(msgs):
        if size_in_words(x) != m:
            raise ValueError(f"{algorithm} exchanges messages of one size, but this PE's "
                             f"message for PE 0 has {m} words and the one for PE {j} "
                             f"{size_in_words(x)}")
    return msgs, m


def _check_received(algorithm, result, m):
    """Every message a PE received has the size of its own (else the charges were wrong)."""
    for i, x in enumerate(result):
        if size_in_words(x) != m:
            raise ValueError(f"{algorithm} exchanges messages of one size, but the message "
                             f"from PE {i} has {size_in_words(x)} words, not {m}")
    return result


# -- direct delivery in p - 1 rounds: Sanders §13.6.1 -------------------------------------------

def direct_cost(p, m, model, **_):
    """(p - 1)(alpha + beta m), Sanders Eq. 13.3 and Grama Eq. 4.10; exact."""
    return (p - 1) * _step(model, m)


@register(operation="alltoall", cost=direct_cost, exact=True,
          source="Sanders et al. 2019, §13.6.1, Eq. 13.3, Exercise 13.10")
def alltoall_cyclic(me, p, data):
    """All-to-all by direct delivery along cycles: in round k send to me + k, receive from me - k.

    Sanders et al. 2019, §13.6.1, the full-duplex code: for k = 1 to p - 1,
    send m_(me, me+k) to PE (me + k) mod p while receiving m_(me-k, me) from
    PE (me - k) mod p.  Round k arranges the PEs in cycles of the permutation
    i -> i + k (pairs are the case k = p/2).  Any p, full-duplex, fully
    connected network; time (p - 1)(alpha + beta m), Eq. 13.3.

    Why it is correct (Exercise 13.10): in round k, PE i sends to j = i + k
    and PE j receives from j - k = i, so every send of round k meets the
    receive posted for it in the same round.  PE j hears in round k from
    j - k; as k runs through 1..p-1, j - k runs through every PE except j
    once, so j receives the message of every other PE exactly once, and the
    pair (i, j) communicates only in round k = (j - i) mod p.  Every round
    is one full-duplex transfer per PE, so the rounds take alpha + beta m.

    Examples
    --------
    >>> from collective_lib import simulate
    >>> data = [[(i, j) for j in range(3)] for i in range(3)]    # PE i's message for j
    >>> simulate(alltoall_cyclic, 3, data).results[1]
    [(0, 1), (1, 1), (2, 1)]
    """
    msgs, m = _uniform_messages("alltoall_cyclic", data, p)
    result = [None] * p
    result[me] = msgs[me]
    for k in range(1, p):
        dst, src = (me + k) % p, (me - k) % p
        result[src] = yield sendrecv(dst, msgs[dst], src)   # send m_(me,dst) || receive m_(src,me)
    return _check_received("alltoall_cyclic", result, m)
