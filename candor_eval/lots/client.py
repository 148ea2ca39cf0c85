"""The HTTP client of every remote live provider: one JSON POST under a whole-call deadline, no redirect, retries.

Shared by the chat-completions client (:mod:`candor_eval.lots.chat`) and the HTTP-route provider
(:mod:`candor_eval.lots.route`), so both give the same guarantees:

* **Deadline**: ``timeout_s`` bounds each whole attempt (connect, send, response headers and
  body), not each socket read: a watchdog shuts the socket down at the deadline, so a server
  trickling bytes is cut there and the attempt fails as ``timed out after <timeout_s> s``.
  (Name resolution is the one step the watchdog cannot interrupt.)
* **Redirects**: none is followed. A 3xx is a failure naming the target's origin (scheme,
  host, port): an endpoint has no reason to redirect a POST, following one to another host
  would send it the credentials, and following 301/302/303 would turn the POST into a GET.
* **Retries** (:func:`with_retries`): a 429, any 5xx, a timeout or a dropped connection
  (:class:`Retryable`) is retried up to ``retries`` times, waiting ``backoff_s * 2**attempt``
  seconds (or the server's numeric ``Retry-After``), capped at ``max_backoff_s``. Any other
  HTTP status, a redirect or a malformed body (:class:`CallError`) fails at once. Before
  every attempt ``throttle()`` is called (every attempt counts against a rate limit).
* **Failure**: :class:`CallError` whose message is the provider's error verbatim (status,
  reason, the start of the body), prefixed with the number of attempts, passed through
  ``redact`` (:mod:`candor_eval.lots.redact`) and raised with no chained exception (an error
  reporter walking ``__context__`` finds no unredacted text).

``http.client`` rather than ``urllib.request``: it follows no redirect and lets the watchdog
reach the socket; proxy environment variables are therefore not used. It is imported by
:func:`exchange`, not with this module (with ``ssl``, about 20 ms): validating the ``identify``
parameters, as the ``stats`` stage does on every run, loads this module and sends nothing.
"""
from __future__ import annotations

import math
import socket
import threading
import time
import urllib.parse
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

BODY_EXCERPT = 500
MAX_BODY = 16 * 1024 * 1024

T = TypeVar("T")


class CallError(Exception):
    """A call that failed for good; ``str()`` is the provider's error, redacted."""


class Retryable(Exception):
    """An attempt that failed in a way worth retrying (429, 5xx, timeout, dropped connection)."""

    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


@dataclass(frozen=True)
class Policy:
    """How one call is made: the deadline of each attempt, the retries and their backoff (module docstring)."""

    timeout_s: float = 60.0
    retries: int = 3
    backoff_s: float = 2.0
    max_backoff_s: float = 60.0


@dataclass(frozen=True)
class Response:
    """A finished exchange: status, reason, headers (names lower-cased) and up to MAX_BODY + 1 bytes of body."""

    status: int
    reason: str
    headers: Mapping[str, str]
    body: bytes


def retry_after(value: str | None) -> float | None:
    """A numeric ``Retry-After`` in seconds (never negative), or None (absent, a date, not finite)."""
    try:
        wait = float(value) if value is not None else None
    except ValueError:
        return None
    return max(0.0, wait) if wait is not None and math.isfinite(wait) else None


def origin(location: str | None) -> str:
    """``scheme://host[:port]`` of a redirect target, user-info dropped ("the same host" when relative)."""
    parts = urllib.parse.urlsplit(location or "")
    return f"{parts.scheme}://{parts.netloc.rpartition('@')[2]}" if parts.netloc else "the same host"


def recorded_url(url: str) -> str:
    """``url`` as a recording keeps it: every query value replaced by ``***`` (the names kept), no user-info.

    >>> recorded_url("https://api.example.com/v1?api-version=2024-06-01&deployment=gpt")
    'https://api.example.com/v1?api-version=***&deployment=***'
    """
    parts = urllib.parse.urlsplit(url)
    names = [pair.partition("=")[0] + ("=***" if "=" in pair else "") for pair in parts.query.split("&")]
    query = "&".join(names) if parts.query else ""
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc.rpartition("@")[2], parts.path, query, ""))


def target(url: str) -> str:
    """The request target of ``url``: its path (``/`` when empty) and query."""
    parts = urllib.parse.urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def exchange(url: str, *, path: str, headers: Mapping[str, str], payload: bytes, timeout_s: float) -> Response:
    """One POST of ``payload`` to ``path`` on ``url``'s host under the whole-call deadline."""
    import http.client  # here, not at the top: the module docstring says why

    parts = urllib.parse.urlsplit(url)
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    if parts.hostname is None:     # the base URL was checked at the boundary (candor_eval.lots.chat.endpoint_problem)
        raise ValueError(f"no host in {recorded_url(url)!r}")
    conn = cls(parts.hostname, parts.port, timeout=timeout_s)
    expired = threading.Event()
    sockets: list[socket.socket] = []     # kept here: the connection forgets its socket once a response is read

    def cut() -> None:
        expired.set()
        for sock in sockets + ([conn.sock] if conn.sock is not None else []):
            try:
                socket.socket.shutdown(sock, socket.SHUT_RDWR)   # the raw socket, under any TLS layer
            except OSError:
                pass

    watchdog = threading.Timer(timeout_s, cut)
    watchdog.daemon = True
    watchdog.start()
    try:
        conn.connect()
        sockets.append(conn.sock)
        if expired.is_set():
            cut()
        conn.request("POST", path, body=payload, headers=dict(headers))
        resp = conn.getresponse()
        body = resp.read(MAX_BODY + 1)
        if expired.is_set():                       # a body without a length, cut short by the watchdog
            raise TimeoutError
        return Response(resp.status, resp.reason, {k.lower(): v for k, v in resp.getheaders()}, body)
    except (OSError, http.client.HTTPException, ValueError) as err:
        if expired.is_set() or isinstance(err, TimeoutError):
            raise Retryable(f"timed out after {timeout_s:g} s") from None
        if isinstance(err, ValueError):          # http.client refusing the request itself: not retried
            raise CallError(f"request could not be sent: {type(err).__name__}: {err}") from None
        raise Retryable(f"connection failed: {type(err).__name__}: {err}") from None
    finally:
        watchdog.cancel()
        conn.close()


def checked(resp: Response, *, hint: str) -> Response:
    """``resp`` when it is a 2xx within :data:`MAX_BODY`; else :class:`Retryable` (429, 5xx) or :class:`CallError`
    (a redirect, whose message ends with ``hint``; any other status; a body too large)."""
    status = f"HTTP {resp.status} {resp.reason}"
    if 300 <= resp.status <= 399:
        raise CallError(f"{status}: redirect to {origin(resp.headers.get('location'))} not followed ({hint})")
    if not 200 <= resp.status <= 299:
        excerpt = resp.body[:BODY_EXCERPT].decode("utf-8", "replace").strip()
        message = status + (f": {excerpt}" if excerpt else "")
        if resp.status == 429 or 500 <= resp.status <= 599:
            raise Retryable(message, retry_after(resp.headers.get("retry-after")))
        raise CallError(message)
    if len(resp.body) > MAX_BODY:
        raise CallError(f"malformed response: larger than {MAX_BODY // 2**20} MiB")
    return resp


def with_retries(attempt: Callable[[], T], *, policy: Policy, redact: Callable[[str], str],
                 sleep: Callable[[float], None] = time.sleep, throttle: Callable[[], None] = lambda: None
                 ) -> tuple[T, int]:
    """``(attempt(), attempts taken)``, retrying on :class:`Retryable` as ``policy`` says; :class:`CallError`
    (redacted) when it fails for good (module docstring)."""
    attempts = policy.retries + 1
    message = "no attempt made"
    for n in range(attempts):
        throttle()
        try:
            return attempt(), n + 1
        except Retryable as err:
            if n + 1 >= attempts:
                message = f"after {attempts} attempt(s): {err}"
                break
            wait = err.retry_after if err.retry_after is not None else policy.backoff_s * 2 ** n
            sleep(min(wait, policy.max_backoff_s))
        except CallError as err:
            message = f"after {n + 1} attempt(s): {err}"
            break
    # raised outside the except blocks: the unredacted provider error is not kept as __context__
    raise CallError(redact(message))
