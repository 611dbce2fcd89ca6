"""One bibliography, cited where the works are used (issue 29, point 7).

``book/references.bib`` holds every work the book cites and
``book/references.md`` lists them. Every entry is cited with ``{cite}`` somewhere,
every ``{cite}`` names an entry, and a chapter that names a work in its prose
("Sanders et al. 2019", "Johnsson and Ho") cites it with ``{cite}`` too, so the
reader can follow it to the list.
"""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
BOOK = REPO_ROOT / "book"
CITE = re.compile(r"\{cite(?::[a-z]+)?\}`([^`]+)`")
ENTRY = re.compile(r"^@\w+\{([^,\s]+),", re.M)
# How the prose names each work.
NAMED = {
    "grama2003": r"Grama et al\.? \(?2003",
    "sanders2019": r"Sanders et al\.? \(?2019",
    "mathur1993": r"Mathur and Johnsson \(?1993",
    "johnsson1989": r"Johnsson and Ho",
    "bruck1997": r"Bruck et al|Bruck, Ho",
    "rabenseifner2004": r"Rabenseifner \(?2004",
    "thakur2005": r"Thakur",
    "hensgen1988": r"Hensgen",
    "sanders2009": r"Speck",
    "casanova2014": r"Casanova\s+et al",
    "casanova2002": r"Casanova and Marchal",
    "patarasuk2009": r"Patarasuk",
    "culler1993": r"Culler",
    "alexandrov1995": r"Alexandrov",
}


def prose(page: Path) -> str:
    if page.suffix == ".md":
        return page.read_text(encoding="utf-8")
    return "\n".join(cell.source for cell in nbformat.read(page, as_version=4).cells
                     if cell.cell_type == "markdown")


PAGES = sorted([*BOOK.glob("*.ipynb"), *BOOK.glob("*.md")])
ENTRIES = set(ENTRY.findall((BOOK / "references.bib").read_text(encoding="utf-8")))


def cited(text: str) -> set[str]:
    """The keys of every {cite} in ``text``; ``{see}key{§1}`` holds a pre- and post-text."""
    return {re.sub(r"\{[^}]*\}", "", key).strip()
            for keys in CITE.findall(text) for key in keys.split(",")}


def test_every_entry_is_cited_and_every_citation_has_an_entry():
    everywhere = set().union(*(cited(prose(page)) for page in PAGES))
    assert everywhere - ENTRIES == set(), f"cited without an entry: {everywhere - ENTRIES}"
    assert ENTRIES - everywhere == set(), f"listed, never cited: {ENTRIES - everywhere}"
    assert set(NAMED) == ENTRIES, "NAMED must say how the prose names every entry"


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_a_page_cites_every_work_its_prose_names(page):
    text = prose(page)
    missing = [key for key, pattern in NAMED.items()
               if re.search(pattern, text) and key not in cited(text)]
    assert not missing, f"{page.name} names {missing} without citing them with {{cite}}"
