"""Tests for stages/cli_detection.py: the detector stages' shared argv and the reading of their
params sections into the typed objects the library takes."""
from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from candor_eval.common.errors import InputError
from candor_eval.detection.config import DetectorParams
from candor_eval.stages.cli_detection import (
    add_scoring_arguments,
    chosen_sets,
    inference_parser,
    read_score_params,
    read_threshold_params,
    set_of_args,
)

DETECTOR = DetectorParams(sets={"a": ["m1", "m2"], "b": ["m2"]})


def scoring_args(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    add_scoring_arguments(p)
    return p.parse_args(list(argv))


def test_the_inference_parser_defaults_and_has_no_detections_folder():
    """detect and latency: --models, --verified, --params default to the repository's layout; --out is
    required; --detections is not theirs (they write raw boxes, they do not read them)."""
    p = inference_parser("prog", None, out_help="out")
    args = p.parse_args(["--out", "o"])
    assert (args.set_name, args.data, args.models, args.verified, args.params, args.out) == (
        None, None, "models", "build/verified", "params.yaml", "o")
    with pytest.raises(SystemExit):
        p.parse_args(["--out", "o", "--detections", "d"])
    with pytest.raises(SystemExit):
        p.parse_args([])


@pytest.mark.parametrize("argv, expected", [
    ([], ("a", "data/a", "build/detections/a")),                        # no --set: the first set
    (["--set", "b"], ("b", "data/b", "build/detections/b")),
    (["--set", "b", "--data", "x", "--detections", "y"], ("b", "x", "y")),
])
def test_set_of_args_is_the_named_set_with_its_folders(argv, expected):
    """The set of --set (default the first of detector.sets), its data and detections folders as given,
    else data/<set> and build/detections/<set>."""
    s, data, detections = set_of_args(scoring_args(*argv), DETECTOR)
    assert (s.name, data.as_posix(), detections.as_posix()) == expected


def test_set_of_args_refuses_an_unknown_set_naming_the_params_key():
    with pytest.raises(InputError, match=r"params.yaml:detector.sets: unknown detection set"):
        set_of_args(scoring_args("--set", "zz"), DETECTOR)


def test_chosen_sets_are_every_set_without_set_and_data_needs_a_set():
    """Without --set: every set, in params order, with its conventional folders; --data or --detections
    without --set is ambiguous (which set?) and refused."""
    chosen = chosen_sets(scoring_args(), DETECTOR)
    assert [(s.name, s.models, d.as_posix()) for s, d, _ in chosen] == [("a", ("m1", "m2"), "data/a"),
                                                                       ("b", ("m2",), "data/b")]
    assert [s.name for s, _, _ in chosen_sets(scoring_args("--set", "b"), DETECTOR)] == ["b"]
    for flag in ("--data", "--detections"):
        with pytest.raises(InputError, match=r"--data/--detections: name the set they belong to"):
            chosen_sets(scoring_args(flag, "x"), DETECTOR)


def write_params(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "params.yaml"
    p.write_text(text)
    return p


def test_read_threshold_params_merges_a_models_own_keys(tmp_path):
    """A model's served mapping is the shared one with its thresholds_by_model keys replacing them."""
    p = write_params(tmp_path, "thresholds: {default: 0.3, deer: 0.2}\nthresholds_by_model: {m2: {deer: 0.25}}\n")
    served = read_threshold_params(p)
    assert served.served("m2") == {"default": 0.3, "deer": 0.25}
    assert served.served("m1") == {"default": 0.3, "deer": 0.2}
    assert served.where == str(p)


def test_read_threshold_params_needs_a_thresholds_mapping(tmp_path):
    p = write_params(tmp_path, "thresholds: [0.3]\n")
    with pytest.raises(InputError, match=r"params.yaml:thresholds: not a mapping"):
        read_threshold_params(p)


@pytest.mark.parametrize("text", ["detector: {}\n", "thresholds:\nthresholds_by_model: {m2: {deer: 0.3}}\n"])
def test_without_thresholds_every_class_is_served_at_the_documented_default(tmp_path, text):
    """A new project's params file without ``thresholds`` (or with it empty): every class is served at
    0.25, Ultralytics' predict default; a model's own keys still apply."""
    served = read_threshold_params(write_params(tmp_path, text))
    assert served.served("m1") == {"default": 0.25}
    assert served.class_thresholds("m1", classes=("deer", "sheep"), floor=0.05).tolist() == [0.25, 0.25]
    if "m2" in text:
        assert served.class_thresholds("m2", classes=("deer", "sheep"), floor=0.05).tolist() == [0.3, 0.25]


def test_read_score_params_reads_every_section_scoring_needs(tmp_path):
    """detector, match (defaults when absent), thresholds, and the stats.cluster keys."""
    p = write_params(tmp_path, "detector: {sets: {a: [m1]}, floor: 0.1}\nthresholds: {default: 0.4}\n"
                               "stats: {cluster: {detection: session}}\n")
    params = read_score_params(p)
    assert params.detector.floor == 0.1 and params.match.iou == 0.5
    assert params.threshold_params.served("m1") == {"default": 0.4}
    assert params.cluster.detection_of("a") == "session"


def test_read_score_params_refuses_thresholds_of_a_model_no_set_lists(tmp_path):
    p = write_params(tmp_path, "detector: {sets: {a: [m1]}}\nthresholds: {default: 0.4}\n"
                               "thresholds_by_model: {m9: {default: 0.5}}\n")
    with pytest.raises(InputError, match=r"thresholds_by_model.m9: not a model of detector.sets"):
        read_score_params(p)


def test_read_score_params_refuses_a_cluster_by_set_of_no_set(tmp_path):
    """A misspelled set in stats.cluster.by_set would cluster nothing: an error naming it and the sets."""
    p = write_params(tmp_path, "detector: {sets: {a: [m1], b: [m1]}}\nthresholds: {default: 0.4}\n"
                               "stats: {cluster: {by_set: {a: session, c: session}}}\n")
    with pytest.raises(InputError, match=r"stats.cluster.by_set.c: not a set of detector.sets \(expected one of: a, b"):
        read_score_params(p)
