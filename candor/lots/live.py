"""Live: ask a responder for every missing (lot or case, run), resumable, optionally concurrent.

A **responder** answers one prompt about a lot's images: the OpenAI-compatible chat endpoint
(:class:`ChatResponder`, :mod:`candor.lots.chat`) or a local model
(:class:`candor.lots.ocr.OcrResponder`). It names the ``provider`` and ``model`` recorded with
every line, checks and loads a lot's images (:meth:`Responder.load`) and replies with the
model's raw text (:meth:`Responder.reply`), raising :class:`ReplyError` when the call failed
for good. A chat responder's text and errors are already redacted (:mod:`candor.lots.redact`)
when they reach this module, so no secret reaches the recording or the log.

Calls run on ``concurrency`` threads (1: one after the other), taken in (id, run) order; at
most ``concurrency`` are in flight, and a thread pauses ``pause_s`` between two of its own
calls (not before its first). The chat responder's rate limiter
(:class:`candor.lots.ratelimit.RateLimiter`) spaces the HTTP attempts of all threads. Each
finished run is appended at once to the live recording (one line, flushed, by this thread
only, so each (id, run) is written exactly once); an interruption loses at most the calls in
flight: a rerun skips the pairs already answered and retries those whose call failed.

**File order**: lines are appended in the order calls finish (which varies with timing), and
when the run is over the recording is rewritten atomically in (id, run) order if it is not in
that order already, so a finished recording is the same file whatever the concurrency, the
timing or the interruptions. A failed call is recorded with the provider's error verbatim. A
live recording made with another prompt, model, gallery setting or provider is refused. Every
image is checked before the first call (an unusable photo wastes no call).
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from candor.common.atomic import write_lines
from candor.common.errors import fail
from candor.common.images import data_url
from candor.lots.chat import ChatConfig, ChatError, complete
from candor.lots.golden import Golden, render_prompt
from candor.lots.ratelimit import RateLimiter
from candor.lots.recording import RecordLine, append_line, parse_answer, parse_recording

log = logging.getLogger("candor.identify")


class ReplyError(Exception):
    """A call that failed for good; ``str()`` is the provider's error, recorded verbatim."""


@dataclass(frozen=True)
class Reply:
    """The model's raw text and how many attempts it took."""

    text: str
    attempts: int = 1


class Responder(Protocol):
    """Who answers in live mode (module docstring)."""

    @property
    def provider(self) -> str: ...

    @property
    def model(self) -> str: ...

    def load(self, images: Sequence[Path]) -> Any:
        """Check and load one lot's images before any call; InputError naming the file when unusable."""

    def reply(self, *, prompt: str, images: Any) -> Reply:
        """One answer about the loaded ``images``; :class:`ReplyError` when the call failed for good."""


@dataclass(frozen=True)
class ChatResponder:
    """The OpenAI-compatible chat endpoint: images as data URLs, retries of :mod:`candor.lots.chat`,
    every HTTP attempt spaced by ``limiter``."""

    config: ChatConfig
    api_key: str = field(repr=False)
    limiter: RateLimiter = field(default_factory=lambda: RateLimiter(None))

    @property
    def provider(self) -> str:
        return self.config.provider

    @property
    def model(self) -> str:
        return self.config.model

    def load(self, images: Sequence[Path]) -> list[str]:
        return [data_url(p) for p in images]

    def reply(self, *, prompt: str, images: list[str]) -> Reply:
        try:
            answer = complete(self.config, self.api_key, prompt=prompt, image_urls=images, throttle=self.limiter.wait)
        except ChatError as err:
            raise ReplyError(str(err)) from None
        return Reply(text=answer.text, attempts=answer.attempts)


def gallery_paths(golden: Golden, ident: str, gallery: str) -> list[Path]:
    """The images of ``ident``: a case's image, or the lot's photos (``first``: only one)."""
    cases = {c.name: c for c in golden.cases}
    if ident in cases:
        return [golden.root / cases[ident].image]
    lot = next(lot for lot in golden.lots if lot.id == ident)
    photos = lot.photos[:1] if gallery == "first" else lot.photos
    if not photos:
        raise fail(f"{(golden.root / 'lots.csv').as_posix()}: lot {ident}.photos", "no photo to send in live mode",
                   expected="at least one photo")
    return [golden.root / p for p in photos]


def load_live(path: Path, *, sha: str, model: str, gallery: str, provider: str) -> list[RecordLine]:
    """The finished lines of an existing live recording (failed calls and a cut-off last line
    are dropped from the file, to be retried)."""
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    lines = parse_recording(text, file=path.as_posix(), allow_partial_tail=True)
    for ln in lines:
        if (ln.prompt_sha256, ln.model, ln.gallery, ln.provider) != (sha, model, gallery, provider):
            raise fail(path.as_posix(), "live recording was made with another prompt, model, gallery or provider",
                       expected=f"{sha[:12]}…/{model}/{gallery}/{provider}",
                       got=f"{ln.prompt_sha256[:12]}…/{ln.model}/{ln.gallery}/{ln.provider}",
                       hint="pass a new --record path (or --label), or delete the old recording")
    kept = [ln for ln in lines if ln.error is None]
    cut_off = bool(text) and not text.endswith("\n")
    if len(kept) != len(lines) or cut_off:
        write_lines(path, [ln.to_json() for ln in kept])
    return kept


def run_live(golden: Golden, *, ids: Sequence[str], runs: int, gallery: str, pause_s: float, template: str,
             sha: str, record: Path, responder: Responder, concurrency: int = 1) -> list[RecordLine]:
    """Ask ``responder`` for every missing (id, run) on ``concurrency`` threads, appending each finished
    run to ``record`` (then putting it in (id, run) order); every wanted line in (id, run) order."""
    kept = load_live(record, sha=sha, model=responder.model, gallery=gallery, provider=responder.provider)
    done = {(ln.case, ln.run): ln for ln in kept}
    in_file = list(done)
    cases = {c.name: c for c in golden.cases}
    todo = [(i, r) for i in ids for r in range(1, runs + 1) if (i, r) not in done]
    if done:
        log.info("resuming %s: %d run(s) already recorded, %d to go", record, len(done), len(todo))
    images = {i: responder.load(gallery_paths(golden, i, gallery)) for i in sorted({i for i, _ in todo})}
    prompts = {i: render_prompt(template, cases[i].categoryLibrary if i in cases else None) for i in images}
    worker = threading.local()

    def ask(ident: str, run: int) -> RecordLine:
        if getattr(worker, "called", False) and pause_s:
            time.sleep(pause_s)
        worker.called = True
        common = dict(case=ident, run=run, provider=responder.provider, model=responder.model, prompt_sha256=sha,
                      gallery=gallery)
        try:
            reply = responder.reply(prompt=prompts[ident], images=images[ident])
        except ReplyError as err:
            log.warning("%s run %d failed: %s", ident, run, err)
            return RecordLine(error=str(err), **common)
        parsed, why = parse_answer(reply.text)
        log.info("%s run %d (%d attempt(s)):\n%s", ident, run, reply.attempts, reply.text)
        return RecordLine(raw=reply.text, parsed=parsed, parse_error=why, **common)

    queue = iter(todo)
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="live")
    pending: dict[Future[RecordLine], tuple[str, int]] = {}
    try:
        for pair in queue:
            pending[pool.submit(ask, *pair)] = pair
            if len(pending) >= concurrency:
                break
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            errors = [e for fut in finished if (e := fut.exception()) is not None]
            for fut in sorted(finished, key=pending.__getitem__):
                pair = pending.pop(fut)
                if fut.exception() is None:
                    append_line(record, fut.result())
                    done[pair] = fut.result()
                    in_file.append(pair)
                if not errors and (nxt := next(queue, None)) is not None:
                    pending[pool.submit(ask, *nxt)] = nxt
            if errors:
                raise errors[0]
    finally:
        pool.shutdown(wait=not pending, cancel_futures=True)   # interrupted: calls in flight are not recorded
    if in_file != sorted(in_file):
        write_lines(record, [done[k].to_json() for k in sorted(in_file)])
    return [done[(i, r)] for i in ids for r in range(1, runs + 1)]
