"""Chapter 4's claims about gather, scatter and all-gather (book/ch4_gather_scatter).

The chapter's own programs are copied from its visible cells (section named at each).
"""
import pytest

from collective_lib import CostModel, catalog, recv, send, sendrecv, simulate
from collective_lib.trees import binomial_children, binomial_parent, ceil_log2
from collective_lib.recording import record_run
from collective_lib.viz import values_table
from traces import trace

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
