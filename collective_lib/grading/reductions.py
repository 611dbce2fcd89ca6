"""Chapter 2: a student's operator inside the library's reductions."""
from __future__ import annotations

from typing import Callable, Iterable

import numpy as np

from ._advice import format_value, name_of, root_list, same_value
from .failures import CheckFailed
from .guards import wall_clock_limit
from .programs import run_program

__all__ = ["check_operator_in_reductions"]


def _combination_order(entry, p: int, params: dict, pe: int) -> str | None:
    """How ``entry`` combines the PEs' operands for PE ``pe``, e.g. '3:5,0:2' (or None).

    Found by running the entry once more on symbolic one-word operands
    (:class:`collective_lib.viz.Span`); None when that is not possible.
    """
    try:
        from ..spans import Span, span_inputs, span_op
        words = 1 if "k" not in params else params["k"]
        run = entry.simulate(p, words, inputs=span_inputs(p, words),
                             trace=False, **{**params, "op": span_op})
        got = run.results[pe]
        if isinstance(got, tuple) and len(got) == 2 and not isinstance(got[0], Span):
            got = got[1]                     # (prefix, total): the total
        if isinstance(got, (list, tuple)) and got:
            got = got[0]
        return str(got) if isinstance(got, Span) else None
    except Exception:
        return None


def check_operator_in_reductions(op: Callable, algorithms: Iterable[str], ps: Iterable[int], *,
                                 make_inputs: Callable, reference_op: Callable,
                                 roots="all", params: dict | None = None,
                                 time_limit_s: float = 10.0, seed: int = 0,
                                 hint: str = "") -> None:
    """Run the library's reductions with a student's operator; compare with a reference.

    For every catalog entry named in ``algorithms``, every p in ``ps`` it is
    valid for and every root (for entries that take one), the PEs get
    ``make_inputs(p, rng)`` and the entry's program runs with ``op=op`` under
    the guards of :func:`run_program`.  Every PE must return what the entry's
    operation prescribes when the operands are combined in rank order with
    ``reference_op`` (``entry.expected``).

    Parameters
    ----------
    op : callable
        The student's binary operator (lift it with ``elementwise`` first for
        vector messages).
    algorithms : iterable of str
        Catalog names, e.g. ``["binomial_reduce", "hypercube_allreduce"]``.
    ps : iterable of int
        Numbers of PEs; an entry skips those it cannot run on.
    make_inputs : callable
        ``make_inputs(p, rng) -> list`` of p messages (rng: numpy Generator).
    reference_op : callable
        A correct operator, to compute the expected results.
    roots : "all", iterable of int, or callable
        The roots to try, as for :func:`check_broadcast_program`.
    params : dict, optional
        More parameters for the entries that take them (e.g. ``{"k": 2}``).
    time_limit_s : float
        Real-time budget of the whole check.
    seed : int
        Seed of the random inputs.
    hint : str
        Appended to a wrong-result message.

    Raises
    ------
    AssertionError
        Naming the algorithm, p, root and PE, what came back and what was
        expected, the inputs, and the order in which that algorithm combined
        the operands (e.g. "3:5,0:2" for the PEs 3, 4, 5, 0, 1, 2).

    Examples
    --------
    >>> import operator
    >>> def ints(p, rng):
    ...     return [int(x) for x in rng.integers(0, 9, size=p)]
    >>> check_operator_in_reductions(operator.add, ["binomial_reduce"], range(1, 9),
    ...                              make_inputs=ints, reference_op=operator.add)
    >>> def left(a, b):                 # keeps the left operand: not commutative
    ...     return a
    >>> try:
    ...     check_operator_in_reductions(left, ["binomial_reduce"], [3], roots=[1],
    ...                                  make_inputs=lambda p, rng: [10, 20, 30],
    ...                                  reference_op=left)
    ... except AssertionError as err:
    ...     print(err)
    binomial_reduce with your operator left on p=3 PEs, root=1: PE 1 returned 20, but 10 was expected.
      inputs (PE 0, 1, ...): [10, 20, 30]
      binomial_reduce combined the operands of the PEs in this order: 1:2,0 (x:y means the PEs x, x+1, ..., y)
    """
    __tracebackhide__ = True   # IPython: show the message, not these frames
    from ..catalog import catalog
    table = catalog()
    params = dict(params or {})
    rng = np.random.default_rng(seed)
    name = name_of(op)
    ps = list(ps)
    state = {"context": "the first run"}

    def expired():
        return (f"the reductions with your operator {name} did not finish within "
                f"{time_limit_s:g} s of real time (they were running {state['context']}). "
                "Does the operator loop forever, or do far too much work?")

    with wall_clock_limit(time_limit_s, expired):
        for algorithm in algorithms:
            if algorithm not in table:
                raise ValueError(f"unknown algorithm {algorithm!r}")
            entry = table[algorithm]
            for p in ps:
                if not entry.valid(p):
                    continue
                root_choices = root_list(roots, p) if "root" in entry.params else [None]
                for root in root_choices:
                    run_params = {k: v for k, v in params.items() if k in entry.params}
                    if root is not None:
                        run_params["root"] = root
                    context = f"{algorithm} with your operator {name} on p={p} PEs" + (
                        f", root={root}" if root is not None else "")
                    state["context"] = context
                    inputs = make_inputs(p, rng)
                    expected = entry.expected(inputs, **{**run_params, "op": reference_op})
                    run = run_program(entry.program, p, inputs, model=entry.default_model(),
                                      network=entry.network_for(p), time_limit_s=time_limit_s,
                                      context=context, op=op, **run_params)
                    for pe, (got, want) in enumerate(zip(run.results, expected)):
                        if same_value(got, want):
                            continue
                        order = _combination_order(entry, p, run_params, pe)
                        lines = [f"{context}: PE {pe} returned {format_value(got)}, but "
                                 f"{format_value(want)} was expected.",
                                 f"  inputs (PE 0, 1, ...): {format_value(inputs, 300)}"]
                        if order is not None:
                            lines.append(f"  {algorithm} combined the operands of the PEs in "
                                         f"this order: {order} (x:y means the PEs x, x+1, ..., y)")
                        raise CheckFailed("\n".join(lines) + (f"\n{hint}" if hint else ""),
                                          "wrong_result")
