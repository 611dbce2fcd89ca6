"""nbgrader round trip of `reading_a_run` (Chapter 0: port models and contention).

The source notebook is released with ``nbgrader generate_assignment`` (the release
must hide the four closed forms, the hidden tests and the model answer), and a set
of submissions is autograded in one ``nbgrader autograde`` run: the instructor's
solution (full marks), one typical wrong prediction per port model (each costs only
its own cell, with a hint in the message), a prediction that runs the simulator
(rejected), and a crashing and an endless function (no marks for that cell, and
grading still finishes quickly).
"""
from __future__ import annotations

import pytest

import nbgrader_harness as h
from exercise_submissions import validate_tests, validated_fixture

ASSIGNMENT = "reading_a_run"


CELLS = ("full_duplex_tests", "half_duplex_tests", "all_ports_tests", "ring_tests")
FULL_MARKS = {"full_duplex_tests": 2, "half_duplex_tests": 2, "all_ports_tests": 2,
              "ring_tests": 3}

FORGETS_THE_SWAP = '''
return (p - 1) * (ts + tw * m)        # only the fan-out
'''

HALF_LIKE_FULL = '''
return p * (ts + tw * m)              # as if a PE could send and receive at once
'''

RING_WITHOUT_CONTENTION = '''
return 2 * (ts + tw * m)              # as on the fully connected network
'''

# p / 2 where the ring needs p // 2: right for even p only.
RING_FOR_EVEN_P = '''
return (p / 2 + 1) * (ts + tw * m)
'''

RUNS_THE_SIMULATOR = '''
return simulated_time_of(p, m, ts, tw, ports="all", ring=True)
'''

CRASHES = '''
return [ts, tw][m] * p
'''

SPINS = '''
t = 0
while t >= 0:                         # never returns
    t += ts
return t
'''


def build_submissions(source):
    return h.submissions(source, {
        "forgets_the_swap": ("full_duplex_solution", FORGETS_THE_SWAP),
        "half_like_full": ("half_duplex_solution", HALF_LIKE_FULL),
        "ring_without_contention": ("ring_solution", RING_WITHOUT_CONTENTION),
        "ring_for_even_p": ("ring_solution", RING_FOR_EVEN_P),
        "runs_the_simulator": ("ring_solution", RUNS_THE_SIMULATOR),
        "crashes": ("all_ports_solution", CRASHES),
        "spins": ("half_duplex_solution", SPINS),
    })


graded = h.graded_fixture(ASSIGNMENT, build_submissions)


def test_release_hides_solution_and_hidden_tests(graded):
    course, _ = graded
    h.assert_release_hides(course, ASSIGNMENT, [
        "p * (ts + tw * m)", "(p + 1) *", "2 * (ts + tw * m)", "p // 2 + 1", "(p // 2 + 1)",
        "range(2, 41)", "Model answer", "Rubric", "queue"],
        shows=["def time_full_duplex(p, m, ts, tw):", "def time_half_duplex(p, m, ts, tw):",
               "def time_all_ports(p, m, ts, tw):", "def time_ring_all_ports(p, m, ts, tw):",
               "YOUR ANSWER HERE", "def spread_and_swap(me, p, data):"],   # the program is shown
        unanswered=4)


def test_nothing_spells_out_the_ring(graded):
    """The ring's formula is worth 3 points and its explanation 3 more: neither the written
    question nor a hint names the bottleneck link, the number of messages crossing it or the
    swap's last T."""
    course, results = graded
    text = h.released_text(course, ASSIGNMENT)
    for give_away in ("how many messages cross", "which link of the ring is the bottleneck",
                      "adds only one", "busier link", "one port for sending"):
        assert give_away not in text, give_away
        for student in ("ring_without_contention", "forgets_the_swap"):
            assert give_away not in results[student].messages(), (student, give_away)


def test_solution_gets_full_marks(graded):
    h.assert_solution_full_marks(graded, ASSIGNMENT, CELLS, 12, by_hand={"explain_ring": 3})


@pytest.mark.parametrize("student, cell, message", [
    ("forgets_the_swap", "full_duplex_tests",
     "time_full_duplex(p=6, m=4, ts=2, tw=0.25) returned 15 = 5 T, but the simulator measures 18 = 6 T"),
    ("forgets_the_swap", "full_duplex_tests",
     "when the swap of PE 0 and PE 1 can start; compare with the run's messages"),
    ("half_like_full", "half_duplex_tests", "how long does a swap (exchange) take"),
    ("ring_without_contention", "ring_tests",
     "time_ring_all_ports(p=6, m=4, ts=2, tw=0.25) returned 6 = 2 T, but the simulator measures 12 = 4 T"),
    ("ring_without_contention", "ring_tests", "at the link loads of a traced run"),
    ("ring_for_even_p", "ring_tests",
     "time_ring_all_ports(p=7, m=3, ts=1, tw=0.5) returned 11.25 = 4.5 T, but the simulator "
     "measures 10 = 4 T"),
    ("runs_the_simulator", "ring_tests", "uses the library's `simulated_time_of`"),
    ("crashes", "all_ports_tests", "raised IndexError: list index out of range"),
    ("spins", "half_duplex_tests", "did not return within 5 s of real time"),
])
def test_each_wrong_prediction_costs_only_its_own_cell(graded, student, cell, message):
    _, results = graded
    result = results[student]
    assert result.scores == {**FULL_MARKS, "explain_ring": 0, "explain_ring_rubric": 0, cell: 0}
    assert message in result.messages(cell)


# -- what the Validate button says (the visible checks, in a student's saved notebook) --------

#: Submissions whose bug a student's Validate must report, with the start of what it says.
#: (spins is left out to keep the test short: the guarded call that stops crashes stops it,
#: after 5 s.)
CAUGHT_BY_VALIDATE = {
    "forgets_the_swap": "time_full_duplex(p=6, m=4, ts=2, tw=0.25) returned 15 = 5 T",
    "half_like_full": "time_half_duplex(p=6, m=4, ts=2, tw=0.25) returned 18 = 6 T",
    "ring_without_contention": "time_ring_all_ports(p=6, m=4, ts=2, tw=0.25) returned 6 = 2 T",
    "ring_for_even_p": "time_ring_all_ports(p=7, m=3, ts=1, tw=0.5) returned 11.25 = 4.5 T",
    "runs_the_simulator": "time_ring_all_ports uses the library's `simulated_time_of`",
    "crashes": "time_all_ports(6, 4, 2.0, 0.25) raised IndexError",
}

validated = validated_fixture(ASSIGNMENT, build_submissions, [*CAUGHT_BY_VALIDATE],
                              written={"explain_ring": "A written answer."})


test_validate_passes_the_solution, test_validate_reports_each_named_bug = validate_tests(
    {student: f"AssertionError: {start}" for student, start in CAUGHT_BY_VALIDATE.items()})

