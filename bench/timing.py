"""Run a command as a child process and measure it: wall time and its own peak RSS (from wait4)."""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Measured:
    """One run: wall seconds, the child's own peak resident set size in MB, and its stdout."""

    wall_s: float
    peak_rss_mb: float
    stdout: str


# Runs the measured command as its own child and reports that child's peak RSS. Measuring the
# command as our direct child would not do: a forked child starts as a copy of this (large)
# process, and Linux keeps that copy's peak in the child's ru_maxrss even after exec. The launcher
# is a bare interpreter (~10 MB), so what it forks starts small.
LAUNCHER = ("import os, sys\n"
            "pid = os.fork()\n"
            "if pid == 0:\n"
            "    os.execvp(sys.argv[1], sys.argv[1:])\n"
            "_, status, usage = os.wait4(pid, 0)\n"
            "sys.stderr.write(f'\\n{MARK} {usage.ru_maxrss}\\n')\n"
            "sys.exit(os.waitstatus_to_exitcode(status))\n")
MARK = "candor-bench-peak-rss-kb"


def bench_env(**extra: str) -> dict[str, str]:
    """This process's environment as Python leaves it by default, plus ``extra``: without
    ``PYTHONDONTWRITEBYTECODE``, so a measured command's own modules are compiled once and then
    loaded from ``__pycache__`` (as the installed packages of candor and of the peers are), not
    recompiled at every start because the shell running the bench happens to set it."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, **extra}


def measure(cmd: list[str], *, env: dict[str, str] | None = None, cwd: str | None = None) -> Measured:
    """Run ``cmd`` once through :data:`LAUNCHER` (its own peak RSS, see there) in ``env`` (default
    :func:`bench_env`); fail on non-zero exit."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.run([sys.executable, "-S", "-c", LAUNCHER.replace("{MARK}", MARK), *cmd],
                              stdout=out, stderr=err, env=bench_env() if env is None else env, cwd=cwd, text=True)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        errors = err.read()
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{errors[-2000:]}")
        peak_kb = int(errors.rsplit(MARK, 1)[1].split()[0])
        return Measured(wall, peak_kb / 1024, out.read())


def median(xs: list[float]) -> float:
    return statistics.median(xs)
