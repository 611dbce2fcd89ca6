"""Choosing an algorithm: every eligible catalog entry's predicted time, and the fastest.

An MPI library picks one algorithm per call from the operation, the number of
processes and the message length (chapter 7 reads MPICH's thresholds; chapter 8
asks where they come from).  This module makes the same choice from the
catalog's closed forms, for whatever :func:`~collective_lib.catalog` holds:

* :func:`predict` -- every eligible entry of an operation with its closed-form
  time on (p, m), fastest first;
* :func:`select` -- the fastest of them;
* :func:`simulate_all` and :func:`simulated_winner` -- the same entries run in
  the simulator (the brute force that checks the selector, as SimGrid's
  "automatic" selector tries every algorithm);
* :func:`winner_map` -- the selected (or simulated) winner on a grid of p and m,
  what :func:`~collective_lib.viz.choice_map` draws.

Eligibility
-----------
An entry of the operation is eligible on (p, m) when

1. it accepts p and m with its parameters (:meth:`~collective_lib.catalog.Algorithm.check`:
   ``valid_p``, the m the operation takes, ``valid_m``; a pipeline with its
   optimal number of packets k, or the k the caller fixes);
2. its port model is one the machine offers.  With ``ports="own"`` (the
   default, as in chapter 1's map, :func:`~collective_lib.viz.cost_curves` and
   the summary tables) every entry counts, each evaluated and simulated with
   the caller's ``ts``, ``tw``, ``th`` and routing on **its own** port model;
   with ``ports="machine"`` only the entries whose port model the caller's
   model offers (``"half-duplex"`` < ``"full-duplex"`` < ``"all"``: a PE that
   may send and receive at once may also do one at a time), simulated on the
   caller's model itself;
3. with ``commutative=False``, it does not require the operator to commute.

Without a ``network`` each entry is simulated on the network its closed form is
stated for (``entry.network_for(p)``); with one, every entry runs on that network,
while its prediction stays its closed form: where links are shared (a ring, two
levels of a cluster) the two may disagree, which is the point of comparing them.
On a :class:`~collective_lib.networks.TwoLevel` network the model may be a
:class:`~collective_lib.model.TwoLevelModel`: the closed forms know one level,
so they are evaluated with its ``between`` level (every transfer priced as one
between nodes, as a tuner that ignores the nodes would), while the simulation
prices each transfer by its level.
A :class:`Choice` says whether its closed form promises to equal the simulated
time at that point (``exact``): the entry is registered exact, its number of
packets divides m, and it runs on its own network and port model.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from .catalog import Algorithm, catalog, entry_model, optimal_params
from .collectives import operations
from .model import PORTS, CostModel, TwoLevelModel
from .networks import Network, TwoLevel
from .validate import check_positive_int

__all__ = ["Choice", "PORT_CHOICES", "predict", "select", "simulate_all", "simulated_winner",
           "winner_map", "selectable_operations"]

#: The values of ``ports=``: see the module's "Eligibility".
PORT_CHOICES = ("own", "machine")


@dataclass(frozen=True)
class Choice:
    """One eligible algorithm at one point (p, m), with its predicted (and simulated) time.

    Attributes
    ----------
    name : str
        The catalog entry's name.
    entry : Algorithm
        The catalog entry.
    predicted : float
        Its closed form at (p, m) with ``params``, in the model's units.
    params : dict
        The keyword parameters it is predicted (and simulated) with: its
        optimal number of packets ``k`` for a pipeline, or what the caller fixed.
    model : CostModel
        The model it is predicted and simulated with (see "Eligibility").
    exact : bool
        Whether the closed form promises ``simulated == predicted`` here: the
        entry is registered exact, its k (if any) divides m, and it runs on its
        own network and port model.  Otherwise the closed form is a bound, or
        stated for another machine.
    simulated : float or None
        The simulated time (:func:`simulate_all`); None from :func:`predict`.
    """
    name: str
    entry: Algorithm = field(repr=False)
    predicted: float
    params: dict
    model: CostModel = field(repr=False)
    exact: bool
    simulated: float | None = None


def selectable_operations() -> list:
    """The operations that at least one catalog entry implements, in chapter order.

    >>> selectable_operations()[:3]
    ['broadcast', 'reduce', 'allreduce']
    """
    used = {entry.operation for entry in catalog().values()}
    return [name for name in operations() if name in used]


def _check_operation(operation) -> list:
    """The catalog entries of ``operation``, or a ValueError listing the known operations."""
    entries = [e for e in catalog().values() if e.operation == operation]
    if not entries:
        raise ValueError(f"unknown operation {operation!r}; the catalog's operations are "
                         f"{selectable_operations()}")
    return entries


def _machine_model(model, network):
    """The caller's model: a CostModel, or a TwoLevelModel with a TwoLevel network."""
    if model is None:
        return CostModel(ts=1.0, tw=0.0)
    if isinstance(model, TwoLevelModel):
        if not isinstance(network, TwoLevel):
            raise ValueError(f"a TwoLevelModel prices the two levels of a TwoLevel network; "
                             f"give one as network=, got {network!r}")
        return model
    if not isinstance(model, CostModel):
        raise ValueError(f"model must be a CostModel or a TwoLevelModel, got {model!r}")
    return model


def _check_network(network, p):
    """The network every entry runs on at p (None: each its own), or a ValueError."""
    if network is None:
        return None
    if not isinstance(network, Network):
        raise ValueError(f"network must be a Network of p PEs or None, got {network!r}"
                         + ("; a function of p goes to winner_map's network_for="
                            if callable(network) else ""))
    if network.p != p:
        raise ValueError(f"the network {network!r} has {network.p} PEs, but p={p}")
    return network


def _choice(entry, p, m, machine, ports, network, fixed) -> Choice | None:
    """``entry`` at (p, m) as a Choice, or None when it is not eligible."""
    levels = machine.levels if isinstance(machine, TwoLevelModel) else (machine,)
    if ports == "machine":
        if any(PORTS.index(entry.ports) > PORTS.index(level.ports) for level in levels):
            return None
        model = machine
    else:
        model = entry_model(entry, machine)
    flat = model.between if isinstance(model, TwoLevelModel) else model   # the closed forms'
    if not entry.valid(p):
        return None
    params = {key: value for key, value in fixed.items() if key in entry.params}
    if "k" not in params and entry.accepts(p, m, **params):
        params.update(optimal_params(entry, p, m, flat))
    if not entry.accepts(p, m, **params):
        return None
    k = params.get("k", entry.params.get("k", 1))
    exact = (entry.exact and m % k == 0 and model is flat and model.ports == entry.ports
             and (network is None or network == entry.network_for(p)))
    return Choice(entry.name, entry, entry.predict(p, m, flat, **params), params, model, exact)


def predict(operation: str, p: int, m: int, model: CostModel | None = None, network=None, *,
            ports: str = "own", commutative: bool = True, among=None, **params) -> list:
    """Every eligible algorithm of ``operation`` on p PEs and m words, fastest first.

    Parameters
    ----------
    operation : str
        A name of :func:`~collective_lib.collectives.operations` that the catalog
        implements (:func:`selectable_operations`).
    p : int
        Number of PEs.
    m : int
        Message length in words, as the operation counts it.
    model : CostModel or TwoLevelModel, optional
        The machine's ts, tw, th, routing (and ports, with ``ports="machine"``).
        Default ``CostModel(ts=1, tw=0)``: times count start-ups.  A
        TwoLevelModel needs a TwoLevel ``network``; the closed forms use its
        ``between`` level (the module's "Eligibility").
    network : Network, optional
        The network of p PEs to simulate on; it
        does not change a prediction, only :attr:`Choice.exact` (see the module's
        "Eligibility").
    ports : {"own", "machine"}
        Which entries count and on which port model (the module's "Eligibility").
    commutative : bool
        False leaves out the entries that need a commutative operator.
    among : iterable of str, optional
        Choose only among these entries of the operation (say, a chapter's own);
        default: all of the catalog's.
    **params
        Parameters fixed for every entry that takes them (``root=3``, ``k=4``);
        without ``k`` a pipeline gets its optimal number of packets.

    Returns
    -------
    list of Choice
        Sorted by predicted time, ties in catalog order; empty when no entry is
        eligible.

    Examples
    --------
    >>> from collective_lib import CostModel
    >>> CHAPTER_2 = ["hypercube_allreduce", "rabenseifner_allreduce",
    ...              "reduce_broadcast_allreduce"]
    >>> [(c.name, c.predicted)
    ...  for c in predict("allreduce", 8, 1024, CostModel(ts=100, tw=1), among=CHAPTER_2)]
    ... # doctest: +NORMALIZE_WHITESPACE
    [('rabenseifner_allreduce', 2392.0), ('hypercube_allreduce', 3372.0),
     ('reduce_broadcast_allreduce', 6744.0)]
    >>> [c.name for c in predict("allreduce", 6, 4, among=CHAPTER_2)]   # p = 6: no hypercube
    ['reduce_broadcast_allreduce']
    >>> predict("allredcue", 8, 1)
    Traceback (most recent call last):
    ...
    ValueError: unknown operation 'allredcue'; the catalog's operations are [...]
    """
    entries = _check_operation(operation)
    if among is not None:
        among = set(among)
        unknown = sorted(among - {e.name for e in entries})
        if unknown:
            raise ValueError(f"among= names {unknown}, which are no algorithms of "
                             f"{operation!r}; it has {[e.name for e in entries]}")
        entries = [e for e in entries if e.name in among]
    check_positive_int("p", p)
    m = operations()[operation].check_m(m)
    if ports not in PORT_CHOICES:
        raise ValueError(f"ports must be one of {PORT_CHOICES}, got {ports!r}")
    net = _check_network(network, p)
    machine = _machine_model(model, net)
    choices = []
    for entry in entries:
        if not commutative and entry.requires_commutative:
            continue
        choice = _choice(entry, p, m, machine, ports, net, params)
        if choice is not None:
            choices.append(choice)
    return sorted(choices, key=lambda c: c.predicted)      # stable: ties keep catalog order


def select(operation: str, p: int, m: int, model: CostModel | None = None, network=None,
           **options) -> Choice:
    """The algorithm the closed forms pick: the first of :func:`predict`.

    Takes the arguments of :func:`predict`; raises ValueError naming p and m when
    no entry of the operation is eligible there.

    Examples
    --------
    >>> from collective_lib import CostModel
    >>> slow_start = CostModel(ts=100, tw=1)
    >>> select("broadcast", 16, 1, slow_start).name
    'binomial_broadcast'
    >>> choice = select("broadcast", 16, 100_000, slow_start,
    ...                 among=["binomial_broadcast", "linear_pipeline_broadcast"])
    >>> choice.name, choice.params["k"]
    ('linear_pipeline_broadcast', 113)
    """
    choices = predict(operation, p, m, model, network, **options)
    if not choices:
        raise ValueError(f"no algorithm of {operation!r} runs on p={p} with m={m}")
    return choices[0]


def simulate_all(operation: str, p: int, m: int, model: CostModel | None = None,
                 network=None, *, seed: int = 0, **options) -> list:
    """Every eligible algorithm of :func:`predict`, simulated, fastest simulated first.

    The brute force that checks the selector: each entry runs untraced on random
    inputs (``seed``) with the parameters and model of its :class:`Choice`, on
    ``network`` or, without one, on its own network.  Takes the arguments of
    :func:`predict`.

    Examples
    --------
    >>> from collective_lib import CostModel
    >>> from collective_lib.networks import Ring
    >>> CHAPTER_2 = ["hypercube_allreduce", "rabenseifner_allreduce",
    ...              "reduce_broadcast_allreduce"]
    >>> [(c.name, c.predicted, c.simulated)
    ...  for c in simulate_all("allreduce", 8, 1024, CostModel(ts=100, tw=1), network=Ring(8),
    ...                        among=CHAPTER_2)]
    ... # doctest: +NORMALIZE_WHITESPACE
    [('rabenseifner_allreduce', 2392.0, 5384.0), ('reduce_broadcast_allreduce', 6744.0, 6744.0),
     ('hypercube_allreduce', 3372.0, 12364.0)]

    On a ring the hypercube's far partners share links: it is predicted second
    and simulated last.
    """
    choices = predict(operation, p, m, model, network, **options)
    return _simulated(choices, p, m, _check_network(network, p), seed)


def _simulated(choices, p, m, network, seed) -> list:
    """``choices`` (of :func:`predict` at (p, m)), each simulated, fastest simulated first."""
    done = []
    for c in choices:
        run = c.entry.simulate(p, m, model=c.model, network=network, seed=seed, trace=False,
                               **c.params)
        done.append(replace(c, simulated=run.time))
    return sorted(done, key=lambda c: c.simulated)


def simulated_winner(operation: str, p: int, m: int, model: CostModel | None = None,
                     network=None, **options) -> Choice:
    """The algorithm that is fastest in the simulator: the first of :func:`simulate_all`.

    >>> from collective_lib import CostModel
    >>> simulated_winner("broadcast", 16, 1, CostModel(ts=100, tw=1)).simulated
    404.0
    """
    choices = simulate_all(operation, p, m, model, network, **options)
    if not choices:
        raise ValueError(f"no algorithm of {operation!r} runs on p={p} with m={m}")
    return choices[0]


def winner_map(operation: str, ps, ms, model: CostModel | None = None, network_for=None, *,
               simulate: bool = False, **options) -> dict:
    """``{(p, m): name}``: the fastest algorithm at every point of the grid.

    By the closed forms (:func:`select`), or with ``simulate=True`` by the
    simulator (:func:`simulated_winner`), each p on ``network_for(p)`` when
    given (a function of p, e.g. ``Ring``; default: each entry on its own
    network; ``seed=`` as in :func:`simulate_all`).  Every point is predicted
    once (:func:`predict`), and with ``simulate=True`` its entries are then
    simulated.  A point where no entry runs is left out.  The map
    :func:`~collective_lib.viz.winner_maps` and :func:`~collective_lib.viz.choice_map` draw.

    >>> from collective_lib import CostModel
    >>> winners = winner_map("allreduce", [2, 6, 8], [1, 10_000], CostModel(ts=100, tw=1),
    ...                      among=["hypercube_allreduce", "rabenseifner_allreduce",
    ...                             "reduce_broadcast_allreduce"])
    >>> winners[8, 1], winners[8, 10_000], winners[6, 10_000]
    ('hypercube_allreduce', 'rabenseifner_allreduce', 'reduce_broadcast_allreduce')
    """
    _check_operation(operation)
    if "network" in options:
        raise ValueError("a map ranges over p, so it takes network_for=, a function of p "
                         f"(such as Ring), not network={options['network']!r}")
    seed = options.pop("seed", 0)
    winners = {}
    for p in ps:
        network = None if network_for is None else network_for(p)
        for m in ms:
            # One prediction per point: the closed forms' ranking, or the entries to simulate.
            choices = predict(operation, p, m, model, network, **options)
            if choices and simulate:
                choices = _simulated(choices, p, m, network, seed)
            if choices:
                winners[p, m] = choices[0].name
    return winners
