"""What an honest student sends crosses to the checker as plain data (twelfth round, B-F1,
B-F2, B-F4; collective_lib.autograde.codec).

An instance of a subclass of a builtin type (a namedtuple, a defaultdict, an IntEnum)
crosses as its base type, read by the base type's own methods: whatever the subclass
overrides never runs, so a subclass that lies in ``__iter__``, ``__len__`` or ``__eq__``
sends what it holds. A Fraction or a Decimal crosses as the nearest float. What still
cannot cross is refused with a message that names its type and says what to send.
"""
import enum
import json
from collections import Counter, OrderedDict, defaultdict, namedtuple
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

from collective_lib.autograde.codec import MAX_ITEMS, Undecodable, decode, encode
from collective_lib.ops import SendRecv

Item = namedtuple("Item", "src dst msg")


class Rank(enum.IntEnum):
    ROOT = 0
    LEAF = 3


class Colour(str, enum.Enum):
    RED = "red"


def _crossed(value):
    """``value`` as the checker rebuilds it, through JSON as over the pipe."""
    return decode(json.loads(json.dumps(encode(value))))


def _types(value):
    """Every type inside ``value``, in order (containers before their items)."""
    if isinstance(value, dict):
        return [type(value)] + [t for k, v in value.items() for t in _types(k) + _types(v)]
    if isinstance(value, (list, tuple, set, frozenset)):
        return [type(value)] + [t for item in value for t in _types(item)]
    return [type(value)]


def _bundle():
    bundle = defaultdict(list)
    bundle[3].append((0, [1.5, 2.5]))
    bundle[1].append((2, [7.0]))
    return bundle


@pytest.mark.parametrize("value, plain", [
    (Item(0, 3, [1.5]), (0, 3, [1.5])),
    ([Item(0, 3, [1.5]), Item(2, 1, [7.0])], [(0, 3, [1.5]), (2, 1, [7.0])]),
    (_bundle(), {3: [(0, [1.5, 2.5])], 1: [(2, [7.0])]}),
    (defaultdict(list, {Item(1, 2, "m"): Counter("aab")}), {(1, 2, "m"): {"a": 2, "b": 1}}),
    (OrderedDict([(2, "b"), (1, "a")]), {2: "b", 1: "a"}),
    ([Rank.LEAF, Colour.RED], [3, "red"]),
    (type("Words", (int,), {})(12), 12),
    (type("Seconds", (float,), {})(0.25), 0.25),
    (type("Ranks", (set,), {})({1, 2}), {1, 2}),
    (type("Frozen", (frozenset,), {})({(0, 1)}), frozenset({(0, 1)})),
    (type("Table", (list,), {})([[1, 2], [3]]), [[1, 2], [3]]),
    (type("Z", (complex,), {})(1 + 2j), 1 + 2j),
    (np.str_("x0[1]"), "x0[1]"),
])
def test_a_subclass_of_a_builtin_crosses_as_the_builtin(value, plain):
    back = _crossed(value)
    assert back == plain
    assert _types(back) == _types(plain)


def test_a_subclass_of_a_record_crosses_as_the_record():
    class Exchange(SendRecv):
        pass
    back = _crossed([Exchange(1, [7], 2, 1)])
    assert back == [SendRecv(1, [7], 2, 1)] and type(back[0]) is SendRecv


def test_a_subclass_of_a_numpy_array_crosses_as_an_array():
    class Grid(np.ndarray):
        def tolist(self):
            return _never()
    back = _crossed(np.arange(4).reshape(2, 2).view(Grid))
    assert type(back) is np.ndarray and back.tolist() == [[0, 1], [2, 3]]


@pytest.mark.parametrize("value, nearest", [
    (Fraction(7, 2), 3.5),
    (Fraction(1, 3), 1 / 3),
    (Fraction(-10 ** 30, 7), -10 ** 30 / 7),
    (Fraction(1, 10 ** 400), 0.0),
    (Decimal("2.75"), 2.75),
    (Decimal("0.1"), 0.1),
    (Decimal("-Infinity"), float("-inf")),
])
def test_a_fraction_or_a_decimal_crosses_as_the_nearest_float(value, nearest):
    back = _crossed([value])
    assert back == [nearest] and type(back[0]) is float


def test_a_decimal_nan_crosses_as_nan():
    back = _crossed([Decimal("NaN"), Decimal("sNaN")])
    assert [type(x) for x in back] == [float, float] and all(x != x for x in back)


@pytest.mark.parametrize("value, message", [
    (Fraction(10 ** 400), "a Fraction of about 10**400, too large for a float, "
                             "cannot be graded"),
    (Decimal("1e999"), "the Decimal 1E+999 is too large for a float and cannot be graded"),
])
def test_a_number_too_large_for_a_float_is_refused_saying_so(value, message):
    with pytest.raises(Undecodable) as err:
        encode(value)
    assert str(err.value) == message


# -- hostile subclasses ---------------------------------------------------------------------

class _Endless(Exception):
    pass


def _never(*args, **kwargs):
    raise _Endless("a method of the subclass ran")


def _hostile(base, names):
    """A subclass of ``base`` whose methods ``names`` fail (an endless loop, in a real attack)."""
    return type(f"Hostile{base.__name__}", (base,), {name: _never for name in names})


LIES = ["__iter__", "__len__", "__eq__", "__ne__", "__hash__", "__getitem__", "__repr__",
        "__str__", "__format__", "__bool__", "__reversed__", "__contains__", "__index__",
        "__int__", "__float__", "keys", "items", "values", "__getattribute__"]


@pytest.mark.parametrize("base, value", [
    (list, [1, [2]]), (tuple, (1, "a")), (dict, {1: [2]}), (set, {1, 2}),
    (frozenset, {3}), (int, 7), (float, 2.5), (str, "x0[1]"),
])
def test_what_a_subclass_overrides_never_runs(base, value):
    hostile = _hostile(base, [name for name in LIES if hasattr(base, name)])(value)
    back = _crossed(hostile)
    assert back == value and type(back) is base


def test_a_subclass_that_claims_to_equal_anything_is_sent_as_its_value():
    class Anything(int):
        def __eq__(self, other):
            return True
        __hash__ = int.__hash__
    back = _crossed([Anything(0)])
    assert back == [0] and back != [1] and type(back[0]) is int


def test_a_subclass_that_holds_itself_is_refused():
    class Loop(list):
        pass
    loop = Loop()
    loop.append(loop)
    with pytest.raises(Undecodable, match="nested too deeply"):
        encode(loop)


def test_a_huge_subclass_is_refused_whatever_len_says():
    class Short(list):
        def __len__(self):
            return 1
    with pytest.raises(Undecodable, match=f"more than {MAX_ITEMS:,} items"):
        encode(Short(range(MAX_ITEMS + 5)))


def test_a_class_that_lies_about_its_bases_is_refused():
    class Claims(type):
        @property
        def __mro__(cls):
            return (cls, list, object)

    class NotAList(metaclass=Claims):
        pass
    with pytest.raises(Undecodable, match="^values of type NotAList cannot be graded"):
        encode(NotAList())


def test_a_fraction_whose_fields_are_not_integers_is_refused():
    class Odd(Fraction):
        pass
    odd = Odd(1, 2)
    odd._numerator = [1]
    with pytest.raises(Undecodable, match="numerator and denominator are not integers"):
        encode(odd)


# -- what cannot cross, and what to send instead ----------------------------------------------

@pytest.mark.parametrize("value, name", [(object(), "object"), (bytes(2), "bytes"),
                                         (iter([1]), "list_iterator"), (map(int, "1"), "map")])
def test_what_cannot_cross_is_refused_naming_its_type_and_what_to_send(value, name):
    with pytest.raises(Undecodable) as err:
        encode(value)
    assert str(err.value).splitlines() == [
        f"values of type {name} cannot be graded:",
        "use numbers, strings, lists, tuples, sets, dicts or numpy arrays"]
    assert all(len(line) <= 67 for line in str(err.value).splitlines())


def test_an_array_of_strings_is_refused_naming_its_dtype():
    with pytest.raises(Undecodable) as err:
        encode(np.array(["a", "bc"]))
    assert str(err.value) == ("numpy arrays of dtype <U2 cannot be graded (use arrays of "
                              "numbers, or lists)")
