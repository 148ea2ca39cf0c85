"""Run many stage CLIs quickly: one process imports the heavy libraries once, then forks per run.

    python -m tests.bad_inputs.zygote WORKERS < requests.jsonl > results.jsonl

Each request line is ``{"cwd", "argv": ["candor_eval.stages.x", ...], "env": {...}, "stdout", "stderr"}``;
each result line ``{"index", "code"}`` (in completion order). A child is a real
process: it gets the request's environment and working directory, its stdout and
stderr go to the named files, and it runs ``python -m <argv[0]> <argv[1:]>``
exactly as the interpreter would (``runpy`` as ``__main__``; an uncaught
exception prints its traceback and exits 1; ``SystemExit`` gives the code). Only
the import time is saved (about half a second of CPU per run), which keeps the
corpus fast on a shared machine. The zygote itself is single-threaded, so forking is safe.
"""
from __future__ import annotations

import importlib
import json
import os
import runpy
import sys
import traceback

PRELOAD = ("numpy", "PIL.Image", "PIL.PngImagePlugin", "PIL.JpegImagePlugin", "onnxruntime", "pydantic", "yaml",
           "tqdm", "fsspec", "candor_eval.stages.fetch", "candor_eval.stages.detect", "candor_eval.stages.score_detection", "candor_eval.stages.coco_eval", "candor_eval.stages.identify",
           "candor_eval.stages.score_lots", "candor_eval.stages.value", "candor_eval.stages.stats")


def child(req: dict) -> int:
    """Run one request in this (forked) process; return the exit code."""
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    out = os.open(req["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    err = os.open(req["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(out, 1)
    os.dup2(err, 2)
    sys.argv = [req["argv"][0], *req["argv"][1:]]
    sys.modules.pop(req["argv"][0], None)   # as under `python -m`: the stage module is not imported yet
    try:
        runpy.run_module(req["argv"][0], run_name="__main__", alter_sys=True)
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if exc.code is not None and not isinstance(exc.code, int):
            print(exc.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    return code


def main() -> None:
    workers = int(sys.argv[1])
    for name in PRELOAD:
        importlib.import_module(name)
    requests = [json.loads(line) for line in sys.stdin if line.strip()]
    running: dict[int, int] = {}
    todo = list(enumerate(requests))
    while todo or running:
        while todo and len(running) < workers:
            index, req = todo.pop(0)
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    code = child(req)
                finally:
                    os._exit(code)
            running[pid] = index
        pid, status = os.wait()
        index = running.pop(pid)
        print(json.dumps({"index": index, "code": os.waitstatus_to_exitcode(status)}), flush=True)


if __name__ == "__main__":
    main()
