"""The live chat-completions client against a real HTTP server on 127.0.0.1."""
from __future__ import annotations

import pytest

from candor.lots.chat import ChatConfig, ChatError, build_body, complete, reply_text
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


def test_provider_is_the_host_only():
    assert ChatConfig(base_url="https://user:pw@api.example.com:8443/v1", model="m").provider == "api.example.com"
