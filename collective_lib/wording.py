"""Phrases of the text alternatives: lists, plurals, sets of PEs, numbers, who sends to whom.

The words every drawing's description (:func:`collective_lib.viz.describe`) is made
of, shared by the pictures of :mod:`collective_lib.viz` and :mod:`collective_lib.cm200`.
Plain text, no matplotlib.

>>> listing(["ring", "tree", "hypercube"]), plural(1, "step"), plural(3, "step")
('ring, tree and hypercube', '1 step', '3 steps')
"""
from __future__ import annotations

__all__ = ["LONG", "plural", "listing", "ranks", "network_phrase", "pairs", "busiest_link",
           "number", "shorten"]

#: Above this many characters a description summarises instead of listing.
LONG = 400


def plural(n: int, word: str, many: str | None = None) -> str:
    """'1 transfer', '3 transfers' ('many' when the plural is not word + 's')."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def listing(items, most: int = 6) -> str:
    """'a', 'a and b', 'a, b and c', or the first ``most`` and 'k more'."""
    items = [str(i) for i in items]
    if len(items) > most:
        items = items[:most] + [f"{len(items) - most} more"]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def ranks(pes) -> str:
    """A set of PEs as ranges: 'PEs 0 to 3 and 6', 'PE 2'.

    >>> ranks([6, 0, 1, 2, 3]), ranks([2, 3]), ranks([5])
    ('PEs 0 to 3 and 6', 'PEs 2 and 3', 'PE 5')
    """
    pes = sorted(set(pes))
    if not pes:
        return "no PE"
    runs, start = [], pes[0]
    for a, b in zip(pes, pes[1:] + [None]):
        if b != a + 1:
            runs += [f"{start} to {a}"] if a > start + 1 else list(map(str, range(start, a + 1)))
            start = b
    return ("PE " if len(pes) == 1 else "PEs ") + listing(runs, 4)


def network_phrase(network) -> str:
    """'a ring of 8 PEs', 'a 4 x 4 mesh with wrap-around (16 PEs)', ..."""
    kind = type(network).__name__
    p = network.p
    if kind == "Mesh":
        wrap = " with wrap-around links (a torus)" if network.wrap else ""
        return f"a {network.rows} x {network.cols} mesh{wrap} of {p} PEs"
    if kind == "Hypercube":
        article = "an" if str(network.d).startswith("8") or network.d in (11, 18) else "a"
        return f"{article} {network.d}-dimensional hypercube of {p} PEs"
    names = {"Ring": "a ring", "LinearArray": "a linear array",
             "FullyConnected": "a fully connected network"}
    return f"{names.get(kind, 'a network')} of {plural(p, 'PE')}"


def pairs(pairs, p: int) -> str:
    """Who sends to whom: every pair when few, else the rule they follow.

    >>> pairs([(0, 4), (1, 5)], 8)
    '0 -> 4 and 1 -> 5'
    >>> pairs([(i, (i + 1) % 8) for i in range(8)], 8)
    'each of PEs 0 to 7 sends to PE i + 1 mod 8'
    >>> pairs([(i, i ^ 2) for i in range(8)], 8)
    'each of PEs 0 to 7 sends to PE i XOR 2 (across dimension 1)'
    """
    pairs = sorted(pairs)
    if len(pairs) <= 6:
        return listing([f"{s} -> {d}" for s, d in pairs])
    senders = ranks(s for s, _ in pairs)
    gaps = {d - s for s, d in pairs}
    if len(gaps) == 1:
        gap = gaps.pop()
        return f"each of {senders} sends to PE i {'+' if gap > 0 else '-'} {abs(gap)}"
    flips = {s ^ d for s, d in pairs}
    if len(flips) == 1:
        flip = flips.pop()
        dim = f" (across dimension {flip.bit_length() - 1})" if flip & (flip - 1) == 0 else ""
        return f"each of {senders} sends to PE i XOR {flip}{dim}"
    gaps = {(d - s) % p for s, d in pairs}
    if len(gaps) == 1:
        return f"each of {senders} sends to PE i + {gaps.pop()} mod {p}"
    return (f"{plural(len({s for s, _ in pairs}), 'sender')} ({senders}) send to "
            f"{plural(len({d for _, d in pairs}), 'receiver')}")


def busiest_link(messages) -> str:
    """'the busiest link, 3 -> 4, carries 4' (ties: the first in link order), or that no link
    carries two of the messages."""
    load = {}
    for msg in messages:
        for link in msg.path:
            load[link] = load.get(link, 0) + 1
    if not load:
        return ""
    top = max(load.values())
    if top == 1:
        return "no two of them share a link" if len(messages) > 1 else ""
    u, v = min(link for link, n in load.items() if n == top)
    others = sum(1 for n in load.values() if n == top) - 1
    tie = f" (and {plural(others, 'other link')} as many)" if others else ""
    return f"the busiest link, {u} -> {v}, carries {top}{tie}"


def number(x) -> str:
    """A number as the text writes it: four significant digits, but from 10,000 to a
    billion the whole number with thousands separators (21,550, not 2.155e+04).

    >>> number(21550), number(0.125), number(1234.5), number(3e9)
    ('21,550', '0.125', '1234', '3e+09')
    """
    x = float(x)
    return f"{x:,.0f}" if 1e4 <= abs(x) < 1e9 else f"{x:.4g}"


def shorten(sentences: list, limit: int = LONG) -> str:
    """Join sentences, dropping the later optional ones beyond ``limit`` characters.

    ``sentences`` are strings (always kept) or ``(text,)`` tuples (kept while room is left).
    """
    kept = [s for s in sentences if isinstance(s, str)]
    room = limit - len(" ".join(kept))
    out, left_out = [], 0
    for s in sentences:
        if isinstance(s, str):
            out.append(s)
        elif len(s[0]) + 1 <= room - 30:
            out.append(s[0])
            room -= len(s[0]) + 1
        else:
            left_out += 1
    if left_out:
        out.append(f"({left_out} more not described.)")
    return " ".join(out)
