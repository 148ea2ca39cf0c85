"""candor record: record a candidate live and promote the recording; ``dvc repro`` then scores it.

    candor record CANDIDATE [--lots data/lots] [--params params.yaml] [--force]
                            [--makes YAML] [--tokens YAML] [--categories YAML]

A prompt or code change used to be four steps (record live, copy the recording, rewrite the
manifest, ``dvc repro``); this is the first three (:mod:`candor_eval.lots.promotion`):

1. Refuses (exit 2, writing nothing) when ``<lots>/recordings/<candidate>.jsonl`` was made with
   other code than the candidate's source now holds (another SHA-256,
   :mod:`candor_eval.lots.source_identity`), unless ``--force``: replacing it moves the scores the
   committed metrics hold. The candidate is one of ``identify.candidates``. A recording of this
   code that is complete is up to date (exit 0, nothing asked); one that lacks runs
   (``identify.runs`` raised, a case added) is extended: its answers are kept and only the missing
   (lot/case, run) pairs are asked, never one twice.
2. Records live: ``candor identify --candidate CANDIDATE --mode live`` into
   ``build/live/<candidate>-<sha8>.jsonl`` (the recording identify's stale-recording hint names;
   an interrupted run resumes), with every lot and case and ``identify.runs`` runs; its answers go
   to ``build/live/<candidate>-<sha8>.answers.jsonl``, never over the pipeline's outputs. Everything
   identify promises holds: it is that command, run as a child process.
3. Promotes it: checks it holds every (lot/case, run) made with the candidate's current source
   (the source changed during the run: exit 2), writes it to ``<lots>/recordings/<candidate>.jsonl``
   and sets the recording's entry of ``<lots>/manifest.csv`` (when the bench has one) to the new
   file, every other row as it was.

Then ``dvc repro`` replays and scores it. Exit codes as identify's: 0 promoted (or up to date); 1 a
live run failed (it is recorded with its error; nothing is promoted; ``candor record`` again asks the
failed runs only); 2 bad input, a refused replacement, or a recording that does not replay.
"""
from __future__ import annotations

import argparse
import logging
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from candor_eval.common.atomic import write_text
from candor_eval.common.errors import EXIT_OK, InputError, Problem, fail, run_main
from candor_eval.common.manifest import MANIFEST_NAME
from candor_eval.common.names import check_name
from candor_eval.common.params import section
from candor_eval.lots.golden import load_golden
from candor_eval.lots.params import IdentifyParams
from candor_eval.lots.promotion import (
    live_record,
    manifest_with,
    promoted_lines,
    recording_text,
    replaced_problem,
    seed_lines,
)
from candor_eval.lots.recording import load_recording
from candor_eval.lots.replay import select_ids
from candor_eval.lots.source_identity import Identity, candidate_identity
from candor_eval.stages.cli_lots import add_tokens, add_vocabulary, given, stage_parser, vocabulary

log = logging.getLogger("candor.record")

# The word-list flags passed on to identify when given
PASSED_ON = ("--makes", "--tokens", "--categories")


def build_parser() -> argparse.ArgumentParser:
    p = stage_parser("candor record", __doc__)
    p.add_argument("candidate", help="the candidate to record (a name of identify.candidates)")
    p.add_argument("--lots", default="data/lots", help="golden-set folder (default: data/lots)")
    add_vocabulary(p, "--makes", "makes.yaml", purpose="local-ocr: what the reader can name")
    add_tokens(p, purpose="local-ocr: the token word lists")
    add_vocabulary(p, "--categories", "category-library.yaml",
                   purpose="the categories the prompt suggests when a case brings none")
    p.add_argument("--force", action="store_true",
                   help="replace a recording made with other code, or record a complete one anew")
    return p


def identity(params: IdentifyParams, args: argparse.Namespace) -> Identity:
    return candidate_identity(params, args.candidate, lots=Path(args.lots),
                              makes_file=vocabulary(args.makes, "makes.yaml", lots=args.lots), params_file=args.params)


def identify_live(args: argparse.Namespace, live: Path) -> int:
    """Run ``candor identify`` live into ``live`` as a child process (this interpreter); its exit code."""
    argv = [sys.executable, "-m", "candor_eval", "identify", "--candidate", args.candidate, "--params", args.params,
            "--lots", args.lots, "--mode", "live", "--record", live.as_posix(),
            "--answers", live.with_suffix(".answers.jsonl").as_posix()]
    for flag, value in given(build_parser(), args, PASSED_ON):
        argv += [flag, str(value)]
    log.info("recording %s live: %s", args.candidate, live)
    return subprocess.run(argv, check=False).returncode


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    check_name(args.candidate, what="candidate", where="CANDIDATE")
    params = section(IdentifyParams, "identify", path=args.params)
    if args.candidate not in params.candidates:
        raise fail(f"{args.params}:identify.candidates", f"{args.candidate} is not a candidate",
                   expected="a candidate the pipeline scores", got=params.candidates,
                   hint="add it to identify.candidates (and identify.sources) first")
    golden = load_golden(args.lots)
    cand = identity(params, args)
    ids = select_ids(golden, [])
    gallery = params.gallery_of(args.candidate)
    rec_file = Path(args.lots) / "recordings" / f"{args.candidate}.jsonl"
    existing = load_recording(rec_file) if rec_file.exists() else []
    if not args.force:
        if (problem := replaced_problem(existing, sha=cand.sha, file=rec_file.as_posix())) is not None:
            raise InputError(problem, hint=f"to replace it: candor record {args.candidate} --force")
        try:
            promoted_lines(existing, ids=ids, runs=params.runs, sha=cand.sha, gallery=gallery,
                           file=rec_file.as_posix(), code=cand.code, parts=cand.parts)
            print(f"{rec_file}: up to date (every run recorded with this code); --force records it anew")
            return EXIT_OK
        except InputError:
            pass                                            # runs are missing: record them
    live = live_record(args.candidate, cand.sha)
    if not args.force and existing and not live.exists():
        write_text(live, recording_text(seed_lines(existing, sha=cand.sha, gallery=gallery)))
    if (code := identify_live(args, live)) != EXIT_OK:
        log.error("%s: not promoted (identify exited %d); `candor record %s` again asks the failed runs only",
                  live, code, args.candidate)
        return code
    if (now := identity(params, args)).sha != cand.sha:
        raise InputError(Problem(f"{args.params}:identify.sources.{args.candidate}",
                                 "changed during the live run: nothing promoted", expected=f"SHA-256 {cand.sha}",
                                 got=now.sha),
                         hint=f"run `candor record {args.candidate}` again to record the code as it is now")
    lines = promoted_lines(load_recording(live), ids=ids, runs=params.runs, sha=cand.sha, gallery=gallery,
                           file=live.as_posix(), code=cand.code, parts=cand.parts)
    text = recording_text(lines)
    write_text(rec_file, text)
    print(f"promoted {live} -> {rec_file} ({len(lines)} lines)")
    if (manifest := Path(args.lots) / MANIFEST_NAME).is_file():
        write_text(manifest, manifest_with(manifest, f"recordings/{args.candidate}.jsonl", text.encode("utf-8")))
        print(f"updated {manifest}: recordings/{args.candidate}.jsonl")
    print("next: dvc repro")
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(run_main(main))
