"""Sphinx extension: a chapter's figures carry the alt text their drawing wrote.

Every drawing of ``collective_lib.viz`` says in words what it shows
(``viz.describe``, collective_lib/viz/descriptions.py); in a notebook that text travels with the figure's PNG as
output metadata, ``{"image/png": {"alt": ...}}``.  myst-nb takes an image's
alt text only from the cell's metadata, so without this extension the HTML
would fall back to the image's file name.  Right after a chapter is read, this
extension looks up each image's output in the executed notebook (myst-nb names
an image file by the SHA-256 of its bytes) and gives the image that text.  An
alt text set in the cell's metadata (``mystnb: image: alt:``) is kept.  The
executed notebook is the one myst-nb writes beside the HTML, or, when the
outputs come from a Jupyter cache (``execute_notebooks: cache``), the cached one:
in that mode myst-nb writes the notebook without its outputs.

tests/notebooks/test_built_book.py checks the alt text and caption of every
figure of the pages it builds.
"""
from __future__ import annotations

import hashlib
from base64 import b64decode
from pathlib import Path

import nbformat
from docutils import nodes
from jupyter_cache import get_cache

#: Where myst-nb writes the executed notebooks, beside the HTML output.
EXECUTED = "jupyter_execute"


def alt_texts(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """{SHA-256 of a PNG output: the alt text its output metadata carries}."""
    texts = {}
    for cell in notebook.cells:
        for output in cell.get("outputs", ()):
            png = output.get("data", {}).get("image/png")
            alt = output.get("metadata", {}).get("image/png", {}).get("alt")
            if png and alt:
                texts[hashlib.sha256(b64decode(png)).hexdigest()] = alt
    return texts


def executed_notebook(app, docname: str) -> nbformat.NotebookNode | None:
    """The chapter ``docname`` with its outputs (None for a page without code)."""
    if app.config.nb_execution_mode == "cache":
        source = Path(app.env.doc2path(docname))
        if source.suffix != ".ipynb":
            return None
        cache = get_cache(app.config.nb_execution_cache_path or ".jupyter_cache")
        try:
            return cache.merge_match_into_notebook(nbformat.read(source, as_version=4))[1]
        except KeyError:
            return None         # not cached: myst-nb reports the failed execution
    executed = Path(app.outdir).parent / EXECUTED / f"{docname}.ipynb"
    return nbformat.read(executed, as_version=4) if executed.exists() else None


def add_alt_texts(app, doctree) -> None:
    notebook = executed_notebook(app, app.env.docname)
    if notebook is None:
        return
    texts = alt_texts(notebook)
    for image in doctree.findall(nodes.image):
        text = texts.get(Path(image["uri"]).stem)
        if text and not image.get("alt"):
            image["alt"] = text


def setup(app):
    app.setup_extension("myst_nb")
    app.connect("doctree-read", add_alt_texts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
