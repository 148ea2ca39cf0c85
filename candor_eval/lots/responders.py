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
* ``openai-compatible`` (every unlisted candidate): :class:`candor_eval.lots.live.ChatResponder` with
  the key of ``api_key_env`` (a missing, short or CR/LF-tainted key is an InputError naming the
  variable, never showing the value) and the call-rate limit.

The environment is passed in (``env``), never read here, so a test gives its own.
"""
from __future__ import annotations

from collections.abc import Mapping

from candor_eval.lots.chat import ChatConfig, read_api_key
from candor_eval.lots.child import exec_responder
from candor_eval.lots.client import Policy
from candor_eval.lots.live import ChatResponder, Responder
from candor_eval.lots.ocr import OcrResponder
from candor_eval.lots.ocr_reading import ReadingRules
from candor_eval.lots.params import ExecProvider, HttpProvider, IdentifyParams, PythonProvider
from candor_eval.lots.production import python_responder
from candor_eval.lots.ratelimit import RateLimiter
from candor_eval.lots.redact import Redactor, url_secrets
from candor_eval.lots.route import RouteResponder, header_secrets, read_headers


def live_responder(params: IdentifyParams, candidate: str, *, env: Mapping[str, str], reading: ReadingRules | None,
                   params_file: str) -> Responder:
    """The responder of ``candidate`` (module docstring); ``reading``: a local reader's rules (None for the
    others); ``params_file`` names the params in error messages."""
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
    return ChatResponder(config=config, api_key=read_api_key(params.api_key_env, env), limiter=limiter)


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
