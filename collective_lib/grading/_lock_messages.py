"""What the lock checks' messages show: a trace's last lines, a schedule, who is inside,
and the texts of a lock that lets two in, keeps a PE waiting or livelocks (internal to
:mod:`collective_lib.grading`; :mod:`~collective_lib.grading.locks` words its failures
with them)."""
from __future__ import annotations

__all__ = ["TRACE_LINES", "trace_excerpt", "schedule_text", "no_progress_text", "too_slow_text",
           "inside_text", "exclusion_text", "MEMORY_OPERATIONS", "no_operation_hint",
           "livelock_text"]


#: Lines of a trace shown in a message (the last ones before the failure).
TRACE_LINES = 30


def trace_excerpt(trace, upto=None, limit: int = TRACE_LINES) -> str:
    """The trace up to and including index ``upto`` (default: all), at most ``limit`` lines."""
    from ..shared_memory import format_trace
    end = len(trace) if upto is None else upto + 1
    begin = max(0, end - limit)
    text = format_trace(trace, begin, end)
    if begin:
        head, rest = text.split("\n", 1)
        text = f"{head}\n     ...  (the first {begin} entries are left out)\n{rest}"
    return text


def schedule_text(schedule, limit: int = 60) -> str:
    schedule = list(schedule)
    if len(schedule) <= limit:
        return str(schedule)
    return str(schedule[:limit])[:-1] + f", ... ({len(schedule)} steps in all)]"


def no_progress_text(what: str, detail: str) -> str:
    lines = ["  " + line.strip() for line in detail.splitlines()
             if line.strip().startswith("PE ")]
    return (f"{what} never finished: some PEs wait forever.\n" + "\n".join(lines) +
            "\nHint: does release() really free the lock (so that a waiting acquire() can "
            "succeed)? Does acquire() return as soon as it has the lock? A PE that waits "
            "should keep polling, e.g. `while not (yield cas(...)): yield pause(1)`.")


def too_slow_text(what: str, budget: int, factor: int, detail: str) -> str:
    """A timed run stopped after ``budget`` operations (``factor`` times what a correct
    lock needs at most) while its PEs still wrote to shared memory: no PE is seen
    waiting forever, but none may wait that long."""
    lines = ["  " + line.strip() for line in detail.splitlines()
             if line.strip().startswith("PE ")]
    return (f"{what} did not finish within {budget:,} operations, {factor} times what a "
            "correct lock needs at most here, although the PEs kept writing to shared "
            "memory: a livelock, or PEs that wait far too long.\n" + "\n".join(lines) +
            "\nHint: does a failed try change memory (fetch_add, a write) so that the "
            "others fail too? Does release() let a waiting PE in at once? A PE that waits "
            "should only poll, e.g. `while not (yield cas(...)): yield pause(1)`.")


def inside_text(trace, index) -> str:
    """'PE 0 is inside' / 'PEs 0, 2 are inside': who is in a section just before trace[index]."""
    inside = set()
    for e in trace[:index]:
        if e.op == "enter":
            inside.add(e.pe)
        elif e.op == "leave":
            inside.discard(e.pe)
    inside.discard(trace[index].pe)
    pes = sorted(inside)
    if len(pes) == 1:
        return f"PE {pes[0]} is inside"
    return f"PEs {', '.join(map(str, pes))} are inside"


def exclusion_text(what, origin, found, exclusion_violation) -> str:
    bad = exclusion_violation(found.run.trace)
    index = found.run.trace.index(bad) if bad is not None else None
    who = (f"PE {bad.pe} enters the critical section while {inside_text(found.run.trace, index)}"
           if bad is not None else "mutual exclusion breaks")
    steps = len(found.schedule)
    shown = (f"Its first {steps} step{'s' * (steps != 1)} already show it:\n"
             f"schedule {schedule_text(found.schedule)}" if steps else
             "It happens before any step (schedule []): no PE has touched memory yet.")
    hint = bad is not None and no_operation_hint(found.run.trace, index) or (
        "Hint: between seeing the lock free and taking it, another PE can take it too; "
        "the test and the set must be one atomic operation (cas or fetch_add).")
    return (f"{what}:\nunder {origin}, {who}.\n{shown}\n"
            f"{trace_excerpt(found.run.trace, index)}\n{hint}")


#: What a PE's lock does with the shared memory (the other trace entries are markers or
#: pauses).
MEMORY_OPERATIONS = ("read", "write", "cas", "fetch_add")


def no_operation_hint(trace, index) -> str | None:
    """The hint for a PE that entered at ``trace[index]`` without a memory operation
    since it started or last left the section (its acquire() yielded none: a
    forgotten ``yield``), or None."""
    pe = trace[index].pe
    for e in reversed(trace[:index]):
        if e.pe != pe:
            continue
        if e.op == "leave":
            break
        if e.op in MEMORY_OPERATIONS:
            return None
    return (f"Hint: acquire() performed no memory operation before PE {pe} entered: "
            "is a `yield` missing before cas(...)? Without it, cas(...) only describes "
            "the operation; `yield cas(...)` performs it and gives its result.")


def livelock_text(what: str, found) -> str:
    """The message of a livelock of :func:`~collective_lib.shared_memory.find_livelock`."""
    cycle = found.cycle
    before = found.schedule[:len(found.schedule) - len(cycle)]
    shown = trace_excerpt(found.run.trace)
    return (f"{what}: a livelock. After the interleaving {schedule_text(before)}, the "
            f"steps {schedule_text(cycle)} (steps {len(before)} to "
            f"{len(found.schedule) - 1} below) can repeat forever (tried 20 times over): "
            "every PE keeps taking steps, yet none gets into the critical section.\n"
            f"{shown}\nHint: can the waiting PEs keep making each other's tries fail? "
            "Look at what a failed try leaves in the lock's cell, and at what the next try "
            "of the other PE then sees.")
