"""The live responder of each provider (:mod:`candor_eval.lots.responders`) and the secrets a live run can know:
the key of ``api_key_env``, the base URL's and a route URL's query values, a route's header values."""
from __future__ import annotations

import os
import sys

import pytest

from candor_eval.common.errors import InputError
from candor_eval.lots.live import OpenAIChatResponder
from candor_eval.lots.params import IdentifyParams
from candor_eval.lots.production import PythonResponder
from candor_eval.lots.responders import Recorded, live_responder, run_secrets
from candor_eval.lots.route import RouteResponder

KEY = "sk-test-0123456789abcdef"
TOKEN = "route-token-0123456789"
ROUTE = {"http": "http://127.0.0.1:9/analyze?tenant=query-secret-0123", "headers": {"Authorization": "APP_TOKEN"}}


def params(**over) -> IdentifyParams:
    return IdentifyParams(candidates=["c"], **over)


def test_an_unlisted_candidate_calls_the_chat_endpoint_with_the_key_of_the_environment():
    got = live_responder(params(), "c", env={"OPENAI_API_KEY": KEY}, reading=None, params_file="p.yaml")
    assert isinstance(got, OpenAIChatResponder)


def test_a_missing_key_names_the_variable_never_a_value():
    with pytest.raises(InputError, match="MY_KEY") as err:
        live_responder(params(api_key_env="MY_KEY"), "c", env={"OPENAI_API_KEY": KEY}, reading=None,
                       params_file="p.yaml")
    assert KEY not in str(err.value)


def test_a_python_provider_checks_its_callable_in_a_worker(user_code, monkeypatch):
    (user_code / "my_analyzer.py").write_text("def analyze(images, context):\n    return {}\n")
    monkeypatch.chdir(user_code)                 # the project's folder: an import root of the worker
    p = params(providers={"c": {"python": "my_analyzer:analyze"}})
    got = live_responder(p, "c", env=os.environ, reading=None, params_file="p.yaml")
    assert isinstance(got, PythonResponder) and (got.provider, got.model) == ("python", "my_analyzer:analyze")
    got.close()
    assert "my_analyzer" not in sys.modules      # imported by the worker only
    with pytest.raises(InputError, match="p.yaml:identify.providers.c.python: my_analyzer has no callable nope"):
        live_responder(params(providers={"c": {"python": "my_analyzer:nope"}}), "c", env=os.environ, reading=None,
                       params_file="p.yaml")


def test_an_http_provider_reads_its_headers_from_the_environment():
    p = params(providers={"c": ROUTE}, sources={"c": "app.py"})
    assert isinstance(live_responder(p, "c", env={"APP_TOKEN": TOKEN}, reading=None, params_file="p.yaml"),
                      RouteResponder)
    with pytest.raises(InputError, match="APP_TOKEN"):
        live_responder(p, "c", env={}, reading=None, params_file="p.yaml")


def test_run_secrets_of_a_route_cover_key_url_query_and_headers():
    p = params(providers={"c": ROUTE}, sources={"c": "app.py"},
               base_url="https://api.example.com/v1?region=secret-version-1")
    redact = run_secrets(p, "c", {"OPENAI_API_KEY": KEY, "APP_TOKEN": TOKEN})
    text = f"{KEY} {TOKEN} query-secret-0123 secret-version-1 visible"
    assert redact(text) == "*** *** *** *** visible"


def test_run_secrets_of_a_chat_candidate_leave_unset_variables_out():
    assert run_secrets(params(), "c", {}).secrets == ()


def test_record_env_wraps_the_responder_with_the_values_unset_as_none_and_secrets_redacted():
    """ANALYSIS_MODE=fast is recorded, PROVIDER unset is None; a switch whose value is the key shows ***."""
    p = params(record_env={"c": ["ANALYSIS_MODE", "PROVIDER", "ECHO"]})
    env = {"OPENAI_API_KEY": KEY, "ANALYSIS_MODE": "fast", "ECHO": f"k={KEY}"}
    got = live_responder(p, "c", env=env, reading=None, params_file="p.yaml")
    assert isinstance(got, Recorded) and isinstance(got.inner, OpenAIChatResponder)
    assert got.environment == {"ANALYSIS_MODE": "fast", "PROVIDER": None, "ECHO": "k=***"}
    assert (got.provider, got.model, got.endpoint) == (got.inner.provider, got.inner.model, got.inner.endpoint)
    assert not isinstance(live_responder(params(), "c", env=env, reading=None, params_file="p.yaml"), Recorded)
