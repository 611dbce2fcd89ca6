"""Property tests: random machines, random traffic, invariants that must always hold."""
import random

from hypothesis import given, settings
from hypothesis import strategies as st

from collective_lib import CostModel, LinearArray, Mesh, Ring, catalog, recv, send, sendrecv, simulate
from collective_lib.trees import ceil_log2

costs = st.floats(min_value=0.0, max_value=10.0, allow_nan=False)


@settings(max_examples=60, deadline=None)
@given(p=st.integers(1, 300), data=st.data(), m=st.integers(1, 50), ts=costs, tw=costs)
def test_binomial_broadcast_time_is_exact_for_random_machines(p, data, m, ts, tw):
    root = data.draw(st.integers(0, p - 1))
    model = CostModel(ts=ts, tw=tw)
    run = catalog()["binomial_broadcast"].simulate(p, m, model=model, root=root, trace=False)
    assert run.time == ceil_log2(p) * (ts + tw * m) or \
        abs(run.time - ceil_log2(p) * (ts + tw * m)) <= 1e-9 * max(1.0, run.time)


def permutation_program(me, p, data, perm, inverse):
    return (yield sendrecv(perm[me], me, inverse[me]))


@settings(max_examples=60, deadline=None)
@given(p=st.integers(2, 64), seed=st.integers(0, 10**6))
def test_a_derangement_takes_one_step_on_a_fully_connected_machine(p, seed):
    rng = random.Random(seed)
    perm = list(range(p))
    while any(perm[i] == i for i in range(p)):
        rng.shuffle(perm)
    inverse = [0] * p
    for i, j in enumerate(perm):
        inverse[j] = i
    run = simulate(permutation_program, p, perm=perm, inverse=inverse)
    assert run.results == inverse
    assert run.time == 1.0


def one_to_one(me, p, data, targets):
    if targets[me] is not None:
        yield send(targets[me], me)
    senders = [i for i, t in enumerate(targets) if t == me]
    got = []
    for s in senders:
        got.append((yield recv(s)))
    return got


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), shape=st.sampled_from(["ring", "line", "mesh", "torus"]))
def test_a_link_carries_one_transfer_at_a_time(seed, shape):
    rng = random.Random(seed)
    network = {"ring": Ring(9), "line": LinearArray(9), "mesh": Mesh(3, 3),
               "torus": Mesh(3, 3, wrap=True)}[shape]
    p = network.p
    targets = [rng.choice([None] + [j for j in range(p) if j != i]) for i in range(p)]
    run = simulate(one_to_one, p, network=network, targets=targets,
                   model=CostModel(ts=1, tw=0))
    for i in range(p):
        assert run.results[i] == [j for j, t in enumerate(targets) if t == i]
    # No two transfers overlap in time on the same directed link ...
    for link in run.link_load:
        spans = sorted((m.start, m.end) for m in run.messages if link in m.path)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
    # ... so the busiest link bounds the time from below.
    assert run.time >= run.max_link_load()
