"""Hints that fit the situation they describe (issue 12, "Some hints point the wrong way").

Each typical buggy program goes through the grading function that meets it: a ring
that deadlocks is told about a cycle of waiting PEs, not about parents and children;
a ring reduction that starts from zeros is told that 0 is neutral for + only, not to
use op(a, b); a broadcast that forgets the root translation is told so, not asked
whether every PE returns the message.
"""
import nbformat
import pytest

import nbgrader_harness as h
from collective_lib import recv, send, sendrecv
from collective_lib.algorithms.reduce import add, combine
from collective_lib.grading import check_broadcast_program, check_collective_program
from collective_lib.networks import Ring
from messages import flat

TREE_HINT = "receives from its parent and sends to exactly its children"
CYCLE_HINT = "they wait for each other in a cycle"
ROOT_HINT = "rel = (me - root) % p"
EVERY_PE_HINT = "Does every PE return the message (the root included)?"
ZEROS_HINT = "0 is neutral for + only"
OP_HINT = "Hint: combine with op(a, b), never with +."


def ring_receives_first(me, p, data, op=add):
    """The ring reduction with recv before send: every PE waits for its right neighbour."""
    left, right = (me - 1) % p, (me + 1) % p
    received = None
    for i in range(1, p):
        mine = data[(me + i) % p]
        partial = mine if received is None else op(mine, received)
        received = yield recv(right)
        yield send(left, partial)
    return data[me] if received is None else op(data[me], received)


def ring_from_zeros(me, p, data, op=add):
    """The ring reduction with Grama's recv := 0: right for +, wrong for max and min."""
    left, right = (me - 1) % p, (me + 1) % p
    received = [0] * len(data[0])
    for i in range(1, p):
        received = yield sendrecv(left, op(data[(me + i) % p], received), right)
    return op(data[me], received)


def ring_with_plus(me, p, data, op=add):
    """The ring reduction that adds instead of calling op."""
    left, right = (me - 1) % p, (me + 1) % p
    received = None
    for i in range(1, p):
        mine = data[(me + i) % p]
        partial = mine if received is None else [a + b for a, b in zip(mine, received)]
        received = yield sendrecv(left, partial, right)
    return data[me] if received is None else [a + b for a, b in zip(data[me], received)]


def smallest_first_without_root(me, p, data, root=0):
    """The smallest-first binomial broadcast that always treats PE 0 as the root."""
    span = 1
    if me == 0:
        while span < p:
            span *= 2
    else:
        span = me & -me
        data = yield recv(me - span)
    step = 1
    while step < span:
        if me + step < p:
            yield send(me + step, data)
        step *= 2
    return data


def lazy_broadcast(me, p, data, root=0):
    """Only the root returns the message; the others never receive it."""
    return data
    yield


def tree_with_wrong_parent(me, p, data, root=0):
    """A linear broadcast in which PE 2 waits for PE 0, which sends only to PE 1."""
    if me == 0:
        yield send(1, data)
    elif me == 1:
        data = yield recv(0)
    else:
        data = yield recv(0)
    return data


def _vectors(p, rng, **_):
    return [[rng.integers(-50, 50, size=3).tolist() for _ in range(p)] for _ in range(p)]


def _expected(inputs, op=add, **_):
    return [combine(op, *(row[j] for row in inputs)) for j in range(len(inputs))]


def test_ring_deadlock_hint_names_the_cycle_not_a_tree():
    with pytest.raises(AssertionError) as err:
        check_collective_program(ring_receives_first, [4], make_inputs=_vectors,
                                 expected=_expected, network_for=Ring, time_limit_s=10)
    text = flat(err.value)
    assert "deadlock in ring_receives_first for p=4" in text
    assert CYCLE_HINT in text and "sendrecv" in text
    assert TREE_HINT not in text


def test_tree_deadlock_keeps_the_tree_hint():
    # the root has returned, so the PEs do not all wait for each other
    with pytest.raises(AssertionError) as err:
        check_broadcast_program(tree_with_wrong_parent, [3], roots=[0], time_limit_s=10)
    text = flat(err.value)
    assert "PE 2 waits in recv(src=0)" in text
    assert TREE_HINT in text and CYCLE_HINT not in text


def _ring_program_cell_hidden_tests():
    # The hidden tests of the exercise's program cell, to run on a buggy program.
    nb = nbformat.read(h.EXERCISES_DIR / "source" / "ring_reduction" / "ring_reduction.ipynb",
                       as_version=4)
    return h.find_cell(nb, "program_tests").source


def _run_ring_program_tests(program):
    namespace = {"my_all_to_all_red_ring": program}
    with pytest.raises(AssertionError) as err:
        exec(_ring_program_cell_hidden_tests(), namespace)
    return flat(err.value)


def test_ring_reduction_from_zeros_is_told_about_the_zeros():
    # right with + (the visible check and the additive hidden check pass), wrong for max
    text = _run_ring_program_tests(ring_from_zeros)
    assert "wrong result of ring_from_zeros for p=1, op=word_max: PE 0 returned [0," in text
    assert ZEROS_HINT in text and "own message" in text
    assert OP_HINT not in text


def test_ring_reduction_with_plus_is_still_told_to_use_op():
    text = _run_ring_program_tests(ring_with_plus)
    assert "op=word_max" in text
    assert OP_HINT in text and ZEROS_HINT not in text


def test_missing_root_translation_is_told_so():
    check_broadcast_program(smallest_first_without_root, range(1, 12), roots=[0], m=3)
    with pytest.raises(AssertionError) as err:
        check_broadcast_program(smallest_first_without_root, range(1, 12), roots="all", m=3)
    text = flat(err.value)
    assert "wrong result of smallest_first_without_root for p=2, root=1" in text
    assert "worked with root 0, but not with root 1" in text and ROOT_HINT in text
    assert EVERY_PE_HINT not in text


def test_root_translation_hint_only_when_root_0_was_right():
    # without a run from root 0 to compare with, the old question stays
    with pytest.raises(AssertionError) as err:
        check_broadcast_program(smallest_first_without_root, [2], roots=[1], m=3)
    text = flat(err.value)
    assert EVERY_PE_HINT in text and ROOT_HINT not in text
    # a program wrong for root 0 as well is not told about the root translation
    with pytest.raises(AssertionError) as err:
        check_broadcast_program(lazy_broadcast, [3], roots="all", m=3)
    text = flat(err.value)
    assert "root=0" in text and EVERY_PE_HINT in text and ROOT_HINT not in text
