"""A value of a locked set-up cell that a student's cell changed is named (twelfth round, B-F6).

A cell of the student's that sets ``BLOCKS = 1`` (cycles_crossover) changed what the visible
checks read in the student's notebook, and Validate said "Success!", while the graded tests,
which use the set-up cell's value, gave 0.
"""
import numpy as np
import pytest

from collective_lib import CostModel, TwoLevelModel
from collective_lib.grading import CheckFailed, check_set_up_unchanged, failure_kind
from messages import flat


def _machine(ts_inside):
    return TwoLevelModel(inside=CostModel(ts=ts_inside, tw=0.125),
                         between=CostModel(ts=12, tw=2))


def test_unchanged_values_pass():
    check_set_up_unchanged(BLOCKS=(5, 5), M_MAX=(512, 512), MACHINE=(_machine(1), _machine(1)),
                           WORDS=(np.arange(4), np.arange(4)))


def test_a_changed_value_is_named_with_both_values_and_what_to_do():
    with pytest.raises(CheckFailed) as caught:
        check_set_up_unchanged(SWAPS=(2, 2), BLOCKS=(1, 5))
    text = str(caught.value)
    assert flat(text) == (
        "your cells changed BLOCKS: they set it to 1, the set-up cell gives 5. The graded "
        "tests use the set-up cell's value: remove the line of your own that sets BLOCKS "
        "and run all cells again.")
    first, *rest = text.splitlines()          # Validate shows every line whole
    assert len(first) <= 64 and max(map(len, rest)) <= 80, text
    assert failure_kind(caught.value) == "wrong_form"


def test_a_long_value_is_only_said_to_differ():
    with pytest.raises(CheckFailed) as caught:
        check_set_up_unchanged(MACHINE=(_machine(3), _machine(1)))
    text = " ".join(flat(caught.value).split())
    assert text.startswith("your cells changed MACHINE: it no longer has the value the "
                           "set-up cell gives. The graded tests use"), text
    assert "CostModel" not in text
