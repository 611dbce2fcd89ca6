"""nbgrader round trip of `reading_a_run` (Chapter 0: port models and contention).

The source notebook is released with ``nbgrader generate_assignment`` (the release
must hide the four closed forms, the hidden tests and the model answer), and a set
of submissions is autograded in one ``nbgrader autograde`` run: the instructor's
solution (full marks), one typical wrong prediction per port model (each costs only
its own cell, with a hint in the message), a prediction that runs the simulator
(rejected), and a crashing and an endless function (no marks for that cell, and
grading still finishes quickly).

Each student's program swaps SWAPS times, each time COPIES copies of the block, both from
their own variant (collective_lib.autograde.variants): the solution gets full marks under a
second id with other values, and an answer written for another variant fails without any
message stating the simulator's time.
"""
from __future__ import annotations

import copy
import re

import nbformat
import pytest

import nbgrader_harness as h
from collective_lib.autograde.variants import variant
from exercise_submissions import (message_width_test, validate_tests, validated_fixture,
                                  visible_kind_test)

ASSIGNMENT = "reading_a_run"

SOLUTION_IDS = ("alice",)              # SWAPS 1, COPIES 2 ("solution": 3 and 1)
COPIER = "copier"                      # SWAPS 1, COPIES 4; copies the variant of "solution"


def _values(student):
    chosen = variant(ASSIGNMENT, student)
    return chosen.swaps, chosen.copies


def _times(p, m, ts, tw, swaps, copies):
    """{function: time} of spread_and_swap for one variant (what the simulator measures)."""
    T, Tc = ts + tw * m, ts + copies * tw * m
    return {"time_full_duplex": (p - 1) * T + swaps * Tc,
            "time_half_duplex": (p - 1) * T + 2 * swaps * Tc,
            "time_all_ports": T + swaps * Tc,
            "time_ring_all_ports": (p // 2) * T + swaps * Tc}


def _copied_solution(source):
    """The solution with another student's SWAPS and COPIES written in as numbers."""
    swaps, copies = _values("solution")
    notebook = source
    for cell, formula in [
            ("full_duplex_solution", "(p - 1) * (ts + tw * m) + {s} * (ts + {c} * tw * m)"),
            ("half_duplex_solution", "(p - 1) * (ts + tw * m) + {s2} * (ts + {c} * tw * m)"),
            ("all_ports_solution", "(ts + tw * m) + {s} * (ts + {c} * tw * m)"),
            ("ring_solution", "(p // 2) * (ts + tw * m) + {s} * (ts + {c} * tw * m)")]:
        notebook = h.replace_solution(notebook, cell, "return " + formula.format(
            s=swaps, s2=2 * swaps, c=copies))
    return notebook


CELLS = ("full_duplex_tests", "half_duplex_tests", "all_ports_tests", "ring_tests")
FULL_MARKS = {"full_duplex_tests": 2, "half_duplex_tests": 2, "all_ports_tests": 2,
              "ring_tests": 3}

FORGETS_THE_SWAP = '''
return (p - 1) * (ts + tw * m)        # only the fan-out
'''

HALF_LIKE_FULL = '''
# as if a PE could send and receive at once
return (p - 1) * (ts + tw * m) + SWAPS * (ts + COPIES * tw * m)
'''

RING_WITHOUT_CONTENTION = '''
# as on the fully connected network
return (ts + tw * m) + SWAPS * (ts + COPIES * tw * m)
'''

# p / 2 where the ring needs p // 2: right for even p only.
RING_FOR_EVEN_P = '''
return (p / 2) * (ts + tw * m) + SWAPS * (ts + COPIES * tw * m)
'''

RUNS_THE_SIMULATOR = '''
return simulated_time_of(p, m, ts, tw, ports="all", ring=True)
'''

# The simulator's own engine behind its public functions, on a copy of the program.
RUNS_THE_ENGINE = '''
from collective_lib.simulator import _Engine, start_programs


def copy(me, p, data):
    if me == 0:
        yield multi(sends=[(dst, data[dst]) for dst in range(1, p)])
        block = data[0]
    else:
        block = yield recv(0)
    partner = me ^ 1
    if partner < p:
        for _ in range(SWAPS):
            received = yield exchange(partner, block * COPIES)
            block = received[:len(block)]
    return block


blocks = [[0] * m for _ in range(p)]
return _Engine(start_programs(copy, p, [blocks] + [None] * (p - 1), {}), p, Ring(p),
               CostModel(ts=ts, tw=tw, ports="all"), False, None).run().time
'''

CRASHES = '''
return [ts, tw][m] * p
'''

# A string of 700,000 commas (a student audit): the checker counted the commas inside it as
# JSON values, refused the answer, stopped the process and said it had died ("out of
# memory or CPU time").
HUGE_STRING = '''
return "," * 700_000
'''

# Right on the visible p, then an int beyond any float: the hidden check's isfinite raised
# "OverflowError: int too large to convert to float" instead of saying what is wrong.
HUGE_INT = '''
if p <= 7:
    return (ts + tw * m) + SWAPS * (ts + COPIES * tw * m)
return 10 ** 400
'''

SPINS = '''
t = 0
while t >= 0:                         # never returns
    t += ts
return t
'''


#: A student who tabulates the simulator (a student audit: 9/9): the release named the exact
#: range of p tested, and the time is a(p) ts + b(p) tw m, so simulated_time_of run for
#: p = 2..40 gives tables of a and b to paste into the answers as literals.
TABULATED = "tabulated"

_TABLE_CELLS = {"time_full_duplex": "full_duplex_solution",
                "time_half_duplex": "half_duplex_solution",
                "time_all_ports": "all_ports_solution", "time_ring_all_ports": "ring_solution"}


def _tabulated(source):
    """The answers as tables of the simulator's coefficients for p = 2..40 (this student's
    own SWAPS and COPIES), pasted as literals."""
    notebook = source
    values = _values(TABULATED)
    for function, cell in _TABLE_CELLS.items():
        a = {p: _times(p, 1, 1.0, 0.0, *values)[function] for p in range(2, 41)}
        b = {p: _times(p, 1, 0.0, 1.0, *values)[function] for p in range(2, 41)}
        notebook = h.replace_solution(notebook, cell, f"a = {a!r}\nb = {b!r}\n"
                                                      "return a[p] * ts + b[p] * tw * m")
    return notebook


#: Tables for every p graded (an audit: 9/9, no flag), written so that no display holds 40
#: values: dicts of 19 entries merged, a string parsed inside the function, a table filled
#: by .update(...) after it is made, one item assignment per p.
IN_PIECES = "tabulated_in_pieces"
_GRADED_PS = [*range(2, 41), 97, 128, 513, 1001]


def _tabulated_in_pieces(source):
    """The answers as tables of the simulator's coefficients for every p graded, each cell
    in pieces of its own kind."""
    notebook = (copy.deepcopy(source) if hasattr(source, "cells")
                else nbformat.read(source, as_version=4))
    values = _values(IN_PIECES)
    for function, cell in _TABLE_CELLS.items():
        a = {p: _times(p, 1, 1.0, 0.0, *values)[function] for p in _GRADED_PS}
        b = {p: _times(p, 1, 0.0, 1.0, *values)[function] for p in _GRADED_PS}
        define = f"\n\ndef {function}(p, m, ts, tw):\n"
        if cell == "full_duplex_solution":
            lines = []
            for name, table in (("A", a), ("B", b)):
                items = list(table.items())
                parts = [dict(items[i:i + 19]) for i in range(0, len(items), 19)]
                lines += [f"{name}{i} = {part!r}" for i, part in enumerate(parts)]
                merged = ", ".join(f"**{name}{i}" for i in range(len(parts)))
                lines.append(f"{name} = {{{merged}}}")
            code = "\n".join(lines) + define + "    return A[p] * ts + B[p] * tw * m\n"
        elif cell == "half_duplex_solution":
            rows = " ".join(f"{p}:{a[p]!r}:{b[p]!r}" for p in _GRADED_PS)
            code = (f"ROWS = {rows!r}" + define + "    rows = {int(k): (float(x), float(y))\n"
                    "            for k, x, y in (row.split(':') for row in ROWS.split())}\n"
                    "    return rows[p][0] * ts + rows[p][1] * tw * m\n")
        elif cell == "all_ports_solution":
            code = (f"A_ALL = {{}}\nA_ALL.update({a!r})\nB_ALL = {{}}\nB_ALL.update({b!r})"
                    + define + "    return A_ALL[p] * ts + B_ALL[p] * tw * m\n")
        else:
            code = ("A_RING, B_RING = {}, {}\n"
                    + "\n".join(f"A_RING[{p}] = {a[p]!r}\nB_RING[{p}] = {b[p]!r}"
                                for p in _GRADED_PS)
                    + define + "    return A_RING[p] * ts + B_RING[p] * tw * m\n")
        h.find_cell(notebook, cell).source = code
    return notebook


# Right, in exact arithmetic: a Fraction. 0/2 in the twelfth round, "raised Undecodable:
# values of type Fraction cannot be graded (use numbers, ...)", after Validate's "Success!".
FRACTION_TIMES = '''
from fractions import Fraction
T = Fraction(ts) + Fraction(tw) * m
Tc = Fraction(ts) + COPIES * Fraction(tw) * m
return (p - 1) * T + SWAPS * Tc
'''


def build_submissions(source):
    built = h.submissions(source, {
        "forgets_the_swap": ("full_duplex_solution", FORGETS_THE_SWAP),
        "half_like_full": ("half_duplex_solution", HALF_LIKE_FULL),
        "ring_without_contention": ("ring_solution", RING_WITHOUT_CONTENTION),
        "ring_for_even_p": ("ring_solution", RING_FOR_EVEN_P),
        "runs_the_simulator": ("ring_solution", RUNS_THE_SIMULATOR),
        "runs_the_engine": ("ring_solution", RUNS_THE_ENGINE),
        "crashes": ("all_ports_solution", CRASHES),
        "huge_string": ("full_duplex_solution", HUGE_STRING),
        "huge_int": ("all_ports_solution", HUGE_INT),
        "spins": ("half_duplex_solution", SPINS),
        "fraction_times": ("full_duplex_solution", FRACTION_TIMES),
    })
    built.update({student: source for student in SOLUTION_IDS})
    built[COPIER] = _copied_solution(source)
    built[TABULATED] = _tabulated(source)
    built[IN_PIECES] = _tabulated_in_pieces(source)
    # twelfth round (B-F6): SWAPS set again above the answers: Validate said "Success!" (the
    # set-up cell's simulated_time_of reads it too), then 0 of 9
    built["swaps_changed"] = h.code_above("full_duplex_solution", "SWAPS = 5\n")(source)
    return built


graded = h.graded_fixture(ASSIGNMENT, build_submissions, spinning=["spins"])


def test_release_hides_solution_and_hidden_tests(graded):
    course, _ = graded
    h.assert_release_hides(course, ASSIGNMENT, [
        "SWAPS * (ts + COPIES * tw * m)", "2 * SWAPS", "(p // 2) *", "SWAPS * Tc",
        "range(2, 41)", "513", "Model answer", "Rubric", "queue"],
        shows=["def time_full_duplex(p, m, ts, tw):", "def time_half_duplex(p, m, ts, tw):",
               "def time_all_ports(p, m, ts, tw):", "def time_ring_all_ports(p, m, ts, tw):",
               "YOUR ANSWER HERE", "def spread_and_swap(me, p, data):",   # the program is shown
               'VARIANT = variant("reading_a_run")', "for _ in range(SWAPS):"],
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


def _returned(function, student, p, m, ts, tw, wrong):
    """The start of the message for ``wrong(p, m, ts, tw, swaps, copies)`` of ``student``."""
    got, T = wrong(p, m, ts, tw, *_values(student)), ts + tw * m
    return (f"{function}(p={p}, m={m}, ts={ts:g}, tw={tw:g}) returned {got:g} = {got / T:g} T, "
            f"but the simulator measures another time (T = ts + tw m = {T:g}")


def _full_as_half(p, m, ts, tw, swaps, copies):
    return _times(p, m, ts, tw, swaps, copies)["time_full_duplex"]


def _no_contention(p, m, ts, tw, swaps, copies):
    return _times(p, m, ts, tw, swaps, copies)["time_all_ports"]


def _half_p(p, m, ts, tw, swaps, copies):
    return (p / 2) * (ts + tw * m) + swaps * (ts + copies * tw * m)


@pytest.mark.parametrize("student, cell, message", [
    ("forgets_the_swap", "full_duplex_tests",
     "time_full_duplex(p=6, m=4, ts=2, tw=0.25) returned 15 = 5 T, but the simulator measures "
     "another time (T = ts + tw m = 3; compare with simulated_time_of(6, 4, 2.0, 0.25, ...) in "
     "your notebook)"),
    ("forgets_the_swap", "full_duplex_tests",
     "when the swap of PE 0 and PE 1 can start; compare with the run's messages"),
    ("half_like_full", "half_duplex_tests", "how long does a swap (exchange) take"),
    ("half_like_full", "half_duplex_tests",
     _returned("time_half_duplex", "half_like_full", 6, 4, 2.0, 0.25, _full_as_half)),
    ("ring_without_contention", "ring_tests",
     _returned("time_ring_all_ports", "ring_without_contention", 6, 4, 2.0, 0.25, _no_contention)),
    ("ring_without_contention", "ring_tests", "at the link loads of a traced run"),
    ("ring_for_even_p", "ring_tests",
     _returned("time_ring_all_ports", "ring_for_even_p", 7, 3, 1.0, 0.5, _half_p)),
    ("runs_the_simulator", "ring_tests", "uses the library's `simulated_time_of`"),
    ("runs_the_engine", "ring_tests", "uses the library's `_Engine`"),
    ("crashes", "all_ports_tests", "raised IndexError: list index out of range"),
    ("huge_string", "full_duplex_tests", "time_full_duplex must return a number, got ',,,"),
    ("huge_int", "all_ports_tests", "time_all_ports(8, 1, 1, 0) returned 1000000"),
    ("huge_int", "all_ports_tests", "0... it must return a number"),    # cut to 3 lines
    ("spins", "half_duplex_tests", "did not return within 5 s of real time"),
])
def test_each_wrong_prediction_costs_only_its_own_cell(graded, student, cell, message):
    _, results = graded
    result = results[student]
    assert result.scores == {**FULL_MARKS, "explain_ring": 0, "explain_ring_rubric": 0, cell: 0}
    assert message in result.messages(cell)


def test_a_long_string_is_one_value_and_no_process_died(graded):
    # a student audit: the commas inside the string were counted as JSON values
    text = graded[1]["huge_string"].messages("full_duplex_tests")
    assert "died" not in text and "out of memory" not in text, text[:2000]


def test_an_exact_fraction_gets_full_marks(graded):
    # a Fraction crosses to the checker as the nearest float, the number the task asks for
    h.assert_full_marks(graded[1]["fraction_times"])


def test_the_solution_gets_full_marks_in_another_variant(graded):
    _, results = graded
    assert len({_values(s) for s in ("solution", *SOLUTION_IDS)}) == 1 + len(SOLUTION_IDS)
    for student in SOLUTION_IDS:
        h.assert_full_marks(results[student])


def _failure_messages(result):
    """``{grade_id: message}`` of the failed cells, white space made one blank."""
    return {cell.metadata["nbgrader"]["grade_id"]: " ".join(out.get("evalue", "").split())
            for cell in result.notebook.cells for out in cell.get("outputs", [])
            if out.get("output_type") == "error"}


def test_an_answer_copied_from_another_variant_fails_without_the_right_values(graded):
    _, results = graded
    result = results[COPIER]
    assert _values(COPIER) != _values("solution")
    assert result.scores == {**{cell: 0 for cell in CELLS}, "explain_ring": 0,
                             "explain_ring_rubric": 0}, result.messages()
    messages = _failure_messages(result)
    assert set(messages) == set(CELLS), messages
    for cell, message in messages.items():
        found = re.match(r"(time_\w+)\(p=(\d+), m=(\d+), ts=([\d.]+), tw=([\d.]+)\) "
                         r"returned ([\d.]+) = ([\d.]+) T, (.*)", message)
        assert found, message
        p, m = int(found.group(2)), int(found.group(3))
        ts, tw = float(found.group(4)), float(found.group(5))
        T = ts + tw * m
        want = _times(p, m, ts, tw, *_values(COPIER))[found.group(1)]
        assert f"{want:g}" != found.group(6)
        rest = found.group(8).replace(f"T = ts + tw m = {T:g}", "")
        rest = re.sub(r"simulated_time_of\([^)]*\)", "", rest)
        assert not re.search(rf"\b{re.escape(f'{want:g}')}\b", rest), (want, message)
        assert f"{want / T:g} T" not in rest, (want, message)


def test_the_release_does_not_announce_the_range_of_p(graded):
    course, _ = graded
    text = " ".join(h.released_text(course, ASSIGNMENT).split())
    assert "from 2 to 40" not in text
    assert "many $p$, small and large" in text


def test_tables_of_the_simulator_for_the_announced_p_get_nothing(graded):
    # a student audit: tables of a(p) and b(p) for p = 2..40, pasted as literals, got 9/9
    _, results = graded
    result = results[TABULATED]
    assert result.scores == {**{cell: 0 for cell in CELLS}, "explain_ring": 0,
                             "explain_ring_rubric": 0}, result.messages()
    for cell, message in _failure_messages(result).items():
        # the p beyond the tables is named, not what the simulator measures there
        assert "(97, 1, 1.0, 0.0) raised KeyError: '97'" in message, (cell, message)


def test_tables_written_into_the_cells_are_flagged_for_a_human(graded):
    # tables for every p graded would pass: a human is asked to look at any table of values
    course, results = graded
    from nbgrader.api import Gradebook          # slow to import: only here
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        flagged = gb.find_grade("ring_tests", ASSIGNMENT, ASSIGNMENT, TABULATED)
        comment = gb.find_comment("ring_solution", ASSIGNMENT, ASSIGNMENT,
                                  TABULATED).auto_comment
        honest = gb.find_grade("ring_tests", ASSIGNMENT, ASSIGNMENT, "solution")
    assert flagged.needs_manual_grade and not honest.needs_manual_grade
    assert ("time_ring_all_ports reads a table of 156 values written into the cells, in 2 "
            "pieces") in comment


@pytest.mark.parametrize("cell, comment", [
    ("full_duplex", "time_full_duplex reads a table of 172 values written into the cells, in "
                    "6 pieces ({2: "),
    ("half_duplex", "time_half_duplex reads a table of 129 values written into the cells "
                    "('2:"),
    ("all_ports", "time_all_ports reads a table of 172 values written into the cells, in 2 "
                  "pieces (A_ALL.update({2: "),
    ("ring", "time_ring_all_ports reads a table of 172 values written into the cells, in 86 "
             "pieces (A_RING[2] = "),
])
def test_tables_in_pieces_for_every_p_graded_are_flagged_too(graded, cell, comment):
    # an audit: tables for every p graded, in dicts of 19 entries merged, in a string, filled
    # by .update(...) later: 9/9 and no flag. One item assignment per p: the same.
    course, results = graded
    assert results[IN_PIECES].scores == {**FULL_MARKS, "explain_ring": 0,
                                         "explain_ring_rubric": 0}
    from nbgrader.api import Gradebook          # slow to import: only here
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        flagged = gb.find_grade(f"{cell}_tests", ASSIGNMENT, ASSIGNMENT, IN_PIECES)
        written = gb.find_comment(f"{cell}_solution", ASSIGNMENT, ASSIGNMENT,
                                  IN_PIECES).auto_comment
    assert flagged.needs_manual_grade
    assert comment in written, written


def test_no_message_states_the_simulated_time(graded):
    _, results = graded
    for student, result in results.items():
        text = " ".join(result.messages().split())
        assert not re.search(r"simulator measures \d", text), (student, text)


# -- what the Validate button says (the visible checks, in a student's saved notebook) --------

#: Submissions whose bug a student's Validate must report, with the start of what it says.
#: (spins is left out to keep the test short: the guarded call that stops crashes stops it,
#: after 5 s.)
#: (Validate computes the variant of the id it finds, here the login name: the numbers a
#: wrong answer returns depend on it, so only the calls are compared. Validate cuts long
#: lines.)
CAUGHT_BY_VALIDATE = {
    "forgets_the_swap": "time_full_duplex(p=6, m=4, ts=2, tw=0.25) returned 15 = 5 T",
    "half_like_full": "time_half_duplex(p=6, m=4, ts=2, tw=0.25) returned ",
    "ring_without_contention": "time_ring_all_ports(p=6, m=4, ts=2, tw=0.25) returned ",
    "ring_for_even_p": "time_ring_all_ports(p=7, m=3, ts=1, tw=0.5) returned ",
    "runs_the_simulator": "time_ring_all_ports uses the library's `simulated_time_of`",
    "crashes": "time_all_ports(6, 4, 2.0, 0.25) raised IndexError",
    "swaps_changed": "your cells changed SWAPS: they set it to 5, the set-up cell gives",
}

validated = validated_fixture(ASSIGNMENT, build_submissions, [*CAUGHT_BY_VALIDATE],
                              written={"explain_ring": "A written answer."})


test_validate_passes_the_solution, test_validate_reports_each_named_bug = validate_tests(
    {student: f"AssertionError: {start}" for student, start in CAUGHT_BY_VALIDATE.items()})


test_a_visible_check_records_its_kind_of_failure = visible_kind_test([
    ("forgets_the_swap", "full_duplex_tests", "wrong_result"),
])


def test_a_set_up_value_changed_by_the_student_is_graded_with_the_set_up_cells(graded):
    # the graded tests use the set-up cell's SWAPS; Validate now names the change
    _, results = graded
    result = results["swaps_changed"]
    assert result.scores == {**{cell: 0 for cell in CELLS}, "explain_ring": 0,
                             "explain_ring_rubric": 0}, result.messages()


test_no_line_of_a_message_is_cut_by_validate = message_width_test()
