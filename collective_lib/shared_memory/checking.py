"""Properties of a trace, and the search for an interleaving that breaks one.

:func:`exclusion_violation` and :func:`mutual_exclusion` look at a trace;
:func:`find_violation` runs many seeded interleavings and returns the first
one (its schedule and a readable trace) that breaks a property;
:func:`explore_interleavings` tries *every* interleaving of a tiny case.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from ..errors import OperationLimitError
from ..simulator import start_programs
from ..validate import check_positive_int
from ._engine import Interleaving, Machine, run_interleaved
from .machine import DEFAULT_MODEL, SharedRun, format_trace
from .ops import declared_memory
from .runners import simulate_shared

__all__ = ["exclusion_violation", "mutual_exclusion", "Violation", "find_violation",
           "explore_interleavings", "find_livelock", "Replayer", "RecordedLock"]


def exclusion_violation(trace, exclusive: str = "cs", shared: str | None = "read"):
    """The first trace event at which exclusion breaks, or None.

    An ``exclusive`` section may be entered only while no PE is in an
    ``exclusive`` or ``shared`` section; a ``shared`` section (readers of a
    reader-writer lock) only while no PE is in an ``exclusive`` one.

    >>> from collective_lib.shared_memory import Event
    >>> t = [Event(0, 0, "enter", "cs", None), Event(1, 1, "enter", "cs", None)]
    >>> exclusion_violation(t)
    Event(time=1, pe=1, op='enter', cell='cs', value=None)
    """
    inside_x, inside_s = set(), set()
    for e in trace:
        if e.op == "enter":
            if e.cell == exclusive:
                if inside_x or inside_s:
                    return e
                inside_x.add(e.pe)
            elif shared is not None and e.cell == shared:
                if inside_x:
                    return e
                inside_s.add(e.pe)
        elif e.op == "leave":
            if e.cell == exclusive:
                inside_x.discard(e.pe)
            elif e.cell == shared:
                inside_s.discard(e.pe)
    return None


def mutual_exclusion(run: SharedRun) -> bool:
    """True if no two PEs were ever in section "cs" together, nor a "cs" with a "read"."""
    return exclusion_violation(run.trace) is None


@dataclass
class Violation:
    """An interleaving under which a property fails.

    ``schedule`` replays it (``simulate_shared(..., schedule=v.schedule)``);
    ``run`` is the run it gives (partial when the schedule was shortened to
    the first steps that already show the failure); ``text`` lists its trace.
    For a livelock of :func:`find_livelock`, ``cycle`` is the end of ``schedule``
    that can repeat forever.
    """
    schedule: list
    run: SharedRun
    seed: int | None = None
    reason: str = "the check failed"
    cycle: list | None = None

    @property
    def trace(self) -> list:
        return self.run.trace

    @property
    def text(self) -> str:
        return format_trace(self.run.trace)

    def __str__(self):
        origin = f"seed {self.seed}" if self.seed is not None else "exhaustive search"
        return (f"{self.reason} ({origin}); schedule of {len(self.schedule)} steps: "
                f"{self.schedule}\n{self.text}")


def _shortest_failing_prefix(replay, check, schedule):
    """Binary search the shortest prefix of schedule whose partial run fails check."""
    lo, hi = 0, len(schedule)
    best = None
    while lo < hi:
        mid = (lo + hi) // 2
        run = replay(schedule[:mid], mid)
        if not check(run):
            hi, best = mid, run
        else:
            lo = mid + 1
    return schedule[:lo], best


def find_violation(program: Callable, p: int, check: Callable, *, seeds=range(200),
                   inputs=None, memory=None, max_ops: int = 100_000,
                   line_of: Callable | None = None, shrink: bool = True,
                   progress: bool = True, **params) -> Violation | None:
    """Run seeded random interleavings until one fails ``check``; return it, or None.

    ``check(run) -> bool`` says whether a :class:`SharedRun` is fine
    (:func:`mutual_exclusion` is one).  A run that exceeds ``max_ops``
    operations (PEs that spin forever) is returned as a violation too, with
    the reason "no progress" and the spinning PEs named. With ``progress=False``
    the search judges ``check`` alone: such a run is checked as far as it went,
    and the search ends there (later seeds would spin as long, for nothing).
    With ``shrink`` the schedule is cut to
    the shortest prefix whose partial run already fails; this assumes that a
    failure visible in a trace stays visible when the trace grows, which holds
    for checks that look only at the trace (as all checks should when
    ``run.complete`` is False).

    >>> from collective_lib.shared_memory import read, write
    >>> def racy(me, p, data):                 # read, then write: not atomic
    ...     x = yield read("c")
    ...     yield write("c", x + 1)
    >>> v = find_violation(racy, 2, lambda run: run.memory["c"] == 2, memory={"c": 0},
    ...                    shrink=False)
    >>> v.schedule, v.run.memory
    ([0, 1, 0, 1], {'c': 1})
    """
    check_positive_int("p", p)
    check_positive_int("max_ops", max_ops)
    for seed in seeds:
        cells = declared_memory(program, p, memory, params)
        machine = Machine(p, cells, DEFAULT_MODEL, line_of, True)
        run = run_interleaved(start_programs(program, p, inputs, params), machine, p, None,
                               max_ops, seed, None, None, stop_at_limit=True)
        if run.stopped is not None and progress:
            return Violation(list(run.schedule), run, seed,
                             reason="no progress: " + run.stopped)
        if check(run):
            if run.stopped is not None:
                return None
            continue
        schedule = list(run.schedule)
        if shrink:
            def replay(prefix, n):
                return simulate_shared(program, p, inputs, memory=memory, schedule=prefix,
                                       stop_after=n, max_ops=max_ops, line_of=line_of,
                                       **params)
            short, partial = _shortest_failing_prefix(replay, check, schedule)
            if partial is not None:
                return Violation(short, partial, seed)
        return Violation(schedule, run, seed)
    return None


def explore_interleavings(program: Callable, p: int, check: Callable, *, max_steps: int = 40,
                          max_runs: int = 100_000, inputs=None, memory=None,
                          line_of: Callable | None = None, livelock: bool = True,
                          stats: dict | None = None, **params) -> Violation | None:
    """Try every interleaving of a tiny case; return a shortest failing one, or None.

    The search is breadth first, so the interleaving returned is as short as
    possible, and ``check`` is applied to every prefix (see :func:`find_violation`
    on partial runs).  Three reductions keep it finite and small:

    * a PE in a spin loop (its last operation re-observed an unchanged value
      and it is about to pause or repeat that operation) is not scheduled
      again until some PE changes memory, since it would only see the same
      value again;
    * two prefixes that leave the same memory and have given every PE the same
      sequence of results lead to the same state (programs are deterministic
      functions of what they are told), so only one is explored;
    * prefixes longer than ``max_steps`` are not extended.

    A state where every PE that has not returned spins on unchanged values is
    reported as a livelock (with ``livelock=False`` it is a dead end, so that
    the search judges ``check`` alone).  Raises OperationLimitError after ``max_runs``
    prefixes; its ``covered`` says how many first steps of every interleaving were
    checked by then (a lock whose every poll changes memory has no end of states).

    The first and the last reduction assume something: that a PE polling an unchanged
    value would go on doing the same (a program that counts its polls and then acts
    otherwise does not), and that nothing happens after ``max_steps``. A dict passed as
    ``stats`` says what a search assumed: ``"states"`` it judged, ``"parked"`` (whether
    it left a polling PE out) and ``"cut"`` (whether it stopped an interleaving at
    ``max_steps`` before every PE returned).

    >>> from collective_lib.algorithms.sync import lock_demo, broken_lock, cas_spin_lock
    >>> v = explore_interleavings(lock_demo, 2, mutual_exclusion, lock=broken_lock, rounds=1)
    >>> v.schedule
    [0, 1, 0, 1]
    >>> stats = {}
    >>> explore_interleavings(lock_demo, 2, mutual_exclusion, lock=cas_spin_lock, rounds=1,
    ...                       stats=stats) is None
    True
    >>> stats["parked"], stats["cut"]
    (True, False)
    """
    check_positive_int("p", p)
    runs = 0

    def reach(prefix, depth, parent):
        """The state after ``prefix``: ``parent`` (the state before its last step) taken
        one step further, or, without one, a fresh replay of the whole prefix."""
        nonlocal runs
        runs += 1
        if runs > max_runs:
            error = OperationLimitError(f"explore_interleavings replayed more than "
                                        f"max_runs={max_runs} prefixes; the case is too big "
                                        f"(lower max_steps, p or the number of rounds)")
            error.covered = max(depth - 1, 0)
            raise error
        if parent is None:
            return _replayed(program, p, inputs, memory, line_of, params, prefix)
        parent.step(prefix[-1])
        return parent

    visited = set()
    if stats is None:
        stats = {}
    stats.update(states=0, parked=False, cut=False)
    # Generators cannot be copied, so a state is reached by replaying its prefix; but
    # a state's own objects go on into its last child (half the replays, or all where
    # the other PEs are parked), which takes the same steps as its replay would.
    frontier = [([], None)]
    for depth in range(max_steps + 1):
        following = []
        for prefix, parent in frontier:
            state = reach(prefix, depth, parent)
            key = state.key()
            if key in visited:
                continue
            visited.add(key)
            stats["states"] += 1
            run = state.record(None, None, not state.pending)
            if not check(run):
                return Violation(prefix, run)
            if not state.pending:
                continue
            if depth == max_steps:
                stats["cut"] = True
                continue
            runnable = [pe for pe in state.ready() if not state.parked(pe)]
            if len(runnable) < len(state.pending):
                stats["parked"] = True
            if not runnable and livelock:
                spinning = "; ".join(f"PE {pe} {state.machine.spinning(pe)}"
                                     for pe in state.ready())
                return Violation(prefix, run, reason=f"livelock: {spinning}")
            following.extend((prefix + [pe], None) for pe in runnable[:-1])
            if runnable:
                following.append((prefix + [runnable[-1]], state))
        frontier = following
    return None


def _replayed(program, p, inputs, memory, line_of, params, prefix) -> Interleaving:
    """A fresh interleaving of ``program`` that has taken the steps ``prefix``."""
    cells = declared_memory(program, p, memory, params)
    machine = Machine(p, cells, DEFAULT_MODEL, line_of, True)
    state = Interleaving(start_programs(program, p, inputs, params), machine, p, history=True)
    for pe in prefix:
        state.step(pe)
    return state


def _outside(state):
    """What a state shows outside the PEs' own objects: the memory, each PE's last memory
    operation with its result and its next operation (None once it returned), and how
    many times a PE entered a section."""
    key = (tuple(state.machine.values.values()), tuple(state.machine.last),
           tuple(state.pending.get(pe) for pe in range(state.p)),
           sum(1 for e in state.machine.trace if e.op == "enter"))
    try:
        hash(key)
        return key
    except TypeError:
        return repr(key)


def _components(moves: dict) -> list:
    """The strongly connected components of the graph ``{node: {(label, node): None}}``
    that hold a cycle, each a list of nodes (Tarjan's algorithm, without recursion)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    for root in moves:
        if root in index:
            continue
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        work = [(root, iter(moves[root]))]
        while work:
            node, edges = work[-1]
            for _, nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(moves.get(nxt, ()))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while component[-1:] != [node]:
                        component.append(stack.pop())
                        on_stack.discard(component[-1])
                    if len(component) > 1 or any(nxt == node for _, nxt in moves.get(node, ())):
                        found.append(component)
    return found


def _path(moves: dict, start, goal, inside) -> list:
    """The labels of a shortest path from ``start`` to ``goal`` through nodes ``inside``."""
    came = {start: None}
    todo = [start]
    for node in todo:
        if node == goal:
            labels = []
            while came[node] is not None:
                node, label = came[node]
                labels.append(label)
            return labels[::-1]
        for label, nxt in moves.get(node, ()):
            if nxt in inside and nxt not in came:
                came[nxt] = (node, label)
                todo.append(nxt)
    raise ValueError("no path within a strongly connected component")


def find_livelock(program: Callable, p: int, *, max_steps: int = 60, max_runs: int = 30_000,
                  repeats: int = 20, inputs=None, memory=None,
                  line_of: Callable | None = None, **params) -> Violation | None:
    """An interleaving after which the PEs can go on forever without entering a section or
    returning, every PE that has not returned taking steps; or None.

    :func:`explore_interleavings` reports a livelock in which every waiting PE re-reads
    an unchanged value. PEs whose waiting changes memory (a ``fetch_add`` undone after a
    failed try) never look parked, and their interleavings have no end. This search
    compares states by what they show outside the PEs' objects (the memory, each PE's
    last memory operation and next one, how many times a PE entered a section), explores
    at most ``max_runs`` of them breadth first, up to ``max_steps`` steps, and looks for
    steps that lead from a state back to it in which every PE that has not returned takes a
    step (so no PE entered or returned on the way). A PE's object may hold more than the
    state shows, so the cycle is then replayed ``repeats`` times over, and reported only
    if every repetition comes back to the same state. ``Violation.cycle`` holds the
    steps that repeat, at the end of ``Violation.schedule``; its run ends after one
    repetition.

    >>> from collective_lib.algorithms.sync import cas_spin_lock, lock_demo
    >>> find_livelock(lock_demo, 2, lock=cas_spin_lock, rounds=2) is None
    True
    """
    check_positive_int("p", p)

    def replay(prefix):
        return _replayed(program, p, inputs, memory, line_of, params, prefix)

    first, ready, moves = {}, {}, {}      # moves: {state: {(pe, next state): None}}
    # (prefix, the key of the state before its last step, that state itself if it goes
    # on into this prefix rather than being replayed: as in explore_interleavings)
    frontier, runs = [([], None, None)], 0
    for depth in range(max_steps + 1):
        following = []
        for prefix, parent, live in frontier[:max_runs - runs]:
            runs += 1
            if live is None:
                state = replay(prefix)
            else:
                state = live
                state.step(prefix[-1])
            key = _outside(state)
            if parent is not None:
                moves.setdefault(parent, {})[(prefix[-1], key)] = None
            if key in first:
                continue
            first[key], ready[key] = prefix, state.ready()
            if depth < max_steps:
                following.extend((prefix + [pe], key, None) for pe in ready[key][:-1])
                following.extend((prefix + [pe], key, state) for pe in ready[key][-1:])
        frontier = following
    for component in _components(moves):
        inside = set(component)
        start = min(component, key=lambda node: len(first[node]))
        steps = {}                          # a step of each PE that stays inside
        for node in component:
            for pe, nxt in moves.get(node, ()):
                if nxt in inside:
                    steps.setdefault(pe, (node, nxt))
        if not ready[start] or sorted(steps) != ready[start]:
            continue                        # a PE that never moves: not a livelock
        cycle, here = [], start
        for pe in ready[start]:
            node, nxt = steps[pe]
            cycle += _path(moves, here, node, inside) + [pe]
            here = nxt
        cycle += _path(moves, here, start, inside)
        state = replay(first[start])
        for _ in range(repeats):
            for pe in cycle:
                state.step(pe)
            if _outside(state) != start:
                break
        else:
            shown = replay(first[start] + cycle).record(None, None, False)
            who = ", ".join(f"PE {pe}" for pe in ready[start])
            return Violation(first[start] + cycle, shown, cycle=cycle,
                             reason=f"livelock: {who} keep taking steps, and none enters")
    return None


class Replayer:
    """Instances of ``cls`` driven through histories of method calls and sent values.

    ``start(args, history)`` makes a fresh ``cls(*args)`` and plays ``history``
    (``("call", method)`` starts a generator method, ``("send", value)``
    resumes it); ``step(args, step)`` plays one more step on the object that
    ``args`` last played. Each returns the next event: ``("op", operation)``
    yielded next, or ``("done", value)`` when the method returned.

    >>> from collective_lib.algorithms.sync import cas_spin_lock
    >>> Replayer(cas_spin_lock).start((0, 2), [("call", "acquire")])
    ('op', CAS(cell='lock', expected=0, new=1))
    """

    def __init__(self, cls):
        self.cls = cls
        self.live: dict = {}            # args -> [instance, generator]

    def start(self, args, history):
        self.live[tuple(args)] = [self.cls(*args), None]
        event = None
        for step in history:
            event = self.step(args, step)
        return event

    def step(self, args, step):
        live = self.live[tuple(args)]
        kind, value = step
        try:
            if kind == "call":
                live[1] = getattr(live[0], value)()
                return ("op", next(live[1]))
            return ("op", live[1].send(value))
        except StopIteration as stop:
            return ("done", stop.value)


class _Node:
    """One history of a lock object in a :class:`RecordedLock`: its last step and next event."""
    __slots__ = ("parent", "step", "event", "children")

    def __init__(self, parent, step):
        self.parent, self.step, self.event, self.children = parent, step, None, {}

    def history(self) -> list:
        steps, node = [], self
        while node.parent is not None:
            steps.append(node.step)
            node = node.parent
        return steps[::-1]


class RecordedLock:
    """A lock class whose instances replay what ``lock``'s did before (deterministic locks).

    The exhaustive and random searches replay interleavings from the
    start, creating the PEs' lock objects anew each time; a lock's methods are
    deterministic functions of the values they are told, so each distinct
    history (a node of a tree of histories per PE) is asked of the real lock
    only once, and then only one step further than the object already went
    whenever possible. ``replayer`` has the methods of :class:`Replayer`
    (default: one on ``lock``; a trusted grader passes one that asks the
    student's process).

    >>> from collective_lib.algorithms.sync import cas_spin_lock, lock_demo
    >>> from collective_lib.shared_memory import explore_interleavings
    >>> recorded = RecordedLock(cas_spin_lock)
    >>> explore_interleavings(lock_demo, 2, mutual_exclusion, lock=recorded, rounds=1) is None
    True
    >>> 0 < recorded.asked < 100
    True
    """

    def __init__(self, lock, replayer=None):
        self.lock = lock
        self.replayer = replayer or Replayer(lock)
        self.__name__ = getattr(lock, "__name__", type(lock).__name__)
        self.roots: dict = {}
        self.live: dict = {}            # args -> the node the replayer's object is at
        self.memories: dict = {}        # p -> the cells lock.memory(p) declared
        self.asked = 0

    def memory(self, p):
        """``lock.memory(p)``, asked once per p (a replay asks it every time)."""
        if p not in self.memories:
            self.memories[p] = self.lock.memory(p)
        cells = self.memories[p]
        return dict(cells) if isinstance(cells, dict) else cells

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return getattr(self.lock, attr)            # memory(p), shared, ...

    def __call__(self, me, p):
        args = (me, p)
        return _RecordedInstance(self, args, self.roots.setdefault(args, _Node(None, None)))

    def resumed(self, instance):
        """A copy of ``instance`` (an object this lock made, which a run left in the middle
        of a method, or between two), and a generator that goes on with that method from
        where ``instance`` stands, or finishes at once between two methods. A search can so
        start every replay after a long history without playing it again.

        >>> from collective_lib.algorithms.sync import ttas_backoff_lock
        >>> recorded = RecordedLock(ttas_backoff_lock)
        >>> mine = recorded(0, 2)
        >>> acquiring = mine.acquire()
        >>> next(acquiring), acquiring.send(1)
        (Read(cell='lock'), Pause(time=1))
        >>> copy, rest = recorded.resumed(mine)
        >>> next(rest), rest.send(None), rest.send(0)
        (Pause(time=1), Read(cell='lock'), CAS(cell='lock', expected=0, new=1))
        """
        if not isinstance(instance, _RecordedInstance) or instance._recorded is not self:
            raise TypeError(f"{instance!r} is not an object of this RecordedLock")
        copy = _RecordedInstance(self, instance._args, instance._node)
        return copy, copy._resume()

    def event(self, args, node: _Node):
        if node.event is None:
            self.asked += 1
            if self.live.get(args) is node.parent and node.parent.parent is not None:
                node.event = self.replayer.step(args, node.step)
            else:
                node.event = self.replayer.start(args, node.history())
            self.live[args] = node
        return node.event


class _RecordedInstance:
    def __init__(self, recorded: RecordedLock, args: tuple, root: _Node):
        self._recorded, self._args, self._node = recorded, args, root

    def __getattr__(self, method):
        if method.startswith("_"):
            raise AttributeError(method)
        return lambda: self._run(method)

    def _advance(self, step) -> None:
        node = self._node.children.get(step)
        if node is None:
            node = self._node.children[step] = _Node(self._node, step)
        self._node = node

    def _run(self, method):
        self._advance(("call", method))
        return (yield from self._resume())

    def _resume(self):
        if self._node.parent is None:           # no method started yet
            return None
        while True:
            kind, value = self._recorded.event(self._args, self._node)
            if kind == "done":
                return value
            sent = yield value
            self._advance(("send", _frozen(sent)))


def _frozen(value):
    """A hashable stand-in for a value sent to a lock (memory contents are plain data)."""
    if isinstance(value, list):
        return tuple(_frozen(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _frozen(v)) for k, v in value.items()))
    return value
