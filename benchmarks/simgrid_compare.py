"""Our simulator next to SimGrid: the same programs, two network models, both columns printed.

SimGrid (Casanova et al., "Versatile, scalable, and accurate simulation of
distributed applications and platforms", JPDC 2014) is a flow-level simulator:
a message is a flow that first waits out the latency of its route and then
shares the bandwidth of every link it crosses with the other flows there.
With its CM02 model (Casanova and Marchal 2002, no correction factors),
``network/TCP-gamma:0`` (no TCP window bound on a flow's rate) and
``network/crosstraffic:0`` (a flow loads only its own direction), on a flat
cluster whose hosts have private split-duplex links of latency ts / 2 and a
bandwidth at which m words (8 bytes each) take tw m, a lone message costs
ts + tw m, exactly our ``CostModel(ts, tw)``.

The matched comparison runs three catalog programs (the ring all-gather,
Grama Alg. 4.4; the binomial broadcast, Sanders §13.1.1; the naive gather,
Sanders §13.5.1) for p in {2, 5, 8} and m in {1, 100, 10000} words: our time
from ``simulate`` on ``FullyConnected(p)`` with full-duplex ports, SimGrid's
from the same program replayed there, and whether they agree (relative
difference < 1e-9).  SimGrid replays what our run recorded: every PE's
sequence of operations, each operation's parts posted together
(``benchmarks/simgrid_replay.py``, which runs under the Python that has
SimGrid, normally Debian's ``python3-simgrid`` with ``/usr/bin/python3``).

A second table shows where the models differ on purpose: a root that posts
its p - 1 receives of a naive gather at once.  SimGrid shares the root's
down-link fluidly among the p - 1 flows, whose latencies overlap, so the
gather takes ts + (p - 1) tw m; our one-port model moves one message at a
time through the root's receiving port, (p - 1)(ts + tw m); with
``ports="all"`` every pair has a link of its own and nothing is shared,
ts + tw m.

    python benchmarks/simgrid_compare.py                   # 27 points; writes simgrid_results.json
    python benchmarks/simgrid_compare.py --p 2 5 --m 1 100 --results /tmp/r.json

Without SimGrid it says so and exits with 0.  It exits with 1 if a matched
point disagrees.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import collective_lib  # noqa: F401
except ImportError:                       # run from a checkout without installing
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from collective_lib import CostModel, FullyConnected, catalog, multi, send, simulate
from collective_lib.ops import Multi, Recv, Send, SendRecv, relay

BENCHMARKS = Path(__file__).resolve().parent
REPLAY_SCRIPT = BENCHMARKS / "simgrid_replay.py"
RESULTS_FILE = BENCHMARKS / "simgrid_results.json"

TS, TW = 10.0, 2.0                         # the model of chapter 0, §0.2
BYTES_PER_WORD = 8
P_VALUES = (2, 5, 8)
M_VALUES = (1, 100, 10_000)
PROGRAMS = ("all_to_all_bc_ring", "binomial_broadcast", "naive_gather")
TOLERANCE = 1e-9                           # relative difference counted as agreement
SIMGRID_CONFIG = ("network/model:CM02", "network/TCP-gamma:0", "network/crosstraffic:0")
PYTHON_CANDIDATES = ("/usr/bin/python3",)
NOT_FOUND = "SimGrid not found; install python3-simgrid (Debian) to run this comparison"
SIMGRID_TIMEOUT = 600                      # seconds for the SimGrid half


def naive_gather_at_once(me, p, data, root=0):
    """The catalog's naive gather, except that the root posts its p - 1 receives at once.

    One ``multi`` operation holds every receive, so in SimGrid all p - 1 flows
    run together; in our simulator the root's port still takes them one by one.
    """
    if me != root:
        yield send(root, data)
        return None
    senders = [(root + i) % p for i in range(1, p)]
    gathered = [None] * p
    gathered[root] = data
    for sender, message in zip(senders, (yield multi(recvs=senders))):
        gathered[sender] = message
    return gathered


#: Programs of this script, with the catalog entry whose inputs and parameters they take.
OWN_PROGRAMS = {"naive_gather_at_once": (naive_gather_at_once, "naive_gather")}

#: The second table: per way of receiving, the program and the formula each column follows.
DIFFER_CASES = {
    "in turn": "naive_gather",
    "at once": "naive_gather_at_once",
}
DIFFER_FORMULAS = {
    ("simgrid", "in turn"): ("(p-1)(ts + tw m)", lambda p, m, ts, tw: (p - 1) * (ts + tw * m)),
    ("simgrid", "at once"): ("ts + (p-1) tw m", lambda p, m, ts, tw: ts + (p - 1) * tw * m),
    ("ours_full_duplex", "in turn"): ("(p-1)(ts + tw m)",
                                      lambda p, m, ts, tw: (p - 1) * (ts + tw * m)),
    ("ours_full_duplex", "at once"): ("(p-1)(ts + tw m)",
                                      lambda p, m, ts, tw: (p - 1) * (ts + tw * m)),
    ("ours_all", "in turn"): ("ts + tw m", lambda p, m, ts, tw: ts + tw * m),
    ("ours_all", "at once"): ("ts + tw m", lambda p, m, ts, tw: ts + tw * m),
}
DIFFER_COLUMNS = {"simgrid": "SimGrid CM02", "ours_full_duplex": "ours full-duplex",
                  "ours_all": 'ours ports="all"'}


# -- the pure parts: the grid, our column, the schedules --------------------------------------

def point_grid(programs=PROGRAMS, ps=P_VALUES, ms=M_VALUES) -> list:
    """Every (program, p, m) of the matched comparison, program by program."""
    return [(name, p, m) for name in programs for p in ps for m in ms]


def differ_grid(ps=P_VALUES, ms=M_VALUES) -> list:
    """The (p, m) of the second table; p = 2 is left out (one message: every model agrees)."""
    return [(p, m) for p in ps if p > 2 for m in ms]


def _logged(program, log):
    """``program`` wrapped so that ``log[me]`` lists the operations PE ``me`` issued."""
    def logged(me, p, data, **params):
        issued = log[me] = []

        def record(op):
            issued.append(op)
            return op
        return (yield from relay(program(me, p, data, **params), record))
    return logged


def schedule_entry(op) -> list:
    """One operation as ``[sends, recvs]`` for the replay: ``sends`` lists [dst, words]."""
    if isinstance(op, Send):
        return [[[op.dst, op.words]], []]
    if isinstance(op, Recv):
        return [[], [op.src]]
    if isinstance(op, SendRecv):
        return [[[op.dst, op.words]], [op.src]]
    if isinstance(op, Multi):
        return [[[dst, words] for dst, _, words in op.sends], list(op.recvs)]
    raise ValueError(f"{op!r} has no counterpart in the SimGrid replay (only send, recv, "
                     "sendrecv, exchange and multi)")


def our_run(name, p, m, *, ports="full-duplex", ts=TS, tw=TW) -> tuple:
    """(time, schedule) of program ``name`` on FullyConnected(p) under CostModel(ts, tw, ports).

    ``name`` is a catalog entry or one of :data:`OWN_PROGRAMS`; the inputs are
    the catalog's random m-word inputs (seed 0), the parameters its defaults.
    The schedule lists, per PE, its operations as :func:`schedule_entry` writes them.
    """
    program, entry_name = OWN_PROGRAMS.get(name, (None, name))
    entry = catalog()[entry_name]
    log = {}
    run = simulate(_logged(program or entry.program, log), p, entry.make_inputs(p, m),
                   network=FullyConnected(p), model=CostModel(ts=ts, tw=tw, ports=ports),
                   trace=False, **entry.params)
    return run.time, [[schedule_entry(op) for op in log.get(pe, [])] for pe in range(p)]


def relative_difference(a, b) -> float:
    """|a - b| relative to the larger of the two (0 when both are 0)."""
    scale = max(abs(a), abs(b))
    return abs(a - b) / scale if scale else 0.0


# -- the SimGrid half --------------------------------------------------------------------------

def can_import_simgrid(python) -> bool:
    """Whether ``python`` exists and imports SimGrid's ``simgrid`` module."""
    try:
        probe = subprocess.run([str(python), "-c", "import simgrid"], stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=60)
    except OSError:
        return False
    return probe.returncode == 0


def find_simgrid_python(candidates=PYTHON_CANDIDATES):
    """The first of ``candidates`` that imports simgrid, or None."""
    return next((python for python in candidates if can_import_simgrid(python)), None)


def run_simgrid(python, runs, ts=TS, tw=TW, config=SIMGRID_CONFIG) -> tuple:
    """(SimGrid version, one time per run) for ``runs``, a list of (p, schedule).

    ``config`` lists SimGrid settings (``--cfg=`` items), later ones winning.
    """
    request = {"ts": ts, "tw": tw, "bytes_per_word": BYTES_PER_WORD, "config": list(config),
               "runs": [{"p": p, "schedule": schedule} for p, schedule in runs]}
    with tempfile.TemporaryDirectory(prefix="simgrid_compare_") as workdir:
        work = Path(workdir)
        (work / "request.json").write_text(json.dumps(request), encoding="utf-8")
        done = subprocess.run([str(python), str(REPLAY_SCRIPT), workdir], stdin=subprocess.DEVNULL,
                              capture_output=True, text=True, timeout=SIMGRID_TIMEOUT)
        if done.returncode != 0:
            raise RuntimeError(f"the SimGrid half ({python} {REPLAY_SCRIPT.name}) failed with exit "
                               f"status {done.returncode}:\n{done.stderr[-3000:]}")
        answer = json.loads((work / "result.json").read_text(encoding="utf-8"))
    return answer["simgrid_version"], answer["times"]


def measure(python, points, differ_points, ts=TS, tw=TW, config=SIMGRID_CONFIG) -> dict:
    """Run both simulators on every point; the results as :func:`main` stores them."""
    matched = [(name, p, m, *our_run(name, p, m, ts=ts, tw=tw)) for name, p, m in points]
    differ = []
    for p, m in differ_points:
        for receives, name in DIFFER_CASES.items():
            full, schedule = our_run(name, p, m, ports="full-duplex", ts=ts, tw=tw)
            every, _ = our_run(name, p, m, ports="all", ts=ts, tw=tw)
            differ.append((p, m, receives, full, every, schedule))
    version, times = run_simgrid(python, [(p, sched) for _, p, _, _, sched in matched]
                                 + [(p, sched) for p, _, _, _, _, sched in differ], ts, tw,
                                 config)
    rows = [{"program": name, "p": p, "m": m, "ours": ours, "simgrid": theirs,
             "agree": relative_difference(ours, theirs) < TOLERANCE}
            for (name, p, m, ours, _), theirs in zip(matched, times)]
    differ_rows = [{"p": p, "m": m, "receives": receives, "simgrid": theirs,
                    "ours_full_duplex": full, "ours_all": every}
                   for (p, m, receives, full, every, _), theirs in zip(differ, times[len(rows):])]
    return {"about": "written by benchmarks/simgrid_compare.py: our simulator (FullyConnected, "
                     "full-duplex unless stated) next to SimGrid on a flat split-duplex cluster",
            "simgrid_version": version, "config": list(config), "ts": ts, "tw": tw,
            "bytes_per_word": BYTES_PER_WORD, "tolerance": TOLERANCE,
            "points": rows, "differ": differ_rows}


# -- printing ----------------------------------------------------------------------------------

def matched_table(results) -> list:
    """The lines of the matched table and its verdict."""
    rows = results["points"]
    lines = [f"the matched model: SimGrid {results['simgrid_version']} with "
             f"{', '.join(results['config'])}; ts = {results['ts']:g}, tw = {results['tw']:g}, "
             f"{results['bytes_per_word']} bytes per word",
             f"{'program':<20}{'p':>3}{'m':>7}{'ours':>12}{'SimGrid':>12}{'rel. diff':>11}  agree"]
    for row in rows:
        lines.append(f"{row['program']:<20}{row['p']:>3}{row['m']:>7}{row['ours']:>12g}"
                     f"{row['simgrid']:>12g}"
                     f"{relative_difference(row['ours'], row['simgrid']):>11.1e}  "
                     f"{'yes' if row['agree'] else 'NO'}")
    agreed = sum(row["agree"] for row in rows)
    verdict = "PASS" if agreed == len(rows) else "FAIL"
    lines.append(f"{verdict}  {agreed} of {len(rows)} points agree (relative difference "
                 f"< {results['tolerance']:g})")
    return lines


def differ_table(results) -> list:
    """The lines of the table where the models differ, each value checked against its formula."""
    ts, tw = results["ts"], results["tw"]
    lines = ["where the models differ: a naive gather whose root receives in turn (the catalog's "
             "naive_gather) or posts its p - 1 receives at once (one multi)",
             f"{'receives':<9}{'p':>3}{'m':>7}"
             + "".join(f"{title:>19}" for title in DIFFER_COLUMNS.values())]
    wrong = []
    for row in results["differ"]:
        cells = []
        for column in DIFFER_COLUMNS:
            value = row[column]
            formula, expected = DIFFER_FORMULAS[column, row["receives"]]
            if relative_difference(value, expected(row["p"], row["m"], ts, tw)) >= TOLERANCE:
                wrong.append(f"{DIFFER_COLUMNS[column]}, {row['receives']}, p = {row['p']}, "
                             f"m = {row['m']}: {value:g}, not {formula}")
            cells.append(f"{value:>19g}")
        lines.append(f"{row['receives']:<9}{row['p']:>3}{row['m']:>7}" + "".join(cells))
    for receives in DIFFER_CASES:
        lines.append(f"formulas, {receives}:".ljust(21) + "".join(
            f"{DIFFER_FORMULAS[column, receives][0]:>19}" for column in DIFFER_COLUMNS))
    lines.append("every value above follows its formula" if not wrong
                 else "values that do not follow their formula:\n  " + "\n  ".join(wrong))
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--simgrid-python", help="a Python that imports simgrid (default: the "
                        f"first of {', '.join(PYTHON_CANDIDATES)} that does)")
    parser.add_argument("--p", type=int, nargs="+", default=list(P_VALUES))
    parser.add_argument("--m", type=int, nargs="+", default=list(M_VALUES))
    parser.add_argument("--ts", type=float, default=TS)
    parser.add_argument("--tw", type=float, default=TW)
    parser.add_argument("--cfg", action="append", default=[], metavar="ITEM",
                        help="one more SimGrid setting after the matched ones, e.g. "
                        "network/crosstraffic:1 (repeatable)")
    parser.add_argument("--results", type=Path, default=RESULTS_FILE,
                        help=f"where to store the results (default {RESULTS_FILE.name} here)")
    args = parser.parse_args(argv)
    tried = [args.simgrid_python] if args.simgrid_python else list(PYTHON_CANDIDATES)
    python = find_simgrid_python(tried)
    if python is None:
        print(NOT_FOUND)
        print(f"(no simgrid module in: {', '.join(tried)}; another Python: --simgrid-python)")
        return 0
    results = measure(python, point_grid(PROGRAMS, args.p, args.m), differ_grid(args.p, args.m),
                      args.ts, args.tw, SIMGRID_CONFIG + tuple(args.cfg))
    print("\n".join(matched_table(results)))
    print()
    print("\n".join(differ_table(results)))
    args.results.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(f"\nresults stored in {args.results}")
    return 0 if all(row["agree"] for row in results["points"]) else 1


if __name__ == "__main__":
    sys.exit(main())
