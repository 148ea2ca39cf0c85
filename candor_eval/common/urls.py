"""Source URLs in messages: their user-info never shown (pure: no I/O).

A manifest's or a model card's ``source`` may carry credentials in its user-info
(``https://user:password@host/path``). Before a source, or any text that may quote it (an
fsspec or HTTP error), reaches a message, a log or a file, :func:`redact_source` replaces the
user-info, as written and percent-decoded, and the password alone by ``***``. Paths,
hosts and query strings are kept: they say which file failed.

>>> redact_source("https://ann:s3cr%40t@example.com/d/a.png")
'https://***@example.com/d/a.png'
>>> redact_text("401 for https://ann:s3cr%40t@example.com/d (password s3cr@t)", "https://ann:s3cr%40t@example.com/d")
'401 for https://***@example.com/d (password ***)'
"""
from __future__ import annotations

import re
import urllib.parse

MASK = "***"
MIN_PASSWORD = 4      # a shorter password alone is not searched for in free text (it would blank words)
URL_USERINFO = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@'\"]+@")


def userinfo(url: str) -> str:
    """The user-info of ``url`` as written (``user:password``), or ``""``."""
    if "://" not in url:
        return ""
    netloc = urllib.parse.urlsplit(url).netloc
    info, at, _ = netloc.rpartition("@")
    return info if at else ""


def redact_source(url: str) -> str:
    """``url`` with its user-info replaced by ``***`` (unchanged when it has none)."""
    info = userinfo(url)
    return url.replace(f"{info}@", f"{MASK}@", 1) if info else url


def redact_text(text: str, url: str | None) -> str:
    """``text`` with every form of ``url``'s user-info (whole and its password, as written and
    decoded) replaced by ``***``."""
    info = userinfo(url or "")
    if not info:
        return text
    password = info.partition(":")[2]
    secrets = {info, urllib.parse.unquote(info)}
    secrets |= {p for p in (password, urllib.parse.unquote(password)) if len(p) >= MIN_PASSWORD}
    for secret in sorted(secrets, key=len, reverse=True):
        text = text.replace(secret, MASK)
    return text


def redact_urls(text: str) -> str:
    """``text`` with the user-info of every URL in it replaced by ``***`` (for text that may quote
    a value the user wrote anywhere, e.g. a validation error's ``got``).

    >>> redact_urls("got 'http://ann:pw@h.example/x' and s3://k@b/y, not a@b.c")
    "got 'http://***@h.example/x' and s3://***@b/y, not a@b.c"
    """
    return URL_USERINFO.sub(lambda m: f"{m.group(1)}{MASK}@", text)
