"""The message trace of a run as comparable tuples (the tests of the chapters' claims use it)."""


def trace(run) -> list:
    """(src, dst, start, end, words) of every message of ``run``, in trace order."""
    return [(m.src, m.dst, m.start, m.end, m.words) for m in run.messages]
