"""A tiny, complete candor workspace for the reliability tests (no test here).

:func:`build_base` writes a synthetic repository layout that every stage of the
pipeline can run on in about a second, then runs the good pipeline once so that
``metrics/``, ``plots/`` and the recordings hold real outputs (a stage that wrote
on bad input would change them, and the hash snapshot would see it)::

    params.yaml                  every section the stages read (tiny values)
    data/detector/               2 frames (a: 128x64 dev, b: 128x64 test), YOLO labels, manifest
    data/lots/                   the lots fixture (tests/data/lots), the committed vocabulary/, a replay
                                 recording, manifest (accessory words: the comps fixture's)
    data/comps/listings.csv      the comps fixture
    models/tiny.onnx, tiny.yaml  a constant ONNX detector and its card
    build/verified, build/detections/tiny.jsonl, build/answers/p.jsonl, build/values/p.csv
    metrics/... (detection, identification, fields, outcomes, stats.json), plots/detection/...

Stages run as subprocesses (``python -m candor_eval.stages.<module>``) with the checkout on
``PYTHONPATH`` and the workspace as the working directory, exactly as DVC runs them.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from candor_eval.common.manifest import build_manifest_rows, format_manifest
from candor_eval.lots.recording import RecordLine, parse_answer
from tests.support_detect import constant_model, make_dataset, ultralytics_output, write_card

ROOT = Path(__file__).resolve().parents[2]
CANDIDATE = "p"
KEY_ENV = "CANDOR_RELIABILITY_KEY"

# input 64x64, frames 128x64 (scale 0.5, pad_y 16): sheep 0.9 and deer 0.3 at [48, 24, 80, 40], relic 0.6
ROWS = [[32, 32, 16, 8, 0.0, 0.9, 0.0],
        [32, 32, 16, 8, 0.3, 0.0, 0.0],
        [10, 20, 4, 4, 0.0, 0.0, 0.6],
        [50, 40, 8, 8, 0.5, 0.0, 0.0]]
FRAMES = {
    "a": {"size": (128, 64), "split": "dev", "zoom": "1", "session": "s1",
          "labels": ["1 0.5 0.5 0.25 0.25", "0 0.78125 0.75 0.125 0.25"]},
    "b": {"size": (128, 64), "split": "test", "zoom": "2", "session": "s2",
          "labels": ["0 0.0625 0.125 0.125 0.25"]},
}
ANSWER = json.dumps({"type": "item", "item": {"itemManufacturer": "Dell", "itemModel": "OptiPlex 7090 SFF",
                                              "itemType": "Drill", "categorySpecific": "Power Tools",
                                              "quantity": 10}})
PARAMS = """\
identify:
  mode: replay
  candidates: [p]
  runs: 2
  gallery: all
  pause_s: 0
  timeout_s: 2
  retries: 1
  backoff_s: 0
  base_url: http://127.0.0.1:9/v1
  model: test-model
  api_key_env: CANDOR_RELIABILITY_KEY
comps:
  min_comps: 1
detector:
  sets: {detector: [tiny]}
  floor: 0.05
  nms_iou: 0.5
  providers: [CPUExecutionProvider]
thresholds:
  default: 0.35
  deer: 0.2
match:
  iou: 0.5
  min_support: 1
  critical: [deer, sheep]
  bands: [16, 48]
stats:
  confidence: 0.95
  alpha: 0.05
  reference:
    lots: p
"""

# The command line of each stage, as dvc.yaml runs it (paths relative to the workspace).
STAGES: dict[str, list[str]] = {
    "fetch": ["candor_eval.stages.fetch", "verify", "--data", "data", "--models", "models", "--out", "build/verified"],
    "detect": ["candor_eval.stages.detect", "--set", "detector", "--models", "models", "--verified", "build/verified",
               "--out", "build/detections/detector"],
    "score-detection": ["candor_eval.stages.score_detection", "--params", "params.yaml", "--set", "detector",
                        "--models", "models", "--metrics", "metrics/detection/detector",
                        "--outcomes", "metrics/outcomes/detector", "--plots", "plots/detection",
                        "--coco-out", "build/coco-results/detector"],
    "coco-eval": ["candor_eval.stages.coco_eval", "--coco-gt", "coco/gt.json", "--coco-results", "coco/results.json",
                  "--out", "metrics/detection/coco.json"],   # standalone COCO mode, outside the pipeline
    "identify": ["candor_eval.stages.identify", "--candidate", CANDIDATE, "--lots", "data/lots",
                 "--answers", f"build/answers/{CANDIDATE}.jsonl"],
    "score-lots": ["candor_eval.stages.score_lots", "--lots", "data/lots", "--answers", "build/answers", "--metrics", "metrics"],
    "value": ["candor_eval.stages.value", "--candidate", CANDIDATE, "--answers", f"build/answers/{CANDIDATE}.jsonl",
              "--lots", "data/lots/lots.csv", "--comps", "data/comps", "--out", f"build/values/{CANDIDATE}.csv"],
    "gate": ["candor_eval.stages.gate", "run", "--outcomes", "metrics/outcomes", "--detection", "metrics/detection",
             "--models", "models", "--out", "build/gate.json"],
    "stats": ["candor_eval.stages.stats", "run", "--outcomes", "metrics/outcomes", "--metrics", "metrics/identification.json",
              "metrics/fields", "metrics/detection", "--out", "metrics/stats.json"],
}
PIPELINE = ("fetch", "detect", "score-detection", "identify", "score-lots", "value", "stats")


@dataclass(frozen=True)
class Result:
    """One finished stage process."""

    argv: tuple[str, ...]
    code: int
    stdout: str
    stderr: str


def env(**extra: str) -> dict[str, str]:
    """The environment a stage runs in: the checkout importable, no API key, no colour, no user site."""
    out = {k: v for k, v in os.environ.items() if k != KEY_ENV and not k.startswith("PYTEST")}
    out["PYTHONPATH"] = str(ROOT)
    out["PYTHONDONTWRITEBYTECODE"] = "1"
    out["PYTHONHASHSEED"] = "0"
    out.update(extra)
    return out


def run_stage(ws: Path, stage: str, argv: list[str] | None = None, *, timeout: float = 120,
              extra_env: dict[str, str] | None = None) -> Result:
    """Run ``python -m <module> <argv>`` (default argv: :data:`STAGES`) in ``ws``."""
    cmd = [sys.executable, "-m", *(STAGES[stage] if argv is None else [STAGES[stage][0], *argv])]
    proc = subprocess.run(cmd, cwd=ws, env=env(**(extra_env or {})), capture_output=True, text=True,
                          timeout=timeout, check=False)
    return Result(tuple(cmd[2:]), proc.returncode, proc.stdout, proc.stderr)


def run_batch(jobs: list[tuple[Path, str, list[str] | None]], *, workers: int = 3,
              timeout: float = 300, envs: list[dict[str, str]] | None = None) -> list[Result]:
    """Run many ``(workspace, stage, argv)`` jobs through :mod:`tests.bad_inputs.zygote` (forked processes).

    Same contract as :func:`run_stage` (working directory, environment, exit code, stdout,
    stderr), minus the per-process import time; ``envs`` adds variables per job.
    """
    import tempfile

    with tempfile.TemporaryDirectory(prefix="candor-zygote-") as tmp:
        requests, argvs = [], []
        for i, (ws, stage, argv) in enumerate(jobs):
            full = STAGES[stage] if argv is None else [STAGES[stage][0], *argv]
            argvs.append(tuple(full))
            requests.append(json.dumps({"cwd": str(ws), "argv": full, "env": env(**(envs[i] if envs else {})),
                                        "stdout": f"{tmp}/{i}.out", "stderr": f"{tmp}/{i}.err"}))
        proc = subprocess.run([sys.executable, "-m", "tests.bad_inputs.zygote", str(workers)],
                              input="\n".join(requests) + "\n", capture_output=True, text=True, cwd=ROOT,
                              env=env(), timeout=timeout, check=False)
        assert proc.returncode == 0, f"zygote failed: {proc.stderr[-3000:]}"
        codes = {d["index"]: d["code"] for d in map(json.loads, proc.stdout.splitlines())}
        assert sorted(codes) == list(range(len(jobs))), proc.stdout
        return [Result(argvs[i], codes[i], Path(f"{tmp}/{i}.out").read_text(errors="replace"),
                       Path(f"{tmp}/{i}.err").read_text(errors="replace")) for i in range(len(jobs))]


def prompt_sha(ws: Path) -> str:
    return hashlib.sha256((ws / "data/lots/prompts" / f"{CANDIDATE}.txt").read_bytes()).hexdigest()


def recording_lines(ws: Path, *, ids: tuple[str, ...] = ("T001", "T002", "drill"), runs: tuple[int, ...] = (1, 2),
                    gallery: str = "all") -> list[str]:
    """Replay recording lines for every (id, run), all answering :data:`ANSWER`."""
    parsed, why = parse_answer(ANSWER)
    return [RecordLine(case=i, run=r, raw=ANSWER, parsed=parsed, parse_error=why, provider="127.0.0.1",
                       model="test-model", prompt_sha256=prompt_sha(ws), gallery=gallery).to_json()
            for i in ids for r in runs]


def write_manifest(folder: Path) -> None:
    """Rewrite ``folder/manifest.csv`` for the folder's current files (what ``stages.fetch manifest`` does)."""
    (folder / "manifest.csv").write_text(format_manifest(build_manifest_rows(folder)), encoding="utf-8")


def build_inputs(ws: Path) -> None:
    """Every input file of the workspace (no stage run yet)."""
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "params.yaml").write_text(PARAMS, encoding="utf-8")
    make_dataset(ws, FRAMES)
    (ws / "models").mkdir()
    sha = constant_model(ws / "models" / "tiny.onnx", ultralytics_output(ROWS))
    write_card(ws / "models", "tiny", sha, input_size=[64, 64])
    lots = ws / "data" / "lots"
    shutil.copytree(ROOT / "tests" / "data" / "lots", lots)
    shutil.copytree(ROOT / "data" / "lots" / "vocabulary", lots / "vocabulary")
    shutil.copy(ROOT / "tests" / "data" / "comps" / "accessory-words.yaml", lots / "vocabulary")
    (lots / "recordings").mkdir()
    (lots / "recordings" / f"{CANDIDATE}.jsonl").write_text("\n".join(recording_lines(ws)) + "\n", encoding="utf-8")
    write_manifest(lots)
    comps = ws / "data" / "comps"
    comps.mkdir()
    shutil.copy(ROOT / "tests" / "data" / "comps" / "listings.csv", comps / "listings.csv")
    write_manifest(comps)


def build_base(ws: Path) -> dict[str, Result]:
    """Inputs plus the good pipeline's outputs; every stage must exit 0 (else AssertionError)."""
    build_inputs(ws)
    results = {}
    for stage in PIPELINE:
        res = run_stage(ws, stage)
        assert res.code == 0, f"the good workspace fails at {stage}: {res.stderr[-2000:]}"
        results[stage] = res
    return results


_SHARED: list = []


def shared_base() -> Path:
    """The good workspace, built once per test process (removed at exit); copy it, never edit it."""
    if not _SHARED:
        import atexit
        import tempfile

        tmp = tempfile.TemporaryDirectory(prefix="candor-reliability-")
        atexit.register(tmp.cleanup)
        build_base(Path(tmp.name) / "base")
        _SHARED.append(tmp)
    return Path(_SHARED[0].name) / "base"


def copy_base(dest: Path) -> Path:
    """A private copy of :func:`shared_base` at ``dest``."""
    shutil.copytree(shared_base(), dest)
    return dest


def set_params(ws: Path, **sections: dict) -> None:
    """Update keys of params.yaml sections (``set_params(ws, identify={"mode": "live"})``)."""
    import yaml

    doc = yaml.safe_load((ws / "params.yaml").read_text())
    for name, values in sections.items():
        doc.setdefault(name, {}).update(values)
    (ws / "params.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))


def snapshot(ws: Path) -> dict[str, str]:
    """Relative path -> SHA-256 of every file under ``ws`` (the whole workspace, outputs included)."""
    out = {}
    for p in sorted(ws.rglob("*")):
        if p.is_file():
            out[p.relative_to(ws).as_posix()] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def diff(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Files added, removed or changed between two snapshots (sorted, with a +/-/~ mark)."""
    added = [f"+{k}" for k in after if k not in before]
    removed = [f"-{k}" for k in before if k not in after]
    changed = [f"~{k}" for k in before if k in after and before[k] != after[k]]
    return sorted(added + removed + changed, key=lambda s: s[1:])
