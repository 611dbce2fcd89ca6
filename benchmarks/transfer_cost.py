"""What one transfer costs: the multi-port path (``multi``) next to ``sendrecv``.

The CM-200's two all-to-all broadcasts (Mathur and Johnsson 1993, §4.1-§4.2)
move the same data on ``Hypercube(d)`` under ``ports="all"``: the one-cycle
program with one ``sendrecv`` per PE and step, the d-cycles program with one
``multi()`` of d sends and d receives.  For each d this script times, per
transfer (CPU time, best of ``--repeat`` interleaved runs):

* the programs alone: the same generators driven in lock step by a loop that
  only hands each step's messages over (a dict per step), the floor of any
  simulator that runs them;
* ``simulate`` (``trace=False``);
* the difference, the simulator's own cost per transfer, and its ratio
  d-cycles / one-cycle (issue 14's goal: the multi-port path as fast as
  ``sendrecv``, a ratio of 1).

Every figure is measured in a process of its own, the four of a round taking
turns: at d >= 9 a run's time depends on the heap it starts in, and in one
process each run would inherit the heap the run before it left behind.  Both
drivers must return the same results.  It exits with 1 if they do not; never
on speed.

    python benchmarks/transfer_cost.py                 # d = 8, 9, 10 (about 2 min)
    python benchmarks/transfer_cost.py --d 5 --repeat 1     # a quick run
"""
from __future__ import annotations

import argparse
import gc
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

try:
    import collective_lib  # noqa: F401
except ImportError:                       # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from collective_lib import CostModel, Hypercube, catalog, simulate  # noqa: E402
from collective_lib.ops import SendRecv  # noqa: E402

MODEL = CostModel(ts=1.0, tw=1.0, ports="all")
PROGRAMS = ("one_cycle_broadcast", "d_cycles_broadcast")


def lock_step(program, p, inputs):
    """(results, transfers): run the PEs step by step, handing over each step's messages.

    Every PE issues one operation per step (these programs are in lock step),
    so a dict keyed by channel is all the matching they need.
    """
    gens = [program(me, p, inputs[me]) for me in range(p)]
    ops = [gen.send(None) for gen in gens]
    results, transfers = [None] * p, 0
    while any(op is not None for op in ops):
        sent = {}
        for me, op in enumerate(ops):
            if type(op) is SendRecv:
                sent[me * p + op.dst] = op.data
            elif op is not None:
                for dst, data, _ in op.sends:
                    sent[me * p + dst] = data
        transfers += len(sent)
        for me, op in enumerate(ops):
            if op is None:
                continue
            got = sent[op.src * p + me] if type(op) is SendRecv else \
                [sent[src * p + me] for src in op.recvs]
            try:
                ops[me] = gens[me].send(got)
            except StopIteration as stop:
                ops[me], results[me] = None, stop.value
    return results, transfers


def _cpu(fn):
    """(CPU seconds, outcome) of fn(), the collector off as in ``simulate``."""
    gc.collect()
    gc.disable()
    try:
        start = time.process_time()
        outcome = fn()
        return time.process_time() - start, outcome
    finally:
        gc.enable()


def run_once(driver, name, d):
    """{"seconds", "transfers", "digest"} of one run of ``name`` on d-cube by ``driver``.

    ``driver`` is "alone" (:func:`lock_step`) or "simulate"; the digest of the
    results lets runs in different processes be compared.
    """
    p = 1 << d
    inputs = [[float(me * d + k) for k in range(d)] for me in range(p)]
    program = catalog()[name].program
    if driver == "alone":
        seconds, (results, transfers) = _cpu(lambda: lock_step(program, p, inputs))
    else:
        seconds, run = _cpu(lambda: simulate(program, p, inputs, network=Hypercube(d),
                                             model=MODEL, trace=False))
        results, transfers = run.results, sum(run.link_load.values())
    digest = hashlib.sha256(repr(results).encode()).hexdigest()
    return {"seconds": seconds, "transfers": transfers, "digest": digest}


def _in_new_process(driver, name, d):
    """run_once(driver, name, d) in a fresh Python process."""
    done = subprocess.run([sys.executable, __file__, "--child", driver, name, str(d)],
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"the {driver} run of {name} at d = {d} failed:\n{done.stderr}")
    return json.loads(done.stdout)


def measure(d, repeat):
    """{program: (ns per transfer alone, ns per transfer in simulate, transfers)}, and whether
    the two drivers agree (same results, same number of transfers)."""
    best, agree = {}, True
    for _ in range(repeat):
        for name in PROGRAMS:
            alone, simulated = (_in_new_process(driver, name, d)
                                for driver in ("alone", "simulate"))
            agree &= alone["digest"] == simulated["digest"] and \
                alone["transfers"] == simulated["transfers"]
            transfers = alone["transfers"]
            old = best.get(name, (float("inf"), float("inf"), transfers))
            best[name] = (min(old[0], alone["seconds"] / transfers * 1e9),
                          min(old[1], simulated["seconds"] / transfers * 1e9), transfers)
    return best, agree


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--d", type=int, nargs="+", default=[8, 9, 10],
                        help="cube dimensions (default 8 9 10)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per figure, best counts")
    parser.add_argument("--child", nargs=3, metavar=("DRIVER", "PROGRAM", "D"),
                        help=argparse.SUPPRESS)          # one run, for measure()
    args = parser.parse_args(argv)
    if args.child:
        driver, name, d = args.child
        print(json.dumps(run_once(driver, name, int(d))))
        return 0
    print("CM-200 all-to-all broadcasts on Hypercube(d), ports='all', trace off: "
          f"ns of CPU per transfer, best of {args.repeat} interleaved runs, each in a new process")
    print(f"{'d':>3} {'program':<20} {'transfers':>11} {'alone':>7} {'simulate':>9} "
          f"{'own':>6} {'own, multi / sendrecv':>22}")
    agree = True
    for d in args.d:
        best, same = measure(d, args.repeat)
        agree &= same
        own = {name: best[name][1] - best[name][0] for name in PROGRAMS}
        for name in PROGRAMS:
            alone, simulated, transfers = best[name]
            ratio = f"{own[name] / own[PROGRAMS[0]]:.2f}" if name == PROGRAMS[1] else ""
            print(f"{d:>3} {name:<20} {transfers:>11,} {alone:>7.0f} {simulated:>9.0f} "
                  f"{own[name]:>6.0f} {ratio:>22}")
    print(f"{'PASS' if agree else 'FAIL'}  simulate and the lock-step loop return the same "
          "results and move the same number of transfers")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
