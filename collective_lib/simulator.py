"""A discrete-event simulator for SPMD programs that yield communication operations.

The simulator never evaluates a cost formula for a whole algorithm: it only
knows what one transfer costs (:class:`~collective_lib.model.CostModel`) and
which resources a transfer holds (the sender's port, the receiver's port and
every directed link of its route).  The running time of an algorithm is what
falls out of the events.

Rules
-----
* A PE runs until it yields an operation; the operation is issued at the PE's
  current time.
* Sends are eager: a transfer starts as soon as the sender's port, the
  receiver's port and every link on the route are free, whether or not the
  receiver has posted its receive.  The one exception is the half-duplex
  model (one port, one direction at a time), where a PE has a single port
  that its own program directs: there a PE receives only while it listens,
  so a transfer starts once the receiver has posted the matching receive
  (two PEs that both send first deadlock, as two people who both talk first
  never hear each other).  This is not Sanders' "telephone model" (§13.6.1),
  in which paired PEs exchange messages in both directions at once.
* Transfers claim resources in the order they are issued (ties in the order
  the PEs were resumed), and a transfer holds all of them for its whole
  duration, ``model.transfer_time(words, hops)``.
* A send completes when its transfer ends; a receive when the matching
  message has arrived.  Messages between a pair of PEs match in FIFO order,
  as in MPI.  A ``sendrecv`` or ``multi`` completes when all its parts have.
* Ports: under ``"full-duplex"`` a PE has one port for sending and one for
  receiving; under ``"half-duplex"`` a single port for both; under ``"all"``
  only links limit a PE.
* If no event is left while some PE still waits, :class:`DeadlockError`;
  if all PEs return while messages are still in flight or unreceived,
  :class:`UnreceivedMessageError`.
"""
from __future__ import annotations

import heapq
import inspect
import os
from collections import defaultdict, deque
from dataclasses import dataclass
from numbers import Integral
from typing import Any, Callable, NamedTuple

from .errors import DeadlockError, OperationLimitError, UnreceivedMessageError
from .model import CostModel
from .networks import FullyConnected, Network
from .ops import Compute, Multi, Recv, Send, SendRecv

__all__ = ["simulate", "Run", "Message", "DEFAULT_MODEL", "schedule_resume", "start_programs",
           "default_max_ops", "memory_estimate", "check_memory", "BYTES_PER_PE", "BYTES_PER_WORD"]

DEFAULT_MODEL = CostModel(ts=1.0, tw=0.0)

#: Peak memory of a run per PE, measured once with ``benchmarks/scale.py`` (a
#: binomial broadcast on 2**18 PEs without a trace: 830 bytes, of which about
#: 500 are the program's own generator and lists), rounded up.
BYTES_PER_PE = 1000
#: Memory per word of Python data: a list slot and an int object.
BYTES_PER_WORD = 36


class Message(NamedTuple):
    """One transfer: who sent what to whom, when, and over which links."""
    src: int
    dst: int
    start: float
    end: float
    words: int
    payload: Any
    path: tuple


@dataclass
class Run:
    """The outcome of :func:`simulate`.

    Attributes
    ----------
    results : list
        The value each PE's program returned, indexed by rank.
    time : float
        The makespan: when the last PE returned.
    finish_times : list of float
        When each PE returned.
    messages : list of Message
        Every transfer in the order it was issued (empty when ``trace=False``).
    link_load : dict
        ``{(u, v): number of transfers}`` that crossed each directed link.
    p, network, model :
        What the run was simulated on.
    """
    results: list
    time: float
    finish_times: list
    messages: list
    link_load: dict
    p: int
    network: Network
    model: CostModel
    operations: int = 0

    def step_starts(self) -> list:
        """Distinct start times of the transfers, in increasing order.

        With unit-cost steps (the default model) step ``s`` of a figure in the
        books is the interval that begins at ``step_starts()[s - 1]``.
        """
        return sorted({m.start for m in self.messages})

    def step(self, s: int) -> list:
        """The messages that start in step ``s`` (counted from 1, as in the figures)."""
        starts = self.step_starts()
        if not 1 <= s <= len(starts):
            raise ValueError(f"step must be in 1..{len(starts)}, got {s!r}")
        return [m for m in self.messages if m.start == starts[s - 1]]

    def received(self, pe: int, by: float = float("inf")) -> list:
        """The messages PE ``pe`` had received by time ``by``."""
        self._check_pe(pe)
        return [m for m in self.messages if m.dst == pe and m.end <= by]

    def informed(self, by: float) -> list:
        """For a one-to-all pattern: the PEs that had received something by ``by``, or sent."""
        knows = {m.src for m in self.messages if m.start < by}
        knows |= {m.dst for m in self.messages if m.end <= by}
        return sorted(knows)

    def max_link_load(self) -> int:
        """The largest number of transfers that crossed one directed link."""
        return max(self.link_load.values(), default=0)

    def _check_pe(self, pe):
        if not isinstance(pe, int) or not 0 <= pe < self.p:
            raise ValueError(f"PE must be in 0..{self.p - 1}, got {pe!r}")


def _describe(op) -> str:
    if isinstance(op, Send):
        return f"send(dst={op.dst}): PE {op.dst} never posted the matching receive"
    if isinstance(op, Recv):
        return f"recv(src={op.src})"
    if isinstance(op, SendRecv):
        return f"sendrecv(dst={op.dst}, src={op.src}): its message from PE {op.src} never came"
    if isinstance(op, Multi):
        return f"multi(recvs={list(op.recvs)}): not every message arrived"
    return repr(op)


def _rank_check(pe: int, role: str, other, p: int):
    """Raise a ValueError naming the bad rank; return quietly for a good one."""
    if not isinstance(other, Integral) or isinstance(other, bool) or not 0 <= other < p:
        raise ValueError(f"PE {pe} names {role} {other!r}, which is not a rank in 0..{p - 1}")
    if other == pe:
        raise ValueError(f"PE {pe} names itself as {role}; a PE cannot message itself")


def simulate(program: Callable, p: int, inputs=None, *, network: Network | None = None,
             model: CostModel | None = None, trace: bool = True, max_ops: int | None = None,
             **params) -> Run:
    """Run the SPMD ``program`` on ``p`` simulated PEs and return the :class:`Run`.

    Parameters
    ----------
    program : generator function
        Called as ``program(me, p, data, **params)`` once per PE.
    p : int
        Number of PEs (at least 1).
    inputs : list of length p, callable, or None
        PE ``i`` gets ``inputs[i]``, or ``inputs(i)`` when callable, or ``None``.
    network : Network, optional
        Defaults to ``FullyConnected(p)``; its ``p`` must equal ``p``.
    model : CostModel, optional
        Defaults to ``CostModel(ts=1.0, tw=0.0)``, so that times count steps.
    trace : bool
        Record every message (switch off for large runs; ``link_load`` is kept).
    max_ops : int, optional
        Raise :class:`OperationLimitError` once the PEs together issued more
        operations than this (a guard against endless programs).  Defaults to
        :func:`default_max_ops` ``(p)``, which every catalog program stays far
        below; pass a larger value for a program that legitimately issues more.
    **params
        Passed to every PE's program (``root``, ``k``, ``op``, ...).

    Examples
    --------
    >>> from collective_lib import simulate, send, recv
    >>> def ping(me, p, data):
    ...     if me == 0:
    ...         yield send(1, data)
    ...     else:
    ...         return (yield recv(0))
    >>> run = simulate(ping, 2, ["hello", None])
    >>> run.results, run.time
    ([None, 'hello'], 1.0)
    """
    if not isinstance(p, int) or isinstance(p, bool) or p < 1:
        raise ValueError(f"p must be an integer >= 1, got {p!r}")
    network = FullyConnected(p) if network is None else network
    if not isinstance(network, Network):
        raise TypeError(f"network must be a Network such as Ring(p), got {network!r}")
    if network.p != p:
        raise ValueError(f"the network has {network.p} PEs but p={p}")
    model = DEFAULT_MODEL if model is None else model
    if not isinstance(model, CostModel):
        raise TypeError(f"model must be a CostModel, got {model!r}")
    if max_ops is not None and (not isinstance(max_ops, int) or max_ops < 1):
        raise ValueError(f"max_ops must be a positive integer, got {max_ops!r}")
    check_memory(p)
    gens = start_programs(program, p, inputs, params)
    return _Engine(gens, p, network, model, trace, max_ops).run()


def default_max_ops(p: int) -> int:
    """The operation budget of :func:`simulate` when the caller passes no ``max_ops``.

    Every PE may issue 10,000 operations plus 4 per PE of the run: room for an
    all-to-all's p - 1 sends and p - 1 receives twice over, and for pipelines
    of thousands of packets, while an endless program on a few PEs stops
    within a second or so.

    >>> default_max_ops(8)
    80256
    """
    return p * (10_000 + 4 * p)


def _available_memory() -> int | None:
    """Bytes of memory the machine can still give: MemAvailable on Linux, else the
    free (or, on macOS, the physical) pages; None where neither can be read (Windows)."""
    try:
        with open("/proc/meminfo") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    for pages in ("SC_AVPHYS_PAGES", "SC_PHYS_PAGES"):
        try:
            return os.sysconf(pages) * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            continue
    return None


def memory_estimate(p: int, words: int = 0) -> int:
    """Bytes a run of ``p`` PEs holding ``words`` words of data needs at least (no trace).

    >>> memory_estimate(2**20) / 2**30 < 1
    True
    """
    return p * BYTES_PER_PE + words * BYTES_PER_WORD


def check_memory(p: int, words: int = 0) -> None:
    """Refuse, before anything starts, a run that cannot fit into this machine's memory.

    Raises MemoryError naming ``p`` (and ``words``), the estimate of
    :func:`memory_estimate` and the memory available.  Where the available
    memory cannot be read the check passes.

    >>> check_memory(10**6, words=10**12)
    Traceback (most recent call last):
    ...
    MemoryError: simulating p=1,000,000 PEs with 1,000,000,000,000 words of data needs about 33,528.5 GiB ...
    """
    need = memory_estimate(p, words)
    available = _available_memory()
    if available is not None and need > available:
        data = f" with {words:,} words of data" if words else ""
        raise MemoryError(
            f"simulating p={p:,} PEs{data} needs about {need / 2**30:,.1f} GiB "
            f"({BYTES_PER_PE} bytes per PE, {BYTES_PER_WORD} per word), more than the "
            f"{available / 2**30:,.1f} GiB this machine has available; choose a smaller p or m")


def schedule_resume(buckets: dict, times: list, pe: int, t: float) -> None:
    """Queue "resume PE pe at time t": one bucket per distinct time, FIFO within it.

    ``times`` is a heap of the bucket times.  Both simulators of the package
    keep their events this way, so PEs resumed at the same time run in the
    order their events were created, as with a heap keyed on (time, sequence).
    """
    bucket = buckets.get(t)
    if bucket is None:
        buckets[t] = [pe]
        heapq.heappush(times, t)
    else:
        bucket.append(pe)


def _enqueue(queues: dict, channel: int, item) -> None:
    """Append ``item`` to the FIFO queue ``queues[channel]``.

    Most channels hold one item at a time, so a lone item is stored as it is and
    only a second one makes a deque (a deque costs 600 bytes, one per PE of a
    large run).  Items are never None and never deques.
    """
    queue = queues.get(channel)
    if queue is None:
        queues[channel] = item
    elif type(queue) is deque:
        queue.append(item)
    else:
        queues[channel] = deque((queue, item))


def _dequeue(queues: dict, channel: int):
    """Remove and return the oldest item of ``queues[channel]``, or None if it is empty.

    An emptied queue leaves the dict, so memory follows the channels in use.
    """
    queue = queues.pop(channel, None)
    if type(queue) is deque:
        item = queue.popleft()
        if queue:
            queues[channel] = queue
        return item
    return queue


def start_programs(program: Callable, p: int, inputs, params: dict) -> list:
    """One generator per PE: ``program(me, p, inputs[me], **params)``.

    ``inputs`` is a list of length p, a callable of the rank, or None.  Shared
    by every simulator of the package, so they all accept the same inputs.
    """
    if inputs is None:
        data = [None] * p
    elif callable(inputs):
        data = [inputs(i) for i in range(p)]
    else:
        data = list(inputs)
        if len(data) != p:
            raise ValueError(f"inputs has {len(data)} entries but p={p}")
    gens = []
    for me in range(p):
        gen = program(me, p, data[me], **params)
        if not inspect.isgenerator(gen):
            raise TypeError(f"{getattr(program, '__name__', program)!r} is not a generator "
                            "function: an SPMD program must yield its operations")
        gens.append(gen)
    return gens


class _Engine:
    """The event loop.  One instance simulates one run.

    Events are "resume PE pe at time t".  They wait in buckets, one per
    distinct time, and a heap holds the bucket times; within a bucket PEs run
    in the order their events were created, so the order is exactly that of a
    heap keyed on (time, sequence number) at a fraction of the cost.
    """

    def __init__(self, gens, p, network, model, trace, max_ops):
        self.gens, self.p, self.network, self.model = gens, p, network, model
        self.trace = trace
        self.max_ops = default_max_ops(p) if max_ops is None else max_ops
        self.budget = "max_ops" if max_ops is not None else \
            f"the default budget default_max_ops({p}) = 10,000 + 4p operations per PE"

    def run(self) -> Run:
        p, gens, model, network = self.p, self.gens, self.model, self.network
        ts, tw, th = model.ts, model.tw, model.th
        cut_through = model.routing == "cut-through"
        ports = model.ports
        # Port resources: the time each becomes free.  Half-duplex shares one list.
        send_free = [0.0] * p
        recv_free = send_free if ports == "half-duplex" else [0.0] * p
        use_ports = ports != "all"
        # Links are resources of their own unless the network is direct and a port
        # already serializes everything a link could carry.
        use_links = not (network.direct and use_ports)
        link_free = defaultdict(float)
        link_load = defaultdict(int)
        # Per-channel state lives in flat dicts keyed by an integer channel id
        # (dst * p + src, or src * p + dst for pair_load) and a queue is dropped as
        # soon as it drains, so memory follows what is live, not p or every pair used.
        pair_load = defaultdict(int)                      # direct networks: src * p + dst -> n
        path_of = network.path
        # Half-duplex: a PE receives only while it listens, so a send waits for the
        # matching receive to be posted.
        listen_first = ports == "half-duplex"

        # FIFO queues per channel (see _enqueue): a lone item is stored as is.
        inbox = {}      # dst * p + src -> (end, payload): arrived, not yet received
        deferred = {}   # dst * p + src -> (payload, words): half-duplex senders waiting
        waiting = {}    # dst * p + src -> slot: posted receives; -1 a single receive,
        #                 else the index in a multi()'s results
        outstanding = [0] * p                  # parts of the current operation not yet done
        ready_at = [0.0] * p                   # when the done parts of the current operation ended
        got = [None] * p                       # payloads of a multi() operation
        resume_value = [None] * p
        current = [None] * p                   # the operation each PE is blocked on
        finish = [None] * p
        results = [None] * p
        messages = [] if self.trace else None
        buckets = {0.0: list(range(p))}
        times = [0.0]
        ops = 0
        max_ops = self.max_ops
        heappush, heappop = heapq.heappush, heapq.heappop

        def transfer(src, dst, payload, words, t):
            """Claim the resources of one transfer that may start at t; return its end."""
            start = t
            if use_ports:
                if send_free[src] > start:
                    start = send_free[src]
                if recv_free[dst] > start:
                    start = recv_free[dst]
            if use_links:
                path = path_of(src, dst)
                for link in path:
                    if link_free[link] > start:
                        start = link_free[link]
                hops = len(path)
            else:
                path = None
                hops = 1
            if cut_through:
                end = start + ts + th * hops + tw * words
            else:
                end = start + ts + (tw * words + th) * hops
            if use_ports:
                send_free[src] = end
                recv_free[dst] = end
            if path is None:
                pair_load[src * p + dst] += 1
            else:
                for link in path:
                    link_free[link] = end
                    link_load[link] += 1
            if messages is not None:
                messages.append(Message(src, dst, start, end, words, payload,
                                        path if path is not None else ((src, dst),)))
            return end

        def complete(pe, end, slot=None, payload=None):
            """One part of PE pe's current operation finished at time end.

            A receive part stores its payload: slot -1 for a single receive,
            else its index in the multi() result list.
            """
            if slot is not None:
                if slot < 0:
                    resume_value[pe] = payload
                else:
                    got[pe][slot] = payload
            if end > ready_at[pe]:
                ready_at[pe] = end
            outstanding[pe] -= 1
            if outstanding[pe] == 0:
                if got[pe] is not None:
                    resume_value[pe] = got[pe]
                    got[pe] = None
                current[pe] = None
                schedule_resume(buckets, times, pe, ready_at[pe])

        def post_send(src, dst, payload, words, t):
            """Issue a send at t.  Eager, except that a half-duplex PE must be listening."""
            channel = dst * p + src
            slot = _dequeue(waiting, channel)
            if slot is not None:                      # the receive is already posted
                end = transfer(src, dst, payload, words, t)
                complete(dst, end, slot, payload)
                complete(src, end)
            elif listen_first:                        # wait until dst posts the receive
                _enqueue(deferred, channel, (payload, words))
            else:                                     # eager: into dst's inbox
                end = transfer(src, dst, payload, words, t)
                _enqueue(inbox, channel, (end, payload))
                complete(src, end)

        def post_recv(pe, src, slot, t):
            """Post a receive at t: match the inbox or a waiting sender, or wait."""
            channel = pe * p + src
            arrived = _dequeue(inbox, channel)
            if arrived is not None:
                end, payload = arrived
                complete(pe, end if end > t else t, slot, payload)
                return
            sender = _dequeue(deferred, channel)
            if sender is not None:                    # half-duplex: the sender was waiting
                payload, words = sender
                end = transfer(src, pe, payload, words, t)
                complete(pe, end, slot, payload)
                complete(src, end)
                return
            _enqueue(waiting, channel, slot)

        fast = use_ports and not use_links and not listen_first
        unit = ts + th
        now = 0.0
        while times:
            now = heappop(times)
            bucket = buckets[now]
            i = 0
            while i < len(bucket):                    # the bucket may grow while we run it
                pe = bucket[i]
                i += 1
                value = resume_value[pe]
                resume_value[pe] = None
                try:
                    op = gens[pe].send(value)
                except StopIteration as stop:
                    finish[pe] = now
                    results[pe] = stop.value
                    gens[pe] = None                   # its frame is no longer needed
                    continue
                except Exception as exc:
                    exc.add_note(f"raised by PE {pe} of {p} at simulated time {now:g}")
                    raise
                ops += 1
                if ops > max_ops:
                    raise OperationLimitError(
                        f"the PEs issued more than max_ops={max_ops:,} operations "
                        f"({self.budget}); PE {pe} was issuing one at time {now:g}. "
                        "Is the program endless? If not, pass a larger max_ops to simulate()")
                kind = type(op)
                ready_at[pe] = now
                if kind is SendRecv and fast:
                    dst, src = op.dst, op.src
                    if type(dst) is not int or dst < 0 or dst >= p or dst == pe:
                        _rank_check(pe, "destination", dst, p)
                    if type(src) is not int or src < 0 or src >= p or src == pe:
                        _rank_check(pe, "source", src, p)
                    current[pe] = op
                    payload = op.data
                    start = send_free[pe]
                    if start < now:
                        start = now
                    if recv_free[dst] > start:
                        start = recv_free[dst]
                    end = start + unit + tw * op.words
                    send_free[pe] = end
                    recv_free[dst] = end
                    pair_load[pe * p + dst] += 1
                    if messages is not None:
                        messages.append(Message(pe, dst, start, end, op.words, payload, ((pe, dst),)))
                    # _dequeue and _enqueue written out for their lone-item case.
                    channel = dst * p + pe
                    slot = waiting.pop(channel, None)
                    if type(slot) is deque:
                        queue, slot = slot, slot.popleft()
                        if queue:
                            waiting[channel] = queue
                    if slot is not None:
                        complete(dst, end, slot, payload)
                    elif channel in inbox:
                        _enqueue(inbox, channel, (end, payload))
                    else:
                        inbox[channel] = (end, payload)
                    channel = pe * p + src
                    arrived = inbox.pop(channel, None)
                    if type(arrived) is deque:
                        queue, arrived = arrived, arrived.popleft()
                        if queue:
                            inbox[channel] = queue
                    if arrived is not None:
                        arrive, value = arrived
                        if arrive < end:
                            arrive = end
                        resume_value[pe] = value
                        current[pe] = None
                        bucket2 = buckets.get(arrive)
                        if bucket2 is None:
                            buckets[arrive] = [pe]
                            heappush(times, arrive)
                        else:
                            bucket2.append(pe)
                    else:
                        outstanding[pe] = 1
                        ready_at[pe] = end
                        if channel in waiting:
                            _enqueue(waiting, channel, -1)
                        else:
                            waiting[channel] = -1
                elif kind is SendRecv:
                    dst, src = op.dst, op.src
                    if type(dst) is not int or dst < 0 or dst >= p or dst == pe:
                        _rank_check(pe, "destination", dst, p)
                    if type(src) is not int or src < 0 or src >= p or src == pe:
                        _rank_check(pe, "source", src, p)
                    outstanding[pe] = 2
                    current[pe] = op
                    post_send(pe, dst, op.data, op.words, now)
                    post_recv(pe, src, -1, now)
                elif kind is Recv:
                    src = op.src
                    if type(src) is not int or src < 0 or src >= p or src == pe:
                        _rank_check(pe, "source", src, p)
                    outstanding[pe] = 1
                    current[pe] = op
                    post_recv(pe, src, -1, now)
                elif kind is Send:
                    dst = op.dst
                    if type(dst) is not int or dst < 0 or dst >= p or dst == pe:
                        _rank_check(pe, "destination", dst, p)
                    outstanding[pe] = 1
                    current[pe] = op
                    post_send(pe, dst, op.data, op.words, now)
                elif kind is Compute:
                    schedule_resume(buckets, times, pe, now + op.time)
                elif kind is Multi:
                    for dst, _, _ in op.sends:
                        _rank_check(pe, "destination", dst, p)
                    for src in op.recvs:
                        _rank_check(pe, "source", src, p)
                    # +1 keeps the operation open until every part has been issued.
                    outstanding[pe] = len(op.sends) + len(op.recvs) + 1
                    got[pe] = [None] * len(op.recvs)
                    current[pe] = op
                    for dst, payload, words in op.sends:
                        post_send(pe, dst, payload, words, now)
                    for slot, src in enumerate(op.recvs):
                        post_recv(pe, src, slot, now)
                    complete(pe, now)
                else:
                    raise TypeError(f"PE {pe} yielded {op!r}, which is not an operation; "
                                    "yield send(...), recv(...), sendrecv(...), exchange(...), "
                                    "compute(...) or multi(...)")
            del buckets[now]

        blocked = {pe: _describe(current[pe]) for pe in range(p) if finish[pe] is None}
        if blocked:
            raise DeadlockError(blocked, now)
        unreceived = {divmod(channel, p)[::-1]: len(box) if type(box) is deque else 1
                      for channel, box in inbox.items()}
        if unreceived:
            raise UnreceivedMessageError(unreceived)
        loads = dict(link_load)
        del link_load
        for pair, n in pair_load.items():
            link = divmod(pair, p)
            loads[link] = loads.get(link, 0) + n
        del pair_load
        return Run(results=results, time=max(finish), finish_times=finish,
                   messages=messages if messages is not None else [],
                   link_load=loads, p=p, network=network, model=model,
                   operations=ops)
