"""A minimal OpenAI-compatible chat-completions client (standard library only).

``POST <base_url>/chat/completions`` with ``Authorization: Bearer <key>`` and one
user message: the prompt text followed by the images as ``image_url`` parts
(data URLs, :mod:`candor.common.images`). The reply text is
``choices[0].message.content`` (a string, or a list of parts whose ``text`` are
joined).

Retries: a 429, any 5xx, a timeout or a dropped connection is retried up to
``retries`` times, waiting ``backoff_s * 2**attempt`` seconds (or the server's
numeric ``Retry-After``), capped at ``max_backoff_s``. Any other HTTP status or
a malformed body fails at once. A failure raises :class:`ChatError` whose
message is the provider's error verbatim (status, reason, the start of the
body), prefixed with the number of attempts; the API key is never part of it
(it is scrubbed from every message as a last guard).

The standard library is enough here (one POST, JSON in and out), so no HTTP
dependency is added.
"""
from __future__ import annotations

import http.client
import json
import socket
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

BODY_EXCERPT = 500


@dataclass(frozen=True)
class ChatConfig:
    """Where and how to call: ``base_url`` like ``https://api.openai.com/v1``."""

    base_url: str
    model: str
    timeout_s: float = 60.0
    retries: int = 3
    backoff_s: float = 2.0
    max_backoff_s: float = 60.0

    @property
    def endpoint(self) -> str:
        return self.base_url.rstrip("/") + "/chat/completions"

    @property
    def provider(self) -> str:
        """The endpoint's host name (never credentials or the path)."""
        return urllib.parse.urlsplit(self.base_url).hostname or "unknown"


@dataclass(frozen=True)
class ChatReply:
    """The reply text and the model name the server reported (or the requested one)."""

    text: str
    model: str
    attempts: int


class ChatError(Exception):
    """A call that failed for good; ``str()`` is the provider's error, key-free."""


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
    try:
        content = doc["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise ValueError("response has no choices[0].message.content") from None
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    if not isinstance(content, str):
        raise ValueError(f"choices[0].message.content is {type(content).__name__}, not text")
    model = doc.get("model") if isinstance(doc.get("model"), str) else None
    return content, model


def _scrub(text: str, secret: str) -> str:
    return text.replace(secret, "***") if secret else text


def _retry_after(value: str | None) -> float | None:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _once(config: ChatConfig, api_key: str, payload: bytes) -> tuple[str, str | None]:
    req = urllib.request.Request(config.endpoint, data=payload, method="POST", headers={
        "Content-Type": "application/json", "Authorization": f"Bearer {api_key}", "Accept": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=config.timeout_s) as resp:
            body = resp.read()
    except urllib.error.HTTPError as err:
        excerpt = err.read()[:BODY_EXCERPT].decode("utf-8", "replace").strip()
        message = f"HTTP {err.code} {err.reason}" + (f": {excerpt}" if excerpt else "")
        if err.code == 429 or 500 <= err.code <= 599:
            raise _Retryable(message, _retry_after(err.headers.get("Retry-After"))) from None
        raise ChatError(message) from None
    except (TimeoutError, socket.timeout):
        raise _Retryable(f"timed out after {config.timeout_s:g} s") from None
    except urllib.error.URLError as err:
        if isinstance(err.reason, (TimeoutError, socket.timeout)):
            raise _Retryable(f"timed out after {config.timeout_s:g} s") from None
        raise _Retryable(f"connection failed: {err.reason}") from None
    except (ConnectionError, http.client.HTTPException) as err:
        raise _Retryable(f"connection failed: {type(err).__name__}: {err}") from None
    try:
        return reply_text(body)
    except ValueError as err:
        raise ChatError(f"malformed response: {err}") from None


def complete(config: ChatConfig, api_key: str, *, prompt: str, image_urls: Sequence[str],
             sleep: Callable[[float], None] = time.sleep) -> ChatReply:
    """One chat completion with retries; raise :class:`ChatError` when it fails for good."""
    payload = json.dumps(build_body(model=config.model, prompt=prompt, image_urls=image_urls)).encode("utf-8")
    attempts = config.retries + 1
    message = "no attempt made"
    for attempt in range(attempts):
        try:
            text, model = _once(config, api_key, payload)
            return ChatReply(text=text, model=model or config.model, attempts=attempt + 1)
        except _Retryable as err:
            if attempt + 1 >= attempts:
                message = f"after {attempts} attempt(s): {err}"
                break
            wait = err.retry_after if err.retry_after is not None else config.backoff_s * 2 ** attempt
            sleep(min(wait, config.max_backoff_s))
        except ChatError as err:
            message = f"after {attempt + 1} attempt(s): {err}"
            break
    # raised outside the except blocks: the unscrubbed provider error is not kept as __context__
    raise ChatError(_scrub(message, api_key))
