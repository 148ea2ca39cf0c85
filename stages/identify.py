"""identify stage: the model step of the lots track, per candidate, replayed or live.

    python -m stages.identify --candidate prompt-b [--lots data/lots] [--answers build/answers/prompt-b.jsonl]
    python -m stages.identify --candidate prompt-b --mode live --case 'drill*' --runs 5 \\
        --label gpt-x-newprompt --out /tmp/bm.json          # by hand: a throwaway report

Inputs: the golden set (``--lots``: ``lots.csv``, ``cases/*.json``, photos),
the candidate's prompt ``<lots>/prompts/<candidate>.txt`` (its SHA-256 goes
with every answer) and, in replay mode, its recording
``<lots>/recordings/<candidate>.jsonl`` (:mod:`candor.lots.recording`).

Params (``identify`` in params.yaml): ``mode`` replay|live, ``runs`` per lot
or case, ``gallery`` first|all (one photo or the whole gallery per lot),
``pause_s`` between live calls, ``timeout_s``, ``retries``, ``backoff_s``,
``base_url`` (OpenAI-compatible, e.g. https://api.openai.com/v1), ``model`` and
``api_key_env`` (the *name* of the environment variable holding the key; the key
is never read from a file, printed or recorded).

* **replay** (default, offline, what CI runs): the recording must hold runs
  1..runs of every lot and case, made with this prompt (same SHA-256) and this
  gallery setting; otherwise exit 2 naming what is missing or stale.
* **live**: calls the endpoint for every (lot/case, run) in order, sequentially,
  pausing ``pause_s`` between calls, with retries (:mod:`candor.lots.chat`). Each
  finished run is appended at once to the live recording (``--record``, default
  ``build/live/<label>.jsonl``); a rerun after an interruption skips the pairs
  already answered and retries those whose call failed. A failed run is
  recorded with the provider's error verbatim and the other runs are kept; the
  stage exits 1 at the end when any run failed. A missing key exits 2 naming the
  variable. Copy the live recording to ``<lots>/recordings/<candidate>.jsonl``
  (and rewrite the manifest) to make replay use it.

Output (``--answers``, DVC-cached): one normalised answer per (lot/case, run),
sorted by (id, run), as JSON lines (:func:`candor.lots.recording.normalise`).

By hand (seed 001's CLI): ``--case GLOB`` (repeatable) keeps matching lot ids
and case names, ``--runs N`` overrides ``runs``, ``--label NAME`` names the
report only, ``--out PATH`` writes a throwaway report (answers with the raw
model text, field scores) to a path outside the repository instead of the
pipeline output. These flags require ``--out``. The console table per case is
printed either way; in live mode each raw answer is logged as it arrives.
"""
from __future__ import annotations

import argparse
import fnmatch
import hashlib
import json
import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from candor.common.atomic import write_json, write_lines
from candor.lots.chat import ChatConfig, ChatError, complete
from candor.common.errors import EXIT_CALLS_FAILED, EXIT_OK, InputError, Problem, fail, run_main
from candor.lots.fields import RunAnswer, format_case_table, score_case
from candor.lots.golden import Golden, load_golden, render_prompt
from candor.common.images import data_url
from candor.common.params import DEFAULT_PARAMS, section
from candor.lots.recording import RecordLine, append_line, load_recording, normalise, parse_answer, parse_recording

log = logging.getLogger("candor.identify")


class IdentifyParams(BaseModel):
    """``identify`` section of params.yaml."""

    model_config = ConfigDict(extra="forbid")

    mode: Literal["replay", "live"] = "replay"
    candidates: list[str] = Field(default_factory=lambda: ["prompt-a", "prompt-b"], min_length=1)
    runs: int = Field(default=3, ge=1)
    gallery: Literal["first", "all"] = "all"
    pause_s: float = Field(default=1.0, ge=0)
    timeout_s: float = Field(default=60.0, gt=0)
    retries: int = Field(default=3, ge=0)
    backoff_s: float = Field(default=2.0, ge=0)
    base_url: str = "https://api.openai.com/v1"
    model: str = "gpt-4o-mini"
    api_key_env: str = Field(default="OPENAI_API_KEY", pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def select_ids(golden: Golden, globs: Sequence[str]) -> list[str]:
    """Lot ids and case names matching any glob (all when no glob), sorted."""
    ids = sorted(golden.ids())
    if not globs:
        return ids
    chosen = [i for i in ids if any(fnmatch.fnmatchcase(i, g) for g in globs)]
    if not chosen:
        raise fail("--case", "no lot or case matches", expected="a glob matching an id in lots.csv or a case name",
                   got=list(globs))
    return chosen


def check_replay(lines: Sequence[RecordLine], *, ids: Sequence[str], runs: int, sha: str, gallery: str,
                 file: str) -> dict[tuple[str, int], RecordLine]:
    """The recorded line of every wanted (id, run); InputError when missing or stale."""
    by_key = {(ln.case, ln.run): ln for ln in lines}
    problems: list[Problem] = []
    missing = [f"{i} run {r}" for i in ids for r in range(1, runs + 1) if (i, r) not in by_key]
    if missing:
        problems.append(Problem(file, f"{len(missing)} (case, run) pair(s) not recorded",
                                expected=f"runs 1..{runs} of every lot and case", got=", ".join(missing[:8])
                                + (" ..." if len(missing) > 8 else "")))
    wanted = [by_key[(i, r)] for i in ids for r in range(1, runs + 1) if (i, r) in by_key]
    stale = sorted({ln.prompt_sha256 for ln in wanted if ln.prompt_sha256 != sha})
    if stale:
        problems.append(Problem(file, "recorded with a different prompt", expected=f"prompt_sha256 {sha}",
                                got=", ".join(stale)))
    other = sorted({ln.gallery for ln in wanted if ln.gallery != gallery})
    if other:
        problems.append(Problem(file, "recorded with a different gallery setting", expected=gallery,
                                got=", ".join(other)))
    if problems:
        raise InputError(problems, hint="record it again with identify.mode: live (or set runs/gallery to match "
                                        "the recording)")
    return {(ln.case, ln.run): ln for ln in wanted}


def gallery_urls(golden: Golden, ident: str, gallery: str) -> list[str]:
    """Data URLs of the images sent for ``ident``: a case's image, or the lot's photos."""
    cases = {c.name: c for c in golden.cases}
    if ident in cases:
        return [data_url(golden.root / cases[ident].image)]
    lot = next(lot for lot in golden.lots if lot.id == ident)
    photos = lot.photos[:1] if gallery == "first" else lot.photos
    if not photos:
        raise fail(f"{(golden.root / 'lots.csv').as_posix()}: lot {ident}.photos", "no photo to send in live mode",
                   expected="at least one photo")
    return [data_url(golden.root / p) for p in photos]


def load_live(path: Path, *, sha: str, model: str, gallery: str, provider: str) -> list[RecordLine]:
    """The finished lines of an existing live recording (failed calls dropped, to be retried)."""
    if not path.exists():
        return []
    lines = parse_recording(path.read_text(encoding="utf-8"), file=path.as_posix(), allow_partial_tail=True)
    for ln in lines:
        if (ln.prompt_sha256, ln.model, ln.gallery, ln.provider) != (sha, model, gallery, provider):
            raise fail(path.as_posix(), "live recording was made with another prompt, model, gallery or provider",
                       expected=f"{sha[:12]}…/{model}/{gallery}/{provider}",
                       got=f"{ln.prompt_sha256[:12]}…/{ln.model}/{ln.gallery}/{ln.provider}",
                       hint="pass a new --record path (or --label), or delete the old recording")
    kept = [ln for ln in lines if ln.error is None]
    text = path.read_text(encoding="utf-8")
    cut_off = bool(text) and not text.endswith("\n")
    if len(kept) != len(lines) or cut_off:
        write_lines(path, [ln.to_json() for ln in kept])
    return kept


def run_live(golden: Golden, *, ids: Sequence[str], runs: int, params: IdentifyParams, template: str, sha: str,
             record: Path, api_key: str) -> list[RecordLine]:
    """Call the endpoint for every missing (id, run); append each finished run to ``record``."""
    config = ChatConfig(base_url=params.base_url, model=params.model, timeout_s=params.timeout_s,
                        retries=params.retries, backoff_s=params.backoff_s)
    done = {(ln.case, ln.run): ln for ln in load_live(record, sha=sha, model=params.model, gallery=params.gallery,
                                                     provider=config.provider)}
    cases = {c.name: c for c in golden.cases}
    todo = [(i, r) for i in ids for r in range(1, runs + 1) if (i, r) not in done]
    if done:
        log.info("resuming %s: %d run(s) already recorded, %d to go", record, len(done), len(todo))
    urls = {i: gallery_urls(golden, i, params.gallery) for i in sorted({i for i, _ in todo})}
    for n, (ident, run) in enumerate(todo):
        if n:
            time.sleep(params.pause_s)
        case = cases.get(ident)
        prompt = render_prompt(template, case.categoryLibrary if case else None)
        common = dict(case=ident, run=run, provider=config.provider, model=params.model, prompt_sha256=sha,
                      gallery=params.gallery)
        try:
            reply = complete(config, api_key, prompt=prompt, image_urls=urls[ident])
        except ChatError as err:
            line = RecordLine(error=str(err), **common)
            log.warning("%s run %d failed: %s", ident, run, err)
        else:
            parsed, why = parse_answer(reply.text)
            line = RecordLine(raw=reply.text, parsed=parsed, parse_error=why, **common)
            log.info("%s run %d (%d attempt(s)):\n%s", ident, run, reply.attempts, reply.text)
        append_line(record, line)
        done[(ident, run)] = line
    return [done[(i, r)] for i in ids for r in range(1, runs + 1)]


def case_scores(golden: Golden, answers: Sequence[dict[str, Any]]):
    """Field scores of every case present in ``answers``."""
    out = []
    for case in golden.cases:
        runs = [RunAnswer(run=a["run"], status=a["status"], data=a["fields"], error=a["error"])
                for a in answers if a["case"] == case.name]
        if runs:
            out.append(score_case(case.name, case.expectation_list(), runs))
    return out


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m stages.identify", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--candidate", required=True, help="prompt name: <lots>/prompts/<candidate>.txt")
    p.add_argument("--lots", default="data/lots", help="golden-set folder (default: data/lots)")
    p.add_argument("--answers", help="normalised answers out (default: build/answers/<candidate>.jsonl)")
    p.add_argument("--mode", choices=["replay", "live"], help="override identify.mode")
    p.add_argument("--record", help="live recording to append to (default: build/live/<label>.jsonl)")
    p.add_argument("--case", action="append", default=[], metavar="GLOB", help="only these lot ids / case names")
    p.add_argument("--runs", type=int, help="override identify.runs")
    p.add_argument("--label", help="name of the report (and of the default live recording)")
    p.add_argument("--out", help="throwaway report (JSON, with raw model text) outside the repository")
    p.add_argument("--params", default=str(DEFAULT_PARAMS), help="params file (default: params.yaml)")
    return p


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
    sha = sha256_bytes(template_bytes)
    ids = select_ids(golden, args.case)

    if mode == "replay":
        rec_file = Path(args.lots) / "recordings" / f"{args.candidate}.jsonl"
        chosen = check_replay(load_recording(rec_file), ids=ids, runs=runs, sha=sha, gallery=params.gallery,
                              file=rec_file.as_posix())
        lines = [chosen[(i, r)] for i in ids for r in range(1, runs + 1)]
    else:
        api_key = os.environ.get(params.api_key_env, "")
        if not api_key:
            raise fail("environment", f"API key variable {params.api_key_env} is not set",
                       expected=f"export {params.api_key_env}=<your key>",
                       hint="identify.api_key_env names the variable; set it or switch to identify.mode: replay")
        record = Path(args.record) if args.record else Path("build/live") / f"{label}.jsonl"
        lines = run_live(golden, ids=ids, runs=runs, params=params, template=template_bytes.decode("utf-8"),
                         sha=sha, record=record, api_key=api_key)

    answers = sorted((normalise(ln) for ln in lines), key=lambda a: (a["case"], a["run"]))
    scores = case_scores(golden, answers)
    failed = sum(a["status"] == "error" for a in answers) if mode == "live" else 0
    if args.out:
        first = lines[0] if lines else None
        write_json(args.out, {
            "label": label, "candidate": args.candidate, "mode": mode, "runs": runs,
            "provider": first.provider if first else None, "model": first.model if first else None,
            "prompt_sha256": sha,
            "cases": [{"case": c.case, "score": c.score, "fields": [
                {"field": f.field, "expected": list(f.expected), "hits": f.hits, "total": f.total, "score": f.score}
                for f in c.fields], "notes": list(c.notes), "errors": list(c.errors)} for c in scores],
            "answers": [a | {"raw": ln.raw} for a, ln in zip(answers, sorted(lines, key=lambda x: (x.case, x.run)))],
        })
        log.info("wrote throwaway report %s", args.out)
    else:
        out = Path(args.answers) if args.answers else Path("build/answers") / f"{args.candidate}.jsonl"
        write_lines(out, (json.dumps(a, ensure_ascii=False) for a in answers))
        log.info("wrote %s: %d answers (%s, %d run(s) each)", out, len(answers), mode, runs)
    for c in scores:
        print(format_case_table(c))
    if failed:
        log.error("%d run(s) failed; they are recorded with their errors", failed)
        return EXIT_CALLS_FAILED
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(run_main(main))
