"""The simulator's inline event loop against a slow, obviously correct reference engine.

The reference below is the simulator as it was written before its loop was
flattened for speed: one function per rule (claim a transfer's resources,
post a send, post a receive, complete a part), routes as tuples of ``(u, v)``
links and every queue a deque.  Random programs on every network, port model
and routing must give both the same results, finish times, messages (in
order), link loads (in order of first use) and errors.
"""
import gc
import heapq
import random
from collections import defaultdict, deque

import pytest

from collective_lib import (CostModel, DeadlockError, FullyConnected, Hypercube, LinearArray,
                            Mesh, Message, Ring, UnreceivedMessageError, compute, multi, recv,
                            send, sendrecv, simulate)
from collective_lib.ops import Compute, Multi, Recv, Send, SendRecv
from collective_lib.simulator import _describe


def reference(program, p, inputs, network, model):
    """(results, finish times, messages, link_load items, operations) of one run."""
    gens = [program(me, p, inputs[me]) for me in range(p)]
    use_ports = model.ports != "all"
    listen_first = model.ports == "half-duplex"
    send_free = defaultdict(float)
    recv_free = send_free if listen_first else defaultdict(float)
    link_free, link_load = defaultdict(float), {}
    inbox, deferred, waiting = defaultdict(deque), defaultdict(deque), defaultdict(deque)
    outstanding, ready_at, got = [0] * p, [0.0] * p, [None] * p
    value, current, finish, results = [None] * p, [None] * p, [None] * p, [None] * p
    messages, events, seq, ops = [], [(0.0, pe, pe) for pe in range(p)], p, 0

    def schedule(pe, t):
        nonlocal seq
        heapq.heappush(events, (t, seq, pe))
        seq += 1

    def transfer(src, dst, payload, words, t):
        path = network.path(src, dst)
        direct = network.direct and use_ports
        links = () if direct else path
        start = max([t] + [link_free[link] for link in links]
                    + ([send_free[src], recv_free[dst]] if use_ports else []))
        end = start + model.transfer_time(words, len(path))
        if use_ports:
            send_free[src] = recv_free[dst] = end
        for link in links:
            link_free[link] = end
        for link in path:
            link_load[link] = link_load.get(link, 0) + 1
        messages.append(Message(src, dst, start, end, words, payload, path))
        return end

    def complete(pe, end, slot=None, payload=None):
        if slot is not None:
            if slot < 0:
                value[pe] = payload
            else:
                got[pe][slot] = payload
        ready_at[pe] = max(ready_at[pe], end)
        outstanding[pe] -= 1
        if outstanding[pe] == 0:
            if got[pe] is not None:
                value[pe], got[pe] = got[pe], None
            current[pe] = None
            schedule(pe, ready_at[pe])

    def post_send(src, dst, payload, words, t):
        if waiting[(src, dst)]:
            slot = waiting[(src, dst)].popleft()
            end = transfer(src, dst, payload, words, t)
            complete(dst, end, slot, payload)
            complete(src, end)
        elif listen_first:
            deferred[(src, dst)].append((payload, words))
        else:
            end = transfer(src, dst, payload, words, t)
            inbox[(src, dst)].append((end, payload))
            complete(src, end)

    def post_recv(pe, src, slot, t):
        if inbox[(src, pe)]:
            end, payload = inbox[(src, pe)].popleft()
            complete(pe, max(end, t), slot, payload)
        elif deferred[(src, pe)]:
            payload, words = deferred[(src, pe)].popleft()
            end = transfer(src, pe, payload, words, t)
            complete(pe, end, slot, payload)
            complete(src, end)
        else:
            waiting[(src, pe)].append(slot)

    now = 0.0
    while events:
        now, _, pe = heapq.heappop(events)
        v, value[pe] = value[pe], None
        try:
            op = gens[pe].send(v)
        except StopIteration as stop:
            finish[pe], results[pe] = now, stop.value
            continue
        ops += 1
        ready_at[pe] = now
        current[pe] = op
        if isinstance(op, Compute):
            current[pe] = None
            schedule(pe, now + op.time)
        elif isinstance(op, SendRecv):
            outstanding[pe] = 2
            post_send(pe, op.dst, op.data, op.words, now)
            post_recv(pe, op.src, -1, now)
        elif isinstance(op, Send):
            outstanding[pe] = 1
            post_send(pe, op.dst, op.data, op.words, now)
        elif isinstance(op, Recv):
            outstanding[pe] = 1
            post_recv(pe, op.src, -1, now)
        else:
            assert isinstance(op, Multi)
            outstanding[pe] = len(op.sends) + len(op.recvs) + 1
            got[pe] = [None] * len(op.recvs)
            for dst, payload, words in op.sends:
                post_send(pe, dst, payload, words, now)
            for slot, src in enumerate(op.recvs):
                post_recv(pe, src, slot, now)
            complete(pe, now)
    blocked = {pe: _describe(current[pe]) for pe in range(p) if finish[pe] is None}
    if blocked:
        raise DeadlockError(blocked, now)
    unreceived = {channel: len(box) for channel, box in inbox.items() if box}
    if unreceived:
        raise UnreceivedMessageError(unreceived)
    return results, finish, messages, list(link_load.items()), ops


def random_program(p, seed):
    """A program whose PEs exchange random messages with random operations.

    The messages are drawn in one global order and every PE issues its parts in
    that order, grouping neighbouring parts into sendrecv() and multi() at
    random; so eager runs never deadlock, while half-duplex ones may (and both
    engines must then report the same deadlock).
    """
    rng = random.Random(seed)
    pairs = [(s, d) for s in range(p) for d in range(p) if s != d]
    parts = [[] for _ in range(p)]
    for n, (src, dst) in enumerate(rng.choice(pairs) for _ in range(6 * p)):
        parts[src].append(("send", dst, [n] * rng.randint(0, 3)))
        parts[dst].append(("recv", src))
    plans = []
    for me in range(p):
        todo, plan = deque(parts[me]), []
        while todo:
            group = [todo.popleft() for _ in range(min(len(todo), rng.randint(1, 4)))]
            sends = [part[1:] for part in group if part[0] == "send"]
            sources = [part[1] for part in group if part[0] == "recv"]
            if len(sends) == len(sources) == 1 and rng.random() < 0.7:
                plan.append(sendrecv(*sends[0], sources[0]))
            elif len(group) > 1 or rng.random() < 0.2:
                plan.append(multi(sends, sources))
            else:
                plan.append(send(*sends[0]) if sends else recv(sources[0]))
            if rng.random() < 0.2:
                plan.append(compute(rng.choice([0, 0.5, 2])))
        plans.append(plan)

    def program(me, p, data):
        got = []
        for op in plans[me]:
            got.append((yield op))
        return got
    return program


NETWORKS = [FullyConnected(6), Ring(6), LinearArray(5), Mesh(2, 3), Mesh(3, 3, wrap=True),
            Hypercube(3)]
MODELS = [CostModel(ts=1.1, tw=0.3, th=0.7, ports=ports, routing=routing)
          for ports in ("full-duplex", "half-duplex", "all")
          for routing in ("cut-through", "store-and-forward")]


def outcome(run_it):
    """What a run gives, or the error it raises with everything the error says."""
    try:
        return run_it()
    except (DeadlockError, UnreceivedMessageError) as err:
        return type(err).__name__, str(err), getattr(err, "time", None)


@pytest.mark.parametrize("network", NETWORKS, ids=repr)
@pytest.mark.parametrize("model", MODELS, ids=lambda m: f"{m.ports}-{m.routing}")
def test_the_simulator_and_the_reference_agree_on_random_programs(network, model):
    kinds = set()
    for seed in range(4):
        program = random_program(network.p, seed)
        inputs = [None] * network.p

        def ours():
            run = simulate(program, network.p, inputs, network=network, model=model)
            return (run.results, run.finish_times, run.messages, list(run.link_load.items()),
                    run.operations)
        expected = outcome(lambda: reference(program, network.p, inputs, network, model))
        assert outcome(ours) == expected
        kinds.add(expected[0] if isinstance(expected[0], str) else "ok")
    assert kinds == {"ok"} or model.ports == "half-duplex"


def test_a_streamed_trace_sees_the_messages_a_recorded_trace_keeps():
    program, p = random_program(6, 1), 6
    model = CostModel(ts=1, tw=0.5, ports="all")
    recorded = simulate(program, p, network=Ring(p), model=model)
    streamed = []
    run = simulate(program, p, network=Ring(p), model=model, trace=streamed.append)
    assert streamed == recorded.messages and run.messages == []
    assert run.results == recorded.results and run.link_load == recorded.link_load
    silent = simulate(program, p, network=Ring(p), model=model, trace=False)
    assert silent.messages == [] and silent.finish_times == recorded.finish_times


def test_traced_messages_share_the_network_s_path_tuples():
    def ring_allgather(me, p, data):
        got = [data]
        for _ in range(p - 1):
            got.append((yield sendrecv((me + 1) % p, got[-1], (me - 1) % p)))
        return got
    for network in (FullyConnected(8), Ring(8)):
        run = simulate(ring_allgather, 8, list(range(8)), network=network)
        assert len({id(m.path) for m in run.messages}) == 8


def test_trace_must_be_a_bool_or_a_callable():
    with pytest.raises(TypeError, match="trace must be True, False or a callable"):
        simulate(lambda me, p, data: (yield from ()), 2, trace="yes")


def test_the_garbage_collector_is_back_on_after_a_run_even_a_failing_one():
    def cycle(me, p, data):
        yield recv((me + 1) % p)
    assert gc.isenabled()
    with pytest.raises(DeadlockError):
        simulate(cycle, 3)
    assert gc.isenabled()
    gc.disable()
    try:
        simulate(random_program(4, 0), 4)
        assert not gc.isenabled()             # a caller's choice is kept
    finally:
        gc.enable()
