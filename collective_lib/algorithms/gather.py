"""Gather, scatter and all-gather (Sanders §13.5).

Every PE i owns a message m_i (the catalog's inputs are lists of m ints).

* gather: the root returns the list ``[m_0, m_1, ..., m_(p-1)]``, indexed by
  real rank, every other PE ``None``;
* scatter: the root starts with that list and PE i returns ``m_i``;
* all-gather: every PE returns the list ``[m_0, ..., m_(p-1)]``.

A block of several messages travels as one message: a list of the messages
whose length in words is the sum of their lengths (the programs pass
``words=`` explicitly, since the simulator would otherwise count the list's
entries rather than their words).

Cost convention: communication only, alpha = ts, beta = tw, n = m words per
message.  Source: Sanders, Mehlhorn, Dietzfelbinger, Dementiev, Sequential and
Parallel Algorithms and Data Structures (2019), §13.5.1-13.5.2, Theorem 13.9,
Corollary 13.10, Fig. 13.11 and 13.12.
"""
from __future__ import annotations

from ..catalog import register
from ..networks import Hypercube
from ..ops import exchange, recv, send, sendrecv, size_in_words
from ..trees import binomial_children, binomial_parent, ceil_log2
from ..validate import check_power_of_two, check_root

__all__ = [
    "naive_gather", "binomial_gather", "binomial_scatter", "hypercube_allgather",
    "bruck_allgather", "binomial_gather_cost", "binomial_scatter_cost",
    "bruck_allgather_cost", "hypercube_allgather_cost", "naive_gather_cost",
]

#: Where this module's entries stand in the catalog (chapter 4; see collective_lib.algorithms).
CATALOG_POSITION = 40


def _block_words(block):
    """Words of a block of messages: the sum of the messages' lengths."""
    return sum(size_in_words(x) for x in block)


def _by_real_rank(relative, root):
    """Reorder a list indexed by rank relative to ``root`` into one indexed by real rank.

    Real rank r has relative rank (r - root) mod p.

    >>> _by_real_rank(["r0", "r1", "r2", "r3"], root=1)
    ['r3', 'r0', 'r1', 'r2']
    """
    p = len(relative)
    return [relative[(r - root) % p] for r in range(p)]


# -- naive gather ----------------------------------------------------------------------

def naive_gather_cost(p, m, model, **_):
    """(p - 1)(alpha + beta m): the root receives p - 1 messages one after another; exact."""
    return (p - 1) * model.transfer_time(m)


@register(operation="gather", cost=naive_gather_cost, exact=True, params={"root": 0},
          tex=r"(p - 1)(t_s + t_w m)",
          source="Sanders et al. 2019, §13.5.1 (naive gather)")
def naive_gather(me, p, data, root=0):
    """Every PE sends its message straight to the root, which receives them in turn.

    Sanders et al. 2019, §13.5.1: "all PEs send their message directly to
    PE 0".  The root takes the messages in the order root+1, root+2, ...
    (mod p) and files each under its sender's rank.  Any network, one port:
    the root's port receives p - 1 messages of m words back to back, so the
    time is (p - 1)(alpha + beta m).
    """
    root = check_root(root, p)
    if me != root:
        yield send(root, data)
        return None
    gathered = [None] * p
    gathered[root] = data
    for i in range(1, p):
        sender = (root + i) % p
        gathered[sender] = yield recv(sender)
    return gathered


# -- binomial tree gather ------------------------------------------------------------------

def binomial_gather_cost(p, m, model, **_):
    """ceil(log2 p) alpha + (p - 1) m beta, Sanders Theorem 13.9; exact for every p and root.

    For p a power of two this is the theorem's sum over the levels.  For any
    other p the tree is cut at p, and the root still never waits: before it
    turns to child 2**j it has spent j alpha + (2**j - 1) m beta receiving the
    full subtrees of the smaller children, at least the time child 2**j needs
    to gather its (at most 2**j) messages.  So the root receives the p - 1
    messages' words in ceil(log2 p) transfers without a pause.
    """
    return ceil_log2(p) * model.transfer_time(0) + (p - 1) * m * model.tw


@register(operation="gather", cost=binomial_gather_cost, exact=True, params={"root": 0},
          tex=r"\lceil \log_2 p \rceil t_s + (p - 1) m t_w",
          source="Sanders et al. 2019, §13.5.1, Theorem 13.9, Fig. 13.12")
def binomial_gather(me, p, data, root=0):
    """Gather as a binomial tree reduction whose operator is concatenation.

    Sanders et al. 2019, §13.5.1: run the reduction of §13.2 with the
    concatenation of messages as the (associative) operator (Fig. 13.12).
    A PE of relative rank i = (me - root) mod p receives from its children
    smallest first, i + 1, i + 2, i + 4, ..., appending each child's block to
    its own, and sends the result to its parent; the block of relative rank i
    then holds relative ranks i .. i + 2**k - 1 in order (cut at p).  The
    messages grow on the way up: in level j of the tree (from the bottom)
    they are 2**j m words long.  The root finally reorders the blocks by real
    rank.  Any p, any root, one port; time ceil(log2 p) alpha + (p-1) m beta
    (Theorem 13.9).
    """
    root = check_root(root, p)
    i = (me - root) % p
    block = [data]
    for c in reversed(binomial_children(i, p)):          # smallest subtree first
        block += yield recv((c + root) % p)
    parent = binomial_parent(i)
    if parent is None:
        return _by_real_rank(block, root)
    yield send((parent + root) % p, block, words=_block_words(block))
    return None


# -- binomial tree scatter ------------------------------------------------------------------

def binomial_scatter_cost(p, m, model, **_):
    """ceil(log2 p) alpha + (p - 1) m beta, Sanders §13.5.2; exact for every p and root.

    The root's sends carry p - 1 messages in ceil(log2 p) transfers with no
    pause; each child, served largest subtree first, finishes its own subtree
    no later than the root finishes its last send (the gather's argument run
    backwards).
    """
    return ceil_log2(p) * model.transfer_time(0) + (p - 1) * m * model.tw


def _check_scatter_input(messages, p):
    if not isinstance(messages, (list, tuple)) or len(messages) != p:
        raise ValueError(f"the scatter root must hold a list of p = {p} messages, got "
                         f"{type(messages).__name__} {messages!r:.80}")
    return list(messages)


@register(operation="scatter", cost=binomial_scatter_cost, exact=True, params={"root": 0},
          tex=r"\lceil \log_2 p \rceil t_s + (p - 1) m t_w",
          source="Sanders et al. 2019, §13.5.2, Fig. 13.12")
def binomial_scatter(me, p, data, root=0):
    """Scatter down the binomial tree: each child gets the messages of its whole subtree.

    Sanders et al. 2019, §13.5.2, the dual of the gather: the binomial
    broadcast of §13.1.1, except that the message sent to the root of a
    subtree covering the nodes a..b is the concatenation m_a, ..., m_b.
    Relative ranks (me - root) mod p as in the broadcast; children are served
    largest subtree first; a PE keeps the first message of its block.  The
    messages shrink on the way down.  Any p, any root, one port; time
    ceil(log2 p) alpha + (p - 1) m beta.
    """
    root = check_root(root, p)
    i = (me - root) % p
    if i == 0:
        messages = _check_scatter_input(data, p)
        block = [messages[(root + r) % p] for r in range(p)]   # block[r]: relative rank r
    else:
        block = yield recv((binomial_parent(i) + root) % p)
    for c in binomial_children(i, p):                    # largest subtree first
        part = block[c - i:]                             # relative ranks c .. end of my block
        del block[c - i:]
        yield send((c + root) % p, part, words=_block_words(part))
    return block[0]


# -- hypercube all-gather --------------------------------------------------------------------

def hypercube_allgather_cost(p, m, model, **_):
    """alpha log2 p + (p - 1) m beta, Sanders Corollary 13.10; exact, full-duplex exchanges."""
    d = check_power_of_two("hypercube_allgather", p)
    return d * model.transfer_time(0) + (p - 1) * m * model.tw


def _hypercube_allgather_p(p):
    check_power_of_two("hypercube_allgather", p)


@register(operation="allgather", cost=hypercube_allgather_cost, exact=True,
          tex=r"t_s \log_2 p + (p - 1) m t_w",
          network_for=Hypercube.of_size, valid_p=_hypercube_allgather_p,
          source="Sanders et al. 2019, §13.5.1, Corollary 13.10, Fig. 13.11")
def hypercube_allgather(me, p, data):
    """All-gather as the hypercube all-reduce with concatenation as the operator.

    Sanders et al. 2019, §13.5.1 and Fig. 13.11: for i = 0 .. d-1 exchange
    the block gathered so far with PE me XOR 2**i and concatenate, the block
    of the lower-ranked half first.  After step i every PE holds the
    messages of its aligned subcube of 2**(i+1) PEs, in rank order, so the
    block doubles each step (2**i m words are sent in step i).  p must be a
    power of two; full-duplex exchanges between hypercube neighbours; time
    alpha log p + (p - 1) m beta (Corollary 13.10).
    """
    d = check_power_of_two("hypercube_allgather", p)
    block = [data]
    for i in range(d):
        theirs = yield exchange(me ^ (1 << i), block, words=_block_words(block))
        block = theirs + block if me & (1 << i) else block + theirs
    return block


# -- Bruck's all-gather (any p) --------------------------------------------------------------

def bruck_allgather_cost(p, m, model, **_):
    """ceil(log2 p) alpha + (p - 1) m beta; exact for every p, full-duplex.

    Round k moves min(2**k, p - 2**k) messages of m words; over the
    ceil(log2 p) rounds these add up to p - 1 messages, and every PE sends and
    receives blocks of the same length in the same round, so no PE ever waits.
    """
    return ceil_log2(p) * model.transfer_time(0) + (p - 1) * m * model.tw


@register(operation="allgather", cost=bruck_allgather_cost, exact=True,
          tex=r"\lceil \log_2 p \rceil t_s + (p - 1) m t_w",
          source="Bruck, Ho, Kipnis, Upfal, Weathersby, IEEE TPDS 8(11), 1997 (the "
                 "concatenation algorithm, one port); cost as Sanders et al. 2019, Cor. 13.10")
def bruck_allgather(me, p, data):
    """All-gather for any p in ceil(log2 p) rounds: pass on a doubling prefix, then rotate.

    Bruck, Ho, Kipnis, Upfal and Weathersby (1997), the concatenation (index-free
    all-gather) algorithm for one port, which MPI libraries use for short
    messages.  ``block[t]`` holds the message of PE (me + t) mod p.  In round
    k (distance s = 2**k) a PE sends the first min(s, p - s) entries of its
    block to PE me - s and appends the entries that PE me + s sends it, so
    after the round it holds the messages of PEs me .. me + 2s - 1 (cut at p).
    A final local rotation files every message under its sender's rank.  Any
    p, fully connected network, full-duplex sendrecv; time
    ceil(log2 p) alpha + (p - 1) m beta, the hypercube all-gather's time
    (Sanders Corollary 13.10) without its power-of-two restriction.
    """
    block = [data]
    s = 1
    while s < p:
        count = min(s, p - s)
        outgoing = block[:count]
        block += yield sendrecv((me - s) % p, outgoing, (me + s) % p,
                                words=_block_words(outgoing))
        s *= 2
    return [block[(r - me) % p] for r in range(p)]                # the final rotation
