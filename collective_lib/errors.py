"""Errors raised when a collective program misbehaves, under any backend."""
from __future__ import annotations

__all__ = ["CommunicationError", "DeadlockError", "UnreceivedMessageError", "OperationLimitError"]


class CommunicationError(RuntimeError):
    """A program's communication cannot complete as written."""


class DeadlockError(CommunicationError):
    """No PE can proceed, but some still wait.

    ``blocked`` maps each waiting PE to a description of what it waits for.
    """

    def __init__(self, blocked: dict, time: float):
        self.blocked = dict(blocked)
        self.time = time
        lines = [f"  PE {pe}: {what}" for pe, what in sorted(self.blocked.items())]
        super().__init__(f"deadlock at time {time:g}: {len(self.blocked)} PE(s) wait forever\n"
                         + "\n".join(lines))


class UnreceivedMessageError(CommunicationError):
    """Every PE returned, but some messages were sent and never received.

    ``unreceived`` maps ``(src, dst)`` to the number of messages left over.
    """

    def __init__(self, unreceived: dict):
        self.unreceived = dict(unreceived)
        lines = [f"  {n} message(s) from PE {s} to PE {d} were never received"
                 for (s, d), n in sorted(self.unreceived.items())]
        super().__init__("messages were sent but never received (the receiving PE "
                         "returned without a matching recv):\n" + "\n".join(lines))


class OperationLimitError(CommunicationError):
    """The PEs together issued more operations than the run allows (an endless program?)."""
