"""Why a check failed: the kinds of failure, for counting what a class got wrong.

Every check of this package fails with a :class:`CheckFailed`, an
:class:`AssertionError` whose message is advice for the student and whose
``kind`` names the cause from a small vocabulary, :data:`KINDS`. The message
differs from one submission to the next (which p, which PE, which value); the
kind does not, so the trusted checker records it with a failed cell's verdict
and ``python -m collective_lib.autograde.misconceptions`` counts, per graded
cell, how many submissions failed for each cause.

A hidden test may raise one itself for a check of its own, e.g.
``raise CheckFailed(f"sends_4[{step}][{node}] is ...", kind="wrong_entry")``;
its plain ``assert`` counts as ``"other"``.

>>> try:
...     raise CheckFailed("PE 3 returned 7, but 9 was expected", kind="wrong_result")
... except AssertionError as err:
...     print(failure_kind(err), "-", err)
wrong_result - PE 3 returned 7, but 9 was expected
>>> failure_kind(AssertionError("a plain assert"))
'other'
"""
from __future__ import annotations

from ._advice import wrapped

__all__ = ["KINDS", "CheckFailed", "failure_kind"]

#: The kinds of failure and what each means, in the order a report lists ties.
KINDS = {
    "wrong_result": "a PE (or the student's function) returned a wrong value",
    "not_received": "a PE returned the right value but never received a message",
    "shared_state": "right only with all PEs in one process: the PEs share Python state "
                    "instead of sending messages",
    "wrong_time": "the simulated time differs from the algorithm's time",
    "too_slow": "the simulated time exceeds the bound",
    "message_size": "a message is sent as fewer words than it carries",
    "deadlock": "PEs wait for each other forever (a recv without its send)",
    "unreceived_message": "a PE sent a message that no PE received",
    "exception": "the student's code raised an exception (or yielded an invalid operation)",
    "time_limit": "the code ran out of real time (an endless loop that never yields, or a "
                  "cell that ran too long)",
    "operation_limit": "more operations (or lock states) than the budget: an endless loop "
                       "that keeps yielding",
    "too_few_finished": "the program failed on most cases (or its messages carried too "
                        "little of the data), so what the cell measures could not be judged",
    "uses_library": "the submission uses or runs the library's own implementation",
    "lock_exclusion": "two PEs in the critical section together (or lost increments)",
    "no_progress": "some PEs wait forever for the lock",
    "no_entry": "the lock lets no PE in at all, so it keeps the PEs apart only trivially",
    "wrong_form": "the answer does not have the form asked for (its type, entries or "
                  "methods, an unreadable entry, an impossible schedule)",
    "wrong_entry": "an entry of a table filled in by hand is wrong",
    "missing_name": "a name the test needs is not defined (misspelt, or the student's cell "
                    "raised before defining it)",
    "not_run": "the student's cells could not be run (an error in them, or a limit of the "
               "sandbox)",
    "not_graded": "the grader could not grade the notebook (its checker failed or ran "
                  "too long)",
    "other": "a test cell's own assert, or an error the checks do not explain",
}


class CheckFailed(AssertionError):
    """A failed check: an :class:`AssertionError` with a ``kind`` from :data:`KINDS`.

    Its message is wrapped to the width Validate shows whole (:func:`~._advice.wrapped`),
    so a check writes it as it reads best and no line of it is cut. A subclass may fix
    its kind as a class attribute (:class:`~.guards.WallClockLimitExceeded` is
    ``"time_limit"``).
    """

    kind = "other"

    def __init__(self, message: str = "", kind: str | None = None):
        super().__init__(wrapped(message, type(self).__name__))
        if kind is not None:
            if kind not in KINDS:
                raise ValueError(f"unknown kind of failure {kind!r}; the kinds are "
                                 f"{', '.join(KINDS)}")
            self.kind = kind

    def __reduce__(self):
        return (type(self), (str(self), self.kind))

    def _render_traceback_(self) -> list:
        """What IPython shows of a failed check (in the notebook, and in Validate's
        report): its name and message alone, as the autograded notebook shows them. The
        frames of the test cell say less than the message, and Validate would cut their
        lines."""
        return [f"{type(self).__name__}: {self}"]


# A student's notebook (IPython, nbgrader validate) names an exception by its class's
# __name__: a failed check reads as the AssertionError every failed test is, and its kind
# rides along for the instructor's report. (Pickling goes by __qualname__, unchanged.)
CheckFailed.__name__ = "AssertionError"


def failure_kind(err: BaseException) -> str:
    """The kind of a failed check's exception: its ``kind``, or ``"other"``."""
    kind = getattr(err, "kind", None) if isinstance(err, CheckFailed) else None
    return kind if kind in KINDS else "other"
