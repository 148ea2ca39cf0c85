"""Tests for stages/coco_eval.py, the standalone COCO mode: hand counts and agreement with
pycocotools' matching at IoU 0.5 through the command (the scoring itself:
tests/detection/scoring/test_coco_pair.py)."""
from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import numpy as np
import pytest

from candor_eval.common.errors import run_main
from candor_eval.stages import coco_eval
from tests.conftest import ROOT, TESTS
from tests.support_coco import random_pair

DATA = TESTS / "data" / "detector"


def ours(gt: Path, dt: Path, out: Path, *extra) -> dict:
    assert run_main(coco_eval.main, ["--coco-gt", str(gt), "--coco-results", str(dt), "--out", str(out), *extra]) == 0
    return json.loads(out.read_text())["all"]


def pycoco_counts(gt: Path, dt: Path) -> dict[str, tuple[int, int, int]]:
    """TP/FP/FN per category name from pycocotools' own matching (IoU 0.5, area all, no max-dets cap)."""
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval

    with contextlib.redirect_stdout(io.StringIO()):
        cg = COCO(str(gt))
        cd = cg.loadRes(str(dt))
        ev = COCOeval(cg, cd, "bbox")
        ev.params.iouThrs = np.array([0.5])
        ev.params.maxDets = [10_000]
        ev.params.areaRng = [[0, 1e10]]
        ev.params.areaRngLbl = ["all"]
        ev.evaluate()
    names = {c["id"]: c["name"] for c in cg.dataset["categories"]}
    out = {n: [0, 0, 0] for n in names.values()}
    for e in ev.evalImgs:
        if e is None:
            continue
        m, ig = e["dtMatches"][0], e["dtIgnore"][0].astype(bool)
        k = out[names[e["category_id"]]]
        tp = int(((m > 0) & ~ig).sum())
        k[0] += tp
        k[1] += int(((m == 0) & ~ig).sum())
        k[2] += int((~np.asarray(e["gtIgnore"], bool)).sum()) - tp
    return {n: tuple(v) for n, v in out.items()}


def test_hand_fixture_counts(tmp_path):
    m = ours(DATA / "coco_gt.json", DATA / "coco_results.json", tmp_path / "o.json")
    got = {c: (v["tp"], v["fp"], v["fn"]) for c, v in m["per_class"].items()}
    assert got == {"deer": (1, 2, 1), "sheep": (3, 1, 0), "relic": (0, 1, 0)}
    assert m["micro"]["frames"] == 4 and m["per_class"]["relic"]["recall"] is None


def test_hand_fixture_agrees_with_pycocotools(tmp_path):
    m = ours(DATA / "coco_gt.json", DATA / "coco_results.json", tmp_path / "o.json")
    got = {c: (v["tp"], v["fp"], v["fn"]) for c, v in m["per_class"].items()}
    assert got == pycoco_counts(DATA / "coco_gt.json", DATA / "coco_results.json")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_random_sets_agree_with_pycocotools(tmp_path, seed):
    gt, dt = random_pair(tmp_path, seed)
    m = ours(gt, dt, tmp_path / "o.json")
    got = {c: (v["tp"], v["fp"], v["fn"]) for c, v in m["per_class"].items()}
    ref = pycoco_counts(gt, dt)
    assert got == ref
    assert sum(v[0] for v in ref.values()) > 20      # the sets are not trivial


def test_params_apply_thresholds_and_nms(tmp_path):
    params = tmp_path / "params.yaml"
    params.write_text("detector: {floor: 0.05, nms_iou: 0.5}\nthresholds: {default: 0.35, sheep: 0.6}\n"
                      "match: {iou: 0.5, min_support: 1, critical: [deer], bands: [16]}\n")
    m = ours(DATA / "coco_gt.json", DATA / "coco_results.json", tmp_path / "o.json", "--params", str(params))
    got = {c: (v["tp"], v["fp"], v["fn"]) for c, v in m["per_class"].items()}
    # deer >= 0.35: f1 TP 0.9 (the 0.8 duplicate is removed by NMS), f2 0.9 FP, crowd ones ignored/dropped
    # sheep >= 0.6: only f1's 0.7 TP; f4's two sheep are FN; relic 0.6 >= 0.35: FP
    assert got == {"deer": (1, 1, 1), "sheep": (1, 0, 2), "relic": (0, 1, 0)}
    assert m["critical"] == {"deer": {"missed": 1, "wrong": 0}, "total": {"missed": 1, "wrong": 0}}


def test_unknown_ids_are_input_errors(tmp_path, capsys):
    bad = tmp_path / "dt.json"
    bad.write_text(json.dumps([{"image_id": 99, "category_id": 1, "bbox": [0, 0, 1, 1], "score": 0.5},
                               {"image_id": 1, "category_id": 1, "bbox": [0, 0, -1, 1], "score": 0.5}]))
    assert run_main(coco_eval.main, ["--coco-gt", str(DATA / "coco_gt.json"), "--coco-results", str(bad),
                                     "--out", str(tmp_path / "o.json")]) == 2
    err = capsys.readouterr().err
    assert "[0].image_id" in err and "[1].bbox" in err
    assert not (tmp_path / "o.json").exists()


def test_timings_are_printed_never_written(tmp_path, capsys):
    plain = ours(DATA / "coco_gt.json", DATA / "coco_results.json", tmp_path / "a.json")
    capsys.readouterr()
    timed = ours(DATA / "coco_gt.json", DATA / "coco_results.json", tmp_path / "b.json", "--timings")
    last = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert set(last) == {"load_s", "score_s"} and all(v >= 0 for v in last.values())
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes() and plain == timed


def test_without_params_the_coco_mode_imports_neither_pydantic_nor_yaml(tmp_path):
    """Start-up is part of the end-to-end time: the plain COCO mode loads only what it uses."""
    import subprocess
    import sys

    probe = ("import sys; from candor_eval.stages import coco_eval; code = coco_eval.main(['--coco-gt', sys.argv[1], "
             "'--coco-results', sys.argv[2], '--out', sys.argv[3]]); "
             "print(sorted(m for m in ('pydantic', 'yaml', 'matplotlib', 'PIL', 'scipy', 'multiprocessing') "
             "if m in sys.modules), code)")
    root = ROOT
    out = subprocess.run([sys.executable, "-c", probe, str(DATA / "coco_gt.json"), str(DATA / "coco_results.json"),
                          str(tmp_path / "o.json")], cwd=root, capture_output=True, text=True, check=True)
    assert out.stdout.strip().splitlines()[-1] == "[] 0"
    # the match section's defaults are the pydantic model's (one source for both modes)
    from candor_eval.detection.config import MatchParams
    from candor_eval.detection.match_defaults import BAND_EDGES, MATCH_IOU, MIN_SUPPORT

    documented = (0.5, 10, [16.0, 48.0])          # docs/detector.md, params.yaml: match
    assert (MATCH_IOU, MIN_SUPPORT, list(BAND_EDGES)) == documented
    m = MatchParams()
    assert (m.iou, m.min_support, m.bands) == documented


def test_output_carries_the_counts_of_its_rates(tmp_path):
    ours(DATA / "coco_gt.json", DATA / "coco_results.json", tmp_path / "o.json")
    doc = json.loads((tmp_path / "o.json").read_text())
    assert list(doc) == ["all", "ap", "counts"]
    assert doc["counts"]["all.micro.precision"] == {"k": 4, "n": 8, "unit": "detection"}
    assert doc["counts"]["all.per_class.relic.recall"] == {"k": 0, "n": 0, "unit": "label"}


def test_ap_block_of_the_hand_fixture(tmp_path):
    """The ``ap`` block has every category with its id; relic (no labels) is left out of the means."""
    ours(DATA / "coco_gt.json", DATA / "coco_results.json", tmp_path / "o.json")
    ap = json.loads((tmp_path / "o.json").read_text())["ap"]
    assert list(ap) == ["map50", "map50_95", "per_class"]
    assert ap["per_class"]["relic"]["ap50"] is None
    cats = {c["name"]: c["id"] for c in json.loads((DATA / "coco_gt.json").read_text())["categories"]}
    assert {n: v["category_id"] for n, v in ap["per_class"].items()} == cats
    have = [v["ap50"] for v in ap["per_class"].values() if v["ap50"] is not None]
    assert ap["map50"] == pytest.approx(sum(have) / len(have), abs=1e-12)
