"""Every broadcast in the catalog at its best k: simulated time next to its closed form.

alpha = 1, beta = 1e-3, p in (16, 64, 256), n in (1e3, 1e5).  Each algorithm runs
under the port model its closed form assumes (the pipelined binary tree of
Lemma 13.2 is half-duplex, the others full-duplex).  The two-tree bound is an
upper bound; the others are exact when k divides n.

    python benchmarks/broadcast_comparison.py
"""
import sys
from pathlib import Path

try:
    import collective_lib  # noqa: F401
except ImportError:                       # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from collective_lib import CostModel, catalog

ALPHA, BETA = 1.0, 1e-3


def rows():
    variants = [(name, {}) for name, e in catalog().items() if e.operation == "broadcast"]
    variants.append(("golden_tree_broadcast", {"shape": "balanced"}))
    for p in (16, 64, 256):
        for n in (1_000, 100_000):
            for name, extra in variants:
                entry = catalog()[name]
                if not entry.valid(p):
                    continue
                model = CostModel(ts=ALPHA, tw=BETA, ports=entry.ports)
                params = dict(extra)
                if entry.optimal_k is not None:
                    params["k"] = entry.optimal_k(p, n, model, **params)
                run = entry.simulate(p, n, model=model, trace=False, **params)
                inputs = entry.make_inputs(p, n, **params)
                assert run.results == entry.expected(inputs, **params), name
                label = name + ("" if not extra else f" ({extra['shape']})")
                formula = entry.predict(p, n, model, **params)
                yield p, n, label, params.get("k", ""), run.time, formula


def main():
    print(f"alpha = {ALPHA:g}, beta = {BETA:g}; times in units of alpha")
    print(f"{'p':>4} {'n':>7}  {'algorithm':<42}{'k':>5}{'simulated':>11}{'formula':>11}")
    for p, n, label, k, simulated, formula in rows():
        print(f"{p:>4} {n:>7}  {label:<42}{k:>5}{simulated:>11.1f}{formula:>11.1f}")


if __name__ == "__main__":
    main()
