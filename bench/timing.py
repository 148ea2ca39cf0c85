"""Run a command as a child process and measure it: wall time and peak RSS (from wait4)."""
from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Measured:
    """One run: wall seconds, the child's own peak resident set size in MB, and its stdout."""

    wall_s: float
    peak_rss_mb: float
    stdout: str


def measure(cmd: list[str], *, env: dict[str, str] | None = None, cwd: str | None = None) -> Measured:
    """Run ``cmd`` once and reap it with ``os.wait4`` (per-child rusage); fail on non-zero exit."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=cwd, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{err.read()[-2000:]}")
        return Measured(wall, usage.ru_maxrss / 1024, out.read())


def median(xs: list[float]) -> float:
    return statistics.median(xs)
