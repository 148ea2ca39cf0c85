"""The detector track's command-line glue: the argument sets its stages share, and the reading of
their ``params.yaml`` sections into the typed objects the library takes.

Arguments (each folder defaults to the convention of :mod:`candor_eval.detection.sets`):

- :func:`add_set_arguments`: ``--set`` (a set of ``detector.sets``; default: the first),
  ``--data`` (default ``data/<set>``) and, unless ``detections=False``, ``--detections``
  (default ``build/detections/<set>``);
- :func:`inference_parser`: a command that runs every model of a set (detect, latency):
  the set's arguments, ``--models``, ``--verified``, ``--params``, ``--out``;
- :func:`add_scoring_arguments`: a command that scores a set's raw detections (score-detection,
  figures): ``--params``, the set's arguments, ``--models``.

Params (each section validated once, here, at the boundary; the library never opens
``params.yaml``):

- :func:`read_threshold_params`: ``thresholds`` and ``thresholds_by_model``;
- :func:`read_score_params`: what scoring reads (:class:`~candor_eval.detection.config.ScoreParams`).

Chosen sets: :func:`set_of_args` is the one set of ``--set`` with its folders;
:func:`chosen_sets` is that, or every configured set when ``--set`` is not given (then
``--data`` / ``--detections`` would be ambiguous and are refused).

Every problem found here is an InputError naming the flag or the params key: the stage exits 2
and writes nothing. Stages import this module; nothing in ``candor/`` does
(``tests/test_architecture.py``).
"""
from __future__ import annotations

import argparse
from pathlib import Path

from candor_eval.common.errors import fail
from candor_eval.common.params import DEFAULT_PARAMS, read_params, section
from candor_eval.detection.config import (
    DetectorParams,
    MatchParams,
    ScoreParams,
    StatsClusterView,
    ThresholdParams,
    ThresholdsByModel,
)
from candor_eval.detection.sets import DetectionSet, detection_sets, set_folders
from candor_eval.stages.cli_help import StageParser

SetFolders = tuple[DetectionSet, Path, Path]   # the set, its data folder, its raw-detections folder


def add_set_arguments(parser: argparse.ArgumentParser, *, detections: bool = True) -> None:
    """``--set`` and the set's folders, each defaulting to the convention of :mod:`candor_eval.detection.sets`."""
    parser.add_argument("--set", dest="set_name", metavar="SET",
                        help="detection set of params detector.sets (default: the first one)")
    parser.add_argument("--data", help="the set's data folder (default: data/<set>)")
    if detections:
        parser.add_argument("--detections", help="the set's raw detections, <model>.jsonl (default: "
                                                 "build/detections/<set>)")


def inference_parser(prog: str, description: str | None, *, out_help: str) -> argparse.ArgumentParser:
    """The argv of a command that runs every model of a detection set over its frames (detect, latency)."""
    p = StageParser(prog=prog, description=description)
    add_set_arguments(p, detections=False)
    p.add_argument("--models", default="models", help="folder of model cards (default: models)")
    p.add_argument("--verified", default="build/verified", help="the fetch stage's records")
    p.add_argument("--params", default=str(DEFAULT_PARAMS), help="params file (default: params.yaml)")
    p.add_argument("--out", required=True, help=out_help)
    return p


def add_scoring_arguments(parser: argparse.ArgumentParser) -> None:
    """The arguments of every command that scores the raw detections of a detection set's models:
    ``--params``, :func:`add_set_arguments`, ``--models``."""
    parser.add_argument("--params", default=str(DEFAULT_PARAMS),
                        help="params file (sections detector, thresholds, thresholds_by_model, match)")
    add_set_arguments(parser)
    parser.add_argument("--models", default="models", help="folder of model cards")


def set_of_args(args: argparse.Namespace, detector: DetectorParams) -> SetFolders:
    """The set named by ``--set`` (default: the first) with its ``--data`` and ``--detections``
    folders, given or by convention (:func:`candor_eval.detection.sets.set_folders`)."""
    return set_folders(detector, args.set_name, data=args.data, detections=getattr(args, "detections", None),
                       where=args.params)


def chosen_sets(args: argparse.Namespace, detector: DetectorParams) -> list[SetFolders]:
    """:func:`set_of_args` of ``--set``, or every configured set with its conventional folders when
    ``--set`` is not given; ``--data`` or ``--detections`` without ``--set`` is an input error."""
    if args.set_name is not None:
        return [set_of_args(args, detector)]
    if args.data or getattr(args, "detections", None):
        raise fail("--data/--detections", "name the set they belong to", expected="--set SET")
    return [set_folders(detector, s.name, where=args.params) for s in detection_sets(detector)]


def read_threshold_params(path: str | Path) -> ThresholdParams:
    """The ``thresholds`` and ``thresholds_by_model`` sections of the params file ``path``
    (:meth:`candor_eval.detection.config.ThresholdParams.from_sections`)."""
    by_model = section(ThresholdsByModel, "thresholds_by_model", path=path).root
    return ThresholdParams.from_sections(read_params(path).get("thresholds"), by_model, where=str(path))


def read_score_params(path: str | Path) -> ScoreParams:
    """The sections scoring reads (:class:`~candor_eval.detection.config.ScoreParams`), validated:
    every model of ``thresholds_by_model`` must be a model of ``detector.sets``, every set of
    ``stats.cluster.by_set`` one of its sets."""
    detector = section(DetectorParams, "detector", path=path)
    threshold_params = read_threshold_params(path)
    threshold_params.check_models(detector.models)
    cluster = section(StatsClusterView, "stats", path=path).cluster
    cluster.check_sets(detector.sets, where=str(path))
    return ScoreParams(detector, section(MatchParams, "match", path=path), threshold_params, cluster)
