"""Committed notebooks carry outputs only where nbval compares them."""
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_chapter_notebooks_are_clean():
    notebooks = sorted(str(p) for p in (REPO_ROOT / "book").glob("*.ipynb"))
    proc = subprocess.run([sys.executable, str(REPO_ROOT / "tools" / "clean_notebooks.py"),
                           "--check", *notebooks], capture_output=True, text=True)
    assert proc.returncode == 0, ("run tools/clean_notebooks.py on these notebooks:\n"
                                  + proc.stdout + proc.stderr)
