"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1 for tests.

Each POST to ``/v1/chat/completions`` takes the next step of the script (the
last step repeats): ``("ok", text)``, ``("status", code)``,
``("status", code, retry_after)``, ``("sleep", seconds, text)`` (answers after a
delay), ``("malformed", body)``, ``("body", code, body)`` (bytes, or text sent as UTF-8),
``("reply", code, body, headers)`` (any
body with extra response headers: an app's own route), ``("trickle", seconds, text)``
(the headers at once, then the body one byte every ``seconds``) or
``("redirect", code, location)``. Every request is kept (path with query, headers, JSON body).

With ``rate_per_minute`` the server enforces a call-rate limit as providers do: a token bucket
of ``burst`` tokens refilled at ``rate_per_minute / 60`` per second; a request finding no
token gets a 429 with ``Retry-After`` (the seconds until the next token) and takes no
script step. ``accepted`` holds the arrival time (``time.monotonic``) of every request let
through, ``rejected`` counts the 429s. ``latency_s`` delays every let-through answer (a model
that takes time to answer).
"""
from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ChatServer:
    url: str
    script: list[tuple[Any, ...]]
    rate_per_minute: float | None = None
    burst: float = 2.0
    requests: list[dict[str, Any]] = field(default_factory=list)
    accepted: list[float] = field(default_factory=list)
    rejected: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    _tokens: float = 0.0
    _refilled: float = 0.0

    def next_step(self) -> tuple[Any, ...]:
        return self.script.pop(0) if len(self.script) > 1 else self.script[0]

    def admit(self, now: float) -> float | None:
        """``None`` when the request may pass (a token taken), else the seconds until the next token."""
        if self.rate_per_minute is None:
            return None
        per_s = self.rate_per_minute / 60.0
        if not self.accepted and not self.rejected:
            self._tokens, self._refilled = self.burst, now
        self._tokens = min(self.burst, self._tokens + (now - self._refilled) * per_s)
        self._refilled = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return None
        return (1.0 - self._tokens) / per_s


def as_bytes(body: bytes | str) -> bytes:
    """A scripted body: bytes as they are, text as UTF-8 (a corpus case's ``case.yaml`` holds text)."""
    return body if isinstance(body, bytes) else body.encode()


def completion(text: str, model: str = "served-model") -> bytes:
    return json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "model": model,
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                    "finish_reason": "stop"}]}).encode()


@contextmanager
def chat_server(script: list[tuple[Any, ...]], *, rate_per_minute: float | None = None, burst: float = 2.0,
                latency_s: float = 0.0) -> Iterator[ChatServer]:
    state = ChatServer(url="", script=list(script), rate_per_minute=rate_per_minute, burst=burst)

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:
            pass

        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            with state.lock:
                now = time.monotonic()
                state.requests.append({"path": self.path, "headers": dict(self.headers), "json": json.loads(body)})
                wait = state.admit(now)
                if wait is None:
                    state.accepted.append(now)
                    step = state.next_step()
                else:
                    state.rejected += 1
            try:
                if wait is not None:
                    self._send(429, b'{"error": {"message": "rate limited"}}', {"Retry-After": f"{wait:.3f}"})
                    return
                if latency_s:
                    time.sleep(latency_s)
                self._step(step)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _step(self, step: tuple[Any, ...]) -> None:
            kind = step[0]
            if kind == "sleep":
                time.sleep(step[1])
                self._send(200, completion(step[2]))
            elif kind == "ok":
                self._send(200, completion(step[1]))
            elif kind == "status":
                extra = {"Retry-After": str(step[2])} if len(step) > 2 else {}
                err = {"error": {"message": f"server says {step[1]}", "type": "test"}}
                self._send(step[1], json.dumps(err).encode(), extra)
            elif kind == "malformed":
                self._send(200, step[1] if isinstance(step[1], bytes) else step[1].encode())
            elif kind == "body":
                self._send(step[1], as_bytes(step[2]))
            elif kind == "reply":
                self._send(step[1], as_bytes(step[2]), step[3])
            elif kind == "redirect":
                self._send(step[1], b"", {"Location": step[2]})
            elif kind == "trickle":
                data = completion(step[2])
                self._send(200, b"", {}, length=len(data))
                for i in range(len(data)):
                    self.wfile.write(data[i:i + 1])
                    self.wfile.flush()
                    time.sleep(step[1])

        def _send(self, code: int, body: bytes, headers: dict[str, str] | None = None, *,
                  length: int | None = None) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body) if length is None else length))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
