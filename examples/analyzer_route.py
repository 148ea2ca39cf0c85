"""The same analysis behind an HTTP route, as an app written in any language would serve it.

``POST /api/analyze-image`` takes candor's ``http`` provider request (JSON: ``id``, ``kind``,
``run``, ``category_library``, ``default_library``, ``images`` as data URLs), calls
:func:`examples.lots_analyzer.analyze` and answers its result as JSON with the app's version in
``X-Analyzer-Version``. A request without ``Authorization: Bearer $WEBAPP_TOKEN`` gets a 401.

    WEBAPP_TOKEN=... python -m examples.analyzer_route --port 3000

    identify:
      providers: {webapp: {http: "http://127.0.0.1:3000/api/analyze-image",
                           version_header: X-Analyzer-Version, headers: {Authorization: WEBAPP_AUTH}}}
      sources: {webapp: examples, ...}        # the route and the analysis it calls
"""
from __future__ import annotations

import argparse
import base64
import http.server
import json
import os
import threading

from examples.lots_analyzer import analyze

VERSION = "lots-analyzer 2026.12.1"
ROUTE = "/api/analyze-image"


def decode(url: str) -> tuple[bytes, str]:
    """``(bytes, mime_type)`` of a ``data:<mime>;base64,<data>`` URL."""
    head, _, data = url.partition(",")
    return base64.b64decode(data), head.removeprefix("data:").removesuffix(";base64")


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if self.path != ROUTE:
            return self.answer(404, {"error": "no such route"})
        if self.headers.get("Authorization") != f"Bearer {os.environ['WEBAPP_TOKEN']}":
            return self.answer(401, {"error": "unauthorised"})
        req = json.loads(body)
        context = {k: req[k] for k in ("id", "kind", "run", "category_library", "default_library")}
        try:
            result = analyze([decode(u) for u in req["images"]], context)
        except Exception as err:
            status = 503 if getattr(err, "transient", False) else 500
            return self.answer(status, {"error": f"{type(err).__name__}: {err}"})
        self.answer(200, result)

    def answer(self, status: int, doc: object) -> None:
        data = json.dumps(doc).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Analyzer-Version", VERSION)
        self.end_headers()
        self.wfile.write(data)


def serve(port: int = 0) -> http.server.ThreadingHTTPServer:
    """The app on 127.0.0.1:``port`` (0: any free port), serving on a daemon thread."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=3000)
    server = serve(parser.parse_args().port)
    print(f"serving http://127.0.0.1:{server.server_address[1]}{ROUTE}")
    threading.Event().wait()
