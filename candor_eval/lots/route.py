"""The ``http`` provider: the app's own analysis route answers (production code in any language).

``identify.providers: {webapp: {http: "http://127.0.0.1:3000/api/analyze-image",
version_header: X-Analyzer-Version, headers: {Authorization: WEBAPP_AUTH}}}``.

**Request**: one ``POST`` per (lot or case, run) to the URL (its query kept), ``Content-Type:
application/json``, the declared ``headers`` (each value read from the environment variable
it names; a missing one is exit 2 naming the variable), and the body::

    {"id": "L001", "kind": "lot" | "case", "run": 1,
     "category_library": {"functional": [...] | null, "specific": [...] | null, "itemType": [...] | null},
     "default_library": true | false, "images": ["data:image/jpeg;base64,...", ...]}

(the images in the lot's photo order as data URLs, checked like every live image; the
library and ``default_library`` as for the ``python`` provider, :mod:`candor_eval.lots.production`).

**The app's own request shape**: a declared ``body`` is sent instead, every string in it that is a
placeholder replaced by its value (a placeholder is the whole string, so it can stand for a list or
an object: :func:`candor_eval.lots.params.body_problem`): ``"{{image}}"`` the first image's data URL,
``"{{images}}"`` the list, ``"{{category_library}}"`` the library object, ``"{{default_library}}"``,
``"{{id}}"``, ``"{{kind}}"`` and ``"{{run}}"`` (a JSON integer). Keys are never replaced. E.g.
``body: {imageDataUrl: "{{image}}", categoryLibrary: "{{category_library}}"}`` with
``answer_path: result.analysis`` calls a route that answers ``{"result": {"analysis": {...}}}``.

**Response**: a 2xx whose body, UTF-8, is the model-facing result, recorded as is (a JSON
object is parsed as an answer; anything else is kept as an unparseable answer), and whose
``version_header`` (default ``X-Analyzer-Version``) is recorded as ``version`` with the
answer. With ``answer_path`` (dot-separated keys, a number indexing a list), the body must be
JSON and the answer is the value there: a string recorded as is, anything else as its JSON
text. A body that is not UTF-8, a declared header the response lacks, or (with ``answer_path``)
a body that is not JSON or has nothing at the path is a malformed-response failure (not
retried). ``version_header: null``: the route reports no version, and none is recorded.
The client is :mod:`candor_eval.lots.client`: the whole attempt under
``timeout_s``, no redirect followed, 429/5xx/timeouts/dropped connections retried, the
provider's error recorded verbatim.

**Secrets**: the header values (whole, and each word: :func:`header_secrets`) and the URL's
query values are redacted (:mod:`candor_eval.lots.redact`)
from the answer, the version and every error before they leave this module; the URL refuses
user-info and credential-named query parameters (:func:`candor_eval.lots.chat.endpoint_problem`).
"""
from __future__ import annotations

import json
import time
import urllib.parse
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from candor_eval.common.errors import fail
from candor_eval.common.images import data_url
from candor_eval.lots.client import CallError, Policy, checked, exchange, recorded_url, target, with_retries
from candor_eval.lots.live import Reply, ReplyError
from candor_eval.lots.params import PLACEHOLDER, HttpProvider
from candor_eval.lots.redact import MIN_SECRET, Redactor, url_secrets


def read_headers(spec: HttpProvider, environ: Mapping[str, str], *, where: str) -> dict[str, str]:
    """The declared request headers with their values from ``environ``; InputError naming the variable (never
    the value) when one is unset, holds a control character or is too short to redact."""
    return {name: read_secret(variable, environ, where=f"{where}.headers.{name}", what="the header's value")
            for name, variable in spec.headers.items()}


def read_secret(variable: str, environ: Mapping[str, str], *, where: str, what: str) -> str:
    """The value of ``variable`` in ``environ`` (a secret: a header value, an exec provider's secret);
    InputError naming the variable and ``where`` (never the value) when it is unset, holds a control or
    non-ASCII character or is too short to redact (:data:`candor_eval.lots.redact.MIN_SECRET`)."""
    value = environ.get(variable, "")
    if not value:
        raise fail("environment", f"variable {variable} ({where}) is not set", expected=f"export {variable}=<{what}>")
    if not all(0x20 <= ord(c) <= 0x7E for c in value) or len(value.strip()) < MIN_SECRET:
        raise fail("environment", f"variable {variable} ({where}) holds a control or "
                   f"non-ASCII character or is shorter than {MIN_SECRET} characters",
                   expected="visible ASCII (the value is not shown)")
    return value


def header_secrets(values: Iterable[str]) -> list[str]:
    """The secrets of header values: each value whole and each of its space-separated words (the token of
    ``Bearer <token>``, which a route may echo alone; a word shorter than :data:`MIN_SECRET`, such as
    ``Bearer``, is not redacted: :mod:`candor_eval.lots.redact`)."""
    return [part for v in values for part in (v, *v.split())]


def request_body(context: Mapping[str, Any], images: Sequence[str], *, body: Any = None) -> Any:
    """The route's request body (module docstring): candor's own shape, or the declared ``body`` filled in."""
    keys = ("id", "kind", "run", "category_library", "default_library")
    if body is None:
        return {k: context[k] for k in keys} | {"images": list(images)}
    values = {k: context[k] for k in keys} | {"images": list(images), "image": images[0] if images else None}
    return fill(body, values)


def fill(body: Any, values: Mapping[str, Any]) -> Any:
    """``body`` with every string that is exactly a placeholder ``{{name}}`` replaced by ``values[name]``."""
    if isinstance(body, str):
        m = PLACEHOLDER.fullmatch(body)
        return values[m.group(1)] if m is not None else body
    if isinstance(body, dict):
        return {k: fill(v, values) for k, v in body.items()}
    if isinstance(body, list):
        return [fill(v, values) for v in body]
    return body


def answer_at(text: str, path: str) -> str:
    """The answer at the dot-separated ``path`` of the JSON ``text`` (a string as is, anything else as JSON
    text); :class:`candor_eval.lots.client.CallError` (malformed response) when the text is not JSON or
    nothing is there."""
    try:
        value: Any = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        raise CallError(f"malformed response: body is not JSON (the provider's answer_path {path} needs it)") from None
    for depth, part in enumerate(path.split(".")):
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            where = ".".join(path.split(".")[:depth + 1])
            raise CallError(f"malformed response: nothing at {where} (the provider's answer_path is {path})")
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


@dataclass(frozen=True)
class RouteResponder:
    """The app's route as a live responder (module docstring)."""

    spec: HttpProvider = field(repr=False)
    headers: Mapping[str, str] = field(repr=False)
    policy: Policy = Policy()
    throttle: Callable[[], None] = lambda: None
    sleep: Callable[[float], None] = time.sleep

    provider = "http"

    @property
    def model(self) -> str:
        """The route's path (never its host's credentials or query)."""
        return urllib.parse.urlsplit(self.spec.http).path or "/"

    @property
    def redact(self) -> Redactor:
        return Redactor.of([*header_secrets(self.headers.values()), *url_secrets(self.spec.http)])

    @property
    def endpoint(self) -> str:
        """The URL as recorded (:func:`candor_eval.lots.client.recorded_url`)."""
        return recorded_url(self.spec.http)

    def load(self, images: Sequence[Path]) -> list[str]:
        return [data_url(p) for p in images]

    def _attempt(self, payload: bytes) -> tuple[str, str | None]:
        resp = checked(exchange(self.spec.http, path=target(self.spec.http), payload=payload,
                                timeout_s=self.policy.timeout_s, headers={"Content-Type": "application/json",
                                                                   "Accept": "application/json", **self.headers}),
                       hint="the provider's http URL must name the route itself")
        version = None
        if self.spec.version_header is not None:
            version = resp.headers.get(self.spec.version_header.lower())
            if version is None:
                raise CallError(f"malformed response: no {self.spec.version_header} header (the provider's "
                                "version_header; null when the route reports no version)")
        try:
            text = resp.body.decode("utf-8")
        except UnicodeDecodeError as err:
            raise CallError(f"malformed response: body is not UTF-8 (byte {err.start})") from None
        return (text if self.spec.answer_path is None else answer_at(text, self.spec.answer_path)), version

    def reply(self, *, prompt: str, images: list[str], context: Mapping[str, Any]) -> Reply:
        del prompt                         # the route builds its own
        payload = json.dumps(request_body(context, images, body=self.spec.body)).encode("utf-8")
        redact = self.redact
        try:
            (text, version), attempts = with_retries(lambda: self._attempt(payload), policy=self.policy,
                                                     redact=redact, sleep=self.sleep, throttle=self.throttle)
        except CallError as err:
            raise ReplyError(str(err)) from None
        return Reply(text=redact(text), attempts=attempts, version=None if version is None else redact(version))
