"""The ``python`` provider: the production analysis entry point itself answers, so no prompt is copied.

``identify.providers: {my-analyzer: {python: "mypackage.analysis:analyze"}}`` names a callable
in the user's code. **Found** by importing ``mypackage.analysis`` with the *import roots* of the
working directory first on the import path: the project's folder (where DVC runs the stage, the
folder of its ``dvc.yaml``), then each of its parents up to the repository top (the Git work tree's
top folder; :mod:`candor_eval.common.repository`). So a package at the repository's top imports by
its name from a project in ``eval/``, and so does an installed package. Import errors are bad
configuration (exit 2, naming the key and the exception), never a traceback.

**Called** once per (lot or case, run), in the live loop (:mod:`candor_eval.lots.live`), as
``analyze(images, context)``:

* ``images``: a list of ``(bytes, mime_type)`` pairs, the lot's photos in order (or the case's
  image); each checked first like every live image (:func:`candor_eval.common.images.encode_data_url`:
  JPEG/PNG/WebP/GIF by their bytes, at most 5 MB, decodable).
* ``context``: a dict with ``id``, ``kind`` (``"lot"`` or ``"case"``), ``run`` (1-based),
  ``category_library`` (the case's ``categoryLibrary``, or the curated default of
  ``<lots>/vocabulary/category-library.yaml``: a dict of
  ``functional``, ``specific``, ``itemType``, each a list or None), ``default_library`` (True
  when it is the default) and ``timeout_s`` (the deadline, to pass on to the code's own client).

**Returns** the model-facing result: a dict (recorded as its JSON text, keys in the order
given) or a string (recorded as is). Anything else, or a dict that is not JSON (a ``NaN``, a
``datetime``), is a failed run.

**Failures**: an exception is recorded as ``<ExceptionType>: <message>`` (never a
traceback), the other runs go on, the stage exits 1. It is **transient**, and retried up to
``retries`` times with the backoff of the remote providers, when the exception's ``transient``
attribute is ``True`` (``err.transient = True`` before ``raise``, or a class attribute
``transient = True``); every other exception fails the run at once. **Deadline**: a call
that has not returned after ``timeout_s`` fails as ``timed out after <timeout_s> s``
(transient). A Python call cannot be stopped from outside: the stage stops waiting and the
call's thread is abandoned (it ends with the stage), which is why ``context["timeout_s"]`` is
given to the code to pass to its client. The value of the variable named by
``identify.api_key_env``, when set, is redacted from answers and errors (a production client
echoing its key); other secrets the code holds are its own to keep out of its messages.
"""
from __future__ import annotations

import importlib
import json
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from candor_eval.common.errors import fail
from candor_eval.common.images import encode_data_url
from candor_eval.common.repository import import_roots
from candor_eval.common.tables import read_bytes
from candor_eval.lots.client import CallError, Policy, Retryable, with_retries
from candor_eval.lots.live import Reply, ReplyError
from candor_eval.lots.params import PythonProvider
from candor_eval.lots.redact import Redactor

Analyze = Callable[[list[tuple[bytes, str]], dict[str, Any]], Any]
MESSAGE_EXCERPT = 2000


def on_import_path() -> None:
    """Put the import roots of the working directory (the project's folder, then its parents up to the
    repository top: :func:`candor_eval.common.repository.import_roots`) first on the import path, in that
    order, each once."""
    roots = [str(p) for p in import_roots(Path.cwd())]
    sys.path[:] = roots + [p for p in sys.path if p not in roots]


def load_entry_point(spec: PythonProvider, *, where: str) -> Analyze:
    """Import ``spec``'s module (:func:`on_import_path`) and return its callable; InputError naming ``where``."""
    on_import_path()
    try:
        module = importlib.import_module(spec.module)
    except Exception as err:  # any failure of the user's import is a configuration error
        raise fail(where, f"cannot import {spec.module}: {type(err).__name__}: {err}",
                   expected="a module under the project's folder or the repository's top folder, or an installed "
                            "package",
                   hint="install the code's own dependencies; a package elsewhere: pip install -e it") from None
    fn = getattr(module, spec.function, None)
    if not callable(fn):
        raise fail(where, f"{spec.module} has no callable {spec.function}", expected="def analyze(images, context)",
                   got=type(fn).__name__)
    return fn


def result_text(result: Any) -> str:
    """The recorded text of a callable's result (module docstring); ValueError when it is neither."""
    if isinstance(result, str):
        return result
    if isinstance(result, dict):
        try:
            return json.dumps(result, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError) as err:
            raise ValueError(f"returned a dict that is not JSON ({err})") from None
    raise ValueError(f"returned {type(result).__name__}, expected a dict or a str")


def describe(err: BaseException) -> str:
    """``<ExceptionType>: <message>`` (the message cut to :data:`MESSAGE_EXCERPT` characters)."""
    text = str(err)
    text = text if len(text) <= MESSAGE_EXCERPT else text[:MESSAGE_EXCERPT] + " ..."
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def call_with_deadline(fn: Callable[[], Any], timeout_s: float) -> Any:
    """``fn()`` on a daemon thread; its result, its exception re-raised, or :class:`TimeoutError` after
    ``timeout_s`` (the thread is left to finish on its own)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = fn()
        except BaseException as err:  # BaseException too: handed to the caller's thread
            box["error"] = err

    thread = threading.Thread(target=run, name="production-call", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if thread.is_alive():
        raise TimeoutError
    if "error" in box:
        raise box["error"]
    return box["result"]


@dataclass(frozen=True)
class PythonResponder:
    """A production callable as a live responder (module docstring); ``name`` is its ``pkg.mod:fn``."""

    fn: Analyze = field(repr=False)
    name: str
    policy: Policy = Policy()
    secrets: Sequence[str] = field(default=(), repr=False)
    sleep: Callable[[float], None] = time.sleep

    provider = "python"
    endpoint = None                    # what the code calls is its own business

    @property
    def model(self) -> str:
        return self.name

    def load(self, images: Sequence[Path]) -> list[tuple[bytes, str]]:
        out = []
        for p in images:
            data = read_bytes(p, expected="an image")
            url = encode_data_url(data, where=p.as_posix())
            out.append((data, url[len("data:"):url.index(";")]))
        return out

    def _attempt(self, images: list[tuple[bytes, str]], context: Mapping[str, Any]) -> str:
        try:
            result = call_with_deadline(
                lambda: self.fn(list(images), dict(context) | {"timeout_s": self.policy.timeout_s}),
                self.policy.timeout_s)
        except TimeoutError:
            raise Retryable(f"timed out after {self.policy.timeout_s:g} s") from None
        except Exception as err:  # the production code's failure, recorded verbatim
            if getattr(err, "transient", False) is True:
                raise Retryable(describe(err)) from None
            raise CallError(describe(err)) from None
        try:
            return result_text(result)
        except ValueError as err:
            raise CallError(str(err)) from None

    def reply(self, *, prompt: str, images: list[tuple[bytes, str]], context: Mapping[str, Any]) -> Reply:
        del prompt                         # the production code builds its own
        redact = Redactor.of(self.secrets)
        try:
            text, attempts = with_retries(lambda: self._attempt(images, context), policy=self.policy, redact=redact,
                                          sleep=self.sleep)
        except CallError as err:
            raise ReplyError(str(err)) from None
        return Reply(text=redact(text), attempts=attempts)
