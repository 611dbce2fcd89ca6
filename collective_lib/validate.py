"""Early checks shared by the algorithms: each names the bad value."""
from __future__ import annotations

from numbers import Integral

__all__ = ["check_root", "check_power_of_two", "check_square", "check_positive_int",
           "is_power_of_two", "check_operator", "check_flag", "check_messages"]


def check_positive_int(name: str, value, least: int = 1) -> int:
    """``value`` as an int, or a ValueError naming ``name`` unless it is an integer >= least.

    >>> check_positive_int("p", 0)
    Traceback (most recent call last):
    ...
    ValueError: p must be an integer >= 1, got 0
    """
    if not isinstance(value, Integral) or isinstance(value, bool) or value < least:
        raise ValueError(f"{name} must be an integer >= {least}, got {value!r}")
    return int(value)


def is_power_of_two(p: int) -> bool:
    """True for 1, 2, 4, 8, ...

    >>> is_power_of_two(8), is_power_of_two(6)
    (True, False)
    """
    return isinstance(p, int) and p >= 1 and p & (p - 1) == 0


def check_root(root, p: int) -> int:
    if not isinstance(root, Integral) or isinstance(root, bool) or not 0 <= root < p:
        raise ValueError(f"root must be a rank in 0..{p - 1}, got root={root!r}")
    return int(root)


def check_power_of_two(algorithm: str, p: int) -> int:
    if not is_power_of_two(p):
        raise ValueError(f"{algorithm} needs p to be a power of two, got p={p}")
    return p.bit_length() - 1


def check_square(algorithm: str, p: int) -> int:
    side = int(round(p ** 0.5))
    if side * side != p:
        raise ValueError(f"{algorithm} needs p to be a perfect square, got p={p}")
    return side


def check_operator(op):
    """``op`` if it is callable (a binary operator of a reduction), else a ValueError."""
    if not callable(op):
        raise ValueError(f"op must be a callable binary operator such as "
                         f"elementwise(operator.add), got op={op!r}")
    return op


def check_flag(name: str, value) -> bool:
    """``value`` if it is True or False, else a ValueError naming ``name``."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False, got {name}={value!r}")
    return value


def check_messages(algorithm: str, data, p: int) -> list:
    """A PE's input of an all-to-all operation: one message per destination, as a list."""
    if not isinstance(data, (list, tuple)) or len(data) != p:
        raise ValueError(f"{algorithm} needs a list of p={p} messages on every PE (one per "
                         f"destination), got {data!r:.80}")
    return list(data)
