"""The SimGrid comparison: its pure parts always, a tiny run where SimGrid is installed."""
import json
import sys

import pytest

from collective_lib import compute, exchange, multi, recv, send, sendrecv

BENCHMARK = "simgrid_compare"   # benchmarks/simgrid_compare.py, loaded by the bench fixture


@pytest.fixture(scope="module")
def stored(bench):
    return json.loads(bench.RESULTS_FILE.read_text(encoding="utf-8"))


def test_the_grid_has_every_program_p_and_m(bench):
    grid = bench.point_grid()
    assert len(grid) == 27 == len(set(grid))
    assert {name for name, _, _ in grid} == set(bench.PROGRAMS)
    assert grid[0] == ("all_to_all_bc_ring", 2, 1) and grid[-1] == ("naive_gather", 8, 10_000)
    assert bench.differ_grid() == [(p, m) for p in (5, 8) for m in (1, 100, 10_000)]


def test_operations_become_replay_entries(bench):
    entry = bench.schedule_entry
    assert entry(send(3, [1, 2])) == [[[3, 2]], []]
    assert entry(recv(4)) == [[], [4]]
    assert entry(sendrecv(1, 7, 2)) == [[[1, 1]], [2]]
    assert entry(exchange(5, "ab", words=9)) == [[[5, 9]], [5]]
    assert entry(multi(sends=[(1, [0] * 3), (2, 0)], recvs=[3, 4])) == [[[1, 3], [2, 1]], [3, 4]]
    with pytest.raises(ValueError, match="no counterpart in the SimGrid replay"):
        entry(compute(1.0))


def test_our_run_records_every_operation(bench):
    time, schedule = bench.our_run("all_to_all_bc_ring", 4, 3)
    assert time == 3 * (bench.TS + bench.TW * 3)
    assert schedule == [[[[[(me + 1) % 4, 3]], [(me - 1) % 4]]] * 3 for me in range(4)]
    time, schedule = bench.our_run("naive_gather_at_once", 4, 2, ports="all")
    assert time == bench.TS + bench.TW * 2
    assert schedule[0] == [[[], [1, 2, 3]]] and schedule[3] == [[[[0, 2]], []]]


def test_the_stored_ours_column_is_what_the_simulator_gives_today(bench, stored):
    ts, tw = stored["ts"], stored["tw"]
    assert {(r["program"], r["p"], r["m"]) for r in stored["points"]} == set(bench.point_grid())
    for row in stored["points"]:
        assert bench.our_run(row["program"], row["p"], row["m"], ts=ts, tw=tw)[0] == row["ours"]
        assert row["agree"], row
    for row in stored["differ"]:
        name = bench.DIFFER_CASES[row["receives"]]
        for column, ports in (("ours_full_duplex", "full-duplex"), ("ours_all", "all")):
            ours = bench.our_run(name, row["p"], row["m"], ports=ports, ts=ts, tw=tw)[0]
            assert ours == row[column], (row, column)


def test_the_stored_gather_at_once_differs_by_p_minus_2_start_ups_for_every_m(stored):
    # Chapter 0: SimGrid pays the start-up once, our one-port model once per message.
    at_once = [row for row in stored["differ"] if row["receives"] == "at once"]
    assert {row["m"] for row in at_once} == {1, 100, 10_000}
    for row in at_once:
        assert row["ours_full_duplex"] - row["simgrid"] == (row["p"] - 2) * stored["ts"], row


@pytest.mark.parametrize("python", ["/nonexistent/python3", sys.executable])
def test_without_simgrid_it_says_so_and_exits_0(bench, python, tmp_path, capsys):
    if bench.can_import_simgrid(python):
        pytest.skip(f"{python} imports simgrid")
    results = tmp_path / "results.json"
    assert bench.main(["--simgrid-python", python, "--results", str(results)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == bench.NOT_FOUND
    assert python in out and not results.exists()


def test_a_tiny_comparison_agrees_where_simgrid_is_installed(bench, tmp_path, capsys):
    python = bench.find_simgrid_python()
    if python is None:
        pytest.skip(bench.NOT_FOUND)
    results = tmp_path / "results.json"
    assert bench.main(["--p", "2", "5", "--m", "1", "100", "--results", str(results)]) == 0
    out = capsys.readouterr().out
    assert "PASS  12 of 12 points agree" in out
    assert "every value above follows its formula" in out
    written = json.loads(results.read_text(encoding="utf-8"))
    assert len(written["points"]) == 12 and all(row["agree"] for row in written["points"])
    at_once = [row for row in written["differ"] if row["receives"] == "at once"]
    assert [(row["p"], row["m"], row["simgrid"]) for row in at_once] == [
        (5, 1, bench.TS + 4 * bench.TW), (5, 100, bench.TS + 4 * bench.TW * 100)]
