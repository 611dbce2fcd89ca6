"""The pipelining exercise: the simulated time of the library's pipelined broadcast."""
from __future__ import annotations

import functools

from ..model import CostModel

__all__ = ["pipelined_broadcast_time"]


@functools.lru_cache(maxsize=4096)
def pipelined_broadcast_time(n: int, p: int, alpha: float, beta: float, k: int,
                             root: int = 0) -> float:
    """Simulated time of the library's pipelined binary tree broadcast (half-duplex).

    ``n`` words from ``root`` to ``p`` PEs in ``k`` packets under
    ``CostModel(ts=alpha, tw=beta, ports="half-duplex")`` (Sanders, Lemma 13.2).
    Cached, since the exercise's tests ask for the same points repeatedly.

    Examples
    --------
    >>> pipelined_broadcast_time(n=64, p=7, alpha=1.0, beta=0.1, k=2)
    29.4
    """
    from ..catalog import catalog
    entry = catalog()["pipelined_binary_tree_broadcast"]
    model = CostModel(ts=alpha, tw=beta, ports="half-duplex")
    return entry.simulate(p, m=n, model=model, root=root, k=k, trace=False).time
