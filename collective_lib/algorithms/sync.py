"""Locks and barriers on shared memory (chapter 3).

Source: Sanders, Mehlhorn, Dietzfelbinger, Dementiev, *Sequential and
Parallel Algorithms and Data Structures* (2019), §13.4: locks (§13.4.1),
barrier synchronization (§13.4.2, Fig. 13.10) and the barrier implementations
and their benchmark (§13.4.3, Listings 13.1 and 13.2, Table 13.2).

Everything here runs on the shared-memory machine of
:mod:`collective_lib.shared_memory`: a PE yields ``read``, ``write``, ``cas``,
``fetch_add`` and ``pause`` on named cells, each atomic.

A lock or barrier is a small class.  Each PE makes its own instance (it holds
the PE-local state, such as the barrier's local epoch or the current back-off
period) and runs its procedures with ``yield from``; the class's static
``memory(p, ...)`` declares the shared cells it needs::

    lock = ttas_backoff_lock(me, p)
    yield from lock.acquire()
    ...                                   # critical section
    yield from lock.release()

The driver programs :func:`lock_demo`, :func:`barrier_demo` and
:func:`diffusion` carry their memory layout, so ``simulate_shared(lock_demo,
4, lock=cas_spin_lock)`` needs nothing else.
"""
from __future__ import annotations

from numbers import Real
from typing import NamedTuple

from ..shared_memory import (CoherenceModel, SharedRun, cas, cell_array, enter, fetch_add,
                             leave, note, pause, read, run_with_threads, simulate_shared,
                             uses_memory, write)
from ..trees import binomial_children
from ..validate import check_positive_int

__all__ = [
    "cas_spin_lock", "ttas_backoff_lock", "reader_writer_lock", "broken_lock", "LOCKS",
    "simple_barrier", "binomial_barrier", "BARRIERS", "lock_demo", "barrier_demo",
    "barrier_violation", "barriers_respected", "diffusion", "diffusion_table",
    "format_diffusion_table", "DiffusionRow", "BOOK_TABLE_13_2", "run_with_threads", "SOURCE",
]

SOURCE = "Sanders et al. 2019, §13.4"


# -- locks (§13.4.1) -----------------------------------------------------------------

class cas_spin_lock:
    """Spin lock: repeat a compare-and-swap of the lock cell from 0 to 1 until it succeeds.

    Sanders et al. 2019, §13.4.1 ("repeat until CAS(i, desired := 0, 1)").
    The cell holds 0 (free) or 1 (taken); releasing writes 0, no CAS needed.
    Model: sequentially consistent shared memory with an atomic CAS.  Every
    attempt is a CAS, i.e. a write to the lock's line, so waiting PEs keep
    taking the line away from each other and from the holder.
    """
    source = "Sanders et al. 2019, §13.4.1 (spin lock with CAS)"
    shared = False

    def __init__(self, me: int, p: int, cell="lock"):
        self.me, self.p, self.cell = me, p, cell

    @staticmethod
    def memory(p: int, cell="lock") -> dict:
        return {cell: 0}

    def acquire(self):
        while not (yield cas(self.cell, 0, 1)):
            pass                                  # spin: try again at once

    def release(self):
        yield write(self.cell, 0)


class ttas_backoff_lock:
    """Test-and-test-and-set lock with exponential back-off.

    Sanders et al. 2019, §13.4.1, procedure *lock*: read the cell first and
    try the expensive CAS only when it reads 0; while it reads 1, back off.
    The back-off period is multiplied by ``factor`` after every busy read,
    up to ``longest`` (Theta(p); default ``4 p``), and divided by ``factor``
    after a successful acquisition.  The period is PE-local state, kept in
    the instance from one acquisition to the next.  Model: as
    :class:`cas_spin_lock`; waiting PEs spin on their cached copy (cheap
    hits) and only the line's change to 0 sends them to it again.
    """
    source = "Sanders et al. 2019, §13.4.1 (procedure lock, exponential backoff)"
    shared = False

    def __init__(self, me: int, p: int, cell="lock", first: float = 1, factor: float = 2,
                 longest: float | None = None):
        if not isinstance(first, Real) or first <= 0:
            raise ValueError(f"first back-off must be a positive number, got {first!r}")
        if not isinstance(factor, Real) or factor < 1:
            raise ValueError(f"back-off factor must be >= 1, got {factor!r}")
        self.me, self.p, self.cell = me, p, cell
        self.first, self.factor = first, factor
        self.longest = 4 * p * first if longest is None else longest
        self.delay = first

    @staticmethod
    def memory(p: int, cell="lock") -> dict:
        return {cell: 0}

    def acquire(self):
        while True:
            if (yield read(self.cell)) == 1:                  # taken: wait a bit
                yield pause(self.delay)
                self.delay = min(self.delay * self.factor, self.longest)
            elif (yield cas(self.cell, 0, 1)):               # looked free: try it
                self.delay = max(self.first, self.delay / self.factor)
                return

    def release(self):
        yield write(self.cell, 0)


class reader_writer_lock:
    """Reader-writer spin lock: the cell counts readers, or holds p + 1 for a writer.

    Sanders et al. 2019, §13.4.1: the cell is ``p + 1`` while a writer holds
    the lock (p bounds the number of threads), otherwise it is the number of
    readers.  A writer waits for 0 and changes it to ``p + 1`` with a CAS.
    A reader waits for a value ``<= p`` and adds 1 with a fetch-and-add; if
    the old value shows that a writer got in first, it takes its 1 back and
    waits again.  Releasing subtracts what was added (a writer subtracts
    ``p + 1`` rather than writing 0, so that the tentative increments of
    readers that are backing out are not lost).  ``acquire``/``release`` are
    the writer's procedures, so the lock also serves as an exclusive lock.
    """
    source = "Sanders et al. 2019, §13.4.1 (readers and writers, p + 1 for a writer)"
    shared = True

    def __init__(self, me: int, p: int, cell="rwlock", backoff: float = 1):
        self.me, self.p, self.cell, self.backoff = me, p, cell, backoff
        self.writer = p + 1

    @staticmethod
    def memory(p: int, cell="rwlock") -> dict:
        return {cell: 0}

    def acquire_write(self):
        while True:
            if (yield read(self.cell)) != 0:
                yield pause(self.backoff)
            elif (yield cas(self.cell, 0, self.writer)):
                return

    def release_write(self):
        yield fetch_add(self.cell, -self.writer)

    def acquire_read(self):
        while True:
            while (yield read(self.cell)) > self.p:          # a writer holds it
                yield pause(self.backoff)
            if (yield fetch_add(self.cell, 1)) <= self.p:     # no writer: we are in
                return
            yield fetch_add(self.cell, -1)                    # a writer came first: undo

    def release_read(self):
        yield fetch_add(self.cell, -1)

    acquire = acquire_write
    release = release_write


class broken_lock(cas_spin_lock):
    """A lock that does not work: wait until the cell reads 0, then write 1.

    The test and the set are two separate operations, so two PEs can both
    read 0 before either writes 1, and both enter.  It is here to be caught by
    :func:`~collective_lib.shared_memory.find_violation`; the CAS of
    :class:`cas_spin_lock` (Sanders et al. 2019, §13.4.1) is what fixes it.
    The cell and the release are the spin lock's; only the acquire differs.
    """
    source = "counterexample to Sanders et al. 2019, §13.4.1 (no CAS)"

    def acquire(self):
        while (yield read(self.cell)) != 0:
            pass
        yield write(self.cell, 1)                 # too late: another PE may be here too


LOCKS = {"cas_spin_lock": cas_spin_lock, "ttas_backoff_lock": ttas_backoff_lock,
         "reader_writer_lock": reader_writer_lock, "broken_lock": broken_lock}


# -- barriers (§13.4.2, §13.4.3) -----------------------------------------------------

class simple_barrier:
    """The folklore counter barrier (Sanders et al. 2019, §13.4.3, Listing 13.1).

    Shared cells: the arrival counter ``c`` and the ``epoch``, each on its own
    cache line.  A PE notes the epoch, then increments ``c`` with a
    fetch-and-add.  The PE that sees ``p - 1`` arrived last: it resets ``c`` to
    0 and then advances the epoch.  The others spin until the epoch moves.
    Model: atomic fetch-and-add; in the coherence model the p increments of
    ``c`` are served one after the other, which is what makes this barrier
    cost Theta(p) line transfers.
    """
    source = "Sanders et al. 2019, §13.4.3, Listing 13.1"

    def __init__(self, me: int, p: int, name: str = "barrier", backoff: float = 1):
        self.me, self.p, self.backoff = me, p, backoff
        self.count, self.epoch = f"{name}.c", f"{name}.epoch"

    @staticmethod
    def memory(p: int, name: str = "barrier") -> dict:
        return {f"{name}.c": 0, f"{name}.epoch": 0}

    def wait(self):
        start_epoch = yield read(self.epoch)
        if (yield fetch_add(self.count, 1)) == self.p - 1:       # the last to arrive
            yield write(self.count, 0)                           # reset first,
            yield write(self.epoch, start_epoch + 1)             # then release everybody
        else:
            while (yield read(self.epoch)) == start_epoch:
                yield pause(self.backoff)


class binomial_barrier:
    """Binomial-tree barrier with readyEpoch counters.

    Sanders et al. 2019, §13.4.2, Fig. 13.10 (pseudocode) and §13.4.3,
    Listing 13.2 (implementation).

    A binomial-tree reduction followed by an implicit broadcast.  Each PE
    owns one cell ``readyEpoch[me]`` (on its own line) that only it writes,
    and counts locally how often it called the barrier (``epoch``).  In a
    call it increments ``epoch``, waits until the readyEpoch of each of its
    binomial-tree children (``collective_lib.trees.binomial_children``,
    smallest subtree first) equals ``epoch``, sets its own readyEpoch to
    ``epoch``, and finally waits until ``readyEpoch[0]`` (the root's) equals
    ``epoch``.  Counters instead of flags mean that nothing has to be reset
    between barriers.  Model: plain reads and writes suffice; each line is
    written by one PE and read by its parent and, for the root's, by all.
    """
    source = "Sanders et al. 2019, §13.4.2 Fig. 13.10 and §13.4.3 Listing 13.2"

    def __init__(self, me: int, p: int, name: str = "barrier", backoff: float = 1):
        self.me, self.p, self.backoff = me, p, backoff
        self.ready = f"{name}.readyEpoch"
        self.children = sorted(binomial_children(me, p))      # me + 1, me + 2, me + 4, ...
        self.epoch = 0                                        # calls so far (PE-local)

    @staticmethod
    def memory(p: int, name: str = "barrier") -> dict:
        return cell_array(f"{name}.readyEpoch", p, 0)

    def wait(self):
        self.epoch += 1
        for child in self.children:                           # reduce up the tree
            while (yield read((self.ready, child))) != self.epoch:
                yield pause(self.backoff)
        yield write((self.ready, self.me), self.epoch)         # my subtree is done
        while (yield read((self.ready, 0))) != self.epoch:     # implicit broadcast
            yield pause(self.backoff)


BARRIERS = {"simple_barrier": simple_barrier, "binomial_barrier": binomial_barrier}


# -- driver programs -----------------------------------------------------------------

def _lock_demo_memory(p, lock=cas_spin_lock, **_):
    return {**lock.memory(p), "counter": 0}


@uses_memory(_lock_demo_memory)
def lock_demo(me, p, data, lock=cas_spin_lock, rounds: int = 2, reads: bool = False,
              think: float = 0, hold: float = 0):
    """Each PE enters a critical section ``rounds`` times, guarded by ``lock``.

    In the section (marked ``enter("cs")`` / ``leave("cs")``) the PE reads the
    shared ``counter`` and writes it back plus one, a lost update if two PEs
    are ever inside together.  With ``reads=True`` and a lock that has a
    shared mode (:class:`reader_writer_lock`), rounds with ``me + round`` odd
    are read-only sections, marked ``"read"``, under the read lock.
    ``think`` pauses before each round and ``hold`` inside each section.  Returns the number of increments the
    PE made, so a correct lock leaves ``counter == sum(results)``.
    """
    rounds = check_positive_int("rounds", rounds, least=0)
    if reads and not getattr(lock, "shared", False):
        raise ValueError(f"reads=True needs a lock with a read mode, such as "
                         f"reader_writer_lock; {getattr(lock, '__name__', lock)} has none")
    mine = lock(me, p)
    increments = 0
    for r in range(rounds):
        if think:
            yield pause(think)
        if reads and (me + r) % 2 == 1:
            yield from mine.acquire_read()
            yield enter("read")
            yield read("counter")
            if hold:
                yield pause(hold)
            yield leave("read")
            yield from mine.release_read()
        else:
            yield from mine.acquire()
            yield enter("cs")
            value = yield read("counter")
            if hold:
                yield pause(hold)
            yield write("counter", value + 1)
            yield leave("cs")
            yield from mine.release()
            increments += 1
    return increments


def _barrier_demo_memory(p, barrier=simple_barrier, **_):
    return barrier.memory(p)


@uses_memory(_barrier_demo_memory)
def barrier_demo(me, p, data, barrier=simple_barrier, epochs: int = 3, work=0,
                 backoff: float = 1):
    """Each PE passes ``epochs`` barriers, noting ``("arrive", e)`` and ``("depart", e)``.

    ``work`` is the local work before each barrier: a number, or a callable
    ``work(me, e)`` so that PEs arrive at different times.  Returns the
    number of barriers passed.  :func:`barriers_respected` checks the trace.
    """
    epochs = check_positive_int("epochs", epochs, least=0)
    mine = barrier(me, p, backoff=backoff)
    for e in range(1, epochs + 1):
        units = work(me, e) if callable(work) else work
        if units:
            yield pause(units)
        yield note("arrive", e)
        yield from mine.wait()
        yield note("depart", e)
    return epochs


def barrier_violation(run: SharedRun):
    """The first ``depart`` event of an epoch that precedes an ``arrive`` of that epoch, or None.

    A barrier is correct when no PE leaves epoch e before all p PEs arrived
    at it.  Works on partial runs too (only the trace is read).
    """
    arrived = {}
    for e in run.trace:
        if e.op != "note":
            continue
        if e.cell == "arrive":
            arrived[e.value] = arrived.get(e.value, 0) + 1
        elif e.cell == "depart" and arrived.get(e.value, 0) < run.p:
            return e
    return None


def barriers_respected(run: SharedRun) -> bool:
    """True if no PE left a barrier epoch before every PE had arrived at it."""
    return barrier_violation(run) is None


# -- the diffusion benchmark (§13.4.3, Table 13.2) -----------------------------------

def _diffusion_memory(p, barrier=binomial_barrier, **_):
    return barrier.memory(p)


@uses_memory(_diffusion_memory)
def diffusion(me, p, data, barrier=binomial_barrier, n_per_pe: int = 100,
              iterations: int = 4, work_per_element: float = 1, backoff: float = 10):
    """The diffusion benchmark of Sanders et al. 2019, §13.4.3, in the shared-memory model.

    Each iteration every PE averages its ``n_per_pe`` array entries (modelled
    as ``pause(n_per_pe * work_per_element)``; the neighbours' values it reads
    are not modelled) and then all PEs meet at the barrier.  Returns the
    number of iterations.
    """
    n_per_pe = check_positive_int("n_per_pe", n_per_pe)
    iterations = check_positive_int("iterations", iterations)
    mine = barrier(me, p, backoff=backoff)
    for _ in range(iterations):
        yield pause(n_per_pe * work_per_element)
        yield from mine.wait()
    return iterations


#: Table 13.2 of Sanders et al. 2019, §13.4.3: running times in milliseconds
#: (median of nine runs) of the diffusion benchmark with k = 10^8 p / n
#: iterations on a four-socket machine.  Rows: (p, n/p, simple barrier,
#: binomial tree barrier, speedup).
BOOK_TABLE_13_2 = (
    (64, 100, 6826, 3702, 1.84),
    (64, 1_000, 895, 580, 1.54),
    (64, 10_000, 335, 318, 1.05),
    (64, 100_000, 282, 279, 1.01),
    (64, 1_000_000, 2371, 2341, 1.01),
    (128, 100, 8012, 3413, 2.35),
    (128, 1_000, 1465, 790, 1.85),
    (128, 10_000, 632, 571, 1.11),
    (128, 100_000, 3006, 2917, 1.03),
    (128, 1_000_000, 3945, 3897, 1.01),
)


class DiffusionRow(NamedTuple):
    """One row of :func:`diffusion_table`: model times per iteration beside the book's row."""
    p: int
    n_per_pe: int
    simple: float              # model time per iteration, simple barrier
    binomial: float            # model time per iteration, binomial tree barrier
    speedup: float             # simple / binomial
    book_simple_ms: float | None      # the book's total for k = 10^8 p / n iterations
    book_binomial_ms: float | None    # (the same work per thread in every row)
    book_speedup: float | None


def diffusion_table(ps=(64, 128), sizes=(100, 1_000, 10_000, 100_000, 1_000_000), *,
                    iterations: int = 4, model: CoherenceModel | None = None,
                    work_per_element: float = 1, backoff: float | None = None,
                    line_of=None) -> list:
    """Simulate the diffusion benchmark for both barriers, in the shape of Table 13.2.

    For every p and n/p it runs :func:`diffusion` with :class:`simple_barrier`
    and with :class:`binomial_barrier` in the timed mode and reports the time
    per iteration (makespan / iterations) and the speedup, next to the
    book's numbers (:data:`BOOK_TABLE_13_2`) where the book has that row.
    The book keeps the work per thread fixed (k = 10^8 p / n iterations), so
    its speedup column is the ratio of per-iteration times too.

    ``backoff`` (default: the model's ``miss``) is the pause in the barriers'
    spin loops.  With the default model one unit is roughly ten cycles: an
    element's update costs about one unit and a cache-line transfer ten to
    twenty, which are the proportions of the book's machine.  ``line_of``
    (see :func:`~collective_lib.shared_memory.packed_lines`) removes the
    padding of the barriers' cells, to show false sharing.
    """
    model = CoherenceModel() if model is None else model
    backoff = model.miss if backoff is None else backoff
    book = {(row[0], row[1]): row for row in BOOK_TABLE_13_2}
    rows = []
    for p in ps:
        for n in sizes:
            times = []
            for barrier in (simple_barrier, binomial_barrier):
                run = simulate_shared(diffusion, p, model=model, trace=False, line_of=line_of,
                                      barrier=barrier, n_per_pe=n, iterations=iterations,
                                      work_per_element=work_per_element, backoff=backoff)
                times.append(run.time / iterations)
            ref = book.get((p, n))
            rows.append(DiffusionRow(p, n, times[0], times[1], times[0] / times[1],
                                     ref[2] if ref else None, ref[3] if ref else None,
                                     ref[4] if ref else None))
    return rows


def format_diffusion_table(rows) -> str:
    """The rows of :func:`diffusion_table` as a text table beside the book's Table 13.2."""
    lines = [f"{'p':>4} {'n/p':>9} | {'model: simple':>13} {'binomial':>9} {'speedup':>7} | "
             f"{'book: simple':>12} {'binomial':>9} {'speedup':>7}",
             "-" * 86]
    for r in rows:
        book = (f"{r.book_simple_ms:>9g} ms {r.book_binomial_ms:>6g} ms {r.book_speedup:>7.2f}"
                if r.book_speedup is not None else f"{'-':>12} {'-':>9} {'-':>7}")
        lines.append(f"{r.p:>4} {r.n_per_pe:>9} | {r.simple:>13.0f} {r.binomial:>9.0f} "
                     f"{r.speedup:>7.2f} | {book}")
    return "\n".join(lines)
