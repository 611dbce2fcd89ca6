"""All-to-all broadcast and all-to-all reduction (chapter 5).

* all-to-all broadcast: every PE i holds its own message m_i (m words); every PE
  returns the list ``[m_0, m_1, ..., m_(p-1)]`` of all p messages, indexed by
  the rank of their source.  This is the operation ``"allgather"`` of
  :mod:`collective_lib.collectives` (Sanders' name for it);
* all-to-all reduction, its dual: PE i holds a list of p messages, ``data[j]``
  being its contribution for PE j; PE j returns the combination with ``op`` of
  the p messages destined for it, ``x_0[j] op x_1[j] op ... op x_(p-1)[j]``.

Every procedure runs all p one-to-all broadcasts (or all-to-one reductions) at
once, and merges the messages that travel the same link in the same step into
one longer message.  The all-to-all reduction on the ring (Algorithm 4.5) is
not here: writing it is the course's assignment ``ring_reduction``.  The
operator conventions are those of
:mod:`collective_lib.algorithms.reduce` (``op`` keyword, default
:data:`~collective_lib.algorithms.reduce.add`, ``None`` for the book's 0).
The reductions here combine the operands in the order their communication
pattern dictates, which is not rank order, so they are registered with
``requires_commutative=True``.

The closed forms are communication-only: ring (ts + tw m)(p - 1) (Eq. 4.2),
2-D torus 2 ts (sqrt p - 1) + tw m (p - 1) (Eq. 4.3), hypercube
ts log p + tw m (p - 1) (Eq. 4.4).  A message that concatenates k messages of
m words is charged k m words.

Source: Grama, Gupta, Karypis, Kumar, Introduction to Parallel Computing
(2003), §4.2, Algorithms 4.4-4.8, Eqs. 4.2-4.4, Figs. 4.9-4.12, Problem 4.4.
"""
from __future__ import annotations

from ..catalog import register
from ..networks import Hypercube, Mesh, Ring
from ..ops import exchange, size_in_words, sendrecv
from ..validate import check_messages, check_operator, check_power_of_two, check_square
from .reduce import add, combine

__all__ = [
    "all_to_all_bc_ring", "all_to_all_bc_mesh", "all_to_all_red_mesh",
    "all_to_all_bc_hcube", "all_to_all_red_hcube", "hcube_cost", "mesh_cost",
    "ring_cost",
]

#: Where this module's entries stand in the catalog (chapter 5; see collective_lib.algorithms).
CATALOG_POSITION = 50


def _words(messages):
    """Words of a concatenation of messages: the sum of their lengths.

    >>> _words([[1, 2], [3, 4], [5, 6]])
    6
    """
    return sum(size_in_words(x) for x in messages)


# -- ring ---------------------------------------------------------------------------------

def ring_cost(p, m, model, **_):
    """(ts + tw m)(p - 1), Grama Eq. 4.2; exact."""
    return (p - 1) * model.transfer_time(m)


@register(operation="allgather", cost=ring_cost, exact=True, network_for=Ring,
          tex=r"(t_s + t_w m)(p - 1)",
          source="Grama et al. 2003, §4.2.1, Algorithm 4.4, Fig. 4.9, Eq. 4.2")
def all_to_all_bc_ring(me, p, data):
    """All-to-all broadcast on a ring: pass every message p - 1 times to the right.

    Grama et al. 2003, ``ALL_TO_ALL_BC_RING`` (Algorithm 4.4): first send my own
    message to the right neighbour; in each later step forward to the right
    the message just received from the left.  In step i the message that
    arrives came from PE me - i, which is where it is filed in ``result``.
    All p - 1 steps keep every link busy at once (send || receive,
    full-duplex); time (ts + tw m)(p - 1) (Eq. 4.2).
    """
    left = (me - 1) % p
    right = (me + 1) % p
    result = [None] * p
    result[me] = data
    msg = data
    for i in range(1, p):
        msg = yield sendrecv(right, msg, left)     # send msg to right || receive msg from left
        result[(me - i) % p] = msg                 # result := result U msg
    return result


# -- mesh (2-D torus) ---------------------------------------------------------------------

def _mesh_network(p):
    side = check_square("the all-to-all mesh algorithms", p)
    return Mesh(side, side, wrap=True)


def _mesh_p(p):
    check_square("the all-to-all mesh algorithms", p)


def mesh_cost(p, m, model, **_):
    """(ts + tw m)(sqrt p - 1) + (ts + tw m sqrt p)(sqrt p - 1) = 2 ts (sqrt p - 1) + tw m (p - 1).

    Grama Eq. 4.3; exact on a square torus.
    """
    side = check_square("the all-to-all mesh algorithms", p)
    return (side - 1) * (model.transfer_time(m) + model.transfer_time(side * m))


#: The closed form of :func:`mesh_cost` as TeX (``register(tex=...)``).
_MESH_TEX = r"2 t_s (\sqrt{p} - 1) + t_w m (p - 1)"


@register(operation="allgather", cost=mesh_cost, exact=True, network_for=_mesh_network,
          tex=_MESH_TEX,
          valid_p=_mesh_p, source="Grama et al. 2003, §4.2.2, Algorithm 4.6, Fig. 4.10, Eq. 4.3")
def all_to_all_bc_mesh(me, p, data):
    """All-to-all broadcast on a sqrt p x sqrt p torus: the ring procedure along rows, then columns.

    Grama et al. 2003, ``ALL_TO_ALL_BC_MESH`` (Algorithm 4.6).  Phase 1: every
    row runs the ring procedure on the m-word messages, so each PE collects
    the sqrt p messages of its row.  Phase 2: every column runs it on these
    collections, messages of m sqrt p words.  The neighbours are taken mod
    sqrt p in the row and mod p in the column, so the mesh needs its
    wrap-around links (``Mesh(side, side, wrap=True)``).  p must be a
    perfect square; full-duplex; time 2 ts (sqrt p - 1) + tw m (p - 1) (Eq. 4.3).
    """
    side = check_square("all_to_all_bc_mesh", p)
    row, col = divmod(me, side)
    # Communication along rows
    left = me - me % side + (me - 1) % side
    right = me - me % side + (me + 1) % side
    result = [None] * side                        # the messages of my row, by column
    result[col] = data
    msg = data
    for i in range(1, side):
        msg = yield sendrecv(right, msg, left)
        result[(col - i) % side] = msg
    # Communication along columns
    up = (me - side) % p
    down = (me + side) % p
    rows = [None] * side                          # the rows' collections, by row
    rows[row] = result
    msg = result
    for i in range(1, side):
        msg = yield sendrecv(down, msg, up, words=_words(msg))
        rows[(row - i) % side] = msg
    return [x for collected in rows for x in collected]


@register(operation="all_to_all_reduction", cost=mesh_cost, exact=True, network_for=_mesh_network,
          tex=_MESH_TEX,
          valid_p=_mesh_p, params={"op": add}, requires_commutative=True,
          source="Grama et al. 2003, §4.2.2, Problem 4.4 (Algorithm 4.6 reversed, "
                 "with the combining of Algorithm 4.5), Eq. 4.3")
def all_to_all_red_mesh(me, p, data, op=add):
    """All-to-all reduction on a sqrt p x sqrt p torus: Algorithm 4.6 run backwards.

    Grama et al. 2003, Problem 4.4.  Reverse the phases and the direction of
    Algorithm 4.6 and combine as Algorithm 4.5 does.  Phase 1, along columns:
    the "message" for the PE of row r is my sqrt p messages for the PEs of
    row r (m sqrt p words); it leaves each PE with, for every PE of its row,
    the column's combined contributions.  Phase 2, along rows, combines these
    m-word messages.  The
    operands are combined in cyclic column and row order, so ``op`` must be
    commutative.  p a perfect square; full-duplex; time
    2 ts (sqrt p - 1) + tw m (p - 1), as Eq. 4.3.
    """
    side = check_square("all_to_all_red_mesh", p)
    op = check_operator(op)
    msg = check_messages("all_to_all_red_mesh", data, p)
    row, col = divmod(me, side)
    # Communication along columns: the block for row r is msg[r*side .. r*side + side - 1]
    up = (me - side) % p
    down = (me + side) % p
    received = None
    for i in range(1, side):
        r = (row + i) % side
        temp = _combine_blocks(op, msg[r * side:(r + 1) * side], received)
        received = yield sendrecv(up, temp, down, words=_words(temp))
    mine = _combine_blocks(op, msg[row * side:(row + 1) * side], received)
    # Communication along rows: mine[c] is for the PE of my row in column c
    left = me - me % side + (me - 1) % side
    right = me - me % side + (me + 1) % side
    received = None
    for i in range(1, side):
        c = (col + i) % side
        temp = combine(op, mine[c], received)
        received = yield sendrecv(left, temp, right)
    return combine(op, mine[col], received)


def _combine_blocks(op, block, received):
    """Combine two blocks of messages message by message (``received`` may be None)."""
    if received is None:
        return list(block)
    return [op(a, b) for a, b in zip(block, received)]


# -- hypercube ----------------------------------------------------------------------------

def _hcube_p(p):
    check_power_of_two("the all-to-all hypercube algorithms", p)


def hcube_cost(p, m, model, **_):
    """sum_{i=1..log p} (ts + 2**(i-1) tw m) = ts log p + tw m (p - 1), Grama Eq. 4.4; exact."""
    d = check_power_of_two("the all-to-all hypercube algorithms", p)
    return sum(model.transfer_time((1 << i) * m) for i in range(d))


#: The closed form of :func:`hcube_cost` as TeX (``register(tex=...)``).
_HCUBE_TEX = r"t_s \log_2 p + t_w m (p - 1)"


@register(operation="allgather", cost=hcube_cost, exact=True,
          tex=_HCUBE_TEX,
          network_for=Hypercube.of_size, valid_p=_hcube_p,
          source="Grama et al. 2003, §4.2.3, Algorithm 4.7, Fig. 4.11, Eq. 4.4")
def all_to_all_bc_hcube(me, p, data):
    """All-to-all broadcast on a d-dimensional hypercube: exchange and concatenate per dimension.

    Grama et al. 2003, ``ALL_TO_ALL_BC_HCUBE`` (Algorithm 4.7): for i = 0 to d-1
    exchange ``result`` with PE me XOR 2**i and append what comes back.  After
    iteration i a PE holds the messages of the 2**(i+1) PEs that agree with it
    in bits i+1 .. d-1; we keep them in rank order (the lower half's first),
    so the message doubles each step, 2**i m words in iteration i.  p must be
    a power of two; full-duplex; time ts log p + tw m (p - 1) (Eq. 4.4).
    """
    d = check_power_of_two("all_to_all_bc_hcube", p)
    result = [data]
    for i in range(d):                               # lowest to highest dimension
        partner = me ^ (1 << i)
        msg = yield exchange(partner, result, words=_words(result))
        result = msg + result if me & (1 << i) else result + msg    # result := result U msg
    return result


@register(operation="all_to_all_reduction", cost=hcube_cost, exact=True,
          tex=_HCUBE_TEX,
          network_for=Hypercube.of_size, valid_p=_hcube_p, params={"op": add},
          requires_commutative=True,
          source="Grama et al. 2003, §4.2.3, Algorithm 4.8, Eq. 4.4")
def all_to_all_red_hcube(me, p, data, op=add):
    """All-to-all reduction on a d-dimensional hypercube: Algorithm 4.7 reversed.

    Grama et al. 2003, ``ALL_TO_ALL_RED_HCUBE`` (Algorithm 4.8): for i = d-1
    down to 0, send the half of my current range of messages that belongs to
    the partner's side of dimension i (it starts at ``senloc``) and add the
    half received into my own half (it starts at ``recloc``).  The range
    halves each step, from p/2 messages down to one, ``msg[my_id]``.  The
    partners combine in bit-reversed rank order, so ``op`` must be
    commutative.  p a power of two; full-duplex; time ts log p + tw m (p - 1),
    as Eq. 4.4.
    """
    d = check_power_of_two("all_to_all_red_hcube", p)
    op = check_operator(op)
    msg = check_messages("all_to_all_red_hcube", data, p)
    recloc = 0
    for i in range(d - 1, -1, -1):
        partner = me ^ (1 << i)
        j = me & (1 << i)
        k = (me ^ (1 << i)) & (1 << i)
        senloc = recloc + k
        recloc = recloc + j
        outgoing = msg[senloc:senloc + (1 << i)]
        temp = yield exchange(partner, outgoing, words=_words(outgoing))
        for t in range(1 << i):
            msg[recloc + t] = op(msg[recloc + t], temp[t])
    return msg[me]
