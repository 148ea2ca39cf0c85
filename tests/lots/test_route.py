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


# ------------------------------------------------------------------ the app's own route as it is

OWN = {"imageDataUrl": "{{image}}", "all": "{{images}}", "options": {"categoryLibrary": "{{category_library}}",
                                                                      "attempt": "{{run}}", "note": "kept as is"}}


def own_route(url: str, **over) -> RouteResponder:
    spec = HttpProvider(http=url, version_header=None, body=OWN, answer_path="result.analysis", **over)
    return RouteResponder(spec=spec, headers={}, sleep=lambda s: None, policy=Policy(timeout_s=2.0, retries=0))


def test_a_declared_body_and_answer_path_call_the_route_as_it_is_and_no_version_is_recorded():
    analysis = {"type": "item", "item": {"itemType": "Drill"}}
    body = json.dumps({"ok": True, "result": {"analysis": analysis, "ms": 812}}).encode()
    with chat_server([("reply", 200, body, {})]) as srv:
        reply = own_route(srv.url + "/api/analyze").reply(prompt="", images=[IMG, "data:image/png;base64,AA=="],
                                                          context=CONTEXT)
    assert srv.requests[0]["json"] == {
        "imageDataUrl": IMG, "all": [IMG, "data:image/png;base64,AA=="],
        "options": {"categoryLibrary": CONTEXT["category_library"], "attempt": 2, "note": "kept as is"}}
    assert json.loads(reply.text) == analysis and reply.version is None


@pytest.mark.parametrize("body, text", [
    (b'{"result": {"analysis": "{\\"type\\": \\"item\\"}"}}', '{"type": "item"}'),      # a string: as is
    (b'{"result": {"analysis": [1, {"a": "\\u00e9"}]}}', '[1, {"a": "\xe9"}]'),         # else its JSON text
])
def test_the_answer_at_the_path_is_a_string_as_is_or_json_text(body, text):
    with chat_server([("reply", 200, body, {})]) as srv:
        assert own_route(srv.url + "/a").reply(prompt="", images=[IMG], context=CONTEXT).text == text


def test_a_list_index_in_the_path():
    with chat_server([("reply", 200, b'{"choices": [{"text": "x"}, {"text": "second"}]}', {})]) as srv:
        spec = HttpProvider(http=srv.url + "/a", version_header=None, body={"i": "{{images}}"},
                            answer_path="choices.1.text")
        r = RouteResponder(spec=spec, headers={}, policy=Policy(timeout_s=2.0, retries=0))
        assert r.reply(prompt="", images=[IMG], context=CONTEXT).text == "second"


@pytest.mark.parametrize("body, needle", [
    (b'{"result": {}}', "nothing at result.analysis (the provider's answer_path is result.analysis)"),
    (b'{"error": "quota"}', "nothing at result (the provider's answer_path"),
    (b"<html>oops</html>", "body is not JSON (the provider's answer_path result.analysis needs it)"),
])
def test_a_response_without_the_answer_at_the_path_is_a_recorded_failure(body, needle):
    with chat_server([("reply", 200, body, {})]) as srv:
        with pytest.raises(ReplyError) as err:
            own_route(srv.url + "/a").reply(prompt="", images=[IMG], context=CONTEXT)
    assert "malformed response: " + needle in str(err.value) and len(srv.requests) == 1


@pytest.mark.parametrize("spec, needle", [
    ({"body": {"image": "{{picture}}"}}, "unknown placeholder {{picture}}"),
    ({"body": {"image": "data:{{image}}"}}, "holds a placeholder inside other text"),
    ({"body": {"library": "{{category_library}}"}}, "never sends the photos"),
    ({"body": "{{images}}"}, "Input should be a valid"),
    ({"answer_path": "result..analysis"}, "String should match pattern"),
])
def test_bad_bodies_and_paths_are_refused(spec, needle):
    with pytest.raises(ValueError, match=needle.replace("(", r"\(").replace("{", r"\{").replace("}", r"\}")):
        HttpProvider(http="http://h/a", **spec)
