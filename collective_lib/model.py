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

__all__ = ["CostModel", "TwoLevelModel", "LogGPModel", "PORTS", "ROUTINGS", "LOGGP_PORTS"]

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


LOGGP_PORTS = ("full-duplex", "half-duplex")


@dataclass(frozen=True)
class LogGPModel:
    """The LogGP model: latency, overhead, gap and gap per word (Alexandrov et al. 1995).

    LogP (Culler et al. 1993) separates the time a processor *spends* on a message,
    the overhead ``o``, from the time the message *travels*, the latency ``L``, and
    limits how often a processor may inject (or take in) messages, the gap ``g``;
    LogGP adds ``G``, the gap per word, so that a long message of m words is injected
    over ``(m - 1) G``.  A processor is free again after ``o``, while its message is
    still on its way: sends to several PEs overlap.

    What :func:`~collective_lib.simulator.simulate` does under this model, for a
    message of m words that its sender may inject at time t (``wire = (m - 1) G``,
    0 for m <= 1, and ``occupancy = max(g, wire)``):

    * *start*: the message starts at the earliest time >= t at which the sender's CPU
      is free (the overheads of its earlier parts of the same operation) and its
      injection stream is free;
    * the sender's CPU is busy from *start* for ``o``: its ``send`` completes at
      ``start + o``; the message holds the sender's injection stream for
      ``occupancy`` from *start*, so the next message of that PE starts no earlier
      than ``start + max(g, (m - 1) G)`` (and, its CPU being busy, ``start + o``);
    * it *arrives* at ``start + o + (m - 1) G + L``, or later if the receiver's
      reception stream is busy: it holds that stream for ``occupancy`` up to its
      arrival, so the arrivals at one PE are at least ``max(g, (m - 1) G)`` apart
      (m of the later message, whose words stream in before it arrives);
    * the receiver's CPU takes the message in for ``o``: a ``recv`` completes at
      ``max(arrival, when the receive was posted, when the receiver's CPU is free) + o``.

    The streams are claimed in the order the messages are sent, as the ports of a
    :class:`CostModel` are.  A ``sendrecv`` injects its message first, then takes its
    message in (at least ``o`` after its own start); a ``multi`` injects its messages
    one after another, in its order, then takes in its messages in the order they are
    matched (those that had arrived when it was issued first, in its order of
    sources).  A ``compute`` keeps the CPU busy as ever.  The operation completes when
    its last part has.  Trace records (:class:`~collective_lib.runs.Message`) span
    from *start* to *arrival*.

    Ports: ``"full-duplex"`` (the default), one injection stream and one reception
    stream per PE, each with its own gap; ``"half-duplex"``, one stream for both, so
    that consecutive messages sent or received by one PE are ``g`` apart.  Sends are
    eager under both: a message waits for its receiver, never its sender.

    Links are not modelled: LogGP has no network topology and no contention inside
    the network (``L`` is the latency between any two PEs), so ``simulate`` runs it on
    ``FullyConnected(p)`` only and refuses other networks, a ``TwoLevel`` one included.

    The ``t_s + t_w m`` model: one isolated message of m >= 1 words, from the start of
    its send to the end of its receive, takes ``o + (m - 1) G + L + o``, that is
    ``ts + tw m`` with ``ts = 2 o + L - G`` and ``tw = G`` (:attr:`ts`, :attr:`tw`,
    :meth:`as_cost_model`; :meth:`from_cost_model` is the way back).  Beyond one
    message the models part: a CostModel's sender is busy ``ts + tw m`` per message, a
    LogGP sender only ``o``.

    Parameters
    ----------
    L : float
        Latency: from the end of a message's injection to its arrival.
    o : float
        Overhead: the CPU time a PE spends sending, or taking in, one message.
    g : float
        Gap: the least time between two message starts (or arrivals) at one PE.
    G : float
        Gap per word: a message of m words is injected over ``(m - 1) G``.
    ports : {"full-duplex", "half-duplex"}

    Examples
    --------
    >>> model = LogGPModel(L=5, o=1, g=2, G=0.5)
    >>> model.message_time(1), model.message_time(9)
    (7, 11.0)
    >>> model.ts, model.tw, model.as_cost_model().transfer_time(9)
    (6.5, 0.5, 11.0)
    >>> LogGPModel.from_cost_model(CostModel(ts=3, tw=1), o=1)
    LogGPModel(L=2.0, o=1, g=1, G=1, ports='full-duplex')
    >>> LogGPModel(L=-1, o=0, g=0, G=0)
    Traceback (most recent call last):
    ...
    ValueError: LogGPModel L must be a finite non-negative number, got -1
    """
    L: float = 1.0
    o: float = 0.0
    g: float = 0.0
    G: float = 0.0
    ports: str = "full-duplex"

    def __post_init__(self):
        for name in ("L", "o", "g", "G"):
            value = getattr(self, name)
            if not isinstance(value, Real) or isinstance(value, bool) or \
                    not 0 <= value < float("inf"):
                raise ValueError(f"LogGPModel {name} must be a finite non-negative number, "
                                 f"got {value!r}")
        if self.ports not in LOGGP_PORTS:
            raise ValueError(f"LogGPModel ports must be 'full-duplex' (an injection and a "
                             f"reception stream per PE) or 'half-duplex' (one stream), "
                             f"got {self.ports!r}")

    def wire(self, words: int):
        """``(m - 1) G``: how long the injection of an m-word message lasts (0 for m <= 1)."""
        return (words - 1) * self.G if words > 1 else 0

    def occupancy(self, words: int):
        """``max(g, (m - 1) G)``: how long an m-word message holds each of its streams."""
        return max(self.g, self.wire(words))

    def message_time(self, words: int):
        """``o + (m - 1) G + L + o``: an isolated message, from send to received."""
        return self.o + self.wire(words) + self.L + self.o

    @property
    def ts(self) -> float:
        """``2 o + L - G``: the startup of the ``t_s + t_w m`` model matching one message."""
        return 2 * self.o + self.L - self.G

    @property
    def tw(self) -> float:
        """``G``: the time per word of the ``t_s + t_w m`` model."""
        return self.G

    def as_cost_model(self) -> CostModel:
        """The :class:`CostModel` whose one-message time ``ts + tw m`` equals
        :meth:`message_time` for every m >= 1 (same ports); needs ``2 o + L >= G``."""
        if self.ts < 0:
            raise ValueError(f"no CostModel matches LogGPModel with G={self.G!r} > 2 o + L "
                             f"= {2 * self.o + self.L!r}: ts = 2 o + L - G would be negative")
        return CostModel(ts=self.ts, tw=self.tw, ports=self.ports)

    @classmethod
    def from_cost_model(cls, model: CostModel, o: float = 0.0, g: float | None = None):
        """The LogGPModel with overhead ``o`` (and gap ``g``, default ``G``) whose isolated
        message of m >= 1 words over one hop takes what ``model`` says:
        ``G = tw``, ``L = ts + th + tw - 2 o`` (needs ``2 o <= ts + th + tw``)."""
        if not isinstance(model, CostModel):
            raise TypeError(f"from_cost_model needs a CostModel, got {model!r}")
        latency = model.transfer_time(1, 1) - 2 * o if isinstance(o, Real) else 0.0
        if latency < 0:
            raise ValueError(f"o={o!r} is too large for {model!r}: L = ts + th + tw - 2 o "
                             f"would be {latency!r}")
        ports = model.ports if model.ports in LOGGP_PORTS else "full-duplex"
        return cls(L=latency, o=o, g=model.tw if g is None else g, G=model.tw, ports=ports)
