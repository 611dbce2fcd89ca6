"""Table 2 counted: the element transfers in sequence of each CM-200 program, by the simulator.

Mathur and Johnsson's Table 2 gives, for each algorithm, the number of elements
that cross a link one after another; :func:`~.models.table2_transfers` has the
report's formulas, and :func:`element_transfers` counts the same quantity by
running the catalog's programs (:mod:`collective_lib.algorithms.cm200`).

Source: K. K. Mathur and S. L. Johnsson, All-to-All Communication on the
Connection Machine CM-200, Harvard TR-02-93 (1993), §4.1-§4.2, Table 2.
"""
from __future__ import annotations

from ..catalog import catalog
from ..model import CostModel
from ..validate import check_positive_int

__all__ = ["element_transfers"]

_TRANSFER_PROGRAMS = ("one_cycle_broadcast", "d_cycles_broadcast", "send_and_spread",
                      "one_cycle_reduce", "d_cycles_reduce", "reduce_and_spread")


def element_transfers(name: str, d: int, m: int, channels: int = 1) -> int:
    """Element transfers in sequence of a CM-200 program, counted by the simulator.

    Runs the catalog entry ``name`` on ``Hypercube(d)`` with every PE holding
    ``m`` elements (M' = m for the broadcasts; p messages of m elements, one
    block per destination, for the all-to-all reductions) under
    ``CostModel(ts=0, tw=1, ports="all")``: the simulated time is then the
    number of elements that cross a link one after another, the quantity of
    Mathur and Johnsson's Table 2.  ``channels=2`` counts what the CM-200's
    pair of channels between neighbours moves, two elements at a time: each
    transfer of w elements is charged ceil(w / 2).

    >>> element_transfers("d_cycles_broadcast", 3, 6), element_transfers("one_cycle_broadcast", 3, 6)
    (14, 42)
    """
    if name not in _TRANSFER_PROGRAMS:
        raise ValueError(f"name must be one of {_TRANSFER_PROGRAMS}, got {name!r}")
    d = check_positive_int("d", d, least=0)
    m = check_positive_int("m", m)
    channels = check_positive_int("channels", channels)
    entry = catalog()[name]
    p = 1 << d
    run = entry.simulate(p, m, model=CostModel(ts=0.0, tw=1.0, ports="all"),
                         trace=channels > 1)
    if channels == 1:
        return int(round(run.time))
    # With c channels a w-element transfer takes ceil(w / c).  When the nodes move
    # in lock step (each step starts as the longest transfer of the one before
    # ends), the run is the sum over steps of the longest transfer; otherwise
    # rescaling the steps would not be the run the program makes, so refuse.
    longest, ends = {}, {}
    for msg in run.messages:
        longest[msg.start] = max(longest.get(msg.start, 0), -(-msg.words // channels))
        ends[msg.start] = max(ends.get(msg.start, 0), msg.end)
    starts = sorted(ends)
    for step, following in zip(starts, starts[1:]):
        if ends[step] != following:
            raise ValueError(f"{name} with m={m} on d={d} does not move in lock step (a step "
                             f"starts at {following:g}, the one before ends at {ends[step]:g}), "
                             "so its count with channels=2 cannot be read off the one-channel "
                             "run; choose m a multiple of d")
    return int(sum(longest.values()))
