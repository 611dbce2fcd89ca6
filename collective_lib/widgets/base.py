"""What every demo of :mod:`collective_lib.widgets` shares.

A demo is a small object that Jupyter displays as its live widget and that
also carries a static ``text/html`` version for a page built without a
kernel (:class:`_Demo`).  Figures are drawn on
:class:`matplotlib.figure.Figure` objects and sent as PNG (:func:`_png`), so
no demo touches pyplot or the notebook's matplotlib backend.
"""
from __future__ import annotations

import base64
import html
import io
import re

import ipywidgets as W
from matplotlib.figure import Figure

from ..catalog import catalog

__all__: list = []


def _entries(operation: str) -> dict:
    """The catalog entries of one operation, in catalog order."""
    found = {name: e for name, e in catalog().items() if e.operation == operation}
    if not found:
        ops = sorted({e.operation for e in catalog().values()})
        raise ValueError(f"no algorithm in the catalog implements {operation!r}; "
                         f"operations: {ops}")
    return found


def _png(fig: Figure) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    return buf.getvalue()


def _img_tag(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode("ascii")
    return f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt)}">'


#: A ``<link>`` to a stylesheet outside the page: matplotlib's animation HTML
#: fetches Font Awesome 4 from a CDN for its button icons.
_EXTERNAL_LINK = re.compile(r"<link\b[^>]*\bhref=[\"'](?:https?:)?//[^>]*>\s*")


def _animation_html(anim) -> str:
    """``anim`` as a JavaScript player of one frame per second that fetches nothing.

    The book's theme ships Font Awesome, which draws the player's button icons,
    and the built pages must read without a network, so the CDN stylesheet that
    :meth:`matplotlib.animation.Animation.to_jshtml` links is left out.
    """
    return _EXTERNAL_LINK.sub("", anim.to_jshtml(fps=1, default_mode="once"))


def _fmt(t: float) -> str:
    return f"{t:.4g}"


class _Demo:
    """A displayable wrapper: the widget for a live kernel, static HTML for a built page."""

    widget: W.Widget

    def fallback_html(self) -> str:
        """Static HTML for a page without a kernel."""
        raise NotImplementedError

    def _on_setup(self, change):
        """A control that changes the run: simulate again (unless we are setting controls)."""
        if not self._busy:
            self._resimulate()

    def _on_step(self, change):
        """A control that moves within the run: only redraw."""
        if not self._busy:
            self._redraw()

    def _repr_mimebundle_(self, **kwargs):
        bundle = dict(self.widget._repr_mimebundle_(**kwargs) or {})
        bundle["text/html"] = self.fallback_html()
        return bundle
