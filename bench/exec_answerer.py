"""The tiny answering code of the exec-overhead bench, behind both providers: one function, two front-ends.

    python bench/exec_answerer.py --lines       # the exec provider's protocol: JSON lines on stdin/stdout
    python bench/exec_answerer.py --serve       # the http provider's route on 127.0.0.1 (prints the port)

:func:`answer` is what both return for a request: a fixed item naming the request's id and its image count,
so the figures measure the providers' per-call overhead, not any analysis.
"""
from __future__ import annotations

import json
import sys

VERSION = "bench 1.0"


def answer(req: dict) -> dict:
    return {"type": "item", "item": {"itemManufacturer": "Dell", "itemModel": "OptiPlex 7090"},
            "imageNotes": f"{req['id']} {len(req['images'])}"}


def serve() -> None:
    """The route: POST -> :func:`answer` as JSON with the version header (http.server is imported here only, so a
    process started for one exec call pays for none of it)."""
    from http.server import BaseHTTPRequestHandler, HTTPServer

    class Route(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server name
            req = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            body = json.dumps(answer(req)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("X-Analyzer-Version", VERSION)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the http.server signature
            pass

    server = HTTPServer(("127.0.0.1", 0), Route)
    print(server.server_address[1], flush=True)
    server.serve_forever()


def main() -> None:
    if sys.argv[1:] == ["--serve"]:
        serve()
    for line in sys.stdin:
        sys.stdout.write(json.dumps({"answer": answer(json.loads(line)), "version": VERSION}) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
