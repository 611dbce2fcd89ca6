"""One registry of every algorithm: its program, closed-form cost and source.

Widgets, tests and the book's summary tables read :func:`catalog`, so an
algorithm that is registered here shows up everywhere.  Each algorithm module
registers its programs with :func:`register` and the collective operations it
implements with :func:`register_operation` (how to make inputs for one, and
what every PE must return).
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable

from .model import CostModel
from .networks import FullyConnected, Network
from .simulator import Run, simulate

__all__ = ["Algorithm", "Operation", "catalog", "register", "register_operation", "operations",
           "resolve_program"]

#: Modules whose import registers algorithms, in chapter order.
ALGORITHM_MODULES = ("collective_lib.algorithms.broadcast", "collective_lib.algorithms.reduce",
                     "collective_lib.algorithms.gather", "collective_lib.algorithms.alltoall",
                     "collective_lib.algorithms.personalized", "collective_lib.algorithms.hrelation",
                     "collective_lib.algorithms.cm200")

_ALGORITHMS: dict = {}
_OPERATIONS: dict = {}


@dataclass(frozen=True)
class Operation:
    """A collective operation: how to make its inputs and what each PE must return.

    ``make_inputs(p, m, rng, **params)`` returns the list of p inputs;
    ``expected(inputs, **params)`` the list of p results a correct algorithm
    returns for them.
    """
    name: str
    make_inputs: Callable
    expected: Callable


@dataclass(frozen=True)
class Algorithm:
    """A catalog entry.

    Attributes
    ----------
    name : str
        The program's name, after the source's procedure.
    program : generator function
        ``program(me, p, data, **params)``.
    operation : str
        The collective it implements (``"broadcast"``, ...).
    cost : callable
        ``cost(p, m, model, **params)``: the closed form, in the model's units.
    exact : bool
        True when the simulated time equals ``cost`` (for pipelined algorithms:
        whenever ``k`` divides ``m``); False when ``cost`` is an upper bound.
    ports : str
        The port model the closed form assumes.
    network : callable
        ``network(p)`` builds the network the closed form is stated for.
    valid_p : callable
        ``valid_p(p)`` raises ValueError naming p when the algorithm cannot run on p PEs.
    source : str
        Book, section and figure or equation.
    params : dict
        The keyword parameters the program takes, with their defaults.
    optimal_k : callable or None
        For pipelined algorithms: ``optimal_k(p, m, model, **params)``, the
        number of packets that minimizes ``cost``.
    requires_commutative : bool
        True when the program combines operands out of rank order for some of
        its parameters (e.g. the binomial reduction to a root other than 0), so
        that only a commutative operator is guaranteed a correct result.  False
        (the default) promises ``m_0 op m_1 op ... op m_(p-1)`` in rank order for
        every associative ``op``.
    """
    name: str
    program: Callable
    operation: str
    cost: Callable
    exact: bool
    ports: str
    network: Callable
    valid_p: Callable
    source: str
    params: dict = field(default_factory=dict)
    optimal_k: Callable | None = None
    summary: str = ""
    requires_commutative: bool = False

    def valid(self, p: int) -> bool:
        """Whether the algorithm can run on ``p`` PEs."""
        try:
            self.valid_p(p)
        except ValueError:
            return False
        return True

    def default_model(self, ts: float = 1.0, tw: float = 0.0, th: float = 0.0) -> CostModel:
        """A cost model with the port model this entry's closed form assumes."""
        return CostModel(ts=ts, tw=tw, th=th, ports=self.ports)

    def make_inputs(self, p: int, m: int = 1, seed: int = 0, **params) -> list:
        """Random inputs of ``m`` words for ``p`` PEs (reproducible from ``seed``)."""
        import numpy as np
        self.valid_p(p)
        params = {**self.params, **params}
        return _OPERATIONS[self.operation].make_inputs(p, m, np.random.default_rng(seed), **params)

    def expected(self, inputs: list, **params) -> list:
        """What every PE must return for ``inputs``."""
        return _OPERATIONS[self.operation].expected(inputs, **{**self.params, **params})

    def simulate(self, p: int, m: int = 1, *, model: CostModel | None = None,
                 network: Network | None = None, seed: int = 0, inputs: list | None = None,
                 trace: bool = True, **params) -> Run:
        """Simulate this algorithm on random ``m``-word inputs (or on ``inputs``).

        The network defaults to the one the closed form is stated for and the
        model to ``CostModel(ts=1, tw=0)`` with this entry's port model.
        """
        self.valid_p(p)
        params = {**self.params, **params}
        if inputs is None:
            inputs = self.make_inputs(p, m, seed, **params)
        return simulate(self.program, p, inputs,
                        network=self.network(p) if network is None else network,
                        model=self.default_model() if model is None else model,
                        trace=trace, **params)

    def predict(self, p: int, m: int, model: CostModel | None = None, **params) -> float:
        """The closed-form time for ``p`` PEs and ``m`` words."""
        self.valid_p(p)
        return self.cost(p, m, self.default_model() if model is None else model,
                         **{**self.params, **params})


def register_operation(name: str, *, make_inputs: Callable, expected: Callable) -> None:
    """Declare a collective operation (done once, by the module of its chapter)."""
    if name in _OPERATIONS:
        raise ValueError(f"operation {name!r} is registered twice")
    _OPERATIONS[name] = Operation(name, make_inputs, expected)


def _any_p(p):
    if not isinstance(p, int) or isinstance(p, bool) or p < 1:
        raise ValueError(f"p must be an integer >= 1, got {p!r}")


def register(*, operation: str, cost: Callable, source: str, exact: bool,
             ports: str = "full-duplex", network: Callable = FullyConnected,
             valid_p: Callable = _any_p, params: dict | None = None,
             optimal_k: Callable | None = None, name: str | None = None,
             requires_commutative: bool = False):
    """Decorator: add a program to the catalog under its own name."""
    def add(program):
        key = name or program.__name__
        if key in _ALGORITHMS:
            raise ValueError(f"algorithm {key!r} is registered twice")
        if operation not in _OPERATIONS:
            raise ValueError(f"register the operation {operation!r} before {key!r}")

        def check(p, _valid=valid_p):
            _any_p(p)
            _valid(p)

        doc = (program.__doc__ or "").strip().splitlines()
        _ALGORITHMS[key] = Algorithm(
            name=key, program=program, operation=operation, cost=cost, exact=exact,
            ports=ports, network=network, valid_p=check, source=source,
            params=dict(params or {}), optimal_k=optimal_k, summary=doc[0] if doc else "",
            requires_commutative=requires_commutative)
        return program
    return add


def catalog() -> MappingProxyType:
    """Every registered algorithm, by name, in chapter order (read-only).

    Examples
    --------
    >>> from collective_lib import catalog
    >>> entry = catalog()["binomial_broadcast"]
    >>> entry.simulate(p=8, m=4).time == entry.predict(p=8, m=4)
    True
    """
    for module in ALGORITHM_MODULES:
        importlib.import_module(module)
    return MappingProxyType(_ALGORITHMS)


def resolve_program(algorithm) -> tuple:
    """``(program, entry)`` for a catalog entry, an entry's name, or a program of one's own.

    ``entry`` is the :class:`Algorithm` (None for a program that is not in the
    catalog).  An unknown name or something that is not callable raises
    ValueError naming it.

    >>> program, entry = resolve_program("binomial_broadcast")
    >>> program is entry.program, resolve_program(program)[1] is None
    (True, True)
    """
    if isinstance(algorithm, str):
        table = catalog()
        if algorithm not in table:
            raise ValueError(f"unknown algorithm {algorithm!r}; the catalog has {sorted(table)}")
        algorithm = table[algorithm]
    if isinstance(algorithm, Algorithm):
        return algorithm.program, algorithm
    if not callable(algorithm):
        raise ValueError(f"expected a generator function, a catalog entry or its name, "
                         f"got {algorithm!r}")
    return algorithm, None


def operations() -> MappingProxyType:
    """Every registered collective operation, by name."""
    catalog()
    return MappingProxyType(_OPERATIONS)
