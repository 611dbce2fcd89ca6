"""Symbolic operands: a Span prints as "x:y" ranges in the order its ranks were combined."""
import pytest

from collective_lib.spans import Span, span_inputs, span_op


def test_spans_print_as_ranges_in_combination_order():
    assert [str(Span(r)) for r in [(3,), (0, 1, 2), (2, 3, 4, 0, 1), (5, 0), (1, 3, 4)]] == \
        ["3", "0:2", "2:4,0:1", "5,0", "1,3:4"]
    assert Span((0, 1)).in_order and not Span((1, 0)).in_order and not Span((0, 2)).in_order
    assert Span((1, 2)) == Span([1, 2]) != Span((2, 1)) and len({Span((1,)), Span((1,))}) == 1
    with pytest.raises(ValueError, match="at least one rank"):
        Span(())


def test_span_op_is_associative_word_by_word_and_not_commutative():
    a, b, c = span_inputs(3, m=2)
    assert span_op(span_op(a, b), c) == span_op(a, span_op(b, c)) == [Span((0, 1, 2))] * 2
    assert span_op(b, a) != span_op(a, b)
    assert span_op(Span((4,)), Span((5,))) == Span((4, 5))
    with pytest.raises(ValueError, match="1 and 2 words"):
        span_op([Span((0,))], b)
    with pytest.raises(TypeError, match="Span words"):
        span_op(Span((0,)), 3)
    assert span_inputs(2, m=None) == [Span((0,)), Span((1,))]
