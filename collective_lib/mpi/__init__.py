"""Run the book's SPMD programs on real MPI processes (mpi4py on MPICH).

The same generator programs that :func:`~collective_lib.simulate` runs on
virtual PEs run here on the ranks of an MPI job: every yielded ``send``,
``recv``, ``sendrecv`` and ``multi`` becomes MPI point-to-point traffic (the
algorithm stays ours), see :mod:`collective_lib.mpi.backend` for the exact
semantics.

Inside an MPI job (``mpiexec -n 4 python script.py``)::

    from collective_lib import catalog
    from collective_lib.mpi import run
    result = run("binomial_broadcast", inputs, root=0)      # this rank's result

From the command line (checks every rank against the expected results, times
our program and MPI's own collective side by side)::

    mpiexec -n 4 python -m collective_lib.mpi run all_to_all_bc_ring --words 1024
    mpiexec -n 2 python -m collective_lib.mpi calibrate --output machine.json

From Python or a notebook, without becoming an MPI process::

    from collective_lib.mpi import launch
    records = launch(["run", "binomial_broadcast", "--words", "1024"], np=4, timeout=60)

Importing this package does not import mpi4py; :func:`run` does, and raises
:class:`MPINotAvailableError` with install instructions if it is missing.
"""
from .backend import (MPIDeadlockError, MPINotAvailableError, MPIProgramError, as_arrays, plain,
                      run, run_timed)
from .calibrate import (fit_ts_tw, load_calibration, load_model, ping_pong, calibrate,
                        save_calibration)
from .launcher import (MPIExecNotFoundError, MPIJobError, MPILaunchTimeout, available_cores,
                       find_mpiexec, launch)
from .reference import MPI_COLLECTIVES, mpi_collective_name, run_mpi_collective

__all__ = [
    "run", "run_timed", "launch", "find_mpiexec", "available_cores",
    "fit_ts_tw", "ping_pong", "calibrate", "save_calibration", "load_calibration", "load_model",
    "MPI_COLLECTIVES", "mpi_collective_name", "run_mpi_collective", "as_arrays", "plain",
    "MPIDeadlockError", "MPINotAvailableError", "MPIProgramError", "MPIExecNotFoundError",
    "MPIJobError", "MPILaunchTimeout",
]
