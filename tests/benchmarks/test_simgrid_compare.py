"""The SimGrid comparison: its pure parts always, a tiny run where SimGrid is installed."""
import importlib.util
import json
import sys

import pytest

from collective_lib import compute, exchange, multi, recv, send, sendrecv


@pytest.fixture(scope="module")
def compare(repo_root):
    path = repo_root / "benchmarks" / "simgrid_compare.py"
    spec = importlib.util.spec_from_file_location("simgrid_compare_benchmark", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def stored(compare):
    return json.loads(compare.RESULTS_FILE.read_text(encoding="utf-8"))


def test_the_grid_has_every_program_p_and_m(compare):
    grid = compare.point_grid()
    assert len(grid) == 27 == len(set(grid))
    assert {name for name, _, _ in grid} == set(compare.PROGRAMS)
    assert grid[0] == ("all_to_all_bc_ring", 2, 1) and grid[-1] == ("naive_gather", 8, 10_000)
    assert compare.differ_grid() == [(p, m) for p in (5, 8) for m in (1, 100, 10_000)]


def test_operations_become_replay_entries(compare):
    entry = compare.schedule_entry
    assert entry(send(3, [1, 2])) == [[[3, 2]], []]
    assert entry(recv(4)) == [[], [4]]
    assert entry(sendrecv(1, 7, 2)) == [[[1, 1]], [2]]
    assert entry(exchange(5, "ab", words=9)) == [[[5, 9]], [5]]
    assert entry(multi(sends=[(1, [0] * 3), (2, 0)], recvs=[3, 4])) == [[[1, 3], [2, 1]], [3, 4]]
    with pytest.raises(ValueError, match="no counterpart in the SimGrid replay"):
        entry(compute(1.0))


def test_our_run_records_every_operation(compare):
    time, schedule = compare.our_run("all_to_all_bc_ring", 4, 3)
    assert time == 3 * (compare.TS + compare.TW * 3)
    assert schedule == [[[[[(me + 1) % 4, 3]], [(me - 1) % 4]]] * 3 for me in range(4)]
    time, schedule = compare.our_run("naive_gather_at_once", 4, 2, ports="all")
    assert time == compare.TS + compare.TW * 2
    assert schedule[0] == [[[], [1, 2, 3]]] and schedule[3] == [[[[0, 2]], []]]


def test_the_stored_ours_column_is_what_the_simulator_gives_today(compare, stored):
    ts, tw = stored["ts"], stored["tw"]
    assert {(r["program"], r["p"], r["m"]) for r in stored["points"]} == set(compare.point_grid())
    for row in stored["points"]:
        assert compare.our_run(row["program"], row["p"], row["m"], ts=ts, tw=tw)[0] == row["ours"]
        assert row["agree"], row
    for row in stored["differ"]:
        name = compare.DIFFER_CASES[row["receives"]]
        for column, ports in (("ours_full_duplex", "full-duplex"), ("ours_all", "all")):
            ours = compare.our_run(name, row["p"], row["m"], ports=ports, ts=ts, tw=tw)[0]
            assert ours == row[column], (row, column)


@pytest.mark.parametrize("python", ["/nonexistent/python3", sys.executable])
def test_without_simgrid_it_says_so_and_exits_0(compare, python, tmp_path, capsys):
    if compare.can_import_simgrid(python):
        pytest.skip(f"{python} imports simgrid")
    results = tmp_path / "results.json"
    assert compare.main(["--simgrid-python", python, "--results", str(results)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == compare.NOT_FOUND
    assert python in out and not results.exists()


def test_a_tiny_comparison_agrees_where_simgrid_is_installed(compare, tmp_path, capsys):
    python = compare.find_simgrid_python()
    if python is None:
        pytest.skip(compare.NOT_FOUND)
    results = tmp_path / "results.json"
    assert compare.main(["--p", "2", "5", "--m", "1", "100", "--results", str(results)]) == 0
    out = capsys.readouterr().out
    assert "PASS  12 of 12 points agree" in out
    assert "every value above follows its formula" in out
    written = json.loads(results.read_text(encoding="utf-8"))
    assert len(written["points"]) == 12 and all(row["agree"] for row in written["points"])
    at_once = [row for row in written["differ"] if row["receives"] == "at once"]
    assert [(row["p"], row["m"], row["simgrid"]) for row in at_once] == [
        (5, 1, compare.TS + 4 * compare.TW), (5, 100, compare.TS + 4 * compare.TW * 100)]
