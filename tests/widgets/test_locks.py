"""The lock player follows its controls and describes the moment under its cursor."""
import re

import pytest

from collective_lib import viz, widgets
from collective_lib.widgets._demo import MAX_PICTURE_HEIGHT, picture_dpi, png_size

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def test_player_follows_its_controls():
    player = widgets.lock_player("cas_spin_lock", p=3, rounds=2, hold=10)
    assert player.run.memory["counter"] == 6
    assert "mutual exclusion held" in player.info.value
    player.controls["p"].value = 5
    assert player.run.p == 5 and player.run.memory["counter"] == 10
    assert player.controls["time"].max == int(player.run.time)
    player.controls["lock"].value = "broken_lock"
    assert "mutual exclusion violated" in player.info.value
    player.controls["lock"].value = "reader_writer_lock"
    assert "the lock's line moved" in player.info.value


def test_player_describes_the_moment_under_the_cursor():
    player = widgets.lock_player("ttas_backoff_lock", p=3, rounds=1, hold=50)
    lines = player.state_lines(0)
    assert len(lines) == 4 and lines[0].startswith("PE 0: ")
    start = viz.critical_sections(player.run)[0][2]
    inside = player.state_lines(start + 1)
    assert any("in the critical section" in line for line in inside)
    assert "lock in the caches of PE" in player.state_lines(start)[-1]
    assert all(line.endswith("done") for line in player.state_lines(player.run.time)[:3])


@pytest.mark.parametrize("p", [4, 15, widgets.LOCK_PLAYER_MAX_P])
def test_the_live_picture_keeps_its_text_readable_up_to_the_most_pes(p):
    # At p = 16 the time line was 6.7 inches high, more than MAX_PICTURE_HEIGHT at 90
    # pixels per inch: shrunk whole to fit, its labels were 8.6 pixels high.
    player = widgets.lock_player("ttas_backoff_lock", p=p, rounds=1, hold=0)
    fig = player.live_figure(0)
    assert fig.get_figheight() * picture_dpi(fig) <= MAX_PICTURE_HEIGHT
    assert viz.smallest_font(fig, dpi=picture_dpi(fig), column=1e9).px >= viz.MIN_FONT_PX


def test_player_has_a_static_fallback():
    player = widgets.lock_player("cas_spin_lock", p=2, rounds=1, hold=0)
    bundle = player._repr_mimebundle_()
    assert WIDGET_VIEW in bundle
    html = bundle["text/html"]
    assert "cas_spin_lock" in html and "<script" in html and "data:image/png;base64" in html
    assert "<link" not in html        # no Font Awesome from a CDN: the book reads offline
    assert 'alt="An animation of the run, a cursor sweeping its time in' in html
    assert 'aria-label="Frame of the animation"' in html


def test_the_animation_in_words_says_what_each_frame_shows():
    player = widgets.lock_player("cas_spin_lock", p=2, rounds=1, hold=0)
    words = player.fallback_html().split("The animation in words")[1]
    frames = re.findall(r"<li>(.*?)</li>", words)
    assert len(frames) == widgets.locks.LOCK_PLAYER_FRAMES
    assert len(set(frames)) == len(frames), "two frames described alike"
    assert frames[0].startswith("At time 0: ") and "PE 1: " in frames[0]
    assert frames[-1].endswith("PE 0: done; PE 1: done.")


@pytest.mark.parametrize("kwargs, text", [
    ({"lock": "ticket_lock"}, "unknown lock"),
    ({"p": 0}, "p must be between 1 and 16"),
    ({"rounds": 9}, "rounds must be between 1 and 4"),
    ({"hold": -1}, "hold must be between 0 and 200"),
])
def test_player_rejects_bad_settings(kwargs, text):
    with pytest.raises(ValueError, match=text):
        widgets.lock_player(**kwargs)


def test_long_runs_print_their_time_without_an_exponent_and_words_stay_whole():
    player = widgets.lock_player("cas_spin_lock", p=16, rounds=4, hold=10)
    assert player.run.time >= 1e4
    assert f"finished at time <b>{player.run.time:,.0f}</b>" in player.info.value
    assert "e+" not in player.info.value
    assert "word-break:normal" in player.state.value


def test_picture_fits_beside_the_controls_in_jupyterlab():
    # About 615 pixels are left beside the 300-pixel column on a 1366-pixel screen.
    for p in (1, 4):
        player = widgets.lock_player("ttas_backoff_lock", p=p)
        assert png_size(player.image.value)[0] <= 612
