"""Standard output and standard error flushed where a process will not flush them itself: before it
ends with ``os._exit`` (the ``candor`` command's end, a fork-map worker's), and before a fork (text
still buffered would be written by the parent and the child alike)."""
from __future__ import annotations

import sys


def flush_std_streams() -> bool:
    """Flush ``sys.stdout`` and ``sys.stderr``, each that is set and open; False when a flush failed (a
    broken pipe, a full disk), else True. A failed flush does not stop the other."""
    ok = True
    for stream in (sys.stdout, sys.stderr):
        if stream is None or getattr(stream, "closed", False):
            continue
        try:
            stream.flush()
        except OSError:
            ok = False
    return ok
