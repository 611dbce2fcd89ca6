"""Symbolic operands: "x:y" stands for m_x op m_{x+1} op ... op m_y.

Sanders et al. 2019 draw reductions and prefix sums (Figs. 13.3, 13.7, 13.9)
with such operands.  Run a program on :func:`span_inputs` with ``op=span_op``
and every value it holds shows which inputs it combines, and in what order:
:class:`Span` is the operand, :func:`span_op` combines two of them.
"""
from __future__ import annotations

__all__ = ["Span", "span_inputs", "span_op", "rank_ranges"]


def rank_ranges(ranks) -> str:
    """Ranks as maximal ascending runs, the way a span is written.

    >>> rank_ranges((0, 1, 2, 5, 3))
    '0:2,5,3'
    """
    pieces, start, prev = [], None, None
    for r in ranks:
        if start is not None and r == prev + 1:
            prev = r
            continue
        if start is not None:
            pieces.append(f"{start}" if start == prev else f"{start}:{prev}")
        start = prev = r
    if start is not None:
        pieces.append(f"{start}" if start == prev else f"{start}:{prev}")
    return ",".join(pieces)


class Span:
    """A symbolic operand: the ranks whose inputs it combines, in the order combined.

    ``Span((3,))`` stands for m_3, and ``Span((0, 1, 2, 3))`` for
    m_0 op m_1 op m_2 op m_3, written ``0:3`` as in Sanders et al.'s figures.
    Combining concatenates (:func:`span_op`), which is associative but not
    commutative, so a span that is not one ascending run, such as ``2:4,0:1``,
    shows operands combined out of rank order.  A span is one word of a message.

    >>> print(Span((0, 1, 2, 3)), Span((2, 3, 4, 0, 1)), Span((5,)))
    0:3 2:4,0:1 5
    """
    __slots__ = ("ranks",)

    def __init__(self, ranks):
        self.ranks = tuple(int(r) for r in ranks)
        if not self.ranks:
            raise ValueError("a Span combines at least one rank")

    def __eq__(self, other):
        return isinstance(other, Span) and other.ranks == self.ranks

    def __hash__(self):
        return hash(("Span", self.ranks))

    def __str__(self):
        return rank_ranges(self.ranks)

    def __repr__(self):
        return f"Span({str(self)!r})"

    @property
    def in_order(self) -> bool:
        """True when the ranks form one ascending run of consecutive ranks."""
        return list(self.ranks) == list(range(self.ranks[0], self.ranks[0] + len(self.ranks)))


def _join_spans(a, b):
    if not (isinstance(a, Span) and isinstance(b, Span)):
        raise TypeError(f"span_op combines Span words, got {a!r} and {b!r}")
    return Span(a.ranks + b.ranks)


def span_op(a, b):
    """Combine two symbolic messages word by word (lists, tuples or single Spans).

    >>> print(span_op(Span((0,)), Span((1, 2))))
    0:2
    >>> [str(s) for s in span_op([Span((4,)), Span((4,))], [Span((0,)), Span((0,))])]
    ['4,0', '4,0']
    """
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            raise ValueError(f"cannot combine messages of {len(a)} and {len(b)} words")
        words = [_join_spans(x, y) for x, y in zip(a, b)]
        return tuple(words) if isinstance(a, tuple) else words
    return _join_spans(a, b)


def span_inputs(p: int, m: int | None = 1) -> list:
    """Symbolic inputs: PE i holds ``[Span((i,))] * m`` (``m=None``: the bare Span).

    >>> [str(x) for x in span_inputs(3, m=None)]
    ['0', '1', '2']
    """
    if m is None:
        return [Span((i,)) for i in range(p)]
    return [[Span((i,))] * m for i in range(p)]
