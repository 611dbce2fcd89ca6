"""A pytest plugin for nbval runs: write each notebook back with the outputs its run produced.

Loaded with ``-p nbval_keep_outputs --keep-outputs=DIR`` in the pytest process
that runs a chapter under nbval: when every code cell of a notebook has run
without error, the notebook is written to ``DIR`` under its own name, each code
cell holding the outputs nbval received from the kernel (display metadata
included, which glued values need) and execution counts 1, 2, 3, ... as a fresh
Jupyter run numbers them. The book build then takes those outputs from a Jupyter
cache instead of executing every chapter a second time
(``tests/notebooks/test_built_book.py``). A notebook with a failed or skipped
cell is not written.
"""
from __future__ import annotations

from pathlib import Path

import nbformat

_not_clean: set[str] = set()       # files with a failed or skipped cell


def pytest_addoption(parser):
    parser.addoption("--keep-outputs", metavar="DIR",
                     help="write each fully executed notebook, with its outputs, to DIR")


def pytest_runtest_logreport(report):
    if report.failed or report.skipped:
        _not_clean.add(report.fspath)


def pytest_sessionfinish(session):
    folder = session.config.getoption("--keep-outputs")
    if not folder:
        return
    cells_of = {}
    for item in session.items:
        cells_of.setdefault(item.parent, []).append(item)
    for notebook, cells in cells_of.items():
        if any(cell.location[0] in _not_clean or cell.test_outputs is None for cell in cells):
            continue
        for count, cell in enumerate(cells, start=1):
            cell.cell.outputs = [nbformat.from_dict(output) for output in cell.test_outputs]
            cell.cell.execution_count = count
            for output in cell.cell.outputs:
                if output.output_type == "execute_result":
                    output.execution_count = count
        target = Path(folder) / Path(str(notebook.fspath)).name
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook.nb, target)
