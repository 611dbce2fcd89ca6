"""Grading a hand-filled table of symbolic partial sums (collective_lib.grading.tables).

parse_terms reads what a student writes for a partial sum, count_pieces finds the
pieces inside any bundle, sends_by_step lists what Algorithm 4.5 sends, and
check_answer_table names the first wrong entry of a table.
"""
import operator

import re

import pytest

from all_to_all_submissions import REFERENCE_RING
from collective_lib import catalog, simulate
from collective_lib.grading import (check_answer_table, count_pieces, format_terms,
                                    parse_terms, sends_by_step)
from collective_lib.networks import Ring
from messages import flat

def test_parse_terms_reads_strings_lists_and_pairs():
    want = frozenset({(3, 5), (4, 5)})
    for entry in ["x3[5] + x4[5]", "x4[5]+x3[5]", "x_3[5], x_{4}[5]", ["x3[5]", (4, 5)],
                  {(3, 5), (4, 5)}, ("x3[5]", "x4[5]")]:
        assert parse_terms(entry) == want, entry
    assert parse_terms((3, 5)) == {(3, 5)}
    assert format_terms(want) == "x3[5] + x4[5]"
    for bad, words in [("", "empty"), ("y3[5]", "cannot read the term 'y3[5]'"),
                       ("x3[5] + ", "cannot read the term ''"), (7, "cannot read 7 (int)"),
                       ([], "no terms")]:
        with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")
                           .replace("[", r"\[").replace("]", r"\]")):
            parse_terms(bad)


def test_count_pieces_looks_inside_any_bundle():
    pieces = {(11, 12), (13, 14)}
    assert count_pieces([[11, 12], [13, 14]], pieces, 4) == 2
    assert count_pieces([(0, 1, [11, 12]), (2, 3, (13, 14))], pieces, 4) == 2
    assert count_pieces({0: [11, 12], (13, 14): None}, pieces, 4) == 2
    assert count_pieces([], pieces, 4) == 0 and count_pieces([None, 3], pieces, 4) == 0


@pytest.mark.parametrize("payload, what", [
    (7, "7, which is neither"),                     # not a rank of 4 PEs
    ([[11, 12, 13]], "11, which is neither"),       # a message no input is
    (["(11, 12)"], "'(11, 12)', which is neither"),
    ([(11, 12), 2.0], "2.0, which is neither"),
    ([(11, 12), True], "True, which is neither"),
    ([(11, 12), 0, 1, 2, 3, 0], "5 ranks besides 1 input message, more than two labels"),
])
def test_count_pieces_refuses_what_could_hide_pieces(payload, what):
    with pytest.raises(ValueError, match=re.escape(what)):
        count_pieces(payload, {(11, 12), (13, 14)}, 4)


def _ring_table(p):
    inputs = [[frozenset({(i, j)}) for j in range(p)] for i in range(p)]
    run = simulate(REFERENCE_RING, p, inputs, network=Ring(p), op=operator.or_)
    return sends_by_step(run), run.results


def test_sends_by_step_shows_algorithm_4_5():
    steps, results = _ring_table(4)
    assert list(steps) == [1, 2, 3]
    # in step i node me sends the partial sum for me + i: the messages of me .. me + i - 1
    for i, row in steps.items():
        for me, payload in row.items():
            assert payload == {((me + s) % 4, (me + i) % 4) for s in range(i)}
    assert results[2] == {(s, 2) for s in range(4)}
    assert format_terms(steps[2][3]) == "x0[1] + x3[1]"
    run = catalog()["binomial_broadcast"].simulate(4)
    with pytest.raises(ValueError, match="PE 0 sends more than one message in step 1"):
        sends_by_step(type(run)(**{**vars(run), "messages": run.messages * 2}))


def test_check_answer_table_accepts_the_right_table_and_names_the_first_wrong_entry():
    steps, results = _ring_table(3)
    want = {s: [steps[s][node] for node in range(3)] for s in steps}
    right = {1: ["x0[1]", "x1[2]", "x2[0]"],
             2: ["x0[2] + x1[2]", "x1[0] + x2[0]", [(2, 1), (0, 1)]]}
    check_answer_table(right, want, name="sends_3", normalize=parse_terms, show=format_terms)
    check_answer_table(["x0[0]+x1[0]+x2[0]", "x1[1]+x2[1]+x0[1]", "x2[2]+x0[2]+x1[2]"],
                       results, name="results_3", normalize=parse_terms)
    cases = [
        ({**right, 2: ["x0[2] + x1[2]", "x1[0]", "x2[1] + x0[1]"]},
         "sends_3[2][1] is x1[0], but x1[0] + x2[0] was expected (missing: x2[0])\n"
         "Hint: look left."),
        ({1: right[1]}, "sends_3 must have the entries 1, 2; 2 is missing"),
        ([right[1], right[2]], "sends_3 must have the entries 1, 2; 2 is missing; 0 should "
                               "not be there"),
        ({**right, 2: right[2][:2]}, "sends_3[2] must have the entries 0, 1, 2; 2 is missing"),
        ({**right, 1: "x0[1]"}, "sends_3[1] must be a list with the entries 0, 1, 2, got"),
        ({**right, 1: ["x0[1]", "x1(2)", "x2[0]"]}, "sends_3[1][1]: cannot read the term 'x1(2)'"),
    ]
    for answer, message in cases:
        with pytest.raises(AssertionError) as err:
            check_answer_table(answer, want, name="sends_3", normalize=parse_terms,
                               show=format_terms, hint="Hint: look left.")
        assert flat(err.value).startswith(flat(message)), (str(err.value), message)
