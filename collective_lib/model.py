"""The cost model: what one transfer costs and which transfers may overlap.

Grama writes the time of an m-word message over l links as
``t_s + t_h l + t_w m`` with cut-through routing and ``t_s + (t_w m + t_h) l``
with store-and-forward (Grama §2.5.1); Sanders writes ``alpha + beta n`` for a
neighbour (Sanders §13, Table 13.1).  ``ts``/``alpha`` and ``tw``/``beta`` are the
same numbers under two names.

A machine of many-core nodes has two sets of these numbers, one for a transfer
inside a node and one for a transfer between nodes: :class:`TwoLevelModel`.
"""
from __future__ import annotations

from dataclasses import dataclass
from numbers import Real

__all__ = ["CostModel", "TwoLevelModel", "PORTS", "ROUTINGS"]

PORTS = ("half-duplex", "full-duplex", "all")
ROUTINGS = ("cut-through", "store-and-forward")


@dataclass(frozen=True)
class CostModel:
    """Startup, per-word and per-hop costs, the port model and the routing.

    Parameters
    ----------
    ts : float
        Startup time of a message (Grama's t_s, Sanders' alpha).
    tw : float
        Time per word (Grama's t_w, Sanders' beta).
    th : float, default 0
        Time per hop of a routed message (Grama's t_h).
    ports : {"half-duplex", "full-duplex", "all"}
        ``"half-duplex"``: a PE sends *or* receives one message at a time
        (one port, one direction at a time; Sanders, Fig. 13.4).
        ``"full-duplex"``: one send *and* one receive at a time (Grama's
        default, Sanders' ``||``).  ``"all"``: every link of a PE at once
        (the CM-200).
    routing : {"cut-through", "store-and-forward"}

    Examples
    --------
    >>> CostModel(ts=1.0, tw=0.0).transfer_time(words=100, hops=1)
    1.0
    >>> CostModel(ts=10, tw=1, th=2, routing="store-and-forward").transfer_time(4, 3)
    28
    """
    ts: float = 1.0
    tw: float = 0.0
    th: float = 0.0
    ports: str = "full-duplex"
    routing: str = "cut-through"

    def __post_init__(self):
        for name in ("ts", "tw", "th"):
            value = getattr(self, name)
            if not isinstance(value, Real) or isinstance(value, bool) or not value >= 0:
                raise ValueError(f"CostModel {name} must be a non-negative number, got {value!r}")
        if self.ports not in PORTS:
            raise ValueError(f"unknown ports {self.ports!r}; choose one of {PORTS}")
        if self.routing not in ROUTINGS:
            raise ValueError(f"unknown routing {self.routing!r}; choose one of {ROUTINGS}")

    @property
    def alpha(self) -> float:
        """Sanders' name for ``ts``."""
        return self.ts

    @property
    def beta(self) -> float:
        """Sanders' name for ``tw``."""
        return self.tw

    def transfer_time(self, words: int, hops: int = 1):
        """Duration of one message of ``words`` words crossing ``hops`` links."""
        if self.routing == "cut-through":
            return self.ts + self.th * hops + self.tw * words
        return self.ts + (self.tw * words + self.th) * hops


@dataclass(frozen=True)
class TwoLevelModel:
    """A cost model per level of a two-level network: inside a node and between nodes.

    A transfer between two PEs of one node costs ``inside.transfer_time(words, 1)``;
    a transfer between nodes crosses two links, its node's uplink and the
    receiving node's downlink (see :class:`~collective_lib.networks.TwoLevel`),
    and costs ``between.transfer_time(words, 2)``: ``ts + 2 th + tw m`` cut-through,
    ``ts + 2 (tw m + th)`` store-and-forward (with ``th = 0`` both are ``ts + tw m``
    and ``2 tw m``).  Both links are held for the whole transfer.

    Each level has its own ports, under its own port model: a PE may send
    inside its node while it sends to another node (a core's shared memory
    next to its network card).  A plain :class:`CostModel` on a two-level
    network is one model for both levels *and one set of ports*: a PE then
    sends one message at a time, whichever level it goes to.  Under either,
    the transfers of a node's PEs to other nodes share the node's uplink.

    Parameters
    ----------
    inside : CostModel
        Startup, per-word and per-hop time, ports and routing inside a node.
    between : CostModel
        The same between nodes.

    Examples
    --------
    >>> model = TwoLevelModel(inside=CostModel(ts=1, tw=0.1),
    ...                       between=CostModel(ts=10, tw=1, ports="half-duplex"))
    >>> model.transfer_time(8, 1, level=0), model.transfer_time(8, 2, level=1)
    (1.8, 18.0)
    >>> model.level(1).ports
    'half-duplex'
    """
    inside: CostModel = CostModel()
    between: CostModel = CostModel()

    def __post_init__(self):
        for name in ("inside", "between"):
            value = getattr(self, name)
            if not isinstance(value, CostModel):
                raise TypeError(f"TwoLevelModel {name} must be a CostModel, got {value!r}")

    @property
    def levels(self) -> tuple:
        """``(inside, between)``: the models of levels 0 and 1."""
        return (self.inside, self.between)

    def level(self, level: int) -> CostModel:
        """The model of level 0 (inside a node) or 1 (between nodes)."""
        if level not in (0, 1):
            raise ValueError(f"level must be 0 (inside a node) or 1 (between nodes), "
                             f"got {level!r}")
        return self.between if level else self.inside

    def transfer_time(self, words: int, hops: int = 1, level: int = 0):
        """Duration of one message of ``words`` words over ``hops`` links of ``level``."""
        return self.level(level).transfer_time(words, hops)
