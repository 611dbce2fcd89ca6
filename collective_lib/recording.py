"""Recording a run: what every PE held after each of its operations.

:func:`record_run` simulates a program with a wrapper that copies the PE's
local variables whenever it issues an operation and when it returns (read from
its generator frames), and times those states from the message trace.  The
result, a :class:`RecordedRun`, answers "what did PE i hold at time t"
(:meth:`RecordedRun.state`); :func:`collective_lib.viz.values_table` turns it
into the tables of Sanders et al. 2019, Figs. 13.3, 13.7 and 13.9.
"""
from __future__ import annotations

import copy
import inspect
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .catalog import resolve_program
from .runs import Run
from .simulator import simulate

__all__ = ["record_run", "RecordedRun", "PEState"]


class PEState(NamedTuple):
    """What one PE had at one moment of a recorded run (see :func:`record_run`).

    ``locals`` are the program's local variables (for a program that delegates
    with ``yield from``, the variables of every generator in the chain, the
    innermost winning); ``received`` is the payload of the last message that
    had arrived (None before the first); ``heard`` the PEs from which some
    message chain had reached this PE, itself included; ``done``/``result``
    tell whether the program had returned, and what.
    """
    time: float
    locals: dict
    done: bool
    result: object
    received: object
    heard: frozenset


@dataclass
class RecordedRun(Run):
    """A :class:`~collective_lib.runs.Run` with the states of every PE over time.

    ``states[pe]`` lists :class:`PEState` records in time order: one when the
    PE issued each operation (its state after the previous one completed) and
    one when it returned.  ``inputs`` are the inputs the PEs started with,
    ``name`` the program's name and ``held`` what the algorithm declared a PE
    holds (its catalog entry's ``held``; None for a program of one's own).
    """
    inputs: list = field(default_factory=list)
    states: list = field(default_factory=list)
    name: str = ""
    held: object = None

    def state(self, pe: int, time: float) -> PEState:
        """PE ``pe``'s last recorded state at or before ``time``."""
        self._check_pe(pe)
        found = self.states[pe][0]
        for st in self.states[pe]:
            if st.time > time:
                break
            found = st
        return found


def _frozen(value):
    """A copy that later in-place changes of the program cannot alter."""
    if isinstance(value, (list, dict, set, np.ndarray, tuple)):
        try:
            return copy.deepcopy(value)
        except Exception:
            return value
    return value


def _snapshot(frame_locals: dict) -> dict:
    return {k: _frozen(v) for k, v in frame_locals.items()}


def _chain_locals(gen) -> dict:
    """Locals of a generator and of every generator it delegates to (innermost wins)."""
    merged = {}
    while gen is not None and inspect.isgenerator(gen) and gen.gi_frame is not None:
        merged.update(_snapshot(gen.gi_frame.f_locals))
        gen = gen.gi_yieldfrom
    return merged


_CO_GENERATOR = inspect.CO_GENERATOR


class _ReturnLocals:
    """Trace generator frames during one resumption, keeping each frame's last locals.

    The locals of a generator are gone once it has returned, and a program
    often combines its last operand just before ``return``; this catches them
    from the 'return' trace event.  The previous trace function (a debugger,
    a coverage tool) is restored afterwards.
    """

    def __init__(self):
        self.last = {}

    def _local(self, frame, event, arg):
        if event == "return":
            self.last.pop(id(frame), None)
            self.last[id(frame)] = _snapshot(frame.f_locals)
        return self._local

    def _global(self, frame, event, arg):
        if event == "call" and frame.f_code.co_flags & _CO_GENERATOR:
            frame.f_trace_lines = False
            return self._local
        return None

    def __enter__(self):
        self._old = sys.gettrace()
        sys.settrace(self._global)
        return self

    def __exit__(self, *exc):
        sys.settrace(self._old)
        return False

    def merged(self) -> dict:
        """The returned frames' locals, outermost first (it returned last), innermost winning."""
        out = {}
        for frame_locals in reversed(list(self.last.values())):
            out.update(frame_locals)
        return out


def _recorder(program, log):
    """``program`` wrapped so that ``log[me]`` gets (operation, locals) per step and the end."""
    def recorded(me, p, data, **params):
        gen = program(me, p, data, **params)
        if not inspect.isgenerator(gen):
            raise TypeError(f"{getattr(program, '__name__', program)!r} is not a generator "
                            "function: an SPMD program must yield its operations")
        entries = log[me] = []
        value = None
        while True:
            tracer = _ReturnLocals()
            try:
                with tracer:
                    op = gen.send(value)
            except StopIteration as stop:
                entries.append((None, tracer.merged(), stop.value))
                return stop.value
            entries.append((op, _chain_locals(gen), None))
            value = yield op
    recorded.__name__ = getattr(program, "__name__", "program")
    return recorded


def _heard_timelines(run) -> list:
    """Per PE, [(time, frozenset of PEs heard from)], from the message trace.

    A message carries what its sender had heard when it started; the receiver
    knows it when the message has arrived.
    """
    timeline = [[(0.0, frozenset([pe]))] for pe in range(run.p)]

    def at(pe, t):
        found = timeline[pe][0][1]
        for when, known in timeline[pe]:
            if when > t:
                break
            found = known
        return found

    for msg in sorted(run.messages, key=lambda m: (m.end, m.start)):
        known = at(msg.dst, msg.end) | at(msg.src, msg.start)
        timeline[msg.dst].append((msg.end, known))
    return timeline


def _states(run, inputs, log) -> list:
    """Turn the wrapper's log into timed :class:`PEState` lists (times from the trace)."""
    pairs = defaultdict(list)                         # (src, dst) -> messages, FIFO order
    for msg in run.messages:
        pairs[msg.src, msg.dst].append(msg)
    sent, got = defaultdict(int), defaultdict(int)
    heard = _heard_timelines(run)
    states = []
    for pe in range(run.p):
        t, received, out = 0.0, None, []
        arrivals = []                                  # (arrival time, payload), by receive order
        for op, frame_locals, result in log.get(pe, []):
            known = frozenset([pe])
            for when, k in heard[pe]:
                if when <= t:
                    known = k
            for when, payload in arrivals:
                if when <= t:
                    received = payload
            if op is None:
                out.append(PEState(t, frame_locals, True, result, received, known))
                break
            out.append(PEState(t, frame_locals, False, None, received, known))
            sends, srcs, work = op.parts()
            end = t + float(work)
            for dst, _, _ in sends:
                msg = pairs[pe, dst][sent[pe, dst]]
                sent[pe, dst] += 1
                end = max(end, msg.end)
            for src in srcs:
                msg = pairs[src, pe][got[src, pe]]
                got[src, pe] += 1
                end = max(end, msg.end)
                arrivals.append((max(t, msg.end), msg.payload))
            t = end
        states.append(out)
    return states


def record_run(algorithm, p: int, m: int = 1, *, inputs=None, model=None, network=None,
               seed: int = 0, **params) -> RecordedRun:
    """Simulate ``algorithm`` and record what every PE holds over time.

    Parameters
    ----------
    algorithm : catalog entry, its name, or a generator function
        An entry runs with its own defaults (parameters, network, port model,
        random inputs of ``m`` words), as :meth:`Algorithm.simulate` does.
    p, m : int
        PEs and words per message (``m`` only matters without ``inputs``).
    inputs : list or callable, optional
        As for :func:`~collective_lib.simulate`; required for a bare program.
        :func:`~collective_lib.spans.span_inputs` with ``op=span_op`` gives the symbolic
        "x:y" pattern.
    model, network, seed, **params :
        As for :meth:`Algorithm.simulate` / :func:`~collective_lib.simulate`.

    Returns
    -------
    RecordedRun
        The run (always traced) plus ``states``: each PE's local variables
        whenever it issued an operation and when it returned, with times taken
        from the message trace.  Read it with :func:`~collective_lib.viz.values_table`.

    Examples
    --------
    >>> run = record_run("binomial_reduce", 4, inputs=[[1], [2], [3], [4]])
    >>> run.results[0], run.state(0, 1.0).locals["x"], run.state(0, 2.0).locals["x"]
    ([10], [3], [10])
    """
    program, entry = resolve_program(algorithm)
    if entry is not None:
        entry.valid_p(p)
        params = {**entry.params, **params}
        if inputs is None:
            inputs = entry.make_inputs(p, m, seed, **params)
        network = entry.network_for(p) if network is None else network
        model = entry.default_model() if model is None else model
    if callable(inputs):
        inputs = [inputs(i) for i in range(p)]
    inputs = [None] * p if inputs is None else list(inputs)
    log = {}
    run = simulate(_recorder(program, log), p, inputs, network=network, model=model,
                   trace=True, **params)
    fields = {name: getattr(run, name) for name in run.__dataclass_fields__}
    return RecordedRun(**fields, inputs=inputs, states=_states(run, inputs, log),
                       name=entry.name if entry is not None else getattr(program, "__name__", ""),
                       held=entry.held if entry is not None else None)
