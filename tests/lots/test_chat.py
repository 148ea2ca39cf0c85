"""The live chat-completions client against a real HTTP server on 127.0.0.1: retries, the whole-call
deadline, redirects never followed, secrets redacted, the endpoint and key checks."""
from __future__ import annotations

import time

import pytest

from candor_eval.common.errors import InputError
from candor_eval.lots.chat import (
    ChatConfig,
    ChatError,
    build_body,
    complete,
    endpoint_problem,
    read_api_key,
    reply_text,
)
from tests.chat_server import chat_server

KEY = "sk-SENTINEL-do-not-leak-4242"
IMG = "data:image/png;base64,iVBORw0KGgo="


def config(url: str, **kw) -> ChatConfig:
    return ChatConfig(base_url=url, model="test-model", **({"timeout_s": 2.0, "retries": 2, "backoff_s": 0.0} | kw))


def test_success_sends_prompt_images_model_and_bearer_key():
    with chat_server([("ok", '{"type": "item"}')]) as srv:
        reply = complete(config(srv.url), KEY, prompt="hello", image_urls=[IMG, IMG])
    assert (reply.text, reply.model, reply.attempts) == ('{"type": "item"}', "served-model", 1)
    req = srv.requests[0]
    assert req["path"] == "/v1/chat/completions"
    assert req["headers"]["Authorization"] == f"Bearer {KEY}"
    assert req["json"] == build_body(model="test-model", prompt="hello", image_urls=[IMG, IMG])
    content = req["json"]["messages"][0]["content"]
    assert content[0] == {"type": "text", "text": "hello"}
    assert [c["image_url"]["url"] for c in content[1:]] == [IMG, IMG]


def test_429_then_success_waits_retry_after_and_backoff():
    waits: list[float] = []
    with chat_server([("status", 429, 7), ("status", 503), ("ok", "fine")]) as srv:
        reply = complete(config(srv.url, backoff_s=0.5), KEY, prompt="p", image_urls=[], sleep=waits.append)
    assert reply.text == "fine" and reply.attempts == 3 and len(srv.requests) == 3
    assert waits == [7.0, 1.0]   # Retry-After honoured, then backoff_s * 2**1


def test_500_until_retries_exhausted_is_an_error_with_the_provider_message():
    with chat_server([("status", 500)]) as srv:
        with pytest.raises(ChatError) as err:
            complete(config(srv.url, retries=2), KEY, prompt="p", image_urls=[], sleep=lambda s: None)
    assert len(srv.requests) == 3
    msg = str(err.value)
    assert msg.startswith("after 3 attempt(s): HTTP 500 Internal Server Error:") and "server says 500" in msg
    assert KEY not in msg


def test_400_is_not_retried():
    with chat_server([("status", 400)]) as srv:
        with pytest.raises(ChatError, match=r"after 1 attempt\(s\): HTTP 400"):
            complete(config(srv.url), KEY, prompt="p", image_urls=[], sleep=lambda s: None)
    assert len(srv.requests) == 1


def test_slow_response_past_the_timeout_is_retried_then_fails():
    with chat_server([("sleep", 0.6, "late")]) as srv:
        with pytest.raises(ChatError, match=r"after 2 attempt\(s\): timed out after 0.2 s"):
            complete(config(srv.url, timeout_s=0.2, retries=1), KEY, prompt="p", image_urls=[],
                     sleep=lambda s: None)
    assert len(srv.requests) == 2


def test_slow_then_fast_succeeds():
    with chat_server([("sleep", 0.6, "late"), ("ok", "quick")]) as srv:
        reply = complete(config(srv.url, timeout_s=0.2), KEY, prompt="p", image_urls=[], sleep=lambda s: None)
    assert reply.text == "quick" and reply.attempts == 2


@pytest.mark.parametrize("body, needle", [
    (b"<html>oops</html>", "response is not JSON"),
    (b'{"choices": []}', "no choices[0].message.content"),
    (b'{"choices": [{"message": {"content": 42}}]}', "is int, not text"),
    (b'{"choices": [{"message": {"content": [{"type": "image_url", "image_url": {"url": "x"}}]}}]}',
     "content[0] is a 'image_url' part, not text"),
    (b'{"choices": [{"message": {"content": [{"type": "text", "text": "a"}, {"type": "refusal", "refusal": "no"}]}}]}',
     "content[1] is a 'refusal' part, not text"),
    (b'{"choices": [{"message": {"content": ["a"]}}]}', "content[0] is a 'str' part"),
    (b'{"choices": [{"message": {"content": [{"type": "text", "text": 5}]}}]}', "content[0] is a 'text' part"),
])
def test_malformed_body_fails_without_retry(body, needle):
    with chat_server([("malformed", body)]) as srv:
        with pytest.raises(ChatError, match="malformed response") as err:
            complete(config(srv.url), KEY, prompt="p", image_urls=[], sleep=lambda s: None)
    assert needle in str(err.value) and len(srv.requests) == 1


def test_connection_refused_is_retried_and_reported():
    with chat_server([("ok", "x")]) as srv:
        url = srv.url
    with pytest.raises(ChatError, match="connection failed"):
        complete(config(url, retries=1), KEY, prompt="p", image_urls=[], sleep=lambda s: None)


def test_reply_text_joins_content_parts_and_key_is_scrubbed():
    assert reply_text(b'{"choices": [{"message": {"content": [{"type": "text", "text": "a"}, {"text": "b"}]}}]}') \
        == ("ab", None)
    # a server that echoes the key back in its error body still never leaks it
    with chat_server([("body", 401, f'{{"error": "invalid key {KEY}"}}'.encode())]) as srv:
        with pytest.raises(ChatError) as err:
            complete(config(srv.url), KEY, prompt="p", image_urls=[], sleep=lambda s: None)
    assert KEY not in str(err.value) and "HTTP 401" in str(err.value) and "invalid key ***" in str(err.value)


def test_provider_is_the_host_only_and_the_query_is_kept():
    cfg = ChatConfig(base_url="https://api.example.com:8443/v1/?api-version=2024-06-01", model="m")
    assert cfg.provider == "api.example.com"
    assert cfg.target == "/v1/chat/completions?api-version=2024-06-01"
    assert "api-version" not in repr(cfg)                   # the URL (which may hold a secret) is not in the repr


def test_query_is_sent_and_a_model_echo_of_a_query_value_is_redacted():
    secret = "qs-SENTINEL-77aa01"      # a query value that is no credential by name is still never echoed
    with chat_server([("ok", f"my key is {KEY} and {secret}")]) as srv:
        reply = complete(config(srv.url + f"?api-version=2024-06-01&deployment={secret}"), KEY, prompt="p",
                         image_urls=[])
    assert srv.requests[0]["path"] == f"/v1/chat/completions?api-version=2024-06-01&deployment={secret}"
    assert reply.text == "my key is *** and ***"


def test_a_trickling_server_is_cut_at_the_whole_call_deadline():
    # one byte every 50 ms: each socket read is quick, the body would take about 10 s
    with chat_server([("trickle", 0.05, "x" * 60)]) as srv:
        t0 = time.monotonic()
        with pytest.raises(ChatError, match=r"after 1 attempt\(s\): timed out after 0.5 s"):
            complete(config(srv.url, timeout_s=0.5, retries=0), KEY, prompt="p", image_urls=[])
        elapsed = time.monotonic() - t0
    assert 0.5 <= elapsed < 1.0


@pytest.mark.parametrize("code", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_origin_is_not_followed_and_the_key_goes_nowhere_else(code):
    with chat_server([("ok", "stolen")]) as other:
        with chat_server([("redirect", code, other.url + "/chat/completions?x=1")]) as srv:
            with pytest.raises(ChatError) as err:
                complete(config(srv.url), KEY, prompt="p", image_urls=[], sleep=lambda s: None)
    assert other.requests == [] and len(srv.requests) == 1       # not retried, never followed
    port = other.url.split(":")[2].split("/")[0]
    assert str(err.value).startswith(f"after 1 attempt(s): HTTP {code} ")
    assert f"redirect to http://127.0.0.1:{port} not followed" in str(err.value)


@pytest.mark.parametrize("url, why", [
    ("https://api.openai.com/v1", None),
    ("http://127.0.0.1:8080", None),
    ("https://h/v1?api-version=1", None),
    ("api.openai.com/v1", "scheme"),
    ("ftp://h/v1", "scheme"),
    ("https:///v1", "no host"),
    ("https://h:99999/v1", "port"),
    ("https://h:x/v1", "port"),
    ("https://user:pw@h/v1", "user-info"),
    ("https://tok@h/v1", "user-info"),
    ("https://h/v1#frag", "fragment"),
    ("https://h/v1 ", "whitespace"),
    ("https://h/v1\r\nX: y", "control"),
    ("https://h/v1/caf\u00e9", "non-ASCII"),
    ("https://h/v1?api-version=2024-06-01&deployment=gpt", None),
    ("https://h/v1?key=abc", "named like a credential (key)"),
    ("https://h/v1?api-version=1&API-Key=abc", "(API-Key)"),
    ("https://h/v1?sig=1&Token=2", "(sig, Token)"),
    ("https://h/v1?sas_token=1", "(sas_token)"),
    ("https://h/v1?password=1", "identify.api_key_env"),
    ("https://h/v1?client%5Fsecret=1", "(client_secret)"),
])
def test_endpoint_problem(url, why):
    got = endpoint_problem(url)
    assert (got is None) if why is None else (why in got)
    if got:
        assert url.strip() not in got


@pytest.mark.parametrize("value, needle", [
    (None, "is not set"),
    ("", "is not set"),
    (KEY + "\r", "control character"),
    (KEY + "\n", "control character"),
    (" " + KEY, "whitespace"),
    (KEY[:-1] + "\u00e9", "non-ASCII"),
    ("EMPTY", "shorter than 8"),
])
def test_bad_api_keys_are_refused_naming_the_variable_never_the_value(value, needle):
    env = {} if value is None else {"MY_KEY": value}
    with pytest.raises(InputError) as err:
        read_api_key("MY_KEY", env)
    assert "MY_KEY" in err.value.message and needle in err.value.message
    assert not value or value.strip() not in err.value.message
    assert read_api_key("MY_KEY", {"MY_KEY": KEY}) == KEY


def test_non_finite_retry_after_falls_back_to_the_backoff():
    waits: list[float] = []
    with chat_server([("status", 429, "inf"), ("status", 429, "nan"), ("ok", "fine")]) as srv:
        reply = complete(config(srv.url, backoff_s=0.25), KEY, prompt="p", image_urls=[], sleep=waits.append)
    assert reply.text == "fine" and waits == [0.25, 0.5]


def test_every_attempt_waits_for_the_throttle():
    turns: list[int] = []
    with chat_server([("status", 503), ("ok", "fine")]) as srv:
        complete(config(srv.url), KEY, prompt="p", image_urls=[], sleep=lambda s: None,
                 throttle=lambda: turns.append(len(srv.requests)))
    assert turns == [0, 1]
