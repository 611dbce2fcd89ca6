"""``python -m collective_lib.mpi``: see :mod:`collective_lib.mpi.cli`."""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
