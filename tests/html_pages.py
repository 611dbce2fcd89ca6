"""An HTML page taken apart, for the tests that no student markup is rendered.

:class:`Page` parses a page (feedback, formgrader's view, nbconvert's export) into its
elements, script texts, comments and visible text; :meth:`Page.live` finds which of an
attack's payloads are markup there rather than text. This module is a helper, not a test.
"""
from __future__ import annotations

from html.parser import HTMLParser

__all__ = ["Page"]


class Page(HTMLParser):
    """The elements, script texts, comments and visible text of an HTML page."""

    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.elements, self.scripts, self.comments, self.texts = [], [], [], []
        self._inside = None
        self.feed(page)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        if tag in ("script", "style"):
            self._inside = tag

    def handle_endtag(self, tag):
        if tag == self._inside:
            self._inside = None

    def handle_data(self, data):
        {"script": self.scripts, "style": []}.get(self._inside, self.texts).append(data)

    def handle_comment(self, data):
        self.comments.append(data)

    def live(self, *marks: str) -> list:
        """The payloads carrying any of ``marks`` that are markup: elements (one of whose
        attributes holds a mark), scripts and comments, as ``(tag or kind, what)``."""
        def marked(text):
            return any(mark in text for mark in marks)

        found = [(tag, attrs) for tag, attrs in self.elements
                 if any(marked(f"{name}={value}") for name, value in attrs.items())]
        found += [("script", text) for text in self.scripts if marked(text)]
        found += [("comment", text) for text in self.comments if marked(text)]
        return found

    @property
    def text(self) -> str:
        return "".join(self.texts)
