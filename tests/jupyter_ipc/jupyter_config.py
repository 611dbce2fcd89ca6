"""Read by every Jupyter application the tests start (conftest.py puts this folder on
JUPYTER_CONFIG_PATH): their kernels listen on Unix sockets, never on TCP ports; why, in
tests/jupyter_kernels.py."""
import importlib.util
import os

_spec = importlib.util.spec_from_file_location(
    "jupyter_kernels", os.path.join(os.path.dirname(__file__), os.pardir, "jupyter_kernels.py"))
_kernels = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_kernels)

c = get_config()  # noqa: F821  (given by traitlets when it reads this file)
# nbgrader's and nbconvert's kernels (nbclient): sockets under a path of their own
c.NotebookClient.kernel_manager_class = _kernels.IpcKernelManager
# JupyterLab's kernels: their sockets are named after their connection files, each its own
c.KernelManager.transport = "ipc"
