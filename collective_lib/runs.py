"""What a simulation returns: the :class:`Run`, its :class:`Message` records and the loads
of its links (:class:`LinkLoad`, counted by the engine, turned into ``{(u, v): n}`` when read).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from .model import CostModel, LogGPModel, TwoLevelModel
from .networks import Network

__all__ = ["Run", "Message", "LinkLoad"]


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
    """The outcome of :func:`~collective_lib.simulator.simulate`.

    Attributes
    ----------
    results : list
        The value each PE's program returned, indexed by rank.
    time : float
        The makespan: when the last PE returned.
    finish_times : list of float
        When each PE returned.
    messages : list of Message
        Every transfer in the order it was issued (empty unless ``trace=True``).
    link_load : Mapping
        ``{(u, v): number of transfers}`` that crossed each directed link, in the
        order of first use (a :class:`LinkLoad`, read like a dict).
    p, network, model :
        What the run was simulated on.
    """
    results: list
    time: float
    finish_times: list
    messages: list
    link_load: Mapping
    p: int
    network: Network
    model: CostModel | TwoLevelModel | LogGPModel
    operations: int = 0

    def step_starts(self) -> list:
        """Distinct start times of the transfers, in increasing order: with unit-cost steps
        (the default model) step ``s`` of a figure in the books begins at ``[s - 1]``."""
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


class LinkLoad(Mapping):
    """``{(u, v): number of transfers}`` over every directed link a run used, in the order
    of first use: a read-only dict built the first time it is read, since few callers of
    a simulation read it and building it costs a large run more than claiming its links.

    ``ids`` are the engine's link ids (a network's :meth:`~collective_lib.networks.Network.link_id`,
    or ``src * p + dst`` for a channel, with ``network`` None) and ``counts`` their loads.

    >>> from collective_lib.networks import Ring
    >>> loads = LinkLoad(Ring(4), [Ring(4).link_id(0, 1)], [3])
    >>> loads
    {(0, 1): 3}
    >>> loads == {(0, 1): 3}, loads[(0, 1)], len(loads)
    (True, 3, 1)
    """

    def __init__(self, network: Network | None, ids, counts, p: int = 0):
        self._source, self._loads = (network, ids, counts, p), None

    def _dict(self) -> dict:
        if self._loads is None:
            network, ids, counts, p = self._source
            pair = network.link_pair if network is not None else lambda c: divmod(c, p)
            self._loads, self._source = dict(zip(map(pair, ids), counts)), None
        return self._loads

    def __getitem__(self, link):
        return self._dict()[link]

    def __iter__(self):
        return iter(self._dict())

    def __len__(self):
        return len(self._dict())

    def __repr__(self):
        return repr(self._dict())
