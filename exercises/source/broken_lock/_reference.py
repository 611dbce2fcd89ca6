"""Reference answers of the assignment ``broken_lock`` (instructor only).

Sanders, Mehlhorn, Dietzfelbinger, Dementiev, *Sequential and Parallel
Algorithms and Data Structures* (2019), §13.4.1: a lock is a cell that a PE
changes from 0 to 1 with an atomic compare-and-swap; without the CAS (the
library's ``broken_lock``: read until 0, then write 1) two PEs can both see 0.

* part 1 (a), (b): schedules of ``lock_demo`` with ``broken_lock`` that put
  both PEs in the critical section, and that lose two of four increments;
* part 2: ``FixedLock``, a test-and-test-and-set lock (read, then CAS) with a
  pause while the lock is taken.

Any correct lock answers part 2, the library's ``cas_spin_lock`` and
``ttas_backoff_lock`` (Sanders' own locks, which Chapter 3 runs but does not
print) included; the grader rejects a lock that uses them (``check_own_lock``)
and flags a copy of them for review.  This file stays in ``source/``:
``c.CourseDirectory.ignore`` in ``exercises/nbgrader_config.py`` keeps
nbgrader from copying it into ``release/`` or ``autograded/``.
"""
from collective_lib.shared_memory import cas, pause, read, write

__all__ = ["schedule_both_inside", "schedule_two_lost", "FixedLock"]

# Both PEs read 0 before either writes 1, so both enter.
schedule_both_inside = [0, 1, 0, 1]

schedule_two_lost = [
    0,                   # PE 0 reads lock -> 0
    1,                   # PE 1 reads lock -> 0
    0, 0,                # PE 0 takes the lock, reads counter -> 0
    1, 1, 1, 1,          # PE 1 takes it too, reads 0, writes 1, releases (round 1 done)
    1, 1, 1,             # PE 1 round 2: lock reads 0, takes it, reads counter -> 1
    0, 0,                # PE 0 writes counter := 1 and releases (round 1 done)
    0, 0, 0, 0, 0,       # PE 0 round 2: reads 1, writes 2, releases
    1, 1,                # PE 1 writes counter := 2 and releases
]


class FixedLock:
    """A spin lock in the cell ``cell``: 0 when free, 1 when some PE holds it."""

    def __init__(self, me, p, cell="lock"):
        self.me, self.p, self.cell = me, p, cell

    @staticmethod
    def memory(p, cell="lock"):
        """The shared cells this lock needs, with their initial values."""
        return {cell: 0}

    def acquire(self):
        """Yield memory operations until this PE holds the lock."""
        while True:
            while (yield read(self.cell)) != 0:      # taken: poll the cached copy
                yield pause(1)
            if (yield cas(self.cell, 0, 1)):         # looked free: take it atomically
                return

    def release(self):
        """Yield the memory operations that free the lock again."""
        yield write(self.cell, 0)
