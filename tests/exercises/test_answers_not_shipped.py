"""No assignment's reference answer reaches a student (issue 11, point 4).

The reference answers live in ``exercises/source/<assignment>/_reference.py``, for
the instructor and the hidden tests only:

* nbgrader never copies them: the release of every assignment that has one holds
  the notebook only, and the built ``collective_lib`` wheel holds none;
* the installed library does not contain them either: no function or method of
  ``collective_lib`` has the same syntax tree as a function of a reference answer
  once names are normalized (a first, coarse check; the grader's copy detector
  compares submissions with the library more finely).
"""
from __future__ import annotations

import ast
import inspect
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import pytest

import collective_lib
import nbgrader_harness as h
from collective_lib.algorithms.alltoall import all_to_all_bc_ring
from exercise_references import assignments_with_reference, reference_file

# The nbgrader runs of this file on one pytest-xdist worker.

REFERENCE_ASSIGNMENTS = assignments_with_reference()
LIBRARY_DIR = Path(collective_lib.__file__).resolve().parent


def test_the_assignments_that_the_library_once_answered_have_a_reference():
    assert {"reverse_send_order", "ring_reduction", "broken_lock"} <= set(REFERENCE_ASSIGNMENTS)


def test_nbgrader_ignores_the_reference_answers():
    config = (h.EXERCISES_DIR / "nbgrader_config.py").read_text()
    assert '"_reference.py"' in config and "c.CourseDirectory.ignore" in config


def test_the_release_holds_no_reference_answer(tmp_path):
    course = h.copy_course(tmp_path / "course")
    for assignment in REFERENCE_ASSIGNMENTS:
        assert (course / "source" / assignment / "_reference.py").is_file()
        released = h.generate_assignment(course, assignment)
        assert [p.name for p in released] == [f"{assignment}.ipynb"]
        files = sorted(p.name for p in (course / "release" / assignment).rglob("*") if p.is_file())
        assert files == [f"{assignment}.ipynb"], (assignment, files)


def test_the_built_package_holds_no_reference_answer(tmp_path, repo_root):
    # Build the wheel from a copy, so that no build output lands in the repository.
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(repo_root / name, src / name)
    shutil.copytree(repo_root / "collective_lib", src / "collective_lib",
                    ignore=shutil.ignore_patterns("__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--no-index", "--quiet", "-w", str(tmp_path / "dist"), str(src)],
                   check=True, capture_output=True, text=True, cwd=tmp_path)
    [wheel] = (tmp_path / "dist").glob("collective_lib-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert any(n.endswith("collective_lib/algorithms/alltoall.py") for n in names)
    assert not [n for n in names if Path(n).name == "_reference.py" or "exercises/" in n]


# -- the same program up to renaming -------------------------------------------------------------

class _Renamer(ast.NodeTransformer):
    """Give every variable, argument and function name a placeholder in order of appearance."""

    def __init__(self):
        self.names = {}

    def _new(self, name):
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_FunctionDef(self, node):
        node.name = self._new(node.name)
        node.decorator_list = []
        node.returns = None
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]            # the docstring
        self.generic_visit(node)
        return node

    def visit_arg(self, node):
        node.arg = self._new(node.arg)
        node.annotation = None
        return node

    def visit_Name(self, node):
        node.id = self._new(node.id)
        return node


def normalized(function: ast.FunctionDef) -> str:
    """The function's syntax tree with names replaced, decorators and docstring dropped."""
    tree = _Renamer().visit(ast.parse(ast.unparse(function)).body[0])
    return ast.dump(tree, annotate_fields=False)


def functions(tree: ast.AST) -> list:
    """Every function and method defined anywhere in ``tree``."""
    return [node for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def test_normalized_sees_through_renaming_and_docstrings():
    original = ast.parse(textwrap.dedent('''
        def ring(me, p, data):
            """Pass it on."""
            msg = data
            for i in range(1, p):
                msg = yield sendrecv((me + 1) % p, msg, (me - 1) % p)
            return msg
    ''')).body[0]
    renamed = ast.parse(textwrap.dedent('''
        @register(operation="allgather")
        def mine(rank, n, x):
            y = x                      # a comment
            for k in range(1, n):
                y = yield sendrecv((rank + 1) % n, y, (rank - 1) % n)
            return y
    ''')).body[0]
    changed = ast.parse(textwrap.dedent('''
        def mine(rank, n, x):
            y = x
            for k in range(1, n):
                y = yield sendrecv((rank - 1) % n, y, (rank + 1) % n)
            return y
    ''')).body[0]
    assert normalized(original) == normalized(renamed)
    assert normalized(original) != normalized(changed)


def statements(function: ast.FunctionDef) -> int:
    """How many statements the function's body has, nested ones included."""
    return sum(isinstance(node, ast.stmt) for node in ast.walk(function)) - 1


@pytest.fixture(scope="module")
def library_functions():
    found = {}
    for path in sorted(LIBRARY_DIR.rglob("*.py")):
        for function in functions(ast.parse(path.read_text())):
            found.setdefault(normalized(function), []).append(
                f"{path.relative_to(LIBRARY_DIR.parent)}:{function.lineno} {function.name}")
    return found


def test_a_renamed_copy_of_a_library_function_is_found(library_functions):
    source = inspect.getsource(all_to_all_bc_ring).replace("msg", "m").replace("result", "out")
    copy = ast.parse(textwrap.dedent(source)).body[0]
    assert copy.name == "all_to_all_bc_ring" and "msg" not in ast.unparse(copy)
    copy.name = "mine"
    [where] = library_functions[normalized(copy)]
    assert where.startswith("collective_lib/algorithms/alltoall.py:")
    assert where.endswith(" all_to_all_bc_ring")


@pytest.mark.parametrize("assignment", REFERENCE_ASSIGNMENTS)
def test_no_library_function_is_a_reference_answer(assignment, library_functions):
    tree = ast.parse(reference_file(assignment).read_text())
    # A one-line method (a lock's release: write 0) is no answer; a program is.
    answers = [f for f in functions(tree) if statements(f) >= 3]
    assert answers, f"{assignment}'s _reference.py defines no program"
    for function in answers:
        same = library_functions.get(normalized(function), [])
        assert not same, (f"{assignment}: the library ships {function.name} of _reference.py "
                          f"as {same}")
