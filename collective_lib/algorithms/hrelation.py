"""All-to-all with non-uniform message sizes: routing an h-relation (chapter 5).

The operation ``"alltoallv"``: PE i holds a list of p messages, ``data[j]``
being its message m_ij for PE j, a list of words whose length varies from
message to message (it may be empty); PE j returns the list of the p messages
destined for it, indexed by source: ``result[i]`` is PE i's ``data[j]``.

How hard such an exchange is depends on its bottleneck volume (Sanders
§13.6.3)

    h = max_i max(sum_j |m_ij|, sum_j |m_ji|),

the most words one PE must send or receive; the problem is called an
*h-relation*.  A PE's message to itself never leaves its memory, so here the
sums run over j != i (:func:`bottleneck_volume`).  Full-duplex, one word per
time beta, every exchange needs at least ``h beta``.

Two ways to route it:

* :func:`alltoallv_two_phase`, Sanders' reduction to two uniform all-to-all
  exchanges (Eq. 13.5, Fig. 13.15): cut every message into p pieces, send
  piece k to PE k, and let PE k forward it;
* :func:`alltoallv_edge_coloring`, Sanders' scheduling view: the packets form
  a bipartite multigraph of maximum degree h (:func:`h_relation_multigraph`),
  whose h-edge-colouring (König; :func:`color_bipartite_multigraph`) is a
  schedule of h steps in which every PE sends and receives at most one packet
  (:func:`coloring_schedule`); :func:`deliver_schedule` runs a given schedule.
  The multigraph and its colourings live in :mod:`collective_lib.coloring`
  (Exercise 13.12: schedules are colourings) and are importable from here too.

Catalog convention: for ``"alltoallv"`` the catalog's ``m`` is h.  Its random
inputs (:func:`~collective_lib.collectives.random_h_relation`, declared with
the operation in :mod:`collective_lib.collectives` and importable from here
too) have h = m exactly on p >= 2 PEs, with
messages of very different lengths, many empty ones and a hot receiver that
takes m words.  Costs are communication only (alpha = ts, beta = tw).

Sources: Sanders, Mehlhorn, Dietzfelbinger, Dementiev, Sequential and Parallel
Algorithms and Data Structures (2019), §13.6 (Eq. 13.5) and §13.6.3
(Fig. 13.15, the bipartite multigraph H and its edge colouring); König's
edge-colouring theorem for bipartite multigraphs; Bruck et al., IEEE TPDS
8(11), 1997 for the all-gather the programs use to agree on sizes.
"""
from __future__ import annotations

from dataclasses import dataclass
from numbers import Integral

import numpy as np

from ..catalog import register
from ..coloring import (Transfer, check_edge_coloring, check_size_matrix,
                        color_bipartite_multigraph, coloring_schedule, coloring_to_schedule,
                        h_relation_multigraph, idle_steps_last, pad_to_regular,
                        schedule_to_coloring, step_partners)
from ..collectives import random_h_relation
from ..ops import recv, send, sendrecv, size_in_words
from ..trees import ceil_log2
from ..validate import check_messages
from .gather import bruck_allgather
from .personalized import alltoall_cyclic

__all__ = [
    "alltoallv_two_phase", "alltoallv_edge_coloring", "deliver_schedule", "message_sizes",
    "bottleneck_volume", "random_h_relation", "two_phase_bundle_words", "eq_13_5_bound",
    "alltoallv_edge_coloring_cost", "alltoallv_two_phase_cost", "edge_coloring_delivery_cost",
    # the multigraph and its colourings, from collective_lib.coloring
    "h_relation_multigraph", "color_bipartite_multigraph", "check_edge_coloring",
    "pad_to_regular", "Transfer", "coloring_schedule", "schedule_to_coloring",
    "coloring_to_schedule", "idle_steps_last",
]

#: Where this module's entries stand in the catalog (chapter 5; see collective_lib.algorithms).
CATALOG_POSITION = 52


# -- sizes and h ---------------------------------------------------------------------------


def message_sizes(inputs) -> list:
    """The p x p matrix of message lengths in words: ``sizes[i][j] = |m_ij|``.

    Examples
    --------
    >>> message_sizes([[[7], [1, 2, 3]], [[], [4]]])
    [[1, 3], [0, 1]]
    """
    p = len(inputs)
    return [[size_in_words(x) for x in _check_messages("message_sizes", row, p)]
            for row in inputs]


def bottleneck_volume(sizes) -> int:
    """h, the most words one PE sends or receives (Sanders §13.6.3), self-messages excluded.

    Parameters
    ----------
    sizes : p x p matrix of non-negative ints
        ``sizes[i][j]`` words go from PE i to PE j (see :func:`message_sizes`).

    Examples
    --------
    >>> bottleneck_volume([[9, 2, 1],
    ...                    [0, 0, 4],
    ...                    [3, 0, 0]])     # PE 2 receives 1 + 4 words; the 9 stay on PE 0
    5
    """
    a = check_size_matrix(sizes)
    np.fill_diagonal(a, 0)
    if a.size == 0:
        return 0
    return int(max(a.sum(axis=1).max(), a.sum(axis=0).max()))


# -- checking an input --------------------------------------------------------------------------

def _check_messages(algorithm, data, p) -> list:
    """A PE's input: p messages, each a list (or tuple) of words."""
    data = check_messages(algorithm, data, p)
    for j, message in enumerate(data):
        if not isinstance(message, (list, tuple)):
            raise ValueError(f"{algorithm}: the message for PE {j} must be a list of words "
                             f"(maybe empty), got {message!r:.80}")
    return list(data)


def _agreement_cost(p, model):
    """Bruck's all-gather of one word per PE: ceil(log2 p) alpha + (p - 1) beta."""
    return ceil_log2(p) * model.ts + (p - 1) * model.tw


# -- two phases of uniform all-to-all: Sanders §13.6.3 ------------------------------------------

@dataclass(frozen=True)
class _Bundle:
    """One message of a phase: pieces by the index they are filed under, charged ``size`` words.

    ``size`` is what the simulator charges (``size_in_words`` reads it): the
    exchange is uniform, so every bundle of a phase is padded to the same size.
    """
    pieces: dict
    size: int


def _pieces(message, p) -> list:
    """Cut a message into p pieces of ceil(|m| / p) words (the last ones may be short or empty).

    >>> _pieces(list(range(7)), 3)
    [[0, 1, 2], [3, 4, 5], [6]]
    """
    width = -(-len(message) // p)
    return [list(message[k * width:(k + 1) * width]) for k in range(p)]


def _bundle_words(pieces, p) -> int:
    """p header fields (where the pieces begin) plus the pieces' words, Sanders §13.6.3."""
    return p + sum(len(x) for x in pieces.values())


def two_phase_bundle_words(sizes) -> tuple:
    """The padded message sizes (N1, N2) of the two uniform exchanges of :func:`alltoallv_two_phase`.

    N1 is the largest |m_i*k| = p + sum_j |m_ijk| over all i, k, and N2 the
    largest |m_*jk| = p + sum_i |m_ijk| over all j, k; both are at most
    h/p + 2p (Sanders §13.6.3).

    Examples
    --------
    >>> two_phase_bundle_words([[0, 7, 0], [0, 0, 0], [2, 0, 0]])   # p = 3, h = 7
    (6, 6)
    """
    a = check_size_matrix(sizes)
    p = len(a)
    np.fill_diagonal(a, 0)
    width = -(-a // p)                                       # ceil(|m_ij| / p)
    k = np.arange(p)
    piece = np.clip(a[:, :, None] - width[:, :, None] * k, 0, width[:, :, None])  # |m_ijk|
    return p + int(piece.sum(axis=1).max(initial=0)), p + int(piece.sum(axis=0).max(initial=0))


def eq_13_5_bound(p, h, model) -> float:
    """Sanders Eq. 13.5 with direct delivery: 2 T_all->all(h/p + 2p) = 2 (p - 1)(alpha + (h/p + 2p) beta).

    Examples
    --------
    >>> from collective_lib import CostModel
    >>> eq_13_5_bound(4, 8, CostModel(ts=1.0, tw=1.0))    # 2 * 3 * (1 + 2 + 8)
    66.0
    """
    return 2 * (p - 1) * (model.ts + (h / p + 2 * p) * model.tw)


def alltoallv_two_phase_cost(p, m, model, **_):
    """Eq. 13.5 plus two size agreements: 2 (ceil(log p) alpha + (p-1) beta) + 2 (p-1)(alpha + (h/p + 2p) beta).

    A bound, with h = m (0 for p = 1).  Each phase is the direct-delivery all-to-all
    (Eq. 13.3) on messages padded to the phase's largest one, at most
    h/p + 2p words; before each phase the PEs agree on that size with an
    all-gather of one word.
    """
    return 2 * _agreement_cost(p, model) + eq_13_5_bound(p, m if p > 1 else 0, model)


def _largest(me, p, words):
    """Every PE learns the largest of the p values ``words`` (an all-gather of one word)."""
    return max((yield from bruck_allgather(me, p, words)))


@register(operation="alltoallv", cost=alltoallv_two_phase_cost, exact=False,
          tex=(r"2\bigl(\lceil \log_2 p \rceil t_s + (p - 1) t_w\bigr) "
               r"+ 2(p - 1)\bigl(t_s + (h/p + 2p) t_w\bigr)"),
          source="Sanders et al. 2019, §13.6.3, Eq. 13.5, Fig. 13.15")
def alltoallv_two_phase(me, p, data):
    """Non-uniform all-to-all as two uniform all-to-all exchanges through intermediate PEs.

    Sanders et al. 2019, §13.6.3 and Fig. 13.15.  Cut every message m_ij
    (j != i) into p pieces m_ijk of ceil(|m_ij| / p) words.  Phase 1: PE i
    sends to every PE k the message m_i*k, the pieces m_ijk for all j behind
    p header fields.  Phase 2: PE k sends to every PE j the message m_*jk,
    the pieces m_ijk for all i, again behind p header fields.  PE j then
    joins the pieces m_ij0, m_ij1, ... back into m_ij.  A message to oneself
    stays local.  Both phases run :func:`~collective_lib.algorithms.personalized.alltoall_cyclic`,
    which exchanges messages of one size, so each phase pads its messages to
    the largest one, whose size the PEs first agree on with a one-word
    all-gather (:func:`~collective_lib.algorithms.gather.bruck_allgather`).
    Every message of a phase has at most h/p + 2p words, so each phase costs
    at most T_all->all(h/p + 2p) (Eq. 13.5).  Any p, full-duplex, fully
    connected; time at most 2 (ceil(log p) alpha + (p-1) beta)
    + 2 (p - 1)(alpha + (h/p + 2p) beta) (:func:`two_phase_bundle_words`
    gives the padded sizes, which make it exact).

    Examples
    --------
    >>> from collective_lib import simulate
    >>> data = [[[], [1, 2, 3, 4]], [[5], []]]
    >>> simulate(alltoallv_two_phase, 2, data).results
    [[[], [5]], [[1, 2, 3, 4], []]]
    """
    messages = _check_messages("alltoallv_two_phase", data, p)
    # Phase 1: piece m_ijk travels to PE k, filed under its destination j.
    outgoing = [{} for _ in range(p)]
    for j, message in enumerate(messages):
        if j != me and message:
            for k, piece in enumerate(_pieces(message, p)):
                if piece:
                    outgoing[k][j] = piece
    width = yield from _largest(me, p, max(_bundle_words(x, p) for x in outgoing))
    arrived = yield from alltoall_cyclic(me, p, [_Bundle(x, width) for x in outgoing])
    # Phase 2: PE k forwards piece m_ijk to PE j, filed under its source i.
    forward = [{} for _ in range(p)]
    for i, bundle in enumerate(arrived):
        for j, piece in bundle.pieces.items():
            forward[j][i] = piece
    width = yield from _largest(me, p, max(_bundle_words(x, p) for x in forward))
    arrived = yield from alltoall_cyclic(me, p, [_Bundle(x, width) for x in forward])
    # Join m_ij0, m_ij1, ..., m_ij(p-1) back into m_ij.
    result = [[] for _ in range(p)]
    for bundle in arrived:                                   # k = 0, 1, ..., p - 1
        for i, piece in bundle.pieces.items():
            result[i] += piece
    result[me] = list(messages[me])
    return result


# -- delivering the schedule: alltoallv_edge_coloring ---------------------------------------

_last_plan = {"key": None, "p": None, "plan": None}


def _steps_plan(steps, p) -> list:
    """Per PE, (dst, dst_is_dummy, src, src_is_dummy) of each step it takes part in.

    A PE paired with itself (a dummy) idles in that step; ``None`` marks a
    direction the PE does not use.  A ValueError names a step in which a PE
    is busy twice, a PE out of range, or a real packet to oneself.
    """
    plan = [[] for _ in range(p)]
    for c, step in enumerate(steps):
        sending, receiving = step_partners(step, c)
        for t in sending.values():
            if not all(isinstance(x, Integral) and 0 <= x < p for x in (t.src, t.dst)):
                raise ValueError(f"step {c + 1} (colour {c}): the transfer {tuple(t)!r} names "
                                 f"a PE outside 0..{p - 1}")
            if t.src == t.dst and not t.dummy:
                raise ValueError(f"step {c + 1} (colour {c}): PE {t.src} sends a packet to "
                                 f"itself; a message to oneself stays local")
        busy = {pe for pe, t in sending.items() if t.dst != pe}
        busy |= {pe for pe, t in receiving.items() if t.src != pe}
        for pe in sorted(busy):
            out, into = sending.get(pe), receiving.get(pe)
            out = (None, True) if out is None or out.dst == pe else (out.dst, out.dummy)
            into = (None, True) if into is None or into.src == pe else (into.src, into.dummy)
            plan[pe].append((*out, *into))
    return plan


def _shared_plan(key, make_steps, p):
    """The per-PE plans of the steps ``make_steps()``, computed once for all PEs.

    Every PE holds the same ``key`` (the gathered rows of sizes, or the
    schedule itself): the simulator runs all PEs in one process and they
    hold the very same objects, so the plan of the last call is reused when
    the key's items are identical, instead of being recomputed p times.
    """
    last = _last_plan["key"]
    if (last is not None and _last_plan["p"] == p and len(last) == len(key)
            and all(a is b for a, b in zip(last, key))):
        return _last_plan["plan"]
    plan = _steps_plan(make_steps(), p)
    _last_plan.update(key=key, p=p, plan=plan)
    return plan


def _run_plan(me, p, messages, plan):
    """Send and receive one word per step of ``plan`` (a PE's part of a schedule)."""
    next_word = [0] * p
    result = [[] for _ in range(p)]
    for dst, dst_dummy, src, src_dummy in plan:
        word = None
        if not dst_dummy:
            if next_word[dst] >= len(messages[dst]):
                raise ValueError(f"the schedule makes PE {me} send more packets to PE {dst} "
                                 f"than its message of {len(messages[dst])} words holds")
            word = messages[dst][next_word[dst]]
            next_word[dst] += 1
        if dst is not None and src is not None:
            got = yield sendrecv(dst, word, src, words=1)
        elif dst is not None:
            got = yield send(dst, word, words=1)
        else:
            got = yield recv(src)
        if not src_dummy:
            result[src].append(got)
    short = [j for j in range(p) if j != me and next_word[j] != len(messages[j])]
    if short:
        raise ValueError(f"the schedule sends {next_word[short[0]]} packets from PE {me} to "
                         f"PE {short[0]}, but its message has {len(messages[short[0]])} words")
    result[me] = list(messages[me])
    return result


def deliver_schedule(me, p, data, steps):
    """Deliver an h-relation of one-word packets in the steps of a given schedule.

    Sanders et al. 2019, §13.6.3 and Exercise 13.12: ``steps[c]`` lists the
    transfers of step c (:class:`~collective_lib.coloring.Transfer`, e.g.
    from :func:`~collective_lib.coloring.coloring_to_schedule` of a
    colouring); in each step a PE sends its next word to the ``dst`` of its
    transfer and receives one from the ``src`` of another (``sendrecv``), so
    every PE sends and receives at most one word per step, and a message's
    words arrive in order.  Every PE is given the same ``steps``; a dummy
    transfer carries a word that is thrown away.  A message to oneself stays
    local.  Raises a ValueError naming the step or the PE where the schedule
    breaks the rules or does not fit ``data``.

    Time: exactly ``len(steps)`` (alpha + beta), i.e. h (alpha + beta) for
    an h-colouring (:func:`edge_coloring_delivery_cost`), when the steps run
    in lockstep: every step complete (each PE sends and receives, real or
    dummy, as in a colouring of
    :func:`~collective_lib.coloring.pad_to_regular`'s completion) except that
    a PE may pair with itself in the last steps
    (:func:`~collective_lib.coloring.idle_steps_last`).  Otherwise it can
    take longer: sends are eager, so a PE idle in one step sends its next
    packet early and may hold a receiver's port when another PE needs it.

    Examples
    --------
    >>> from collective_lib import simulate, CostModel
    >>> data = [[[], [1, 2], [3]], [[4], [], []], [[5, 6], [], []]]
    >>> steps = coloring_schedule(message_sizes(data), pad=True)
    >>> run = simulate(deliver_schedule, 3, data, steps=steps, model=CostModel(ts=1, tw=1))
    >>> run.results[0], len(steps), run.time     # h = 3 steps of alpha + beta
    ([[], [4], [5, 6]], 3, 6.0)
    """
    messages = _check_messages("deliver_schedule", data, p)
    if not isinstance(steps, (list, tuple)):
        raise ValueError(f"deliver_schedule needs steps=[[Transfer, ...], ...], got {steps!r:.80}")
    plan = _shared_plan(steps, lambda: steps, p)[me]
    return (yield from _run_plan(me, p, messages, plan))


def edge_coloring_delivery_cost(h, model) -> float:
    """h (alpha + beta): the h one-word steps of the colouring schedule."""
    return h * (model.ts + model.tw)


def alltoallv_edge_coloring_cost(p, m, model, **_):
    """ceil(log p) alpha + (p - 1) p beta + h (alpha + beta), h = m, packets of one word; exact.

    The first two terms are Bruck's all-gather of the p x p size matrix (p
    words per PE), the last the h steps of the schedule.  A single PE has
    nothing to send (h = 0).
    """
    h = m if p > 1 else 0
    return ceil_log2(p) * model.ts + (p - 1) * p * model.tw + edge_coloring_delivery_cost(h, model)


@register(operation="alltoallv", cost=alltoallv_edge_coloring_cost, exact=True,
          tex=r"\lceil \log_2 p \rceil t_s + (p - 1) p t_w + h(t_s + t_w)",
          source="Sanders et al. 2019, §13.6.3 (edge colouring of the bipartite multigraph H); "
                 "König's theorem")
def alltoallv_edge_coloring(me, p, data):
    """Route an h-relation in h steps of one-word packets, scheduled by an edge colouring.

    Sanders et al. 2019, §13.6.3: with packets of one word, the edges of the
    bipartite multigraph H (:func:`h_relation_multigraph`) coloured with h
    colours (:func:`color_bipartite_multigraph`) give h steps in which every
    PE sends at most one packet and receives at most one
    (:func:`coloring_schedule`).  The schedule needs every message length,
    so the PEs first all-gather their rows of the size matrix
    (:func:`~collective_lib.algorithms.gather.bruck_allgather`, p words per
    PE); each PE then computes the same schedule and runs its part of it.
    The schedule colours the h-regular completion of H
    (:func:`pad_to_regular`), so in every step each PE sends one packet and
    receives one, real or a one-word dummy: no PE runs ahead and takes a
    port another PE needs in the current step, and the h steps run in
    lockstep.  A message to oneself stays local.  Any p, full-duplex, fully connected; time
    ceil(log p) alpha + (p - 1) p beta + h (alpha + beta), which meets the
    lower bound h beta for the delivery itself but pays p^2 words to learn
    the sizes.

    Examples
    --------
    >>> from collective_lib import simulate, CostModel
    >>> data = [[[], [1, 2], [3]], [[4], [], []], [[5, 6], [], []]]
    >>> run = simulate(alltoallv_edge_coloring, 3, data, model=CostModel(ts=1, tw=0))
    >>> run.results[0], run.time               # 2 rounds to learn the sizes, h = 3 steps
    ([[], [4], [5, 6]], 5.0)
    """
    messages = _check_messages("alltoallv_edge_coloring", data, p)
    row = tuple(0 if j == me else size_in_words(x) for j, x in enumerate(messages))
    rows = yield from bruck_allgather(me, p, row)           # every PE learns every size
    plan = _shared_plan(rows, lambda: coloring_schedule(rows, pad=True), p)[me]
    return (yield from _run_plan(me, p, messages, plan))
