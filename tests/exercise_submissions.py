"""Student submissions shared by the exercise tests of several assignments.

Each is the body of a generator program that replaces a solution region (see
:func:`nbgrader_harness.replace_solution`): programs that never finish, which the
guards of :mod:`collective_lib.grading` must stop with a helpful message. This
module is a helper, not a test; a test module never imports another test module.
"""
from __future__ import annotations

__all__ = ["SPINS", "YIELDS_FOREVER"]

SPINS = '''
while True:                           # never yields, never returns
    pass
yield
'''

YIELDS_FOREVER = '''
from collective_lib import compute
while True:
    yield compute(0)
'''
