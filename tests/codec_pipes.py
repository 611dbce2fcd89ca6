"""A message written into a pipe as the autograder's codec frames it, for the tests of
what reads it (the codec, the checker's handle of a student process)."""
from __future__ import annotations

import contextlib
import os
import struct
import threading


@contextlib.contextmanager
def framed_in_a_pipe(blob: bytes, close: bool = True):
    """The read end of a pipe into which a thread writes ``blob`` as one message, framed
    as the codec frames it (a pipe holds 64 KiB); on exit the thread has ended and, with
    ``close``, the read end is closed."""
    r, w = os.pipe()

    def write():
        data = struct.pack("!I", len(blob)) + blob
        try:
            while data:
                data = data[os.write(w, data):]
        except BrokenPipeError:
            pass
        finally:
            os.close(w)
    writer = threading.Thread(target=write)
    writer.start()
    try:
        yield r
    finally:
        if close:
            os.close(r)
        writer.join()
