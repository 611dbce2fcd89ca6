"""Every "Note on the source" in a chapter is listed in the appendix, and the appendix lists no other.

A note is a MyST admonition in a chapter's markdown cell, titled "Note on the
source: ..." with a ``:name:`` starting with ``note-``; the appendix
(``book/notes_on_sources.md``) links to it with ``{ref}`...<name>```. Nothing
here builds the book: the names and links are read from the sources, and the
book build (``-W``) fails on a link whose target does not exist.
"""

import re
from pathlib import Path

import nbformat

REPO_ROOT = Path(__file__).resolve().parents[2]
APPENDIX = REPO_ROOT / "book" / "notes_on_sources.md"

_NOTE = re.compile(r"^```\{admonition\} Note on the source: (?P<title>.+)\n"
                   r"(?::[a-z]+:.*\n)*?:name: (?P<name>note-[\w-]+)\n", re.MULTILINE)
_LINK = re.compile(r"\{ref\}`[^`<]*<(note-[\w-]+)>`")
_ANY_NOTE_TITLE = re.compile(r"Note on the source", re.IGNORECASE)


def _chapter_notes() -> dict:
    """``{name: (chapter file, title)}`` of every note in the chapters."""
    notes = {}
    for path in sorted((REPO_ROOT / "book").glob("ch*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "markdown":
                continue
            found = list(_NOTE.finditer(cell.source))
            assert len(found) == len(_ANY_NOTE_TITLE.findall(cell.source)), (
                f"{path.name}: a 'Note on the source' that is not an admonition with a "
                f":name: starting with note-:\n{cell.source}")
            for match in found:
                name = match["name"]
                assert name not in notes, f"two notes named {name}"
                notes[name] = (path.name, match["title"])
    return notes


def test_every_note_is_in_the_appendix_and_every_link_finds_a_note():
    notes = _chapter_notes()
    links = _LINK.findall(APPENDIX.read_text(encoding="utf-8"))
    assert notes, "no note on the sources found in the chapters"
    assert sorted(links) == sorted(set(links)), "the appendix lists a note twice"
    assert set(links) == set(notes), (
        f"notes not in the appendix: {sorted(set(notes) - set(links))}; "
        f"links to no note: {sorted(set(links) - set(notes))}")


def test_the_appendix_is_in_the_book():
    toc = (REPO_ROOT / "_toc.yml").read_text(encoding="utf-8")
    assert "file: book/notes_on_sources" in toc
