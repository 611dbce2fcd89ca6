"""Small shared-memory programs that several tests in tests/shared_memory/ run.

Importable by plain name because tests/conftest.py puts tests/ on sys.path.
"""
from collective_lib.shared_memory import fetch_add, read, write

__all__ = ["racy_increment", "atomic_increment"]


def racy_increment(me, p, data):
    """Read, then write: two PEs can both read the old value (a lost update)."""
    x = yield read("c")
    yield write("c", x + 1)


def atomic_increment(me, p, data):
    return (yield fetch_add("c", 1))
