"""What every demo of :mod:`collective_lib.widgets` shares.

A demo is a small object that Jupyter displays as its live widget and that
also carries a static ``text/html`` version for a page built without a
kernel (:class:`Demo`).  Figures are drawn on
:class:`matplotlib.figure.Figure` objects and sent as PNG (:func:`png_bytes`), so
no demo touches pyplot or the notebook's matplotlib backend.

A picture is shown at its natural size, one image pixel per screen pixel
(:func:`show_png`): stretched to the output's width it was blurred and pushed
below the screen.  The controls stand in a column to its left
(:meth:`Demo._layout`), so that on a 1366x768 screen both are in view; where the output
is too narrow for both, the picture goes below the column.

Internal to :mod:`collective_lib.widgets` (not re-exported, imported by no other package).
"""
from __future__ import annotations

import base64
import html
import io
import re
import struct
from contextlib import contextmanager
from typing import Callable

import ipywidgets as W
from traitlets import Unicode
from matplotlib.figure import Figure

from ..catalog import catalog
from ..viz.descriptions import description
from ..viz.style import READABLE_SHARE

__all__ = ["operation_entries", "PICTURE_DPI", "MAX_PICTURE_HEIGHT", "SNAPSHOT_SCALE", "CONTROLS_WIDTH",
           "wrapping_row", "scroll_box", "picture_dpi", "png_bytes", "png_size", "Picture", "show_png", "img_tag",
           "animation_html", "html_text", "play_button", "Demo", "PictureDemo"]


def operation_entries(operation: str) -> dict:
    """The catalog entries of one operation, in catalog order."""
    found = {name: e for name, e in catalog().items() if e.operation == operation}
    if not found:
        ops = sorted({e.operation for e in catalog().values()})
        raise ValueError(f"no algorithm in the catalog implements {operation!r}; "
                         f"operations: {ops}")
    return found


#: Pixels per inch of the pictures.
PICTURE_DPI = 90
#: The tallest picture in pixels: with the browser's and Jupyter's bars it fits a 768-pixel screen.
MAX_PICTURE_HEIGHT = 520
#: Image pixels per CSS pixel of a built page's snapshot: sharp on a screen of two device
#: pixels to a CSS pixel, as the chapters' figures are (the live picture, redrawn on every
#: move of a control, keeps one).
SNAPSHOT_SCALE = 2
#: The width of the column of controls left of a picture.  With a picture at most about
#: 630 pixels wide it fits JupyterLab's notebook beside the file browser on a 1366-pixel screen.
CONTROLS_WIDTH = "300px"
#: The controls that JupyterLab draws 300 pixels wide plus 2-pixel side margins: 304 pixels
#: in the column, which showed a scroll bar under them.  :meth:`Demo._layout` stretches them
#: to the column instead (width ``auto``), less their margins.
_STRETCHED_CONTROLS = (W.IntSlider, W.FloatSlider, W.FloatLogSlider, W.Dropdown, W.Checkbox)


def wrapping_row() -> W.Layout:
    """The layout of a row of controls (or of controls and a picture) that goes on in a
    second line where the output is too narrow for one, instead of running past its
    edge, which JupyterLab cuts off."""
    return W.Layout(flex_flow="row wrap", align_items="flex-start")


def scroll_box(picture: W.Widget) -> W.Box:
    """``picture`` at its natural size in a box no wider than the output, which scrolls
    sideways where the picture is wider (a phone)."""
    return W.Box([picture], layout=W.Layout(max_width="100%", overflow="auto hidden"))


def picture_dpi(fig: Figure) -> float:
    """The pixels per inch :func:`png_bytes` draws ``fig`` at (one image pixel to a CSS
    pixel): ``PICTURE_DPI``, less for a figure taller than ``MAX_PICTURE_HEIGHT`` at that,
    whose text then shrinks with it."""
    return min(PICTURE_DPI, MAX_PICTURE_HEIGHT / fig.get_figheight())


def png_bytes(fig: Figure, *, tight: bool = True, scale: int = 1) -> bytes:
    """``fig`` as PNG, at most ``MAX_PICTURE_HEIGHT`` CSS pixels high, ``scale`` image
    pixels to a CSS pixel.

    ``tight=False`` keeps the figure's own margins: one drawing instead of two,
    for the pictures that are redrawn after every slider move.
    """
    dpi = picture_dpi(fig) * scale
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight" if tight else None)
    return buf.getvalue()


def png_size(png: bytes) -> tuple:
    """(width, height) in pixels, from the PNG's header."""
    if png[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG image")
    return struct.unpack(">II", png[16:24])


class Picture(W.Image):
    """An image widget that can carry a title (``tooltip``) in JupyterLab.

    ipywidgets' view sets the title only after reading the model's ``description``,
    which an image does not have (ipywidgets 8.1: the view fails with "Cannot read
    properties of undefined"); an empty one lets it through.
    """
    description = Unicode("").tag(sync=True)


def show_png(image: W.Image, png: bytes, alt: str) -> None:
    """Put ``png`` into ``image`` at its natural size (never stretched to the output's
    width), shrinking with a narrower output down to the width at which its smallest text
    is still readable (``READABLE_SHARE``, as the book's pictures on a phone); below that
    its box scrolls (:func:`scroll_box`).

    ``alt`` says what the picture shows.  An image widget has no alt text, so it becomes
    the image's title: a screen reader reads the title of an image without alt text, and
    a mouse shows it on hover.
    """
    width, _ = png_size(png)
    image.value = png
    image.tooltip = alt
    image.layout.width, image.layout.height = f"{width}px", "auto"
    image.layout.max_width = "100%"
    # a flex box must not squeeze it below that either
    image.layout.min_width = f"{width * READABLE_SHARE:.0f}px"


def _in_256_colours(png: bytes) -> bytes:
    """``png`` with a palette of 256 colours: a third of the bytes for a drawing of flat
    colours and smoothed lines, which looks the same (kept as it is if it is see-through)."""
    from PIL import Image

    image = Image.open(io.BytesIO(png))
    see_through = image.mode == "RGBA" and image.getextrema()[3][0] < 255
    if image.mode not in ("RGB", "RGBA") or see_through:
        return png
    out = io.BytesIO()
    image.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(
        out, "PNG", optimize=True)
    return out.getvalue()


def img_tag(png: bytes, alt: str, *, scale: int = 1) -> str:
    """An ``<img>`` at the picture's natural size (``scale`` image pixels to a CSS pixel)
    that shrinks, never grows, with the page, and carries the width below which its text
    is too small (``--readable-width``, which the book keeps on a phone); embedded in 256
    colours, since a page carries every snapshot it shows."""
    data = base64.b64encode(_in_256_colours(png)).decode("ascii")
    width, height = (round(side / scale) for side in png_size(png))
    return (f'<img src="data:image/png;base64,{data}" width="{width}" height="{height}" '
            f'style="max-width:100%;height:auto;--readable-width:'
            f'{width * READABLE_SHARE:.0f}px" alt="{html.escape(alt)}">')


#: A ``<link>`` to a stylesheet outside the page: matplotlib's animation HTML
#: fetches Font Awesome 4 from a CDN for its button icons.
_EXTERNAL_LINK = re.compile(r"<link\b[^>]*\bhref=[\"'](?:https?:)?//[^>]*>\s*")


#: The frame of matplotlib's animation player and its slider, which carry no text alternative.
_ANIMATION_IMAGE = re.compile(r'(<img id="_anim_img\w+")')
_ANIMATION_SLIDER = re.compile(r'(<input id="_anim_slider\w+")')
#: A frame the player embeds (its base64 is cut into lines ending in a backslash).
_ANIMATION_FRAME = re.compile(
    r'(frames\[\d+\] = "data:image/png;base64,)([A-Za-z0-9+/=\\\n]+)"')
#: How many frames a printed page shows instead of the player, each the column's width (two
#: side by side printed a step player's labels at 4 points, the lock player's at 3).
_PRINTED_FRAMES = 3


def _key_frames(fig: Figure, draw: Callable, frames: list, texts: list) -> str:
    """A strip of up to ``_PRINTED_FRAMES`` of ``frames``, first to last, shown on paper only:
    each drawn again and kept at ``SNAPSHOT_SCALE`` (the player's own frames are light, for
    the screen, and printed blurred)."""
    count = min(_PRINTED_FRAMES, len(frames))
    chosen = sorted({round(i * (len(frames) - 1) / max(count - 1, 1)) for i in range(count)})
    images = []
    for i in chosen:
        draw(frames[i])
        alt = f"Frame {i + 1} of {len(frames)}" + (f": {texts[i]}" if i < len(texts) else "")
        png = io.BytesIO()                      # the player's frame, twice its pixels
        fig.savefig(png, format="png", dpi=fig.dpi * SNAPSHOT_SCALE)
        images.append(img_tag(png.getvalue(), alt, scale=SNAPSHOT_SCALE))
    # On screen the player shows the frames; on paper its controls would do nothing.
    return ("<style>@media screen{.print-frames{display:none}}"
            "@media print{.animation{display:none}}</style>"
            f'<div class="print-frames">{"".join(images)}</div>')


def _frame_in_256_colours(match: re.Match) -> str:
    """A frame of the player's script (an ``_ANIMATION_FRAME`` match) in 256 colours: the
    page carries every frame."""
    png = base64.b64decode(match.group(2).replace("\\\n", ""))
    return f'{match.group(1)}{base64.b64encode(_in_256_colours(png)).decode("ascii")}"'


def animation_html(fig: Figure, draw: Callable, frames, alt: str,
                   frame_texts: dict | None = None) -> str:
    """``draw(frame)`` on ``fig`` for each of ``frames`` as a JavaScript player of one frame
    per second that fetches nothing and speaks.

    The book's theme ships Font Awesome, which draws the player's button icons,
    and the built pages must read without a network, so the CDN stylesheet that
    :meth:`matplotlib.animation.Animation.to_jshtml` links is left out.  The frame
    gets ``alt`` as its text alternative and the slider a label; ``frame_texts``
    (filled by ``draw``: frame -> what it shows, for example from
    :func:`~collective_lib.viz.description`) becomes the animation's text
    equivalent, a list below it that a reader can open.  A printed page shows a
    strip of key frames instead of the player.
    """
    from matplotlib.animation import FuncAnimation

    frames = list(frames)

    def frame(f):
        draw(f)
        return []
    anim = FuncAnimation(fig, frame, frames=frames, init_func=lambda: [], interval=1200,
                         repeat=False)
    page = _EXTERNAL_LINK.sub("", anim.to_jshtml(fps=1, default_mode="once"))
    page = _ANIMATION_FRAME.sub(_frame_in_256_colours, page)
    page = _ANIMATION_IMAGE.sub(lambda m: f'{m.group(1)} alt="{html.escape(alt)}"', page, count=1)
    page = _ANIMATION_SLIDER.sub(lambda m: f'{m.group(1)} aria-label="Frame of the animation"',
                                 page, count=1)
    texts = [text for _, text in sorted((frame_texts or {}).items()) if text]
    page += _key_frames(fig, draw, frames, texts)
    if texts:
        items = "".join(f"<li>{html.escape(text)}</li>" for text in texts)
        page += (f"<details><summary>The animation in words, frame by frame</summary>"
                 f"<ol>{items}</ol></details>")
    return page


def html_text(markup: str) -> str:
    """What an HTML fragment says, without its tags (for a text alternative)."""
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", markup)).split())


def play_button(slider: W.IntSlider, interval: int) -> tuple:
    """A play button that moves ``slider`` from its value to its end, one step per
    ``interval`` milliseconds, in the browser (no kernel round trip per step).

    Returns ``(button, player)``: ``player`` (an ``ipywidgets.Play``) does the moving but
    stays hidden, because its buttons are icons without a name for a screen reader; the
    button is a toggle named "play" that starts and pauses it, and pops up again at the
    end.  Both must be in the demo's widget tree: the player animates from its view.
    """
    player = W.Play(value=slider.value, min=slider.min, max=slider.max, interval=interval,
                    show_repeat=False, layout=W.Layout(display="none"))
    button = W.ToggleButton(value=False, description="play", icon="play",
                            tooltip=f"move the {slider.description} slider on by itself")
    W.jslink((player, "value"), (slider, "value"))
    W.jslink((player, "min"), (slider, "min"))
    W.jslink((player, "max"), (slider, "max"))
    W.jslink((button, "value"), (player, "playing"))
    return button, player


class Demo:
    """A displayable wrapper: the widget for a live kernel, static HTML for a built page.

    A subclass sets ``controls`` (a dict of control widgets), ``status`` (from
    :meth:`_status_label`), ``widget``, ``_busy`` (True while it sets its own
    controls), and defines ``_resimulate`` (after a control that changes the
    run) and ``_redraw`` (after one that moves within it).
    """

    widget: W.Widget
    controls: dict
    _busy: bool

    def fallback_html(self) -> str:
        """Static HTML for a page without a kernel."""
        raise NotImplementedError

    def set_controls(self, **values) -> None:
        """Set several controls at once, then update once (not once per control).

        Examples
        --------
        >>> from collective_lib.widgets import step_player
        >>> player = step_player("broadcast", algorithm="binomial_broadcast", p=8)
        >>> player.set_controls(p=16, step=2)
        >>> player.run.time, player.controls["step"].value
        (4.0, 2)
        """
        unknown = sorted(set(values) - set(self.controls))
        if unknown:
            raise ValueError(f"no control named {unknown}; the controls are {list(self.controls)}")
        self._busy = True
        try:
            for name, value in values.items():
                self.controls[name].value = value
        finally:
            self._busy = False
        with self._computing():
            self._resimulate()

    @staticmethod
    def _status_label() -> W.HTML:
        return W.HTML(layout=W.Layout(min_height="1.6em"))

    @contextmanager
    def _computing(self):
        """Show "computing..." while the body runs: a redraw can take a moment."""
        self.status.value = '<i style="color:#b9770e">computing...</i>'
        try:
            yield
        finally:
            self.status.value = ""

    def _layout(self, control_rows: list, picture: W.Widget, text: W.Widget,
                notes: W.Widget | None = None) -> W.Box:
        """The controls, the busy indicator and ``notes`` in a column left of the picture,
        or above it where the two do not fit side by side; ``text`` below both.

        JupyterLab clips what runs past an output: beside the file browser on a
        1280-pixel screen the right edge of a 612-pixel picture was cut off (the
        legend's words, the last tick), and on a phone the whole picture stood
        outside the screen.  So the row wraps, the column is never wider than the
        output, and a picture wider than the output scrolls sideways in a box of
        its own (shrunk, its text would be too small), as the book's figures do on a
        phone.
        """
        for row in control_rows:
            if isinstance(row, _STRETCHED_CONTROLS) and not row.layout.width:
                row.layout.width = "auto"     # a width set on purpose is kept
            row.layout.max_width = "100%"
        column = W.VBox([*control_rows, self.status, *([notes] if notes else [])],
                        layout=W.Layout(width=CONTROLS_WIDTH, max_width="100%"))
        return W.VBox([W.HBox([column, scroll_box(picture)], layout=wrapping_row()), text])

    def _on_setup(self, change):
        """A control that changes the run: simulate again (unless we are setting controls)."""
        if not self._busy:
            with self._computing():
                self._resimulate()

    def _on_step(self, change):
        """A control that moves within the run: only redraw."""
        if not self._busy:
            with self._computing():
                self._redraw()

    def static_note(self) -> str:
        """What a page without a kernel shows instead of the live demo, and what the controls do.

        The one place where the medium is named: the chapters describe what a demo
        shows and never ask the reader of a static page to press anything.
        """
        names = [control.description or name for name, control in self.controls.items()
                 if name != "play" and control.layout.display != "none"]
        return ('<p class="static-note"><em>On this page: the settings the chapter chose. In the '
                f"notebook, controls change {html.escape(', '.join(names))}.</em></p>")

    def _repr_mimebundle_(self, **kwargs):
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/html"] = self.static_note() + self.fallback_html()
        return bundle


class PictureDemo(Demo):
    """A demo of one picture redrawn from its controls: an explorer (costs, choice).

    Every control redraws the whole picture; the caption under it says what it
    shows.  A subclass sets ``controls``, then calls :meth:`_start`, and defines
    ``_figure`` (a new :class:`~matplotlib.figure.Figure` of the current
    settings) and ``_caption_text`` (asked after ``_figure``, so it may say what
    drawing found); ``no_description`` is the alt text of a figure that
    describes nothing, ``TIGHT`` whether its PNG is cut to its drawing
    (:func:`png_bytes`).  Attributes besides :class:`Demo`'s: ``image``,
    ``caption``, ``alt_text``.
    """

    no_description = "A picture."
    TIGHT = True

    def _figure(self) -> Figure:
        raise NotImplementedError

    def _caption_text(self) -> str:
        raise NotImplementedError

    def _start(self) -> None:
        """The picture, its caption and the busy indicator beside ``controls``, each of
        which redraws; then the first drawing."""
        self._busy = False
        self.caption = W.HTML()
        self.image = Picture(format="png")
        self.status = self._status_label()
        for control in self.controls.values():
            control.observe(self._on_setup, names="value")
        self.widget = self._layout(list(self.controls.values()), self.image, self.caption)
        with self._computing():
            self._redraw()

    def _resimulate(self) -> None:
        self._redraw()

    def _redraw(self) -> None:
        fig = self._figure()
        self.caption.value = self._caption_text()
        self.alt_text = description(fig) or self.no_description
        show_png(self.image, png_bytes(fig, tight=self.TIGHT), self.alt_text)
        self._shown = fig

    def fallback_html(self) -> str:
        """The caption and a sharp PNG of the current picture, at the live picture's size."""
        png = png_bytes(self._shown, tight=self.TIGHT, scale=SNAPSHOT_SCALE)
        return f"<p>{self.caption.value}</p>" + img_tag(png, self.alt_text, scale=SNAPSHOT_SCALE)
