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
model's wrong action targets and reproduced frozen evaluation from ``<detection>/<set>/<model>.json``;
the served contracts ``<outcomes>/<set>/served.json``; only when ``latency`` is given (``candor gate
run --latency``; the pipeline never passes it, latency being machine-specific), both models' latency
diagnostics ``<latency>/<set>/<model>.json``, each used only when it was measured on the model's
current ONNX file (its card in ``models``); and only when ``refresh`` is given (``candor gate run
--refresh``), the candidate's whole-refresh timings (:mod:`candor_eval.detection.refresh`), which
must be of the candidate.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from candor_eval.common.atomic import write_json
from candor_eval.common.errors import InputError, Problem, fail
from candor_eval.common.tables import read_json, read_text
from candor_eval.detection.config import DetectorParams
from candor_eval.detection.frames import SPLITS
from candor_eval.detection.model_card import load_card
from candor_eval.detection.refresh import read_refresh
from candor_eval.detection.served_contract import FILE as SERVED_FILE
from candor_eval.detection.served_contract import differing_keys
from candor_eval.detection.sets import find_set
from candor_eval.review.gate import Evidence, Timings, evaluate_gate, find_wrong_targets, latency_diagnostic
from candor_eval.review.gate_result import GateResult
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
                    latency: Path | None, refresh: Path | None = None,
                    parsed: Mapping[str, list[dict[str, object]]] | None = None) -> GateResult:
    """Evaluate the gate of ``settings`` on the files of the module docstring. ``parsed``: the outcome
    tables of every detection set already read and parsed under ``outcomes`` (path relative to it -> rows,
    absent tables left out: :func:`candor_eval.review.collect.read_inputs`), so they are not parsed twice."""
    gp, sp, mp = settings.gate, settings.stats, settings.match
    check_gate(gp, settings.detector, where=settings.where)
    folder = Path(outcomes) / gp.set
    if parsed is None:
        texts = {n: read_text(folder / n, expected="an outcome table") if (folder / n).is_file() else None
                 for n in TABLES}
    else:
        texts = {n: "" if f"{gp.set}/{n}" in parsed else None for n in TABLES}   # presence only: read already
    for name in (n for n, text in texts.items() if text is None):
        log.warning("%s is absent: gate criteria that need it fail", folder / name)
    tables = (parse_tables(texts, where=lambda name: (folder / name).as_posix()) if parsed is None
              else {n: parsed[f"{gp.set}/{n}"] for n, text in texts.items() if text is not None})
    wrong, frozen = {}, {}
    for model in (gp.reference, gp.candidate):
        f = Path(detection) / gp.set / f"{model}.json"
        doc = read_json(f) if f.is_file() else None
        wrong[model] = None if doc is None else find_wrong_targets(doc, split=gp.split)
        if isinstance(doc, dict) and isinstance(doc.get("frozen"), dict):
            frozen[model] = doc["frozen"]
    served = _served(folder / SERVED_FILE, (gp.reference, gp.candidate))
    timings = read_refresh(refresh) if refresh is not None else None
    if timings is not None and timings.model != gp.candidate:
        raise fail(timings.where, "whole-refresh timings of another model", expected=gp.candidate, got=timings.model)
    evidence = Evidence(
        wrong_targets=wrong, frozen=frozen,
        contract_keys=None if served is None else differing_keys(served[gp.reference], served[gp.candidate]),
        training=None if served is None else {m: c.get("training_sessions") for m, c in served.items()},
        refresh=None if timings is None else Timings(host=timings.host, ms=timings.ms),
        latency=_latency(latency, gp.set, (gp.reference, gp.candidate), models) if latency else None)
    cluster = sp.cluster.detection_of(gp.set)
    frames = tables.get(TABLES[0])
    if cluster == "session":
        check_session_clusters(None if frames is None else ((str(r["frame"]), str(r["session"]), str(r["split"]))
                                                            for r in frames if r["split"] == gp.split),
                               alpha=gp.alpha, where=(folder / TABLES[0]).as_posix(), labels=TABLES[1] in tables)
    return evaluate_gate(frames=frames, labels=tables.get(TABLES[1]), evidence=evidence, params=gp,
                         params_file=settings.where, critical=mp.critical, min_support=mp.min_support,
                         confidence=sp.confidence, cluster=cluster,
                         cluster_of=frame_clusters(frames or [], by=cluster))


def _served(path: Path, models: tuple[str, ...]) -> dict[str, dict[str, Any]] | None:
    """The two models' served contracts (``served.json`` of score-detection); ``None`` when the file or a
    model's contract is absent."""
    if not path.is_file():
        return None
    doc = read_json(path)
    if not (isinstance(doc, dict) and all(isinstance(c, dict) for c in doc.values())):
        raise fail(path.as_posix(), "not the served contracts",
                   expected="model -> contract (written by score-detection)")
    if missing := [m for m in models if m not in doc]:
        log.warning("%s has no contract of %s: the served-contract and held-out criteria are not evaluated", path,
                    ", ".join(missing))
        return None
    return {m: doc[m] for m in models}


def _latency(folder: Path, set_name: str, models: tuple[str, ...], cards: Path) -> dict[str, Mapping[str, Any]]:
    """Each model's latency diagnostic ``<folder>/<set>/<model>.json`` that was measured on its current
    ONNX file (a stale or missing one is logged and left out)."""
    out = {}
    for model in models:
        f = Path(folder) / set_name / f"{model}.json"
        if not f.is_file():
            continue
        card_file = Path(cards) / f"{model}.yaml"
        card_sha = load_card(card_file).sha256 if card_file.is_file() else None
        rerun = f"rerun: candor latency --set {set_name} --out {f.parent.as_posix()}"
        doc = latency_diagnostic(read_json(f, hint=rerun), where=f.as_posix(), onnx_sha256=card_sha)
        if doc is None:
            why = "was measured on another model file than" if card_sha else "cannot be tied to a model card: no"
            log.warning("%s %s %s: not used (%s)", f, why, card_file, rerun)
        else:
            out[model] = doc
    return out


def write_gate(result: GateResult, path: str | Path) -> None:
    """Write ``result`` (``gate.json``) to ``path`` and log its verdict."""
    write_json(path, result.as_json())
    log.info("gate %s -> %s (%s)", result.verdict, path,
             "; ".join(f"{what}: {', '.join(names)}" for what, names in (("failed", result.failed),
                                                                         ("pending", result.pending)) if names)
             or "all criteria met")
