"""Early checks shared by the algorithms: each names the bad value."""
from __future__ import annotations

from numbers import Integral

__all__ = ["check_root", "check_power_of_two", "check_square", "check_positive_int",
           "is_power_of_two"]


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
