"""Reading the checks' messages in tests: their words, not where their lines break."""
from __future__ import annotations


def flat(text) -> str:
    """``text`` (or an exception's message) with every run of white space made one blank:
    messages are wrapped to the width Validate shows whole, wherever their words fall,
    and Validate indents them."""
    return " ".join(str(text).split())
