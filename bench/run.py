"""candor benchmarks against peers, measured side by side in one run (``make bench``).

    python bench/run.py [--repeats 3] [--frames 5000] [--scaling 1000,5000,20000] [--bounded 10000,100000]
                        [--only scoring,...]

1. scoring: candor's ``candor coco-eval`` from the same COCO JSON
   files as pycocotools and faster-coco-eval (both at IoU 0.5), each a separate
   process, ``--repeats`` interleaved rounds, medians of wall time, load/score split and peak RSS,
   and the ratios; plus TP agreement with pycocotools' own per-image matches.
   (candor's COCO mode now also computes COCO AP: it does more work than the IoU-0.5 peers here).
1b. ap: COCO AP (ten IoUs, area all, maxDets 100) at the same set: candor's COCO mode against
   faster-coco-eval and pycocotools doing AP's own work (pycocotools once: it is slow); the largest
   AP difference from each.
2. scaling: candor's per-frame scoring time at several set sizes (interleaved rounds).
3. inference: the detect stage's per-frame time against a bare ``session.run`` loop.
4. sweep: ``dvc exp run -S thresholds.deer=V`` against a no-op ``dvc repro`` and against the same
   step with the rerun stages' commands replaced by copies (DVC's part): the project's share of a
   step, and each rerun stage's command alone with its ``-X importtime`` (``bench/sweep.py``).
5. bounded: the score-detection stage on seeded synthetic detection sets (``bench/scale_set.py``:
   100 raw boxes per frame, so 10 million at 100,000 frames): wall time, per-frame cost and
   peak RSS per size (interleaved rounds).

Writes ``bench/out/RESULTS.md`` (``--results``; ``make bench-results`` writes the committed
``bench/RESULTS.md``: machine, date, command, medians and ratios) and the raw
figures to ``bench/out/results.json``. Generated sets live in ``bench/out/`` (ignored).
"""
from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import measure, median  # noqa: E402 - after the sys.path line above

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
PY = sys.executable


PEERS = {"faster-coco-eval": "faster_coco_eval", "pycocotools": "pycocotools"}   # tool -> its import name


def installed(tool: str) -> bool:
    """The peer ``tool`` imports in the interpreter the bench runs the peers with (``sys.executable``).
    A missing peer is reported as not installed, never installed by the bench."""
    return subprocess.run([PY, "-c", f"import {PEERS[tool]}"], capture_output=True).returncode == 0


def ratio(peer: dict | None, ours: dict, key: str) -> float | None:
    """``peer[key] / ours[key]`` rounded, or None when the peer was not measured (not installed)."""
    return None if peer is None else round(peer[key] / ours[key], 2)


def dataset(frames: int) -> Path:
    d = OUT / f"coco-{frames}"
    if not (d / "dt.json").exists():
        measure([PY, str(ROOT / "bench" / "make_coco.py"), "--frames", str(frames), "--out", str(d)])
    return d


def candor_cmd(d: Path, out: Path) -> list[str]:
    return [PY, "-m", "stages.coco_eval", "--coco-gt", str(d / "gt.json"),
            "--coco-results", str(d / "dt.json"), "--out", str(out), "--timings"]


def run_candor(d: Path) -> dict:
    m = measure(candor_cmd(d, d / "candor.json"), cwd=str(ROOT))
    timings = json.loads(m.stdout.strip().splitlines()[-1])
    return {"total_s": m.wall_s, "load_s": timings["load_s"], "score_s": timings["score_s"],
            "peak_rss_mb": m.peak_rss_mb}


def run_peer(tool: str, d: Path, *, tp_out: Path | None = None, ap: bool = False) -> dict:
    cmd = [PY, str(ROOT / "bench" / "peers.py"), tool, str(d / "gt.json"), str(d / "dt.json"),
           *(["--ap"] if ap else [])]
    if tp_out:
        cmd += ["--tp-out", str(tp_out)]
    m = measure(cmd)
    res = json.loads(m.stdout.strip().splitlines()[-1])
    return {"total_s": m.wall_s, "load_s": res["load_s"], "score_s": res["score_s"], "peak_rss_mb": m.peak_rss_mb}


def interleaved(runners: dict, repeats: int) -> dict[object, list[dict]]:
    """``repeats`` rounds, each running every runner once (in turn), so a drift in the shared
    machine's load hits every side of a comparison alike; returns each runner's runs."""
    runs: dict[object, list[dict]] = {key: [] for key in runners}
    for _ in range(repeats):
        for key, run in runners.items():
            runs[key].append(run())
    return runs


def medians(runs: list[dict]) -> dict:
    return {k: round(median([r[k] for r in runs]), 3) for k in runs[0]}


def tp_agreement(d: Path) -> dict:
    """Compare candor's per-class TP/FP/FN (no thresholds, no NMS) with pycocotools' matches."""
    ref = json.loads((d / "pycocotools-tp.json").read_text())
    mine = json.loads((d / "candor.json").read_text())
    per_class = mine["all"]["per_class"]
    names = {str(i + 1): f"class_{i:02d}" for i in range(len(ref))}
    diffs = {cid: (ref[cid], {k: per_class[names[cid]][k] for k in ("tp", "fp", "fn")})
             for cid in ref if ref[cid] != {k: per_class[names[cid]][k] for k in ("tp", "fp", "fn")}}
    return {"classes": len(ref), "identical": not diffs, "differences": diffs,
            "tp_candor": sum(per_class[n]["tp"] for n in names.values()),
            "tp_pycocotools": sum(v["tp"] for v in ref.values())}


def bench_scoring(frames: int, repeats: int) -> dict:
    d = dataset(frames)
    tools = {"candor": lambda: run_candor(d), "faster-coco-eval": lambda: run_peer("faster-coco-eval", d),
             "pycocotools": lambda: run_peer("pycocotools", d, tp_out=d / "pycocotools-tp.json")}
    missing = [t for t in PEERS if not installed(t)]
    runs = interleaved({t: run for t, run in tools.items() if t not in missing}, repeats)
    results: dict = {tool: medians(runs[tool]) for tool in runs}
    c, faster, pyco = results["candor"], results.get("faster-coco-eval"), results.get("pycocotools")
    results["missing"] = missing
    results["ratios"] = {
        "end_to_end_vs_faster": ratio(faster, c, "total_s"),
        "end_to_end_vs_pycocotools": ratio(pyco, c, "total_s"),
        "core_vs_faster_evaluate": ratio(faster, c, "score_s"),
        "core_vs_pycocotools_evaluate": ratio(pyco, c, "score_s"),
    }
    results["agreement"] = None if pyco is None else tp_agreement(d)
    return results


def ap_difference(candor: dict, peer: dict) -> float:
    """The largest absolute difference between candor's ``ap`` block and a peer's figures
    (``map50``, ``map50_95`` and every class's two APs; a class without labels must be null in both)."""
    diffs = [abs(candor["map50"] - peer["map50"]), abs(candor["map50_95"] - peer["map50_95"])]
    for v in candor["per_class"].values():
        ref = peer["per_class"][str(v["category_id"])]
        if (ref is None) != (v["ap50"] is None):
            return float("inf")
        if ref is not None:
            diffs += [abs(v["ap50"] - ref[0]), abs(v["ap50_95"] - ref[1])]
    return max(diffs)


def bench_ap(frames: int, repeats: int, *, pycocotools_repeats: int = 1) -> dict:
    """COCO AP (10 IoUs, area all, maxDets 100) at the COCO-scale set: candor's standalone COCO mode
    (which also scores the IoU-0.5 operating point) against faster-coco-eval and pycocotools doing
    AP's work; medians, ratios and the largest AP difference (pycocotools, being slow, runs
    ``pycocotools_repeats`` times)."""
    d = dataset(frames)
    peer_ap: dict[str, dict] = {}

    def peer(tool: str) -> dict:
        cmd = [PY, str(ROOT / "bench" / "peers.py"), tool, str(d / "gt.json"), str(d / "dt.json"), "--ap"]
        m = measure(cmd, cwd=str(ROOT))
        out = json.loads(m.stdout.strip().splitlines()[-1])
        peer_ap[tool] = out
        return {"total_s": m.wall_s, "load_s": out["load_s"], "score_s": out["score_s"], "peak_rss_mb": m.peak_rss_mb}

    missing = [t for t in PEERS if not installed(t)]
    tools = {"candor": lambda: run_candor(d), "faster-coco-eval": lambda: peer("faster-coco-eval")}
    runs = interleaved({t: run for t, run in tools.items() if t not in missing}, repeats)
    if "pycocotools" not in missing:
        runs |= interleaved({"pycocotools": lambda: peer("pycocotools")}, pycocotools_repeats)
    results: dict = {tool: medians(r) for tool, r in runs.items()}
    ours = json.loads((d / "candor.json").read_text())["ap"]
    c = results["candor"]
    results["missing"] = missing
    results["ratios"] = {"end_to_end_vs_faster": ratio(results.get("faster-coco-eval"), c, "total_s"),
                         "end_to_end_vs_pycocotools": ratio(results.get("pycocotools"), c, "total_s")}
    results["ap"] = {"map50": ours["map50"], "map50_95": ours["map50_95"],
                     "max_abs_difference": {t: ap_difference(ours, peer_ap[t]) for t in peer_ap}}
    return results


def bench_scaling(sizes: list[int], repeats: int) -> dict:
    out = {}
    sets = {n: dataset(n) for n in sizes}
    runs = interleaved({n: (lambda d=d: run_candor(d)) for n, d in sets.items()}, repeats)
    for n in sizes:
        m = medians(runs[n])
        out[str(n)] = {**m, "score_ms_per_frame": round(1000 * m["score_s"] / n, 4),
                       "total_ms_per_frame": round(1000 * m["total_s"] / n, 4)}
    first, last = out[str(sizes[0])], out[str(sizes[-1])]
    out["per_frame_ratio_largest_vs_smallest"] = round(last["total_ms_per_frame"] / first["total_ms_per_frame"], 3)
    return out


def scale_set(frames: int) -> tuple[Path, dict]:
    """The synthetic detection set of ``frames`` frames (made once, then reused) and its size."""
    from scale_set import make_set
    d = OUT / f"scale-{frames}"
    info = d / "set.json"
    if not info.exists():
        info.parent.mkdir(parents=True, exist_ok=True)
        info.write_text(json.dumps(make_set(d, frames=frames)) + "\n")
    return d, json.loads(info.read_text())


def bench_bounded(sizes: list[int], repeats: int) -> dict:
    from scale_set import stage_cmd
    sets = {n: scale_set(n) for n in sizes}

    def run(d: Path) -> dict:
        m = measure(stage_cmd(d, d / "scored"), cwd=str(ROOT))
        return {"total_s": m.wall_s, "peak_rss_mb": m.peak_rss_mb}

    runs = interleaved({n: (lambda d=d: run(d)) for n, (d, _) in sets.items()}, repeats)
    out = {}
    for n in sizes:
        m = medians(runs[n])
        out[str(n)] = {**sets[n][1], **m, "ms_per_frame": round(1000 * m["total_s"] / n, 4),
                       "max_peak_rss_mb": max(r["peak_rss_mb"] for r in runs[n])}
    first, last = out[str(sizes[0])], out[str(sizes[-1])]
    out["per_frame_ratio_largest_vs_smallest"] = round(last["ms_per_frame"] / first["ms_per_frame"], 3)
    return out


def machine() -> dict:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"os": platform.platform(), "cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--results", default=str(OUT / "RESULTS.md"),
                        help="where to write the results (default bench/out/, untracked; make bench-results "
                             "writes the committed bench/RESULTS.md)")
    parser.add_argument("--frames", type=int, default=5000)
    parser.add_argument("--scaling", default="1000,5000,20000")
    parser.add_argument("--bounded", default="10000,100000")
    parser.add_argument("--only", default="scoring,ap,scaling,inference,sweep,bounded")
    args = parser.parse_args()
    only = set(args.only.split(","))
    OUT.mkdir(parents=True, exist_ok=True)
    results: dict = {"machine": machine(), "date": dt.date.today().isoformat(),
                     "command": "python " + " ".join(sys.argv), "repeats": args.repeats}
    if "scoring" in only:
        results["scoring"] = bench_scoring(args.frames, args.repeats)
    if "ap" in only:
        results["ap"] = bench_ap(args.frames, args.repeats)
    if "scaling" in only:
        results["scaling"] = bench_scaling([int(x) for x in args.scaling.split(",")], args.repeats)
    if "inference" in only:
        from inference import bench_inference
        results["inference"] = bench_inference(args.repeats)
    if "sweep" in only:
        from sweep import bench_sweep
        results["sweep"] = bench_sweep(args.repeats)
    if "bounded" in only:
        results["bounded"] = bench_bounded([int(x) for x in args.bounded.split(",")], args.repeats)
    (OUT / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    from report import write_results
    write_results(results, Path(args.results))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
