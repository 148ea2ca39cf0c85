"""The ``python`` provider: the production analysis entry point itself answers, so no prompt is copied.

``identify.providers: {my-analyzer: {python: "mypackage.analysis:analyze"}}`` names a callable
in the user's code. **Found** by importing ``mypackage.analysis`` with the *import roots* of the
working directory first on the import path: the project's folder (where DVC runs the stage, the
folder of its ``dvc.yaml``), then each of its parents up to the repository top (the Git work tree's
top folder; :mod:`candor_eval.common.repository`). So a package at the repository's top imports by
its name from a project in ``eval/``, and so does an installed package.

**Run in a worker process, never in the stage.** The stage does not import the user's code: a
short-lived worker (:mod:`candor_eval.lots.python_worker` ``--check``) imports it first, with at most
:data:`IMPORT_TIMEOUT_S` for the import; an import that fails, raises ``SystemExit``, ends the process
or does not finish is bad configuration (exit 2, naming the key and what happened; never a
traceback). Then the live run starts one worker per worker thread (``identify.concurrency``), with
candor's own environment, kept alive for the whole run (module globals and caches persist from call
to call), and asks it through the ``exec`` provider's protocol and machinery
(:class:`candor_eval.lots.child.ExecResponder`): one JSON request line, one answer line. So
``sys.exit``, ``os._exit``, a crash, a signal, ``os.chdir``, a ``print`` or an unbounded result
happen in the worker: each is one call's recorded failure, the other runs go on, and the stage's
working directory, console and outputs are never the code's to change.

**Called** once per (lot or case, run), in the live loop (:mod:`candor_eval.lots.live`), as
``analyze(images, context)``:

* ``images``: a list of ``(bytes, mime_type)`` pairs, the lot's photos in order (or the case's
  image); each checked first like every live image (:func:`candor_eval.common.images.data_url`:
  JPEG/PNG/WebP/GIF by their bytes, at most 5 MB, decodable).
* ``context``: a dict with ``id``, ``kind`` (``"lot"`` or ``"case"``), ``run`` (1-based),
  ``category_library`` (the case's ``categoryLibrary``, or the curated default of
  ``<lots>/vocabulary/category-library.yaml``: a dict of
  ``functional``, ``specific``, ``itemType``, each a list or None), ``default_library`` (True
  when it is the default) and ``timeout_s`` (the deadline, to pass on to the code's own client).

**Returns** the model-facing result: a dict (recorded as its JSON text, keys in the order
given) or a string (recorded as is). Anything else, a dict that is not JSON (a ``NaN``, a
``datetime``) or nested too deep to serialise, or an answer over 16 MiB (the http body's cap), is a
failed run.

**Failures**: an exception (``BaseException``: ``SystemExit`` and ``KeyboardInterrupt`` too) is
recorded as ``<ExceptionType>: <message>`` (never a traceback), the other runs go on, the stage
exits 1. It is **transient**, and retried up to ``retries`` times with the backoff of the remote
providers, when the exception's ``transient`` attribute is ``True`` (``err.transient = True``
before ``raise``, or a class attribute ``transient = True``); every other exception fails the run
at once. The worker ending before it answers (``os._exit``, a crash) fails the call at once and a
new worker answers the next. **Deadline**: a call that has not returned after ``timeout_s`` kills
the worker and fails as ``timed out after <timeout_s> s`` (transient: retried by a new worker); a
worker's first call is given, besides, twice the time the up-front import took plus one second
(its own import). **Output**: what the code prints or logs goes to the worker's stderr, which is
drained and never reaches candor's console; its last 1000 characters end a failed call's message.
The value of the variable named by ``identify.api_key_env``, when set, is redacted from answers,
errors and that stderr (a production client echoing its key); other secrets the code holds are
its own to keep out of its messages.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable, Mapping, Sequence

from candor_eval.common.errors import fail
from candor_eval.lots.child import Child, ExecResponder, Expired, Gone, answer_of
from candor_eval.lots.client import CallError, Policy, Retryable
from candor_eval.lots.params import PythonProvider
from candor_eval.lots.python_worker import on_import_path as on_import_path

WORKER = "candor_eval.lots.python_worker"
IMPORT_TIMEOUT_S = 120.0
EXPECTED = "def analyze(images, context) in a module under the project's folder or the repository's top folder, " \
           "or in an installed package"


def worker_argv(spec: PythonProvider, *, check: bool = False) -> list[str]:
    """The worker's command: this interpreter running :mod:`candor_eval.lots.python_worker` on ``spec``."""
    return [sys.executable, "-m", WORKER, *(["--check"] if check else []), spec.python]


def check_entry_point(spec: PythonProvider, *, env: Mapping[str, str], where: str,
                      timeout_s: float = IMPORT_TIMEOUT_S) -> float:
    """Import ``spec``'s module in a short-lived worker (module docstring) and return the seconds it took;
    InputError naming ``where`` when it cannot be imported or called, ends the worker or takes longer than
    ``timeout_s``."""
    hint = "install the code's own dependencies; a package elsewhere: pip install -e it"
    start = time.monotonic()
    try:
        child = Child(worker_argv(spec, check=True), env)
    except OSError as err:
        raise fail(where, f"could not start the worker ({type(err).__name__}: {err})",
                   expected=f"{sys.executable} able to run -m {WORKER}") from None
    try:
        line = child.ask(b"", timeout_s)
    except Expired:
        raise fail(where, f"importing {spec.module} did not finish within {timeout_s:g} s{_tail(child)}",
                   expected=EXPECTED, hint="an import that waits on the network or a lock: move it into the call"
                   ) from None
    except Gone as err:
        raise fail(where, f"cannot import {spec.module}: {err}{_tail(child)}", expected=EXPECTED, hint=hint) from None
    finally:
        child.kill()
    took = time.monotonic() - start
    try:
        answer_of(line)
    except (CallError, Retryable, ValueError) as err:
        raise fail(where, str(err), expected=EXPECTED, hint=hint) from None
    return took


def _tail(child: Child) -> str:
    tail = child.stderr_tail()
    return f"; stderr: {tail}" if tail else ""


class PythonResponder(ExecResponder):
    """A production callable, run by its worker processes, as a live responder (module docstring); its
    ``model`` is its ``pkg.mod:fn``."""

    provider = "python"

    def __init__(self, spec: PythonProvider, *, env: Mapping[str, str], secrets: Sequence[str] = (),
                 policy: Policy | None = None, sleep: Callable[[float], None] = time.sleep, startup_s: float = 0.0):
        super().__init__(worker_argv(spec), env=env, secrets=secrets, policy=policy, sleep=sleep, model=spec.python,
                         startup_s=startup_s)


def python_responder(spec: PythonProvider, *, env: Mapping[str, str], policy: Policy, secrets: Sequence[str],
                     where: str, import_timeout_s: float = IMPORT_TIMEOUT_S) -> PythonResponder:
    """The responder of a python provider, once its entry point imported in a worker (:func:`check_entry_point`;
    InputError naming ``where`` otherwise), its workers given twice that import's time, plus a second, for their
    first call."""
    took = check_entry_point(spec, env=env, where=where, timeout_s=import_timeout_s)
    return PythonResponder(spec, env=env, secrets=secrets, policy=policy, startup_s=2 * took + 1.0)
