"""Text a student controls, in what the instructor opens: a spreadsheet and a terminal.

A student's id is a folder name in the exchange and an exception message is whatever the
student's code raised; both reach the class reports (``similarity``, ``misconceptions``)
and the grades table (``export``). :func:`spreadsheet_cell` keeps a CSV cell from being
read as a formula (``=HYPERLINK(...)``), :func:`terminal_text` keeps a line printed to
the instructor's terminal from moving the cursor, erasing lines or retitling the window.

Internal to :mod:`collective_lib.autograde`.
"""
from __future__ import annotations

import re

__all__ = ["spreadsheet_cell", "terminal_text"]

#: What a spreadsheet takes for the start of a formula (OWASP, "CSV injection").
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
#: C0 and C1 control characters but the line break and the tab.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def terminal_text(text: str) -> str:
    """``text`` with every control character but newline and tab written as ``\\xNN``.

    >>> terminal_text("ok\\x1b[2J\\rgone")
    'ok\\\\x1b[2J\\\\x0dgone'
    """
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text)


def spreadsheet_cell(value):
    """``value`` as a CSV cell a spreadsheet shows as text: a string that would start a
    formula (and is no number) gets the apostrophe spreadsheets take for "text", and its
    control characters are escaped as by :func:`terminal_text`; other values are kept.

    >>> spreadsheet_cell('=HYPERLINK("http://x")'), spreadsheet_cell("-1.5"), spreadsheet_cell(3)
    ('\\'=HYPERLINK("http://x")', '-1.5', 3)
    """
    if not isinstance(value, str):
        return value
    value = terminal_text(value)
    if value.startswith(_FORMULA_START) and not _NUMBER.fullmatch(value):
        return "'" + value
    return value
