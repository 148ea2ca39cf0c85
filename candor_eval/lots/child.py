"""The ``exec`` provider: the production code as a long-lived child process speaking JSON lines.

``identify.providers: {webapp-v2: {exec: ["node", "benchmark/analyze.mjs", "--version", "v2"],
env: [NODE_ENV], secrets: [WEBAPP_TOKEN]}}``: production code in any language, without a web server.

**The process.** ``exec`` is an argv list, run without a shell in the working directory (the
project's folder); its program is found on candor's ``PATH`` (not found: exit 2 naming the key).
It is started at the first call of a worker thread and kept alive, so an identify run starts one
process per thread (``identify.concurrency``). Its environment is exactly what is declared:
``env`` names the variables passed on as they are (when set), ``secrets`` those passed on and
redacted (each must be set, visible ASCII, at least 8 characters: exit 2 naming the variable,
never the value; :func:`candor_eval.lots.route.read_secret`). When the run ends (finished,
failed or interrupted) each process's stdin is closed, it is given :data:`STOP_GRACE_S` to exit,
then killed with its process group.

**The protocol** (one request, one answer, in order):

* candor writes one JSON line on the process's stdin::

    {"id": "L001", "kind": "lot" | "case", "run": 1, "category_library": {...}, "default_library": true,
     "timeout_s": 60.0, "images": ["data:image/jpeg;base64,...", ...]}

  (the body of the ``http`` provider, :func:`candor_eval.lots.route.request_body`, plus the
  deadline: what the ``python`` provider's ``context`` holds);
* the process writes one JSON line on its stdout: ``{"answer": <object or string>, "version":
  "<the code's version>"}`` (``version`` optional; an object answer is recorded as its JSON text,
  a string as is) or ``{"error": {"message": "...", "transient": true | false}}`` (the message
  recorded, cut at 2,000 characters; a transient error is retried like a 5xx, with ``retries`` and
  ``backoff_s``; the process is kept).
  Logs go to stderr: stdout is the protocol's.

**Every failure is a recorded failed call**, never a traceback, and the other runs go on:

* no answer within ``timeout_s`` (writing the request included; the first call of a process
  also pays its start-up, for which a responder may give it ``startup_s`` more: the python
  provider's worker, :mod:`candor_eval.lots.production`): the process group is killed, the
  attempt fails as ``timed out after <timeout_s> s`` and is retried like the other providers'
  time-outs; a new process answers next;
* the process exits or crashes before answering (``exited with status N``, ``was killed by signal
  N``): failed at once, not retried; a new process answers the next call (a process that exits
  between two calls is restarted without any call failing);
* a line that is not one JSON object of the shape above, not UTF-8, or over :data:`MAX_LINE`
  (16 MiB, the http body's cap), or a line written before any request (a second line for the
  last one): a malformed response, failed at once; the process is killed (its stdout is no
  longer in step) and restarted.

**stderr** is read continuously (a process writing megabytes of logs never blocks, and nothing
reaches candor's console); the last :data:`STDERR_KEPT` bytes are kept, and a failure's message
ends with their last :data:`STDERR_SHOWN` characters. The secrets' values (whole, and each
space-separated word, as for header values) are redacted from the answer, the version and every
error message, stderr included (:mod:`candor_eval.lots.redact`).

The recorded ``provider`` is ``exec``, ``model`` the declared argv (shell-quoted), the
``version`` the one the process reported; the recording's identity is the SHA-256 of
``identify.sources.<candidate>`` (required for an exec candidate, as for http:
:func:`candor_eval.lots.source_identity.candidate_identity`).
"""
from __future__ import annotations

import json
import os
import queue
import shlex
import shutil
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Any

from candor_eval.common.errors import fail
from candor_eval.common.images import data_url
from candor_eval.lots.client import MAX_BODY, CallError, Policy, Retryable, with_retries
from candor_eval.lots.live import Reply, ReplyError
from candor_eval.lots.params import ExecProvider
from candor_eval.lots.python_worker import MESSAGE_EXCERPT, result_text
from candor_eval.lots.redact import Redactor
from candor_eval.lots.route import header_secrets, read_secret, request_body

MAX_LINE = MAX_BODY
STDERR_KEPT = 64 * 1024
STDERR_SHOWN = 1000
STOP_GRACE_S = 2.0


class Gone(Exception):
    """The process ended (or was killed) before answering; ``str()`` says how."""


class Expired(Exception):
    """The deadline passed before the answer's line."""


class Child:
    """One running process of the provider: its pipes, a thread reading stdout by lines and one draining
    stderr into a bounded tail (module docstring)."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str]):
        self.proc = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=dict(env), start_new_session=True)
        self.lines: queue.Queue[bytes | None] = queue.Queue()
        self.asked = 0                                  # requests written: the first pays the start-up
        self._tail = bytearray()
        self._tail_lock = threading.Lock()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        threading.Thread(target=self._read, args=(self.proc.stdout,), name="exec-stdout", daemon=True).start()
        self._drainer = threading.Thread(target=self._drain, args=(self.proc.stderr,), name="exec-stderr", daemon=True)
        self._drainer.start()

    def _read(self, out: IO[bytes]) -> None:
        try:
            while line := out.readline(MAX_LINE + 1):
                self.lines.put(line)
                if len(line) > MAX_LINE:              # over the cap: stop reading, the caller kills the process
                    return
        except (OSError, ValueError):
            pass
        self.lines.put(None)

    def _drain(self, err: IO[bytes]) -> None:
        try:
            while chunk := os.read(err.fileno(), 65536):
                with self._tail_lock:
                    self._tail += chunk
                    del self._tail[:-STDERR_KEPT]
        except (OSError, ValueError):
            pass

    def stderr_tail(self) -> str:
        """The last :data:`STDERR_SHOWN` characters of what the process wrote on stderr, stripped (once it has
        ended, up to its last byte: the drainer is given a second to reach the end)."""
        if not self.alive():
            self._drainer.join(1.0)
        with self._tail_lock:
            text = bytes(self._tail).decode("utf-8", "replace")
        return text[-STDERR_SHOWN:].strip()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def kill(self) -> None:
        """Kill the process and its process group (a wrapper's own children too); reap it."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        self.proc.wait()
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if pipe is not None:
                    pipe.close()
            except OSError:
                pass

    def finish(self) -> None:
        """Close stdin: the process's signal to finish (:func:`stop_all`)."""
        try:
            if self.proc.stdin is not None:
                self.proc.stdin.close()
        except OSError:
            pass

    def stop(self, deadline: float) -> None:
        """Wait until ``deadline`` (monotonic) for the process to exit after :meth:`finish`, then :meth:`kill`."""
        try:
            self.proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
        self.kill()

    def how_it_ended(self) -> str:
        try:
            code = self.proc.wait(1.0)
        except subprocess.TimeoutExpired:
            return "closed its stdout"
        return f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"

    def ask(self, payload: bytes, timeout_s: float) -> bytes:
        """Write ``payload`` (one line) and return the next line of stdout; :class:`Gone` or :class:`Expired`."""
        expired = threading.Event()

        def cut() -> None:
            expired.set()
            self.kill()

        watchdog = threading.Timer(timeout_s, cut)
        watchdog.daemon = True
        deadline = time.monotonic() + timeout_s
        watchdog.start()
        self.asked += 1
        try:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write(payload)
                self.proc.stdin.flush()
            except (OSError, ValueError):
                pass                                   # it ended: what stdout says next tells how
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()) + 1.0)
            except queue.Empty:
                expired.set()
                line = None
        finally:
            watchdog.cancel()
        if expired.is_set():
            raise Expired
        if line is None:
            raise Gone(f"the process {self.how_it_ended()} before answering")
        return line


def answer_of(line: bytes) -> tuple[str, str | None]:
    """The recorded text and version of an answer line; :class:`Retryable` (a transient error the process
    reported) or :class:`CallError` (its error, or a malformed line, whose message starts ``malformed``)."""
    if len(line) > MAX_LINE:
        raise ValueError(f"a line larger than {MAX_LINE // 2**20} MiB")
    try:
        obj = json.loads(line.decode("utf-8"))
    except UnicodeDecodeError as err:
        raise ValueError(f"the line is not UTF-8 (byte {err.start})") from None
    except RecursionError:
        raise ValueError("a JSON line nested too deeply to read") from None
    except json.JSONDecodeError as err:
        excerpt = line[:120].decode("utf-8", "replace").strip()
        raise ValueError(f"not a JSON line ({err.msg}): {excerpt!r}") from None
    if not isinstance(obj, dict) or ("answer" in obj) == ("error" in obj) or set(obj) - {"answer", "version", "error"}:
        raise ValueError('expected {"answer": ..., "version": "..."} or {"error": {"message": "...", '
                         f'"transient": false}}, got {type(obj).__name__} with keys {sorted(obj)[:5]}'
                         if isinstance(obj, dict) else f"expected a JSON object, got {type(obj).__name__}")
    if "error" in obj:
        failure = obj["error"]
        if not isinstance(failure, dict) or not isinstance(failure.get("message"), str) \
                or not isinstance(failure.get("transient", False), bool):
            raise ValueError('error must be {"message": "<text>", "transient": true | false}')
        message = failure["message"]
        message = message if len(message) <= MESSAGE_EXCERPT else message[:MESSAGE_EXCERPT] + " ..."
        if failure.get("transient", False):
            raise Retryable(message)
        raise CallError(message)
    version = obj.get("version")
    if version is not None and not isinstance(version, str):
        raise ValueError(f"version must be a string, got {type(version).__name__}")
    try:
        return result_text(obj["answer"]), version
    except ValueError as err:
        raise ValueError(f"the answer {err}") from None


def stop_all(children: Sequence[Child], grace_s: float = STOP_GRACE_S) -> None:
    """Close every process's stdin at once, give them ``grace_s`` together to exit, then kill what is left."""
    for child in children:
        child.finish()
    deadline = time.monotonic() + grace_s
    for child in children:
        child.stop(deadline)


class ExecResponder:
    """The production code's process as a live responder (module docstring); one :class:`Child` per worker
    thread, started at that thread's first call, restarted after a failure that ends or desyncs it."""

    provider = "exec"
    endpoint = None

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str], secrets: Sequence[str] = (),
                 policy: Policy | None = None, sleep: Callable[[float], None] = time.sleep, model: str | None = None,
                 startup_s: float = 0.0):
        self.argv, self.env, self.policy, self.sleep = list(argv), dict(env), policy or Policy(), sleep
        self.startup_s = startup_s
        self._model = model if model is not None else shlex.join(self.argv)
        self.redact = Redactor.of(header_secrets(secrets))
        self._children: dict[int, Child] = {}
        self._lock = threading.Lock()
        weakref.finalize(self, lambda c: stop_all(list(c.values())), self._children)   # at exit, or if dropped

    @property
    def model(self) -> str:
        return self._model

    def load(self, images: Sequence[Path]) -> list[str]:
        return [data_url(p) for p in images]

    def _child(self) -> Child:
        me = threading.get_ident()
        with self._lock:
            child = self._children.get(me)
        if child is not None and child.alive():
            return child
        if child is not None:
            self._drop(child)
        try:
            child = Child(self.argv, self.env)
        except OSError as err:
            raise CallError(f"could not start {self.argv[0]}: {type(err).__name__}: {err}") from None
        with self._lock:
            self._children[me] = child
        return child

    def _drop(self, child: Child) -> None:
        with self._lock:                       # in place: the finalizer holds this dict
            for k in [k for k, v in self._children.items() if v is child]:
                del self._children[k]
        child.kill()

    def _attempt(self, payload: bytes) -> tuple[str, str | None]:
        child = self._child()
        timeout_s = self.policy.timeout_s + (self.startup_s if child.asked == 0 else 0.0)
        try:
            line = child.ask(payload, timeout_s)
        except Expired:
            self._drop(child)
            raise Retryable(f"timed out after {timeout_s:g} s (the process was killed)" + _stderr(child)) from None
        except Gone as err:
            self._drop(child)
            raise CallError(f"{err}{_stderr(child)}") from None
        try:
            return answer_of(line)
        except ValueError as err:
            self._drop(child)
            raise CallError(f"malformed response: {err}{_stderr(child)}") from None

    def reply(self, *, prompt: str, images: list[str], context: Mapping[str, Any]) -> Reply:
        del prompt                         # the production code builds its own
        body = request_body(context, images) | {"timeout_s": self.policy.timeout_s}
        payload = json.dumps(body).encode("utf-8") + b"\n"
        try:
            (text, version), attempts = with_retries(lambda: self._stale_then(payload), policy=self.policy,
                                                     redact=self.redact, sleep=self.sleep)
        except CallError as err:
            raise ReplyError(str(err)) from None
        return Reply(text=self.redact(text), attempts=attempts,
                     version=None if version is None else self.redact(version))

    def _stale_then(self, payload: bytes) -> tuple[str, str | None]:
        with self._lock:
            child = self._children.get(threading.get_ident())
        if child is not None and not child.lines.empty():
            early = child.lines.get_nowait()
            if early is not None:                 # None: it ended, which the next call's start handles
                self._drop(child)
                raise CallError("malformed response: the process wrote a line before this request (more than one "
                                f"line for the last one?){_stderr(child)}")
            self._drop(child)
        return self._attempt(payload)

    def close(self) -> None:
        """Stop every process (module docstring); the responder starts new ones if called again."""
        with self._lock:
            children = list(self._children.values())
            self._children.clear()
        stop_all(children)


def _stderr(child: Child) -> str:
    tail = child.stderr_tail()
    return f"; stderr: {tail}" if tail else ""


def exec_responder(spec: ExecProvider, *, environ: Mapping[str, str], policy: Policy, where: str) -> ExecResponder:
    """The responder of an exec provider: its program found on ``environ``'s ``PATH``, its environment the
    declared variables (module docstring); InputError naming ``where`` and the variable, never a value."""
    program = shutil.which(spec.exec[0], path=environ.get("PATH", os.defpath))
    if program is None:
        raise fail(f"{where}.exec[0]", f"program {spec.exec[0]!r} not found on PATH or not executable",
                   expected="an executable (node, python, ./bin/analyze) on PATH or a path to one",
                   hint="the argv is run without a shell: no ~, $VAR or pipes")
    secrets = {name: read_secret(name, environ, where=f"{where}.secrets", what="the secret's value")
               for name in spec.secrets}
    env = {name: environ[name] for name in spec.env if name in environ} | secrets
    return ExecResponder([program, *spec.exec[1:]], env=env, secrets=list(secrets.values()), policy=policy,
                         model=shlex.join(spec.exec))
