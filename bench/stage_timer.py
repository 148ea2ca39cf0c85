"""One stage's command timed from inside a ``dvc exp run`` step (bench/sweep.py, "inside the step").

    python -S bench/stage_timer.py LOG CMD [ARG ...]

runs ``CMD`` and appends ``<name> <wall s> <cpu s>`` to ``LOG``: ``name`` the word after ``CMD`` (a
candor subcommand), ``wall`` the command's own wall time, ``cpu`` the user + system time of the
command and of every process it waited for (a stage's forked workers included); it exits with
the command's code. It starts a bare interpreter (``-S``) and imports nothing the interpreter does
not hold built in, so that it adds to the step as little as it can; the bench measures what it
still adds and takes that out of the step.
"""
import os
import resource
import sys
import time

log, cmd = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
pid = os.posix_spawnp(cmd[0], cmd, os.environ)
_, status = os.waitpid(pid, 0)
wall = time.perf_counter() - t0
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(log, "a", encoding="utf-8") as f:
    f.write(f"{cmd[1] if len(cmd) > 1 else cmd[0]} {wall:.4f} {usage.ru_utime + usage.ru_stime:.4f}\n")
sys.exit(os.waitstatus_to_exitcode(status))
