"""identify stage: the model step of the lots track, per candidate, replayed or live.

    python -m stages.identify --candidate prompt-b [--lots data/lots] [--answers build/answers/prompt-b.jsonl]
    python -m stages.identify --candidate prompt-b --mode live --case 'drill*' --runs 5 \\
        --label gpt-x-newprompt --out /tmp/bm.json          # by hand: a throwaway report

Inputs: the golden set (``--lots``: ``lots.csv``, ``cases/*.json``, photos),
the candidate's prompt ``<lots>/prompts/<candidate>.txt`` (its SHA-256 goes
with every answer) and, in replay mode, its recording
``<lots>/recordings/<candidate>.jsonl`` (:mod:`candor.lots.recording`).

Params (``identify`` in params.yaml, :class:`candor.lots.params.IdentifyParams`): ``mode``
replay|live, ``runs`` per lot or case, ``gallery`` first|all (one photo or the whole
gallery per lot), ``providers`` (candidate -> ``local-ocr``; unlisted candidates are
``openai-compatible``), ``pause_s``
between remote calls (per thread), ``timeout_s`` (whole-call deadline per attempt),
``retries``, ``backoff_s``, ``concurrency`` (threads) and ``max_calls_per_minute``
(null: unlimited), ``base_url`` (OpenAI-compatible, e.g. https://api.openai.com/v1), ``model``
and ``api_key_env`` (the *name* of the environment variable holding the key; the key is never
read from a file, printed or recorded: it and the base URL's query values are redacted from
everything the run writes or prints, :mod:`candor.lots.redact`). A ``local-ocr`` candidate reads what it can name from
``--makes`` (``data/lots/vocabulary/makes.yaml``, :mod:`candor.lots.vocabulary`); its recorded
SHA-256 covers its prompt file and that list (:func:`candor.lots.ocr_reading.reader_sha256`); in
live mode it also reads ``--tokens`` and ``lots.min_number_digits`` (the token rules that say
what a model code is).

* **replay** (default, offline, what CI runs): the recording must hold runs
  1..runs of every lot and case, made with this prompt (same SHA-256) and this
  gallery setting; otherwise exit 2 naming what is missing or stale (:mod:`candor.lots.replay`).
* **live**: asks the candidate's provider for every (lot/case, run) in order (:mod:`candor.lots.live`:
  pauses, retries, resume after an interruption), appending each finished run to the
  live recording (``--record``, default ``build/live/<label>.jsonl``). ``openai-compatible``
  calls the endpoint (a missing, short or CR/LF-tainted key exits 2 naming the variable,
  never showing the value); ``local-ocr`` runs
  RapidOCR on this machine (:mod:`candor.lots.ocr`; no key, no network, no pause). A failed
  run is recorded with the provider's error verbatim and the other runs are kept; the
  stage exits 1 at the end when any run failed. Copy the live recording to
  ``<lots>/recordings/<candidate>.jsonl`` (and rewrite the manifest) to make replay use it.

Output (``--answers``, DVC-cached): one normalised answer per (lot/case, run),
sorted by (id, run), as JSON lines (:mod:`candor.lots.answers`).

By hand: ``--case GLOB`` (repeatable) keeps matching lot ids
and case names, ``--runs N`` overrides ``runs``, ``--label NAME`` names the
report only, ``--out PATH`` writes a throwaway report (answers with the raw
model text, field scores) to a path outside the repository instead of the
pipeline output. These flags require ``--out``. The console table per case is
printed either way; in live mode each raw answer is logged as it arrives.
"""
from __future__ import annotations

import argparse
import hashlib
import logging
import os
from collections.abc import Sequence
from pathlib import Path

from candor.common.atomic import write_json
from candor.common.errors import EXIT_CALLS_FAILED, EXIT_OK, fail, run_main
from candor.common.params import DEFAULT_PARAMS, section
from candor.lots.answers import normalise, write_answers
from candor.lots.fields import format_case_table
from candor.lots.golden import load_golden
from candor.lots.chat import ChatConfig, read_api_key
from candor.lots.live import ChatResponder, Responder, run_live
from candor.lots.ocr import OcrResponder
from candor.lots.ocr_reading import reader_sha256
from candor.lots.params import IdentifyParams, LotsParams
from candor.lots.ratelimit import RateLimiter
from candor.lots.recording import load_recording
from candor.lots.replay import check_replay, select_ids
from candor.lots.scoring import field_json, field_scores
from candor.lots.vocabulary import FOLDER, Makes, read_token_rules, read_vocabulary

log = logging.getLogger("candor.identify")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m stages.identify", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--candidate", required=True, help="prompt name: <lots>/prompts/<candidate>.txt")
    p.add_argument("--lots", default="data/lots", help="golden-set folder (default: data/lots)")
    p.add_argument("--answers", help="normalised answers out (default: build/answers/<candidate>.jsonl)")
    p.add_argument("--makes", default=str(FOLDER / "makes.yaml"), help="local-ocr: what the reader can name")
    p.add_argument("--tokens", default=str(FOLDER / "tokens.yaml"), help="local-ocr, live: the token word lists")
    p.add_argument("--mode", choices=["replay", "live"], help="override identify.mode")
    p.add_argument("--record", help="live recording to append to (default: build/live/<label>.jsonl)")
    p.add_argument("--case", action="append", default=[], metavar="GLOB", help="only these lot ids / case names")
    p.add_argument("--runs", type=int, help="override identify.runs")
    p.add_argument("--label", help="name of the report (and of the default live recording)")
    p.add_argument("--out", help="throwaway report (JSON, with raw model text) outside the repository")
    p.add_argument("--params", default=str(DEFAULT_PARAMS), help="params file (default: params.yaml)")
    return p


def chat_responder(params: IdentifyParams) -> Responder:
    """The OpenAI-compatible endpoint, with the key from the environment variable ``api_key_env``
    and the call-rate limit ``max_calls_per_minute``."""
    api_key = read_api_key(params.api_key_env, os.environ)
    config = ChatConfig(base_url=params.base_url, model=params.model, timeout_s=params.timeout_s,
                        retries=params.retries, backoff_s=params.backoff_s)
    return ChatResponder(config=config, api_key=api_key, limiter=RateLimiter(params.max_calls_per_minute))


def local_responder(makes: Makes, args: argparse.Namespace) -> Responder:
    """RapidOCR with the reading rules (``makes`` and the token rules: ``--tokens``, ``lots.min_number_digits``)."""
    lots = section(LotsParams, "lots", path=args.params)
    return OcrResponder(makes.rules(tokens=read_token_rules(args.tokens, min_number_digits=lots.min_number_digits)))


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    params = section(IdentifyParams, "identify", path=args.params)
    if (args.case or args.runs is not None or args.label) and not args.out:
        raise fail("command line", "--case, --runs and --label are for by-hand runs",
                   expected="--out PATH (a throwaway report outside the repository)", got="no --out")
    if args.out and Path(args.out).resolve().is_relative_to(Path.cwd().resolve()):
        raise fail("--out", "the throwaway report holds raw model text and must stay outside the repository",
                   expected="a path outside " + Path.cwd().as_posix(), got=args.out)
    if args.runs is not None and args.runs < 1:
        raise fail("--runs", "must be at least 1", got=args.runs)
    mode = args.mode or params.mode
    runs = args.runs or params.runs
    label = args.label or args.candidate
    golden = load_golden(args.lots)
    prompt_file = Path(args.lots) / "prompts" / f"{args.candidate}.txt"
    try:
        template_bytes = prompt_file.read_bytes()
    except FileNotFoundError:
        raise fail(prompt_file.as_posix(), "prompt not found", expected="the candidate's prompt file") from None
    provider = params.provider(args.candidate)
    local = provider == "local-ocr"
    makes = read_vocabulary(Makes, args.makes) if local else None
    sha = (reader_sha256(template_bytes, makes.model_dump()) if makes is not None
           else hashlib.sha256(template_bytes).hexdigest())
    ids = select_ids(golden, args.case)

    if mode == "replay":
        rec_file = Path(args.lots) / "recordings" / f"{args.candidate}.jsonl"
        lines = check_replay(load_recording(rec_file), ids=ids, runs=runs, sha=sha, gallery=params.gallery,
                             file=rec_file.as_posix())
    else:
        record = Path(args.record) if args.record else Path("build/live") / f"{label}.jsonl"
        responder = local_responder(makes, args) if makes is not None else chat_responder(params)
        lines = run_live(golden, ids=ids, runs=runs, gallery=params.gallery, pause_s=0.0 if local else params.pause_s,
                         template=template_bytes.decode("utf-8"), sha=sha, record=record, responder=responder,
                         concurrency=1 if local else params.concurrency)

    lines = sorted(lines, key=lambda x: (x.case, x.run))
    answers = [normalise(ln) for ln in lines]
    scores = field_scores(golden, answers, answered_only=True)
    failed = sum(a.status == "error" for a in answers) if mode == "live" else 0
    if args.out:
        first = lines[0] if lines else None
        write_json(args.out, {
            "label": label, "candidate": args.candidate, "mode": mode, "runs": runs,
            "provider": first.provider if first else None, "model": first.model if first else None,
            "prompt_sha256": sha,
            "cases": [{"case": c.case, "score": c.score, "fields": [field_json(f) for f in c.fields],
                       "notes": list(c.notes), "errors": list(c.errors)} for c in scores],
            "answers": [a.model_dump() | {"raw": ln.raw} for a, ln in zip(answers, lines)],
        })
        log.info("wrote throwaway report %s", args.out)
    else:
        out = Path(args.answers) if args.answers else Path("build/answers") / f"{args.candidate}.jsonl"
        write_answers(out, answers)
        log.info("wrote %s: %d answers (%s, %d run(s) each)", out, len(answers), mode, runs)
    for c in scores:
        print(format_case_table(c))
    if failed:
        log.error("%d run(s) failed; they are recorded with their errors", failed)
        return EXIT_CALLS_FAILED
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(run_main(main))
