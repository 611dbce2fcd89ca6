"""Every kernel the tests start listens on Unix sockets, never on TCP ports.

jupyter_client chooses a kernel's five TCP ports by binding port 0 and letting each go,
and the kernel binds them a moment later, as it starts (about a second).  A port that
any other process binds in between (a kernel the other pytest worker starts, a Dask
worker, a web server) is lost, and the kernel dies with ``zmq.error.ZMQError: Address
already in use``; ``nbgrader validate`` then reports ``Kernel died before replying to
kernel_info`` and no check.  Two nbgrader runs side by side lost it so (the harness
repeated such a command until this module), and with the machine's ephemeral ports
narrowed to twelve, ten of twelve validations run three at a time did.  ZeroMQ's
``ipc`` transport names a kernel's sockets by a path instead, one of its own for each
kernel here, so there is nothing to race for.

A kernel manager takes its configuration from its application only, so there are two
doors: :data:`CONFIG_DIR`, which ``conftest.py`` puts on ``JUPYTER_CONFIG_PATH`` for every
Jupyter application the tests start (nbgrader, JupyterLab), and
:class:`IpcKernelManager` for the kernels the tests start in their own process
(``NotebookClient``); loaded as a pytest plugin (``-p jupyter_kernels``), this module
gives nbval's kernels the same.  Students' and instructors' own kernels are left as Jupyter
makes them: one at a time, they have no one to race.
"""
from __future__ import annotations

import os
import tempfile
import uuid
from pathlib import Path

from jupyter_client import AsyncKernelManager, KernelManager
from traitlets import HasTraits, default

__all__ = ["CONFIG_DIR", "IpcKernelManager", "SyncIpcKernelManager", "socket_path"]

#: Holds the ``jupyter_config.py`` that every Jupyter application reads from there.
CONFIG_DIR = Path(__file__).resolve().with_name("jupyter_ipc")


def socket_path() -> str:
    """A fresh prefix for a kernel's socket files (``<prefix>-1`` ... ``<prefix>-5``).

    Absolute, since the kernel runs in its notebook's folder and its client elsewhere
    (jupyter_client's own default, ``kernel-ipc`` in the working folder, is neither
    absolute nor a kernel's own), and short: a Unix socket's path has at most 107 bytes.
    """
    return os.path.join(tempfile.gettempdir(), f"kernel-{uuid.uuid4().hex}")


class _OnUnixSockets(HasTraits):
    @default("transport")
    def _ipc_transport(self) -> str:
        return "ipc"

    @default("ip")
    def _own_socket_path(self) -> str:
        return socket_path()


class IpcKernelManager(_OnUnixSockets, AsyncKernelManager):
    """nbclient's kernel manager (``NotebookClient.kernel_manager_class``) on Unix sockets."""


class SyncIpcKernelManager(_OnUnixSockets, KernelManager):
    """jupyter_client's blocking kernel manager (the one nbval uses) on Unix sockets."""


def pytest_configure(config):
    """As a plugin of a pytest run of nbval: its kernels on Unix sockets too (nbval makes
    them with the ``KernelManager`` of its module ``nbval.kernel``)."""
    import nbval.kernel
    nbval.kernel.KernelManager = SyncIpcKernelManager
