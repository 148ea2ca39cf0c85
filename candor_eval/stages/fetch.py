"""fetch-and-verify stage: every file of every manifest and every model card, by SHA-256.

    candor fetch verify [--data data] [--models models] --out build/verified
    candor fetch manifest DIR [--columns FILE.csv] [--source-prefix URL]

``verify`` reads every ``<data>/<set>/manifest.csv`` and every ``<models>/*.yaml``
model card. A file that is present is hashed; one that is missing and has a
``source`` is fetched through fsspec into a temporary file (in ``.candor-tmp/``, never
beside its final path), hashed, and only then moved into place
(:mod:`candor_eval.common.verify`). Any mismatch, or a file of a detection set that its
readers would read but its manifest does not list, stops the stage (exit 2) with one
message listing every bad file (path, expected and actual SHA-256, "missing" or "not
listed"); nothing is written. The progress bar shows on a terminal only and is cleared before
anything else prints. On success it writes, per data set,
``<out>/data-<set>.json`` (manifest SHA-256, file count, bytes) and, per model,
``<out>/model-<name>.json`` (ONNX SHA-256) and, per detection set of ``detector.sets`` (params),
``<out>/detection-<set>.json`` (:func:`candor_eval.detection.sets.set_records`). Later stages depend
on exactly the records they use, so a changed byte reruns only what is downstream of it.

``manifest`` writes ``DIR/manifest.csv`` for an existing folder so users can
bring their own data in one command; ``--columns`` merges extra per-file columns
(a CSV with a ``path`` column, e.g. ``session,zoom,split``). Rewriting an existing
manifest (after an intended data change) keeps its extra columns and ``source``
of every file still present; ``--columns`` and ``--source-prefix`` override them.
"""
from __future__ import annotations

import argparse
import logging
from collections.abc import Sequence
from pathlib import Path

from tqdm.contrib.logging import logging_redirect_tqdm

from candor_eval.common.atomic import remove_others, write_json, write_text
from candor_eval.common.errors import InputError, fail, run_main
from candor_eval.common.manifest import MANIFEST_NAME
from candor_eval.common.params import DEFAULT_PARAMS, section
from candor_eval.common.verify import rewrite_manifest, verify_sets
from candor_eval.detection.config import DetectorParams
from candor_eval.detection.model_card import verify_cards
from candor_eval.detection.sets import detection_sets, set_records
from candor_eval.stages.cli_help import StageParser

log = logging.getLogger("candor.fetch")


def cmd_verify(args: argparse.Namespace) -> int:
    with logging_redirect_tqdm():          # a log line clears the progress bar first, never lands on it
        sets, set_problems = verify_sets(Path(args.data))
    cards, card_problems = verify_cards(Path(args.models))
    detection, detection_problems = set_records(
        detection_sets(section(DetectorParams, "detector", path=args.params)), data_records=sets,
        model_records=cards, models=Path(args.models), data_root=Path(args.data))
    if set_problems or card_problems or detection_problems:
        raise InputError([*set_problems, *card_problems, *detection_problems],
                         hint="restore the files (git checkout / dvc pull), or if the change is "
                              "intended rewrite the manifest: candor fetch manifest DIR")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise fail(str(out), "is a file", expected="a folder for the verified records")
    out.mkdir(parents=True, exist_ok=True)
    wanted = ({f"data-{k}.json": v for k, v in sets.items()} | {f"model-{k}.json": v for k, v in cards.items()}
              | detection)
    for name, record in wanted.items():
        write_json(out / name, record)
    remove_others(out, keep=wanted)
    log.info("verified %d data set(s), %d model(s)", len(sets), len(cards))
    return 0


def cmd_manifest(args: argparse.Namespace) -> int:
    root = Path(args.dir)
    text, n = rewrite_manifest(root, columns=Path(args.columns) if args.columns else None,
                               source_prefix=args.source_prefix)
    write_text(root / MANIFEST_NAME, text)
    print(f"wrote {root / MANIFEST_NAME}: {n} files")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = StageParser(prog="candor fetch", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    v = sub.add_parser("verify", help="verify (and fetch) every manifest and model card")
    v.add_argument("--data", default="data", help="folder holding <set>/manifest.csv (default: data)")
    v.add_argument("--models", default="models", help="folder holding <name>.yaml model cards (default: models)")
    v.add_argument("--params", default=str(DEFAULT_PARAMS), help="params file (detector.sets)")
    v.add_argument("--out", required=True, help="folder for the verified records (data-<set>.json, model-<name>.json)")
    v.set_defaults(func=cmd_verify)
    m = sub.add_parser("manifest", help="write DIR/manifest.csv for an existing folder")
    m.add_argument("dir", help="the data set folder")
    m.add_argument("--columns", help="CSV with a path column and extra per-file columns to include")
    m.add_argument("--source-prefix", help="record source=<prefix>/<path> for every file "
                   "(default: keep the sources of an existing manifest)")
    m.set_defaults(func=cmd_manifest)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(run_main(main))
