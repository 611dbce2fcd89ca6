"""The command line, run on every rank of an MPI job.

    mpiexec -n 4 python -m collective_lib.mpi run all_to_all_bc_ring --words 1024
    mpiexec -n 4 python -m collective_lib.mpi run --all --words 8 --payload list array
    mpiexec -n 2 python -m collective_lib.mpi calibrate --output machine.json

``run`` runs each program (a catalog name, or ``file.py:function`` /
``module:function`` for your own) on random inputs of the catalog's
operation, checks every rank's result against the operation's expected
results (the same ones the simulator is tested against), and times it: the
median over ``--repeats`` runs after ``--warmup`` runs, each run starting
after a barrier and lasting until the slowest rank returns.  The MPI library's
own collective for the same operation is checked and timed the same way,
side by side.  Rank 0 prints a table, or one JSON object per line with
``--json``.
"""
from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import json
import statistics
import sys
from pathlib import Path

from .launcher import available_cores

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m collective_lib.mpi",
                                     description=__doc__.split("\n\n")[2].replace("\n", " "))
    parser.add_argument("--json", action="store_true", help="print JSON lines (rank 0)")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="check and time programs against MPI's collectives")
    run.add_argument("programs", nargs="*", help="catalog names, or FILE.py:FUNC / MODULE:FUNC")
    run.add_argument("--all", action="store_true",
                     help="every catalog algorithm that can run on this many ranks")
    run.add_argument("--words", type=int, nargs="+", default=[1024],
                     help="message sizes m in words (several allowed)")
    run.add_argument("--payload", nargs="+", choices=("array", "list"), default=["array"],
                     help="int64 arrays (raw bytes) or lists of ints (pickled)")
    run.add_argument("--repeats", type=int, default=5)
    run.add_argument("--warmup", type=int, default=1)
    run.add_argument("--root", type=int, help="root rank, for rooted operations")
    run.add_argument("--k", type=int, help="number of packets, for pipelined algorithms")
    run.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                     help="another program parameter (VALUE read as JSON if it can be)")
    run.add_argument("--operation", help="the operation a program of your own implements "
                                         "(broadcast, allgather, ...), to check its results")
    run.add_argument("--timeout", type=float, default=30.0,
                     help="seconds before waiting ranks report a deadlock")
    run.add_argument("--model", help="a calibration file: also print the closed-form prediction")
    run.add_argument("--no-mpi-collective", action="store_true",
                     help="do not time the MPI library's collective")
    run.add_argument("--seed", type=int, default=0)
    cal = commands.add_parser("calibrate", help="fit ts and tw from a ping-pong of ranks 0, 1")
    cal.add_argument("--output", help="write the calibration here (JSON)")
    cal.add_argument("--repeats", type=int, default=5)
    cal.add_argument("--sizes", type=int, nargs="+", help="message sizes in words")
    return parser


# -- programs and parameters -------------------------------------------------------------

def _load_program(spec: str):
    """(name, catalog entry or generator function) for a command-line program spec."""
    from ..catalog import catalog
    entries = catalog()
    if spec in entries:
        return spec, entries[spec]
    if ":" not in spec:
        raise ValueError(f"unknown program {spec!r}: give a catalog name ({', '.join(entries)}) "
                         "or FILE.py:FUNCTION or MODULE:FUNCTION")
    where, function = spec.rsplit(":", 1)
    if where.endswith(".py"):
        path = Path(where)
        if not path.is_file():
            raise ValueError(f"no file {where!r} for program {spec!r}")
        loader = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(loader)
        loader.loader.exec_module(module)
    else:
        module = importlib.import_module(where)
    if not hasattr(module, function):
        raise ValueError(f"{where} has no function {function!r}")
    return spec, getattr(module, function)


def _parse_params(args) -> dict:
    params = {}
    for item in args.param:
        name, sep, text = item.partition("=")
        if not sep or not name:
            raise ValueError(f"--param needs NAME=VALUE, got {item!r}")
        try:
            params[name] = json.loads(text)
        except json.JSONDecodeError:
            params[name] = text
    for name in ("root", "k"):
        if getattr(args, name) is not None:
            params[name] = getattr(args, name)
    return params


def _jobs(args, p: int) -> list:
    """(name, entry-or-function, operation, params) for every program to run.

    Each program gets the given parameters it takes: ``--root`` goes to rooted
    algorithms only, ``--k`` to pipelined ones.
    """
    from ..catalog import Algorithm, catalog
    if not args.programs and not args.all:
        raise ValueError("name at least one program, or give --all")
    chosen = [_load_program(spec) for spec in args.programs]
    if args.all:
        chosen += [(name, entry) for name, entry in catalog().items() if entry.valid(p)]
    given = _parse_params(args)
    jobs = []
    for name, program in chosen:
        if isinstance(program, Algorithm):
            program.valid_p(p)
            params = {key: value for key, value in given.items() if key in program.params}
            jobs.append((name, program, program.operation, params))
        else:
            jobs.append((name, program, args.operation, _accepted(program, given)))
    return jobs


def _accepted(function, given: dict) -> dict:
    """The parameters among ``given`` that ``function`` takes (all if it takes ``**kwargs``)."""
    parameters = inspect.signature(function).parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return dict(given)
    names = {p.name for p in parameters}
    return {key: value for key, value in given.items() if key in names}


# -- timing ---------------------------------------------------------------------------------

def _timed(comm, MPI, once, warmup: int, repeats: int) -> tuple:
    """(first result, median of the max-over-ranks seconds, every such time)."""
    times, first = [], None
    for i in range(warmup + repeats):
        comm.Barrier()
        result, seconds = once()
        if i == 0:
            first = result
        slowest = comm.allreduce(seconds, op=MPI.MAX)
        if i >= warmup:
            times.append(slowest)
    return first, statistics.median(times), times


def _check(comm, got, expected, me: int) -> tuple:
    """(every rank correct?, sorted wrong ranks, one example mismatch text) on every rank."""
    from .backend import plain
    mine = None if expected is None or plain(got) == expected[me] else \
        f"rank {me} returned {_short(plain(got))}, expected {_short(expected[me])}"
    wrong = [(rank, text) for rank, text in enumerate(comm.allgather(mine)) if text]
    return not wrong, [rank for rank, _ in wrong], wrong[0][1] if wrong else None


def _short(value, limit: int = 160) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _one_case(comm, MPI, args, name, program, operation, params, m, payload, mpi_cache):
    from ..catalog import Algorithm
    from ..collectives import add, operations
    from .backend import as_arrays, run_timed
    from .reference import mpi_collective_name, run_mpi_collective
    p, me = comm.Get_size(), comm.Get_rank()
    # cores: what rank 0 may run on; with p > cores the ranks share cores (oversubscribed)
    record = {"record": "run", "algorithm": name, "operation": operation, "p": p, "words": m,
              "cores": available_cores(), "payload": payload,
              "params": {k: v for k, v in params.items() if k != "op"}}
    entry = program if isinstance(program, Algorithm) else None
    refusal = None if entry is None else entry.refusal(p, m, **params)
    if refusal is not None:                   # e.g. m < p for an algorithm that cuts m into p
        return {**record, "skipped": refusal}
    inputs = expected = None
    if operation is not None:
        known = operations()
        if operation not in known:
            raise ValueError(f"unknown operation {operation!r}; choose one of {sorted(known)}")
        all_params = {**(entry.params if entry else {}), **params}
        inputs = known[operation].make_inputs(p, m, _rng(args.seed), **all_params)
        expected = known[operation].expected(inputs, **all_params)
    mine = None if inputs is None else inputs[me]
    data = as_arrays(mine) if payload == "array" else mine
    result, median, times = _timed(
        comm, MPI, lambda: run_timed(program, [data] * p, comm=comm, timeout=args.timeout,
                                     **params),
        args.warmup, args.repeats)
    correct, wrong, example = _check(comm, result, expected, me)
    record.update(correct=correct if expected is not None else None, wrong_ranks=wrong,
                  mismatch=example, time=median, times=times)
    if args.model and entry is not None:
        from .calibrate import load_model
        record["predicted"] = entry.predict(p, m, load_model(args.model, entry.ports), **params)
    all_params = {**(entry.params if entry else {}), **params}
    routine = None if args.no_mpi_collective or operation is None else \
        mpi_collective_name(operation, {**all_params, "op": all_params.get("op", add)})
    record["mpi_collective"] = routine
    if routine is not None:
        # The MPI routine depends only on the data and these two parameters, not on
        # ours (k, root translation, ...): measure it once per job.
        key = (operation, m, routine, all_params.get("root"), all_params.get("exclusive"))
        if key not in mpi_cache:
            array = as_arrays(mine)

            def once():
                start = MPI.Wtime()
                out = run_mpi_collective(operation, array, m, comm=comm, **all_params)
                return out, MPI.Wtime() - start
            got, mpi_median, mpi_times = _timed(comm, MPI, once, args.warmup, args.repeats)
            mpi_cache[key] = {"mpi_time": mpi_median, "mpi_times": mpi_times,
                              "mpi_correct": _check(comm, got, expected, me)[0]}
        record.update(mpi_cache[key])
    return record


def _rng(seed: int):
    import numpy as np
    return np.random.default_rng(seed)


# -- output ----------------------------------------------------------------------------------

def _emit(args, record: dict) -> None:
    if args.json:
        print(json.dumps(record, default=str), flush=True)
    elif record["record"] == "run":
        print(_table_line(record), flush=True)
    elif record["record"] == "calibration":
        print(f"ts = {record['ts']:.3e} s, tw = {record['tw']:.3e} s/word "
              f"({record['word']}; {record['mpi']})"
              + (f"; saved to {record['output']}" if record.get("output") else ""), flush=True)
    else:
        print(f"error: {record['kind']}: {record['message']}", file=sys.stderr, flush=True)


def _table_line(r: dict) -> str:
    if "skipped" in r:
        return f"{r['algorithm']:<32} p={r['p']:<3} m={r['words']:<8} skipped: {r['skipped']}"
    ours = f"{r['time'] * 1e6:10.1f} us"
    check = {True: "ok", False: f"WRONG on ranks {r['wrong_ranks']}", None: "unchecked"}
    mpi = ""
    if r.get("mpi_collective"):
        mpi = f"   {r['mpi_collective']:<24}{r['mpi_time'] * 1e6:10.1f} us"
    predicted = f"   predicted {r['predicted'] * 1e6:10.1f} us" if "predicted" in r else ""
    return (f"{r['algorithm']:<32} p={r['p']:<3} m={r['words']:<8} {r['payload']:<5} "
            f"{ours} {check[r['correct']]}{mpi}{predicted}")


def _error_record(exc: BaseException, rank: int) -> dict:
    from ..errors import UnreceivedMessageError
    from .backend import MPIDeadlockError
    record = {"record": "error", "kind": type(exc).__name__, "message": str(exc), "rank": rank}
    if isinstance(exc, MPIDeadlockError):
        record.update(blocked=exc.blocked, timeout=exc.timeout, returned=exc.returned,
                      silent=exc.silent)
    elif isinstance(exc, UnreceivedMessageError):
        record["unreceived"] = [[s, d, n] for (s, d), n in sorted(exc.unreceived.items())]
    return record


# -- commands --------------------------------------------------------------------------------

def _run_command(args, comm, MPI) -> int:
    jobs = _jobs(args, comm.Get_size())
    all_correct, mpi_cache = True, {}
    for name, program, operation, params in jobs:
        for payload in args.payload:
            for m in args.words:
                record = _one_case(comm, MPI, args, name, program, operation, params, m,
                                   payload, mpi_cache)
                all_correct &= record.get("correct") is not False
                if comm.Get_rank() == 0:
                    _emit(args, record)
    return 0 if all_correct else 1


def _calibrate_command(args, comm, MPI) -> int:
    from .calibrate import DEFAULT_SIZES, calibrate, save_calibration
    record = calibrate(tuple(args.sizes) if args.sizes else DEFAULT_SIZES,
                       repeats=args.repeats, comm=comm)
    record = {"record": "calibration", **record, "output": args.output}
    if comm.Get_rank() == 0:
        if args.output:
            save_calibration({k: v for k, v in record.items() if k not in ("record", "output")},
                             args.output)
        _emit(args, record)
    return 0


def main(argv=None) -> int:
    """Entry point of ``python -m collective_lib.mpi``; returns the exit code."""
    args = _parser().parse_args(argv)
    from .backend import MPINotAvailableError, mpi
    try:
        MPI = mpi()
    except MPINotAvailableError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 3
    from ..errors import UnreceivedMessageError
    from .backend import MPIDeadlockError
    comm = MPI.COMM_WORLD
    command = {"run": _run_command, "calibrate": _calibrate_command}[args.command]
    try:
        for name in ("repeats", "words", "sizes"):
            values = getattr(args, name, None)
            for value in values if isinstance(values, list) else [values]:
                if value is not None and value < (0 if name == "words" else 1):
                    raise ValueError(f"--{name} must be positive, got {value}")
        if getattr(args, "warmup", 0) < 0:
            raise ValueError(f"--warmup must be >= 0, got {args.warmup}")
        return command(args, comm, MPI)
    except (MPIDeadlockError, UnreceivedMessageError, ValueError) as exc:
        # Raised alike on every rank (reports are shared, checks come before any
        # message), so rank 0 speaks for all and every rank exits normally.
        if comm.Get_rank() == 0:
            _emit(args, _error_record(exc, 0))
        return 2
    except Exception as exc:            # one rank failed: report it and stop the whole job
        _emit(args, _error_record(exc, comm.Get_rank()))
        sys.stdout.flush()
        comm.Abort(1)
        return 1
