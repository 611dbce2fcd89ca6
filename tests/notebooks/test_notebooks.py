"""Run every chapter notebook listed in _toc.yml under nbval.

Each notebook runs in its own pytest subprocess with ``--nbval-lax``: every
cell must execute without error, and the cells a chapter tags
``nbval-check-output`` must reproduce their stored outputs. The kernel is
the interpreter running these tests (``--nbval-current-env``), i.e. the
project's virtualenv.
"""

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
BOOK_DIR = REPO_ROOT / "book"
TOC = REPO_ROOT / "_toc.yml"

# Per-cell limit, the same as the book build's (execute.timeout in _config.yml).
CELL_TIMEOUT = 300
# Upper bound for a whole chapter, so a stuck kernel cannot hang the suite.
NOTEBOOK_TIMEOUT = 1800


def _toc_entries(node):
    """Every `file:` entry under `chapters`/`parts`/`sections` of the toc."""
    if isinstance(node, dict):
        if "file" in node:
            yield node["file"]
        for key in ("parts", "chapters", "sections"):
            yield from _toc_entries(node.get(key, []))
    elif isinstance(node, list):
        for item in node:
            yield from _toc_entries(item)


def chapter_entries():
    toc = yaml.safe_load(TOC.read_text(encoding="utf-8"))
    # The root page (book/intro.md) is prose; only the chapters are notebooks.
    return list(_toc_entries({k: v for k, v in toc.items() if k != "root"}))


@pytest.mark.parametrize("entry", chapter_entries())
def test_chapter_notebook(entry):
    path = REPO_ROOT / entry
    if path.suffix == "":
        if path.with_suffix(".md").exists() and not path.with_suffix(".ipynb").exists():
            pytest.skip(f"{entry} is a markdown page, there is nothing to execute")
        path = path.with_suffix(".ipynb")
    assert path.exists(), f"_toc.yml lists {entry!r} but {path.relative_to(REPO_ROOT)} does not exist"

    cmd = [
        sys.executable, "-m", "pytest",
        "--nbval-lax",
        "--nbval-current-env",
        f"--nbval-cell-timeout={CELL_TIMEOUT}",
        "-p", "no:cacheprovider",
        "-q",
        str(path),
    ]
    sanitize = BOOK_DIR / "nbval_sanitize.cfg"
    if sanitize.exists():
        cmd.append(f"--nbval-sanitize-with={sanitize}")
    proc = subprocess.run(
        cmd,
        cwd=BOOK_DIR,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=NOTEBOOK_TIMEOUT,
    )
    if proc.returncode == 5:  # pytest's "no tests collected"
        pytest.skip(f"{entry} has no code cells")
    assert proc.returncode == 0, (
        f"nbval failed on {entry} (exit {proc.returncode}):\n{proc.stdout}"
    )
