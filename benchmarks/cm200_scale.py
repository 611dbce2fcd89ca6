"""The CM-200's Hamiltonian-cycle programs on the real machine's 2048 nodes, event by event.

Mathur and Johnsson (1993, §4.1-§4.2) run the all-to-all broadcast and
reduction of the CM-200 along one Hamiltonian cycle of the d-cube or along
d edge-disjoint ones, every link busy at once.  For each program and d this
script runs the catalog program in the event simulator (``trace=False``, on
``Hypercube(d)`` under ``ports="all"``, M' = d random elements per node and
per message), moves the same data with the numpy executor of
``collective_lib.cm200.schedules``, and prints one line: simulated time,
numpy time, closed form, whether the three times and the two results agree,
CPU seconds of the event simulation, operations issued.  The machine itself
is d = 11.  It exits with 1 on any disagreement; it never fails on speed.

    python benchmarks/cm200_scale.py                      # all four at d = 5, 8, 11 (about 12 min)
    python benchmarks/cm200_scale.py --d 3 5 --reduce-max-d 5     # a quick run

``cm200_lines(ds, reduce_max_d)`` returns the lines and the verdict, for
``scale.py`` to print in its own run.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

try:
    import collective_lib  # noqa: F401
except ImportError:                       # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from collective_lib import CostModel, Hypercube, catalog, simulate  # noqa: E402
from collective_lib.cm200.schedules import (execute_d_cycles_broadcast,  # noqa: E402
                                            execute_d_cycles_reduce, execute_one_cycle_broadcast,
                                            execute_one_cycle_reduce)

MODEL = CostModel(ts=1.0, tw=1.0, ports="all")
#: (catalog name, numpy executor, is it a reduction)
PROGRAMS = [("one_cycle_broadcast", execute_one_cycle_broadcast, False),
            ("d_cycles_broadcast", execute_d_cycles_broadcast, False),
            ("one_cycle_reduce", execute_one_cycle_reduce, True),
            ("d_cycles_reduce", execute_d_cycles_reduce, True)]
HEADER = (f"{'program':<20} {'d':>2} {'p':>5} {'simulated':>10} {'numpy':>10} {'formula':>10} "
          f"{'agree':>5} {'CPU s':>8} {'operations':>11}")


def measure(name, executor, reduction, d, seed=0):
    """One line of the table and whether everything agreed."""
    p, m = 1 << d, max(d, 1)
    rng = np.random.default_rng(seed)
    # Small values: Python keeps one object per small int, so p^2 M' inputs stay cheap.
    data = rng.integers(0, 100, size=(p, p, m) if reduction else (p, m))
    inputs = data.tolist()
    entry = catalog()[name]
    start = time.process_time()
    run = simulate(entry.program, p, inputs, network=Hypercube(d), model=MODEL, trace=False)
    cpu = time.process_time() - start
    del inputs
    executed = executor(data)
    formula = entry.predict(p, m, MODEL)
    same_results = all(np.array_equal(np.asarray(got), want)
                       for got, want in zip(run.results, executed.results))
    agree = same_results and run.time == executed.time(MODEL) == formula
    line = (f"{name:<20} {d:>2} {p:>5} {run.time:>10g} {executed.time(MODEL):>10g} "
            f"{formula:>10g} {'yes' if agree else 'NO':>5} {cpu:>8.2f} {run.operations:>11,}")
    return line, agree


def measured_lines(ds=(5, 8, 11), reduce_max_d=11):
    """Yield the header lines, then (line, agreed) for each (program, d) as it is measured;
    reductions only up to ``reduce_max_d`` (at d = 11 their p^2 M' inputs and 46 million
    partial sums take minutes: ``scale.py`` leaves them out)."""
    yield (f"CM-200 cycle programs (Mathur and Johnsson 1993, §4.1-§4.2), event simulator "
           f"(trace off) vs numpy executor vs closed form; ts = 1, tw = 1, M' = d"), True
    yield HEADER, True
    for name, executor, reduction in PROGRAMS:
        for d in ds:
            if not (reduction and d > reduce_max_d):
                yield measure(name, executor, reduction, d)


def cm200_lines(ds=(5, 8, 11), reduce_max_d=11):
    """(lines, ok): the header and one line per (program, d), and whether all agreed."""
    measured = list(measured_lines(ds, reduce_max_d))
    return [line for line, _ in measured], all(agreed for _, agreed in measured)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, nargs="+", default=[5, 8, 11],
                        help="cube dimensions (the CM-200 is d = 11)")
    parser.add_argument("--reduce-max-d", type=int, default=11,
                        help="largest d for the two reductions (default 11)")
    args = parser.parse_args(argv)
    ok = True
    for line, agreed in measured_lines(args.d, args.reduce_max_d):
        print(line, flush=True)
        ok = ok and agreed
    print("PASS  the event simulator, the numpy executors and the closed forms agree" if ok else
          "FAIL  a result or a time differs (see the lines marked NO)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
