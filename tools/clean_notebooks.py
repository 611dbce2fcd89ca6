#!/usr/bin/env python3
"""Strip executed chapter notebooks down to what belongs in git.

The book build and the notebook tests execute every chapter again, so a
committed notebook needs only its sources plus the outputs that nbval compares:
the outputs of code cells tagged ``nbval-check-output``.  This script keeps
exactly those and removes everything that changes from one run to the next:

* outputs of every other code cell (figures, widgets, scratch prints);
* execution counts of the cleared cells; a checked cell keeps a count (nbval
  refuses a cell with outputs but no count), renumbered to its position among
  the code cells so it is the same after every run;
* per-cell execution metadata (timestamps added by nbclient / JupyterLab);
* notebook-level widget state and interpreter version details;
* widget views inside kept outputs (they refer to a kernel that is gone);
* the split of a kept cell's printed text into stream outputs, which depends on
  when the kernel flushed: consecutive outputs of one stream become one.

Usage::

    python tools/clean_notebooks.py book/ch0_machine_model.ipynb book/ch1_broadcast.ipynb
    python tools/clean_notebooks.py --check book/*.ipynb   # exit 1 if a file would change

A cell marked the older way, with a comment line ``# NBVAL_CHECK_OUTPUT``
(which nbval also reads, but which then shows in the HTML book), is converted:
the comment line is removed and the tag added, so ``--check`` reports every
notebook that still has such a comment.  Apart from that, cell sources and
tags are never touched.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

# nbval compares the outputs of a cell with this tag (nbval.plugin.metadata_tags) ...
CHECK_TAG = "nbval-check-output"
# ... or with this comment line (nbval.plugin.comment_markers), which we convert to the tag.
CHECK_COMMENT = "NBVAL_CHECK_OUTPUT"
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"
# Cell metadata that records how and when a cell ran, not what it is.
VOLATILE_CELL_KEYS = ("execution", "collapsed", "scrolled", "ExecuteTime")
# Notebook metadata that depends on the machine or the session.
VOLATILE_NOTEBOOK_KEYS = ("widgets", "toc-autonumbering", "varInspector")


def is_check_comment(line: str) -> bool:
    """True for a source line that nbval reads as the check-output comment."""
    line = line.strip()
    return line.startswith("#") and line.lstrip("#").strip() == CHECK_COMMENT


def convert_check_comment(cell) -> None:
    """Replace a code cell's ``# NBVAL_CHECK_OUTPUT`` comment line by the tag (idempotent)."""
    if cell.cell_type != "code":
        return
    lines = cell.source.splitlines(keepends=True)
    kept = [line for line in lines if not is_check_comment(line)]
    if len(kept) == len(lines):
        return
    cell.source = "".join(kept)
    tags = cell.metadata.setdefault("tags", [])
    if CHECK_TAG not in tags:
        tags.append(CHECK_TAG)


def is_checked(cell) -> bool:
    """True for a code cell whose outputs nbval compares (tagged ``nbval-check-output``)."""
    return cell.cell_type == "code" and CHECK_TAG in cell.metadata.get("tags", [])


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


def merge_streams(outputs: list) -> list:
    """``outputs`` with consecutive stream outputs of the same stream joined into one."""
    merged = []
    for output in outputs:
        previous = merged[-1] if merged else None
        if (output.get("output_type") == "stream" and previous is not None
                and previous.get("output_type") == "stream"
                and previous.get("name") == output.get("name")):
            previous["text"] = previous["text"] + output["text"]
        else:
            merged.append(output)
    return merged


def clean_notebook(nb) -> None:
    """Clean ``nb`` in place."""
    position = 0
    for cell in nb.cells:
        convert_check_comment(cell)
        for key in VOLATILE_CELL_KEYS:
            cell.metadata.pop(key, None)
        if cell.cell_type != "code":
            cell.pop("outputs", None)
            cell.pop("execution_count", None)
            continue
        position += 1
        outputs = [clean_output(o, position) for o in cell.outputs] if is_checked(cell) else []
        cell.outputs = merge_streams([o for o in outputs if o is not None])
        cell.execution_count = position if cell.outputs else None
    for key in VOLATILE_NOTEBOOK_KEYS:
        nb.metadata.pop(key, None)
    info = nb.metadata.get("language_info")
    if info is not None:
        nb.metadata["language_info"] = {"name": info.get("name", "python")}


def check_comment_count(nb) -> int:
    """How many code cells still mark checked output with the comment instead of the tag."""
    return sum(1 for cell in nb.cells
               if cell.cell_type == "code" and any(map(is_check_comment, cell.source.splitlines())))


def process(path: Path, check: bool) -> str | None:
    """Clean one notebook; return what changed (or would change), None if nothing."""
    before = path.read_text(encoding="utf-8")
    nb = nbformat.reads(before, as_version=4)
    comments = check_comment_count(nb)
    clean_notebook(nb)
    after = nbformat.writes(nb) + "\n"
    if after == before:
        return None
    if not check:
        path.write_text(after, encoding="utf-8")
    if comments:
        return f"{comments} '# {CHECK_COMMENT}' comment(s) -> tag {CHECK_TAG!r}"
    return "outputs and metadata"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if some notebook is not clean")
    args = parser.parse_args(argv)
    dirty = {}
    for path in args.notebooks:
        change = process(path, args.check)
        if change is not None:
            dirty[path] = change
    verb = "would clean" if args.check else "cleaned"
    for path, change in dirty.items():
        print(f"{verb} {path}: {change}")
    return 1 if (args.check and dirty) else 0


if __name__ == "__main__":
    sys.exit(main())
