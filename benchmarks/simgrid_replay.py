"""The SimGrid half of ``simgrid_compare.py``: replay communication schedules in SimGrid.

Runs under a Python that has SimGrid's ``simgrid`` module (Debian's
``python3-simgrid`` with the system ``/usr/bin/python3``) and needs nothing
else: no ``collective_lib``, no numpy.  ``simgrid_compare.py`` starts it as

    python3 benchmarks/simgrid_replay.py WORKDIR

after writing ``WORKDIR/request.json``::

    {"ts": 10.0, "tw": 2.0, "bytes_per_word": 8, "config": ["network/model:CM02", ...],
     "runs": [{"p": 5, "schedule": [[[sends, recvs], ...] per PE]}, ...]}

where ``sends`` is a list of ``[dst, words]`` and ``recvs`` a list of source
ranks.  Each ``[sends, recvs]`` is one operation of the PE's program, as our
simulator saw it: a ``send`` has one send, a ``recv`` one receive, a
``sendrecv`` one of each, a ``multi`` any number.  The parts of one
operation are posted together (``put_async``/``get_async``) and the PE waits
for all of them before it issues its next operation, which is the meaning of
``sendrecv`` and ``multi``.

The platform (written to ``WORKDIR/platform.xml``) is a flat cluster without
backbone: every host has a private split-duplex link (one link up, one
down) of latency ts / 2 and bandwidth ``bytes_per_word / tw`` bytes per
second, so a message of m words from host a to host b crosses a's up-link
and b's down-link and, alone, takes ts + tw m.  Messages travel through one
mailbox per ordered pair of hosts, so they match in FIFO order per pair, as
in MPI and in our simulator.

All runs share one engine (SimGrid has one per process): each run starts its
actors at the current clock and ends when they all have returned; its time
is the clock's advance.  The answer, ``WORKDIR/result.json``, is
``{"simgrid_version": "3.32.0", "times": [one per run]}``.
"""
import json
import sys
from pathlib import Path

from simgrid import Actor, Comm, Engine, Host, Mailbox, simgrid_version

PLATFORM = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <cluster id="flat" prefix="pe" suffix="" radical="0-{last}" speed="1f"
           bw="{bandwidth!r}Bps" lat="{latency!r}s" sharing_policy="SPLITDUPLEX"/>
</platform>
"""


def write_platform(path, hosts, ts, tw, bytes_per_word):
    """The flat cluster of ``hosts`` hosts: private split-duplex links, latency ts / 2 each."""
    path.write_text(PLATFORM.format(last=hosts - 1, bandwidth=bytes_per_word / tw,
                                    latency=ts / 2), encoding="utf-8")


def replay(run_id, me, operations, bytes_per_word):
    """The actor of PE ``me``: post each operation's parts together, wait for all of them."""
    for sends, recvs in operations:
        comms = [Mailbox.by_name(f"{run_id}:{me}->{dst}").put_async(me, words * bytes_per_word)
                 for dst, words in sends]
        # get_async returns (comm, holder of the payload): the holder must stay
        # alive until the comm is done, or SimGrid writes into freed memory.
        gets = [Mailbox.by_name(f"{run_id}:{src}->{me}").get_async() for src in recvs]
        Comm.wait_all(comms + [comm for comm, _ in gets])


def main(workdir):
    workdir = Path(workdir)
    request = json.loads((workdir / "request.json").read_text(encoding="utf-8"))
    runs = request["runs"]
    platform = workdir / "platform.xml"
    write_platform(platform, max(run["p"] for run in runs), request["ts"], request["tw"],
                   request["bytes_per_word"])
    engine = Engine(["simgrid_replay"] + [f"--cfg={item}" for item in request["config"]]
                    + ["--log=root.thres:warning"])
    engine.load_platform(str(platform))
    times = []
    for run_id, run in enumerate(runs):
        start = engine.clock
        for me, operations in enumerate(run["schedule"]):
            Actor.create(f"pe{me}", Host.by_name(f"pe{me}"), replay, run_id, me, operations,
                         request["bytes_per_word"])
        engine.run()
        times.append(engine.clock - start)
    result = {"simgrid_version": simgrid_version, "times": times}
    (workdir / "result.json").write_text(json.dumps(result), encoding="utf-8")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: simgrid_replay.py WORKDIR (normally started by simgrid_compare.py)")
    main(sys.argv[1])
