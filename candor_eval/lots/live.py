"""Live: ask a responder for every missing (lot or case, run), resumable, optionally concurrent.

A **responder** answers one (lot or case, run) from its images: the OpenAI-compatible chat
endpoint (:class:`OpenAIChatResponder`, :mod:`candor_eval.lots.chat`), a local model
(:class:`candor_eval.lots.ocr.OcrResponder`), the production code's Python entry point
(:class:`candor_eval.lots.production.PythonResponder`), the app's HTTP route
(:class:`candor_eval.lots.route.RouteResponder`) or its process (:class:`candor_eval.lots.child.ExecResponder`).
It names the ``provider`` and ``model`` recorded
with every line (and the ``endpoint`` called, redacted, or None), checks and loads a lot's
images (:meth:`Responder.load`) and replies with the raw text (:meth:`Responder.reply`, given
the rendered prompt and the :func:`call_context`; a production responder ignores the prompt),
raising :class:`ReplyError` when the call failed for good. A remote responder's text and
errors are already redacted (:mod:`candor_eval.lots.redact`) when they reach this module; the
run redacts them again with every secret the run knows (``redact``), and a line is written only
once its serialised text holds no form of a secret (:func:`redacted_line`), so no secret reaches
the recording or the log. A lone surrogate in a text or an error is replaced
by U+FFFD before it is logged or recorded (:func:`candor_eval.lots.recording.without_surrogates`).

**One writer per recording**: a run holds an exclusive lock on ``<record>.lock``
(:func:`hold`) from before it reads the recording until it has written its last line; a
second run on the same recording exits 2 naming the holder (process id, host, start time),
so no call is paid twice and no (id, run) is written twice. The lock is the operating
system's (``flock``): it is released when the holder ends, even when it is killed.

Calls run on ``concurrency`` threads (1: one after the other), taken in (id, run) order; at
most ``concurrency`` are in flight, and a thread pauses ``pause_s`` between two of its own
calls (not before its first). The chat responder's rate limiter
(:class:`candor_eval.lots.ratelimit.RateLimiter`) spaces the HTTP attempts of all threads. Each
finished run is appended at once to the live recording (one line, flushed, by this thread
only, so each (id, run) is written exactly once); an interruption loses at most the calls in
flight: a rerun skips the pairs already answered and retries those whose call failed.

**File order**: lines are appended in the order calls finish (which varies with timing), and
when the run is over the recording is rewritten atomically in (id, run) order if it is not in
that order already, so a finished recording is the same file whatever the concurrency, the
timing or the interruptions. A failed call is recorded with the provider's error verbatim. A
live recording made with another prompt, model, gallery setting or provider is refused. Every
image is checked before the first call (an unusable photo wastes no call).

**Progress**: on a terminal a bar shows the calls done of those to make, their rate, the time
left and the failures so far (:func:`progress_bar`; nothing in a log, where a bar is noise); log
lines print above it. Each raw answer and each failed call's error is logged at DEBUG (the stage's
``-v``); the run ends with one tally line (:func:`tally`): calls made, time, rate, answers, failures
(with the first failure's error) and unparseable answers.
"""
from __future__ import annotations

import fcntl
import json
import logging
import os
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import IO, Any, Protocol

from tqdm import tqdm

from candor_eval.common.atomic import write_lines
from candor_eval.common.errors import fail
from candor_eval.common.images import data_url
from candor_eval.lots.chat import ChatConfig, ChatError, complete
from candor_eval.lots.client import recorded_url
from candor_eval.lots.golden import CategoryLibrary, Golden, render_prompt
from candor_eval.lots.ratelimit import RateLimiter
from candor_eval.lots.recording import (
    Gallery,
    RecordLine,
    append_line,
    parse_answer,
    parse_recording,
    without_surrogates,
)
from candor_eval.lots.redact import MASK, Redactor, redact_exception

log = logging.getLogger("candor.identify")
NO_SECRETS = Redactor()


class RedactingFilter(logging.Filter):
    """A log handler filter that passes every record through ``redact`` (:mod:`candor_eval.lots.redact`): the
    production code's own HTTP client may log the URL it calls, and the console is candor's output."""

    def __init__(self, redact: Redactor):
        super().__init__()
        self.redact = redact

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if (clean := without_surrogates(self.redact(message))) != message:
            record.msg, record.args = clean, ()
        if record.exc_info and record.exc_info[0] is not None:     # the traceback a formatter would append
            record.exc_text = without_surrogates(self.redact("".join(
                traceback.format_exception(*record.exc_info)).rstrip("\n")))
        if record.stack_info:
            record.stack_info = without_surrogates(self.redact(record.stack_info))
        return True


@contextmanager
def redacted_logs(redact: Redactor) -> Iterator[None]:
    """Every handler of the root logger passes its records through ``redact`` while the block runs
    (:class:`RedactingFilter`: the production code's own client logs go to this console too)."""
    handlers, scrub = list(logging.getLogger().handlers), RedactingFilter(redact)
    for handler in handlers:
        handler.addFilter(scrub)
    try:
        yield
    finally:
        for handler in handlers:
            handler.removeFilter(scrub)


@contextmanager
def redacted_exceptions(redact: Redactor) -> Iterator[None]:
    """Any exception leaving the block (production code's ``sys.exit(message)``, an interruption) leaves it with
    its message redacted (:func:`candor_eval.lots.redact.redact_exception`)."""
    try:
        yield
    except BaseException as err:
        redact_exception(err, redact)
        raise


class ReplyError(Exception):
    """A call that failed for good; ``str()`` is the provider's error, recorded verbatim."""


@dataclass(frozen=True)
class Reply:
    """The model's raw text, how many attempts it took, and the version the provider reported (or None)."""

    text: str
    attempts: int = 1
    version: str | None = None


class Responder(Protocol):
    """Who answers in live mode (module docstring)."""

    @property
    def provider(self) -> str: ...

    @property
    def model(self) -> str: ...

    @property
    def endpoint(self) -> str | None: ...

    def load(self, images: Sequence[Path]) -> Any:
        """Check and load one lot's images before any call; InputError naming the file when unusable."""

    def reply(self, *, prompt: str, images: Any, context: Mapping[str, Any]) -> Reply:
        """One answer about the loaded ``images``; :class:`ReplyError` when the call failed for good."""


@dataclass(frozen=True)
class OpenAIChatResponder:
    """The OpenAI-compatible chat endpoint: images as data URLs, retries of :mod:`candor_eval.lots.chat`,
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

    @property
    def endpoint(self) -> str:
        """``base_url`` as recorded (:func:`candor_eval.lots.client.recorded_url`)."""
        return recorded_url(self.config.base_url)

    def load(self, images: Sequence[Path]) -> list[str]:
        return [data_url(p) for p in images]

    def reply(self, *, prompt: str, images: list[str], context: Mapping[str, Any]) -> Reply:
        try:
            answer = complete(self.config, self.api_key, prompt=prompt, image_urls=images, throttle=self.limiter.wait)
        except ChatError as err:
            raise ReplyError(str(err)) from None
        return Reply(text=answer.text, attempts=answer.attempts)


def redacted_line(line: RecordLine, redact: Redactor) -> RecordLine:
    """``line`` as it may be written: its texts (``raw``, ``error``, ``version``) are redacted already, but
    escaping them as JSON can make a form of a secret appear in the serialised line (a ``\\n`` before the
    rest of a secret that starts with ``n``); then each of those texts that shows one is replaced by ``***``
    (an answer becomes unparseable), so the written line holds no form of a secret."""
    if not redact.leaks(line.to_json()):
        return line
    line = line.model_copy(update={k: MASK for k in ("error", "version") if (v := getattr(line, k)) is not None
                                   and redact.leaks(json.dumps(v, ensure_ascii=False))})
    if line.raw is not None and redact.leaks(line.to_json()):
        parsed, why = parse_answer(MASK)
        line = line.model_copy(update={"raw": MASK, "parsed": parsed, "parse_error": why})
    return line


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


def call_context(golden: Golden, ident: str, run: int, *, default_library: CategoryLibrary) -> dict[str, Any]:
    """What a production responder is told about one call: ``id``, ``kind`` (``lot`` or ``case``), ``run``,
    ``category_library`` (the case's, else ``default_library``, the suggestions of
    ``<lots>/vocabulary/category-library.yaml``, as lists or None) and ``default_library`` (True for the
    suggestions)."""
    case = next((c for c in golden.cases if c.name == ident), None)
    library = case.categoryLibrary if case is not None else None
    return {"id": ident, "kind": "case" if case is not None else "lot", "run": run,
            "category_library": (library or default_library).model_dump(mode="json"),
            "default_library": library is None}


@contextmanager
def hold(record: Path) -> Iterator[None]:
    """An exclusive lock on ``record`` for this process (module docstring); InputError naming the holder."""
    lock = record.with_name(record.name + ".lock")
    lock.parent.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.read(fd, 4096).decode("utf-8", "replace").strip() or "unknown (it is starting)"
            os.close(fd)
            raise fail(record.as_posix(), "another live run is recording here", got=holder,
                       hint="wait for it to finish, or record elsewhere (--record PATH or --label NAME)") from None
        try:
            same = os.fstat(fd).st_ino == os.stat(lock).st_ino   # not a lock file its last holder just removed
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    since = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    os.ftruncate(fd, 0)
    os.write(fd, json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "since": since}).encode())
    try:
        yield
    finally:
        lock.unlink(missing_ok=True)
        os.close(fd)


def load_live(path: Path, *, sha: str, model: str, gallery: str, provider: str) -> list[RecordLine]:
    """The finished lines of an existing live recording (failed calls and a cut-off last line
    are dropped from the file, to be retried)."""
    if not path.exists():
        return []
    text = path.read_text(encoding="utf-8")
    lines = parse_recording(text, file=path.as_posix(), allow_partial_tail=True)
    for ln in lines:
        if (ln.prompt_sha256, ln.model, ln.gallery, ln.provider) != (sha, model, gallery, provider):
            raise fail(path.as_posix(), "live recording was made with another prompt (or code), model, gallery or "
                       "provider",
                       expected=f"{sha[:12]}…/{model}/{gallery}/{provider}",
                       got=f"{ln.prompt_sha256[:12]}…/{ln.model}/{ln.gallery}/{ln.provider}",
                       hint="pass a new --record path (or --label), or delete the old recording")
    kept = [ln for ln in lines if ln.error is None]
    cut_off = bool(text) and not text.endswith("\n")
    if len(kept) != len(lines) or cut_off:
        write_lines(path, [ln.to_json() for ln in kept])
    return kept


def progress_bar(total: int, *, desc: str) -> tqdm:
    """The bar of a live run's ``total`` calls on stderr, shown on a terminal only (module docstring)."""
    return tqdm(total=total, desc=desc, unit="call", disable=None, dynamic_ncols=True, leave=True)


class AboveBar:
    """A text stream that writes to ``stream`` above the progress bars drawn on it (the bar is cleared,
    the text written, the bar drawn again): a log handler's stream while a bar runs."""

    def __init__(self, stream: IO[str]):
        self.stream = stream

    def write(self, text: str) -> int:
        with tqdm.external_write_mode(file=self.stream):
            n = self.stream.write(text)
            self.stream.flush()
        return n

    def flush(self) -> None:
        self.stream.flush()


@contextmanager
def logs_above_bar() -> Iterator[None]:
    """Every root handler writing to stderr writes above the bar while the block runs (its filters, the
    redaction among them, stay as they are)."""
    swapped = [h for h in logging.getLogger().handlers
               if isinstance(h, logging.StreamHandler) and h.stream in (sys.stderr, sys.__stderr__)]
    old = [h.setStream(AboveBar(h.stream)) for h in swapped]
    try:
        yield
    finally:
        for h, stream in zip(swapped, old):
            h.setStream(stream)


def tally(lines: Sequence[RecordLine], *, seconds: float, record: Path, width: int = 76) -> list[str]:
    """The closing lines of a live run of ``lines`` (the calls it made), ``seconds`` long: the counts, where
    they are recorded, and the first failure's error (cut to ``width`` characters: ``-v`` logs each whole)."""
    failed = [ln for ln in lines if ln.error is not None]
    unparseable = sum(ln.error is None and ln.parse_error is not None for ln in lines)
    rate = f", {len(lines) / seconds:.2f} calls/s" if seconds > 0 else ""
    out = [f"{len(lines)} call(s) in {seconds:.1f} s{rate}: {len(lines) - len(failed)} answered "
           f"({unparseable} unparseable), {len(failed)} failed",
           f"recorded in {record.as_posix()}"]
    if failed:
        head = f"first failure: {failed[0].case} run {failed[0].run}: "
        error = " ".join((failed[0].error or "").split())
        room = max(width - len(head), 10)
        out.append(head + (error if len(error) <= room else error[:room - 1] + "…"))
    return out


def run_live(golden: Golden, *, ids: Sequence[str], runs: int, gallery: Gallery, pause_s: float, template: str | None,
             sha: str, record: Path, responder: Responder, default_library: CategoryLibrary,
             concurrency: int = 1, redact: Redactor = NO_SECRETS,
             sources: dict[str, str] | None = None) -> list[RecordLine]:   # each line's ``sources``
    """Ask ``responder`` for every missing (id, run) on ``concurrency`` threads, appending each finished
    run to ``record`` (then putting it in (id, run) order) under :func:`hold`; every wanted line in (id, run)
    order. ``template`` is the prompt (None for a production responder, which builds its own);
    ``default_library`` the categories suggested where a case brings none (:func:`call_context`); ``redact``
    every secret of the run, applied to each text logged or recorded (:func:`redacted_line`). A responder
    holding processes (:class:`candor_eval.lots.child.ExecResponder`) has a ``close()``, called when the run
    ends, however it ends."""
    with hold(record):
        try:
            return _run_live(golden, ids=ids, runs=runs, gallery=gallery, pause_s=pause_s, template=template,
                             sha=sha, record=record, responder=responder, default_library=default_library,
                             concurrency=concurrency, redact=redact, sources=sources)
        finally:
            if (close := getattr(responder, "close", None)) is not None:
                close()                    # the exec provider's processes, however the run ended


def _run_live(golden: Golden, *, ids: Sequence[str], runs: int, gallery: Gallery, pause_s: float, template: str | None,
              sha: str, record: Path, responder: Responder, default_library: CategoryLibrary,
              concurrency: int, redact: Redactor, sources: dict[str, str] | None = None) -> list[RecordLine]:
    kept = load_live(record, sha=sha, model=responder.model, gallery=gallery, provider=responder.provider)
    done = {(ln.case, ln.run): ln for ln in kept}
    in_file = list(done)
    cases = {c.name: c for c in golden.cases}
    todo = [(i, r) for i in ids for r in range(1, runs + 1) if (i, r) not in done]
    if done:
        log.info("resuming %s: %d run(s) already recorded, %d to go", record, len(done), len(todo))
    images = {i: responder.load(gallery_paths(golden, i, gallery)) for i in sorted({i for i, _ in todo})}
    prompts = {i: "" if template is None else render_prompt(template, cases[i].categoryLibrary if i in cases else None,
                                                            default=default_library)
               for i in images}
    worker = threading.local()

    def ask(ident: str, run: int) -> RecordLine:
        if getattr(worker, "called", False) and pause_s:
            time.sleep(pause_s)
        worker.called = True
        line = partial(RecordLine, case=ident, run=run, provider=responder.provider, model=responder.model,
                       prompt_sha256=sha, gallery=gallery, endpoint=responder.endpoint, sources=sources,
                       environment=getattr(responder, "environment", None))  # responders.Recorded
        try:
            reply = responder.reply(prompt=prompts[ident], images=images[ident],
                                    context=call_context(golden, ident, run, default_library=default_library))
        except ReplyError as err:
            message = without_surrogates(redact(str(err)))
            log.debug("%s run %d failed: %s", ident, run, message)
            return redacted_line(line(error=message), redact)
        text = without_surrogates(redact(reply.text))
        parsed, why = parse_answer(text)
        log.debug("%s run %d (%d attempt(s)):\n%s", ident, run, reply.attempts, text)
        version = None if reply.version is None else without_surrogates(redact(reply.version))
        return redacted_line(line(raw=text, parsed=parsed, parse_error=why, version=version), redact)

    queue = iter(todo)
    pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="live")
    pending: dict[Future[RecordLine], tuple[str, int]] = {}
    made: list[RecordLine] = []
    start = time.monotonic()
    with progress_bar(len(todo), desc=f"live {record.stem}") as bar, logs_above_bar():
        _ask_all(queue, pending, pool, ask=ask, concurrency=concurrency, record=record, done=done, in_file=in_file,
                 made=made, bar=bar)
    for text in tally(made, seconds=time.monotonic() - start, record=record) if todo else []:
        log.info("%s", text)
    if in_file != sorted(in_file):
        write_lines(record, [done[k].to_json() for k in sorted(in_file)])
    return [done[(i, r)] for i in ids for r in range(1, runs + 1)]


def _ask_all(queue: Iterator[tuple[str, int]], pending: dict[Future[RecordLine], tuple[str, int]],
             pool: ThreadPoolExecutor, *, ask: Callable[[str, int], RecordLine], concurrency: int, record: Path,
             done: dict[tuple[str, int], RecordLine], in_file: list[tuple[str, int]], made: list[RecordLine],
             bar: tqdm) -> None:
    """Submit the calls of ``queue``, at most ``concurrency`` in flight, appending each finished one to
    ``record`` (``done``, ``in_file`` and ``made`` updated) and ticking ``bar`` with the failures so far."""
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
                    made.append(fut.result())
                    bar.set_postfix_str(f"failed {sum(ln.error is not None for ln in made)}", refresh=False)
                    bar.update(1)
                if not errors and (nxt := next(queue, None)) is not None:
                    pending[pool.submit(ask, *nxt)] = nxt
            if errors:
                raise errors[0]
    finally:
        pool.shutdown(wait=not pending, cancel_futures=True)   # interrupted: calls in flight are not recorded
