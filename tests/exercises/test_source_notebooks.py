"""The instructor's (source) notebook of every assignment carries proper nbgrader metadata.

The round trip of each assignment (release, then autograde good and bad
submissions) is tested in the module named after it, e.g. test_broken_lock.py.
"""
from __future__ import annotations

from pathlib import Path

import nbformat
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SOURCE = REPO_ROOT / "exercises" / "source"

NOTEBOOKS = sorted(SOURCE.glob("*/*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_source_notebook_has_proper_nbgrader_metadata(path):
    from nbgrader.nbgraderformat import MetadataValidator

    nb = nbformat.read(path, as_version=4)
    MetadataValidator().validate_nb(nb)
    assert nb.metadata.kernelspec.name == "python3"
    assert path.stem == path.parent.name
    ids = []
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader")
        assert meta is not None, f"cell without nbgrader metadata: {cell.source[:60]!r}"
        assert meta["schema_version"] == 3
        assert set(meta) >= {"grade", "grade_id", "locked", "schema_version", "solution", "task"}
        ids.append(meta["grade_id"])
        if meta["grade"]:
            assert meta["points"] > 0
        if meta["solution"] and cell.cell_type == "code":
            assert "### BEGIN SOLUTION" in cell.source and not meta["locked"]
        if "BEGIN HIDDEN TESTS" in cell.source:
            assert meta["grade"] and meta["locked"] and not meta["solution"]
    assert len(ids) == len(set(ids)), "grade_ids must be unique"
