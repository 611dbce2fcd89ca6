"""What the tests of the chapters' prose share: where each chapter's claims are checked,
and which parts of a Markdown cell are not prose (math, code, references, labels).
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
BOOK = REPO_ROOT / "book"
TESTS = REPO_ROOT / "tests"

#: The tests that check each chapter's claims against the library (and, for every chapter,
#: ``notebooks/test_source_slips.py``, which checks its notes on the sources).
CHAPTER_TESTS = {
    "ch0": ["core/test_simulator_book.py"],
    "ch1": ["algorithms/test_broadcast_book.py"],
    "ch2": ["algorithms/test_reduce_book.py"],
    "ch3": ["algorithms/test_sync_book.py"],
    "ch4": ["algorithms/test_gather_book.py"],
    "ch5": ["algorithms/test_alltoall_book.py", "algorithms/test_personalized_book.py",
            "algorithms/test_hrelation_book.py"],
    "ch6": ["cm200/test_cm200_book.py", "cm200/test_figures.py"],
    "ch7": ["mpi/test_mpi_book.py"],
    "ch8": ["algorithms/test_allreduce_book.py"],
}
SOURCE_SLIPS = "notebooks/test_source_slips.py"

#: The parts of a Markdown cell that are not prose.
NOT_PROSE = [
    re.compile(r"\{glue(?::\w+)?\}`[^`]*`"),                       # filled in by the build
    re.compile(r"\{(?:numref|ref|eq|cite(?::\w+)?|term|doc|download|assignment)\}`[^`]*`"),
    re.compile(r"\$\$.*?\$\$", re.S), re.compile(r"\$[^$\n]*\$"),   # math
    # code: fenced blocks, but not MyST directives (```{note}, ```{figure}), whose
    # body is prose; a directive's own line (its name and title) is not
    re.compile(r"^(`{3,})(?!\{)[^\n]*\n.*?^\1", re.S | re.M),
    re.compile(r"^`{3,}\{[^}]*\}.*$", re.M), re.compile(r"^`{3,}\s*$", re.M),
    re.compile(r"`[^`]*`"),
    re.compile(r"\([\w-]+\)="),                                     # labels
    re.compile(r"\]\([^)]*\)"), re.compile(r"https?://\S+"),         # links
    re.compile(r"^#+ .*$", re.M),                                   # headings
    re.compile(r"\bCM-\d+"),                                        # the machine's name
    re.compile(r"^:[\w-]+:.*$", re.M),                             # directive options
]


def chapters() -> list[Path]:
    """The chapter notebooks, in order."""
    return sorted(BOOK.glob("ch*.ipynb"))


def prose_only(source: str) -> str:
    """``source`` with every part that is not prose blanked out, each character by a space,
    so that a position in the result is the same position in ``source``."""
    for pattern in NOT_PROSE:
        source = pattern.sub(lambda match: re.sub(r"\S", " ", match.group()), source)
    return source


def chapter_test_files(chapter: str) -> list[Path]:
    """The book tests of ``chapter`` (e.g. ``"ch1"``), the notes' checks last."""
    return [TESTS / name for name in (*CHAPTER_TESTS[chapter], SOURCE_SLIPS)]


def module_literal(path: Path, name: str, default=None):
    """The literal value a test module assigns to ``name`` at its top level (read, not
    imported: a book test may import the whole library)."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        targets = (node.targets if isinstance(node, ast.Assign)
                   else [node.target] if isinstance(node, ast.AnnAssign) else [])
        if any(isinstance(target, ast.Name) and target.id == name for target in targets):
            return ast.literal_eval(node.value)
    return default


def defined_tests(path: Path) -> set[str]:
    """The test functions a module defines at its top level."""
    return {node.name for node in ast.parse(path.read_text(encoding="utf-8")).body
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.name.startswith("test")}
