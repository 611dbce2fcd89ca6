"""A slow, obviously correct reference engine for the simulator, and random programs to feed both.

The reference is the simulator as it was written before its loop was
flattened for speed: one function per rule (claim a transfer's resources,
post a send, post a receive, complete a part), routes as tuples of ``(u, v)``
links and every queue a deque.  Under a :class:`TwoLevelModel` a transfer
takes the ports, the port model and the ``transfer_time`` of its level.
Under a :class:`LogGPModel` a message holds its sender's CPU for ``o`` and its
streams for ``max(g, (m - 1) G)`` (the model's docstring): each PE's CPU and
streams are kept here as plain "free from" times, the CPU's also for receives.
``tests/core/test_simulator_reference.py`` and ``tests/core/test_two_level.py``
hold the simulator to it, and ``tests/core/test_loggp.py`` under LogGP.
"""
import heapq
import random
from collections import defaultdict, deque

from collective_lib import (DeadlockError, LogGPModel, Message, TwoLevelModel,
                            UnreceivedMessageError, multi, recv, send, sendrecv, compute)
from collective_lib.ops import Compute, Multi, Recv, Send, SendRecv, waiting_for


def reference(program, p, inputs, network, model):
    """(results, finish times, messages, link_load items, operations) of one run."""
    gens = [program(me, p, inputs[me]) for me in range(p)]
    two_level, loggp = isinstance(model, TwoLevelModel), isinstance(model, LogGPModel)
    cpu = [0.0] * p                     # LogGP: when each PE's CPU is free of overheads
    stream_free = defaultdict(lambda: float("-inf"))    # LogGP: (direction, pe) -> free from
    port_free = defaultdict(float)      # (level, "send" or "recv", pe) -> when it is free

    def level_of(src, dst):
        """The transfer's level (0 under one model: one set of ports) and its model."""
        level = network.level(src, dst) if two_level else 0
        return level, model.level(level) if two_level else model

    def listens(src, dst):
        return not loggp and level_of(src, dst)[1].ports == "half-duplex"

    def ports(src, dst):
        """The keys of the ports a transfer holds: none under "all", one port per PE
        under half-duplex."""
        level, costs = level_of(src, dst)
        if costs.ports == "all":
            return []
        if costs.ports == "half-duplex":
            return [(level, "port", src), (level, "port", dst)]
        return [(level, "send", src), (level, "recv", dst)]
    link_free, link_load = defaultdict(float), {}
    inbox, deferred, waiting = defaultdict(deque), defaultdict(deque), defaultdict(deque)
    outstanding, ready_at, got = [0] * p, [0.0] * p, [None] * p
    value, current, finish, results = [None] * p, [None] * p, [None] * p, [None] * p
    messages, events, seq, ops = [], [(0.0, pe, pe) for pe in range(p)], p, 0

    def schedule(pe, t):
        nonlocal seq
        heapq.heappush(events, (t, seq, pe))
        seq += 1

    def loggp_transfer(src, dst, payload, words, t):
        """(when the sender's CPU is free again, arrival) of a LogGP message."""
        out, into = (("inject", src), ("take", dst)) if model.ports == "full-duplex" else \
            (("stream", src), ("stream", dst))
        wire = max(words - 1, 0) * model.G
        held = max(model.g, wire)
        start = max(t, cpu[src], stream_free[out])
        cpu[src] = start + model.o
        stream_free[out] = start + held
        arrival = max(start + model.o + wire + model.L, stream_free[into] + held)
        stream_free[into] = arrival
        path = network.path(src, dst)
        for link in path:
            link_load[link] = link_load.get(link, 0) + 1
        messages.append(Message(src, dst, start, arrival, words, payload, path))
        return cpu[src], arrival

    def taken(pe, arrival, t):
        """When a receive part that may end at t ends: LogGP takes the message in."""
        if not loggp:
            return max(arrival, t)
        cpu[pe] = max(arrival, t, cpu[pe]) + model.o
        return cpu[pe]

    def transfer(src, dst, payload, words, t):
        if loggp:
            return loggp_transfer(src, dst, payload, words, t)
        path = network.path(src, dst)
        held = ports(src, dst)
        direct = network.direct and held
        links = () if direct else path
        start = max([t] + [link_free[link] for link in links] + [port_free[k] for k in held])
        end = start + level_of(src, dst)[1].transfer_time(words, len(path))
        for port in held:
            port_free[port] = end
        for link in links:
            link_free[link] = end
        for link in path:
            link_load[link] = link_load.get(link, 0) + 1
        messages.append(Message(src, dst, start, end, words, payload, path))
        return end, end

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
            end, arrival = transfer(src, dst, payload, words, t)
            complete(dst, taken(dst, arrival, t), slot, payload)
            complete(src, end)
        elif listens(src, dst):
            deferred[(src, dst)].append((payload, words))
        else:
            end, arrival = transfer(src, dst, payload, words, t)
            inbox[(src, dst)].append((arrival, payload))
            complete(src, end)

    def post_recv(pe, src, slot, t):
        if inbox[(src, pe)]:
            end, payload = inbox[(src, pe)].popleft()
            complete(pe, taken(pe, end, t), slot, payload)
        elif deferred[(src, pe)]:
            payload, words = deferred[(src, pe)].popleft()
            end, _ = transfer(src, pe, payload, words, t)
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
        cpu[pe] = max(cpu[pe], now)
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
    blocked = {pe: waiting_for(current[pe]) for pe in range(p) if finish[pe] is None}
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
