"""A minimal OpenAI-compatible chat-completions client (standard library only).

``POST <base_url>/chat/completions`` (the base URL's query string kept) with
``Authorization: Bearer <key>`` and one user message: the prompt text followed by the images
as ``image_url`` parts (data URLs, :mod:`candor_eval.common.images`). The reply text is
``choices[0].message.content``: a string, or a list of text parts (``{"type": "text", "text":
...}``, the type optional) whose texts are joined; any other part (an image, a refusal, a
tool call) is a malformed response, recorded as a failure, never an empty answer.

The deadline, redirects, retries and the failure message are those of
:mod:`candor_eval.lots.client` (the whole attempt under ``timeout_s``; no redirect followed; a
429, 5xx, timeout or dropped connection retried; :class:`ChatError` with the provider's
error verbatim). Set ``base_url`` to the endpoint itself.

* **Secrets** (:mod:`candor_eval.lots.redact`): the key and the base URL's query values are
  replaced by ``***`` in every error message and in the reply text (a model that echoes the
  key back), before any of it leaves this module. User-info in ``base_url`` and query
  parameters named like credentials are refused (:func:`endpoint_problem`) and never sent.

The standard library is enough here (one POST, JSON in and out), so no HTTP dependency is
added.
"""
from __future__ import annotations

import json
import time
import urllib.parse
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from candor_eval.common.errors import fail
from candor_eval.lots.client import CallError, Policy, checked, exchange, with_retries

ChatError = CallError   # the chat client's failure (:mod:`candor_eval.lots.client`)

# Query parameter names that carry a credential, compared lower-cased with ``-`` read as ``_``;
# so are names ending in ``_key``, ``_token``, ``_secret`` or ``_password``.
CREDENTIAL_KEYS = frozenset({"key", "api_key", "apikey", "token", "access_token", "auth", "authorization",
                             "secret", "client_secret", "password", "passwd", "pwd", "sig", "signature",
                             "code", "session", "credential", "credentials", "bearer", "jwt"})


def credential_keys(query: str) -> list[str]:
    """The query parameter names of ``query`` that look like credentials (:data:`CREDENTIAL_KEYS`), in order.

    >>> credential_keys("api-version=2024-06-01&API-Key=x&sas_token=y")
    ['API-Key', 'sas_token']
    """
    out = []
    for pair in query.split("&"):
        name = urllib.parse.unquote_plus(pair.partition("=")[0])
        norm = name.lower().replace("-", "_")
        if norm in CREDENTIAL_KEYS or norm.endswith(("_key", "_token", "_secret", "_password")):
            out.append(name)
    return out


def endpoint_problem(base_url: str, *, secrets_go: str = "the variable named by identify.api_key_env") -> str | None:
    """Why ``base_url`` cannot be called (``None`` when it can); never quotes a value (it may hold a secret).

    Accepted: ``http`` or ``https``, a host, an optional numeric port, a path and a query, in
    ASCII; no whitespace or control character, no user-info (``name:password@``), no query
    parameter named like a credential (:func:`credential_keys`; ``api-version`` is fine), no
    fragment. ``secrets_go`` says where a credential belongs instead.
    """
    if any(c.isspace() or ord(c) < 0x20 or ord(c) == 0x7F for c in base_url):
        return "contains whitespace or a control character"
    if not base_url.isascii():
        return "contains a non-ASCII character (percent-encode it; an international host name in its xn-- form)"
    parts = urllib.parse.urlsplit(base_url)
    if parts.scheme not in ("http", "https"):
        return "needs the scheme http:// or https://"
    if "@" in parts.netloc:
        return f"user-info (name:password@) is not supported: put the credential in {secrets_go}"
    if not parts.hostname:
        return "has no host"
    try:
        _ = parts.port    # parsing the port raises ValueError when it is out of range
    except ValueError:
        return "has a port that is not a number in 0-65535"
    if parts.fragment or base_url.endswith("#"):
        return "has a fragment (#...), which is never sent"
    if names := credential_keys(parts.query):
        return (f"has query parameter(s) named like a credential ({', '.join(names)}): a URL is written to "
                f"params, logs and dvc.lock; put the credential in {secrets_go}")
    return None


def read_api_key(variable: str, environ: Mapping[str, str]) -> str:
    """The key in environment variable ``variable``; InputError naming the variable (never the value)
    when it is unset, holds anything but visible ASCII (a trailing CR or LF from a copied file is
    the usual case), or is shorter than :data:`candor_eval.lots.redact.MIN_SECRET` characters (too short
    to be redacted without blanking ordinary words)."""
    from candor_eval.lots.redact import MIN_SECRET  # here: lots.params checks base_url on every read (see complete)

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
    def policy(self) -> Policy:
        return Policy(timeout_s=self.timeout_s, retries=self.retries, backoff_s=self.backoff_s,
                      max_backoff_s=self.max_backoff_s)

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
        for i, part in enumerate(content):
            if not (isinstance(part, dict) and part.get("type", "text") == "text"
                    and isinstance(part.get("text"), str)):
                kind = part.get("type") if isinstance(part, dict) else type(part).__name__
                raise ValueError(f"choices[0].message.content[{i}] is a {str(kind)[:40]!r} part, not text")
        content = "".join(part["text"] for part in content)
    if not isinstance(content, str):
        raise ValueError(f"choices[0].message.content is {type(content).__name__}, not text")
    model = doc.get("model") if isinstance(doc.get("model"), str) else None
    return content, model


def _once(config: ChatConfig, api_key: str, payload: bytes) -> tuple[str, str | None]:
    resp = checked(exchange(config.base_url, path=config.target, payload=payload, timeout_s=config.timeout_s,
                            headers={"Content-Type": "application/json", "Authorization": f"Bearer {api_key}",
                                     "Accept": "application/json"}),
                   hint="identify.base_url must name the endpoint itself")
    try:
        return reply_text(resp.body)
    except ValueError as err:
        raise ChatError(f"malformed response: {err}") from None


def complete(config: ChatConfig, api_key: str, *, prompt: str, image_urls: Sequence[str],
             sleep: Callable[[float], None] = time.sleep, throttle: Callable[[], None] = lambda: None) -> ChatReply:
    """One chat completion with retries; raise :class:`ChatError` when it fails for good."""
    # here, not at the top: lots.params validates base_url with endpoint_problem on every read of the identify
    # section (the stats stage reads its candidates), and only a call redacts (redact loads html)
    from candor_eval.lots.redact import Redactor

    redact = Redactor.for_endpoint(config.base_url, api_key)
    payload = json.dumps(build_body(model=config.model, prompt=prompt, image_urls=image_urls)).encode("utf-8")
    (text, model), attempts = with_retries(lambda: _once(config, api_key, payload), policy=config.policy,
                                           redact=redact, sleep=sleep, throttle=throttle)
    return ChatReply(text=redact(text), model=redact(model or config.model), attempts=attempts)
