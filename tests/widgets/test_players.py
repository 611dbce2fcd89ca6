"""The step and value players work without a kernel, follow their controls, and carry a
static fallback."""
import base64
import re

import pytest

from collective_lib import catalog
from collective_lib.widgets import step_player, value_player
from collective_lib.widgets._demo import CONTROLS_WIDTH, png_size

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


def broadcast_names():
    return [name for name, e in catalog().items() if e.operation == "broadcast"]


def entries(operations):
    return [e for e in catalog().values() if e.operation in operations]


def shown(widget):
    return widget.layout.display != "none"


# -- step player ---------------------------------------------------------------------------

def test_player_offers_every_broadcast_of_the_catalog():
    player = step_player("broadcast")
    assert list(player.controls["algorithm"].options) == broadcast_names()
    assert player.controls["algorithm"].value == broadcast_names()[0]


def test_player_time_follows_algorithm_and_p():
    player = step_player(algorithm="naive_broadcast", p=8)
    assert "simulated time <b>7</b>" in player.info.value
    player.controls["algorithm"].value = "binomial_broadcast"
    assert "simulated time <b>3</b>" in player.info.value
    assert "closed form 3" in player.info.value
    player.controls["p"].value = 16
    assert "simulated time <b>4</b>" in player.info.value and player.run.time == 4.0
    assert player.controls["step"].max == 4


def test_player_root_range_follows_p():
    player = step_player(algorithm="binomial_broadcast", p=8, root=7)
    player.controls["p"].value = 5
    assert player.controls["root"].max == 4 and player.controls["root"].value == 4
    assert [m.src for m in player.run.step(1)] == [4]


def test_player_shows_k_only_for_pipelined_algorithms():
    player = step_player(algorithm="binomial_broadcast", p=8)
    assert not shown(player.controls["k"])
    player.controls["algorithm"].value = "linear_pipeline_broadcast"
    assert shown(player.controls["k"])
    player.controls["k"].value = 4                        # m = k: one word per packet
    assert player.run.time == 8 + 4 - 2
    assert "simulated time <b>10</b>" in player.info.value


def test_player_explains_an_invalid_p():
    player = step_player(algorithm="hypercube_broadcast", p=8)
    player.controls["p"].value = 6
    assert player.run is None
    assert "cannot run on p = 6" in player.info.value
    assert "power of two" in player.info.value
    assert not shown(player.image)
    assert "power of two" in player.fallback_html()
    player.controls["p"].value = 4
    assert player.run.time == 2.0 and shown(player.image)


def test_player_offers_no_more_packets_than_words():
    player = step_player(algorithm="linear_pipeline_broadcast", p=4, m=2)
    assert player.controls["k"].max == 2
    player.controls["k"].value = 2
    assert player.run.time == 4 + 2 - 2
    with pytest.raises(ValueError, match="k=3 exceeds m=2"):
        step_player(algorithm="linear_pipeline_broadcast", k=3, m=2)


def test_player_offers_only_the_packet_counts_the_algorithm_takes():
    # The two-tree broadcast takes an even k: at the slider's old end, k = 1, the player
    # showed an error instead of a picture.
    entry, p = catalog()["two_tree_broadcast"], 8
    player = step_player(algorithm=entry.name, p=p, k=1)
    k = player.controls["k"]
    assert (k.min, k.step, k.value) == (2, 2, 2) and player.run is not None
    for value in range(k.min, k.max + 1, k.step):
        player.controls["k"].value = value
        assert player.run is not None and player.error is None, value
    assert entry.refusal(p, 3, k=3) is not None           # what the slider now steps over
    player.controls["algorithm"].value = "linear_pipeline_broadcast"
    assert (k.min, k.step) == (1, 1)


def test_player_step_slider_changes_the_picture():
    player = step_player(algorithm="binomial_broadcast", p=8)
    first = player.image.value
    assert first[:8] == b"\x89PNG\r\n\x1a\n"
    player.controls["step"].value = 3
    assert player.image.value != first


def test_player_single_pe_has_no_steps():
    player = step_player(algorithm="binomial_broadcast", p=1)
    assert player.run.time == 0 and player.controls["step"].disabled
    assert "<img" in player.fallback_html()


def test_player_bundle_has_widget_and_animation():
    player = step_player(algorithm="binomial_broadcast", p=8)
    bundle = player._repr_mimebundle_()
    assert bundle[WIDGET_VIEW]["model_id"] == player.widget.model_id
    page = bundle["text/html"]
    assert "simulated time <b>3</b>" in page
    assert page.count("<script") >= 1 and "animation" in page
    # one frame per step for the player, and again in the strip a printed page shows instead
    assert page.count("data:image/png;base64") == 3 + 3
    assert re.search(r'<div class="print-frames"><img src="data:image/png;base64,[^"]+" '
                     r'width="\d+" height="\d+" style="[^"]*" alt="Frame 1 of 3: Step 1 of 3',
                     page)
    # the printed frames are drawn again, two image pixels to a CSS pixel (the player's own
    # frames are light for the screen, and printed blurred)
    strip = page.split('<div class="print-frames">')[1].split("</div>")[0]
    for data, width, height in re.findall(
            r'base64,([^"]+)" width="(\d+)" height="(\d+)"', strip):
        pixels = png_size(base64.b64decode(data))        # odd sizes round to a CSS pixel
        assert all(abs(image - 2 * int(css)) <= 1 for image, css in zip(pixels, (width, height)))
    assert "<link" not in page        # no Font Awesome from a CDN: the book reads offline
    # Read without seeing it: the frame has a text alternative, the slider a name, and the
    # animation a text equivalent, one line per frame.
    assert re.search(r'<img id="_anim_img\w+" alt="An animation of the run, one frame per step '
                     r'\(3 steps\)\. binomial_broadcast', page)
    assert re.search(r'<input id="_anim_slider\w+" aria-label="Frame of the animation"', page)
    assert page.count("<li>") == 3 and "The animation in words" in page
    # The static page says what it shows and what the live controls change (k is hidden here).
    assert page.startswith('<p class="static-note"><em>On this page: the settings the chapter '
                           'chose. In the notebook, controls change algorithm, p, root, step.')


def test_player_rejects_unknown_names():
    with pytest.raises(ValueError, match="not a broadcast algorithm"):
        step_player(algorithm="quick_sort")
    with pytest.raises(ValueError, match="no algorithm in the catalog implements"):
        step_player("teleport")


@pytest.mark.parametrize("make", [step_player, value_player])
def test_player_algorithm_menu_is_named_and_has_the_column_width(make):
    # The sliders' label width beside the menu left too few pixels for the longest names
    # (31 characters); the label is the menu's own description (its name for a screen
    # reader), as wide as the word.
    player = make()
    menu = player.controls["algorithm"]
    assert menu.description == "algorithm" and menu.style.description_width == "initial"
    assert menu.layout.width == CONTROLS_WIDTH
    assert menu.layout.margin.split()[1] == "0"           # no side margins past the column


# -- value_player ---------------------------------------------------------------------------

def test_player_offers_every_entry_of_the_operation():
    player = value_player("reduce")
    names = [e.name for e in entries(("reduce",))]
    assert list(player.controls["algorithm"].options) == names
    assert player.controls["step"].max == len(player.values.rows) - 1


def test_player_follows_algorithm_root_and_values():
    player = value_player("reduce", algorithm="binomial_reduce", p=6, root=3)
    assert player.values.cells[-1][0][3] == "3:5,0:2"
    player.controls["algorithm"].value = "binary_tree_reduce"
    assert player.values.cells[-1][0][3] == "0:5"
    player.controls["values"].value = "numbers"
    assert player.values.values[-1][0][3] == [sum(x[0] for x in player.run.inputs)]
    player.controls["p"].value = 2
    assert player.controls["root"].max == 1 and player.run.p == 2


def test_player_step_changes_the_highlight_and_the_transfer_line():
    player = value_player("allreduce", algorithm="hypercube_allreduce", p=4)
    assert "Before any communication" in player.table.value
    player.controls["step"].value = 2
    assert "<b>Step 2</b> transfers: 0-&gt;2: 0:1" in player.table.value
    assert player.table.value.count("background:#fdebd0") == 1


def test_player_explains_an_invalid_p_and_uses_p_words_for_rabenseifner():
    player = value_player("allreduce", algorithm="rabenseifner_allreduce", p=4)
    assert player.m == 4 and "m = 4" in player.info.value
    player.controls["p"].value = 6
    assert player.run is None and "cannot run on p = 6" in player.info.value
    assert player.table.value == "" and "power of two" in player.fallback_html()


def test_player_barrier_hides_the_value_toggle_and_pipelines_take_k():
    player = value_player("barrier", p=5)
    assert player.controls["values"].layout.display == "none"
    assert player.values.cells[-1][0] == ["0:4"] * 5
    player = value_player("reduce", algorithm="pipelined_binary_tree_reduce", p=7, root=3, k=3)
    assert player.m == 3 and player.controls["k"].layout.display is None
    assert player.values.cells[-1][0][3] == "0:6 0:6 0:6"


def test_player_bundle_has_widget_and_whole_table():
    player = value_player("prefix_sum_and_total", p=8)
    bundle = player._repr_mimebundle_()
    assert bundle[WIDGET_VIEW]["model_id"] == player.widget.model_id
    page = bundle["text/html"]
    assert "hypercube_prefix_sum" in page and page.count("<th rowspan='2'") == 4
    assert "background:#fdebd0" not in page and "transfers in this step" in page


def test_player_rejects_bad_arguments():
    with pytest.raises(ValueError, match="not a reduce algorithm"):
        value_player("reduce", algorithm="hypercube_allreduce")
    with pytest.raises(ValueError, match="'pattern' or 'numbers'"):
        value_player(values="letters")
    with pytest.raises(ValueError, match="p must be an integer in 1..16"):
        value_player(p=40)
    with pytest.raises(ValueError, match="no algorithm in the catalog implements"):
        value_player("teleport")


def test_a_page_embeds_its_snapshots_in_256_colours():
    # a page carries every snapshot and printed key frame it shows: a palette of 256 colours
    # keeps a drawing's look at a third of the bytes; a see-through picture is left as it is
    import io

    from matplotlib.figure import Figure
    from PIL import Image

    from collective_lib.widgets._demo import img_tag, png_bytes

    fig = Figure(figsize=(4, 3))
    ax = fig.add_subplot()
    ax.plot(range(10), [x * x for x in range(10)], color="#0072b2")
    ax.set_title("a drawing of flat colours and smoothed lines")
    png = png_bytes(fig, scale=2)

    def embedded(picture):
        return base64.b64decode(re.search(r'base64,([^"]+)', img_tag(picture, "a")).group(1))

    assert Image.open(io.BytesIO(embedded(png))).mode == "P"
    assert png_size(embedded(png)) == png_size(png) and len(embedded(png)) < 0.6 * len(png)
    see_through = io.BytesIO()
    Image.new("RGBA", (8, 8), (0, 0, 0, 0)).save(see_through, "PNG")
    assert embedded(see_through.getvalue()) == see_through.getvalue()


def test_a_snapshot_carries_the_width_its_text_needs():
    # on a phone the book keeps a snapshot at least this wide (layout.css): its smallest
    # text, MIN_FONT points at the book's DPI, stays MIN_FONT_PX high
    from matplotlib.figure import Figure

    from collective_lib.viz import BOOK_DPI, MIN_FONT, MIN_FONT_PX
    from collective_lib.widgets._demo import img_tag, png_bytes

    png = png_bytes(Figure(figsize=(6, 3), dpi=BOOK_DPI), scale=2)
    tag = img_tag(png, "a", scale=2)
    width = int(re.search(r'width="(\d+)"', tag).group(1))
    readable = int(re.search(r"--readable-width:(\d+)px", tag).group(1))
    assert width > 500                                  # the picture's own size
    assert readable == round(width * MIN_FONT_PX / (MIN_FONT * BOOK_DPI / 72)) < width


def test_the_players_own_frames_are_embedded_in_256_colours():
    # every frame of the player is in the page: a step player's fragment halves
    import io

    from PIL import Image

    page = step_player(algorithm="binomial_broadcast", p=8).fallback_html()
    frames = re.findall(r'frames\[\d+\] = "data:image/png;base64,([A-Za-z0-9+/=]+)"', page)
    assert len(frames) == 3
    for data in frames:
        assert Image.open(io.BytesIO(base64.b64decode(data))).mode == "P"
