"""Redaction of live-mode secrets: every secret value becomes ``***`` before any text is written.

The **secrets** of a live run are the API key and every value an endpoint URL can carry as a
credential: its user-info (``user:password@``, whole, and each part) and its query string
(whole, and each parameter value), each both as written and percent-decoded. A secret is
replaced wherever it occurs as a substring, longest first (so a value inside a longer one
cannot leave a tail behind).

**Short values** (fewer than :data:`MIN_SECRET` characters) are not secrets here: replacing
``json`` or ``1`` would blank ordinary words of the model's answers, and a value that short
protects nothing. The API key is never short: :func:`candor_eval.lots.chat.check_api_key` refuses
such a key before any call.

Redaction is a pure function of the text; callers apply it to everything that leaves the
live client (the reply text, every error message) so that recordings, logs, reports and
exceptions only ever see redacted text.

>>> Redactor.for_endpoint("https://api.example.com/v1?key=abcdefgh123", "sk-0123456789")("sk-0123456789 abcdefgh123")
'*** ***'
"""
from __future__ import annotations

import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass

MIN_SECRET = 8
MASK = "***"


def url_secrets(url: str) -> list[str]:
    """The credential-like values of ``url``: user-info and query (module docstring), as written and decoded."""
    parts = urllib.parse.urlsplit(url)
    found: list[str] = []
    userinfo, at, _ = parts.netloc.rpartition("@")
    if at:
        found += [userinfo, *userinfo.split(":", 1)]
    if parts.query:
        found.append(parts.query)
        for pair in parts.query.split("&"):
            found += [pair, pair.partition("=")[2]]
    return found + [urllib.parse.unquote_plus(s) for s in found]


@dataclass(frozen=True)
class Redactor:
    """Replace each of ``secrets`` (at least :data:`MIN_SECRET` characters, longest first) by ``***``."""

    secrets: tuple[str, ...] = ()

    @classmethod
    def of(cls, values: Iterable[str]) -> Redactor:
        kept = {v for v in values if len(v) >= MIN_SECRET}
        return cls(tuple(sorted(kept, key=lambda v: (-len(v), v))))

    @classmethod
    def for_endpoint(cls, base_url: str, api_key: str) -> Redactor:
        """The redactor of a live run against ``base_url`` with ``api_key``."""
        return cls.of([api_key, *url_secrets(base_url)])

    def __call__(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, MASK)
        return text
