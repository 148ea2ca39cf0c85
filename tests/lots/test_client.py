"""The HTTP client of the remote providers (:mod:`candor_eval.lots.client`), against a real server on 127.0.0.1
(``tests/chat_server.py``): one POST, the whole-call deadline, no redirect followed, what is retried
(429, 5xx, timeouts) and what fails at once, the numeric ``Retry-After``, the attempts counted, the error
redacted and raised without a chained exception."""
from __future__ import annotations

import json
import time

import pytest

from candor_eval.lots.client import (
    BODY_EXCERPT,
    CallError,
    Policy,
    Response,
    Retryable,
    checked,
    exchange,
    origin,
    recorded_url,
    retry_after,
    target,
    with_retries,
)
from tests.chat_server import chat_server

PAYLOAD = json.dumps({"messages": []}).encode()


def post(url: str, *, timeout_s: float = 5.0) -> Response:
    return exchange(url, path=target(url + "/chat/completions"), headers={"Content-Type": "application/json"},
                    payload=PAYLOAD, timeout_s=timeout_s)


@pytest.mark.parametrize(("value", "seconds"), [("3", 3.0), ("0.5", 0.5), ("-2", 0.0), (None, None),
                                                ("Wed, 21 Oct 2015 07:28:00 GMT", None), ("inf", None),
                                                ("nan", None)])
def test_retry_after_is_numeric_seconds_never_negative(value, seconds):
    assert retry_after(value) == seconds


@pytest.mark.parametrize(("location", "expected"), [
    ("https://user:pw@evil.example:8443/x?k=v", "https://evil.example:8443"),
    ("/elsewhere", "the same host"), (None, "the same host")])
def test_origin_of_a_redirect_target_drops_user_info_path_and_query(location, expected):
    assert origin(location) == expected


def test_recorded_url_and_target():
    assert recorded_url("http://u:p@h:1/v1?a=1&b") == "http://h:1/v1?a=***&b"
    assert (target("http://h"), target("http://h/v1/x?q=1")) == ("/", "/v1/x?q=1")


def test_one_post_reaches_the_server_with_its_body():
    with chat_server([("ok", "hello")]) as srv:
        resp = post(srv.url)
    assert resp.status == 200 and json.loads(resp.body)["choices"][0]["message"]["content"] == "hello"
    assert resp.headers["content-type"] == "application/json"              # names lower-cased
    assert [r["path"] for r in srv.requests] == ["/v1/chat/completions"] and srv.requests[0]["json"] == {"messages": []}


def test_a_trickling_server_is_cut_at_the_deadline():
    with chat_server([("trickle", 0.2, "slow")]) as srv:
        start = time.monotonic()
        with pytest.raises(Retryable, match=r"timed out after 0.5 s"):
            post(srv.url, timeout_s=0.5)
        assert time.monotonic() - start < 3.0


def test_a_closed_port_is_a_retryable_connection_failure():
    with chat_server([("ok", "x")]) as srv:
        url = srv.url
    with pytest.raises(Retryable, match="connection failed"):
        post(url, timeout_s=2.0)


@pytest.mark.parametrize(("step", "error", "needle"), [
    (("status", 429), Retryable, "HTTP 429"),
    (("status", 503), Retryable, "HTTP 503"),
    (("status", 400), CallError, "HTTP 400"),
    (("redirect", 307, "https://other.example/v1"), CallError,
     r"HTTP 307 .*redirect to https://other\.example not followed \(hint\)"),
])
def test_checked_sorts_statuses_into_retried_and_failed(step, error, needle):
    with chat_server([step]) as srv:
        resp = post(srv.url)
    with pytest.raises(error, match=needle):
        checked(resp, hint="hint")


def test_checked_keeps_the_body_excerpt_and_the_retry_after():
    resp = Response(429, "Too Many Requests", {"retry-after": "7"}, b"x" * (BODY_EXCERPT + 100))
    with pytest.raises(Retryable) as err:
        checked(resp, hint="")
    assert err.value.retry_after == 7.0 and str(err.value) == "HTTP 429 Too Many Requests: " + "x" * BODY_EXCERPT


def test_retries_wait_backoff_doubling_or_the_servers_retry_after():
    """retries=3: attempts 1..4; waits backoff * 2**n (1, 2) and the server's 0.25 s, capped at max_backoff_s."""
    waits: list[float] = []
    outcomes = iter([Retryable("a"), Retryable("b"), Retryable("c", retry_after=0.25), "done"])

    def attempt() -> str:
        out = next(outcomes)
        if isinstance(out, Exception):
            raise out
        return out

    got = with_retries(attempt, policy=Policy(retries=3, backoff_s=1.0, max_backoff_s=1.5), redact=str,
                       sleep=waits.append)
    assert got == ("done", 4) and waits == [1.0, 1.5, 0.25]


def test_a_call_error_fails_at_once_redacted_without_a_chained_exception():
    calls: list[int] = []
    throttled: list[int] = []

    def attempt() -> str:
        calls.append(1)
        raise CallError("HTTP 401 Unauthorized: bad key sk-SECRET")

    with pytest.raises(CallError) as err:
        with_retries(attempt, policy=Policy(retries=3), redact=lambda s: s.replace("sk-SECRET", "***"),
                     sleep=lambda s: None, throttle=lambda: throttled.append(1))
    assert str(err.value) == "after 1 attempt(s): HTTP 401 Unauthorized: bad key ***"
    assert err.value.__context__ is None and err.value.__cause__ is None
    assert len(calls) == len(throttled) == 1


def test_retries_exhausted_against_a_real_server_name_the_attempts():
    with chat_server([("status", 500)]) as srv:
        with pytest.raises(CallError, match=r"after 3 attempt\(s\): HTTP 500"):
            with_retries(lambda: checked(post(srv.url), hint=""), policy=Policy(retries=2, backoff_s=0.0),
                         redact=str)
        assert len(srv.requests) == 3


def test_validating_the_identify_params_loads_no_http_client():
    """The ``stats`` stage validates ``identify`` on every run and sends nothing: ``http.client`` (and ``ssl``)
    load with the first exchange (the tests above make exchanges), not with the module."""
    import subprocess
    import sys

    code = ("import sys\nimport candor_eval.lots.params, candor_eval.lots.chat\n"
            "print(sorted(m for m in ('http.client', 'ssl') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
