"""Committed notebooks carry outputs only where nbval compares them.

Also checks tools/clean_notebooks.py itself: it turns the old
``# NBVAL_CHECK_OUTPUT`` comment into the nbval cell tag and keeps exactly the
tagged cells' outputs.
"""
import importlib.util
import subprocess
import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

REPO_ROOT = Path(__file__).resolve().parents[2]
TOOL = REPO_ROOT / "tools" / "clean_notebooks.py"
# Characters of code a built page shows without a scroll bar: 89 at 1366 px (measured in
# Chromium), one to spare.
CODE_COLUMN = 88


def load_tool():
    spec = importlib.util.spec_from_file_location("clean_notebooks", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def printing_cell(source, **metadata):
    cell = new_code_cell(source, metadata=metadata, execution_count=7)
    cell.outputs = [new_output("stream", name="stdout", text="42\n")]
    return cell


def test_chapter_notebooks_are_clean():
    notebooks = sorted(str(p) for p in (REPO_ROOT / "book").glob("*.ipynb"))
    proc = subprocess.run([sys.executable, str(TOOL), "--check", *notebooks],
                          capture_output=True, text=True)
    assert proc.returncode == 0, ("run tools/clean_notebooks.py on these notebooks:\n"
                                  + proc.stdout + proc.stderr)


def chapter_code_cells(hidden):
    """(notebook name, cell number, cell) of every chapter code cell that ``hidden`` lets show."""
    for path in sorted((REPO_ROOT / "book").glob("*.ipynb")):
        for number, cell in enumerate(nbformat.read(path, as_version=4).cells, 1):
            if cell.cell_type == "code" and not set(hidden) & set(cell.metadata.get("tags", [])):
                yield path.name, number, cell


def too_long(where, lines):
    return [f"{where}: {len(line)} characters: {line.strip()}"
            for line in lines if len(line) > CODE_COLUMN]


def test_visible_code_fits_the_code_column():
    found = []
    for name, number, cell in chapter_code_cells(hidden=("remove-input", "remove-cell")):
        found += too_long(f"{name}, cell {number}", cell.source.splitlines())
    assert not found, (f"{len(found)} lines of code the reader sees are longer than "
                       f"{CODE_COLUMN} characters, the page's code column; wrap them:\n"
                       + "\n".join(found))


def test_printed_outputs_fit_the_page():
    """Text a chapter prints (nbval keeps it) is as wide as the code column at most.

    HTML and images lay themselves out; printed text does not wrap on the page.
    """
    found = []
    for name, number, cell in chapter_code_cells(hidden=("remove-cell",)):
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if output.output_type == "stream":
                text = output.text
            elif "text/html" in data or "image/png" in data:
                continue
            else:
                text = data.get("text/plain", "")
            found += too_long(f"{name}, output of cell {number}", text.splitlines())
    assert not found, (f"{len(found)} printed lines are longer than {CODE_COLUMN} "
                       "characters and get a scroll bar on the page:\n" + "\n".join(found))


def test_comment_marker_becomes_the_tag_once():
    tool = load_tool()
    nb = new_notebook(cells=[
        printing_cell("# NBVAL_CHECK_OUTPUT\nprint(42)", tags=["remove-input"]),
        printing_cell("print(42)  # scratch"),
        new_markdown_cell("# NBVAL_CHECK_OUTPUT is only a word in prose here"),
    ])
    tool.clean_notebook(nb)
    checked, scratch, prose = nb.cells
    assert checked.source == "print(42)"
    assert checked.metadata.tags == ["remove-input", tool.CHECK_TAG]
    assert [o.text for o in checked.outputs] == ["42\n"] and checked.execution_count == 1
    assert scratch.outputs == [] and scratch.execution_count is None
    assert prose.source.startswith("# NBVAL_CHECK_OUTPUT")
    once = nbformat.writes(nb)
    tool.clean_notebook(nb)
    assert nbformat.writes(nb) == once


def test_check_reports_a_notebook_with_a_comment_marker(tmp_path):
    path = tmp_path / "chapter.ipynb"
    nb = new_notebook(cells=[printing_cell("# NBVAL_CHECK_OUTPUT\nprint(42)")])
    nb.cells[0].execution_count = 1
    path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")
    proc = subprocess.run([sys.executable, str(TOOL), "--check", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 1
    assert "NBVAL_CHECK_OUTPUT" in proc.stdout and "nbval-check-output" in proc.stdout
    subprocess.run([sys.executable, str(TOOL), str(path)], check=True, capture_output=True)
    proc = subprocess.run([sys.executable, str(TOOL), "--check", str(path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


def test_printed_text_split_by_the_kernel_is_kept_as_one_output():
    tool = load_tool()
    cell = printing_cell("print(1); slow(); print(2)", tags=[tool.CHECK_TAG])
    cell.outputs = [new_output("stream", name="stdout", text="1\n"),
                    new_output("stream", name="stdout", text="2\n"),
                    new_output("stream", name="stderr", text="warning\n"),
                    new_output("stream", name="stdout", text="3\n")]
    nb = new_notebook(cells=[cell])
    tool.clean_notebook(nb)
    assert [(o.name, o.text) for o in nb.cells[0].outputs] == [
        ("stdout", "1\n2\n"), ("stderr", "warning\n"), ("stdout", "3\n")]
