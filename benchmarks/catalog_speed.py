"""Every catalog entry next to its own Python limit: the simulator's fast path for all of them.

``scale.py`` measures the ring all-gather against a loop written for it alone.
This script does the same for every entry of ``catalog()``, each on its own
network and port model, at a p where one simulation takes about ``--seconds``
of CPU (the p is found by doubling from the entry's smallest valid p > 1):

* ``sim``: ``simulate`` with ``trace=False`` (the entry's default parameters,
  the smallest m it accepts, ts = 1, tw = 0);
* ``limit``: the entry's own programs replayed alone, each PE fed the values it
  received in that simulation, in the order the simulation resumed them, by a
  bare heap loop of the same shape (one pop and one push per operation, keyed
  by the position of the resumption in the simulation); the programs and a heap,
  nothing else: the floor of any event loop that runs them.  Fed the very objects
  of the simulation, PEs that share an object by its identity no longer do
  (``alltoallv_edge_coloring``'s plan); so the limit is the faster of that
  replay and one where each PE is fed what the replay's own PEs sent in that run,
  each payload held from its send to its last receipt as in a simulation ("exact
  replay", which costs the replay some time of its own);
* ``traced``: ``simulate`` with ``trace=True``.

It prints, per entry, p, the operations, the three CPU times (best of
``--repeat`` runs, taking turns), limit / sim (goal >= 0.8) and traced / sim
(goal <= 1.5), then which entries miss a goal. With ``--programs`` it also
times the programs' own code (each resumption of a PE's generator, in CPU time
as the other columns, by ``time.thread_time_ns``) in one more simulation and
one more replay per repeat: ``prog sim`` and ``prog limit`` (best of
``--repeat``), their ratio, and ``limit/sim`` as it would be if the programs
ran as fast inside the simulation as in the replay (the same code on the same
values; what is left of the gap is the engine's own work); then ``prog held``,
the programs' time in the exact replay, where each PE is fed the objects the
replay's own PEs made in that run, and each payload lives from its send to its
last receipt, as in any engine that passes messages (the plain replay drops
what a PE sends at once and feeds objects made in an earlier run), and
``limit/sim held``, the limit with its programs at that speed. With ``--floor``
it also times what the model asks of any engine beyond the limit, in bare
loops: ``links``, claiming the links of every transfer's route (the routes
given: start when all are free, hold and count them; on a direct network under
a port model, where the engine holds the two ports and no link, the ports), and
``routes``, computing each channel's route once (``Network.link_ids``; none on
a direct network), what a first run must do; ``ceiling`` is limit / (limit +
links + routes), the most limit/sim an engine that holds these resources and
routes each channel can reach. The replay must issue as many operations as the
simulation and return the same results, or the line says so and the script
exits with 1; it never fails on speed.

    python benchmarks/catalog_speed.py                       # about 1 s per simulation
    python benchmarks/catalog_speed.py --seconds 0.2 --only ring   # a quick look
    python benchmarks/catalog_speed.py --only reduce_and --programs  # where the time goes
    python benchmarks/catalog_speed.py --only ecube --floor          # what routing costs
"""
from __future__ import annotations

import argparse
import gc
import heapq
import sys
import time
from collections import Counter, deque
from pathlib import Path
from typing import NamedTuple

try:
    import collective_lib  # noqa: F401
except ImportError:                       # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from collective_lib import catalog, simulate  # noqa: E402
from collective_lib.ops import Multi  # noqa: E402

GOAL_LIMIT = 0.8          # sim at least this fraction of the limit's speed
GOAL_TRACE = 1.5          # a traced run at most this many times an untraced one
MAX_P = 1 << 16
ATOMS = (int, float, str, bool, type(None))   # payloads whose identity no program can use


class Sent(NamedTuple):
    """Where a received payload was sent: PE, its operation's index, the send part."""
    pe: int
    op: int
    part: int


def _cpu(fn, collect=True):
    """(CPU seconds, outcome) of fn(), the collector off as in ``simulate`` (and run
    before it if ``collect``: a full collection takes a tenth of a second here)."""
    if collect:
        gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        outcome = fn()
        return time.process_time() - start, outcome
    finally:
        gc.enable()


class Case:
    """One entry at one p: its inputs, parameters and what a simulation needs."""

    def __init__(self, entry, p):
        self.entry, self.p = entry, p
        self.params = dict(entry.params)
        self.m = next(m for m in (1, 2, p, 2 * p, p * p) if entry.accepts(p, m, **self.params))
        self.inputs = entry.make_inputs(p, self.m, seed=0, **self.params)
        self.network, self.model = entry.network_for(p), entry.default_model()
        self.budget = entry.max_ops(p, max(self.m, self.params.get("k", 1), p), **self.params)

    def simulate(self, trace=False, program=None):
        return simulate(program or self.entry.program, self.p, self.inputs,
                        network=self.network, model=self.model, trace=trace,
                        max_ops=self.budget, **self.params)

    def record(self):
        """(run, order, received, exact): a simulation that notes which PE it resumed, in
        order, and the value it resumed each PE with; ``exact`` is ``received`` with every
        payload that is not a number, string or None replaced by where it was sent
        (a :class:`Sent`, or a list of them for a ``multi()``), for :meth:`replay`."""
        order, received, program = [], [[] for _ in range(self.p)], self.entry.program
        exact, yielded, senders = [[] for _ in range(self.p)], [[] for _ in range(self.p)], {}

        def where(value):
            sent = senders.get(id(value))
            return value if sent is None or type(value) in ATOMS else sent

        def noted(me, p, data, **params):
            gen, got, value = program(me, p, data, **params), received[me], None
            while True:
                order.append(me)
                got.append(value)
                exact[me].append([where(v) for v in value] if type(value) is list
                                 and yielded[me] and type(yielded[me][-1]) is Multi
                                 else where(value))
                try:
                    op = gen.send(value)
                except StopIteration as stop:
                    return stop.value
                for part, (_, payload, _) in enumerate(op.parts().sends):
                    senders[id(payload)] = Sent(me, len(yielded[me]), part)
                yielded[me].append(op)      # keeps the payloads alive: ids stay unique
                value = yield op
        return self.simulate(program=noted), order, received, exact

    def replay(self, order, received, exact=False, program=None):
        """A function that runs the limit: (results, operations).

        ``exact=False``: each PE is fed the very objects it received in the recorded
        simulation.  ``exact`` (the last item of :meth:`record`): each is fed what the
        replay's own PEs sent in this run instead, so that PEs that recognise a shared
        object by its identity (``hrelation._shared_plan``) do so here too; as in a
        simulation, a sent payload is held from its send to its last receipt (looked up
        by where it was sent, a little slower)."""
        p, inputs, params = self.p, self.inputs, self.params
        program = program or self.entry.program
        positions = [deque() for _ in range(p)]
        for position, pe in enumerate(order):
            positions[pe].append(position)
        receipts = Counter()            # (pe, op index) -> receipts of that operation's sends
        for got in exact or ():
            for value in got:
                for sent in value if type(value) is list else (value,):
                    if type(sent) is Sent:
                        receipts[sent.pe, sent.op] += 1

        def limit():
            gens = [program(me, p, inputs[me], **params) for me in range(p)]
            values = [iter(got) for got in (exact or received)]
            nexts = [deque(queue) for queue in positions]
            heap = [(nexts[pe].popleft(), pe) for pe in range(p)]
            heapq.heapify(heap)
            heappush, heappop, results, ops = heapq.heappush, heapq.heappop, [None] * p, 0
            # held: (pe, op index) -> [the operation's sent payloads, receipts still to come]
            issued, held = [0] * p, {}

            def payload(sent):
                entry = held[sent.pe, sent.op]
                entry[1] -= 1
                if not entry[1]:
                    del held[sent.pe, sent.op]
                return entry[0][sent.part]

            while heap:
                _, pe = heappop(heap)
                value = next(values[pe])
                if exact:
                    if type(value) is Sent:
                        value = payload(value)
                    elif type(value) is list:
                        value = [payload(v) if type(v) is Sent else v for v in value]
                try:
                    op = gens[pe].send(value)
                except StopIteration as stop:
                    results[pe] = stop.value
                    continue
                if exact:
                    key = (pe, issued[pe])
                    issued[pe] += 1
                    if key in receipts:
                        held[key] = [[data for _, data, _ in op.parts().sends],
                                     receipts[key]]
                ops += 1
                heappush(heap, (nexts[pe].popleft(), pe))
            return results, ops
        limit.exact = bool(exact)
        return limit


def timed(program, clock: list):
    """``program`` with the time of each resumption of its generators added to
    ``clock[0]`` (CPU nanoseconds of this thread): the programs' own code, wherever they run."""
    def program_timed(me, p, data, **params):
        gen, value, now = program(me, p, data, **params), None, time.thread_time_ns
        while True:
            start = now()
            try:
                op = gen.send(value)
            except StopIteration as stop:
                clock[0] += now() - start
                return stop.value
            clock[0] += now() - start
            value = yield op
    return program_timed


def model_floor(case):
    """(links, routes): two bare loops over the transfers of ``case``'s simulation, the
    model's work beyond the limit: claiming the resources each transfer holds, given
    (returns their loads, of the ids ``links.ids``): the links of its route, or on a
    direct network under a port model, where links are not resources, the sender's and
    the receiver's port; and computing the route of each channel it uses once (returns
    the routes; none on a direct network, where the channel is the link)."""
    network, ports = case.network, getattr(case.model, "ports", "all")
    transfers = [(message.src, message.dst) for message in case.simulate(True).messages]
    channels = list(dict.fromkeys(transfers))
    if network.direct and ports != "all":   # port ids: sending src, receiving p + dst
        shift = 0 if ports == "half-duplex" else network.p
        held = {(src, dst): (src, shift + dst) for src, dst in channels}
        channels = []
    else:
        held = {channel: network.link_ids(*channel) for channel in channels}
    # the resources in lists indexed by the order of first use (p^2 link ids on a
    # FullyConnected(p))
    used = {link: i for i, link in enumerate(dict.fromkeys(
        link for route in held.values() for link in route))}
    routes = [tuple(map(used.__getitem__, held[transfer])) for transfer in transfers]

    def links():
        free, load = [0.0] * len(used), [0] * len(used)
        for route in routes:
            start = 0.0
            for link in route:
                if free[link] > start:
                    start = free[link]
            end = start + 1.0
            for link in route:
                free[link] = end
                load[link] += 1
        return load

    def routing():
        link_ids = network.link_ids
        return [link_ids(src, dst) for src, dst in channels]
    links.ids = list(used)
    return links, routing


def valid_ps(entry):
    """The entry's valid p from 2 on, growing about twofold (all of them up to 8)."""
    ps = [p for p in range(2, 9) if entry.valid(p)]
    p = 16
    while p <= MAX_P:
        if entry.valid(p):
            ps.append(p)
            p *= 2
        else:
            p += 1
    return ps


def pick_p(entry, seconds):
    """The first of :func:`valid_ps` whose simulation takes at least ``seconds`` / 3,
    or the one before the first that would take over ``3 * seconds`` by the trend."""
    ps = valid_ps(entry)
    Case(entry, ps[0]).simulate()       # untimed: the first run of a program imports and caches
    previous = None
    for i, p in enumerate(ps):
        took, _ = _cpu(lambda: Case(entry, p).simulate(), collect=False)
        if took >= seconds / 3 or i + 1 == len(ps):
            return p
        if previous and took > 0 and took * took / previous > 3 * seconds:
            return p                    # the next one would grow past the budget
        previous = took
    return ps[-1]


def measure(entry, p, repeat, collect=True, programs=False, floor=False):
    """{"ops", "sim", "limit", "traced", "agree"} for ``entry`` on p PEs; with
    ``programs`` "prog sim", "prog limit" and "prog held": the programs' own CPU seconds
    in each and in the exact replay;
    with ``floor`` "links" and "routes" (:func:`model_floor`)."""
    case = Case(entry, p)
    run, order, received, exact = case.record()
    limit, exact_limit = case.replay(order, received), case.replay(order, received, exact)
    # The floor is the faster replay: fed the simulation's objects, PEs that share one by
    # its identity no longer do (alltoallv_edge_coloring's plan) and do more work.
    if _cpu(exact_limit, collect)[0] < _cpu(limit, collect)[0]:
        limit = exact_limit
    runners = {"sim": case.simulate, "limit": limit, "traced": lambda: case.simulate(True)}
    clock = [0]
    if programs:
        program = timed(entry.program, clock)
        runners["prog sim"] = lambda: case.simulate(program=program)
        runners["prog limit"] = case.replay(order, received, exact if limit.exact else False,
                                            program)
        if not limit.exact:             # else "prog limit" is the exact replay already
            runners["prog held"] = case.replay(order, received, exact, program)
    if floor:
        runners["links"], runners["routes"] = model_floor(case)
    best, outcome = {}, {}
    for _ in range(repeat):
        for name, fn in runners.items():
            # the last run's outcome goes first: a trace of half a gigabyte kept alive
            # through the next run made that run fault in as much memory again
            clock[0], outcome[name] = 0, None
            took, outcome[name] = _cpu(fn, collect)
            took = clock[0] / 1e9 if name.startswith("prog") else took
            best[name] = min(best.get(name, took), took)
    if programs:
        best.setdefault("prog held", best["prog limit"])
    results, ops = outcome["limit"]
    agree = ops == run.operations and repr(results) == repr(run.results) and \
        repr(outcome["sim"].results) == repr(run.results)
    return {"ops": run.operations, "agree": agree, "exact": limit.exact, **best}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0,
                        help="CPU time of one simulation to aim for (default 1)")
    parser.add_argument("--repeat", type=int, default=2, help="runs per figure, best counts")
    parser.add_argument("--only", default="", help="entries whose name contains this")
    parser.add_argument("--programs", action="store_true",
                        help="also time the programs' own code in the simulation and the replay")
    parser.add_argument("--floor", action="store_true",
                        help="also time the model's own work (claiming links, routing) alone")
    args = parser.parse_args(argv)
    entries = [entry for name, entry in sorted(catalog().items()) if args.only in name]
    print(f"every catalog entry at a p where a simulation takes about {args.seconds:g} s of CPU; "
          f"trace off unless said; CPU seconds, best of {args.repeat} runs taking turns")
    print(f"{'entry':<40}{'p':>6}{'ops':>10}{'sim':>8}{'limit':>8}{'traced':>8}"
          f"{'limit/sim':>10}{'traced/sim':>11}" + (
              f"{'prog sim':>9}{'prog limit':>11}{'ratio':>6}{'limit/sim at prog limit':>24}"
              f"{'prog held':>10}{'limit/sim held':>15}"
              if args.programs else "") + (
              f"{'links':>7}{'routes':>7}{'ceiling':>8}" if args.floor else ""))
    agree, short = True, []
    for entry in entries:
        p = pick_p(entry, args.seconds)
        row = measure(entry, p, args.repeat, collect=args.seconds >= 0.1,
                      programs=args.programs, floor=args.floor)
        agree &= row["agree"]
        speed, traced = row["limit"] / row["sim"], row["traced"] / row["sim"]
        if speed < GOAL_LIMIT or traced > GOAL_TRACE:
            short.append(entry.name)
        print(f"{entry.name:<40}{p:>6}{row['ops']:>10,}{row['sim']:>8.3f}{row['limit']:>8.3f}"
              f"{row['traced']:>8.3f}{speed:>10.2f}{traced:>11.2f}"
              + (_programs_columns(row) if args.programs else "")
              + (_floor_columns(row) if args.floor else "") +
              f"{'  (exact replay)' if row['exact'] else ''}"
              f"{'' if row['agree'] else '  DISAGREE'}", flush=True)
    print(f"goals: limit/sim >= {GOAL_LIMIT:g} and traced/sim <= {GOAL_TRACE:g}; "
          f"met by {len(entries) - len(short)} of {len(entries)} entries"
          + (f"; short: {', '.join(short)}" if short else ""))
    print(f"{'PASS' if agree else 'FAIL'}  the replays issue the simulations' operations and "
          "return their results")
    return 0 if agree else 1


def _programs_columns(row) -> str:
    in_sim, in_limit = row["prog sim"], row["prog limit"]
    unslowed = row["sim"] - max(0.0, in_sim - in_limit)      # the programs at the replay's speed
    held = row["limit"] + row["prog held"] - in_limit   # payloads held as in a simulation
    return (f"{in_sim:>9.3f}{in_limit:>11.3f}{in_sim / in_limit:>6.2f}"
            f"{row['limit'] / unslowed:>24.2f}{row['prog held']:>10.3f}"
            f"{held / row['sim']:>15.2f}")


def _floor_columns(row) -> str:
    ceiling = row["limit"] / (row["limit"] + row["links"] + row["routes"])
    return f"{row['links']:>7.3f}{row['routes']:>7.3f}{ceiling:>8.2f}"


if __name__ == "__main__":
    sys.exit(main())
