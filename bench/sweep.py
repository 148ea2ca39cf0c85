"""Sweep step: ``dvc exp run -S thresholds.deer=...`` against a no-op ``dvc repro``, on a clone.

Never in the working checkout: ``git clone`` of this repository into a temporary folder and a
full ``dvc repro`` there once. Then, ``repeats`` times each, whole-pipeline commands as a user
types them (no stage targets):

- ``dvc repro`` with nothing changed (the reference);
- ``dvc exp run -S thresholds.deer=V`` with V distinct from the committed value and from each
  other (so DVC's run cache can never replay an earlier result): a real sweep step; every
  experiment is checked: ``score-detection`` ran and no ``detect@`` stage ran;
- right after it, the literal command at the value the workspace now holds (``-S
  thresholds.deer=V`` again): nothing changes and DVC runs no stage; what is left is ``dvc exp``'s
  own bookkeeping (a floor no stage of ours can lower). The three commands alternate, one of
  each per round, so machine load falls on all of them alike;
- the same kind of change as an edit of ``params.yaml`` plus ``dvc repro`` (what ``dvc exp``
  adds on top of the stages);
- DVC's own cost of the stages a real step reruns: the same real and literal experiments, alternating,
  after those stages' commands are replaced by shell copies of their outputs (no Python at all;
  one copied file differs per value, so each run has a change to record). What a real step costs
  above this is the stages' own processes; what this costs above the literal experiment is DVC's
  per-stage bookkeeping, which no stage can lower. It runs on a second clone, one round of its two
  commands right after each round of the first clone's, so load falls on both alike, and the
  project's share of a step by difference is ``(real - copy-command) / real``: of the two
  medians, and round by round (each real step against the copy-command step right after it, the
  median and quartiles of those shares: on a shared machine whose speed drifts between rounds, the
  paired figure is the steadier one), in wall time and in CPU time (user + system of every process
  the step ran);
- the same real experiment on a third clone whose rerun stages' commands run under
  ``bench/stage_timer.py``, which logs each command's own wall and CPU time: the project's share
  timed from inside the step, ``sum(stage commands) / (step - what the timers themselves cost)``
  (each timer's cost measured alone, :func:`timer_cost`), one round of it after each round of the
  others. This is the issue's quantity itself, read within one step; the difference above also
  counts whatever DVC does differently for the real outputs than for the copies, and crosses two
  clones. The target is met when its median is within 20% in wall and in CPU time alike.

Then each command a step reruns, alone (its ``dvc.lock`` command, as DVC runs it: wall time, the
median of ``repeats`` rounds of one run each) and once under ``python -X importtime`` (where its start-up goes: the
import time of each top-level package, summed over its modules' own times; ``-X importtime``
adds its own overhead, so these sums are upper bounds).

Every clone runs its own code: ``PYTHONPATH`` is the clone, so ``candor`` imports the commit
measured, not whichever candor the interpreter has installed; a clone whose ``candor.lock`` is not
that code's (a branch before the lock refresh) gets ``candor lock`` and a commit first
(``lock_refreshed``), since every stage refuses to run on a stale lock.
"""
from __future__ import annotations

import os
import re
import resource
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import bench_env, measure, median  # noqa: E402 - after the sys.path line above

ROOT = Path(__file__).resolve().parent.parent


def _env(clone: Path | None = None) -> dict[str, str]:
    """The bench's environment; with ``clone``, its code first on ``PYTHONPATH`` (module docstring)."""
    code = {} if clone is None else {"PYTHONPATH": str(clone)}
    return bench_env(PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
                     DVC_NO_ANALYTICS="1", GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@localhost",
                     GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@localhost", **code)


def _timed(cmd: list[str], cwd: Path) -> tuple[float, float, str]:
    """``cmd`` run in ``cwd``: its wall seconds, its CPU seconds (user + system of the command and of every
    process it waited for, the stage processes DVC runs included) and its output; fails on a non-zero exit."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=_env(cwd), capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed in {cwd}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout + proc.stderr


def paired_share(real: list[float], copy: list[float]) -> dict[str, float]:
    """The project's share of a step round by round, ``(real_i - copy_i) / real_i`` for the real step and the
    copy-command step of round ``i`` (run back to back, so load that drifts between rounds falls on both):
    its median and quartiles."""
    return quartiles([(r - c) / r for r, c in zip(real, copy, strict=True)])


def quartiles(shares: list[float]) -> dict[str, float]:
    """The median and quartiles of per-round shares (inclusive quartiles; one round: all three its share)."""
    q1, q3 = (statistics.quantiles(shares, n=4, method="inclusive")[::2] if len(shares) > 1
              else (shares[0], shares[0]))
    return {"median": round(median(shares), 3), "q1": round(q1, 3), "q3": round(q3, 3)}


def sweep_values(params: Path, n: int) -> list[float]:
    """``n`` distinct deer thresholds above the committed one (never the committed value, so
    every experiment changes something; all within [floor, 1] for any committed value <= 0.9)."""
    import yaml

    current = float(yaml.safe_load(params.read_text())["thresholds"].get("deer", 0.0))
    return [round(current + 0.01 * k, 2) for k in range(1, n + 1)]


def _git(clone: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=clone, check=True, env=_env(clone))


def make_clone(tmp: Path, name: str, rev: str = "HEAD") -> tuple[Path, float, bool]:
    """A ``git clone`` of this repository at ``rev`` under ``tmp``, its lock made its code's (module
    docstring) and the whole pipeline reproduced: the clone, the repro's seconds, and whether the
    lock was refreshed."""
    clone = tmp / name
    subprocess.run(["git", "clone", "-q", "--no-checkout", str(ROOT), str(clone)], check=True, env=_env())
    sha = subprocess.run(["git", "rev-parse", "--verify", f"{rev}^{{commit}}"], cwd=ROOT, check=True, env=_env(),
                         capture_output=True, text=True).stdout.strip()
    _git(clone, "checkout", "-q", "-B", "bench", sha)
    check = subprocess.run(["candor", "check"], cwd=clone, env=_env(clone), capture_output=True, text=True)
    if check.returncode != 0:
        _timed(["candor", "lock"], clone)
        _git(clone, "commit", "-qam", "bench: candor.lock of this code")
    setup_s, _, _ = _timed(["dvc", "repro"], clone)
    return clone, setup_s, check.returncode != 0


def rewrite_commands(clone: Path, stages: list[str], command: Callable[[dict], str], message: str) -> None:
    """Set the command of each of ``stages`` (``name`` or ``name@key``) in the clone's ``dvc.yaml`` to
    ``command(body)`` (``body`` the stage's definition), then reproduce once and commit with ``message``,
    so the outputs' hashes are locked and the next experiments start clean."""
    import yaml

    doc = yaml.safe_load((clone / "dvc.yaml").read_text())
    for name in sorted({s.split("@")[0] for s in stages}):
        body = doc["stages"][name].get("do", doc["stages"][name])
        body["cmd"] = command(body)
    (clone / "dvc.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    _timed(["dvc", "repro"], clone)
    _git(clone, "add", "-A")
    _git(clone, "commit", "-qm", message)


def copy_commands(clone: Path, stages: list[str], snapshot: Path) -> None:
    """The commands of ``stages`` replaced by shell commands that copy each output back from ``snapshot``
    (a copy of the clone's outputs) and append ``params.yaml`` to the first (:func:`rewrite_commands`)."""
    def copies(body: dict) -> str:
        outs = [o if isinstance(o, str) else next(iter(o)) for o in body.get("outs", []) + body.get("metrics", [])]
        steps = [f"mkdir -p $(dirname {shlex.quote(o)}) && cp -R {shlex.quote(str(snapshot / o))} {shlex.quote(o)}"
                 for o in outs]
        first = outs[0] if (snapshot / outs[0]).is_file() else f"{outs[0]}/params.yaml"   # a file, or a folder
        return " && ".join(steps + [f"cat params.yaml >> {shlex.quote(first)}"])

    rewrite_commands(clone, stages, copies, "bench: stage commands that only copy their outputs")


TIMER = Path(__file__).resolve().parent / "stage_timer.py"


def time_commands(clone: Path, stages: list[str], log: Path) -> None:
    """The commands of ``stages`` run under :data:`TIMER`, which appends each one's wall and CPU seconds to
    ``log`` (:func:`rewrite_commands`)."""
    timer = shlex.join([sys.executable, "-S", str(TIMER), str(log)])
    rewrite_commands(clone, stages, lambda body: f"{timer} {body['cmd']}",
                     "bench: stage commands timed from inside the step")


def timer_cost(repeats: int, log: Path) -> tuple[float, float]:
    """What :data:`TIMER` itself adds to a step per stage, wall and CPU seconds: the median over ``repeats``
    runs of it timing ``true``, less what it logged for ``true``."""
    walls, cpus = [], []
    for _ in range(repeats):
        log.unlink(missing_ok=True)
        wall, cpu, _ = _timed([sys.executable, "-S", str(TIMER), str(log), "true"], log.parent)
        _, inner_wall, inner_cpu = log.read_text().split()
        walls.append(wall - float(inner_wall))
        cpus.append(cpu - float(inner_cpu))
    log.unlink()
    return median(walls), median(cpus)


def inside_share(step: float, stages: list[float], timer: float) -> float:
    """The stage processes' share of one step, timed from inside it: their sum over the step, less the
    :data:`TIMER` processes' own cost (``timer`` each) that the step paid and the project did not.

    >>> inside_share(4.5, [0.25, 0.75], 0.25)
    0.25
    """
    return sum(stages) / (step - timer * len(stages))


def stage_commands(clone: Path, stages: list[str]) -> dict[str, str]:
    """The command DVC ran for each of ``stages`` (``name`` or ``name@key``), from the clone's ``dvc.lock``."""
    import yaml

    lock = yaml.safe_load((clone / "dvc.lock").read_text())["stages"]
    return {s: " ".join(lock[s]["cmd"].split()) for s in stages}


def import_times(stderr: str) -> dict[str, float]:
    """``python -X importtime``'s report summed by top-level package: each module's own (self) time
    counted once, under the first part of its dotted name; ``total`` the sum of all (seconds).

    >>> import_times("import time: self [us] | cumulative | imported package\\n"
    ...              "import time:       300 |        300 |   numpy.core\\n"
    ...              "import time:       200 |        500 | numpy\\n"
    ...              "import time:      1000 |       1000 | candor_eval.stats\\n")
    {'candor_eval': 0.001, 'numpy': 0.0005, 'total': 0.0015}
    """
    by: dict[str, float] = {}
    for line in stderr.splitlines():
        m = re.match(r"import time:\s+(\d+) \|\s+\d+ \| ( *)(\S+)", line)
        if m:
            top = m.group(3).split(".")[0]
            by[top] = by.get(top, 0.0) + int(m.group(1)) / 1e6
    out = dict(sorted(by.items(), key=lambda kv: -kv[1]))
    return {**{k: round(v, 4) for k, v in out.items()}, "total": round(sum(by.values()), 4)}


def stages_alone(clone: Path, cmds: dict[str, str], repeats: int) -> dict[str, dict]:
    """Each rerun stage's command (stage -> its ``dvc.lock`` command) run alone in ``clone`` (it rewrites
    the outputs the workspace already holds, byte for byte), one of each per round: median wall
    seconds of ``repeats`` rounds, and ``-X importtime`` of one run (``imports_s``: the largest
    packages and the total, :func:`import_times`)."""
    walls: dict[str, list[float]] = {s: [] for s in cmds}
    for _ in range(repeats):
        for stage, cmd in cmds.items():
            walls[stage].append(measure(shlex.split(cmd), cwd=str(clone), env=_env(clone)).wall_s)
    out = {}
    for stage, cmd in cmds.items():
        argv = shlex.split(cmd)
        traced = [sys.executable, "-X", "importtime", "-m", "candor_eval", *argv[1:]] if argv[0] == "candor" else argv
        proc = subprocess.run(traced, cwd=clone, env=_env(clone), capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd} under -X importtime failed:\n{proc.stderr[-2000:]}")
        imports = import_times(proc.stderr)
        top = dict(list((k, v) for k, v in imports.items() if k != "total")[:8])
        out[stage] = {"cmd": cmd, "wall_s": round(median(walls[stage]), 3),
                      "imports_s": {**top, "total": imports["total"]}}
    return out


def bench_sweep(repeats: int, rev: str = "HEAD") -> dict:
    """Section 4 of ``bench/RESULTS.md`` (module docstring), on clones of this repository at ``rev``."""
    tmp = Path(tempfile.mkdtemp(prefix="candor-sweep-"))
    try:
        clone, setup_s, refreshed = make_clone(tmp, "clone", rev)
        copy_clone, _, _ = make_clone(tmp, "copy", rev)
        # the stages a threshold change reruns, from one real step on the copy clone (not timed); then its
        # commands of those stages become copies of their outputs
        warm = sweep_values(copy_clone / "params.yaml", repeats + 1)[-1]
        _, _, out = _timed(["dvc", "exp", "run", "-S", f"thresholds.deer={warm}"], copy_clone)
        reran = sorted(set(re.findall(r"Running stage '([^']+)'", out)))
        snapshot = tmp / "outputs"
        shutil.copytree(copy_clone, snapshot, ignore=shutil.ignore_patterns(".git", ".dvc"))
        copy_commands(copy_clone, reran, snapshot)
        timed_clone, _, _ = make_clone(tmp, "timed", rev)
        log = tmp / "stages.log"
        time_commands(timed_clone, reran, log)
        timer_wall, timer_cpu = timer_cost(repeats, tmp / "timer.log")
        inside_wall, inside_cpu = [], []
        timed_values = sweep_values(timed_clone / "params.yaml", repeats)
        noop, literal, exp, reran_detect, copy_exp, copy_literal = [], [], [], [], [], []
        exp_cpu, copy_cpu = [], []
        values = sweep_values(clone / "params.yaml", 2 * repeats)   # read before any experiment
        copy_values = sweep_values(copy_clone / "params.yaml", repeats)
        # alternating, one of each per round: a real step to V, then the literal command at the value the
        # workspace now holds (V: nothing changes, DVC runs no stage), then a no-op repro; then the same
        # real and literal experiments on the copy clone
        for v, cv, tv in zip(values[:repeats], copy_values, timed_values, strict=True):
            wall, cpu, out = _timed(["dvc", "exp", "run", "-S", f"thresholds.deer={v}"], clone)
            if sorted(set(re.findall(r"Running stage '([^']+)'", out))) != reran:
                raise RuntimeError(f"the experiment did not rerun {reran}:\n{out[-2000:]}")
            reran_detect.append("Running stage 'detect@" in out)
            exp.append(wall)
            exp_cpu.append(cpu)
            wall, _, out = _timed(["dvc", "exp", "run", "-S", f"thresholds.deer={v}"], clone)
            if "Running stage" in out:
                raise RuntimeError(f"the literal (no-op) experiment ran a stage:\n{out[-2000:]}")
            literal.append(wall)
            wall, _, out = _timed(["dvc", "repro"], clone)
            if "Running stage" in out:
                raise RuntimeError(f"the no-op repro ran a stage:\n{out[-2000:]}")
            noop.append(wall)
            wall, cpu, out = _timed(["dvc", "exp", "run", "-S", f"thresholds.deer={cv}"], copy_clone)
            if sorted(set(re.findall(r"Running stage '([^']+)'", out))) != reran:
                raise RuntimeError(f"the copy-command experiment did not rerun {reran}:\n{out[-2000:]}")
            copy_exp.append(wall)
            copy_cpu.append(cpu)
            wall, _, out = _timed(["dvc", "exp", "run", "-S", f"thresholds.deer={cv}"], copy_clone)
            if "Running stage" in out:
                raise RuntimeError(f"the literal (no-op) experiment ran a stage:\n{out[-2000:]}")
            copy_literal.append(wall)
            log.unlink(missing_ok=True)
            wall, cpu, _ = _timed(["dvc", "exp", "run", "-S", f"thresholds.deer={tv}"], timed_clone)
            timed = [line.split() for line in log.read_text().splitlines()]
            if len(timed) != len(reran):
                raise RuntimeError(f"the timed experiment ran {len(timed)} stage commands, not {len(reran)}")
            inside_wall.append(inside_share(wall, [float(t[1]) for t in timed], timer_wall))
            inside_cpu.append(inside_share(cpu, [float(t[2]) for t in timed], timer_cpu))
        plain = []
        for v in values[repeats:]:
            text = (clone / "params.yaml").read_text()
            new = re.sub(r"(?m)^(  deer:\s*)[0-9.]+", rf"\g<1>{v}", text, count=1)
            (clone / "params.yaml").write_text(new)
            wall, _, out = _timed(["dvc", "repro"], clone)
            if "Running stage 'score-detection@detector'" not in out or "Running stage 'detect@" in out:
                raise RuntimeError(f"the edited-params repro did not score only:\n{out[-2000:]}")
            plain.append(wall)
        alone = stages_alone(clone, stage_commands(clone, reran), repeats)
        n_med, lit_med, e_med, p_med = median(noop), median(literal), median(exp), median(plain)
        c_med = median(copy_exp)
        return {"setup_repro_s": round(setup_s, 2), "lock_refreshed": refreshed, "noop_repro_s": round(n_med, 3),
                "literal_exp_run_s": round(lit_med, 3), "ratio_literal": round(lit_med / n_med, 2),
                "exp_run_s": round(e_med, 3), "ratio": round(e_med / n_med, 2), "values": values[:repeats],
                "edit_params_repro_s": round(p_med, 3), "ratio_edit_params_repro": round(p_med / n_med, 2),
                "stages_rerun": reran, "inference_rerun": any(reran_detect),
                "copy_commands_exp_run_s": round(c_med, 3),
                "copy_commands_literal_exp_run_s": round(median(copy_literal), 3),
                "exp_run_cpu_s": round(median(exp_cpu), 3), "copy_commands_exp_run_cpu_s": round(median(copy_cpu), 3),
                "project_share": round((e_med - c_med) / e_med, 3),
                "project_share_paired": paired_share(exp, copy_exp),
                "project_share_cpu": paired_share(exp_cpu, copy_cpu),
                "inside_share": quartiles(inside_wall), "inside_share_cpu": quartiles(inside_cpu),
                "timer_cost_s": {"wall": round(timer_wall, 4), "cpu": round(timer_cpu, 4)}, "stage_alone": alone}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    import argparse
    import json

    parser = argparse.ArgumentParser(description="Section 4 of bench/RESULTS.md: a sweep step (module docstring).")
    parser.add_argument("repeats", nargs="?", type=int, default=3)
    parser.add_argument("--rev", default="HEAD", help="the commit to measure (default HEAD)")
    args = parser.parse_args()
    print(json.dumps(bench_sweep(args.repeats, args.rev), indent=2))
