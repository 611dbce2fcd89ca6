"""count_words: the words of the input messages a payload carries, whole or word by word.

The scatter's time test holds every message to the words it declares; a message may carry
the input messages whole (in lists, tuples, dicts or a numpy array of rows) or as their
words in a flat list (one word per number, the simulator's default size), but never a
number or string that packs several words.
"""
from __future__ import annotations

import numpy as np
import pytest

from collective_lib import recv, send, simulate
from collective_lib.grading import (UncountablePayload, check_declared_words,
                                    count_pieces, count_words, pieces_in)

MESSAGES = [[0, 500, 501], [1, 600, 601], [2, 700, 701], [3, 800, 801]]


@pytest.mark.parametrize("payload, words", [
    ([[1, 600, 601], [2, 700, 701]], 6),                      # a list of messages
    ([(2, (2, 700, 701)), (3, [3, 800, 801])], 6),            # labelled by rank
    ({2: [2, 700, 701]}, 3),
    ([1, 600, 601, 2, 700, 701], 6),                          # a flat list of their words
    ((800, 801), 2),                                          # part of one message
    (np.array(MESSAGES[1:]), 9),                              # a numpy array of messages
    (np.array([1, 600, 601, 2, 700, 701]), 6),                # ... or of their words
    ([np.array([2, 700, 701]), np.array([3, 800, 801])], 6),
    (np.array(MESSAGES[1:], dtype=float), 9),                 # the same numbers as floats
    ([], 0),
    (None, 0),
])
def test_count_words_counts_messages_whole_or_word_by_word(payload, words):
    assert count_words(payload, MESSAGES, p=4) == words


@pytest.mark.parametrize("payload, why", [
    ([600601700701], "it holds 600601700701,\nwhich is neither an input message"),
    (["[1, 600, 601]"], "it holds '[1, 600, 601]'"),         # a string holds any words
    ([1, 600, 601, 999], "it holds 999,"),                    # a number that is no word
    ([1, 600.5], "it holds 600.5,"),
    ([True, 600], "it holds True,"),
    ([[0, 1, 2, 3, 0, 1, 2, 3]], "it holds 8 ranks besides 0 words"),   # ranks for words
])
def test_count_words_refuses_what_could_hide_words(payload, why):
    with pytest.raises(UncountablePayload) as err:
        count_words(payload, MESSAGES, p=4)
    assert why in str(err.value)
    assert "or as their words\nin a flat list or numpy array" in err.value.rule


@pytest.mark.parametrize("payload, found", [
    ([(0, 3, (0, 500, 501)), (1, 3, [1, 600, 601])], [(0, 500, 501), (1, 600, 601)]),
    ({2: [2, 700, 701], 3: [[3, 800, 801], [2, 700, 701]]},
     [(2, 700, 701), (3, 800, 801), (2, 700, 701)]),      # each as often as it is carried
    ([], []),
    (None, []),
])
def test_pieces_in_names_the_messages_a_payload_carries(payload, found):
    # which input messages a message carried (grid_alltoall: did every message reach the PE
    # it is addressed to?), read as count_pieces reads a payload
    pieces = {tuple(m) for m in MESSAGES}
    assert pieces_in(payload, pieces, p=4) == found
    assert len(found) == count_pieces(payload, pieces, p=4)


def test_pieces_in_refuses_what_count_pieces_refuses():
    with pytest.raises(UncountablePayload, match="it holds '"):
        pieces_in(["[1, 600, 601]"], {tuple(m) for m in MESSAGES}, p=4)


def test_an_uncountable_payload_is_a_value_error_with_the_rule_of_its_counter():
    # count_pieces keeps its own rule (whole messages only), count_words states its own
    with pytest.raises(ValueError) as pieces:
        count_pieces([1, 600, 601, 2], {tuple(m) for m in MESSAGES}, p=4)
    with pytest.raises(ValueError) as words:
        count_words("[1, 600, 601]", MESSAGES, p=4)
    assert "themselves,\nin lists, tuples or dicts" in pieces.value.rule
    assert "flat list or numpy array" in words.value.rule


def _sender(payload, words):
    def program(me, p, data):
        if me == 0:
            yield send(1, payload, words=words)
        else:
            yield recv(0)
    return program


def test_check_declared_words_states_the_rule_of_the_counter():
    run = simulate(_sender(["packed"], 0), 2, [None, None], trace=True)
    with pytest.raises(AssertionError) as err:
        check_declared_words(run, lambda x: count_words(x, MESSAGES, 4), "sender")
    assert str(err.value).endswith(
        "A message may hold only the input messages, whole or as their words\n"
        "in a flat list or numpy array, in lists, tuples or dicts,\nwith ranks as labels.")
    with pytest.raises(AssertionError) as err:
        check_declared_words(run, lambda x: 3 * count_pieces(x, {(5, 6)}, 4), "sender")
    assert str(err.value).endswith("A message may hold only the input messages themselves,"
                                   "\nin lists, tuples or dicts, with ranks as labels.")


def test_a_flat_list_declared_smaller_than_its_words_fails():
    run = simulate(_sender([1, 600, 601, 2, 700, 701], 3), 2, [None, None], trace=True)
    with pytest.raises(AssertionError, match="carries 6 words of data\nbut is sent as 3"):
        check_declared_words(run, lambda x: count_words(x, MESSAGES, 4), "sender")
    run = simulate(_sender([1, 600, 601, 2, 700, 701], None), 2, [None, None], trace=True)
    check_declared_words(run, lambda x: count_words(x, MESSAGES, 4), "sender")
