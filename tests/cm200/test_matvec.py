"""y = A x on a two-dimensional nodal array (Mathur and Johnsson 1993, §2)."""
import numpy as np
import pytest

from collective_lib.algorithms.alltoall import (all_to_all_bc_hcube, all_to_all_bc_ring,
                                                all_to_all_red_hcube)
from collective_lib.cm200.matvec import matvec_inputs, matvec_result, simulate_matvec
from collective_lib.model import CostModel


@pytest.mark.parametrize("P, Q, rows, cols", [
    (8, 8, 2, 4), (16, 12, 4, 2), (7, 5, 2, 2), (3, 3, 2, 2), (20, 30, 4, 4),
    (5, 9, 1, 4), (9, 4, 4, 1), (1, 1, 1, 1), (64, 48, 8, 4)])
def test_matvec_equals_a_times_x(P, Q, rows, cols):
    rng = np.random.default_rng(P * 100 + Q)
    A, x = rng.normal(size=(P, Q)), rng.normal(size=Q)
    y, run = simulate_matvec(A, x, rows, cols, model=CostModel(ts=1, tw=0.1))
    np.testing.assert_allclose(y, A @ x, rtol=1e-12, atol=1e-12)
    assert len(run.results) == rows * cols


@pytest.mark.parametrize("allgather, reduction", [
    (all_to_all_bc_hcube, all_to_all_red_hcube), (all_to_all_bc_ring, all_to_all_red_hcube)])
def test_matvec_with_hypercube_collectives(allgather, reduction):
    rng = np.random.default_rng(7)
    A, x = rng.integers(-9, 9, size=(32, 16)), rng.integers(-9, 9, size=16)
    y, _ = simulate_matvec(A, x, 4, 2, allgather=allgather, reduction=reduction)
    assert np.array_equal(y, A @ x)


def test_the_ring_allgather_takes_any_number_of_rows():
    rng = np.random.default_rng(8)
    A, x = rng.integers(-9, 9, size=(9, 7)), rng.integers(-9, 9, size=7)
    y, _ = simulate_matvec(A, x, 3, 2, allgather=all_to_all_bc_ring)
    assert np.array_equal(y, A @ x)


def test_matvec_time_is_the_sum_of_its_phases():
    """Hypercube collectives, unit steps: log2 rows + log2 cols + 1 shuffle step."""
    A, x = np.ones((16, 16)), np.arange(16.0)
    for rows, cols in ((2, 4), (4, 2), (4, 4), (8, 2)):
        _, run = simulate_matvec(A, x, rows, cols)
        assert run.time == (rows.bit_length() - 1) + (cols.bit_length() - 1) + 1


def test_matvec_layout_puts_x_in_label_order():
    A, x = np.zeros((6, 10)), np.arange(10)
    inputs = matvec_inputs(A, x, 2, 3)
    assert np.array_equal(np.concatenate([piece for _, piece in inputs]), x)
    assert inputs[1][0].shape == (3, 4)          # node 1 = (row 1, column 0)
    assert np.array_equal(matvec_result([np.array([1]), [2, 3]]), [1, 2, 3])
    with pytest.raises(ValueError, match="shape"):
        matvec_inputs(A, np.arange(3), 2, 3)
    with pytest.raises(ValueError, match="rows"):
        matvec_inputs(A, x, 0, 3)
