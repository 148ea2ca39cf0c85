"""candor_eval/detection/scoring/clusters.py: the cluster sums the scorer writes, against an independent
tally of the committed per-frame and per-label outcome tables, and the session clustering by hand."""
from __future__ import annotations

import csv
import json
from collections import defaultdict

import numpy as np
import pytest

from candor_eval.common.counts import clusters_of
from candor_eval.detection.scoring.clusters import ClusterTally, view_counts
from tests.conftest import ROOT

METRICS = ROOT / "metrics" / "detection" / "detector"
OUTCOMES = ROOT / "metrics" / "outcomes" / "detector"


def rows(name: str) -> list[dict]:
    with open(OUTCOMES / name, newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("model", ["demo-v1", "demo-v2"])
@pytest.mark.parametrize("split", ["dev", "test"])
def test_micro_sums_equal_an_independent_tally_of_the_outcome_tables(model, split):
    counts = json.loads((METRICS / f"{model}.json").read_text())["counts"]
    frames = [r for r in rows("detection-frames.csv") if r["model"] == model and r["split"] == split]
    per = {r["frame"]: (int(r["tp"]), int(r["fp"]), int(r["fn"])) for r in frames}
    found: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows("detection-labels.csv"):
        if r["model"] == model and r["split"] == split:
            found[r["frame"]][0] += int(r["found"])
            found[r["frame"]][1] += 1
    expect = {
        "precision": clusters_of(((tp, tp + fp) for tp, fp, _ in per.values()), name="frame"),
        "recall": clusters_of(found.values(), name="frame"),
        "f1": clusters_of(((2 * tp, 2 * tp + fp + fn) for tp, fp, fn in per.values()), name="frame"),
        "fp_per_frame": clusters_of(((fp, 1) for _, fp, _ in per.values()), name="frame"),
    }
    for rate, c in expect.items():
        got = counts[f"{split}.micro.{rate}"]
        sums = (got["clusters"], got["sum_k2"], got["sum_kn"], got["sum_n2"])
        assert sums == (c.g, c.sum_k2, c.sum_kn, c.sum_n2), rate


def test_sessions_are_summed_before_squaring():
    # two frames of session s1 (group 0) and one of s2: per frame (tp, fp, fn, 1), one view
    per_frame = np.array([[[1, 2, 0, 1]], [[3, 0, 1, 1]], [[0, 1, 2, 1]]])
    t = ClusterTally("session", n_groups=1, n_views=1)
    t.add(per_frame[:2], group=np.array([0, 0]), session=np.array(["s1", "s1"]))
    t.add(per_frame[2:], group=np.array([0]), session=np.array(["s2"]))
    sums, held = t.sums_over(np.array([True]))
    c = view_counts(sums, held, v=0, totals=(4, 3, 3, 3), name="session")
    # s1: tp 4, fp 2 -> precision 4 of 6; s2: tp 0, fp 1 -> 0 of 1
    assert c["precision"].clusters == clusters_of([(4, 6), (0, 1)], name="session")
    assert c["recall"].clusters == clusters_of([(4, 5), (0, 2)], name="session")
    assert c["fp_per_frame"].clusters == clusters_of([(2, 2), (1, 1)], name="session")
    frames = ClusterTally("frame", n_groups=1, n_views=1)
    frames.add(per_frame, group=np.array([0, 0, 0]), session=np.array(["s1", "s1", "s2"]))
    fc = view_counts(*frames.sums_over(np.array([True])), v=0, totals=(4, 3, 3, 3), name="frame")
    assert fc["precision"].clusters == clusters_of([(1, 3), (3, 3), (0, 1)], name="frame")
