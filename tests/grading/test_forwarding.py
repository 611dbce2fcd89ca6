"""A student's function replaced by the checks wherever the student's code holds it.

A student audit (eleventh round): a runner that bound ``op=min_loc`` when it was defined
still called the student's own min_loc after the test cell had put a recording stand-in
under the name, and lost its points for "combining no pairs".
"""
import functools

import pytest

from collective_lib.grading import (StandIn, can_forward, forward_calls, forward_calls_in,
                                    own_code, replaced)


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


# A student audit (twelfth round): a min_loc that is no plain function (the builtin min,
# which compares value first and PE next, or one memoized with functools.lru_cache) held
# as a default argument still ran itself, and the right runner lost its points for
# "combining only 0 pairs with min_loc".
def _cells(source):
    namespace = {"__name__": "__main__"}
    exec(source, namespace)
    return namespace


@pytest.mark.parametrize("definition", [
    "min_loc = min\n",
    "import functools\n\n@functools.lru_cache(maxsize=None)\n"
    "def min_loc(a, b):\n    return min(a, b)\n",
    "import functools\n\nmin_loc = functools.partial(min)\n",
], ids=["builtin", "lru_cache", "partial"])
def test_what_is_no_plain_function_is_replaced_where_the_cells_hold_it(definition):
    cells = _cells(definition + (
        "def runner(values, op=min_loc, *, last=min_loc):\n"
        "    return op(values[0], values[1]), last(values[1], values[2])\n"
        "def make():\n    op = min_loc\n    return lambda a, b: op(a, b)\n"
        "closure = make()\n"))
    student = cells["min_loc"]
    assert not can_forward(student)
    calls = []

    def recording(a, b):
        calls.append((a, b))
        return "recorded"
    with replaced(cells, "min_loc", recording) as own:
        assert cells["min_loc"] is recording
        assert cells["runner"]([(3, 0), (1, 1), (2, 2)]) == ("recorded", "recorded")
        assert cells["closure"]((2, 0), (1, 1)) == "recorded"
        assert own((3, 0), (1, 1)) == (1, 1)        # the student's own, as the checker calls it
    assert calls == [((3, 0), (1, 1)), ((1, 1), (2, 2)), ((2, 0), (1, 1))]
    assert cells["min_loc"] is student
    assert cells["runner"]([(3, 0), (1, 1), (2, 2)]) == ((1, 1), (1, 1))
    assert cells["closure"]((2, 0), (1, 1)) == (1, 1)


def test_a_plain_function_is_forwarded_and_put_back_by_replaced():
    cells = _cells("def break_even(d):\n    return 2.0 * d\n\n"
                   "def predicted(d, meet=break_even):\n    return meet(d) + 1\n")
    student = cells["break_even"]
    with replaced(cells, "break_even", lambda d: -7.0) as own:
        assert cells["predicted"](1) == -6.0 and own(1) == 2.0
    assert cells["break_even"] is student and cells["predicted"](1) == 3.0
    with pytest.raises(NameError, match="name 'simulated_sum' is not defined"):
        with replaced(cells, "simulated_sum", len):
            pass


def test_functions_of_other_modules_and_stand_ins_are_left_alone():
    def library_function(a, b, op=min):           # not defined by the cells
        return op(a, b)
    cells = _cells("min_loc = min\n")
    cells["library_function"] = library_function
    undo = forward_calls_in(cells, min, lambda a, b: "recorded")
    assert library_function(1, 2) == 1
    undo()

    class _StandIn(StandIn):
        kind = "function"

        def student_sources(self):
            return []

        def forbid(self, names):
            pass

        def each_pe_apart(self):
            raise NotImplementedError

        replayer = each_pe_apart
    # data that a student left under the name is no function: defaults equal to it stay
    cells = _cells("min_loc = None\ndef runner(a, b, op=None, k=5):\n    return op, k\n")
    for data in (None, 5):
        forward_calls_in(cells, data, len)
        assert cells["runner"](1, 2) == (None, 5)

    standin = _StandIn()
    cells = _cells("def runner(a, b, op=None):\n    return op(a, b)\n")
    cells["runner"].__defaults__ = (standin,)
    forward_calls_in(cells, standin, len)
    assert cells["runner"].__defaults__ == (standin,)
