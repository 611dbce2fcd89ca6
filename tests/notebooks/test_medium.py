"""The chapters' prose fits every medium it is read in (issue 29, point 5).

The same markdown is read in JupyterLab, where the demos are live, and on the
book's static pages and on paper, where they are pictures and animations.  So
the prose describes what a demo shows and never asks the reader to press,
drag or pick anything; what the controls do is said by the demo itself, in the
note its static version starts with (``widgets._demo.Demo.static_note``), the
one place that names the medium.
"""
import re
from pathlib import Path

import nbformat
import pytest

BOOK = Path(__file__).resolve().parents[2] / "book"
INVITATIONS = re.compile(
    r"\b(press(es)? play|then press|move the (time )?slider|drag|click|try it|try to find"
    r"|watch it|you (pick|choose)|pick a |in the web version)\b", re.IGNORECASE)


@pytest.mark.parametrize("chapter", sorted(BOOK.glob("ch*.ipynb")), ids=lambda p: p.stem)
def test_the_prose_asks_for_nothing_a_static_page_cannot_do(chapter):
    found = [f"cell {i}: ...{cell.source[max(0, m.start() - 40):m.end() + 20]!r}..."
             for i, cell in enumerate(nbformat.read(chapter, as_version=4).cells)
             if cell.cell_type == "markdown" for m in INVITATIONS.finditer(cell.source)]
    assert not found, "\n".join(found)
