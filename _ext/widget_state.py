"""Sphinx extension: no unused ipywidgets state in the HTML pages.

myst-nb copies the executed notebook's ``metadata.widgets`` (the state of every
widget the chapter created, hundreds of KB per chapter) into each page as a
``<script type="application/vnd.jupyter.widget-state+json">``, for the widget
embedder to draw live views from.  The book loads no embedder
(``nb_ipywidgets_js`` is empty in ``_config.yml``) and shows every widget by its
static fallback, so nothing reads that state.  This extension drops it from
every page while the embedder is off; myst-nb has no option for that.

tests/notebooks/test_built_book.py checks that no built page carries widget state.
"""
from myst_nb.core.render import WIDGET_STATE_MIMETYPE
from myst_nb.sphinx_ import NbMetadataCollector


def drop_widget_state(app, doctree) -> None:
    """Forget the widget-state script myst-nb registered for the page just read."""
    if app.config.nb_ipywidgets_js:
        return          # an embedder is configured: it needs the state
    js_files = NbMetadataCollector.get_js_files(app.env, app.env.docname)
    for key in [key for key, (_, kwargs) in js_files.items()
                if kwargs.get("type") == WIDGET_STATE_MIMETYPE]:
        del js_files[key]


def setup(app):
    app.setup_extension("myst_nb")
    # myst-nb stores the page's scripts in the environment while parsing, so
    # doctree-read (right after parsing) comes before any page is written.
    app.connect("doctree-read", drop_widget_state)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
