"""The widget redraw benchmark finds the book's demos and measures them (no speed is tested)."""

BENCHMARK = "widget_redraw"   # benchmarks/widget_redraw.py, loaded by the bench fixture


def test_it_finds_every_factory_the_chapters_call(bench):
    demos = bench.book_demos()
    called = {call.split("(")[0].removeprefix("widgets.") for _, call in demos}
    assert called == set(bench.FACTORIES)
    assert any(chapter.startswith("ch5") and "cost_explorer" in call for chapter, call in demos)


def test_the_worst_settings_take_every_choice_at_the_largest_sizes(bench):
    explorer = bench.build('widgets.cost_explorer("alltoall", vary="m", p=4, m=8)')
    settings = bench.worst_settings(explorer, cap=8)
    assert [s["vary"] for s in settings] == ["p", "m"]
    assert all(s["p"] == 8 and s["m"] == 8 for s in settings)
    assert len(bench.worst_settings(explorer)) == 2
    assert bench.worst_settings(explorer)[0]["p"] == explorer.controls["p"].max


def test_measure_gives_two_times(bench):
    default, worst = bench.measure('widgets.step_player("scatter", algorithm="binomial_scatter", '
                                   'p=4)', cap=4)
    assert default > 0 and worst > 0


def test_the_script_prints_one_line_per_demo_and_the_slowest(bench, capsys):
    bench.main(["--only", "step_player('scatter'", "--cap", "4"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == "demo | default s | worst s"
    assert lines[2].startswith("ch4_gather_scatter: step_player('scatter'")
    assert lines[2].count(" | ") == 2
    assert lines[-1].startswith("slowest redraw: ") and lines[-1].endswith(" s")
