"""Chapter 4's claims about gather, scatter and all-gather (book/ch4_gather_scatter).

The chapter's own programs are copied from its visible cells (section named at each).
"""
import pytest

from collective_lib import CostModel, catalog, recv, send, sendrecv, simulate
from collective_lib.trees import binomial_children, binomial_parent, ceil_log2
from collective_lib.recording import record_run
from collective_lib.viz import values_table
from traces import trace

#: Each claim of the chapter's prose and the test that checks it (tests/notebooks/test_prose_claims.py).
PROSE_CLAIMS = {
    "receiving port: at least $(p-1)n\\beta$, however cleverly":
        "test_no_gather_scatter_or_allgather_beats_the_word_bound",
    "which carries at most what its sender held, so the largest count at most doubles per step":
        "test_the_largest_count_at_most_doubles_per_step",
    "The root needs all $p$ messages: at least": "test_the_largest_count_at_most_doubles_per_step",
    "The simulator agrees exactly, also when $p$ is not a power of two":
        "test_theorem_13_9_binomial_gather_time",
    "the formula still holds exactly": "test_theorem_13_9_binomial_gather_time",
    "because the root never waits": "test_the_roots_receives_follow_without_a_gap",
    "the child needs no more than that to collect its own subtree of at most $2^j$ messages":
        "test_each_child_of_the_root_has_its_subtree_when_the_root_turns_to_it",
    "attains it exactly for every $p$ and root": "test_binomial_scatter_time",
    "exactly the ones that continue its block":
        "test_bruck_round_appends_the_messages_that_continue_the_block",
    "the time is exactly": "test_bruck_allgather_time",
    "show that it too stays within the bound of Theorem 13.9":
        "exercises/test_scatter_any_root.py::test_solution_gets_full_marks",
    "by the argument above that the root never waits":
        "test_the_roots_receives_follow_without_a_gap",
}

MODEL = CostModel(ts=100, tw=1)
MODELS = [MODEL, CostModel(ts=1, tw=0.25), CostModel(ts=0, tw=1), CostModel(ts=0.5, tw=1)]


def entry(name):
    return catalog()[name]



# §4.1
def gather_naive(me, p, data, root=0):
    if me != root:
        yield send(root, data)
        return None
    gathered = [None] * p
    gathered[root] = data
    for i in range(1, p):
        sender = (root + i) % p
        gathered[sender] = yield recv(sender)
    return gathered


# §4.2
def gather_binomial(me, p, data):
    block = [data]
    for child in reversed(binomial_children(me, p)):
        block += yield recv(child)
    if me == 0:
        return block
    words = sum(len(message) for message in block)
    yield send(binomial_parent(me), block, words=words)
    return None


# §4.5
def allgather_bruck(me, p, data):
    block = [data]
    s = 1
    while s < p:
        count = min(s, p - s)
        outgoing = block[:count]
        words = sum(len(message) for message in outgoing)
        block += yield sendrecv((me - s) % p, outgoing, (me + s) % p, words=words)
        s *= 2
    return [block[(r - me) % p] for r in range(p)]


@pytest.mark.parametrize("p", range(1, 40))
def test_chapter_naive_gather_is_the_catalog_entry(p):
    naive = entry("naive_gather")
    for root in sorted({0, p // 2, p - 1}):
        inputs = [[3 * i, i] for i in range(p)]
        mine = simulate(gather_naive, p, inputs, model=MODEL, root=root)
        assert trace(mine) == trace(naive.simulate(p, inputs=inputs, root=root, model=MODEL))
        assert mine.results == naive.expected(inputs, root=root)
        assert mine.time == (p - 1) * (100 + 2)


def test_naive_and_tree_gather_numbers_of_the_chapter():
    tree = entry("binomial_gather")
    times = {m: (simulate(gather_naive, 64, [[i] * m for i in range(64)], model=MODEL).time,
                 tree.simulate(64, m, model=MODEL).time) for m in (1, 1000)}
    assert times[1] == (6363, 663) and times[1000] == (69300, 63600)
    assert round(6363 / 663) == 10 and round(100 * (69300 - 63600) / 69300) == 8


@pytest.mark.parametrize("p", range(1, 40))
def test_chapter_binomial_gather_is_the_catalog_entry(p):
    tree = entry("binomial_gather")
    inputs = [[f"<{i}>", i] for i in range(p)]
    mine = simulate(gather_binomial, p, inputs, model=MODEL)
    assert trace(mine) == trace(tree.simulate(p, inputs=inputs, model=MODEL))
    assert mine.results == tree.expected(inputs)


def test_binomial_gather_blocks_of_the_chapter():
    t = values_table(record_run("binomial_gather", 8, inputs=[[i] for i in range(8)]), watch="block")
    assert t.column(0) == ["0", "0 1", "0 1 2 3", "0 1 2 3 4 5 6 7"]
    assert t.column(4) == ["4", "4 5", "4 5 6 7", "4 5 6 7"]


@pytest.mark.parametrize("p", range(1, 130))
def test_theorem_13_9_binomial_gather_time(p):
    tree = entry("binomial_gather")
    for root in sorted({0, p // 3, p - 1}):
        for model in MODELS[:3]:
            run = tree.simulate(p, 3, model=model, root=root, trace=False)
            assert run.time == ceil_log2(p) * model.ts + (p - 1) * 3 * model.tw


@pytest.mark.parametrize("p", range(2, 70))
def test_the_roots_receives_follow_without_a_gap(p):
    run = entry("binomial_gather").simulate(p, 1, model=CostModel(ts=1, tw=0.25))
    incoming = sorted((m.start, m.end) for m in run.messages if m.dst == 0)
    assert incoming[0][0] == 0 and incoming[-1][1] == run.time
    assert all(a[1] == b[0] for a, b in zip(incoming, incoming[1:]))
    assert len(incoming) == ceil_log2(p)


@pytest.mark.parametrize("p", range(1, 100))
def test_binomial_scatter_time(p):
    scatter = entry("binomial_scatter")
    for root in sorted({0, p // 2, p - 1}):
        run = scatter.simulate(p, 2, model=MODEL, root=root, trace=False)
        assert run.time == ceil_log2(p) * 100 + (p - 1) * 2


def test_hypercube_allgather_blocks_of_the_chapter():
    t = values_table(record_run("hypercube_allgather", 8, inputs=[[i] for i in range(8)]),
                     watch="block")
    assert all(t.column(pe)[-1] == "0 1 2 3 4 5 6 7" for pe in range(8))
    assert t.column(5)[1:3] == ["4 5", "4 5 6 7"]


@pytest.mark.parametrize("p", range(1, 70))
def test_chapter_bruck_allgather_is_the_catalog_entry(p):
    bruck = entry("bruck_allgather")
    inputs = [[i, -i] for i in range(p)]
    mine = simulate(allgather_bruck, p, inputs, model=MODEL)
    assert trace(mine) == trace(bruck.simulate(p, inputs=inputs, model=MODEL))
    assert mine.results == bruck.expected(inputs)


def test_bruck_blocks_of_the_chapter():
    t = values_table(record_run(allgather_bruck, 6, inputs=[[i] for i in range(6)]), watch="block")
    assert t.column(4)[-1] == "4 5 0 1 2 3"
    assert t.column(0) == ["0", "0 1", "0 1 2 3", "0 1 2 3 4 5"]


@pytest.mark.parametrize("p", list(range(1, 130)) + [255, 256, 1000])
def test_bruck_allgather_time(p):
    for model in (MODELS[0], MODELS[1], MODELS[3]):
        run = entry("bruck_allgather").simulate(p, 2, model=model, trace=False)
        assert run.time == ceil_log2(p) * model.ts + (p - 1) * 2 * model.tw
    assert sum(min(2 ** k, p - 2 ** k) for k in range(ceil_log2(p))) == p - 1


@pytest.mark.parametrize("p", [5, 6, 8, 12, 64, 100])
def test_gather_then_broadcast_formula_of_the_prose(p):
    two = (entry("binomial_gather").simulate(p, 7, model=MODEL, trace=False).time
           + entry("binomial_broadcast").simulate(p, 7 * p, model=MODEL, trace=False).time)
    L = ceil_log2(p)
    assert two == 2 * L * 100 + (p - 1) * 7 + L * p * 7


def test_gather_grows_with_p_and_reduction_does_not():
    gather = {p: entry("binomial_gather").simulate(p, 1000, model=MODEL, trace=False).time
              for p in (16, 1024)}
    reduce = {p: entry("binomial_reduce").simulate(p, 1000, model=MODEL, trace=False).time
              for p in (16, 1024)}
    assert gather[1024] == 1024000 and reduce[1024] == 11000 and round(gather[1024] / reduce[1024]) == 93
    assert round(gather[1024] / gather[16]) == 66 and round(reduce[1024] / reduce[16], 1) == 2.5
    pipe = entry("pipelined_binary_tree_reduce")
    k = pipe.optimal_k(1024, 1000, MODEL)
    assert pipe.simulate(1024, 1000, model=MODEL, k=k, trace=False).time < 7500


# §4.1: the two lower bounds, on every gather, scatter and all-gather with one port per
# direction (the CM-200's all-port programs of Chapter 6 are not bound by them)
ONE_PORT = [name for name, e in catalog().items()
            if e.operation in ("gather", "scatter", "allgather") and e.ports != "all"]
BOUND_PS = [1, 2, 3, 7, 8, 9, 16, 64, 100]


def sources(payload):
    """The original messages a payload carries, for inputs [i] (PE i's message is [i])."""
    if isinstance(payload, int):
        return {payload}
    return set().union(set(), *map(sources, payload))


@pytest.mark.parametrize("name", ONE_PORT)
def test_no_gather_scatter_or_allgather_beats_the_word_bound(name):
    e, m = entry(name), 5
    for p in filter(e.valid, BOUND_PS):
        run = e.simulate(p, m, model=CostModel(ts=0, tw=1))
        assert run.time >= (p - 1) * m, (name, p)
        if e.operation == "gather":       # the root takes the p - 1 messages in
            assert sum(msg.words for msg in run.messages if msg.dst == 0) >= (p - 1) * m
        assert e.simulate(p, m, model=MODEL, trace=False).time >= (p - 1) * m * MODEL.tw


@pytest.mark.parametrize("name", [n for n in ONE_PORT if entry(n).operation != "scatter"])
def test_the_largest_count_at_most_doubles_per_step(name):
    # Unit steps (ts = 1, tw = 0): a message carries only what its sender held when it
    # left, so the most original messages one PE holds at most doubles per step, and the
    # root (every PE, for an all-gather) needs ceil(log p) steps to hold all p.
    e = entry(name)
    for p in filter(e.valid, BOUND_PS):
        run = e.simulate(p, inputs=[[i] for i in range(p)], model=CostModel(ts=1, tw=0))
        held = [{i} for i in range(p)]
        for s in range(1, len(run.step_starts()) + 1):
            step = run.step(s)
            assert all(sources(msg.payload) <= held[msg.src] for msg in step), (name, p, s)
            for msg in step:
                held[msg.dst] |= sources(msg.payload)
            assert max(map(len, held)) <= 2 ** s, (name, p, s)
        assert len(held[0]) == p and run.time >= ceil_log2(p)


@pytest.mark.parametrize("p", [2, 3, 5, 7, 8, 11, 64, 100])
def test_each_child_of_the_root_has_its_subtree_when_the_root_turns_to_it(p):
    # Child 2^j holds its subtree of at most 2^j messages by j ts + (2^j - 1) m tw, the
    # time the root has spent on the smaller subtrees before it.
    tree, m = entry("binomial_gather"), 3
    for model in MODELS[:3]:
        run = tree.simulate(p, m, model=model)
        for j in range(ceil_log2(p)):
            child = 2 ** j
            collected = max((msg.end for msg in run.messages if msg.dst == child), default=0)
            assert collected <= j * model.ts + (2 ** j - 1) * m * model.tw, (p, j, model)
            to_root = [msg.words for msg in run.messages if (msg.src, msg.dst) == (child, 0)]
            assert to_root == [min(2 ** j, p - child) * m] and to_root[0] <= 2 ** j * m


@pytest.mark.parametrize("p", [1, 2, 3, 5, 6, 7, 8, 13, 64, 100])
def test_bruck_round_appends_the_messages_that_continue_the_block(p):
    # After round k (distance s = 2^k) PE i holds m_i, ..., m_(i + 2s - 1), cut at p.
    t = values_table(record_run(allgather_bruck, p, inputs=[[i] for i in range(p)]),
                     watch="block")
    for i in sorted({0, min(1, p - 1), p // 2, p - 1}):
        column = t.column(i)
        assert len(column) == ceil_log2(p) + 1
        for k, row in enumerate(column):
            assert row == " ".join(str((i + r) % p) for r in range(min(2 ** k, p))), (p, i, k)
