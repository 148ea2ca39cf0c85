"""Per-call overhead of the exec provider against the http provider and against a process per call.

    python bench/exec_overhead.py [--rounds 5] [--calls 200] [--spawn-calls 20]

The same tiny answering code (``bench/exec_answerer.py``: a fixed answer, no analysis) answers behind all three:

* **exec**: candor's exec provider (:class:`candor_eval.lots.child.ExecResponder`), one long-lived process,
  one JSON line each way per call;
* **http**: candor's http provider (:class:`candor_eval.lots.route.RouteResponder`) against the same code
  served by ``http.server`` on 127.0.0.1 in its own process (a new connection per call, as the provider
  makes);
* **process per call**: the exec provider's process started for each call and stopped after it
  (``ExecResponder.close()`` after every reply): what a naive "run the script per lot" costs.

Two payloads: a demo lot photo (``data/lots/photos/L001-1.jpg``, 2.7 KB) and 1 MiB of random bytes as one
image (a phone photo's order of size). Each round times ``--calls`` calls (``--spawn-calls`` for a process
per call) of each provider, interleaved; the figure is the median over ``--rounds`` rounds of the mean time
per call, and the ratios are of those medians. Writes ``bench/out/exec_overhead.json`` and prints a
Markdown table.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from candor_eval.common.images import data_url  # noqa: E402 - after the sys.path line above
from candor_eval.lots.child import ExecResponder  # noqa: E402
from candor_eval.lots.client import Policy  # noqa: E402
from candor_eval.lots.params import HttpProvider  # noqa: E402
from candor_eval.lots.route import RouteResponder  # noqa: E402

ANSWERER = ROOT / "bench" / "exec_answerer.py"
POLICY = Policy(timeout_s=30.0, retries=0, backoff_s=0.0)
CONTEXT = {"id": "L001", "kind": "lot", "run": 1, "default_library": True,
           "category_library": {"functional": ["Computers"], "specific": None, "itemType": None}}


def per_call_ms(call: Callable[[], object], n: int) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        call()
    return (time.perf_counter() - t0) / n * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--spawn-calls", type=int, default=20)
    args = ap.parse_args()
    payloads = {"photo 2.7 KB": [data_url(ROOT / "data/lots/photos/L001-1.jpg")],
                "1 MiB image": ["data:image/jpeg;base64," + base64.b64encode(os.urandom(2**20)).decode()]}
    argv = [sys.executable, str(ANSWERER), "--lines"]
    server = subprocess.Popen([sys.executable, str(ANSWERER), "--serve"], stdout=subprocess.PIPE, text=True)
    assert server.stdout is not None
    port = int(server.stdout.readline())
    route = RouteResponder(spec=HttpProvider(http=f"http://127.0.0.1:{port}/analyze"), headers={}, policy=POLICY)
    exec_ = ExecResponder(argv, env={}, policy=POLICY)
    spawn = ExecResponder(argv, env={}, policy=POLICY)

    def once_per_process(images: list[str]) -> None:
        spawn.reply(prompt="", images=images, context=CONTEXT)
        spawn.close()

    results: dict[str, dict[str, list[float]]] = {}
    try:
        for name, images in payloads.items():
            assert json.loads(exec_.reply(prompt="", images=images, context=CONTEXT).text) == \
                json.loads(route.reply(prompt="", images=images, context=CONTEXT).text)      # the same answer
            got = results[name] = {"exec": [], "http": [], "process per call": []}
            calls = {"exec": (partial(exec_.reply, prompt="", images=images, context=CONTEXT), args.calls),
                     "http": (partial(route.reply, prompt="", images=images, context=CONTEXT), args.calls),
                     "process per call": (partial(once_per_process, images), args.spawn_calls)}
            for _ in range(args.rounds):
                for kind, (call, n) in calls.items():
                    got[kind].append(per_call_ms(call, n))
    finally:
        exec_.close()
        spawn.close()
        server.kill()
        server.wait()
    summary = {name: {k: statistics.median(v) for k, v in got.items()} for name, got in results.items()}
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    (out / "exec_overhead.json").write_text(json.dumps({"args": vars(args), "rounds": results, "median_ms": summary},
                                                       indent=1))
    print("| payload | exec | http | process per call | http / exec | process per call / exec |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, m in summary.items():
        e, h, p = m["exec"], m["http"], m["process per call"]
        print(f"| {name} | {e:.3f} | {h:.3f} | {p:.1f} | {h / e:.2f} | {p / e:.0f} |")


if __name__ == "__main__":
    main()
