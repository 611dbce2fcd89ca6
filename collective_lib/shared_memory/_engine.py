"""The engine the runners and the model checker share: the machine and the interleaving.

:class:`Machine` applies one memory operation atomically and accounts for it
under a :class:`~collective_lib.shared_memory.CoherenceModel`; :class:`Interleaving`
runs PEs one operation at a time in an order chosen from outside, which
:func:`run_interleaved` draws from a seed or a schedule.  Internal to
:mod:`collective_lib.shared_memory` (not re-exported, imported by no other package).
"""
from __future__ import annotations

import random
import sys

from ..errors import OperationLimitError
from .machine import Event, SharedRun
from .ops import (CAS, MARKER_KINDS, FetchAdd, Marker, Pause, Read, Write, cell_name,
                  check_memory_operation)

__all__ = ["Machine", "advance", "Interleaving", "run_interleaved"]


_MEMORY_OPS = (Read, Write, CAS, FetchAdd)
_LARGEST = sys.float_info.max   # a finite time is at most this
_WROTE = object()        # marks a previous operation that changed the cell


class Machine:
    """Applies one memory operation atomically and accounts for it.

    ``apply`` returns the operation's result and when it completes.  Cache
    state is one set of holders per line.
    """

    def __init__(self, p, memory, model, line_of, keep_trace):
        self.p = p
        self.values = memory
        if line_of is None:
            self.line = {cell: cell for cell in memory}
        else:
            self.line = {cell: line_of(cell) for cell in memory}
        lines = set(self.line.values())
        self.holders = {line: set() for line in lines}
        self.free_at = dict.fromkeys(lines, 0)
        self.transfers = dict.fromkeys(lines, 0)
        self.accesses = dict.fromkeys(memory, 0)
        self.hit, self.miss, self.contended = model.hit, model.miss, model.contended
        self.trace = [] if keep_trace else None
        self.spins = [0] * p
        self.streak = [0] * p           # consecutive spins of each PE
        self.last = [None] * p          # each PE's last memory operation, for messages
        self.prev = [None] * p          # (cell, value seen or _WROTE, operation)
        self.spun_at = [None] * p       # memory version at a PE's latest spin
        self.version = 0                # how many times memory changed
        self.written_at = 0             # operations done when a PE last wrote to memory
        self.schedule = []

    def unknown(self, pe, cell):
        declared = ", ".join(repr(c) for c in list(self.values)[:12])
        more = ", ..." if len(self.values) > 12 else ""
        return ValueError(f"PE {pe} accessed the cell {cell!r}, which is not declared in "
                          f"memory (declared: {declared or 'none'}{more})")

    def _observe(self, pe, op, name, cell, value):
        """Count a spin when pe's previous memory operation saw this value in this cell."""
        prev = self.prev[pe]
        same = False
        if prev is not None and prev[0] == cell and prev[1] is not _WROTE:
            try:
                same = bool(prev[1] == value)
            except Exception:               # e.g. comparing arrays
                same = False
        self.prev[pe] = (cell, value, op)
        self.last[pe] = (name, cell, value)
        if same:
            self.spins[pe] += 1
            self.streak[pe] += 1
            self.spun_at[pe] = self.version
        else:
            self.streak[pe] = 0
            self.spun_at[pe] = None

    def _changed(self, pe, op, name, cell, value):
        self.prev[pe] = (cell, _WROTE, op)
        self.last[pe] = (name, cell, value)
        self.streak[pe] = 0
        self.spun_at[pe] = None
        self.version += 1
        self.written_at = len(self.schedule)

    def _cost(self, pe, cell, writes, now):
        line = self.line[cell]
        holders = self.holders[line]
        if writes:
            if len(holders) == 1 and pe in holders:
                return now + self.hit
            cost = self.contended if holders else self.miss   # others hold copies?
            holders.clear()
            holders.add(pe)
        else:
            if pe in holders:
                return now + self.hit
            cost = self.miss
            holders.add(pe)
        start = self.free_at[line]
        if start < now:
            start = now
        end = start + cost
        self.free_at[line] = end
        self.transfers[line] += 1
        return end

    def apply(self, pe, op, now):
        """Perform op for pe at time now; return (result, completion time)."""
        kind = type(op)
        self.schedule.append(pe)
        if kind is Pause:
            t = op[0]
            if (type(t) is not int and type(t) is not float) or not 0 <= t <= _LARGEST:
                self.schedule.pop()
                t = self.refuse(pe, op)             # a numpy number passes; NaN does not
                self.schedule.append(pe)
            if self.trace is not None:
                self.trace.append(Event(now, pe, "pause", None, t))
            return None, now + t
        if kind not in _MEMORY_OPS:
            self.schedule.pop()
            raise TypeError(f"PE {pe} yielded {op!r}, which is not a shared-memory operation; "
                            "yield read(...), write(...), cas(...), fetch_add(...), pause(...), "
                            "enter(...), leave(...) or note(...)")
        cell = op[0]
        values = self.values
        try:
            declared = cell in values
        except TypeError:                   # an unhashable name
            declared = False
        if not declared:
            self.schedule.pop()
            raise self.unknown(pe, cell)
        self.accesses[cell] += 1
        if kind is Read:
            result = values[cell]
            end = self._cost(pe, cell, False, now)
            self._observe(pe, op, "read", cell, result)
            logged = result
            name = "read"
        elif kind is CAS:
            current = values[cell]
            try:
                result = bool(current == op.expected)
            except Exception:
                result = current is op.expected
            end = self._cost(pe, cell, True, now)
            if result:
                values[cell] = op.new
                self._changed(pe, op, "cas", cell, op.new)
            else:
                self._observe(pe, op, "cas", cell, current)
            logged = result
            name = "cas"
        elif kind is FetchAdd:
            result = values[cell]
            values[cell] = result + op.delta
            end = self._cost(pe, cell, True, now)
            self._changed(pe, op, "fetch_add", cell, result)
            logged = result
            name = "fetch_add"
        else:                               # Write
            values[cell] = op.value
            end = self._cost(pe, cell, True, now)
            self._changed(pe, op, "write", cell, op.value)
            result = None
            logged = op.value
            name = "write"
        if self.trace is not None:
            self.trace.append(Event(now, pe, name, cell, logged))
        return result, end

    @staticmethod
    def refuse(pe, op):
        """``op``'s time if PE pe's record keeps its rules (a numpy number), else the
        ValueError naming PE, record and value (:func:`check_memory_operation`)."""
        try:
            return check_memory_operation(op)[0]
        except ValueError as err:
            raise ValueError(f"PE {pe} yielded {err}") from None

    def mark(self, pe, marker, now):
        if type(marker) is not Marker:
            raise TypeError(f"PE {pe} yielded {marker!r}, which is not an operation")
        if type(marker[0]) is not str or marker[0] not in MARKER_KINDS:
            self.refuse(pe, marker)
        if self.trace is not None:
            self.trace.append(Event(now, pe, marker.kind, marker.label, marker.value))

    def spinning(self, pe) -> str | None:
        """What PE pe keeps re-reading, if its latest operations were spins."""
        if not self.streak[pe]:
            return None
        op, cell, value = self.last[pe]
        return (f"spins on {op}({cell_name(cell)!s}) seeing {value!r} "
                f"({self.streak[pe]} times in a row)")

    def limit_error(self, max_ops, pending, where):
        lines = []
        for pe in sorted(pending):
            what = self.spinning(pe)
            if what is None:
                what = f"next operation {pending[pe]!r}"
            lines.append(f"  PE {pe}: {what}")
        spinning = [pe for pe in pending if self.streak[pe]]
        hint = ""
        if pending and len(spinning) == len(pending):
            hint = ("\nevery PE that has not returned keeps re-reading an unchanged value: "
                    "a livelock or deadlock (did a PE skip a barrier or keep a lock?)")
        error = OperationLimitError(
            f"the PEs performed more than max_ops={max_ops} operations ({where}) and "
            f"{len(pending)} PE(s) have not returned:\n" + "\n".join(lines) + hint)
        error.since_write = len(self.schedule) - self.written_at   # ops since memory changed
        return error

    def run_record(self, results, finish, now, p, model, mode, seed, complete):
        return SharedRun(results=results, time=now, finish_times=finish,
                         trace=self.trace if self.trace is not None else [],
                         memory=dict(self.values), accesses=dict(self.accesses),
                         transfers=dict(self.transfers), spins=list(self.spins),
                         schedule=self.schedule, operations=len(self.schedule), p=p,
                         model=model, mode=mode, seed=seed, complete=complete)


def advance(gen, value, pe, machine, now, p):
    """Resume a PE with value; run its markers; return (next operation, done, result)."""
    try:
        op = gen.send(value)
        while type(op) is Marker:
            machine.mark(pe, op, now)
            op = gen.send(None)
    except StopIteration as stop:
        return None, True, stop.value
    except Exception as exc:
        exc.add_note(f"raised by PE {pe} of {p} at time {now:g}")
        raise
    return op, False, None


# -- the interleaving engine ----------------------------------------------------------

class Interleaving:
    """Runs PEs one operation at a time, in an order chosen from outside."""

    def __init__(self, gens, machine, p, history=False):
        self.gens, self.machine, self.p = gens, machine, p
        self.history = [[] for _ in range(p)] if history else None
        self.steps = 0
        self.pending = {}
        self.finish = [None] * p
        self.results = [None] * p
        for pe in range(p):
            self._settle(pe, None)

    def _settle(self, pe, value):
        op, done, result = advance(self.gens[pe], value, pe, self.machine, self.steps, self.p)
        if done:
            self.finish[pe] = self.steps
            self.results[pe] = result
            self.pending.pop(pe, None)
        else:
            self.pending[pe] = op

    def ready(self) -> list:
        return sorted(self.pending)

    def parked(self, pe) -> bool:
        """True if pe is in a spin loop that cannot see anything new yet.

        Its last memory operation re-observed the value the one before it saw,
        no memory changed since, and what it does next is a pause or the very
        same operation again.
        """
        machine = self.machine
        spun = machine.spun_at[pe]
        if spun is None or spun != machine.version:
            return False
        op = self.pending.get(pe)
        return type(op) is Pause or op == machine.prev[pe][2]

    def step(self, pe):
        op = self.pending.get(pe)
        if op is None:
            state = "has returned" if self.finish[pe] is not None else "does not exist"
            raise ValueError(f"the schedule names PE {pe} at step {self.steps}, but PE {pe} "
                             f"{state}")
        try:
            value, _ = self.machine.apply(pe, op, self.steps)
        except (ValueError, TypeError) as exc:
            exc.add_note(f"raised for PE {pe} of {self.p} at step {self.steps}")
            raise
        self.steps += 1
        if self.history is not None:
            self.history[pe].append(value)
        self._settle(pe, value)

    def key(self):
        """What determines the future: memory, what each PE was told, who is parked."""
        state = (tuple(self.machine.values.values()),
                 tuple(tuple(h) for h in self.history),
                 tuple(self.parked(pe) for pe in range(self.p)))
        try:
            hash(state)
            return state
        except TypeError:
            return repr(state)

    def record(self, model, seed, complete):
        return self.machine.run_record(self.results, self.finish, self.steps, self.p, model,
                                       "interleaved", seed, complete)


def run_interleaved(gens, machine, p, model, max_ops, seed, schedule, stop_after,
                     stop_at_limit=False):
    run = Interleaving(gens, machine, p)
    rng = random.Random(seed) if seed is not None else None
    schedule = list(schedule) if schedule is not None else []
    last = -1
    while run.pending:
        if stop_after is not None and run.steps >= stop_after:
            return run.record(model, seed, False)
        if run.steps >= max_ops:
            error = machine.limit_error(max_ops, dict(run.pending), f"step {run.steps}")
            if stop_at_limit:
                stopped = run.record(model, seed, False)
                stopped.stopped = str(error)
                return stopped
            raise error
        if run.steps < len(schedule):
            pe = schedule[run.steps]
        elif rng is not None:
            ready = run.ready()
            pe = ready[rng.randrange(len(ready))]
        else:                              # after a schedule without a seed: round robin
            ready = run.ready()
            pe = next((q for q in ready if q > last), ready[0])
        run.step(pe)
        last = pe
    return run.record(model, seed, True)
