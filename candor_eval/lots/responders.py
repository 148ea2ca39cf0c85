"""The live responder of a candidate, chosen by its provider, and the secrets a live run can know.

Provider (params ``identify.providers``, :meth:`candor_eval.lots.params.IdentifyParams.provider`) ->
responder (:mod:`candor_eval.lots.live`):

* ``{python: "pkg.mod:fn"}``: :class:`candor_eval.lots.production.PythonResponder` (the callable
  imported now in a worker process, then run by its own workers; the key of ``api_key_env``, when set, is
  redacted from what they return and write);
* ``{http: URL, ...}``: :class:`candor_eval.lots.route.RouteResponder` (header values from the
  environment, throttled by ``max_calls_per_minute``);
* ``{exec: [program, arg, ...], ...}``: :class:`candor_eval.lots.child.ExecResponder` (the program found on
  ``PATH``, the declared variables and secrets from the environment);
* ``local-ocr``: :class:`candor_eval.lots.ocr.OcrResponder` with the given reading rules;
* ``openai-compatible`` (every unlisted candidate): :class:`candor_eval.lots.live.OpenAIChatResponder` with
  the key of ``api_key_env`` (a missing, short or CR/LF-tainted key is an InputError naming the
  variable, never showing the value) and the call-rate limit.

A candidate with params ``identify.record_env`` gets its responder wrapped in :class:`Recorded`, whose
``environment`` (the declared variables' values in ``env``, None when unset, every run secret redacted) the
live loop writes into every recording line.

The environment is passed in (``env``), never read here, so a test gives its own.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from candor_eval.lots.chat import ChatConfig, read_api_key
from candor_eval.lots.child import exec_responder
from candor_eval.lots.client import Policy
from candor_eval.lots.live import OpenAIChatResponder, Reply, Responder
from candor_eval.lots.ocr import OcrResponder
from candor_eval.lots.ocr_reading import ReadingRules
from candor_eval.lots.params import ExecProvider, HttpProvider, IdentifyParams, PythonProvider
from candor_eval.lots.production import python_responder
from candor_eval.lots.ratelimit import RateLimiter
from candor_eval.lots.redact import Redactor, url_secrets
from candor_eval.lots.route import RouteResponder, header_secrets, read_headers


class Recorded:
    """A responder whose every answer records ``environment`` (module docstring); everything else is ``inner``'s."""

    def __init__(self, inner: Responder, environment: dict[str, str | None]) -> None:
        self.inner, self.environment = inner, environment

    @property
    def provider(self) -> str:
        return self.inner.provider

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def endpoint(self) -> str | None:
        return self.inner.endpoint

    def load(self, images: Sequence[Path]) -> Any:
        return self.inner.load(images)

    def reply(self, *, prompt: str, images: Any, context: Mapping[str, Any]) -> Reply:
        return self.inner.reply(prompt=prompt, images=images, context=context)

    def close(self) -> None:
        if (close := getattr(self.inner, "close", None)) is not None:
            close()


def recorded_environment(params: IdentifyParams, candidate: str, env: Mapping[str, str]) -> dict[str, str | None]:
    """The values in ``env`` of the variables ``identify.record_env`` names for ``candidate`` (None: unset), in
    the declared order, with every secret of the run (:func:`run_secrets`) redacted."""
    redact = run_secrets(params, candidate, env)
    return {name: None if (v := env.get(name)) is None else redact(v) for name in params.record_env.get(candidate, [])}


def live_responder(params: IdentifyParams, candidate: str, *, env: Mapping[str, str], reading: ReadingRules | None,
                   params_file: str) -> Responder:
    """The responder of ``candidate`` (module docstring), wrapped in :class:`Recorded` when ``record_env`` names
    variables for it; ``reading``: a local reader's rules (None for the others); ``params_file`` names the params
    in error messages."""
    inner = _responder(params, candidate, env=env, reading=reading, params_file=params_file)
    if candidate in params.record_env:
        return Recorded(inner, recorded_environment(params, candidate, env))
    return inner


def _responder(params: IdentifyParams, candidate: str, *, env: Mapping[str, str], reading: ReadingRules | None,
               params_file: str) -> Responder:
    provider = params.provider(candidate)
    limiter = RateLimiter(params.max_calls_per_minute)
    policy = Policy(timeout_s=params.timeout_s, retries=params.retries, backoff_s=params.backoff_s)
    if isinstance(provider, PythonProvider):
        key = env.get(params.api_key_env)
        return python_responder(provider, env=env, policy=policy, secrets=[key] if key else [],
                                where=f"{params_file}:identify.providers.{candidate}.python")
    if isinstance(provider, HttpProvider):
        headers = read_headers(provider, env, where=f"identify.providers.{candidate}")
        return RouteResponder(spec=provider, headers=headers, policy=policy, throttle=limiter.wait)
    if isinstance(provider, ExecProvider):
        return exec_responder(provider, environ=env, policy=policy,
                              where=f"{params_file}:identify.providers.{candidate}")
    if provider == "local-ocr":
        assert reading is not None, "a local reader needs its reading rules"
        return OcrResponder(reading)
    config = ChatConfig(base_url=params.base_url, model=params.model, timeout_s=params.timeout_s,
                        retries=params.retries, backoff_s=params.backoff_s)
    return OpenAIChatResponder(config=config, api_key=read_api_key(params.api_key_env, env), limiter=limiter)


def run_secrets(params: IdentifyParams, candidate: str, env: Mapping[str, str]) -> Redactor:
    """Every secret a live run of ``candidate`` can know: the key, the base URL's and a route URL's query
    values, a route's header values, an exec provider's secrets (the values in ``env`` of the variables the
    params name)."""
    provider = params.provider(candidate)
    values = [env.get(params.api_key_env, ""), *url_secrets(params.base_url)]
    if isinstance(provider, HttpProvider):
        headers = [env.get(v, "") for v in provider.headers.values()]
        values += [*url_secrets(provider.http), *header_secrets(headers)]
    if isinstance(provider, ExecProvider):
        values += header_secrets([env.get(v, "") for v in provider.secrets])
    return Redactor.of(values)
