"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1 for tests.

Each POST to ``/v1/chat/completions`` takes the next step of the script (the
last step repeats): ``("ok", text)``, ``("status", code)``,
``("status", code, retry_after)``, ``("sleep", seconds, text)`` (answers after a
delay), ``("malformed", body)`` or ``("body", code, body)``. Every request is kept (path, headers, JSON body).
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
    requests: list[dict[str, Any]] = field(default_factory=list)

    def next_step(self) -> tuple[Any, ...]:
        return self.script.pop(0) if len(self.script) > 1 else self.script[0]


def completion(text: str, model: str = "served-model") -> bytes:
    return json.dumps({"id": "chatcmpl-1", "object": "chat.completion", "model": model,
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                                    "finish_reason": "stop"}]}).encode()


@contextmanager
def chat_server(script: list[tuple[Any, ...]]) -> Iterator[ChatServer]:
    state = ChatServer(url="", script=list(script))

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

        def do_POST(self) -> None:  # noqa: N802 - stdlib name
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            state.requests.append({"path": self.path, "headers": dict(self.headers), "json": json.loads(body)})
            step = state.next_step()
            kind = step[0]
            try:
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
                    self._send(200, step[1])
                elif kind == "body":
                    self._send(step[1], step[2])
            except (BrokenPipeError, ConnectionResetError):
                pass

        def _send(self, code: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)

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
