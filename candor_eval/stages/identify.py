"""identify stage: the model step of the lots track, per candidate, replayed or live.

    candor identify --candidate prompt-b [--lots data/lots] [--answers build/answers/prompt-b.jsonl]
    candor identify --candidate prompt-b --mode live --case 'drill*' --runs 5 \\
        --label gpt-x-newprompt --out /tmp/bm.json          # by hand: a throwaway report

Inputs: the golden set (``--lots``: ``lots.csv``, ``cases/*.json``, photos),
the candidate's source ``identify.sources.<candidate>`` (default: its prompt
``<lots>/prompts/<candidate>.txt``; for production code, the file or folder of
it; its SHA-256 goes with every answer, :mod:`candor_eval.lots.source_identity`) and, in
replay mode, its recording ``<lots>/recordings/<candidate>.jsonl``
(:mod:`candor_eval.lots.recording`).

Params (``identify`` in params.yaml, :class:`candor_eval.lots.params.IdentifyParams`): ``mode``
replay|live, ``runs`` per lot or case, ``gallery`` first|all (one photo or the whole
gallery per lot), ``providers`` (candidate -> ``local-ocr``, ``{python: "pkg.mod:fn"}``
(:mod:`candor_eval.lots.production`), ``{http: URL, ...}`` (:mod:`candor_eval.lots.route`) or
``{exec: [program, arg, ...], ...}`` (:mod:`candor_eval.lots.child`): the production code itself;
unlisted candidates are ``openai-compatible``), ``sources``, ``pause_s``
between remote calls (per thread), ``timeout_s`` (whole-call deadline per attempt),
``retries``, ``backoff_s``, ``concurrency`` (threads) and ``max_calls_per_minute``
(null: unlimited), ``base_url`` (OpenAI-compatible, e.g. https://api.openai.com/v1), ``model``
and ``api_key_env`` (the *name* of the environment variable holding the key; the key is never
read from a file, printed or recorded: it and the base URL's query values are redacted from
everything the run writes or prints, :mod:`candor_eval.lots.redact`). A ``local-ocr`` candidate reads what it can
name from ``--makes`` (``makes.yaml``, :mod:`candor_eval.lots.vocabulary`); its recorded
SHA-256 covers its prompt file and that list (:func:`candor_eval.lots.ocr_reading.reader_sha256`); in
live mode it also reads ``--tokens`` (``tokens.yaml``) and ``lots.min_number_digits`` (the token rules
that say what a model code is); every live run reads ``--categories`` (``category-library.yaml``: the
categories suggested where a case brings none). Each word list not given as a flag is
``<lots>/vocabulary/<file>`` when that file exists, else candor's packaged default list.

* **replay** (default, offline, what CI runs): the recording must hold runs
  1..runs of every lot and case, made with this prompt or code (same SHA-256) and this
  gallery setting; otherwise exit 2 naming what is missing or stale and the command that
  records it again, with this run's flags (:mod:`candor_eval.lots.replay`). Production code is
  never imported in replay.
* **live**: asks the candidate's provider for every (lot/case, run) in order (:mod:`candor_eval.lots.live`:
  pauses, retries, resume after an interruption), appending each finished run to the
  live recording (``--record``, default ``build/live/<label>.jsonl``). ``openai-compatible``
  calls the endpoint (a missing, short or CR/LF-tainted key exits 2 naming the variable,
  never showing the value); ``local-ocr`` runs
  RapidOCR on this machine (:mod:`candor_eval.lots.ocr`; no key, no network, no pause); ``python``
  calls the production callable, ``http`` the app's route, ``exec`` the code's own long-lived
  process (JSON lines on its stdin and stdout). One live run per recording at a
  time (a second exits 2 naming the holder). A failed
  run is recorded with the provider's error verbatim and the other runs are kept; the
  stage exits 1 at the end when any run failed. Copy the live recording to
  ``<lots>/recordings/<candidate>.jsonl`` (and rewrite the manifest) to make replay use it.

Output (``--answers``, DVC-cached): one normalised answer per (lot/case, run),
sorted by (id, run), as JSON lines (:mod:`candor_eval.lots.answers`).

By hand: ``--case GLOB`` (repeatable) keeps matching lot ids
and case names, ``--runs N`` overrides ``runs``, ``--label NAME`` names the
report only (and the default live recording ``build/live/<label>.jsonl``; a name, as a candidate's is:
:mod:`candor_eval.common.names`), ``--out PATH`` writes a throwaway report (answers with the raw
model text, field scores) to a path outside the repository instead of the
pipeline output. These flags require ``--out``.

Console: replay prints the table of field scores per case. Live shows a progress bar on a
terminal (calls done of those to make, rate, time left, failures so far), then a tally (calls,
time, answered, failed with the first failure's error, unparseable) and one line of field scores
per case; ``-v`` (``--verbose``) also logs each raw answer and each failed call's error as it
arrives and prints the case tables.
"""
from __future__ import annotations

import argparse
import logging
import os
import shlex
import textwrap
from collections.abc import Sequence
from pathlib import Path

from candor_eval.common.atomic import dumps_json, write_text
from candor_eval.common.errors import EXIT_CALLS_FAILED, EXIT_OK, InputError, run_main
from candor_eval.common.names import check_name
from candor_eval.common.params import section
from candor_eval.common.tables import read_text
from candor_eval.lots.answers import Answer, normalise_line, write_answers
from candor_eval.lots.by_hand import check_by_hand, throwaway_report
from candor_eval.lots.field_scoring import field_scores
from candor_eval.lots.fields import REPLAYED_FAILURE, CaseScore, format_case_table
from candor_eval.lots.golden import Golden, load_golden
from candor_eval.lots.live import redacted_exceptions, redacted_logs, run_live
from candor_eval.lots.params import IdentifyParams
from candor_eval.lots.recording import RecordLine, load_recording
from candor_eval.lots.redact import Redactor, redacted_error
from candor_eval.lots.replay import check_replay, select_ids
from candor_eval.lots.responders import live_responder, run_secrets
from candor_eval.lots.source_identity import Identity, candidate_identity
from candor_eval.lots.vocabulary import read_category_library
from candor_eval.stages.cli_lots import (
    add_tokens,
    add_vocabulary,
    command,
    given,
    stage_parser,
    token_rules,
    vocabulary,
)

log = logging.getLogger("candor.identify")


def build_parser() -> argparse.ArgumentParser:
    p = stage_parser("candor identify", __doc__)
    p.add_argument("--candidate", required=True, help="prompt name: <lots>/prompts/<candidate>.txt")
    p.add_argument("--lots", default="data/lots", help="golden-set folder (default: data/lots)")
    p.add_argument("--answers", help="normalised answers out (default: build/answers/<candidate>.jsonl)")
    add_vocabulary(p, "--makes", "makes.yaml", purpose="local-ocr: what the reader can name")
    add_tokens(p, purpose="local-ocr, live: the token word lists")
    add_vocabulary(p, "--categories", "category-library.yaml",
                   purpose="live: the categories the prompt suggests when a case brings none")
    p.add_argument("--mode", choices=["replay", "live"], help="override identify.mode")
    p.add_argument("--record", help="live recording to append to (default: build/live/<label>.jsonl)")
    p.add_argument("--case", action="append", default=[], metavar="GLOB", help="only these lot ids / case names")
    p.add_argument("--runs", type=int, help="override identify.runs")
    p.add_argument("--label", help="name of the report (and of the default live recording)")
    p.add_argument("--out", help="throwaway report (JSON, with raw model text) outside the repository")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="live: log each raw answer and failed call's error, and print the case tables")
    return p


# The flags a command that records the candidate again repeats when given: what is recorded, and where
RERECORD_FLAGS = ("--params", "--lots", "--makes", "--tokens", "--categories")


def rerecord_command(args: argparse.Namespace) -> str:
    """The one command that records the candidate again: ``candor record <candidate>`` (live, then the
    recording promoted with its manifest entry for ``dvc repro`` to score), with the flags of this run
    (:data:`RERECORD_FLAGS`) that were given."""
    return f"{command('record', *given(build_parser(), args, RERECORD_FLAGS))} {shlex.quote(args.candidate)}"


def replay_lines(params: IdentifyParams, args: argparse.Namespace, cand: Identity, *, ids: Sequence[str],
                 runs: int) -> list[RecordLine]:
    """The recorded lines of every wanted (id, run) from ``<lots>/recordings/<candidate>.jsonl``
    (exit 2 naming what is missing or stale, with the command that records it again)."""
    rec_file = Path(args.lots) / "recordings" / f"{args.candidate}.jsonl"
    rerecord = rerecord_command(args)
    return check_replay(load_recording(rec_file, rerecord=rerecord), ids=ids, runs=runs, sha=cand.sha,
                        gallery=params.gallery_of(args.candidate), file=rec_file.as_posix(), code=cand.code,
                        rerecord=rerecord, parts=cand.parts)


def live_lines(params: IdentifyParams, args: argparse.Namespace, cand: Identity, golden: Golden, *,
               ids: Sequence[str], runs: int, label: str, redact: Redactor) -> list[RecordLine]:
    """Ask the candidate's provider for every missing (id, run), appending to the live recording
    (``--record``, default ``build/live/<label>.jsonl``), with every secret (``redact``) redacted from the
    recording and the logs."""
    template = None if cand.prompt_file is None else read_text(cand.prompt_file,
                                                               expected="the candidate's prompt, UTF-8 text")
    record = Path(args.record) if args.record else Path("build/live") / f"{label}.jsonl"
    local = cand.makes is not None
    tokens = vocabulary(args.tokens, "tokens.yaml", lots=args.lots)
    reading = cand.makes.rules(tokens=token_rules(tokens, params=args.params)) if cand.makes else None
    responder = live_responder(params, args.candidate, env=os.environ, reading=reading, params_file=args.params)
    with redacted_logs(redact), redacted_exceptions(redact):
        return run_live(golden, ids=ids, runs=runs, gallery=params.gallery_of(args.candidate),
                        pause_s=0.0 if local else params.pause_s,
                        template=template, sha=cand.sha, record=record, responder=responder,
                        default_library=read_category_library(vocabulary(args.categories, "category-library.yaml",
                                                                         lots=args.lots)),
                        concurrency=1 if local else params.concurrency, redact=redact, sources=cand.parts)


def exit_code(answers: Sequence[Answer], *, live: bool) -> int:
    """1 when a live run failed (it is recorded with its error), else 0; a replayed failure is an answer."""
    failed = sum(a.status == "error" for a in answers) if live else 0
    if failed:
        log.error("%d run(s) failed; they are recorded with their errors", failed)
        return EXIT_CALLS_FAILED
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logger = logging.getLogger("candor")
    level = logger.level
    if args.verbose:
        logger.setLevel(logging.DEBUG)
    try:
        return identify(args)
    finally:
        logger.setLevel(level)


def identify(args: argparse.Namespace) -> int:
    """The stage, its argv parsed (module docstring)."""
    check_name(args.candidate, what="candidate", where="--candidate")   # a file name: prompts/<candidate>.txt
    params = section(IdentifyParams, "identify", path=args.params)
    check_by_hand(cases=args.case, runs=args.runs, label=args.label, out=args.out, root=Path.cwd())
    mode, runs, label = args.mode or params.mode, args.runs or params.runs, args.label or args.candidate
    golden = load_golden(args.lots)
    cand = candidate_identity(params, args.candidate, lots=Path(args.lots),
                              makes_file=vocabulary(args.makes, "makes.yaml", lots=args.lots), params_file=args.params)
    ids = select_ids(golden, args.case)
    redact = run_secrets(params, args.candidate, os.environ)
    try:
        if mode == "replay":
            lines = replay_lines(params, args, cand, ids=ids, runs=runs)
        else:
            lines = live_lines(params, args, cand, golden, ids=ids, runs=runs, label=label, redact=redact)
    except InputError as err:          # production code's import error, quoted, can hold a secret
        raise redacted_error(err, redact) from None
    lines = sorted(lines, key=lambda x: (x.case, x.run))
    answers = [normalise_line(ln) for ln in lines]
    scores = field_scores(golden, answers, answered_only=True)
    if args.out:
        report = throwaway_report(label=label, candidate=args.candidate, mode=mode, runs=runs, sha=cand.sha,
                                  lines=lines, answers=answers, scores=scores)
        write_text(args.out, redact(dumps_json(redact.tree(report))))     # its strings, then its final text
        log.info("wrote throwaway report %s", args.out)
    else:
        out = Path(args.answers) if args.answers else Path("build/answers") / f"{args.candidate}.jsonl"
        write_answers(out, answers)
        log.info("wrote %s: %d answers (%s, %d run(s) each)", out, len(answers), mode, runs)
    if mode == "replay" or args.verbose:
        for c in scores:
            print(redact(format_case_table(c, failure=REPLAYED_FAILURE if mode == "replay" else LIVE_FAILURE)))
    else:
        print(redact(case_summary(scores)))
    return exit_code(answers, live=mode == "live")


LIVE_FAILURE = "failed in this live run (recorded with its error)"


def case_summary(scores: Sequence[CaseScore], *, width: int = 100) -> str:
    """The field score of every case (``n/a`` for none), wrapped to ``width`` columns, with the flag that
    prints their tables."""
    words = [f"{c.case} {'n/a' if c.score is None else f'{c.score:.2f}'}" for c in scores]
    return textwrap.fill("field scores: " + ", ".join(words) + " (-v prints each case's table)", width=width,
                         subsequent_indent="  ", break_on_hyphens=False)


if __name__ == "__main__":
    raise SystemExit(run_main(main))
