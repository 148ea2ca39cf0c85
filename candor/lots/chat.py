"""A minimal OpenAI-compatible chat-completions client (standard library only).

``POST <base_url>/chat/completions`` (the base URL's query string kept) with
``Authorization: Bearer <key>`` and one user message: the prompt text followed by the images
as ``image_url`` parts (data URLs, :mod:`candor.common.images`). The reply text is
``choices[0].message.content`` (a string, or a list of parts whose ``text`` are joined).

* **Deadline**: ``timeout_s`` bounds each whole attempt (connect, send, response headers and
  body), not each socket read: a watchdog shuts the socket down at the deadline, so a server
  trickling bytes is cut there and the attempt fails as ``timed out after <timeout_s> s``.
  (Name resolution is the one step the watchdog cannot interrupt.)
* **Redirects**: none is followed. A 3xx is a failure naming the target's origin (scheme,
  host, port): an API endpoint has no reason to redirect a POST, following one to another
  host would send it the key, and following 301/302/303 would turn the POST into a GET anyway.
  Set ``base_url`` to the endpoint itself.
* **Retries**: a 429, any 5xx, a timeout or a dropped connection is retried up to ``retries``
  times, waiting ``backoff_s * 2**attempt`` seconds (or the server's numeric
  ``Retry-After``), capped at ``max_backoff_s``. Any other HTTP status, a redirect or a
  malformed body fails at once. Before every attempt ``throttle()`` is called (the live
  run's :class:`candor.lots.ratelimit.RateLimiter`: every attempt counts against the limit).
* **Failure**: :class:`ChatError` whose message is the provider's error verbatim (status,
  reason, the start of the body), prefixed with the number of attempts.
* **Secrets** (:mod:`candor.lots.redact`): the key and the base URL's query values are
  replaced by ``***`` in every error message and in the reply text (a model that echoes the
  key back), before any of it leaves this module. User-info in ``base_url`` is refused
  (:func:`endpoint_problem`) and never sent.

The standard library is enough here (one POST, JSON in and out), so no HTTP dependency is
added. ``http.client`` rather than ``urllib.request``: it follows no redirect and lets the
watchdog reach the socket; proxy environment variables are therefore not used.
"""
from __future__ import annotations

import http.client
import json
import math
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from candor.common.errors import fail
from candor.lots.redact import MIN_SECRET, Redactor

BODY_EXCERPT = 500
MAX_BODY = 16 * 1024 * 1024


def endpoint_problem(base_url: str) -> str | None:
    """Why ``base_url`` cannot be called (``None`` when it can); never quotes the URL (it may hold a secret).

    Accepted: ``http`` or ``https``, a host, an optional numeric port, a path and a query, in
    ASCII; no whitespace or control character, no user-info (``name:password@``), no fragment.
    """
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in base_url):
        return "contains whitespace or a control character"
    if not base_url.isascii():
        return "contains a non-ASCII character (percent-encode it; an international host name in its xn-- form)"
    parts = urllib.parse.urlsplit(base_url)
    if parts.scheme not in ("http", "https"):
        return "needs the scheme http:// or https://"
    if "@" in parts.netloc:
        return ("user-info (name:password@) is not supported: the endpoint authenticates with the key "
                "in identify.api_key_env")
    if not parts.hostname:
        return "has no host"
    try:
        parts.port
    except ValueError:
        return "has a port that is not a number in 0-65535"
    if parts.fragment or base_url.endswith("#"):
        return "has a fragment (#...), which is never sent"
    return None


def read_api_key(variable: str, environ: Mapping[str, str]) -> str:
    """The key in environment variable ``variable``; InputError naming the variable (never the value)
    when it is unset, holds anything but visible ASCII (a trailing CR or LF from a copied file is
    the usual case), or is shorter than :data:`candor.lots.redact.MIN_SECRET` characters (too short
    to be redacted without blanking ordinary words)."""
    key = environ.get(variable, "")
    hint = "identify.api_key_env names the variable; set it or switch to identify.mode: replay"
    if not key:
        raise fail("environment", f"API key variable {variable} is not set", expected=f"export {variable}=<your key>",
                   hint=hint)
    if not all(0x21 <= ord(c) <= 0x7E for c in key):
        raise fail("environment", f"API key variable {variable} holds whitespace, a control character (a trailing "
                   "CR or LF) or a non-ASCII character", expected="visible ASCII only (the value is not shown)",
                   hint=f"strip the line ending: export {variable}=\"$(tr -d '\\r\\n' < keyfile)\"")
    if len(key) < MIN_SECRET:
        raise fail("environment", f"API key variable {variable} is shorter than {MIN_SECRET} characters",
                   expected=f"at least {MIN_SECRET} characters (the value is not shown; a server that ignores the key "
                            "accepts any, e.g. not-needed)")
    return key


@dataclass(frozen=True)
class ChatConfig:
    """Where and how to call: ``base_url`` like ``https://api.openai.com/v1`` (:func:`endpoint_problem`)."""

    base_url: str = field(repr=False)
    model: str
    timeout_s: float = 60.0
    retries: int = 3
    backoff_s: float = 2.0
    max_backoff_s: float = 60.0

    def __post_init__(self) -> None:
        if (why := endpoint_problem(self.base_url)) is not None:
            raise ValueError(f"base_url {why}")

    @property
    def target(self) -> str:
        """The request target: the base path plus ``/chat/completions``, then the base URL's query."""
        parts = urllib.parse.urlsplit(self.base_url)
        path = parts.path.rstrip("/") + "/chat/completions"
        return path + (f"?{parts.query}" if parts.query else "")

    @property
    def provider(self) -> str:
        """The endpoint's host name (never credentials or the path)."""
        return urllib.parse.urlsplit(self.base_url).hostname or "unknown"


@dataclass(frozen=True)
class ChatReply:
    """The reply text (redacted) and the model name the server reported (or the requested one)."""

    text: str
    model: str
    attempts: int


class ChatError(Exception):
    """A call that failed for good; ``str()`` is the provider's error, redacted."""


class _Retryable(Exception):
    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


def build_body(*, model: str, prompt: str, image_urls: Sequence[str]) -> dict[str, Any]:
    """The chat-completions request body: one user message, text then images."""
    content: list[dict[str, Any]] = [{"type": "text", "text": prompt}]
    content.extend({"type": "image_url", "image_url": {"url": u}} for u in image_urls)
    return {"model": model, "messages": [{"role": "user", "content": content}]}


def reply_text(body: bytes) -> tuple[str, str | None]:
    """``(text, model)`` from a response body; raise ValueError when malformed."""
    try:
        doc = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise ValueError(f"response is not JSON ({err})") from None
    except RecursionError:
        raise ValueError("response is not JSON (nested too deeply)") from None
    try:
        content = doc["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise ValueError("response has no choices[0].message.content") from None
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    if not isinstance(content, str):
        raise ValueError(f"choices[0].message.content is {type(content).__name__}, not text")
    model = doc.get("model") if isinstance(doc.get("model"), str) else None
    return content, model


def _retry_after(value: str | None) -> float | None:
    try:
        wait = float(value) if value is not None else None
    except ValueError:
        return None
    return max(0.0, wait) if wait is not None and math.isfinite(wait) else None


def _origin(location: str | None) -> str:
    parts = urllib.parse.urlsplit(location or "")
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}" if parts.netloc else "the same host"


def _exchange(config: ChatConfig, api_key: str, payload: bytes) -> tuple[http.client.HTTPResponse, bytes]:
    """One POST under the whole-call deadline; the response and up to MAX_BODY + 1 bytes of its body."""
    parts = urllib.parse.urlsplit(config.base_url)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = cls(parts.hostname, parts.port, timeout=config.timeout_s)
    expired = threading.Event()
    sockets: list[socket.socket] = []     # kept here: the connection forgets its socket once a response is read

    def cut() -> None:
        expired.set()
        for sock in sockets + ([conn.sock] if conn.sock is not None else []):
            try:
                socket.socket.shutdown(sock, socket.SHUT_RDWR)   # the raw socket, under any TLS layer
            except OSError:
                pass

    watchdog = threading.Timer(config.timeout_s, cut)
    watchdog.daemon = True
    watchdog.start()
    try:
        conn.connect()
        sockets.append(conn.sock)
        if expired.is_set():
            cut()
        conn.request("POST", config.target, body=payload, headers={
            "Content-Type": "application/json", "Authorization": f"Bearer {api_key}", "Accept": "application/json"})
        resp = conn.getresponse()
        body = resp.read(MAX_BODY + 1)
        if expired.is_set():                       # a body without a length, cut short by the watchdog
            raise TimeoutError
        return resp, body
    except (OSError, http.client.HTTPException, ValueError) as err:
        if expired.is_set() or isinstance(err, TimeoutError):
            raise _Retryable(f"timed out after {config.timeout_s:g} s") from None
        if isinstance(err, ValueError):          # http.client refusing the request itself: not retried
            raise ChatError(f"request could not be sent: {type(err).__name__}: {err}") from None
        raise _Retryable(f"connection failed: {type(err).__name__}: {err}") from None
    finally:
        watchdog.cancel()
        conn.close()


def _once(config: ChatConfig, api_key: str, payload: bytes) -> tuple[str, str | None]:
    resp, body = _exchange(config, api_key, payload)
    status = f"HTTP {resp.status} {resp.reason}"
    if 300 <= resp.status <= 399:
        raise ChatError(f"{status}: redirect to {_origin(resp.getheader('Location'))} not followed "
                        "(identify.base_url must name the endpoint itself)")
    if not 200 <= resp.status <= 299:
        excerpt = body[:BODY_EXCERPT].decode("utf-8", "replace").strip()
        message = status + (f": {excerpt}" if excerpt else "")
        if resp.status == 429 or 500 <= resp.status <= 599:
            raise _Retryable(message, _retry_after(resp.getheader("Retry-After")))
        raise ChatError(message)
    if len(body) > MAX_BODY:
        raise ChatError(f"malformed response: larger than {MAX_BODY // 2**20} MiB")
    try:
        return reply_text(body)
    except ValueError as err:
        raise ChatError(f"malformed response: {err}") from None


def complete(config: ChatConfig, api_key: str, *, prompt: str, image_urls: Sequence[str],
             sleep: Callable[[float], None] = time.sleep, throttle: Callable[[], None] = lambda: None) -> ChatReply:
    """One chat completion with retries; raise :class:`ChatError` when it fails for good."""
    redact = Redactor.for_endpoint(config.base_url, api_key)
    payload = json.dumps(build_body(model=config.model, prompt=prompt, image_urls=image_urls)).encode("utf-8")
    attempts = config.retries + 1
    message = "no attempt made"
    for attempt in range(attempts):
        throttle()
        try:
            text, model = _once(config, api_key, payload)
            return ChatReply(text=redact(text), model=redact(model or config.model), attempts=attempt + 1)
        except _Retryable as err:
            if attempt + 1 >= attempts:
                message = f"after {attempts} attempt(s): {err}"
                break
            wait = err.retry_after if err.retry_after is not None else config.backoff_s * 2 ** attempt
            sleep(min(wait, config.max_backoff_s))
        except ChatError as err:
            message = f"after {attempt + 1} attempt(s): {err}"
            break
    # raised outside the except blocks: the unredacted provider error is not kept as __context__
    raise ChatError(redact(message))
