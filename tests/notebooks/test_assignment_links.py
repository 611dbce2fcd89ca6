"""Every assignment is named by its chapter, at the chapter's end.

Each assignment of ``exercises/source/`` is named by exactly one chapter, with
the ``{assignment}`` directive of ``_ext/downloads.py`` (which shows its title and
links its student version) in the chapter's closing "Exercises" section, and the
chapter is the one the README's table of assignments gives. No page sends the
reader to ``exercises/``, which a reader of the book does not have.
(tests/notebooks/test_built_book.py checks the built link and the student version.)
"""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
EXERCISES = REPO_ROOT / "exercises" / "source"
DIRECTIVE = re.compile(r"^```\{assignment\}\s+(\S+)\s*$", re.M)
README_ROW = re.compile(r"^\| `(\w+)` \| (\d) \|", re.M)


def chapters() -> dict[str, Path]:
    toc = yaml.safe_load((REPO_ROOT / "_toc.yml").read_text(encoding="utf-8"))
    found = {}
    for entry in toc["chapters"]:
        path = REPO_ROOT / (entry["file"] + ".ipynb")
        if path.exists():
            found[path.stem] = path
    return found


def named_by_chapter() -> dict[str, list[str]]:
    """{assignment: [chapter stems whose closing section names it]}, and no other mention."""
    named = {}
    for stem, path in chapters().items():
        cells = [cell for cell in nbformat.read(path, as_version=4).cells
                 if cell.cell_type == "markdown"]
        for cell in cells[:-1]:
            assert not DIRECTIVE.search(cell.source), \
                f"{stem} names an assignment before its closing Exercises section"
        if DIRECTIVE.search(cells[-1].source):
            assert "## Exercises" in cells[-1].source, f"{stem}'s last cell has no Exercises heading"
        for name in DIRECTIVE.findall(cells[-1].source):
            named.setdefault(name, []).append(stem)
    return named


def test_every_assignment_is_named_by_exactly_one_chapter_at_its_end():
    assignments = sorted(p.name for p in EXERCISES.iterdir() if p.is_dir())
    named = named_by_chapter()
    assert sorted(named) == assignments, (
        f"not named by any chapter: {sorted(set(assignments) - set(named))}; "
        f"not an assignment: {sorted(set(named) - set(assignments))}")
    twice = {name: stems for name, stems in named.items() if len(stems) > 1}
    assert not twice, f"named by more than one chapter: {twice}"


def test_each_assignment_sits_in_the_chapter_the_readme_gives():
    readme = dict(README_ROW.findall((REPO_ROOT / "README.md").read_text(encoding="utf-8")))
    named = named_by_chapter()
    for name, (stem,) in named.items():
        assert stem.startswith(f"ch{readme[name]}_"), \
            f"{name}: the README says chapter {readme[name]}, the book puts it in {stem}"


def test_no_page_sends_the_reader_to_the_course_directory():
    pages = [*chapters().values(), *(REPO_ROOT / "book").glob("*.md")]
    for page in pages:
        if page.suffix == ".ipynb":
            text = "\n".join(cell.source for cell in nbformat.read(page, as_version=4).cells
                             if cell.cell_type == "markdown")
        else:
            text = page.read_text(encoding="utf-8")
        assert "in `exercises/`" not in text, f"{page.name} points to exercises/"
