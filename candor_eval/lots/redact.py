"""Redaction of live-mode secrets: every written form of a secret becomes ``***`` before any text is written.

The **secrets** of a live run are the API key and every value an endpoint URL can carry as a
credential: its user-info (``user:password@``, whole, and each part) and its query string
(whole, and each parameter value), each both as written and percent-decoded.

A secret reaches a file or the console in many **forms**: an app's route echoes it inside a JSON
body, a production callable returns it in a dict that candor serialises, and every recording
line is JSON again. The forms of a secret (:func:`forms`) are

* the secret as written, and its decodings: percent-decoded (``%2F`` and ``+``), JSON-string-decoded
  (a secret holding ``\\"``) and HTML-unescaped;
* each of those encoded once: as a JSON string body with ``ensure_ascii`` off and on (``\\uXXXX`` for
  non-ASCII), each also with ``/`` written ``\\/`` (PHP's ``json_encode``), with ``<``, ``>``, ``&``,
  U+2028 and U+2029 written ``\\u003c`` ... (Go's ``encoding/json``) and with the hex digits of every
  ``\\uXXXX`` upper-cased (Jackson); percent-encoded (``quote``, ``quote_plus``; hex upper and lower
  case); HTML-escaped; in a Python ``repr`` or ``ascii`` (an exception message quoting it with ``!r``);
* each of the encoded forms JSON-encoded once more (a JSON body inside a recording line).

A form is replaced wherever it occurs as a substring, longest first (so a value inside a longer one
cannot leave a tail behind). Two escapings no list of forms can cover are **decoded** instead: every
run of JSON string characters holding a backslash escape (any character may be written ``\\uXXXX``,
``\\u0073k-...`` is ``sk-...``) is decoded, and when its text holds a secret it is written back
redacted, JSON-escaped again; every word holding a ``%XX`` escape is percent-decoded likewise and,
when its text holds a secret, percent-encoded again redacted. This repeats until the text is
stable, so a redacted text holds no form of a secret and no escaped run that decodes to one.

**Short values** (fewer than :data:`MIN_SECRET` characters) are not secrets here: replacing
``json`` or ``1`` would blank ordinary words of the model's answers, and a value that short
protects nothing. The API key is never short: :func:`candor_eval.lots.chat.check_api_key` refuses
such a key before any call. A form shorter than that (a decoding) is not replaced either.

Redaction is a pure function of the text; callers apply it to everything that leaves the
live client (the reply text, every error message) and to the final text of every writer (a
recording line, the by-hand report, a log line), so that recordings, logs, reports and
exceptions only ever see redacted text. :meth:`Redactor.tree` redacts the strings (keys and
values) of a JSON document before it is serialised, :func:`redacted_error` a bad-input error and
:func:`redact_exception` any other exception leaving a live run.

>>> Redactor.for_endpoint("https://api.example.com/v1?key=abcdefgh123", "sk-0123456789")("sk-0123456789 abcdefgh123")
'*** ***'
>>> Redactor.of(["sk-a/b<c>&d"])('{"echo": "sk-a\\\\/b\\\\u003cc\\\\u003e\\\\u0026d"}')
'{"echo": "***"}'
"""
from __future__ import annotations

import html
import json
import re
import urllib.parse
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from candor_eval.common.errors import InputError, Problem

MIN_SECRET = 8
MASK = "***"
ROUNDS = 4                      # passes until a text is stable (each pass can only shorten what it replaces)

_UNICODE_ESCAPE = re.compile(r"\\u([0-9a-f]{4})")
_PERCENT_ESCAPE = re.compile(r"%([0-9A-F]{2})")
# a run of JSON string-body characters (no quote, no control character, only valid escapes)
_JSON_RUN = re.compile(r'(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})+')
_WORD = re.compile(r"[^\s\"'<>\\]+")
_URL_SAFE = "".join(chr(c) for c in range(0x21, 0x7F) if chr(c) not in "%\"'<>\\")
_GO = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


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


def _json_bodies(s: str) -> set[str]:
    """``s`` as the body of a JSON string, in every style of the module docstring."""
    out = set()
    for ascii_only in (False, True):
        body = json.dumps(s, ensure_ascii=ascii_only)[1:-1]
        for go in (False, True):
            styled = "".join(_GO.get(c, c) for c in body) if go else body
            for slash in (False, True):
                slashed = styled.replace("/", "\\/") if slash else styled
                out |= {slashed, _UNICODE_ESCAPE.sub(lambda m: "\\u" + m.group(1).upper(), slashed)}
    return out


def _url_forms(s: str) -> set[str]:
    encoded = {urllib.parse.quote(s, safe=""), urllib.parse.quote(s), urllib.parse.quote_plus(s),
               urllib.parse.quote_plus(s, safe="/")}
    return encoded | {_PERCENT_ESCAPE.sub(lambda m: "%" + m.group(1).lower(), e) for e in encoded}


def _decodings(s: str) -> set[str]:
    out = {s, urllib.parse.unquote(s), urllib.parse.unquote_plus(s), html.unescape(s)}
    try:
        decoded = json.loads(f'"{s}"')
    except (json.JSONDecodeError, RecursionError):
        pass
    else:
        out.add(decoded)
    return out


def forms(secret: str) -> set[str]:
    """Every form of ``secret`` (module docstring) of at least :data:`MIN_SECRET` characters.

    >>> sorted(forms('ab"cd/efgh'))[:5]
    ['ab"cd/efgh', 'ab%22cd%2Fefgh', 'ab%22cd%2fefgh', 'ab%22cd/efgh', 'ab%22cd\\\\/efgh']
    """
    once: set[str] = set()
    for s in _decodings(secret):
        once |= {s, *_json_bodies(s), *_url_forms(s), html.escape(s), html.escape(s, quote=False), repr(s)[1:-1],
                 ascii(s)[1:-1]}
    twice = {b for s in once for b in _json_bodies(s)}
    return {f for f in once | twice if len(f) >= MIN_SECRET}


@dataclass(frozen=True)
class Redactor:
    """Replace every form of each of ``secrets`` (at least :data:`MIN_SECRET` characters) by ``***``
    (module docstring)."""

    secrets: tuple[str, ...] = ()

    @classmethod
    def of(cls, values: Iterable[str]) -> Redactor:
        kept = {v for v in values if len(v) >= MIN_SECRET}
        return cls(tuple(sorted(kept, key=lambda v: (-len(v), v))))

    @classmethod
    def for_endpoint(cls, base_url: str, api_key: str) -> Redactor:
        """The redactor of a live run against ``base_url`` with ``api_key``."""
        return cls.of([api_key, *url_secrets(base_url)])

    @cached_property
    def forms(self) -> tuple[str, ...]:
        """Every form of every secret, longest first."""
        every = {f for s in self.secrets for f in forms(s)}
        return tuple(sorted(every, key=lambda f: (-len(f), f)))

    def __call__(self, text: str) -> str:
        if not self.secrets:
            return text
        for _ in range(ROUNDS):
            clean = self._substrings(self._escaped(text, _JSON_RUN, "\\", self._json_run))
            clean = self._substrings(self._escaped(clean, _WORD, "%", self._percent_word))
            if clean == text:
                break
            text = clean
        return text

    def leaks(self, text: str) -> bool:
        """Whether ``text`` holds a form of a secret (redacting it would change it)."""
        return self(text) != text

    def tree(self, doc: Any) -> Any:
        """``doc`` (JSON-like: dicts, lists, strings, numbers) with every string, key or value, redacted."""
        if isinstance(doc, str):
            return self(doc)
        if isinstance(doc, dict):
            return {self(k) if isinstance(k, str) else k: self.tree(v) for k, v in doc.items()}
        if isinstance(doc, list | tuple):
            return [self.tree(v) for v in doc]
        return doc

    def _substrings(self, text: str) -> str:
        for form in self.forms:
            if form in text:
                text = text.replace(form, MASK)
        return text

    @staticmethod
    def _escaped(text: str, pattern: re.Pattern[str], mark: str, fix: Callable[[str], str]) -> str:
        """``text`` with every match of ``pattern`` holding ``mark`` passed through ``fix``."""
        if mark not in text:
            return text
        return pattern.sub(lambda m: fix(m.group()) if mark in m.group() else m.group(), text)

    def _json_run(self, run: str) -> str:
        try:
            decoded = json.loads(f'"{run}"')
        except (json.JSONDecodeError, RecursionError):
            return run
        clean = self(decoded)
        return run if clean == decoded else json.dumps(clean, ensure_ascii=False)[1:-1]

    def _percent_word(self, word: str) -> str:
        for decode in (urllib.parse.unquote, urllib.parse.unquote_plus):
            decoded = decode(word)
            if decoded != word and (clean := self(decoded)) != decoded:
                return urllib.parse.quote(clean, safe=_URL_SAFE)
        return word


def redacted_error(err: InputError, redact: Redactor) -> InputError:
    """``err`` with every part of its problems and its hint redacted (the import error of production code, which
    the message quotes, can hold a secret)."""
    def opt(text: str | None) -> str | None:
        return None if text is None else redact(text)

    problems = [Problem(redact(p.where), redact(p.what), opt(p.expected), opt(p.got)) for p in err.problems]
    return InputError(problems, hint=opt(err.hint))


def redact_exception(err: BaseException, redact: Redactor) -> None:
    """Redact, in place, the message of ``err`` and of every exception chained to it (what Python prints for an
    exception nobody catches: each one's ``args``, and a ``SystemExit``'s ``code``). Production code can
    raise anything from the live loop, ``sys.exit(message)`` and ``KeyboardInterrupt`` included."""
    seen: set[int] = set()
    stack: list[BaseException | None] = [err]
    while stack:
        e = stack.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        e.args = tuple(redact(a) if isinstance(a, str) else a for a in e.args)
        if isinstance(e, SystemExit) and isinstance(e.code, str):
            e.code = redact(e.code)
        stack += [e.__cause__, e.__context__]
