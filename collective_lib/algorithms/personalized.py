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

import math

from ..catalog import register
from ..networks import Hypercube, Mesh, Ring
from ..ops import compute, exchange, sendrecv, size_in_words
from ..trees import ceil_log2
from ..validate import check_messages, check_positive_int, check_power_of_two, check_square

__all__ = [
    "alltoall_cyclic", "alltoall_direct_xor", "alltoall_one_factor", "one_factor_partner",
    "alltoall_hypercube", "all_to_all_personal_ring", "all_to_all_personal_ring_bidirectional",
    "all_to_all_personal_mesh",
    "all_to_all_personal_hcube", "all_to_all_personal_hcube_ecube", "bruck_alltoall",
    "bruck_alltoall_bound", "rearranged_words_mesh", "rearranged_words_hcube",
    "direct_indirect_crossover", "transpose_by_alltoall",
    "bruck_alltoall_cost", "direct_cost", "ecube_cost", "hypercube_indirect_cost",
    "one_factor_cost", "personal_mesh_cost", "personal_ring_cost",
    "personal_ring_bidirectional_cost",
]

#: Where this module's entries stand in the catalog (chapter 5; see collective_lib.algorithms).
CATALOG_POSITION = 51


def _uniform_messages(algorithm, data, p):
    """My p messages and their common size in words (the exchange is uniform).

    >>> _uniform_messages("demo", [[1, 2], [3, 4]], 2)
    ([[1, 2], [3, 4]], 2)
    """
    msgs = check_messages(algorithm, data, p)
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


def _power_of_two(algorithm):
    """``valid_p`` of an algorithm that needs p to be a power of two."""
    def valid_p(p):
        check_power_of_two(algorithm, p)
    return valid_p


def _check_tr(tr):
    """Grama's t_r, the time to read and write one word locally."""
    if isinstance(tr, bool) or not isinstance(tr, (int, float)) or not tr >= 0:
        raise ValueError(f"tr must be a non-negative number, got tr={tr!r}")
    return tr


def _exchange_with(algorithm, me, msgs, m, partners):
    """Direct delivery: swap messages with each partner in turn.  Returns them by source.

    A PE that is its own partner sits the round out.  It yields ``compute(0)``
    first, which puts it behind the PEs resumed at the same time: the pairs of
    the current round claim their ports before it calls its next partner, as a
    telephone call waits while the other line is busy.
    """
    result = [None] * len(msgs)
    result[me] = msgs[me]
    for partner in partners:
        if partner == me:
            yield compute(0)
        else:
            result[partner] = yield exchange(partner, msgs[partner])
    return _check_received(algorithm, result, m)


# -- direct delivery in p - 1 rounds: Sanders §13.6.1 -------------------------------------------

def direct_cost(p, m, model, **_):
    """(p - 1)(alpha + beta m), Sanders Eq. 13.3 and Grama Eq. 4.10; exact."""
    return (p - 1) * model.transfer_time(m)


#: The closed form of :func:`direct_cost` as TeX (``register(tex=...)``).
_DIRECT_TEX = r"(p - 1)(t_s + t_w m)"


@register(operation="alltoall", cost=direct_cost, exact=True,
          tex=_DIRECT_TEX,
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


@register(operation="alltoall", cost=direct_cost, exact=True,
          tex=_DIRECT_TEX,
          valid_p=_power_of_two("alltoall_direct_xor"),
          source="Sanders et al. 2019, §13.6.1, Eq. 13.3")
def alltoall_direct_xor(me, p, data):
    """All-to-all by direct delivery in pairs: in step k exchange with PE me XOR k.

    Sanders et al. 2019, §13.6.1: for p a power of two, in step k = 1..p-1
    PE i exchanges messages with PE i XOR k.  Since (i XOR k) XOR k = i the
    two partners agree, and PEs i and j meet exactly once, in step i XOR j.
    The PEs are paired in every step (the telephone model).  p a power of
    two, full-duplex exchanges on a fully connected network; time
    (p - 1)(alpha + beta m), Eq. 13.3, optimal for direct delivery.  On a
    hypercube with E-cube routing the same schedule is Grama's Algorithm
    4.10 (:func:`all_to_all_personal_hcube_ecube`).
    """
    check_power_of_two("alltoall_direct_xor", p)
    msgs, m = _uniform_messages("alltoall_direct_xor", data, p)
    return (yield from _exchange_with("alltoall_direct_xor", me, msgs, m,
                                      (me ^ k for k in range(1, p))))


def one_factor_partner(i, p, r):
    """PE i's partner in round r of Sanders' 1-factor schedule; i itself when it sits out.

    Sanders et al. 2019, §13.6.1: with p' = p - isEven(p) and k = 2r mod p',
    PE i meets j = (k - i) mod p', so that i + j = k (mod p').  For odd p
    the PE with i + i = k, which is PE r, is idle in round r; for even p it
    meets PE p - 1 instead.  Rounds r = 0 .. p' - 1.

    >>> [one_factor_partner(3, 6, r) for r in range(5)]     # Fig. 13.13
    [2, 4, 1, 5, 0]
    >>> [one_factor_partner(i, 5, 0) for i in range(5)]     # odd p: PE 0 sits out round 0
    [0, 4, 3, 2, 1]
    """
    even = p % 2 == 0
    p_prime = p - even
    if not 0 <= r < p_prime:
        raise ValueError(f"the 1-factor schedule for p={p} has rounds 0..{p_prime - 1}, "
                         f"got r={r!r}")
    if not 0 <= i < p:
        raise ValueError(f"PE must be in 0..{p - 1}, got {i!r}")
    k = 2 * r % p_prime
    j = (k - i) % p_prime
    if even and i == r:
        j = p - 1
    if even and i == p - 1:
        j = r
    return j


def one_factor_cost(p, m, model, **_):
    """(p - isEven(p))(alpha + beta m) for p > 1 (0 for p = 1), Sanders §13.6.1; exact."""
    if p == 1:
        return 0.0
    return (p - (p % 2 == 0)) * model.transfer_time(m)


@register(operation="alltoall", cost=one_factor_cost, exact=True,
          tex=r"\bigl(p - \mathit{isEven}(p)\bigr)(t_s + t_w m)\text{; 0 for } p = 1",
          source="Sanders et al. 2019, §13.6.1, Fig. 13.13")
def alltoall_one_factor(me, p, data):
    """All-to-all in the telephone model for any p: the 1-factor ("speed dating") schedule.

    Sanders et al. 2019, §13.6.1, Fig. 13.13: in round r = 0 .. p' - 1
    (p' = p - isEven(p)) PE i exchanges messages with
    :func:`one_factor_partner` (i, p, r).  The rounds pair the PEs, so
    every step is a set of exchanges between two partners.  For odd p
    each round leaves PE r idle and there are p rounds; for even p PE
    p - 1 takes the idle PE's place and p - 1 rounds suffice.  The idle PE
    must not call its next partner before that partner's current call is
    over: it sits the round out behind the others (``compute(0)``), else its
    early transfer would take the partner's port and delay a chain of
    rounds.  Any p, full-duplex exchanges (a pair swaps its messages in
    alpha + beta m); time (p - isEven(p))(alpha + beta m) for p > 1.  In the
    simulator's half-duplex model a PE cannot send and receive at once, so
    every exchange, and the whole schedule, takes twice as long.
    """
    msgs, m = _uniform_messages("alltoall_one_factor", data, p)
    rounds = p - (p % 2 == 0)
    return (yield from _exchange_with("alltoall_one_factor", me, msgs, m,
                                      (one_factor_partner(me, p, r) for r in range(rounds))))


# -- indirect delivery through the hypercube dimensions ---------------------------------------

def rearranged_words_hcube(p, m):
    """Words a PE rearranges in Grama's hypercube procedure: m p before each of the log p steps.

    Grama §4.5.3: the time t_r m p log p, with t_r per word read and written.

    >>> rearranged_words_hcube(8, 2)
    48
    """
    return m * p * check_power_of_two("all_to_all_personal_hcube", p)


def hypercube_indirect_cost(p, m, model, tr=0.0, **_):
    """log p (ts + tw m p/2), Grama Eq. 4.9 and Sanders Eq. 13.4; exact.

    With ``tr > 0``, plus the rearrangement t_r m p log p of Grama §4.5.3.
    """
    d = check_power_of_two("the hypercube all-to-all", p)
    if d == 0:
        return 0.0
    return d * model.transfer_time(m * p // 2) + _check_tr(tr) * rearranged_words_hcube(p, m)


#: The closed form of :func:`hypercube_indirect_cost` as TeX (``register(tex=...)``).
_HYPERCUBE_INDIRECT_TEX = r"(t_s + t_w m p/2) \log_2 p"


def _dimension_exchange(algorithm, me, p, data, dimensions, tr=0.0):
    """Deliver through the hypercube: in dimension k pass on what belongs to the other k-cube.

    ``M`` is the list of messages (i, j, m_ij) this PE still has to deliver;
    it always holds p of them.
    """
    msgs, m = _uniform_messages(algorithm, data, p)
    tr = _check_tr(tr)
    M = [(me, j, msgs[j]) for j in range(p)]                 # messages me has to deliver
    for k in dimensions:
        bit = 1 << k
        if tr:
            yield compute(tr * p * m)                        # rearrange so M_s is contiguous
        M_s = [x for x in M if x[1] & bit != me & bit]       # messages for the other k-cube
        M_r = yield exchange(me ^ bit, M_s, words=len(M_s) * m)
        M = M_r + [x for x in M if x[1] & bit == me & bit]   # M := M_r U (M minus M_s)
    result = [None] * p
    for i, _, x in M:
        result[i] = x
    return _check_received(algorithm, result, m)


@register(operation="alltoall", cost=hypercube_indirect_cost, exact=True,
          tex=_HYPERCUBE_INDIRECT_TEX,
          network_for=Hypercube.of_size, valid_p=_power_of_two("alltoall_hypercube"),
          source="Sanders et al. 2019, §13.6.2, Eq. 13.4, Fig. 13.14")
def alltoall_hypercube(me, p, data):
    """All-to-all with indirect delivery through the hypercube, highest dimension first.

    Sanders et al. 2019, §13.6.2: a PE keeps the set M of messages m_ij it
    still has to deliver (initially its own p messages).  For k = d-1 down
    to 0 it sends M_s, the messages whose recipient j differs from me in
    bit k, to PE me XOR 2**k, receives M_r from it, and sets
    M := M_r U M minus M_s.  After iteration k every message lies in the
    k-dimensional subcube of its recipient (Fig. 13.14).  Each step moves
    p/2 messages.  p a power of two, full-duplex; time
    log p (alpha + beta m p/2), Eq. 13.4.
    """
    d = check_power_of_two("alltoall_hypercube", p)
    return (yield from _dimension_exchange("alltoall_hypercube", me, p, data,
                                           range(d - 1, -1, -1)))


@register(operation="alltoall", cost=hypercube_indirect_cost, exact=True,
          tex=_HYPERCUBE_INDIRECT_TEX,
          network_for=Hypercube.of_size, valid_p=_power_of_two("all_to_all_personal_hcube"),
          params={"tr": 0.0}, source="Grama et al. 2003, §4.5.3, Fig. 4.20, Eq. 4.9")
def all_to_all_personal_hcube(me, p, data, tr=0.0):
    """All-to-all personalized on a hypercube: the mesh procedure extended to log p dimensions.

    Grama et al. 2003, §4.5.3, Fig. 4.20: in each of the log p steps, from
    dimension 0 upwards, a PE holds p packets of m words and sends the p/2
    whose destination lies across the current dimension, as one
    consolidated message, to its neighbour there, receiving p/2 packets
    in return.  Before each step the PE rearranges its m p words so that
    the packets to send are contiguous; with ``tr > 0`` that costs
    ``tr`` per word (t_r m p log p in all).  p a power of two, full-duplex;
    time (ts + tw m p/2) log p (Eq. 4.9) plus the rearrangement.
    """
    d = check_power_of_two("all_to_all_personal_hcube", p)
    return (yield from _dimension_exchange("all_to_all_personal_hcube", me, p, data,
                                           range(d), tr))


def ecube_cost(p, m, model, **_):
    """sum over j = 1..p-1 of the transfer time over popcount(j) links; exact.

    Step j moves m words between PEs that differ in the bits of j, with
    no contention.  Cut-through: (ts + tw m)(p - 1) + th (p/2) log p, which
    for th = 0 is Grama Eq. 4.10, (ts + tw m)(p - 1).
    """
    check_power_of_two("all_to_all_personal_hcube_ecube", p)
    return sum(model.transfer_time(m, hops=bin(j).count("1")) for j in range(1, p))


@register(operation="alltoall", cost=ecube_cost, exact=True, network_for=Hypercube.of_size,
          tex=r"(t_s + t_w m)(p - 1) + t_h \frac{p}{2} \log_2 p",
          valid_p=_power_of_two("all_to_all_personal_hcube_ecube"),
          source="Grama et al. 2003, §4.5.3, Algorithm 4.10, Fig. 4.21, Eq. 4.10")
def all_to_all_personal_hcube_ecube(me, p, data):
    """All-to-all personalized on a hypercube with pairwise exchanges and E-cube routing.

    Grama et al. 2003, ``ALL_TO_ALL_PERSONAL`` (Algorithm 4.10): for
    i = 1 to 2**d - 1, partner := my_id XOR i; send M[my_id, partner] to the
    partner and receive M[partner, my_id] from it.  The partners of step i
    are not neighbours; E-cube routing (the network's ``path``) sends a
    message through the dimensions of the bits of i from the lowest up, so
    in each step no directed link carries two messages (Fig. 4.21).  p a
    power of two, full-duplex, cut-through routing; time
    (ts + tw m)(p - 1) (Eq. 4.10) with th = 0, plus th (p/2) log p otherwise.
    """
    check_power_of_two("all_to_all_personal_hcube_ecube", p)
    msgs, m = _uniform_messages("all_to_all_personal_hcube_ecube", data, p)
    return (yield from _exchange_with("all_to_all_personal_hcube_ecube", me, msgs, m,
                                      (me ^ i for i in range(1, p))))


def direct_indirect_crossover(p, model):
    """The message length m* (words) above which direct delivery beats the hypercube's indirect one.

    Equates the direct (p - 1)(ts + tw m) (Sanders Eq. 13.3, Grama Eq. 4.10)
    with the indirect log p (ts + tw m p/2) (Eq. 13.4, Eq. 4.9):

        m* = ts (p - 1 - log p) / (tw (p/2 log p - (p - 1)))

    For m < m* the indirect algorithm is faster, for m > m* the direct one
    (Grama §4.5.3: "for small messages ... the first algorithm may still be
    useful").  ``ts`` here includes ``th`` (one hop per transfer).  For p <= 2
    both are the same single exchange and m* = 0; with tw = 0 the indirect
    algorithm always wins and m* is infinite.  p must be a power of two.

    >>> from collective_lib import CostModel
    >>> round(direct_indirect_crossover(16, CostModel(ts=100, tw=1)), 4)     # 1100 / 17
    64.7059
    """
    d = check_power_of_two("direct_indirect_crossover", p)
    startups_saved = p - 1 - d
    words_added = d * p // 2 - (p - 1)
    if startups_saved == 0:
        return 0.0
    if model.tw == 0:
        return math.inf
    return model.transfer_time(0, hops=1) * startups_saved / (model.tw * words_added)


# -- Grama's ring and mesh ----------------------------------------------------------------

def _ring_personal(pos, q, blocks, words, left, right):
    """Grama §4.5.1 among q PEs of a ring, this PE at position ``pos``.

    ``blocks[t]`` is for the PE at position t, each ``words`` long.  All
    PEs send to the right.  Returns the q blocks destined for this PE,
    indexed by their source's position.
    """
    received = [None] * q
    received[pos] = blocks[pos]
    msg = [blocks[(pos + s) % q] for s in range(1, q)]       # consolidated, nearest first
    for s in range(1, q):
        msg = yield sendrecv(right, msg, left, words=len(msg) * words)
        received[(pos - s) % q] = msg[0]    # the first packet came from s positions left, for me
        msg = msg[1:]                       # forward the other q - s - 1
    return received


def personal_ring_cost(p, m, model, **_):
    """sum_{i=1..p-1} (ts + tw m (p - i)) = (ts + tw m p/2)(p - 1), Grama Eq. 4.7; exact."""
    return sum(model.transfer_time(m * (p - i)) for i in range(1, p))


@register(operation="alltoall", cost=personal_ring_cost, exact=True, network_for=Ring,
          tex=r"(t_s + t_w m p/2)(p - 1)",
          source="Grama et al. 2003, §4.5.1, Fig. 4.18, Eq. 4.7")
def all_to_all_personal_ring(me, p, data):
    """All-to-all personalized on a ring: one consolidated message that shrinks by m each step.

    Grama et al. 2003, §4.5.1, Fig. 4.18: every PE sends its p - 1 packets,
    nearest destination first, as one message of m(p - 1) words to its
    right neighbour.  In step i a PE keeps the first packet of what it
    received (it comes from the PE i places to its left) and forwards the
    rest, so step i moves m(p - i) words.  Any p, full-duplex, all messages
    in one direction; time (ts + tw m p/2)(p - 1) (Eq. 4.7).  Sending half
    the packets each way would halve the tw term; Grama ignores that, and
    :func:`all_to_all_personal_ring_bidirectional` does it.
    """
    msgs, m = _uniform_messages("all_to_all_personal_ring", data, p)
    result = yield from _ring_personal(me, p, msgs, m, (me - 1) % p, (me + 1) % p)
    return _check_received("all_to_all_personal_ring", result, m)


def personal_ring_bidirectional_cost(p, m, model, **_):
    """(p - 1) ts + tw m floor(p^2 / 4): half of the packets each way, one direction per step.

    The right-going message starts with ceil((p - 1)/2) packets and the
    left-going one with floor((p - 1)/2), and each loses one packet per
    step, so the words moved are m (ceil((p-1)/2)(ceil((p-1)/2) + 1)
    + floor((p-1)/2)(floor((p-1)/2) + 1))/2 = m floor(p^2/4), against
    m p(p - 1)/2 for Eq. 4.7: the t_w term shrinks by the factor
    floor(p^2/4) / (p(p - 1)/2), which tends to 1/2 (Grama §4.5.1).  Exact.
    """
    return sum(model.transfer_time(m * k) for sent in (p // 2, (p - 1) // 2)
               for k in range(1, sent + 1))


@register(operation="alltoall", cost=personal_ring_bidirectional_cost, exact=True,
          tex=r"(p - 1) t_s + t_w m \lfloor p^2/4 \rfloor",
          network_for=Ring, source="Grama et al. 2003, §4.5.1, the remark after Fig. 4.18 "
                               "(half of the messages each way halves the t_w term)")
def all_to_all_personal_ring_bidirectional(me, p, data):
    """All-to-all personalized on a ring, half of the packets going each way.

    Grama et al. 2003, §4.5.1: after Fig. 4.18 they note that sending half
    of the packets in one direction and half in the other divides the t_w
    term of Eq. 4.7 by two, and leave it there.  Here a PE sends its packets
    for the ceil((p - 1)/2) PEs to its right as one consolidated message to
    the right, and those for the floor((p - 1)/2) PEs to its left as one to
    the left; each stream is the procedure of Fig. 4.18 (keep the first
    packet, forward the rest).  With one send and one receive at a time
    (full-duplex, Grama's model) the two directions take turns: right,
    left, right, ...; step s of either direction moves one packet fewer than
    the step before.  Any p; p - 1 steps, as Eq. 4.7, and time
    (p - 1) ts + tw m floor(p^2/4).  A PE with two ports could run both
    directions at once and save start-ups as well; this program does not.

    Examples
    --------
    >>> from collective_lib import simulate, CostModel, Ring
    >>> data = [[10 * i + j for j in range(5)] for i in range(5)]    # one word each
    >>> run = simulate(all_to_all_personal_ring_bidirectional, 5, data, network=Ring(5),
    ...                model=CostModel(ts=0, tw=1))
    >>> run.results[0], run.time            # floor(25 / 4) = 6 words, against 10 one way
    ([0, 10, 20, 30, 40], 6.0)
    """
    msgs, m = _uniform_messages("all_to_all_personal_ring_bidirectional", data, p)
    left, right = (me - 1) % p, (me + 1) % p
    result = [None] * p
    result[me] = msgs[me]
    east = [msgs[(me + s) % p] for s in range(1, p // 2 + 1)]            # nearest first
    west = [msgs[(me - s) % p] for s in range(1, (p - 1) // 2 + 1)]
    for s in range(1, p // 2 + 1):
        east = yield sendrecv(right, east, left, words=len(east) * m)
        result[(me - s) % p] = east[0]          # from s places to the left, for me
        east = east[1:]                         # forward the rest to the right
        if s <= (p - 1) // 2:
            west = yield sendrecv(left, west, right, words=len(west) * m)
            result[(me + s) % p] = west[0]      # from s places to the right, for me
            west = west[1:]
    return _check_received("all_to_all_personal_ring_bidirectional", result, m)


def _mesh_network(p):
    side = check_square("all_to_all_personal_mesh", p)
    return Mesh(side, side, wrap=True)


def _mesh_p(p):
    check_square("all_to_all_personal_mesh", p)


def rearranged_words_mesh(p, m):
    """Words a PE rearranges between the two phases of the mesh procedure: m p.

    Grama §4.5.2: the time t_r m p (Problem 4.21).

    >>> rearranged_words_mesh(9, 2)
    18
    """
    check_square("all_to_all_personal_mesh", p)
    return m * p


def personal_mesh_cost(p, m, model, tr=0.0, **_):
    """(2 ts + tw m p)(sqrt p - 1), Grama Eq. 4.8; exact on a square torus.

    Each phase is Eq. 4.7 on sqrt p PEs with messages of m sqrt p words.
    With ``tr > 0``, plus the rearrangement t_r m p.
    """
    side = check_square("all_to_all_personal_mesh", p)
    phase = sum(model.transfer_time(side * m * (side - i)) for i in range(1, side))
    return 2 * phase + _check_tr(tr) * rearranged_words_mesh(p, m)


@register(operation="alltoall", cost=personal_mesh_cost, exact=True, network_for=_mesh_network,
          tex=r"(2 t_s + t_w m p)(\sqrt{p} - 1)",
          valid_p=_mesh_p, params={"tr": 0.0},
          source="Grama et al. 2003, §4.5.2, Fig. 4.19, Eq. 4.8")
def all_to_all_personal_mesh(me, p, data, tr=0.0):
    """All-to-all personalized on a sqrt p x sqrt p torus: the ring procedure on rows, then columns.

    Grama et al. 2003, §4.5.2, Fig. 4.19.  A PE groups its p messages by
    the column of their destination (sqrt p groups of sqrt p messages).
    Phase 1: every row runs the ring procedure of §4.5.1 on these groups,
    so each PE ends up with, from every PE of its row, the group for its
    own column.  The PE then sorts these messages again, by the row of
    their destination (m p words; with ``tr > 0`` that costs ``tr`` per
    word).  Phase 2: every column runs the ring procedure on the new
    groups, and each PE holds the message of every PE.  p a perfect
    square, full-duplex, wrap-around links; time (2 ts + tw m p)(sqrt p - 1)
    (Eq. 4.8) plus the rearrangement t_r m p.
    """
    side = check_square("all_to_all_personal_mesh", p)
    msgs, m = _uniform_messages("all_to_all_personal_mesh", data, p)
    tr = _check_tr(tr)
    row, col = divmod(me, side)
    groups = [[msgs[r * side + c] for r in range(side)] for c in range(side)]   # [c][r]: to (r, c)
    # Phase 1, along my row: by_column[c][r] comes from PE (row, c) and is for PE (r, col)
    left = row * side + (col - 1) % side
    right = row * side + (col + 1) % side
    by_column = yield from _ring_personal(col, side, groups, side * m, left, right)
    # Local rearrangement: group by the row of the destination
    if tr:
        yield compute(tr * rearranged_words_mesh(p, m))
    groups = [[by_column[c][r] for c in range(side)] for r in range(side)]   # [r][c]: from (row, c)
    # Phase 2, along my column: by_row[r][c] comes from PE (r, c) and is for me
    up = (row - 1) % side * side + col
    down = (row + 1) % side * side + col
    by_row = yield from _ring_personal(row, side, groups, side * m, up, down)
    result = [x for group in by_row for x in group]
    return _check_received("all_to_all_personal_mesh", result, m)


# -- Bruck et al. 1997: log p rounds for any p ------------------------------------------------

def _bruck_blocks(p, k):
    """How many of the indices 0..p-1 have bit k set: the blocks sent in round k.

    >>> [_bruck_blocks(6, k) for k in range(3)]
    [3, 2, 2]
    """
    period = 2 << k
    return p // period * (1 << k) + max(0, p % period - (1 << k))


def bruck_alltoall_cost(p, m, model, **_):
    """sum_{k < ceil(log2 p)} (ts + tw m b_k), b_k = #{j < p : bit k of j is 1}; exact.

    Every b_k <= floor(p/2), with equality for every k when p is a power of
    two, so this is at most ceil(log2 p)(ts + tw m floor(p/2))
    (:func:`bruck_alltoall_bound`), and equal to it for p a power of two.
    """
    return sum(model.transfer_time(m * _bruck_blocks(p, k)) for k in range(ceil_log2(p)))


def bruck_alltoall_bound(p, m, model):
    """ceil(log2 p)(ts + tw m floor(p/2)): the simpler upper bound on Bruck's time."""
    return ceil_log2(p) * model.transfer_time(m * (p // 2))


@register(operation="alltoall", cost=bruck_alltoall_cost, exact=True,
          tex=r"\sum_{i=0}^{\lceil \log_2 p \rceil - 1} (t_s + t_w m b_i)",
          source="Bruck, Ho, Kipnis, Upfal, Weathersby, IEEE TPDS 8(11), 1997, "
                 "index algorithm (one port)")
def bruck_alltoall(me, p, data):
    """Bruck's all-to-all for any p: ceil(log2 p) rounds of indirect delivery.

    Bruck et al. 1997, the index algorithm with one port.  Phase 1, a local
    rotation: block[j] := my message for PE me + j, so block j has j
    positions to travel.  Phase 2: in round k = 0 .. ceil(log2 p) - 1 send
    the blocks whose index j has bit k set to PE me + 2**k, and take the
    blocks with the same indices from PE me - 2**k.  A block moves by 2**k
    for each bit of its index, j positions in all, and keeps its index, so
    it ends on its destination.  Phase 3, the inverse rotation: block[j]
    came from PE me - j.  Any p, full-duplex, fully connected; time
    sum over rounds of (ts + tw m b_k), at most
    ceil(log2 p)(ts + tw m floor(p/2)).
    """
    msgs, m = _uniform_messages("bruck_alltoall", data, p)
    block = [msgs[(me + j) % p] for j in range(p)]           # phase 1: rotate up by me
    for k in range(ceil_log2(p)):                            # phase 2
        dist = 1 << k
        moving = [j for j in range(p) if j & dist]
        got = yield sendrecv((me + dist) % p, [block[j] for j in moving], (me - dist) % p,
                             words=len(moving) * m)
        for j, x in zip(moving, got):
            block[j] = x
    result = [block[(me - i) % p] for i in range(p)]         # phase 3: block[j] is from me - j
    return _check_received("bruck_alltoall", result, m)


# -- Example 4.2: matrix transposition ----------------------------------------------------------

def transpose_by_alltoall(A, p, algorithm="alltoall_cyclic", *, model=None, network=None):
    """Transpose a matrix distributed by rows over p PEs with an all-to-all personalized exchange.

    Grama et al. 2003, §4.5, Example 4.2 and Fig. 4.17: PE i holds the rows
    i r .. (i+1) r - 1 of the R x C matrix A (r = R/p).  Its block for PE j is
    the r x c piece in the columns of PE j (c = C/p); after the exchange PE j
    transposes each block it received and lays them side by side, which
    gives its c rows of A^T.  ``algorithm`` names a catalog entry of the
    operation ``"alltoall"``.  Returns ``(A^T, run)``.

    >>> import numpy as np
    >>> A = np.arange(16).reshape(4, 4)
    >>> AT, run = transpose_by_alltoall(A, 4)
    >>> bool((AT == A.T).all()), run.time
    (True, 3.0)
    """
    import numpy as np
    from ..catalog import catalog

    A = np.asarray(A)
    if A.ndim != 2:
        raise ValueError(f"transpose_by_alltoall needs a 2-D matrix, got shape {A.shape}")
    check_positive_int("p", p)
    rows, cols = A.shape
    if rows % p or cols % p:
        raise ValueError(f"p={p} must divide both dimensions of the {rows} x {cols} matrix")
    entry = catalog().get(algorithm)
    if entry is None or entry.operation != "alltoall":
        raise ValueError(f"{algorithm!r} is not an all-to-all personalized algorithm "
                         "of the catalog")
    r, c = rows // p, cols // p
    inputs = [[A[i * r:(i + 1) * r, j * c:(j + 1) * c] for j in range(p)] for i in range(p)]
    run = entry.simulate(p, inputs=inputs, model=model, network=network)
    AT = np.vstack([np.hstack([block.T for block in run.results[j]]) for j in range(p)])
    return AT, run
