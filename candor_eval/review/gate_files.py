"""The release gate evaluated from files (criteria: :mod:`candor_eval.review.gate`; docs/stats.md).

:func:`gate_from_files` takes the params the gate reads as a value
(:class:`candor_eval.review.gate_views.GateSettings`, read and resolved by the stage: ``gate``, the
criteria, declared before scoring: the detection set ``gate.set``, whose models ``gate.reference`` and
``gate.candidate`` must be in ``detector.sets``, and the ``gate.split``; ``stats.confidence``;
``match.critical`` / ``match.min_support``) and reads the set's per-frame and per-label detection outcome tables
``<outcomes>/<set>/`` (an absent table is logged, and the criteria that need it are not
evaluated), clustered as ``stats.cluster`` declares for the set (by session: the gate's split must
have enough named sessions for an exact test at ``gate.alpha``,
:func:`candor_eval.stats.clusters.check_session_clusters`, else an InputError); each
model's wrong action targets from ``<detection>/<set>/<model>.json``; and, only when ``latency``
is given (``candor gate run --latency``; the pipeline never passes it, latency being machine-specific), the
candidate's latency diagnostic ``<latency>/<set>/<candidate>.json``, used only when it was
measured on the candidate's current ONNX file (its card in ``models``).
"""
from __future__ import annotations

import logging
from pathlib import Path

from candor_eval.common.atomic import write_json
from candor_eval.common.errors import InputError, Problem
from candor_eval.common.tables import read_json, read_text
from candor_eval.detection.config import DetectorParams
from candor_eval.detection.frames import SPLITS
from candor_eval.detection.model_card import load_card
from candor_eval.detection.sets import find_set
from candor_eval.review.gate import GateResult, evaluate_gate, find_wrong_targets, latency_p95
from candor_eval.review.gate_views import GateSettings
from candor_eval.review.params import DeclaredGate
from candor_eval.stats.clusters import check_session_clusters
from candor_eval.stats.outcomes import parse_tables
from candor_eval.stats.units import frame_clusters

log = logging.getLogger("candor.gate")

TABLES = ("detection-frames.csv", "detection-labels.csv")


def check_gate(gp: DeclaredGate, det: DetectorParams, *, where: str) -> None:
    """The gate's set must be a detection set, its reference and candidate models of that set, and
    its split a split of the data (an unknown name is an input error, never a silently failed gate)."""
    dset = find_set(det, gp.set, where=where, key="gate.set")
    problems = [Problem(f"{where}:gate.{key}", f"not a model of detection set {dset.name!r}",
                        expected="one of: " + ", ".join(dset.models), got=repr(name))
                for key, name in (("reference", gp.reference), ("candidate", gp.candidate)) if name not in dset.models]
    if gp.split not in SPLITS:
        problems.append(Problem(f"{where}:gate.split", "unknown split", expected=" or ".join(SPLITS),
                                got=repr(gp.split)))
    if problems:
        raise InputError(problems)


def gate_from_files(settings: GateSettings, *, outcomes: Path, detection: Path, models: Path,
                    latency: Path | None) -> GateResult:
    """Evaluate the gate of ``settings`` on the files of the module docstring."""
    gp, sp, mp = settings.gate, settings.stats, settings.match
    check_gate(gp, settings.detector, where=settings.where)
    folder = Path(outcomes) / gp.set
    texts = {n: read_text(folder / n, expected="an outcome table") if (folder / n).is_file() else None for n in TABLES}
    for name in (n for n, text in texts.items() if text is None):
        log.warning("%s is absent: gate criteria that need it fail", folder / name)
    tables = parse_tables(texts, where=lambda name: (folder / name).as_posix())
    wrong = {}
    for model in (gp.reference, gp.candidate):
        f = Path(detection) / gp.set / f"{model}.json"
        wrong[model] = find_wrong_targets(read_json(f), split=gp.split) if f.is_file() else None
    p95 = None
    latency_file = Path(latency) / gp.set / f"{gp.candidate}.json" if latency else None
    if latency_file is not None and latency_file.is_file():
        card_file = Path(models) / f"{gp.candidate}.yaml"
        card_sha = load_card(card_file).sha256 if card_file.is_file() else None
        rerun = f"rerun: candor latency --set {gp.set} --out {latency_file.parent.as_posix()}"
        p95 = latency_p95(read_json(latency_file, hint=rerun), where=latency_file.as_posix(), onnx_sha256=card_sha)
        if p95 is None:
            why = "was measured on another model file than" if card_sha else "cannot be tied to a model card: no"
            log.warning("%s %s %s: not used (%s)", latency_file, why, card_file, rerun)
    cluster = sp.cluster.detection_of(gp.set)
    frames = tables.get(TABLES[0])
    if cluster == "session":
        check_session_clusters(None if frames is None else ((str(r["frame"]), str(r["session"]), str(r["split"]))
                                                            for r in frames if r["split"] == gp.split),
                               alpha=gp.alpha, where=(folder / TABLES[0]).as_posix(), labels=TABLES[1] in tables)
    return evaluate_gate(frames=frames, labels=tables.get(TABLES[1]), wrong_targets=wrong,
                         latency_p95_ms=p95, params=gp, params_file=settings.where, critical=mp.critical,
                         min_support=mp.min_support, confidence=sp.confidence, cluster=cluster,
                         cluster_of=frame_clusters(frames or [], by=cluster))


def write_gate(result: GateResult, path: str | Path) -> None:
    """Write ``result`` (``gate.json``) to ``path`` and log its verdict."""
    write_json(path, result.as_json())
    log.info("gate %s -> %s (%s)", "PASSED" if result.passed else "FAILED", path,
             ", ".join(result.failed) or "all criteria met")
