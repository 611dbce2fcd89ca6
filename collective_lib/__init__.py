"""collective_lib: simulate collective-communication algorithms and their costs.

An algorithm is an SPMD generator that yields communication operations
(:mod:`collective_lib.ops`); :func:`simulate` runs it on a virtual machine
whose time is derived from events under a :class:`CostModel` (or LogGP's
:class:`LogGPModel`); :func:`catalog`
lists every algorithm of the book with its closed-form cost and its source, and
:func:`operations` every collective operation they implement.
"""
from .catalog import catalog
from .errors import (CommunicationError, DeadlockError, OperationLimitError,
                     UnreceivedMessageError)
from .model import CostModel, LogGPModel, TwoLevelModel
from .networks import FullyConnected, Hypercube, LinearArray, Mesh, Network, Ring, TwoLevel
from .collectives import operations
from .ops import compute, exchange, multi, recv, send, sendrecv
from .runs import Message, Run
from .simulator import simulate

__all__ = [
    "simulate", "Run", "Message", "CostModel", "TwoLevelModel", "LogGPModel",
    "send", "recv", "sendrecv", "exchange", "compute", "multi",
    "DeadlockError", "UnreceivedMessageError", "OperationLimitError", "CommunicationError",
    "Network", "FullyConnected", "Ring", "LinearArray", "Mesh", "Hypercube", "TwoLevel",
    "catalog", "operations",
]
