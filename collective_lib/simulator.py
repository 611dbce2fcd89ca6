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
* Ports: ``"full-duplex"``, one port for sending and one for receiving per PE;
  ``"half-duplex"``, a single port for both; ``"all"``, only links limit a PE.  Under
  a :class:`~collective_lib.model.TwoLevelModel` a transfer takes the ports, port
  model and ``transfer_time`` of its level (inside a node or between nodes).
* Under a :class:`~collective_lib.model.LogGPModel` (on ``FullyConnected(p)`` only) a send
  completes after the overhead o, before its message arrives (the model's docstring).
* Every record is checked as it is issued, also one a program built without the
  constructors of :mod:`~collective_lib.ops`: a bad size, time or rank raises a
  ValueError naming the PE, the record and the value.
* If no event is left while some PE still waits, :class:`DeadlockError`;
  if all PEs return while messages are still in flight or unreceived,
  :class:`UnreceivedMessageError`.
"""
from __future__ import annotations

import functools
import gc
import heapq
import inspect
import sys
from collections import defaultdict, deque
from typing import Callable

from .errors import DeadlockError, OperationLimitError, UnreceivedMessageError
from .limits import check_memory, default_max_ops
from .model import CostModel, LogGPModel, TwoLevelModel
from .networks import ROUTE_CACHE_SIZE, FullyConnected, Network, TwoLevel
from .ops import (MAX_WORDS, Compute, Multi, Recv, Send, SendRecv, check_operation, shown,
                  valid_rank, valid_time, valid_words, waiting_for)
from .runs import LinkLoad, Message, Run
from .validate import check_positive_int

__all__ = ["simulate", "DEFAULT_MODEL", "schedule_resume", "start_programs"]

DEFAULT_MODEL = CostModel(ts=1.0, tw=0.0)

_new = tuple.__new__                    # builds a record without its Python-level __new__
# waiting[pe] of a PE that waits on no single source: ints like the ranks, so that the
# test "does dst wait for me?" compares two ints, the fastest comparison there is.
_IDLE = -1                              # no receive posted
_MULTI = -2                             # a multi() posted its receives (in the inbox)
_LARGEST = sys.float_info.max           # a finite time is at most this


def _rank_check(pe: int, role: str, other, p: int):
    """Raise a ValueError naming the bad rank; return quietly for a good one."""
    try:
        valid_rank(other, p)
    except ValueError:
        raise ValueError(f"PE {pe} names {role} {shown(other)}, which is not a rank in "
                         f"0..{p - 1}") from None
    if other == pe:
        raise ValueError(f"PE {pe} names itself as {role}; a PE cannot message itself")


def _valid(pe: int, op, rule: Callable, value):
    """``rule(value)`` (:func:`~collective_lib.ops.valid_words` or ``valid_time``) for a
    field of a record PE ``pe`` yielded, or the ValueError naming PE, record and value.
    The loop tests the common case inline (an int size, a float time), this the rest
    (``Send(1, x, 1.5)``): a numpy integer passes, NaN, infinities, negatives, bools not."""
    try:
        return rule(value)
    except ValueError as err:
        raise ValueError(f"PE {pe} yielded {type(op).__name__} with {err}") from None


def simulate(program: Callable, p: int, inputs=None, *, network: Network | None = None,
             model: CostModel | None = None, trace: bool | Callable = True,
             max_ops: int | None = None,
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
    model : CostModel, TwoLevelModel or LogGPModel, optional
        Defaults to ``CostModel(ts=1.0, tw=0.0)``, so that times count steps; a
        :class:`~collective_lib.model.TwoLevelModel` needs a ``TwoLevel`` network, a
        :class:`~collective_lib.model.LogGPModel` a ``FullyConnected`` one.
    trace : bool or callable
        ``True``: record every message in ``Run.messages``.  ``False``: record
        none (for large runs; ``link_load`` is kept).  A callable: stream the
        trace, calling it with each :class:`Message` as its transfer is issued
        (``Run.messages`` stays empty), so that a huge run can write its trace
        to disk without holding it; see the second example.
    max_ops : int, optional
        Raise :class:`OperationLimitError` once the PEs together issued more
        operations than this (a guard against endless programs).  Defaults to
        :func:`~collective_lib.limits.default_max_ops` ``(p)``, which every
        catalog program stays far below; pass a larger value for a program that
        legitimately issues more.
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

    Streaming the trace, here into a CSV file of one line per message:

    >>> import csv, io
    >>> sink = io.StringIO()
    >>> rows = csv.writer(sink)
    >>> run = simulate(ping, 2, ["hello", None],
    ...                trace=lambda m: rows.writerow((m.src, m.dst, m.start, m.end, m.words)))
    >>> sink.getvalue().splitlines(), run.messages
    (['0,1,0.0,1.0,5'], [])
    """
    check_positive_int("p", p)
    network = FullyConnected(p) if network is None else network
    if not isinstance(network, Network):
        raise TypeError(f"network must be a Network such as Ring(p), got {network!r}")
    if network.p != p:
        raise ValueError(f"the network has {network.p} PEs but p={p}")
    model = DEFAULT_MODEL if model is None else model
    if type(model) is LogGPModel and not isinstance(network, FullyConnected):
        raise ValueError(f"a LogGPModel has no links and no levels (L is the latency between "
                         f"any two PEs): run it on FullyConnected(p), got network={network!r}")
    if not isinstance(model, (CostModel, LogGPModel)) and not (
            isinstance(model, TwoLevelModel) and isinstance(network, TwoLevel)):
        raise TypeError(f"model must be a CostModel, a LogGPModel, or a TwoLevelModel on a "
                        f"TwoLevel network; got model={model!r} on network={network!r}")
    if max_ops is not None:
        check_positive_int("max_ops", max_ops)
    if not (isinstance(trace, bool) or callable(trace)):
        raise TypeError(f"trace must be True, False or a callable taking each Message, "
                        f"got {trace!r}")
    check_memory(p)
    gens = start_programs(program, p, inputs, params)
    return _Engine(gens, p, network, model, trace, max_ops).run()


def schedule_resume(buckets: dict, times: list, pe: int, t: float) -> None:
    """Queue "resume PE pe at time t": one bucket per distinct time, FIFO within it, and
    ``times`` a heap of the bucket times.  Both simulators of the package keep their events
    this way: PEs resumed at one time run in the order their events were created."""
    bucket = buckets.get(t)
    if bucket is None:
        buckets[t] = [pe]
        heapq.heappush(times, t)
    else:
        bucket.append(pe)


def _enqueue(queues: dict, channel: int, item) -> None:
    """Append ``item`` to the FIFO queue ``queues[channel]``: a lone item is stored as it
    is, and only a second one makes a deque (600 bytes).  Items are never None or deques."""
    queue = queues.get(channel)
    if queue is None:
        queues[channel] = item
    elif type(queue) is deque:
        queue.append(item)
    else:
        queues[channel] = deque((queue, item))


def _dequeue(queues: dict, channel: int):
    """Remove and return the oldest item of ``queues[channel]``, or None if it is empty;
    an emptied queue leaves the dict, so memory follows the channels in use."""
    queue = queues.pop(channel, None)
    if type(queue) is deque:
        item = queue.popleft()
        if queue:
            queues[channel] = queue
        return item
    return queue


def start_programs(program: Callable, p: int, inputs, params: dict) -> list:
    """One generator per PE: ``program(me, p, inputs[me], **params)``; ``inputs`` is a list
    of length p, a callable of the rank, or None (every simulator of the package's)."""
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


class _Agenda(dict):
    """The events: ``agenda[t].append(pe)`` resumes PE pe at time t, after the PEs queued
    there before it (a heap keyed on (time, sequence) at a fraction of its cost); a new
    time gets its bucket here and goes on the heap ``agenda.times``."""
    __slots__ = ("times",)

    def __missing__(self, t):
        heapq.heappush(self.times, t)
        bucket = self[t] = []
        return bucket


class _Engine:
    """The event loop.  One instance simulates one run.

    It follows the rules of the module docstring in named steps, each written once:

    * :meth:`_loop`: take the earliest time of the agenda, resume each PE queued
      there with what its last operation gave it, and *issue* what it yields;
    * issuing an operation: its send parts are *claimed* (``claim``: the ports
      and links it holds, its duration ``model.transfer_time(words, hops)``, its
      trace record) and *delivered*: to the receiver's posted receive, a slot of
      its ``multi()``, or its inbox (``deliver``: a channel already holding
      something); its receive parts take the oldest message of their channel or
      are posted; when nothing is left to wait for, the PE is queued again on
      the agenda (*resumed*);
    * ``complete``: one part of a blocked PE's operation is done; when the last
      one is, the PE is resumed at the time its last part ended;
    * :meth:`_outcome`: deadlock, unreceived messages, or the :class:`Run`.

    A call costs about a tenth of a transfer, so each transfer costs at most one:
    ``claim`` writes out delivering and completing, and ``sendrecv``, the commonest
    operation, has a branch that writes out all three (each marked).  The reference
    engine (``tests/reference_engine.py``) holds both to the same rules.

    State lives in flat lists indexed by rank or link id, and in dicts keyed by the
    channel ``src * p + dst`` holding only what is live.  The steps are closures over
    it, bound to locals of the loop: an attribute lookup per transfer costs.
    """

    def __init__(self, gens, p, network, model, trace, max_ops):
        self.gens, self.p, self.network, self.model = gens, p, network, model
        trace = [] if trace is True else trace or None     # a list, a callable, or None
        self.messages, self.emit = (trace, trace.append) if type(trace) is list else ([], trace)
        self.max_ops = default_max_ops(p) if max_ops is None else max_ops
        self.budget = "max_ops" if max_ops else f"the default budget default_max_ops({p}) = " \
            "10,000 + 4p operations per PE"
        levels = self.levels = model.levels if type(model) is TwoLevelModel else None
        kinds = [level.ports for level in levels or (model,)]   # levels: inside, between
        self.use_ports = any(kind != "all" for kind in kinds)   # "all": only links limit a PE
        self.loggp = type(model) is LogGPModel          # its own claim (LogGP sends are eager)
        self.listen_first = "half-duplex" in kinds and not self.loggp  # receiving when listening
        send_free = [[0.0] * p for _ in kinds]          # when each port is free, per level
        recv_free = [free if kind == "half-duplex" else [0.0] * p for free, kind in zip(
            send_free, kinds)]                          # half-duplex: one port
        self.send_free, self.recv_free = (send_free, recv_free) if levels else (
            send_free[0], recv_free[0])
        # Links are resources unless the network is direct and a port already serializes
        # all a link could carry; then a link is its channel, and only its load counts: in a
        # list while p^2 <= 2^20, else a dict, which keeps link_order (ids by first use) itself.
        self.use_links = not (network.direct and self.use_ports)
        links, self.link_order = network.link_count, []
        if not self.use_links:
            self.link_free, self.link_load = None, [0] * (p * p) if p <= 1024 else defaultdict(int)
            self.link_order = [] if p <= 1024 else deque(maxlen=0)
        elif links <= 8 * p + 65536:
            self.link_free, self.link_load = [0.0] * links, [0] * links
        else:                               # e.g. FullyConnected(p) under ports="all"
            self.link_free, self.link_load, self.link_order = \
                defaultdict(float), defaultdict(int), None
        # channel -> its route: the link id of a one-hop route (fewer cache misses than
        # a tuple), else the tuple of link ids; room for two routes per link (16 x 4096 at most).
        self.routes = {}
        self.durations = {}                 # words, or (words, hops) -> its duration
        self.route_cap = min(max(ROUTE_CACHE_SIZE, 2 * network.link_count), 16 * ROUTE_CACHE_SIZE)
        # Per PE: what it is resumed with (after it returned: its result); the one
        # operation it is blocked on, its parts not yet done, when its done parts ended.
        self.resume, self.current, self.outstanding, self.ready_at = \
            [None] * p, [None] * p, [0] * p, [0.0] * p
        # waiting[pe]: the source of its posted receive, _IDLE, or _MULTI once it issued
        # a multi(), whose posted receives wait in ``inbox`` (below).
        self.waiting, self.finish = [_IDLE] * p, [None] * p
        # FIFO queues per channel (see _enqueue).  inbox[channel]: the messages sent but
        # not yet received, (arrival, payload) each; or, while the receiver's multi()
        # waits there, the slot of its results the next message fills (an int; a list
        # of them, oldest first).  Never both: a message that finds a slot fills it.
        self.inbox = {}
        self.deferred = {}                  # channel -> (payload, words): half-duplex senders
        self.times = [0.0]                  # the agenda's times, a heap
        self.agenda = _Agenda()
        self.agenda.times = self.times
        self.agenda[0.0], self.operations = list(range(p)), 0

    def run(self) -> Run:
        # The run makes no reference cycles: the cyclic collector would only scan its
        # millions of live objects (generators, messages, the trace), freeing nothing.
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._loop()
        finally:
            if collecting:
                gc.enable()

    # The steps, each a closure over the run's state.

    def _route_step(self):
        """``route_of(channel, src, dst)``: the route src to dst, cached (emptied when full)."""
        routes, cap, link_ids = self.routes, self.route_cap, self.network.link_ids
        link_order, link_load = self.link_order, self.link_load

        def route_of(channel, src, dst):
            if len(routes) >= cap:
                routes.clear()
            route = link_ids(src, dst)
            if len(route) == 1:             # as mostly; a link's first use is a cache miss
                route = route[0]
                if link_order is not None and not link_load[route]:
                    link_order.append(route)
            elif link_order is not None:
                for link in route:
                    if not link_load[link]:
                        link_order.append(link)
            routes[channel] = route
            return route
        return route_of

    @functools.cached_property
    def _path_step(self):
        """``(paths, path_of(channel, route, src, dst))``, one per run: a traced transfer's
        links ``(u, v)`` from its route (None: direct), kept per channel if one; if several,
        built afresh from the network's table of pairs (such channels are seldom reused)."""
        paths, cap, link_pair, pair_of = {}, self.route_cap, self.network.link_pair, None

        def path_of(channel, route, src, dst):
            nonlocal pair_of
            if type(route) is tuple:
                if pair_of is None:             # the first route of several links in the run
                    pair_of = self.network.link_pairs().__getitem__ \
                        if self.network.link_count <= cap else link_pair
                return tuple(map(pair_of, route))
            if len(paths) >= cap:
                paths.clear()
            path = paths[channel] = ((src, dst),) if route is None else (link_pair(route),)
            return path
        return paths, path_of

    def _duration_step(self, durations, model):
        """``duration_of(key)``: ``model.transfer_time(words, hops)`` for ``key`` = words (one hop)
        or (words, hops), kept in ``durations``, which a claim reads first (few keys per run)."""
        def duration_of(key):
            if len(durations) >= 4096:
                durations.clear()
            words, hops = (key, 1) if type(key) is int else key
            duration = durations[key] = model.transfer_time(words, hops)
            return duration
        return duration_of

    def _claim_step(self, deliver, complete, level=None):
        """``claim(src, dst, channel, payload, words, t, post=True)``: claim the resources
        of a transfer that may start at t, deliver it unless ``post`` is False (a
        half-duplex receive takes its payload itself), and return when it ends.
        Under a TwoLevelModel: the claim of each transfer's level (``level``: that level's).

        It starts when the sender's port, the receiver's port and every link of its
        route are free, holds them all for ``model.transfer_time(words, hops)``
        (``duration_of``), counts it on its links and traces it.
        """
        if self.loggp:
            return self._loggp_claim_step(deliver, complete)
        if self.levels is not None and level is None:   # the claim of the transfer's level
            claims = [self._claim_step(deliver, complete, level) for level in (0, 1)]
            return lambda u, v, *rest: claims[self.network.level(u, v)](u, v, *rest)
        model = self.model if level is None else self.levels[level]
        send_free, recv_free, durations = (self.send_free, self.recv_free, self.durations) \
            if level is None else (self.send_free[level], self.recv_free[level], {})
        use_ports, use_links = model.ports != "all", self.use_links
        link_free, link_load, link_order = self.link_free, self.link_load, self.link_order
        routes, route_of = self.routes, self._route_step()
        emit, (paths, path_of) = self.emit, self._path_step
        duration_of = self._duration_step(durations, model)
        waiting, resume, inbox, ready_at, outstanding, current, agenda = (
            self.waiting, self.resume, self.inbox, self.ready_at, self.outstanding,
            self.current, self.agenda)

        def claim(src, dst, channel, payload, words, t, post=True):
            start = t
            if use_ports:
                if send_free[src] > start:
                    start = send_free[src]
                if recv_free[dst] > start:
                    start = recv_free[dst]
            if not use_links:
                key, route = words, None
            elif type(route := routes.get(channel)) is int or \
                    (route is None and type(route := route_of(channel, src, dst)) is int):
                key = words                     # one link, as mostly: no loops
                if link_free[route] > start:
                    start = link_free[route]
            else:
                key = (words, len(route))
                for link in route:
                    if link_free[link] > start:
                        start = link_free[link]
            try:
                end = start + durations[key]
            except KeyError:
                end = start + duration_of(key)
            if use_ports:
                send_free[src] = recv_free[dst] = end
            if not use_links:
                if not link_load[channel]:
                    link_order.append(channel)
                link_load[channel] += 1
            elif key is words:
                link_free[route] = end
                link_load[route] += 1
            else:
                for link in route:
                    link_free[link] = end
                    link_load[link] += 1
            if emit is not None:
                emit(_new(Message, (src, dst, start, end, words, payload,
                                    paths.get(channel) or path_of(channel, route, src, dst))))
            if not post:
                return end
            # delivering, written out (deliver: a channel that holds something)
            if waiting[dst] == src:
                waiting[dst] = _IDLE
                resume[dst] = payload
            elif (held := inbox.get(channel)) is None:
                inbox[channel] = (end, payload)
                return end
            elif type(held) is int:             # a slot of dst's multi()
                del inbox[channel]
                resume[dst][held] = payload
            else:                               # messages queue, or several slots wait
                deliver(dst, channel, end, payload)
                return end
            # complete(dst, end), written out
            if end > ready_at[dst]:
                ready_at[dst] = end
            outstanding[dst] -= 1
            if not outstanding[dst]:
                current[dst] = None
                agenda[ready_at[dst]].append(dst)
            return end
        return claim

    def _loggp_claim_step(self, deliver, complete):
        """``claim`` under a LogGPModel (its docstring has the rules): a message holds the
        sender's CPU for o, then its streams (``inject``, ``take``) for ``occupancy``; it is
        delivered at its arrival, and ``claim`` returns when the sender's CPU is free."""
        model, p, inf = self.model, self.p, float("inf")
        o, costs, cpu, inject = model.o, {}, [0.0] * p, [-inf] * p   # costs: words -> its costs
        take = inject if model.ports == "half-duplex" else [-inf] * p  # one stream, or two
        link_load, link_order, emit, (paths, path_of) = \
            self.link_load, self.link_order, self.emit, self._path_step
        waiting, resume, inbox = self.waiting, self.resume, self.inbox

        def claim(src, dst, channel, payload, words, t, post=True):
            if (cost := costs.get(words)) is None:
                if len(costs) >= 4096:
                    costs.clear()
                cost = costs[words] = (model.occupancy(words), o + model.wire(words) + model.L)
            occupancy, flight = cost
            start = max(t, cpu[src], inject[src])
            cpu[src], inject[src] = start + o, start + occupancy
            end = take[dst] = max(start + flight, take[dst] + occupancy)
            if not link_load[channel]:
                link_order.append(channel)
            link_load[channel] += 1
            if emit is not None:
                emit(_new(Message, (src, dst, start, end, words, payload,
                                    paths.get(channel) or path_of(channel, None, src, dst))))
            if waiting[dst] == src:
                waiting[dst] = _IDLE
                resume[dst] = payload
                complete(dst, end)
            elif channel in inbox:
                deliver(dst, channel, end, payload)
            else:
                inbox[channel] = (end, payload)
            return cpu[src]
        return claim

    def _complete_step(self):
        """``complete(pe, end)``: a part of the operation PE pe waits on ended at ``end``;
        after its last part the PE is resumed when the latest of them ended."""
        ready_at, outstanding, current, agenda = \
            self.ready_at, self.outstanding, self.current, self.agenda
        take_in = self.model.o if self.loggp else None

        def complete(pe, end):
            if end > ready_at[pe]:
                ready_at[pe] = end
            outstanding[pe] -= 1
            if not outstanding[pe]:
                current[pe] = None
                agenda[ready_at[pe]].append(pe)

        def take(pe, arrival):      # LogGP: the CPU takes it in for o once free (ready_at)
            complete(pe, (arrival if arrival > ready_at[pe] else ready_at[pe]) + take_in)
        return complete if take_in is None else take

    def _deliver_step(self, complete):
        """``deliver(dst, channel, end, payload)``: a transfer that ends at ``end`` reaches
        a channel that holds something: the oldest slot of dst's ``multi()`` posted there
        takes its payload (completing that part), or it queues behind the messages there.
        ``claim`` and ``sendrecv``'s branch handle a posted receive and an empty channel."""
        resume, inbox = self.resume, self.inbox

        def deliver(dst, channel, end, payload):
            slot = inbox.pop(channel)
            if type(slot) is list:              # slots, oldest first: the others go back
                held, slot = slot, slot.pop(0)
                inbox[channel] = held if len(held) > 1 else held[0]
            elif type(slot) is not int:         # messages: this one joins them
                inbox[channel] = slot
                _enqueue(inbox, channel, (end, payload))
                return
            resume[dst][slot] = payload
            complete(dst, end)
        return deliver

    def _loop(self) -> Run:
        """Resume the PEs in the order of the agenda and issue what each yields."""
        p, gens, max_ops, max_words = self.p, self.gens, self.max_ops, MAX_WORDS
        complete = self._complete_step()
        deliver = self._deliver_step(complete)
        claim, levels = self._claim_step(deliver, complete), self.levels
        level_of = levels and self.network.level    # two levels: the level of a transfer
        # What the written-out claim of a sendrecv reads (see _claim_step), and the rest
        (use_ports, use_links, send_free, recv_free, link_free, link_load, link_order, routes,
         durations, emit, resume, current, outstanding, ready_at, waiting, finish, inbox,
         deferred, agenda, times, listen_first) = (getattr(self, name) for name in (
            "use_ports use_links send_free recv_free link_free link_load link_order routes "
            "durations emit resume current outstanding ready_at waiting finish inbox deferred "
            "agenda times listen_first").split())
        route_of, duration_of, (paths, path_of) = self._route_step(), self._duration_step(
            durations, self.model), self._path_step
        eager = not listen_first and levels is None and not self.loggp
        heappop, ops, now, take_in = heapq.heappop, 0, 0.0, self.model.o if self.loggp else 0.0
        while times:
            now = heappop(times)
            for pe in agenda[now]:                  # the bucket may grow while we run it
                try:
                    op = gens[pe].send(resume[pe])
                except StopIteration as stop:
                    finish[pe] = now
                    resume[pe] = stop.value
                    gens[pe] = current[pe] = None   # its frame is no longer needed
                    continue
                except Exception as exc:
                    exc.add_note(f"raised by PE {pe} of {p} at simulated time {now:g}")
                    raise
                ops += 1
                if ops > max_ops:
                    self._over_budget(pe, now)
                try:
                    kind = type(op)
                    if kind is SendRecv and eager:
                        # The commonest operation in a branch of its own: the steps of the
                        # loops below (send part, then receive part) without their overhead.
                        dst, payload, src, words = op
                        if type(dst) is not int or dst == pe or not 0 <= dst < p:
                            _rank_check(pe, "destination", dst, p)
                        if type(src) is not int or src == pe or not 0 <= src < p:
                            _rank_check(pe, "source", src, p)
                        if type(words) is not int or not 0 <= words < max_words:   # by hand
                            words = _valid(pe, op, valid_words, words)
                        channel = pe * p + dst
                        # end = claim(pe, dst, channel, payload, words, now), written out
                        start = now
                        if use_ports:
                            if send_free[pe] > start:
                                start = send_free[pe]
                            if recv_free[dst] > start:
                                start = recv_free[dst]
                        if not use_links:
                            key, route = words, None
                        elif type(route := routes.get(channel)) is int or (
                                route is None and type(route := route_of(channel, pe, dst)) is int):
                            key = words
                            if link_free[route] > start:
                                start = link_free[route]
                        else:
                            key = (words, len(route))
                            for link in route:
                                if link_free[link] > start:
                                    start = link_free[link]
                        try:
                            end = start + durations[key]
                        except KeyError:
                            end = start + duration_of(key)
                        if use_ports:
                            send_free[pe] = recv_free[dst] = end
                        if not use_links:
                            if not link_load[channel]:
                                link_order.append(channel)
                            link_load[channel] += 1
                        elif key is words:
                            link_free[route] = end
                            link_load[route] += 1
                        else:
                            for link in route:
                                link_free[link] = end
                                link_load[link] += 1
                        if emit is not None:
                            emit(_new(Message, (pe, dst, start, end, words, payload, paths.get(
                                channel) or path_of(channel, route, pe, dst))))
                        # delivering and complete(dst, end), written out (see claim)
                        if waiting[dst] == pe:
                            waiting[dst] = _IDLE
                            resume[dst] = payload
                            if end > ready_at[dst]:
                                ready_at[dst] = end
                            outstanding[dst] -= 1
                            if not outstanding[dst]:
                                current[dst] = None
                                agenda[ready_at[dst]].append(dst)
                        elif channel not in inbox:
                            inbox[channel] = (end, payload)
                        else:                           # messages queue, or a multi() waits
                            deliver(dst, channel, end, payload)
                        channel = src * p + pe
                        arrived = inbox.pop(channel, None)
                        if arrived is None:             # nothing came: post the receive
                            waiting[pe] = src
                            outstanding[pe] = 1
                            ready_at[pe] = end
                            current[pe] = op
                            continue
                        if type(arrived) is deque:
                            queue, arrived = arrived, arrived.popleft()
                            if queue:
                                inbox[channel] = queue
                        ready, resume[pe] = arrived
                        agenda[ready if ready > end else end].append(pe)
                        continue
                    # Every other operation is send parts (dst, data, words) and receive
                    # parts (sources); a received payload goes to box[key].
                    if kind is SendRecv:
                        sends, sources, box, key = ((op[0], op[1], op[3]),), (op[2],), resume, pe
                    elif kind is Recv:
                        sends, sources, box, key = (), op, resume, pe
                    elif kind is Send:
                        sends, sources = (op,), ()
                        resume[pe] = None
                    elif kind is Multi:
                        sends, sources, key = op[0], op[1], 0
                        box = resume[pe] = [None] * len(sources)
                        waiting[pe] = _MULTI
                    elif kind is Compute:
                        resume[pe] = None
                        t = op[0]
                        if (type(t) is not float and type(t) is not int) or not 0 <= t <= _LARGEST:
                            t = _valid(pe, op, valid_time, t)
                        agenda[now + t].append(pe)
                        continue
                    else:
                        raise TypeError(f"PE {pe} yielded {op!r}, which is not an operation; "
                                        "yield send(...), recv(...), sendrecv(...), "
                                        "exchange(...), compute(...) or multi(...)")
                    ready = now                         # when the parts done so far end
                    left = 0                            # parts still to come
                    for dst, payload, words in sends:       # a Send is such a triple too
                        if type(dst) is not int or dst == pe or not 0 <= dst < p:
                            _rank_check(pe, "destination", dst, p)
                        if type(words) is not int or not 0 <= words < max_words:
                            words = _valid(pe, op, valid_words, words)
                        channel = pe * p + dst
                        if listen_first and waiting[dst] != pe and \
                                type(inbox.get(channel)) not in (int, list) and (levels is None
                                or levels[level_of(pe, dst)].ports == "half-duplex"):
                            # dst does not listen for pe yet: the send waits for it
                            _enqueue(deferred, channel, (payload, words))
                            left += 1
                            continue
                        end = claim(pe, dst, channel, payload, words, now)
                        if end > ready:
                            ready = end
                    for src in sources:
                        if type(src) is not int or src == pe or not 0 <= src < p:
                            _rank_check(pe, "source", src, p)
                        channel = src * p + pe
                        arrived = inbox.pop(channel, None)
                        if type(arrived) is tuple or type(arrived) is deque:
                            if type(arrived) is deque:
                                queue, arrived = arrived, arrived.popleft()
                                if queue:
                                    inbox[channel] = queue
                            arrival, box[key] = arrived
                            if arrival > ready:
                                ready = arrival
                            ready += take_in    # LogGP's o, after the CPU is free (ready)
                        elif listen_first and channel in deferred:
                            # A half-duplex sender waits for this receive: its transfer starts.
                            payload, words = _dequeue(deferred, channel)
                            end = claim(src, pe, channel, payload, words, now, False)
                            box[key] = payload
                            if end > ready:
                                ready = end
                            if kind is not Multi and not left:
                                # A receive completes its PE before its sender's send
                                agenda[ready].append(pe)
                                left = -1
                            complete(src, end)
                        else:                           # nothing came: post the receive
                            if kind is not Multi:
                                waiting[pe] = src
                            elif arrived is None:
                                inbox[channel] = key
                            elif type(arrived) is int:  # this multi() receives here again
                                inbox[channel] = [arrived, key]
                            else:
                                arrived.append(key)
                                inbox[channel] = arrived
                            left += 1
                        key += 1
                    if not left:
                        agenda[ready].append(pe)
                    elif left > 0:
                        outstanding[pe] = left
                        ready_at[pe] = ready
                        current[pe] = op
                except (TypeError, ValueError, IndexError) as exc:
                    # A statement of this loop failed on the record itself (a Multi whose sends
                    # are not triples): say what is wrong.  The checks it calls say so already.
                    if exc.__traceback__.tb_next is None:
                        try:
                            check_operation(op)
                        except ValueError as err:
                            raise ValueError(f"PE {pe} yielded {err}") from None
                        except TypeError:       # not an operation: exc says so
                            pass
                    raise
            del agenda[now]
        self.operations = ops
        return self._outcome(now)

    def _over_budget(self, pe, now):
        raise OperationLimitError(
            f"the PEs issued more than max_ops={self.max_ops:,} operations ({self.budget}); "
            f"PE {pe} was issuing one at time {now:g}. "
            "Is the program endless? If not, pass a larger max_ops to simulate()")

    def _outcome(self, now) -> Run:
        """The :class:`Run`, or the error of a run that could not end: a deadlock
        (PEs still blocked), or messages nobody received."""
        p, inbox, finish = self.p, self.inbox, self.finish
        blocked = {pe: waiting_for(self.current[pe]) for pe in range(p) if finish[pe] is None}
        if blocked:
            raise DeadlockError(blocked, now)
        unreceived = {divmod(channel, p): len(queue) if type(queue) is deque else 1
                      for channel, queue in inbox.items()}
        if unreceived:
            raise UnreceivedMessageError(unreceived)
        link_load, network = self.link_load, self.network
        if type(link_load) is list:         # the links by first use, then their counts
            ids = self.link_order
            counts = [link_load[link] for link in ids]
        else:                               # a dict keeps that order itself
            ids, counts = list(link_load), list(link_load.values())
        loads = LinkLoad(network if self.use_links else None, ids, counts, p)
        self.link_load = self.link_free = self.routes = None
        return Run(results=self.resume, time=max(finish), finish_times=finish,
                   messages=self.messages, link_load=loads, p=p, network=network,
                   model=self.model, operations=self.operations)
