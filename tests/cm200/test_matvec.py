"""y = A x on a two-dimensional nodal array (Mathur and Johnsson 1993, §2)."""
import numpy as np
import pytest

from collective_lib.algorithms.alltoall import (all_to_all_bc_hcube, all_to_all_bc_ring,
                                                all_to_all_red_hcube)
from collective_lib.cm200.matvec import (TABLE19_NODES, Table19Point, axis_collective_time,
                                         fit_flop_rate, matvec_comm_time, matvec_inputs,
                                         matvec_result, nodal_array, simulate_matvec,
                                         table19_consistency, table19_points)
from collective_lib.cm200.models import fitted_constants, one_cycle_time
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


# -- Table 19: the CMSSL product measured on the CM-200 (§7, Fig. 23) ------------------------------

def test_table_19_points():
    mv, vm = table19_points("mv"), table19_points("vm")
    assert len(mv) == 15 and len(vm) == 15
    assert mv[0] == Table19Point("mv", 1024, 256, 304.0, 6.9)
    assert max(q.mflops for q in mv) == 10785 and max(q.mflops for q in vm) == 13742
    assert {q.P for q in mv} == {1024, 2048, 4096, 8192, 12288, 16384, 24576}   # P = 512: dashes
    with pytest.raises(ValueError, match="'mm'"):
        table19_points("mm")


def test_every_rate_of_table_19_is_2_p_squared_over_its_time():
    checks = table19_consistency()
    assert len(checks) == 30
    assert sum(c.status == "rounds" for c in checks) == 28
    missing = [(c.point.operation, c.point.P, c.point.nodes, round(c.implied_ms, 1))
               for c in checks if c.status == "no time"]
    assert missing == [("mv", 12288, 512, 108.0), ("mv", 16384, 2048, 54.6)]
    for c in checks:
        if c.status == "rounds":
            assert abs(c.implied_mflops / c.point.mflops - 1) < 0.0011    # within 0.1%
            assert c.implied_mflops == pytest.approx(2 * c.point.P ** 2 / c.point.ms / 1e3)
    worst = max((c for c in checks if c.status == "rounds"),
                key=lambda c: abs(c.implied_mflops / c.point.mflops - 1))
    assert (worst.point.operation, worst.point.P, worst.point.nodes) == ("vm", 1024, 256)
    assert round(worst.implied_mflops, 1) == 344.4 and worst.point.mflops == 344


def test_nodal_array_and_axis_collectives():
    assert [nodal_array(n) for n in TABLE19_NODES] == [(16, 16), (32, 16), (32, 32), (64, 32)]
    with pytest.raises(ValueError, match="power of two"):
        nodal_array(12)
    assert axis_collective_time(0, 8) == (0.0, "none")
    t, name = axis_collective_time(4, 4.0)
    assert name == "one cycle" and t == pytest.approx(float(one_cycle_time(4, 4.0)))
    assert axis_collective_time(9, 256)[1] == "d cycles, indices moved"
    assert matvec_comm_time(8192, 512) == pytest.approx(
        (axis_collective_time(5, 16.0)[0] + axis_collective_time(4, 16.0)[0]) / 1000)


def test_the_fitted_flop_rates_and_the_models_errors():
    """One flop rate per node fitted to Table 19's times, communication from the refitted models."""
    constants = fitted_constants()
    mv, vm = fit_flop_rate("mv", constants), fit_flop_rate("vm", constants)
    assert round(mv.mflops_per_node, 2) == 6.29 and round(vm.mflops_per_node, 2) == 8.66
    assert len(mv.points) == 13 and len(vm.points) == 15
    for fit, worst in ((mv, -19), (vm, -15)):
        errors = fit.relative_errors
        assert round(100 * errors.min()) == worst
        assert (fit.points[int(np.argmin(errors))].P, fit.points[int(np.argmin(errors))].nodes) \
            == (1024, 256)                                    # the smallest problem
        big = np.array([q.P / q.nodes >= 8 and q.P >= 4096 for q in fit.points])
        assert np.abs(errors[big]).max() < 0.08
    assert round(100 * mv.relative_errors.max()) == 6 and round(100 * vm.relative_errors.max()) == 7
    share = mv.comm_ms / mv.measured_ms                       # communication's share of the time
    assert round(100 * share.min()) == 15 and round(100 * share.max()) == 69
    printed = fit_flop_rate("mv")
    assert round(printed.mflops_per_node, 2) == 6.32 and round(100 * printed.relative_errors.min()) == -25
