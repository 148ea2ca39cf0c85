"""The ``python`` provider's worker: the user's entry point run in a child process of its own.

    python -m candor_eval.lots.python_worker pkg.mod:fn            # answer requests, one JSON line each
    python -m candor_eval.lots.python_worker --check pkg.mod:fn    # import, say whether it can be called, end

The stage never runs the user's code: it starts this worker, which speaks the ``exec`` provider's
protocol (:mod:`candor_eval.lots.child`: one JSON request per line on stdin, one JSON line back on
stdout), so the exec provider's machinery holds for it (deadline, restart after a crash or an exit,
stderr drained and kept bounded, exactly-once recording). Whatever the code does (``sys.exit``,
``os._exit``, ``os.chdir``, a signal, a ``print``, an unbounded result) happens in this process: it
is one call's recorded failure, never the stage's end, move or flood.

**Before the user's code is imported** the worker keeps the real stdin and stdout for the protocol
on private descriptors, then points descriptor 1 (and ``sys.stdout``) at stderr and descriptor 0 at
``/dev/null``: a ``print`` (or a C library writing on descriptor 1) lands in stderr, which the stage
drains, caps and redacts, and nothing the code reads from stdin takes a request. The import roots of
the working directory go first on the import path (:func:`on_import_path`, as the provider's
import always did).

**Each request** (``{"id", "kind", "run", "category_library", "default_library", "timeout_s",
"images": [data URL, ...]}``) becomes ``analyze(images, context)``: ``images`` the ``(bytes,
mime_type)`` pairs of the data URLs, ``context`` every other key. The answer line is
``{"answer": "<recorded text>"}`` (:func:`result_text`: a dict as its JSON text, a string as is) or
``{"error": {"message": "<Type>: <message>", "transient": <bool>}}``:

* any exception, ``BaseException`` included (``SystemExit``, ``KeyboardInterrupt`` from an SDK,
  ``GeneratorExit``), is the call's error, described by :func:`describe` (a ``__str__`` that raises
  is described without its message) and transient only when its ``transient`` attribute is ``True``
  (an attribute that raises is not a mark: :func:`is_transient`);
* a result that is neither a dict nor a string, a dict that is not JSON (``NaN``, a ``datetime``),
  nested deeper than Python can serialise, or whose answer line exceeds :data:`MAX_LINE` (16 MiB, the
  http body's cap) is the call's error, and nothing of it is sent.

After each call the working directory is put back where the worker started. The process lives for
the identify run (one per worker thread), so module globals and caches persist from call to call,
as they would in the app.

``--check`` imports the module (any exception, ``SystemExit`` included, is caught) and writes one
line, ``{"answer": "ok"}`` or ``{"error": {"message": "cannot import ...", "transient": false}}``:
the stage's up-front check (:func:`candor_eval.lots.production.check_entry_point`).

Only the standard library and :mod:`candor_eval.common.repository` are imported here (a worker
starts in the time of an interpreter plus the user's module).
"""
from __future__ import annotations

import base64
import binascii
import importlib
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from candor_eval.common.repository import import_roots

MAX_LINE = 16 * 1024 * 1024          # candor_eval.lots.client.MAX_BODY, the http body's cap (a test holds them equal)
MESSAGE_EXCERPT = 2000


class NotCallable(Exception):
    """The entry point cannot be imported or is not callable; ``str()`` says why."""


def on_import_path() -> None:
    """Put the import roots of the working directory (the project's folder, then its parents up to the
    repository top: :func:`candor_eval.common.repository.import_roots`) first on the import path, in that
    order, each once."""
    roots = [str(p) for p in import_roots(Path.cwd())]
    sys.path[:] = roots + [p for p in sys.path if p not in roots]


def result_text(result: Any) -> str:
    """The recorded text of a callable's result (module docstring); ValueError when it is neither a dict nor a
    string or is a dict that is not JSON."""
    if isinstance(result, str):
        return result
    if isinstance(result, dict):
        try:
            return json.dumps(result, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as err:
            raise ValueError(f"returned a dict that is not JSON ({err})") from None
    raise ValueError(f"returned {type(result).__name__}, expected a dict or a str")


def describe(err: BaseException) -> str:
    """``<ExceptionType>: <message>`` (the message cut to :data:`MESSAGE_EXCERPT` characters); an exception
    whose ``str()`` raises is ``<ExceptionType> (its message could not be read: <the other type>)``."""
    try:
        name = type(err).__name__
    except BaseException:  # noqa: BLE001 - a hostile metaclass: the error is still recorded
        name = "an exception"
    try:
        text = str(err)
        if not isinstance(text, str):
            raise TypeError("__str__ returned a non-string")
    except BaseException as inner:  # noqa: BLE001 - the user's __str__ raising anything is still a recorded error
        return f"{name} (its message could not be read: {type(inner).__name__})"
    text = text if len(text) <= MESSAGE_EXCERPT else text[:MESSAGE_EXCERPT] + " ..."
    return f"{name}: {text}" if text else name


def is_transient(err: BaseException) -> bool:
    """True only when the exception's ``transient`` attribute is ``True``; reading it cannot raise."""
    try:
        return getattr(err, "transient", False) is True
    except BaseException:  # noqa: BLE001 - a property that raises is not a mark
        return False


def entry_point(spec: str) -> Callable[..., Any]:
    """Import ``pkg.mod`` of ``pkg.mod:fn`` (:func:`on_import_path` first) and return its callable;
    :class:`NotCallable` for any failure of the import, ``SystemExit`` included."""
    module_name, _, function = spec.rpartition(":")
    on_import_path()
    try:
        module = importlib.import_module(module_name)
    except BaseException as err:  # noqa: BLE001 - whatever the user's import does is a configuration error
        raise NotCallable(f"cannot import {module_name}: {describe(err)}") from None
    try:
        fn = getattr(module, function, None)
    except BaseException as err:  # noqa: BLE001 - a module __getattr__ that raises
        raise NotCallable(f"{module_name}.{function} cannot be read: {describe(err)}") from None
    if not callable(fn):
        raise NotCallable(f"{module_name} has no callable {function} (got {type(fn).__name__})")
    return fn


def error_line(message: str, *, transient: bool = False) -> bytes:
    """The protocol's error line."""
    return _line({"error": {"message": message, "transient": transient}})


def _line(obj: dict[str, Any]) -> bytes:
    try:
        text = json.dumps(obj, ensure_ascii=False)
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:           # a lone surrogate: escaped, and replaced by the stage when recorded
        return json.dumps(obj).encode("ascii") + b"\n"


def images_of(urls: Any) -> list[tuple[bytes, str]]:
    """The ``(bytes, mime_type)`` pairs of the request's data URLs; ValueError for anything else."""
    if not isinstance(urls, list):
        raise ValueError("images must be a list of data URLs")
    out = []
    for url in urls:
        head, sep, data = url.partition(",") if isinstance(url, str) else ("", "", "")
        if not (sep and head.startswith("data:") and head.endswith(";base64")):
            raise ValueError("an image that is not a base64 data URL")
        try:
            out.append((base64.b64decode(data, validate=True), head[len("data:"):-len(";base64")]))
        except binascii.Error:
            raise ValueError("an image whose base64 does not decode") from None
    return out


def answer(fn: Callable[..., Any], request: bytes) -> bytes:
    """The answer line to one request line (module docstring); never raises."""
    try:
        body = json.loads(request)
        if not isinstance(body, dict):
            raise ValueError("a request must be a JSON object")
        images = images_of(body.get("images"))
    except ValueError as err:
        return error_line(f"candor's request could not be read: {err}")
    context = {k: v for k, v in body.items() if k != "images"}
    try:
        result = fn(images, context)
    except BaseException as err:  # noqa: BLE001 - every failure of the user's code is this call's error
        return error_line(describe(err), transient=is_transient(err))
    try:
        line = _line({"answer": result_text(result)})
    except ValueError as err:
        return error_line(str(err))
    except RecursionError:
        return error_line("returned a result nested too deeply to serialise")
    except BaseException as err:  # noqa: BLE001 - a dict subclass, a str subclass: its own code runs here
        return error_line(f"returned a result that could not be serialised: {describe(err)}")
    if len(line) > MAX_LINE:
        return error_line(f"returned {len(line) / 2**20:.1f} MiB, more than an answer's cap of "
                          f"{MAX_LINE // 2**20} MiB")
    return line


def serve(fn: Callable[..., Any], requests: IO[bytes], answers: IO[bytes], *, home: str) -> None:
    """Answer every request line until stdin ends, the working directory put back to ``home`` after each."""
    while request := requests.readline():
        line = answer(fn, request)
        try:
            os.chdir(home)
        except OSError:
            pass
        answers.write(line)
        answers.flush()


def protocol_streams() -> tuple[IO[bytes], IO[bytes]]:
    """The real stdin and stdout kept on private descriptors; descriptor 1 and ``sys.stdout`` then lead to
    stderr, descriptor 0 and ``sys.stdin`` to ``/dev/null`` (module docstring)."""
    requests = os.fdopen(os.dup(0), "rb")            # os.dup: not inherited by the code's own subprocesses
    answers = os.fdopen(os.dup(1), "wb")
    sys.stdout.flush()
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    sys.stdout = sys.stderr
    sys.stdin = open(os.devnull)                     # noqa: SIM115 - the process's stdin, for its whole life
    return requests, answers


def main(argv: list[str]) -> int:
    check = argv[:1] == ["--check"]
    spec = argv[-1] if argv else ""
    if len(argv) != 1 + check or ":" not in spec:
        print("usage: python -m candor_eval.lots.python_worker [--check] pkg.mod:fn", file=sys.stderr)
        return 2
    requests, answers = protocol_streams()
    home = os.getcwd()
    try:
        fn = entry_point(spec)
    except NotCallable as err:
        if check:
            answers.write(error_line(str(err)))
            answers.flush()
            return 0
        message = str(err)
        fn = _failing(message)
    finally:
        os.chdir(home)
    if check:
        answers.write(_line({"answer": "ok"}))
        answers.flush()
        return 0
    serve(fn, requests, answers, home=home)
    return 0


def _failing(message: str) -> Callable[..., Any]:
    """A stand-in for an entry point that no longer imports (its code changed after the stage's check): every
    call fails with the import's error."""
    def fn(images: Any, context: Any) -> Any:
        raise NotCallable(message)
    return fn


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
