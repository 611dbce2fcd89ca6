"""The kernels the tests start listen on Unix sockets, each on its own path
(``tests/jupyter_kernels.py`` says why): those of a Jupyter application (here
``nbgrader validate``), of a ``NotebookClient`` in the test's own process, and of nbval."""
import os
import subprocess
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

import nbgrader_harness as h
from jupyter_kernels import IpcKernelManager

TESTS_DIR = Path(__file__).resolve().parents[1]

# What the kernel was told in its connection file, printed and checked.
WHERE = ("import json, os\n"
         "from ipykernel.connect import get_connection_info\n"
         "info = json.loads(get_connection_info())\n"
         "print(info['transport'], info['ip'])\n"
         "assert info['transport'] == 'ipc' and os.path.isabs(info['ip']), info")


def _notebook():
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(WHERE)], metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})


def _where(notebook) -> tuple[str, str]:
    transport, path = notebook.cells[0].outputs[0].text.split()
    return transport, path


def test_an_applications_kernel_listens_on_a_unix_socket(tmp_path):
    notebook = _notebook()          # a test cell: Validate reports its failure
    notebook.cells[0].metadata["nbgrader"] = {
        "grade": True, "grade_id": "where", "points": 1, "solution": False, "locked": True,
        "schema_version": 3}
    result = h.validate(notebook, tmp_path)
    assert result.passed, result.text


def test_each_in_process_kernel_has_a_socket_path_of_its_own():
    runs = [_notebook(), _notebook()]
    for notebook in runs:
        NotebookClient(notebook, timeout=60, kernel_name="python3",
                       kernel_manager_class=IpcKernelManager).execute()
    (first, one), (second, other) = map(_where, runs)
    assert first == second == "ipc"
    assert one != other and os.path.dirname(one) == os.path.dirname(other)


def test_nbvals_kernel_listens_on_a_unix_socket(tmp_path):
    nbformat.write(_notebook(), tmp_path / "where.ipynb")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        filter(None, [str(TESTS_DIR), os.environ.get("PYTHONPATH")])))
    run = subprocess.run([sys.executable, "-m", "pytest", "--nbval-lax", "--nbval-current-env",
                          "-p", "no:cacheprovider", "-p", "jupyter_kernels", "-q", "-rA",
                          "where.ipynb"], cwd=tmp_path, env=env, stdin=subprocess.DEVNULL,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout, run.stdout
