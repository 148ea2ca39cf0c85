"""BLAS threads at start-up: the imports of a candor command load OpenBLAS with one thread.

candor calls no BLAS routine (no matrix product, no ``numpy.linalg``; its one ``einsum`` is
unoptimised, so it never reaches BLAS). Yet every OpenBLAS library, as it loads, starts one worker
thread per core, and those threads spin for a while before they sleep: numpy carries one such
library and SciPy another, so on two cores the ``stats`` stage's start-up ran three threads and paid
about 0.25 s of CPU time for them, and about 0.08 s of wall time while they competed with the
stage's own work (bench/RESULTS.md, section 4). OpenBLAS reads its thread count once, from
``OPENBLAS_NUM_THREADS``, when it loads.

:func:`one_blas_thread` sets that variable to ``1`` around the import of a command's module (where
numpy and SciPy load) and removes it afterwards, so that no process the command starts (a provider's
program, DVC, git) inherits it. A value the user set is kept as it is.
"""
from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

THREADS_VARIABLE = "OPENBLAS_NUM_THREADS"


@contextmanager
def one_blas_thread() -> Iterator[None]:
    """Within the block, ``OPENBLAS_NUM_THREADS=1`` unless the user set it; afterwards, as it was."""
    if THREADS_VARIABLE in os.environ:
        yield
        return
    os.environ[THREADS_VARIABLE] = "1"
    try:
        yield
    finally:
        del os.environ[THREADS_VARIABLE]
