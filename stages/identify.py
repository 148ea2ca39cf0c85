"""identify stage: the model step of the lots track, per candidate, replayed or live.

    python -m stages.identify --candidate prompt-b [--lots data/lots] [--answers build/answers/prompt-b.jsonl]
    python -m stages.identify --candidate prompt-b --mode live --case 'drill*' --runs 5 \\
        --label gpt-x-newprompt --out /tmp/bm.json          # by hand: a throwaway report

Inputs: the golden set (``--lots``: ``lots.csv``, ``cases/*.json``, photos),
the candidate's source ``identify.sources.<candidate>`` (default: its prompt
``<lots>/prompts/<candidate>.txt``; for production code, the file or folder of
it; its SHA-256 goes with every answer, :mod:`candor.lots.identity`) and, in
replay mode, its recording ``<lots>/recordings/<candidate>.jsonl``
(:mod:`candor.lots.recording`).

Params (``identify`` in params.yaml, :class:`candor.lots.params.IdentifyParams`): ``mode``
replay|live, ``runs`` per lot or case, ``gallery`` first|all (one photo or the whole
gallery per lot), ``providers`` (candidate -> ``local-ocr``, ``{python: "pkg.mod:fn"}``
(:mod:`candor.lots.production`) or ``{http: URL, ...}`` (:mod:`candor.lots.route`): the
production code itself; unlisted candidates are ``openai-compatible``), ``sources``, ``pause_s``
between remote calls (per thread), ``timeout_s`` (whole-call deadline per attempt),
``retries``, ``backoff_s``, ``concurrency`` (threads) and ``max_calls_per_minute``
(null: unlimited), ``base_url`` (OpenAI-compatible, e.g. https://api.openai.com/v1), ``model``
and ``api_key_env`` (the *name* of the environment variable holding the key; the key is never
read from a file, printed or recorded: it and the base URL's query values are redacted from
everything the run writes or prints, :mod:`candor.lots.redact`). A ``local-ocr`` candidate reads what it can name from
``--makes`` (``data/lots/vocabulary/makes.yaml``, :mod:`candor.lots.vocabulary`); its recorded
SHA-256 covers its prompt file and that list (:func:`candor.lots.ocr_reading.reader_sha256`); in
live mode it also reads ``--tokens`` and ``lots.min_number_digits`` (the token rules that say
what a model code is); every live run reads ``--categories``
(``data/lots/vocabulary/category-library.yaml``: the categories suggested where a case brings none).

* **replay** (default, offline, what CI runs): the recording must hold runs
  1..runs of every lot and case, made with this prompt or code (same SHA-256) and this
  gallery setting; otherwise exit 2 naming what is missing or stale and the command that
  records it again (:mod:`candor.lots.replay`). Production code is never imported in replay.
* **live**: asks the candidate's provider for every (lot/case, run) in order (:mod:`candor.lots.live`:
  pauses, retries, resume after an interruption), appending each finished run to the
  live recording (``--record``, default ``build/live/<label>.jsonl``). ``openai-compatible``
  calls the endpoint (a missing, short or CR/LF-tainted key exits 2 naming the variable,
  never showing the value); ``local-ocr`` runs
  RapidOCR on this machine (:mod:`candor.lots.ocr`; no key, no network, no pause); ``python``
  calls the production callable, ``http`` the app's route. One live run per recording at a
  time (a second exits 2 naming the holder). A failed
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
from dataclasses import dataclass
from pathlib import Path

from candor.common.atomic import write_json
from candor.common.errors import EXIT_CALLS_FAILED, EXIT_OK, fail, run_main
from candor.common.params import DEFAULT_PARAMS, section
from candor.common.tables import read_text
from candor.lots.answers import normalise, write_answers
from candor.lots.chat import ChatConfig, read_api_key
from candor.lots.client import Policy
from candor.lots.field_scoring import field_json, field_scores
from candor.lots.fields import format_case_table
from candor.lots.golden import load_golden
from candor.lots.identity import module_file, source_sha256
from candor.lots.live import ChatResponder, RedactingFilter, Responder, run_live
from candor.lots.ocr import OcrResponder
from candor.lots.ocr_reading import reader_sha256
from candor.lots.params import HttpProvider, IdentifyParams, LotsParams, PythonProvider
from candor.lots.production import PythonResponder, load_entry_point, on_import_path
from candor.lots.ratelimit import RateLimiter
from candor.lots.recording import load_recording
from candor.lots.redact import Redactor, url_secrets
from candor.lots.replay import check_replay, select_ids
from candor.lots.route import RouteResponder, header_secrets, read_headers
from candor.lots.vocabulary import FOLDER, Makes, read_category_library, read_token_rules, read_vocabulary

log = logging.getLogger("candor.identify")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m stages.identify", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--candidate", required=True, help="prompt name: <lots>/prompts/<candidate>.txt")
    p.add_argument("--lots", default="data/lots", help="golden-set folder (default: data/lots)")
    p.add_argument("--answers", help="normalised answers out (default: build/answers/<candidate>.jsonl)")
    p.add_argument("--makes", default=str(FOLDER / "makes.yaml"), help="local-ocr: what the reader can name")
    p.add_argument("--tokens", default=str(FOLDER / "tokens.yaml"), help="local-ocr, live: the token word lists")
    p.add_argument("--categories", default=str(FOLDER / "category-library.yaml"),
                   help="live: the categories the prompt suggests when a case brings none")
    p.add_argument("--mode", choices=["replay", "live"], help="override identify.mode")
    p.add_argument("--record", help="live recording to append to (default: build/live/<label>.jsonl)")
    p.add_argument("--case", action="append", default=[], metavar="GLOB", help="only these lot ids / case names")
    p.add_argument("--runs", type=int, help="override identify.runs")
    p.add_argument("--label", help="name of the report (and of the default live recording)")
    p.add_argument("--out", help="throwaway report (JSON, with raw model text) outside the repository")
    p.add_argument("--params", default=str(DEFAULT_PARAMS), help="params file (default: params.yaml)")
    return p


@dataclass(frozen=True)
class Identity:
    """What a candidate's answers come from: its prompt file (``None`` for production code), the production
    code it is (``code``: the path, or ``None`` for a prompt), the local reader's makes list, and the SHA-256
    its recording carries."""

    sha: str
    prompt_file: Path | None = None
    code: str | None = None
    makes: Makes | None = None


def identity(params: IdentifyParams, args: argparse.Namespace) -> Identity:
    """The candidate's :class:`Identity`: ``identify.sources.<candidate>`` or the default place
    (``<lots>/prompts/<candidate>.txt``; a python provider's module file)."""
    provider = params.provider(args.candidate)
    source = params.sources.get(args.candidate)
    where = f"{args.params}:identify.sources.{args.candidate}"
    if isinstance(provider, PythonProvider | HttpProvider):
        if source is None:
            assert isinstance(provider, PythonProvider)     # an http provider has a source: IdentifyParams
            on_import_path()
            code = module_file(provider.module, where=f"{args.params}:identify.providers.{args.candidate}.python")
        else:
            code = Path(source)
        return Identity(sha=source_sha256(code, where=where), code=code.as_posix())
    prompt_file = Path(source) if source else Path(args.lots) / "prompts" / f"{args.candidate}.txt"
    try:
        template_bytes = prompt_file.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        raise fail(prompt_file.as_posix(), "prompt not found", expected="the candidate's prompt file") from None
    if provider == "local-ocr":
        makes = read_vocabulary(Makes, args.makes)
        return Identity(sha=reader_sha256(template_bytes, makes.model_dump()), prompt_file=prompt_file, makes=makes)
    return Identity(sha=hashlib.sha256(template_bytes).hexdigest(), prompt_file=prompt_file)


def live_responder(params: IdentifyParams, args: argparse.Namespace, cand: Identity) -> Responder:
    """The candidate's live responder; its secrets read from the environment (exit 2 naming a missing one)."""
    provider = params.provider(args.candidate)
    limiter = RateLimiter(params.max_calls_per_minute)
    policy = Policy(timeout_s=params.timeout_s, retries=params.retries, backoff_s=params.backoff_s)
    if isinstance(provider, PythonProvider):
        fn = load_entry_point(provider, where=f"{args.params}:identify.providers.{args.candidate}.python")
        key = os.environ.get(params.api_key_env)
        return PythonResponder(fn=fn, name=provider.python, policy=policy, secrets=[key] if key else [])
    if isinstance(provider, HttpProvider):
        headers = read_headers(provider, os.environ, where=f"identify.providers.{args.candidate}")
        return RouteResponder(spec=provider, headers=headers, policy=policy, throttle=limiter.wait)
    if cand.makes is not None:
        return local_responder(cand.makes, args)
    return chat_responder(params, limiter)


def run_secrets(params: IdentifyParams, candidate: str) -> Redactor:
    """Every secret a live run of ``candidate`` can know: the key, the base URL's and a route URL's query
    values, a route's header values (the environment's values of the variables the params name)."""
    provider = params.provider(candidate)
    values = [os.environ.get(params.api_key_env, ""), *url_secrets(params.base_url)]
    if isinstance(provider, HttpProvider):
        headers = [os.environ.get(v, "") for v in provider.headers.values()]
        values += [*url_secrets(provider.http), *header_secrets(headers)]
    return Redactor.of(values)


def chat_responder(params: IdentifyParams, limiter: RateLimiter) -> Responder:
    """The OpenAI-compatible endpoint, with the key from the environment variable ``api_key_env``
    and the call-rate limit ``max_calls_per_minute``."""
    api_key = read_api_key(params.api_key_env, os.environ)
    config = ChatConfig(base_url=params.base_url, model=params.model, timeout_s=params.timeout_s,
                        retries=params.retries, backoff_s=params.backoff_s)
    return ChatResponder(config=config, api_key=api_key, limiter=limiter)


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
    cand = identity(params, args)
    ids = select_ids(golden, args.case)

    if mode == "replay":
        rec_file = Path(args.lots) / "recordings" / f"{args.candidate}.jsonl"
        lines = check_replay(load_recording(rec_file), ids=ids, runs=runs, sha=cand.sha, gallery=params.gallery,
                             file=rec_file.as_posix(), code=cand.code,
                             rerecord=f"python -m stages.identify --candidate {args.candidate} --mode live "
                                      f"--record build/live/{args.candidate}-{cand.sha[:8]}.jsonl")
    else:
        template = None if cand.prompt_file is None else read_text(cand.prompt_file, expected="the candidate's "
                                                                    "prompt, UTF-8 text")
        record = Path(args.record) if args.record else Path("build/live") / f"{label}.jsonl"
        responder = live_responder(params, args, cand)
        local = cand.makes is not None
        handlers, scrub = logging.getLogger().handlers, RedactingFilter(run_secrets(params, args.candidate))
        for handler in handlers:                    # the production code's own client logs go to this console
            handler.addFilter(scrub)
        try:
            lines = run_live(golden, ids=ids, runs=runs, gallery=params.gallery,
                             pause_s=0.0 if local else params.pause_s, template=template, sha=cand.sha,
                             record=record, responder=responder, default_library=read_category_library(args.categories),
                             concurrency=1 if local else params.concurrency)
        finally:
            for handler in handlers:
                handler.removeFilter(scrub)

    lines = sorted(lines, key=lambda x: (x.case, x.run))
    answers = [normalise(ln) for ln in lines]
    scores = field_scores(golden, answers, answered_only=True)
    failed = sum(a.status == "error" for a in answers) if mode == "live" else 0
    if args.out:
        first = lines[0] if lines else None
        write_json(args.out, {
            "label": label, "candidate": args.candidate, "mode": mode, "runs": runs,
            "provider": first.provider if first else None, "model": first.model if first else None,
            "prompt_sha256": cand.sha,
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
