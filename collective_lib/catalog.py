"""One registry of every algorithm: its program, closed-form cost, constraints and source.

Widgets, tests and the book's summary tables read :func:`catalog`, so an
algorithm that is registered here shows up everywhere.  Each module of
:mod:`collective_lib.algorithms` registers its programs with :func:`register`
against an operation of :mod:`collective_lib.collectives` (which says what
every PE must return); :func:`catalog` finds those modules by itself (see
:func:`discover`), so a new module needs no edit here.
"""
from __future__ import annotations

import importlib
import pkgutil
import sys
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Callable

import numpy as np

from .model import CostModel, TwoLevelModel
from .networks import FullyConnected, Network
from .collectives import operations
from .limits import check_memory, default_max_ops
from .runs import Run
from .simulator import simulate
from .validate import check_positive_int

__all__ = ["Algorithm", "catalog", "register", "discover", "resolve_program", "optimal_params",
           "entry_model", "entry_params", "ALGORITHMS_PACKAGE"]

#: The package whose modules :func:`discover` imports.
ALGORITHMS_PACKAGE = "collective_lib.algorithms"

_ALGORITHMS: dict = {}
_discovered = False
_view = None          # (the registry, its size, the ordered read-only view catalog() returns)


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
        The collective it implements, a name of :func:`~collective_lib.collectives.operations`.
    cost : callable
        ``cost(p, m, model, **params)``: the closed form, in the model's units.
    exact : bool
        True when the simulated time equals ``cost`` (for pipelined algorithms:
        whenever ``k`` divides ``m``); False when ``cost`` is an upper bound.
    ports : str
        The port model the closed form assumes.
    network_for : callable
        ``network_for(p)`` builds the network the closed form is stated for (a
        function of p; ``network`` names a network itself, as in :meth:`simulate`).
    valid_p : callable
        ``valid_p(p)`` raises ValueError naming p when the algorithm cannot run on p PEs.
    source : str
        Book, section and figure or equation.
    params : dict
        The keyword parameters the program takes, with their defaults.
    optimal_k : callable or None
        For pipelined algorithms: ``optimal_k(p, m, model, **params)``, the
        number of packets that minimizes ``cost``.
    summary : str
        The first line of the program's docstring.
    tex : str
        ``cost``'s closed form as TeX math without delimiters (see
        :func:`register`), for the summary tables.
    requires_commutative : bool
        True when the program combines operands out of rank order for some of
        its parameters (e.g. the binomial reduction to a root other than 0), so
        that only a commutative operator is guaranteed a correct result.  False
        (the default) promises ``m_0 op m_1 op ... op m_(p-1)`` in rank order for
        every associative ``op``.
    valid_m : callable or None
        ``valid_m(p, m, **params)`` raises ValueError naming m (or the
        parameter m must accommodate, such as the number of packets k) when
        the algorithm cannot run with m words on p PEs, beyond what the
        operation itself refuses (see :meth:`check`).  None: every m the
        operation accepts.
    held : str, callable, dict or None
        What a PE "holds" after each step, for the tables of values: the name
        of one of the program's local variables, a function of a PE's recorded
        state (a record with ``locals``, ``done``, ``result``, ``received``,
        ``heard``), or a dict ``label -> one of those`` (one line each).  A name
        that is not a local variable reads the state's ``result``, ``received``
        or ``heard``.  None: the last payload received, then the result.
    """
    name: str
    program: Callable
    operation: str
    cost: Callable
    exact: bool
    ports: str
    network_for: Callable
    valid_p: Callable
    source: str
    params: dict = field(default_factory=dict)
    optimal_k: Callable | None = None
    summary: str = ""
    tex: str = ""             # a default only for the field order: register() requires it
    requires_commutative: bool = False
    valid_m: Callable | None = None
    held: object = None

    def valid(self, p: int) -> bool:
        """Whether the algorithm can run on ``p`` PEs."""
        try:
            self.valid_p(p)
        except ValueError:
            return False
        return True

    def refusal(self, p: int, m: int, **params) -> str | None:
        """Why the algorithm cannot run on ``p`` PEs with ``m`` words, or None if it can.

        Checks p (``valid_p``), the m the operation accepts and the entry's own
        ``valid_m`` with the entry's default parameters overridden by ``params``.

        >>> entry = catalog()["rabenseifner_allreduce"]
        >>> entry.refusal(8, 16) is None, entry.refusal(6, 16)
        (True, 'rabenseifner_allreduce needs p to be a power of two, got p=6')
        """
        try:
            self.check(p, m, **params)
        except ValueError as exc:
            return str(exc)
        return None

    def accepts(self, p: int, m: int, **params) -> bool:
        """Whether the algorithm can run on ``p`` PEs with ``m`` words (see :meth:`check`).

        >>> entry = catalog()["pipelined_binary_tree_broadcast"]
        >>> entry.accepts(7, 4, k=4), entry.accepts(7, 3, k=4)
        (True, False)
        """
        return self.refusal(p, m, **params) is None

    def check(self, p: int, m: int, **params) -> None:
        """Raise a ValueError naming the bad value if the algorithm cannot run on p PEs, m words.

        >>> catalog()["rabenseifner_allreduce"].check(8, 4)
        Traceback (most recent call last):
        ...
        ValueError: rabenseifner_allreduce cuts the message into one block per PE and needs m >= p words, got m=4 for p=8
        """
        self.valid_p(p)
        operations()[self.operation].check_m(m)
        if self.valid_m is not None:
            self.valid_m(p, m, **{**self.params, **params})

    def default_model(self, ts: float = 1.0, tw: float = 0.0, th: float = 0.0) -> CostModel:
        """A cost model with the port model this entry's closed form assumes."""
        return CostModel(ts=ts, tw=tw, th=th, ports=self.ports)

    def make_inputs(self, p: int, m: int = 1, seed: int = 0, **params) -> list:
        """Random inputs of ``m`` words for ``p`` PEs (reproducible from ``seed``)."""
        self.valid_p(p)
        params = {**self.params, **params}
        return operations()[self.operation].make_inputs(p, m, np.random.default_rng(seed),
                                                        **params)

    def expected(self, inputs: list, **params) -> list:
        """What every PE must return for ``inputs``."""
        return operations()[self.operation].expected(inputs, **{**self.params, **params})

    def simulate(self, p: int, m: int = 1, *, model: CostModel | None = None,
                 network: Network | None = None, seed: int = 0, inputs: list | None = None,
                 trace: bool | Callable = True, **params) -> Run:
        """Simulate this algorithm on random ``m``-word inputs (or on ``inputs``).

        The network defaults to the one the closed form is stated for and the
        model to ``CostModel(ts=1, tw=0)`` with this entry's port model;
        ``trace`` is :func:`~collective_lib.simulate`'s (a callable streams it).
        """
        self.valid_p(p)
        params = {**self.params, **params}
        if inputs is None:
            # Refuse before building inputs that alone would not fit.
            check_memory(p, operations()[self.operation].input_words(p, m))
            inputs = self.make_inputs(p, m, seed, **params)
        # Given inputs, m may be left at its default: the budget counts start-ups, which
        # depend on p and the packets k, so it is taken at a length every entry accepts
        # (k packets cut, a block per PE) whatever the inputs hold.
        budget = self.max_ops(p, max(m, params.get("k", 1), p), **params)
        return simulate(self.program, p, inputs,
                        network=self.network_for(p) if network is None else network,
                        model=self.default_model() if model is None else model,
                        trace=trace, max_ops=budget, **params)

    def max_ops(self, p: int, m: int = 1, **params) -> int:
        """The operation budget of a run on ``p`` PEs with ``m`` words: what it runs allows.

        :func:`~collective_lib.limits.default_max_ops` with the message
        start-ups of the closed form (its time under ts = 1, tw = 0, with
        this entry's ports): a long run, such as a pipeline of many packets,
        gets room for its operations, and an endless one still stops.

        >>> entry = catalog()["linear_pipeline_broadcast"]
        >>> entry.max_ops(2, 30_000, k=30_000) > entry.simulate(2, 30_000, k=30_000).operations
        True
        """
        startups = self.cost(p, m, self.default_model(ts=1.0, tw=0.0),
                             **{**self.params, **params})
        return default_max_ops(p, startups)

    def predict(self, p: int, m: int, model: CostModel | None = None, **params) -> float:
        """The closed-form time for ``p`` PEs and ``m`` words."""
        self.valid_p(p)
        return self.cost(p, m, self.default_model() if model is None else model,
                         **{**self.params, **params})


def _any_p(p):
    check_positive_int("p", p)


def _check_held(key, held):
    """``held`` as :func:`register` takes it, or a ValueError naming the algorithm."""
    if held is None:
        return None
    specs = list(held.values()) if isinstance(held, dict) else [held]
    labels_ok = not isinstance(held, dict) or (held and all(isinstance(k, str) for k in held))
    if labels_ok and all(isinstance(spec, str) or callable(spec) for spec in specs):
        return held
    raise ValueError(f"held= of {key!r} must name a local variable, be a function of a PE's "
                     f"state, or be a dict label -> one of those; got {held!r}")


def _check_tex(key, tex):
    """``tex`` as :func:`register` takes it, or an error naming the algorithm."""
    if tex is None:
        raise TypeError(f"register() of {key!r} needs tex=: the closed form of its cost "
                        f"function as TeX math, e.g. tex=r\"(p - 1)(t_s + t_w m)\"")
    if not isinstance(tex, str) or not tex.strip() or "$" in tex:
        raise ValueError(f"tex= of {key!r} must be a non-empty string of TeX math without "
                         f"delimiters ($), got {tex!r}")
    return tex


def optimal_params(entry, p, m, model) -> dict:
    """``{"k": entry.optimal_k(...)}`` for a pipelined entry, ``{}`` for any other.

    Pass it as ``params=`` to :func:`~collective_lib.viz.cost_curves` to draw every
    pipelined algorithm at its best number of packets; the summary tables evaluate
    each closed form with it.
    """
    if entry.optimal_k is None:
        return {}
    return {"k": entry.optimal_k(p, m, model)}


def entry_model(entry, model):
    """The entry's own port model, with the times (and routing) of ``model`` when given.

    None gives the entry's default model (:meth:`Algorithm.default_model`); a
    :class:`~collective_lib.model.TwoLevelModel` gives each of its levels the
    entry's port model.
    """
    if model is None:
        return entry.default_model()
    if isinstance(model, TwoLevelModel):
        return TwoLevelModel(inside=entry_model(entry, model.inside),
                             between=entry_model(entry, model.between))
    return CostModel(model.ts, model.tw, model.th, ports=entry.ports, routing=model.routing)


def entry_params(entry, params, p, m, model) -> dict:
    """The keyword parameters ``entry`` takes, out of ``params``.

    ``params`` is a dict or a function ``params(entry, p, m, model)`` such as
    :func:`optimal_params`; an entry only gets the parameters its program takes
    (k means nothing to a binomial tree).
    """
    given = params(entry, p, m, model) if callable(params) else dict(params or {})
    return {key: value for key, value in given.items() if key in entry.params}


def register(*, operation: str, cost: Callable, source: str, exact: bool,
             tex: str | None = None, ports: str = "full-duplex",
             network_for: Callable = FullyConnected,
             valid_p: Callable = _any_p, valid_m: Callable | None = None,
             params: dict | None = None, optimal_k: Callable | None = None,
             name: str | None = None, requires_commutative: bool = False, held=None):
    r"""Decorator: add a program to the catalog under its own name.

    The program's own constraints come with it, so no caller has to try it
    and catch the error: ``valid_p(p)`` and ``valid_m(p, m, **params)`` raise a
    ValueError naming the bad value (see :meth:`Algorithm.check`),
    ``requires_commutative`` says the operator must commute; ``held`` says what
    a PE holds after each step (see :class:`Algorithm`).

    ``tex`` is required (a registration without it raises a TypeError naming
    the algorithm): the closed form as TeX math without delimiters, the same
    formula as the cost function's docstring, in the book's notation: t_s and
    t_w (also where the entry's source writes Sanders' alpha and beta, as the
    cost functions' docstrings say ts and tw), p, m, k, ``\lceil\log_2 p\rceil``
    and the symbols the cost's docstring defines (L the tree's height, h, d,
    M', ...).  The summary tables typeset it with MathJax, so it uses only
    ``\lceil \rceil \lfloor \rfloor \log \log_2 \frac \sqrt \cdot \min \max
    \sum \bigl \bigr \Bigl \Bigr \left \right \alpha \beta \mathit \text
    \quad``, and no ``$``, ``<``, ``>`` or ``&`` (it goes into HTML and Markdown as it is),
    e.g. ``tex=r"\lceil \log_2 p \rceil (t_s + t_w m)"``.
    """
    def add(program):
        key = name or program.__name__
        if key in _ALGORITHMS:
            raise ValueError(f"algorithm {key!r} is registered twice")
        if operation not in operations():
            raise ValueError(f"{key!r} implements the unknown operation {operation!r}; "
                             f"collective_lib.collectives declares {list(operations())}")

        def check(p, _valid=valid_p):
            _any_p(p)
            _valid(p)

        doc = (program.__doc__ or "").strip().splitlines()
        _ALGORITHMS[key] = Algorithm(
            name=key, program=program, operation=operation, cost=cost, exact=exact,
            ports=ports, network_for=network_for, valid_p=check, source=source,
            params=dict(params or {}), optimal_k=optimal_k, summary=doc[0] if doc else "",
            tex=_check_tex(key, tex), requires_commutative=requires_commutative, valid_m=valid_m,
            held=_check_held(key, held))
        return program
    return add


def _position(module_name: str) -> tuple:
    """Sort key of a module's entries: its ``CATALOG_POSITION``, then its name."""
    position = getattr(sys.modules.get(module_name), "CATALOG_POSITION", None)
    return (position is None, position or 0, module_name)


def discover() -> None:
    """Import every module of :mod:`collective_lib.algorithms` (importing one registers it).

    :func:`catalog` calls it once; call it again after adding a module while
    the program runs.
    """
    global _discovered
    package = importlib.import_module(ALGORITHMS_PACKAGE)
    for module in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        importlib.import_module(f"{ALGORITHMS_PACKAGE}.{module.name}")
    _discovered = True


def catalog() -> MappingProxyType:
    """Every registered algorithm, by name, in chapter order (read-only).

    Entries are grouped by the module that defines their program, the modules
    in the order of their ``CATALOG_POSITION`` (modules without one last, by
    name), and keep the order they were registered in within a module.

    Examples
    --------
    >>> from collective_lib import catalog
    >>> entry = catalog()["binomial_broadcast"]
    >>> entry.simulate(p=8, m=4).time == entry.predict(p=8, m=4)
    True
    """
    global _view
    if not _discovered:
        discover()
    if _view is None or _view[0] is not _ALGORITHMS or _view[1] != len(_ALGORITHMS):
        ordered = sorted(_ALGORITHMS.values(), key=lambda e: _position(e.program.__module__))
        _view = (_ALGORITHMS, len(_ALGORITHMS),
                 MappingProxyType({entry.name: entry for entry in ordered}))
    return _view[2]


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
