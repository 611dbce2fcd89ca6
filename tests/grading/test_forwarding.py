"""A student's function replaced by the checks wherever the student's code holds it.

A student audit (eleventh round): a runner that bound ``op=min_loc`` when it was defined
still called the student's own min_loc after the test cell had put a recording stand-in
under the name, and lost its points for "combining no pairs".
"""
import functools

from collective_lib.grading import can_forward, forward_calls, own_code


def _pair_min(a, b):
    return a if a <= b else b


def test_every_holder_calls_the_replacement_until_it_is_undone():
    def runner(values, op=_pair_min):                 # a default argument
        return functools.reduce(op, values)
    saved, partial = _pair_min, functools.partial(_pair_min, (0, 9))
    calls = []

    def recording(a, b):
        calls.append((a, b))
        return max(a, b)
    undo = forward_calls(_pair_min, recording)
    try:
        assert runner([(3, 0), (1, 1)]) == (3, 0)
        assert saved((1, 2), (2, 1)) == (2, 1) and partial((5, 5)) == (5, 5)
        assert len(calls) == 3
    finally:
        undo()
    assert runner([(3, 0), (1, 1)]) == (1, 1) and partial((5, 5)) == (0, 9)
    assert _pair_min.__defaults__ is None and _pair_min.__kwdefaults__ is None


def test_a_closure_and_defaults_come_back_whole():
    def make(k):
        def scaled(x, y=2, *, z=3):
            return k * x + y + z
        return scaled
    scaled = make(10)
    own = own_code(scaled)
    undo = forward_calls(scaled, lambda *args, **kwargs: ("forwarded", args, kwargs))
    assert scaled(1, z=0) == ("forwarded", (1,), {"z": 0})
    assert own(1, z=0) == 12                          # its own code, as the checker calls it
    undo()
    assert scaled(1) == 15


def test_only_plain_functions_are_forwarded():
    def program():
        yield 1
    for other in (program, functools.partial(_pair_min, 1), max, lambda a, b: a):
        undo = forward_calls(other, lambda *args: "forwarded")
        undo()
    assert not can_forward(program) and not can_forward(max)
    assert list(program()) == [1]
