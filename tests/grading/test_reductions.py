"""check_operator_in_reductions: a student's operator inside the library's reductions."""
import signal

import pytest

from collective_lib.algorithms.reduce import elementwise
from collective_lib.grading import check_operator_in_reductions
from messages import flat

needs_alarm = pytest.mark.skipif(not hasattr(signal, "setitimer"),
                                 reason="the wall-clock guard needs SIGALRM and setitimer")


def lexicographic_min(a, b):
    return a if a <= b else b


def keep_left(a, b):
    """Associative, not commutative: the leftmost minimal value wins."""
    return a if a[0] <= b[0] else b


def pairs(p, rng):
    return [(int(v), pe) for pe, v in enumerate(rng.integers(0, 3, size=p))]


def vectors(p, rng):
    return [[(int(v), pe) for v in rng.integers(0, 3, size=max(p, 2))] for pe in range(p)]


ALL_SCALAR = ["binomial_reduce", "binary_tree_reduce", "reduce_broadcast_allreduce",
              "hypercube_allreduce", "binary_tree_prefix_sum", "hypercube_prefix_sum"]


def test_a_correct_operator_passes_every_algorithm():
    check_operator_in_reductions(lexicographic_min, ALL_SCALAR, range(1, 20), roots="all",
                                 make_inputs=pairs, reference_op=lexicographic_min)
    check_operator_in_reductions(elementwise(lexicographic_min),
                                 ["rabenseifner_allreduce", "pipelined_binary_tree_reduce"],
                                 [1, 2, 4, 5, 8], params={"k": 2}, make_inputs=vectors,
                                 reference_op=elementwise(lexicographic_min))


def test_an_order_sensitive_operator_passes_where_the_order_is_kept():
    rank_order = [n for n in ALL_SCALAR if n != "binomial_reduce"]
    check_operator_in_reductions(keep_left, rank_order, range(1, 20), roots="all",
                                 make_inputs=pairs, reference_op=keep_left)
    check_operator_in_reductions(keep_left, ["binomial_reduce"], range(1, 20), roots=[0],
                                 make_inputs=pairs, reference_op=keep_left)


def test_a_rotated_order_is_reported_with_the_combination_order():
    with pytest.raises(AssertionError) as err:
        check_operator_in_reductions(keep_left, ["binomial_reduce"], [6], roots=[3],
                                     make_inputs=lambda p, rng: [(1, pe) for pe in range(p)],
                                     reference_op=lexicographic_min, hint="Hint: break ties.")
    text = flat(err.value)
    assert text.startswith("binomial_reduce with your operator keep_left on p=6 PEs, root=3: "
                           "PE 3 returned (1, 3), but (1, 0) was expected.")
    assert "inputs (PE 0, 1, ...): [(1, 0), (1, 1), (1, 2), (1, 3), (1, 4), (1, 5)]" in text
    assert "in this order: 3:5,0:2 (x:y means the PEs x, x+1, ..., y)" in text
    assert text.endswith("Hint: break ties.")


def test_a_wrong_prefix_names_the_pe_and_its_order():
    def right_wins(a, b):
        return b if a[0] >= b[0] else a

    with pytest.raises(AssertionError) as err:
        check_operator_in_reductions(right_wins, ["hypercube_prefix_sum"], [4],
                                     make_inputs=lambda p, rng: [(0, pe) for pe in range(p)],
                                     reference_op=lexicographic_min)
    text = flat(err.value)
    # PE 0's total (the second item of its (prefix, total) pair) keeps the wrong PE
    assert text.startswith("hypercube_prefix_sum with your operator right_wins on p=4 PEs: "
                           "PE 0 returned ((0, 0), (0, 3)), but ((0, 0), (0, 0)) was expected.")
    assert "in this order: 0:3" in text


def test_an_exception_in_the_operator_is_explained():
    def broken(a, b):
        return a[0] / 0

    with pytest.raises(AssertionError) as err:
        check_operator_in_reductions(broken, ["binary_tree_reduce"], [5], make_inputs=pairs,
                                     reference_op=lexicographic_min)
    text = flat(err.value)
    assert "binary_tree_reduce with your operator broken on p=5 PEs, root=0 raised ZeroDivisionError" in text
    assert "`return a[0] / 0`" in text


@needs_alarm
def test_an_endless_operator_is_stopped():
    def endless(a, b):
        while True:
            pass

    with pytest.raises(AssertionError) as err:
        check_operator_in_reductions(endless, ["binomial_reduce"], [4], make_inputs=pairs,
                                     reference_op=lexicographic_min, time_limit_s=0.3)
    assert "did not finish within 0.3 s of real time" in flat(err.value)


def test_invalid_p_is_skipped_and_unknown_names_are_errors():
    # the hypercube algorithm simply skips p = 6
    check_operator_in_reductions(lexicographic_min, ["hypercube_allreduce"], [3, 6],
                                 make_inputs=pairs, reference_op=lexicographic_min)
    with pytest.raises(ValueError, match="unknown algorithm 'quick_sort'"):
        check_operator_in_reductions(min, ["quick_sort"], [2], make_inputs=pairs,
                                     reference_op=min)


def test_nothing_goes_to_stderr(capfd):
    def noisy(a, b):
        import sys
        import warnings
        print("debug", file=sys.stderr)
        warnings.warn("careful")
        return lexicographic_min(a, b)

    check_operator_in_reductions(noisy, ["binomial_reduce"], [3, 4], make_inputs=pairs,
                                 reference_op=lexicographic_min)
    assert capfd.readouterr().err == ""
