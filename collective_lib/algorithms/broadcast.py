"""One-to-all broadcast (chapter 1).

The root PE holds a message of m words; afterwards every PE holds it.  Every
program here returns the message on every PE.  Sources: Sanders et al.,
Sequential and Parallel Algorithms and Data Structures (2019), §13.1;
Grama et al., Introduction to Parallel Computing (2003), §4.1, Eq. 4.1.
"""
from __future__ import annotations

import math

import numpy as np

from ..catalog import register, register_operation
from ..networks import Hypercube
from ..ops import recv, send, sendrecv
from ..packets import join_packets, packet_words, split_packets
from ..trees import binomial_children, binomial_parent, ceil_log2, in_order_node, tree_height
from ..validate import check_positive_int, check_power_of_two, check_root


def _broadcast_inputs(p, m, rng, root=0, **_):
    message = rng.integers(0, 1000, size=check_positive_int("m", m)).tolist()
    return [message if i == root else None for i in range(p)]


def _broadcast_expected(inputs, root=0, **_):
    return [inputs[root]] * len(inputs)


register_operation("broadcast", make_inputs=_broadcast_inputs, expected=_broadcast_expected)


def _step(model, words):
    """One neighbour transfer of ``words`` words."""
    return model.transfer_time(words, hops=1)


# -- naive ------------------------------------------------------------------------------

def naive_broadcast_cost(p, m, model, **_):
    """(p - 1)(ts + tw m): the root sends p - 1 times in a row (Sanders §13.1)."""
    return (p - 1) * _step(model, m)


@register(operation="broadcast", cost=naive_broadcast_cost, exact=True, params={"root": 0},
          source="Sanders et al. 2019, §13.1 (the for-loop of p-1 sends)")
def naive_broadcast(me, p, data, root=0):
    """The root sends the message to each other PE in turn.

    Sanders et al. 2019, §13.1: "a for-loop and p - 1 send operations".  Any
    network, any port model; the root's port is the bottleneck, so the time is
    (p - 1)(ts + tw m).
    """
    root = check_root(root, p)
    if me == root:
        for i in range(1, p):
            yield send((root + i) % p, data)
        return data
    return (yield recv(root))


# -- binomial tree ------------------------------------------------------------------------

def binomial_broadcast_cost(p, m, model, **_):
    """ceil(log2 p)(ts + tw m), Sanders Theorem 13.1; exact for every p and root."""
    return ceil_log2(p) * _step(model, m)


def binomial_broadcast_reversed_cost(p, m, model, **_):
    """d(d+1)/2 (ts + tw m) for p = 2**d when the smallest child is served first."""
    d = ceil_log2(p)
    return d * (d + 1) // 2 * _step(model, m)


@register(operation="broadcast", cost=binomial_broadcast_cost, exact=True,
          params={"root": 0, "children_order": "largest-first"},
          source="Sanders et al. 2019, §13.1.1, Fig. 13.3, Theorem 13.1")
def binomial_broadcast(me, p, data, root=0, children_order="largest-first"):
    """Broadcast down the binomial tree, largest subtree first.

    Sanders et al. 2019, §13.1.1, ``Tree::broadcast``: receive from the parent
    (nothing on the root), then send to each child.  Ranks are taken relative
    to the root, ``(me - root) mod p``; a relative rank with k trailing zeros
    has children ``i + 2**j`` for j = k-1 down to 0, so any p works (Fig. 13.3).
    One port suffices (half- or full-duplex); time ceil(log2 p)(ts + tw m)
    (Theorem 13.1).  ``children_order="smallest-first"`` serves the children in
    the reverse order, the slow variant of Exercise 13.1.
    """
    root = check_root(root, p)
    if children_order not in ("largest-first", "smallest-first"):
        raise ValueError("children_order must be 'largest-first' or 'smallest-first', "
                         f"got {children_order!r}")
    i = (me - root) % p
    parent = binomial_parent(i)
    if parent is not None:
        data = yield recv((parent + root) % p)
    children = binomial_children(i, p)
    if children_order == "smallest-first":
        children.reverse()
    for c in children:
        yield send((c + root) % p, data)
    return data


# -- hypercube (Grama) -------------------------------------------------------------------

def hypercube_broadcast_cost(p, m, model, **_):
    """(ts + tw m) log p, Grama Eq. 4.1."""
    return ceil_log2(p) * _step(model, m)


def _hypercube_p(p):
    check_power_of_two("hypercube_broadcast", p)


@register(operation="broadcast", cost=hypercube_broadcast_cost, exact=True,
          network=Hypercube.of_size, valid_p=_hypercube_p, params={"root": 0},
          source="Grama et al. 2003, §4.1.3, Algorithms 4.1-4.2, Eq. 4.1")
def hypercube_broadcast(me, p, data, root=0):
    """One-to-all broadcast on a d-dimensional hypercube from any root.

    Grama et al. 2003, ``GENERAL_ONE_TO_ALL_BC`` (Algorithm 4.2): work with the
    virtual id ``me XOR root``; in iteration i (from d-1 down to 0) the PEs
    whose lower i bits are zero pair up across dimension i, and the one that
    already has the message sends it.  p must be a power of two; on a
    hypercube network every transfer is between neighbours, so the time is
    (ts + tw m) log p (Eq. 4.1).
    """
    d = check_power_of_two("hypercube_broadcast", p)
    root = check_root(root, p)
    virtual = me ^ root
    mask = p - 1
    for i in range(d - 1, -1, -1):
        mask ^= 1 << i                            # clear bit i: the PEs with low bits zero take part
        if virtual & mask == 0:
            partner = (virtual ^ (1 << i)) ^ root
            if virtual & (1 << i) == 0:
                yield send(partner, data)
            else:
                data = yield recv(partner)
    return data


# -- pipelined binary tree --------------------------------------------------------------

def pipelined_binary_tree_broadcast_cost(p, m, model, root=0, k=1, **_):
    """(2L + 3(k-1))(ts + tw ceil(m/k)), Sanders Lemma 13.2; L = the tree's height."""
    if p == 1:
        return 0.0
    height = tree_height(p, root)
    return (2 * height + 3 * (k - 1)) * _step(model, packet_words(m, k))


def _best_k(cost, p, m, model, **params):
    """The k in 1..m that minimizes ``cost`` (the first one on ties)."""
    m = check_positive_int("m", m)
    ks = np.arange(1, m + 1)
    times = [cost(p, m, model, **{**params, "k": int(k)}) for k in ks] if m <= 4096 else None
    if times is None:   # long messages: search around the calculus optimum of the smooth form
        guess = max(1.0, math.sqrt(max(model.tw, 1e-300) * m * max(p, 2) / max(model.ts, 1e-300)))
        window = np.unique(np.clip(np.round(np.geomspace(1, m, 400)), 1, m).astype(int).tolist()
                           + list(range(max(1, int(guess) - 64), min(m, int(guess) + 64) + 1)))
        times = [cost(p, m, model, **{**params, "k": int(k)}) for k in window]
        return int(window[int(np.argmin(times))])
    return int(ks[int(np.argmin(times))])


def pipelined_binary_tree_optimal_k(p, m, model, root=0, **_):
    """The number of packets that minimizes Lemma 13.2's bound (an integer in 1..m)."""
    return _best_k(pipelined_binary_tree_broadcast_cost, p, m, model, root=root)


def sanders_optimal_k(p, m, model, root=0):
    """Sanders' calculus optimum sqrt(beta n (2L - 3) / (3 alpha)) (§13.1.2), as a float."""
    height = tree_height(p, root)
    if model.ts == 0:
        return float(m)
    return math.sqrt(max(0.0, model.tw * m * (2 * height - 3)) / (3 * model.ts))


@register(operation="broadcast", cost=pipelined_binary_tree_broadcast_cost, exact=False,
          ports="half-duplex", params={"root": 0, "k": 1},
          optimal_k=pipelined_binary_tree_optimal_k,
          source="Sanders et al. 2019, §13.1.2-13.1.3, Fig. 13.4-13.5, Lemma 13.2, Theorem 13.3")
def pipelined_binary_tree_broadcast(me, p, data, root=0, k=1):
    """Pipeline k packets down the in-order binary tree of Fig. 13.5.

    Sanders et al. 2019, ``Tree::pipelinedBroadcast`` (§13.1.2): for each
    packet, receive it from the parent, then send it to the left and the right
    child.  The tree is the perfectly balanced in-order tree built by
    ``buildTree`` (§13.1.3).  Half-duplex model: a PE sends or receives one
    packet at a time.  Time at most (2L + 3(k-1))(alpha + beta ceil(n/k)),
    L the tree height (Lemma 13.2).
    """
    root = check_root(root, p)
    k = check_positive_int("k", k)
    node = in_order_node(me, p, root)
    children = [c for c in (node.left, node.right) if c is not None]
    packets = split_packets(data, k) if me == root else [None] * k
    for i in range(k):
        if node.parent is not None:
            packets[i] = yield recv(node.parent)
        for c in children:
            yield send(c, packets[i])
    return join_packets(packets)


# -- linear pipeline ------------------------------------------------------------------

def linear_pipeline_broadcast_cost(p, m, model, k=1, **_):
    """(p + k - 2)(ts + tw ceil(m/k)): the last packet leaves the root in step k and
    needs p - 2 more hops (Sanders §13.1.4 counts p + k - 1 steps, one more)."""
    if p == 1:
        return 0.0
    return (p + k - 2) * _step(model, packet_words(m, k))


def linear_pipeline_optimal_k(p, m, model, **_):
    """The number of packets that minimizes the linear pipeline's time."""
    return _best_k(linear_pipeline_broadcast_cost, p, m, model)


@register(operation="broadcast", cost=linear_pipeline_broadcast_cost, exact=True,
          params={"root": 0, "k": 1}, optimal_k=linear_pipeline_optimal_k,
          source="Sanders et al. 2019, §13.1.4 (Path::pipelinedBroadcast)")
def linear_pipeline_broadcast(me, p, data, root=0, k=1):
    """Pipeline k packets along the path root, root+1, ..., root-1 (mod p).

    Sanders et al. 2019, ``Path::pipelinedBroadcast`` (§13.1.4): receive the
    first packet, then receive packet i while forwarding packet i-1
    (``receive || send``), then forward the last.  Needs full-duplex ports.
    Time (p + k - 2)(alpha + beta ceil(n/k)) when k divides n.
    """
    root = check_root(root, p)
    k = check_positive_int("k", k)
    position = (me - root) % p
    parent = (me - 1) % p if position > 0 else None
    child = (me + 1) % p if position < p - 1 else None
    packets = split_packets(data, k) if me == root else [None] * k
    if parent is not None:
        packets[0] = yield recv(parent)
    for i in range(1, k):
        if parent is not None and child is not None:
            packets[i] = yield sendrecv(child, packets[i - 1], parent)
        elif parent is not None:                   # the last PE only receives
            packets[i] = yield recv(parent)
        elif child is not None:                    # the root only sends
            yield send(child, packets[i - 1])
    if child is not None:
        yield send(child, packets[k - 1])
    return join_packets(packets)
