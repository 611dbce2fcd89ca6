"""What the pictures of :mod:`collective_lib.viz` read from a traced run.

Internal to :mod:`collective_lib.viz` (not re-exported, imported by no other package).
"""
from __future__ import annotations

__all__ = ["check_traced", "holders_at"]


def check_traced(run) -> int:
    """The number of steps; a run simulated without its trace has nothing to show."""
    if not run.messages and run.link_load:
        raise ValueError("the run has no message trace; simulate it with trace=True")
    return len(run.step_starts())


def holders_at(run, t: float, senders) -> set:
    """PEs holding data at time t: who sent or received before t, plus ``senders``."""
    return set(run.informed(by=t)) | set(senders)
