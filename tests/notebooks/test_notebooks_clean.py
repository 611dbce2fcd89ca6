"""Committed notebooks carry outputs only where nbval compares them.

Also checks tools/clean_notebooks.py itself: it turns the old
``# NBVAL_CHECK_OUTPUT`` comment into the nbval cell tag and keeps exactly the
tagged cells' outputs; and that no hidden cell of a chapter checks anything (checks are
tests, CONTRIBUTING.md), draws or defines anything (drawings are viz functions).
"""
import ast
import importlib.util
import re
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


#: The tags that hide a code cell's source from the reader of the built book.
HIDING_TAGS = ("remove-input", "remove-cell", "hide-input", "hide-cell")


def is_hidden(cell) -> bool:
    return (bool(set(HIDING_TAGS) & set(cell.metadata.get("tags", [])))
            or bool(cell.metadata.get("jupyter", {}).get("source_hidden")))


def checks_in(source: str) -> list[str]:
    """The lines of ``source`` that check something: an ``assert`` statement or a call of
    an ``assert...`` function (``np.testing.assert_allclose``)."""
    code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line    # IPython magics
                     for line in source.splitlines())
    lines = source.splitlines()
    found = set()
    for node in ast.walk(ast.parse(code)):
        call = node.func if isinstance(node, ast.Call) else None
        name = (call.id if isinstance(call, ast.Name)
                else call.attr if isinstance(call, ast.Attribute) else "")
        if isinstance(node, ast.Assert) or name.startswith("assert"):
            found.add(node.lineno)
    return [lines[number - 1].strip() for number in sorted(found)]


def hidden_cell_lines(finder) -> list:
    """``"<chapter>, cell <index>: <line>"`` for each line ``finder(source)`` picks out of a
    hidden code cell of a chapter."""
    return [f"{path.name}, cell {index}: {line}"
            for path in sorted((REPO_ROOT / "book").glob("*.ipynb"))
            for index, cell in enumerate(nbformat.read(path, as_version=4).cells)
            if cell.cell_type == "code" and is_hidden(cell)
            for line in finder(cell.source)]


def test_hidden_cells_check_nothing():
    """A hidden cell only sets up or glues; a check belongs in the chapter's book test
    (tests/book_prose.py: CHAPTER_TESTS), where it can fail on its own."""
    found = hidden_cell_lines(checks_in)
    assert not found, ("hidden cells that check (move each check to the chapter's book "
                       "test, then drop it from the cell):\n" + "\n".join(found))


def test_the_check_finder():
    source = ("%matplotlib inline\nx = 1  # assert nothing here\nassert x == 1, 'one'\n"
              "np.testing.assert_allclose(x, 1)\nif x:\n    assert_equal(x, 1)\n"
              "glue('x', x)")
    assert checks_in(source) == ["assert x == 1, 'one'", "np.testing.assert_allclose(x, 1)",
                                 "assert_equal(x, 1)"]
    assert checks_in("glue('asserted', 3)\nprint('assert')") == []
    hidden = new_code_cell("assert True", metadata={"tags": ["remove-cell"]})
    folded = new_code_cell("assert True", metadata={"jupyter": {"source_hidden": True}})
    shown = new_code_cell("assert True", metadata={"tags": ["nbval-check-output"]})
    assert [is_hidden(c) for c in (hidden, folded, shown)] == [True, True, False]


#: The pyplot calls a hidden cell may make, and why: ``plt.show()`` displays what a viz
#: function drew (without it the cell would print the Axes it returned), and
#: ``plt.subplots(...)`` lays out the panels that viz functions then draw on, one call each.
PYPLOT_GLUE = {"show", "subplots"}

#: Names that hold a figure or axes whatever cell bound them (``ax``, ``axes``, ``fig2``, ``_ax``).
FIGURE_NAME = re.compile(r"_?(ax|axes|fig)\d*$")


def _root(node):
    """The name a chain ``a.b[0].c()`` starts from (None for a literal or a call result)."""
    while isinstance(node, (ast.Attribute, ast.Subscript, ast.Call)):
        node = node.func if isinstance(node, ast.Call) else node.value
    return node.id if isinstance(node, ast.Name) else None


def _bound(target):
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def drawing_in(source: str) -> list[str]:
    """The lines of ``source`` that draw or define, which a hidden cell may not hold.

    A hidden cell only imports, assigns, computes values and calls functions (glue,
    display, viz).  It may not

    * define a function or class (``def``, ``class``, ``lambda``): a helper a chapter uses
      later belongs in a visible cell or the library;
    * import from matplotlib other than ``pyplot`` (colour maps, patches: drawing parts);
    * call pyplot other than :data:`PYPLOT_GLUE` (``plt.figure``, ``plt.plot``, ...);
    * call a method of a figure or axes (``ax.plot``, ``axes[0].set_title``,
      ``fig.legend``): a name bound in the cell from a pyplot or viz call, or a loop over
      one, or named like one (:data:`FIGURE_NAME`).
    """
    code = "\n".join("" if line.lstrip().startswith(("%", "!")) else line    # IPython magics
                     for line in source.splitlines())
    tree = ast.parse(code)
    pyplot = {"plt"}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            pyplot |= {a.asname or a.name for a in node.names if a.name == "matplotlib.pyplot"}
    figures = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
                isinstance(c, ast.Call) and (_root(c.func) in pyplot or _root(c.func) == "viz")
                for c in ast.walk(node.value)):
            figures.update(n for t in node.targets for n in _bound(t))
    for node in ast.walk(tree):       # loops over figures (for ax in axes, zip(axes, ...))
        if isinstance(node, (ast.For, ast.comprehension)) and (
                {n.id for n in ast.walk(node.iter) if isinstance(n, ast.Name)} & figures):
            figures.update(_bound(node.target))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            found.add(node.lineno)
        elif isinstance(node, ast.Import):
            if any(a.name.startswith("matplotlib.") and a.name != "matplotlib.pyplot"
                   for a in node.names):
                found.add(node.lineno)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if (module.startswith("matplotlib.") and module != "matplotlib.pyplot"
                    or module == "matplotlib" and any(a.name != "pyplot" for a in node.names)):
                found.add(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            root = _root(node.func)
            if root in pyplot:
                if not (isinstance(node.func.value, ast.Name)
                        and node.func.attr in PYPLOT_GLUE):
                    found.add(node.lineno)
            elif root is not None and (root in figures or FIGURE_NAME.match(root)):
                found.add(node.lineno)
    lines = source.splitlines()
    return [lines[number - 1].strip() for number in sorted(found)]


def test_hidden_cells_neither_draw_nor_define():
    """A hidden cell only sets up or glues (CONTRIBUTING.md, "A picture"): a drawing is a
    viz function the cell calls, a helper the chapter uses later is visible or the library's."""
    found = hidden_cell_lines(drawing_in)
    assert not found, ("hidden cells that draw or define (move the drawing into a viz "
                       "function, the definition into a visible cell or the library):\n"
                       + "\n".join(found))


def test_the_drawing_finder():
    glue_only = ("%matplotlib inline\nimport matplotlib.pyplot as plt\n"
                 "from collective_lib import viz\nplt.rcParams['figure.dpi'] = 90\n"
                 "fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6))\n"
                 "viz.space_time(run, ax=top)\nax = viz.cost_curves(names, values=[1, 2])\n"
                 "viz.mark_value(ax, 2, 'n*', 'A line.')\nentry = algorithms['x']\n"
                 "glue('t', entry.simulate(4).time, display=False)\nplt.show()")
    assert drawing_in(glue_only) == []
    drawing = ("from matplotlib.patches import Patch\nimport matplotlib.colors\n"
               "fig, axes = plt.subplots(2, 1)\nfor a in axes:\n    a.set_ylabel('t')\n"
               "axes[0].set_title('x')\nplt.plot([1], [2])\nline = viz.space_time(run)\n"
               "line.axvline(3)\nax.legend()\ndef helper(x):\n    return x\n"
               "show = lambda v: str(v)\nclass Thing:\n    pass\nplt.gca().grid()")
    assert drawing_in(drawing) == [
        "from matplotlib.patches import Patch", "import matplotlib.colors",
        "a.set_ylabel('t')", "axes[0].set_title('x')", "plt.plot([1], [2])",
        "line.axvline(3)", "ax.legend()", "def helper(x):", "show = lambda v: str(v)",
        "class Thing:", "plt.gca().grid()"]


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
