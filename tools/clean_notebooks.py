#!/usr/bin/env python3
"""Strip executed chapter notebooks down to what belongs in git.

The book build and the notebook tests execute every chapter again, so a
committed notebook needs only its sources plus the outputs that nbval compares:
the outputs of code cells whose first line is ``# NBVAL_CHECK_OUTPUT``.  This
script keeps exactly those and removes everything that changes from one run
to the next:

* outputs of every other code cell (figures, widgets, scratch prints);
* execution counts of the cleared cells; a checked cell keeps a count (nbval
  refuses a cell with outputs but no count), renumbered to its position among
  the code cells so it is the same after every run;
* per-cell execution metadata (timestamps added by nbclient / JupyterLab);
* notebook-level widget state and interpreter version details;
* widget views inside kept outputs (they refer to a kernel that is gone).

Usage::

    python tools/clean_notebooks.py book/ch0_machine_model.ipynb book/ch1_broadcast.ipynb
    python tools/clean_notebooks.py --check book/*.ipynb   # exit 1 if a file would change

Cell sources and tags are never touched.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

CHECK_MARK = "# NBVAL_CHECK_OUTPUT"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
# Cell metadata that records how and when a cell ran, not what it is.
VOLATILE_CELL_KEYS = ("execution", "collapsed", "scrolled", "ExecuteTime")
# Notebook metadata that depends on the machine or the session.
VOLATILE_NOTEBOOK_KEYS = ("widgets", "toc-autonumbering", "varInspector")


def is_checked(cell) -> bool:
    """True for a code cell whose first line is the nbval marker."""
    first_line = cell.source.lstrip("\n").split("\n", 1)[0].strip()
    return cell.cell_type == "code" and first_line.startswith(CHECK_MARK)


def clean_output(output, count):
    """A kept output with a stable execution count and no widget view (None if nothing is left)."""
    if "execution_count" in output:
        output["execution_count"] = count
    data = output.get("data")
    if data is not None:
        data.pop(WIDGET_MIME, None)
        if not data:
            return None
    return output


def clean_notebook(nb) -> None:
    """Clean ``nb`` in place."""
    position = 0
    for cell in nb.cells:
        for key in VOLATILE_CELL_KEYS:
            cell.metadata.pop(key, None)
        if cell.cell_type != "code":
            cell.pop("outputs", None)
            cell.pop("execution_count", None)
            continue
        position += 1
        outputs = [clean_output(o, position) for o in cell.outputs] if is_checked(cell) else []
        cell.outputs = [o for o in outputs if o is not None]
        cell.execution_count = position if cell.outputs else None
    for key in VOLATILE_NOTEBOOK_KEYS:
        nb.metadata.pop(key, None)
    info = nb.metadata.get("language_info")
    if info is not None:
        nb.metadata["language_info"] = {"name": info.get("name", "python")}


def process(path: Path, check: bool) -> bool:
    """Clean one notebook; return True when it changed (or would change)."""
    before = path.read_text(encoding="utf-8")
    nb = nbformat.reads(before, as_version=4)
    clean_notebook(nb)
    after = nbformat.writes(nb) + "\n"
    if after == before:
        return False
    if not check:
        path.write_text(after, encoding="utf-8")
    return True


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if some notebook is not clean")
    args = parser.parse_args(argv)
    dirty = []
    for path in args.notebooks:
        if process(path, args.check):
            dirty.append(path)
    verb = "would clean" if args.check else "cleaned"
    for path in dirty:
        print(f"{verb} {path}")
    return 1 if (args.check and dirty) else 0


if __name__ == "__main__":
    sys.exit(main())
