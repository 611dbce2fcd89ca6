"""Helpers for the autograded exercises: run a student's code safely, explain failures.

The hidden tests of an nbgrader exercise call these functions so that a test
cell stays a few lines long and every failure reads like advice from a tutor:
which p, which root, which PE, what was expected and what came back.

Every helper turns anything that can go wrong in a student's code into an
:class:`AssertionError` with a message that explains it:

* a wrong result or a wrong simulated time;
* a deadlock (:class:`~collective_lib.errors.DeadlockError`) or a message that
  nobody received (:class:`~collective_lib.errors.UnreceivedMessageError`);
* an exception raised by the student's own code;
* an endless program, both one that keeps yielding operations (stopped by
  ``max_ops``) and one that loops without ever yielding (stopped by a
  wall-clock alarm, :func:`wall_clock_limit`);
* a submission that just calls the library's reference implementation
  (:func:`forbid_library_calls`);
* PEs that share Python globals instead of sending messages
  (:func:`check_pe_isolation` runs each PE in its own process; under
  ``nbgrader autograde`` one PE of one run in four is replayed alone, :func:`differs_alone`);
* a message that declares fewer words than it carries, or hides them in a form
  no check can count (:func:`check_declared_words`).

Each such error is a :class:`~.failures.CheckFailed` whose ``kind`` names the
cause from a small vocabulary (:data:`~.failures.KINDS`: ``"wrong_result"``,
``"deadlock"``, ``"message_size"``, ...), so that what a class got wrong can be
counted by cause rather than by message (the trusted checker records it with
each failed cell; ``python -m collective_lib.autograde.misconceptions`` counts).

Nothing here writes to stderr: nbgrader gives zero points to a test cell that
does, so warnings and stray ``stderr`` output of the student's code are
swallowed while it runs.

One module per topic: :mod:`.failures` (the kinds of failure), :mod:`.guards`
(the wall-clock limit, silence, failures told as advice, a number answer read),
:mod:`.programs`
(running and checking SPMD programs), :mod:`.sizes` (what a message carries),
:mod:`.isolation` (each PE in a process of its own), :mod:`.library` (is it the
student's own work?), :mod:`.forbidden` (what the library calls by a name),
:mod:`.static` (reading a student's cells without running them), :mod:`.review`
(flags for a human), :mod:`.locks` (interleavings and lock classes),
:mod:`.reductions` (a student's operator in the library's reductions),
:mod:`.tables` (tables filled in by hand), :mod:`.forwarding` (a student's
function replaced wherever the student's code holds it), :mod:`.setup_values` (a
value of a set-up cell that a student's cell changed) and :mod:`.pipelining`.

This package is the checks layer of the trust boundary: it knows nothing of
nbgrader, sandboxes or the processes a student's code runs in under
``nbgrader autograde``. :mod:`collective_lib.autograde` sits on top of it and
hands the checks *stand-ins* for the student's objects, which answer the small
interface of :mod:`.standins` (``exercises/SANDBOX.md``, "The boundary").
"""
from .failures import KINDS, CheckFailed, failure_kind
from .forbidden import (FORBIDDEN, fingerprint, forbidden_detail, forbidden_name,
                        library_definitions)
from .forwarding import can_forward, forward_calls, forward_calls_in, own_code, replaced
from .guards import (WallClockLimitExceeded, as_real, guarded_call, hide_grading_frames,
                     scaled_time_limits, wall_clock_limit)
from .isolation import IsolatedProgram, PEProcessError, differs_alone, isolated, noting
from .library import (SIMULATION, TABLE_CONSTANTS, TREE_HELPERS, TREE_PROGRAMS,
                      flag_searched_answer, forbid_computed_with, forbid_library_calls,
                      forbid_library_execution, library_programs)
from .locks import (SEARCHES, check_lock_exclusion, check_lock_exhaustive,
                    check_lock_progress, check_own_lock, forbid_searched_schedule,
                    replay_schedule)
from .pipelining import pipelined_broadcast_time
from .programs import (OperationLimitExceeded, check_broadcast_program, check_collective_program,
                       check_enough_finished, check_pe_isolation, run_program, simulated_time,
                       REPLAYED_SHARE)
from .reductions import check_operator_in_reductions
from .review import flag_for_review, take_review_flags
from .setup_values import check_set_up_unchanged
from .sizes import (UncountablePayload, check_declared_words, count_pieces, count_words,
                    pieces_in)
from .standins import StandIn, is_stand_in
from .static import (REVIEW_MIN_NODES, REVIEW_SIMILARITY, canonical_labels, definitions,
                     dynamic_lookups, every_binding, likeness, literal_tables, node_source,
                     own_definitions, repetitions, similarity, used_names)
from .tables import check_answer_table, format_terms, parse_terms, sends_by_step

__all__ = [
    "KINDS", "CheckFailed", "failure_kind",
    "FORBIDDEN", "fingerprint", "forbidden_name", "forbidden_detail", "library_definitions",
    "forward_calls", "forward_calls_in", "replaced", "own_code", "can_forward",
    "wall_clock_limit", "WallClockLimitExceeded", "guarded_call", "as_real",
    "hide_grading_frames",
    "scaled_time_limits",
    "isolated", "IsolatedProgram", "PEProcessError", "noting", "differs_alone",
    "forbid_library_calls", "forbid_library_execution", "forbid_computed_with", "SIMULATION",
    "flag_searched_answer",
    "library_programs", "TREE_PROGRAMS", "TREE_HELPERS", "TABLE_CONSTANTS",
    "replay_schedule", "check_own_lock", "check_lock_progress", "check_lock_exclusion",
    "check_lock_exhaustive", "forbid_searched_schedule", "SEARCHES",
    "pipelined_broadcast_time",
    "run_program", "check_broadcast_program", "simulated_time", "check_collective_program",
    "check_pe_isolation", "check_enough_finished", "OperationLimitExceeded", "REPLAYED_SHARE",
    "check_operator_in_reductions",
    "flag_for_review", "take_review_flags",
    "check_set_up_unchanged",
    "count_pieces", "pieces_in", "count_words", "check_declared_words",
    "UncountablePayload",
    "StandIn", "is_stand_in",
    "definitions", "own_definitions", "every_binding", "used_names", "repetitions",
    "literal_tables",
    "dynamic_lookups", "canonical_labels", "similarity",
    "node_source", "likeness", "REVIEW_SIMILARITY", "REVIEW_MIN_NODES",
    "parse_terms", "format_terms", "sends_by_step", "check_answer_table",
]
