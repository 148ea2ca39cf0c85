"""The http provider against a real route on 127.0.0.1: the request it sends, the version header it records,
malformed responses, retries, redirects, and the header secrets and URL query values redacted."""
from __future__ import annotations

import json

import pytest

from candor_eval.common.errors import InputError
from candor_eval.lots.client import Policy
from candor_eval.lots.live import ReplyError
from candor_eval.lots.params import HttpProvider
from candor_eval.lots.route import RouteResponder, read_headers, request_body
from tests.chat_server import chat_server

TOKEN = "Bearer tok-ROUTE-SENTINEL-8830"
CONTEXT = {"id": "drill", "kind": "case", "run": 2, "category_library": {"functional": ["Tools"], "specific": None,
                                                                         "itemType": None},
           "default_library": False}
IMG = "data:image/png;base64,iVBORw0KGgo="
V = {"X-Analyzer-Version": "webapp 1.4.2"}


def responder(url: str) -> RouteResponder:
    spec = HttpProvider(http=url, headers={"Authorization": "WEBAPP_AUTH"})
    return RouteResponder(spec=spec, headers={"Authorization": TOKEN}, sleep=lambda s: None,
                          policy=Policy(timeout_s=2.0, retries=1, backoff_s=0.0))


def test_one_post_with_the_context_images_and_headers_and_the_version_recorded():
    answer = json.dumps({"type": "item", "item": {"itemType": "Drill"}})
    with chat_server([("reply", 200, answer.encode(), V)]) as srv:
        url = srv.url + "/api/analyze-image?lang=en"
        reply = responder(url).reply(prompt="ignored", images=[IMG, IMG], context=CONTEXT)
    assert (reply.text, reply.version, reply.attempts) == (answer, "webapp 1.4.2", 1)
    req = srv.requests[0]
    assert req["path"] == "/v1/api/analyze-image?lang=en"
    assert req["headers"]["Authorization"] == TOKEN and req["headers"]["Content-Type"] == "application/json"
    assert req["json"] == request_body(CONTEXT, [IMG, IMG]) == {
        "id": "drill", "kind": "case", "run": 2, "category_library": CONTEXT["category_library"],
        "default_library": False, "images": [IMG, IMG]}
    assert responder(url).model == "/v1/api/analyze-image"


@pytest.mark.parametrize("step, needle", [
    (("reply", 200, b"{}", {}), "malformed response: no X-Analyzer-Version header"),
    (("reply", 200, b"\xff\xfe", V), "malformed response: body is not UTF-8 (byte 0)"),
    (("reply", 404, b"no such route", V), "HTTP 404 Not Found: no such route"),
    (("redirect", 302, "http://elsewhere.example:81/x"), "redirect to http://elsewhere.example:81 not followed"),
])
def test_failures_are_recorded_verbatim_and_not_retried(step, needle):
    with chat_server([step]) as srv:
        with pytest.raises(ReplyError) as err:
            responder(srv.url + "/route").reply(prompt="", images=[], context=CONTEXT)
    assert str(err.value).startswith("after 1 attempt(s): ") and needle in str(err.value)
    assert len(srv.requests) == 1


def test_5xx_and_429_are_retried():
    with chat_server([("status", 503), ("reply", 200, b'"fine"', V)]) as srv:
        reply = responder(srv.url + "/route").reply(prompt="", images=[], context=CONTEXT)
    assert reply.text == '"fine"' and reply.attempts == 2


def test_header_values_and_query_values_are_redacted_from_answers_versions_and_errors():
    query = "qv-ROUTE-SENTINEL-4471"
    echo = f"token {TOKEN} q {query} alone {TOKEN.split()[1]}".encode()
    with chat_server([("reply", 200, echo, {"X-Analyzer-Version": f"v1 {query}"}), ("body", 401, echo)]) as srv:
        r = responder(srv.url + f"/route?tenant={query}")
        ok = r.reply(prompt="", images=[], context=CONTEXT)
        with pytest.raises(ReplyError) as err:
            r.reply(prompt="", images=[], context=CONTEXT)
    assert ok.text == "token *** q *** alone ***" and ok.version == "v1 ***"
    assert "token *** q ***" in str(err.value) and TOKEN not in str(err.value)
    assert query not in r.endpoint and r.endpoint.endswith("/route?tenant=***")


def test_header_values_come_from_the_environment_by_name_never_shown():
    spec = HttpProvider(http="http://127.0.0.1:9/r", headers={"Authorization": "WEBAPP_AUTH"})
    assert read_headers(spec, {"WEBAPP_AUTH": TOKEN}, where="identify.providers.w") == {"Authorization": TOKEN}
    for env, needle in [({}, "variable WEBAPP_AUTH (identify.providers.w.headers.Authorization) is not set"),
                        ({"WEBAPP_AUTH": TOKEN + "\r\n"}, "holds a control"),
                        ({"WEBAPP_AUTH": "short"}, "shorter than 8")]:
        with pytest.raises(InputError) as err:
            read_headers(spec, env, where="identify.providers.w")
        assert needle in err.value.message and TOKEN not in err.value.message


@pytest.mark.parametrize("spec, needle", [
    ({"http": "http://127.0.0.1:3000/api?api_key=abc"}, "named like a credential (api_key)"),
    ({"http": "http://u:p@127.0.0.1/api"}, "user-info"),
    ({"http": "127.0.0.1/api"}, "scheme"),
    ({"http": "http://h/a", "headers": {"Bad Header": "X"}}, "String should match pattern"),
    ({"http": "http://h/a", "headers": {"Authorization": "not a name"}}, "String should match pattern"),
    ({"http": "http://h/a", "version_header": "X Version"}, "String should match pattern"),
])
def test_bad_route_declarations_are_refused(spec, needle):
    with pytest.raises(ValueError, match=needle.replace("(", r"\(").replace(")", r"\)")):
        HttpProvider(**spec)
