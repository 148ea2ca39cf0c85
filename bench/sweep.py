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
  per-stage bookkeeping, which no stage can lower.

Also times the scoring command alone (it draws no PNGs: those are ``make figures``).
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import bench_env, measure, median  # noqa: E402 - after the sys.path line above

ROOT = Path(__file__).resolve().parent.parent


def _env() -> dict[str, str]:
    return bench_env(PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
                     DVC_NO_ANALYTICS="1", GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@localhost",
                     GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@localhost")


def _timed(cmd: list[str], cwd: Path) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, env=_env(), capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed in {cwd}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return wall, proc.stdout + proc.stderr


def sweep_values(params: Path, n: int) -> list[float]:
    """``n`` distinct deer thresholds above the committed one (never the committed value, so
    every experiment changes something; all within [floor, 1] for any committed value <= 0.9)."""
    import yaml

    current = float(yaml.safe_load(params.read_text())["thresholds"].get("deer", 0.0))
    return [round(current + 0.01 * k, 2) for k in range(1, n + 1)]


def copy_commands(clone: Path, stages: list[str], snapshot: Path) -> None:
    """Replace the commands of ``stages`` (``name`` or ``name@key``) in the clone's ``dvc.yaml`` by
    shell commands that copy each output back from ``snapshot`` (a copy of the clone's outputs) and
    append ``params.yaml`` to the first, then reproduce once and commit, so the outputs' hashes
    are locked and the next experiments start clean."""
    import yaml

    doc = yaml.safe_load((clone / "dvc.yaml").read_text())
    for name in sorted({s.split("@")[0] for s in stages}):
        body = doc["stages"][name].get("do", doc["stages"][name])
        outs = [o if isinstance(o, str) else next(iter(o)) for o in body.get("outs", []) + body.get("metrics", [])]
        steps = [f"mkdir -p $(dirname {shlex.quote(o)}) && cp -R {shlex.quote(str(snapshot / o))} {shlex.quote(o)}"
                 for o in outs]
        first = outs[0] if (snapshot / outs[0]).is_file() else f"{outs[0]}/params.yaml"   # a file, or a folder
        body["cmd"] = " && ".join(steps + [f"cat params.yaml >> {shlex.quote(first)}"])
    (clone / "dvc.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    _timed(["dvc", "repro"], clone)
    for git in (["add", "-A"], ["commit", "-qm", "bench: stage commands that only copy their outputs"]):
        subprocess.run(["git", *git], cwd=clone, check=True, env=_env())


def bench_sweep(repeats: int) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="candor-sweep-"))
    try:
        clone = tmp / "clone"
        subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, env=_env())
        setup_s, _ = _timed(["dvc", "repro"], clone)
        noop, literal, exp, reran_detect = [], [], [], []
        values = sweep_values(clone / "params.yaml", 2 * repeats)   # read before any experiment
        # alternating, one of each per round: a real step to V, then the literal command at the value the
        # workspace now holds (V: nothing changes, DVC runs no stage), then a no-op repro
        for v in values[:repeats]:
            wall, out = _timed(["dvc", "exp", "run", "-S", f"thresholds.deer={v}"], clone)
            if "Running stage 'score-detection@detector'" not in out:
                raise RuntimeError(f"the experiment did not score:\n{out[-2000:]}")
            reran_detect.append("Running stage 'detect@" in out)
            exp.append(wall)
            wall, out = _timed(["dvc", "exp", "run", "-S", f"thresholds.deer={v}"], clone)
            if "Running stage" in out:
                raise RuntimeError(f"the literal (no-op) experiment ran a stage:\n{out[-2000:]}")
            literal.append(wall)
            wall, out = _timed(["dvc", "repro"], clone)
            if "Running stage" in out:
                raise RuntimeError(f"the no-op repro ran a stage:\n{out[-2000:]}")
            noop.append(wall)
        plain = []
        for v in values[repeats:]:
            text = (clone / "params.yaml").read_text()
            new = re.sub(r"(?m)^(  deer:\s*)[0-9.]+", rf"\g<1>{v}", text, count=1)
            (clone / "params.yaml").write_text(new)
            wall, out = _timed(["dvc", "repro"], clone)
            if "Running stage 'score-detection@detector'" not in out or "Running stage 'detect@" in out:
                raise RuntimeError(f"the edited-params repro did not score only:\n{out[-2000:]}")
            plain.append(wall)
        reran = sorted(set(re.findall(r"Running stage '([^']+)'", out)))
        score_cmd = [sys.executable, "-m", "stages.score_detection", "--set", "detector", "--params", "params.yaml",
                     "--detections", "build/detections/detector", "--models", "models", "--data", "data/detector",
                     "--metrics", str(tmp / "m"), "--outcomes", str(tmp / "o"), "--plots", str(tmp / "p"),
                     "--coco-out", str(tmp / "c")]
        score_s = [measure(score_cmd, cwd=str(clone), env=_env()).wall_s for _ in range(repeats)]
        snapshot = tmp / "outputs"
        shutil.copytree(clone, snapshot, ignore=shutil.ignore_patterns(".git", ".dvc"))
        copy_commands(clone, reran, snapshot)
        copy_exp, copy_literal = [], []
        for v in sweep_values(clone / "params.yaml", repeats):
            wall, out = _timed(["dvc", "exp", "run", "-S", f"thresholds.deer={v}"], clone)
            if sorted(set(re.findall(r"Running stage '([^']+)'", out))) != reran:
                raise RuntimeError(f"the copy-command experiment did not rerun {reran}:\n{out[-2000:]}")
            copy_exp.append(wall)
            wall, out = _timed(["dvc", "exp", "run", "-S", f"thresholds.deer={v}"], clone)
            if "Running stage" in out:
                raise RuntimeError(f"the literal (no-op) experiment ran a stage:\n{out[-2000:]}")
            copy_literal.append(wall)
        n_med, lit_med, e_med, p_med = median(noop), median(literal), median(exp), median(plain)
        return {"setup_repro_s": round(setup_s, 2), "noop_repro_s": round(n_med, 3),
                "literal_exp_run_s": round(lit_med, 3), "ratio_literal": round(lit_med / n_med, 2),
                "exp_run_s": round(e_med, 3), "ratio": round(e_med / n_med, 2), "values": values[:repeats],
                "edit_params_repro_s": round(p_med, 3), "ratio_edit_params_repro": round(p_med / n_med, 2),
                "stages_rerun": reran, "inference_rerun": any(reran_detect),
                "score_stage_s": round(median(score_s), 3),
                "copy_commands_exp_run_s": round(median(copy_exp), 3),
                "copy_commands_literal_exp_run_s": round(median(copy_literal), 3)}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    import json

    print(json.dumps(bench_sweep(int(sys.argv[1]) if len(sys.argv) > 1 else 3), indent=2))
