"""Ring all-gather on p PEs: our event simulator against the same program in SimPy.

Every PE passes its own message around the ring: p - 1 steps of
``sendrecv(right, msg, left)`` (Grama et al. 2003, Algorithm 4.4), so p = 1024
PEs move p(p - 1) = 1,047,552 messages.  Both versions use the same machine:
ts = 1, tw = 0, full-duplex ports, eager sends.  Both must return the same
lists on every PE and the same makespan, p - 1.

Targets: our ``simulate`` (``trace=False``, best of 3 runs) takes at most
3 s at p = 1024 and is at least 5 times faster than SimPy.  The script prints
PASS or FAIL for each and exits with status 1 on a FAIL.

    python benchmarks/ring_allgather.py            # p = 1024
    python benchmarks/ring_allgather.py --p 128    # a quick run
"""
from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

try:
    import collective_lib  # noqa: F401
except ImportError:                       # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import simpy

from collective_lib import CostModel, sendrecv, simulate

TIME_LIMIT = 3.0          # seconds for our simulator at p = 1024
MIN_SPEEDUP = 5.0         # SimPy time / our time


# -- the algorithm, as the book writes it ----------------------------------------------------

def ring_allgather(me, p, my_msg):
    """All-to-all broadcast on a ring (Grama et al. 2003, Algorithm 4.4)."""
    left, right = (me - 1) % p, (me + 1) % p
    result, msg = [my_msg], my_msg
    for _ in range(p - 1):
        msg = yield sendrecv(right, msg, left)     # pass on what came in last step
        result.append(msg)
    return result


def expected_results(p):
    """PE i ends with its own message, then those of i-1, i-2, ... around the ring."""
    return [[(i - j) % p for j in range(p)] for i in range(p)]


def run_ours(p, ts=1.0, tw=0.0):
    """(results, makespan, messages) from our simulator, without a trace."""
    run = simulate(ring_allgather, p, list(range(p)), trace=False,
                   model=CostModel(ts=ts, tw=tw, ports="full-duplex"))
    return run.results, run.time, sum(run.link_load.values())


# -- the same algorithm in SimPy -----------------------------------------------------------

def run_simpy(p, ts=1.0, tw=0.0):
    """(results, makespan, messages) from the same ring all-gather written for SimPy.

    One process per PE and one Store per PE, its inbox for the channel from its
    left neighbour.  A send is eager: the sender spends ts + tw * words on the
    transfer and then drops the message into the receiver's inbox, whether or
    not the receiver is waiting.  With full-duplex ports the receive overlaps
    the send, so a step costs one transfer time.  In a ring every port has one
    user only, so ports need no explicit resource here.
    """
    env = simpy.Environment()
    inbox = [simpy.Store(env) for _ in range(p)]
    results = [None] * p
    sent = [0]
    duration = ts + tw * 1                     # every message is one word

    def pe(me):
        right = (me + 1) % p
        msg, result = me, [me]
        for _ in range(p - 1):
            yield env.timeout(duration)        # my outgoing transfer
            inbox[right].put(msg)
            sent[0] += 1
            msg = yield inbox[me].get()        # arrived from the left meanwhile
            result.append(msg)
        results[me] = result

    for me in range(p):
        env.process(pe(me))
    env.run()
    return results, env.now, sent[0]


# -- timing --------------------------------------------------------------------------------

def best_time(fn, p, repeat):
    """Run fn(p) ``repeat`` times; return (fastest wall time, its CPU time, last outcome)."""
    best, cpu, outcome = float("inf"), None, None
    for _ in range(repeat):
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        outcome = fn(p)
        wall = time.perf_counter() - start
        if wall < best:
            best, cpu = wall, time.process_time() - start_cpu
    return best, cpu, outcome


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--p", type=int, default=1024, help="number of PEs (default 1024)")
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs of our simulator; the best counts (default 3)")
    parser.add_argument("--simpy-repeat", type=int, default=1,
                        help="runs of the SimPy version; the best counts (default 1)")
    args = parser.parse_args(argv)
    if args.p < 2:
        parser.error("--p must be at least 2")
    p = args.p

    ours_s, ours_cpu, (ours_res, ours_make, ours_msgs) = best_time(run_ours, p, args.repeat)
    simpy_s, simpy_cpu, (simpy_res, simpy_make, simpy_msgs) = \
        best_time(run_simpy, p, args.simpy_repeat)
    want = expected_results(p)
    ratio = simpy_s / ours_s

    print(f"ring all-gather, p = {p}, ts = 1, tw = 0, full-duplex, eager sends")
    print(f"{'':24}{'ours':>14}{'SimPy':>14}")
    print(f"{'wall time [s]':24}{ours_s:>14.3f}{simpy_s:>14.3f}"
          f"   (best of {args.repeat} / {args.simpy_repeat})")
    busy = ours_cpu < 0.9 * ours_s or simpy_cpu < 0.9 * simpy_s
    print(f"{'CPU time of that run [s]':24}{ours_cpu:>14.3f}{simpy_cpu:>14.3f}"
          + ("   (below the wall time: other processes shared the CPU)" if busy else ""))
    print(f"{'messages':24}{ours_msgs:>14,}{simpy_msgs:>14,}")
    print(f"{'simulated makespan':24}{ours_make:>14g}{simpy_make:>14g}")
    print(f"{'SimPy time / ours':24}{ratio:>14.1f}")

    checks = [
        ("results agree (every PE, both)", ours_res == want and simpy_res == want),
        (f"makespan = p - 1 = {p - 1} (both)", ours_make == p - 1 == simpy_make),
        (f"messages = p(p-1) = {p * (p - 1):,} (both)", ours_msgs == p * (p - 1) == simpy_msgs),
        (f"ours <= {TIME_LIMIT:g} s", ours_s <= TIME_LIMIT),
        (f"ours >= {MIN_SPEEDUP:g}x faster than SimPy", ratio >= MIN_SPEEDUP),
    ]
    for label, ok in checks:
        print(f"{'PASS' if ok else 'FAIL'}  {label}")
    return 0 if all(ok for _, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
