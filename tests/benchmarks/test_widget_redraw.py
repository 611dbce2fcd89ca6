"""The widget redraw benchmark finds the book's demos and measures them (no speed is tested)."""

BENCHMARK = "widget_redraw"   # benchmarks/widget_redraw.py, loaded by the bench fixture


def test_it_finds_every_factory_the_chapters_call(bench):
    demos = bench.book_demos()
    called = {call.split("(")[0].removeprefix("widgets.") for _, call in demos}
    assert called == set(bench.FACTORIES)
    assert any(chapter.startswith("ch5") and "cost_explorer" in call for chapter, call in demos)


def test_the_settings_combine_both_ends_of_every_control(bench):
    explorer = bench.build('widgets.cost_explorer("alltoall", vary="m", p=4, m=8)')
    settings = bench.leading_settings(explorer, cap=8)
    assert len(settings) == 2 ** 6            # ts, tw, p, m, the axis and the dots, each at two
    assert {(s["p"], s["m"]) for s in settings} == {(2, 1), (2, 8), (8, 1), (8, 8)}
    assert {(s["vary"], s["simulate"]) for s in settings} == {
        (vary, dots) for vary in ("p", "m") for dots in (False, True)}
    assert {s["p"] for s in bench.leading_settings(explorer)} == {2, explorer.controls["p"].max}


def test_the_root_and_the_step_go_to_both_ends_after_each_setting(bench):
    player = bench.build('widgets.step_player("scatter", algorithm="binomial_scatter", p=4)')
    found = bench.redraws(player, [{"p": 4, "root": 0, "step": 1}])
    assert [setting for setting, _, _ in found] == [
        "p=4", "p=4, root=0", "p=4, root=0, step=1", "p=4, root=0, step=2",
        "p=4, root=3", "p=4, root=3, step=1", "p=4, root=3, step=2"]
    assert all(wrong is None for _, _, wrong in found)


def test_a_setting_that_raises_is_reported_not_fatal(bench):
    player = bench.build('widgets.step_player("scatter", algorithm="binomial_scatter", p=4)')
    found = bench.redraws(player, [{"nothing": 1}, {"p": 2}])
    assert found[0][2].startswith("raised ValueError(\"no control named ['nothing']")
    assert found[1][0] == "p=2" and found[1][2] is None


def test_measure_gives_the_default_time_and_every_setting(bench):
    default, found = bench.measure('widgets.step_player("scatter", algorithm="binomial_scatter", '
                                   'p=4)', cap=4)
    assert default > 0 and len(found) >= 4 and all(seconds > 0 for _, seconds, _ in found)


def test_the_script_prints_one_line_per_demo_and_the_slowest(bench, capsys):
    bench.main(["--only", "step_player('scatter'", "--cap", "4"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "demo | default s | worst s | settings"
    assert lines[2].startswith("ch4_gather_scatter: step_player('scatter'")
    assert lines[2].count(" | ") == 3
    assert lines[-1].startswith("slowest redraw: ") and lines[-1].endswith(" s")
