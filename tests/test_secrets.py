"""Secrets and unsafe loading: the API key never leaks; YAML only safe_load; no pickle; models hash-checked first.

- Live identify runs (real processes, loopback provider) with a sentinel key, including a
  provider that echoes the key back in its error bodies: the key appears in no file of
  the workspace (recordings, answers, metrics, plots, logs), in no stdout or stderr, and
  in no exception raised by the client.
- Static: every Python file under candor/, stages/ and tools/ is parsed; no pickle-family import,
  no ``yaml.load``/``unsafe_load``/``full_load`` (``yaml.load`` only with ``Loader=`` a class of the
  same module derived from ``yaml.SafeLoader``), no ``allow_pickle=True``, no
  ``eval``/``exec``. The checker is run on a bad snippet too, so it can fail.
- ONNX: with a wrong card SHA-256 or changed model bytes, ``onnxruntime.InferenceSession``
  is never called; when it is called, it gets exactly the bytes that were hashed.
"""
from __future__ import annotations

import ast
import hashlib
import json
import traceback
from pathlib import Path

import pytest
import yaml

from candor_eval.common.errors import run_main
from candor_eval.lots.chat import ChatConfig, ChatError, complete
from candor_eval.lots.recording import load_recording
from tests.bad_inputs import workspace as W
from tests.chat_server import chat_server
from tests.conftest import CANDOR

KEY = "sk-SECRETS-SENTINEL-3f9a61c2e8"
ROOT = Path(__file__).resolve().parent.parent


def leaks(ws: Path, *texts: str) -> list[str]:
    """Where the key appears: workspace files (any bytes) and the given texts."""
    found = [p.relative_to(ws).as_posix() for p in sorted(ws.rglob("*"))
             if p.is_file() and KEY.encode() in p.read_bytes()]
    return found + [f"text #{i}" for i, t in enumerate(texts) if KEY in t]


def echo(code: int) -> tuple:
    """A provider error body that quotes the key back (as some providers do on 401)."""
    body = json.dumps({"error": {"message": f"Incorrect API key provided: {KEY}. Check it.",
                                 "type": "invalid_request_error"}}).encode()
    return ("body", code, body)


def test_key_never_leaks_from_live_runs_scoring_or_provider_echoes(tmp_path: Path):
    ws = W.copy_base(tmp_path / "ws")
    texts: list[str] = []
    # T001/1 ok, T001/2 a 401 quoting the key (not retried), T002/1 a 500 quoting it twice, the rest ok
    script = [("ok", W.ANSWER), echo(401), echo(500), echo(500), ("ok", W.ANSWER)]
    with chat_server(script) as srv:
        W.set_params(ws, identify={"mode": "live", "base_url": srv.url, "retries": 1, "backoff_s": 0,
                                   "pause_s": 0})
        res = W.run_stage(ws, "identify", extra_env={W.KEY_ENV: KEY})
    texts += [res.stdout, res.stderr]
    assert res.code == 1, res.stderr
    assert all(r["headers"]["Authorization"] == f"Bearer {KEY}" for r in srv.requests)   # it was really sent
    rec = (ws / "build/live/p.jsonl").read_text()
    assert rec.count("Incorrect API key provided: ***") == 2          # the error is kept, the key scrubbed
    for stage in ("score-lots", "value"):
        r = W.run_stage(ws, stage, extra_env={W.KEY_ENV: KEY})
        assert r.code == 0, r.stderr
        texts += [r.stdout, r.stderr]
    assert leaks(ws, *texts) == []


QUERY_SECRET = "qs-SECRETS-SENTINEL-b71e04d9"
USER_SECRET = "ui-SECRETS-SENTINEL-5a0c33"
PASSWORD_SECRET = "pw-SECRETS-SENTINEL-9e2f71"
SENTINELS = (KEY, QUERY_SECRET, USER_SECRET, PASSWORD_SECRET)


def sentinel_leaks(roots: list[Path], texts: list[str]) -> list[str]:
    """Every (place, sentinel) where a sentinel appears: any file under ``roots`` (any bytes; but ``params.yaml``,
    where the user wrote the base URL) and the texts."""
    files = [p for root in roots for p in sorted(root.rglob("*")) if p.is_file() and p.name != "params.yaml"]
    return ([f"{p}: {s}" for p in files for s in SENTINELS if s.encode() in p.read_bytes()]
            + [f"text #{i}: {s}" for i, t in enumerate(texts) for s in SENTINELS if s in t])


def test_sentinels_in_every_secret_place_reach_no_file_no_output_and_no_error(tmp_path: Path):
    """Sentinels in the key, the base URL's query, its user-info, credential-named query keys of the base URL and
    of a route, and a model that echoes key and query back; then every file of the workspace, the by-hand report
    and everything printed are searched."""
    ws = W.copy_base(tmp_path / "ws")
    out = tmp_path / "outside"
    texts: list[str] = []
    echo_answer = json.dumps(json.loads(W.ANSWER) | {"imageNotes": f"key {KEY} query {QUERY_SECRET}"})
    echo_error = json.dumps({"error": {"message": f"bad key {KEY} for token={QUERY_SECRET}"}}).encode()
    with chat_server([("ok", echo_answer), ("body", 401, echo_error), ("ok", echo_answer)]) as srv:
        url = f"{srv.url}?api-version=2024-06-01&deployment={QUERY_SECRET}"
        W.set_params(ws, identify={"mode": "live", "base_url": url, "retries": 0, "backoff_s": 0, "pause_s": 0,
                                   "concurrency": 2})
        res = W.run_stage(ws, "identify", extra_env={W.KEY_ENV: KEY})
        texts += [res.stdout, res.stderr]
        assert res.code == 1, res.stderr                  # the 401 is recorded as a failed run
        hand = W.run_stage(ws, "identify", [*W.STAGES["identify"][1:], "--case", "T*", "--label", "x",
                                            "--record", str(out / "x.jsonl"), "--out", str(out / "x.json"),
                                            "--mode", "live"], extra_env={W.KEY_ENV: KEY})
        texts += [hand.stdout, hand.stderr]
    assert hand.code in (0, 1), hand.stderr
    # the sentinels were live: the key was sent, the query too, and the model echoed both
    assert {r["headers"]["Authorization"] for r in srv.requests} == {f"Bearer {KEY}"}
    assert all(r["path"].endswith(f"deployment={QUERY_SECRET}") for r in srv.requests)
    rec = (ws / "build/live/p.jsonl").read_text()
    assert "key *** query ***" in rec and "bad key *** for token=***" in rec
    assert "key *** query ***" in (out / "x.json").read_text()
    for stage in ("score-lots", "value"):
        r = W.run_stage(ws, stage, extra_env={W.KEY_ENV: KEY})
        assert r.code == 0, r.stderr
        texts += [r.stdout, r.stderr]

    # user-info in base_url, and a key with a trailing CR or LF: exit 2 naming the key or the variable
    for identify, key, needle in [
        ({"base_url": f"http://{USER_SECRET}:{PASSWORD_SECRET}@127.0.0.1:9/v1?token={QUERY_SECRET}"}, KEY,
         "base_url user-info"),
        ({"base_url": f"http://{USER_SECRET}@127.0.0.1:9/v1"}, KEY, "base_url user-info"),
        ({"base_url": f"127.0.0.1:9/v1?token={QUERY_SECRET}"}, KEY, "base_url needs the scheme"),
        ({"base_url": f"http://127.0.0.1:9/v1?token={QUERY_SECRET}"}, KEY,
         "put the credential in the variable named by identify.api_key_env"),
        ({"base_url": f"http://127.0.0.1:9/v1?api-version=1&X-Api-Key={QUERY_SECRET}"}, KEY, "(X-Api-Key)"),
        ({"providers": {"p": {"http": f"http://127.0.0.1:9/route?access_token={QUERY_SECRET}"}},
          "sources": {"p": "data/lots/lots.csv"}}, KEY, "put the credential in headers"),
        ({}, KEY + "\r", f"API key variable {W.KEY_ENV} holds whitespace, a control character"),
        ({}, KEY + "\r\n", f"API key variable {W.KEY_ENV} holds whitespace, a control character"),
    ]:
        bad = W.copy_base(tmp_path / f"bad{len(texts)}")
        W.set_params(bad, identify={"mode": "live", **identify})
        before = W.snapshot(bad)
        r = W.run_stage(bad, "identify", extra_env={W.KEY_ENV: key})
        assert r.code == 2 and needle in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert W.snapshot(bad) == before                      # nothing written
        texts += [r.stdout, r.stderr]

    assert sentinel_leaks([tmp_path], texts) == []


def test_key_not_in_client_exceptions_or_their_tracebacks():
    for script in ([echo(401)], [echo(503)], [("malformed", KEY.encode())]):
        with chat_server(script) as srv:
            cfg = ChatConfig(base_url=srv.url, model="m", timeout_s=2, retries=1, backoff_s=0)
            with pytest.raises(ChatError) as exc:
                complete(cfg, KEY, prompt="p", image_urls=[], sleep=lambda s: None)
        text = "".join(traceback.format_exception(exc.value))
        assert KEY not in text and KEY not in repr(exc.value)
        # no chained exception keeps the unscrubbed provider text (error reporters walk __context__)
        assert exc.value.__cause__ is None and exc.value.__context__ is None


def test_key_in_the_environment_is_not_in_dvc_facing_files(tmp_path: Path):
    """params.yaml names the variable, never the key; a replay run with the key set writes nothing of it."""
    ws = W.copy_base(tmp_path / "ws")
    res = W.run_stage(ws, "identify", extra_env={W.KEY_ENV: KEY})
    assert res.code == 0
    assert yaml.safe_load((ws / "params.yaml").read_text())["identify"]["api_key_env"] == W.KEY_ENV
    assert leaks(ws, res.stdout, res.stderr) == []


# ---------------------------------------------------------------- static: unsafe loading

PICKLE_MODULES = {"pickle", "cPickle", "_pickle", "dill", "shelve", "joblib", "marshal", "cloudpickle"}
UNSAFE_YAML = {"load", "unsafe_load", "full_load", "load_all", "unsafe_load_all", "full_load_all"}


def safe_loaders(tree: ast.AST) -> set[str]:
    """Classes of the module that subclass ``yaml.SafeLoader`` or ``yaml.CSafeLoader`` (libyaml's parser, the
    same safe constructor), directly or through another such class."""
    found: set[str] = set()
    classes = [n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    for _ in classes:
        for c in classes:
            if any(ast.unparse(b) in {"yaml.SafeLoader", "yaml.CSafeLoader", *found} for b in c.bases):
                found.add(c.name)
    return found


def is_safe_load(call: ast.Call, loaders: set[str]) -> bool:
    """``yaml.load(..., Loader=<a SafeLoader subclass of this module>)``."""
    return any(kw.arg == "Loader" and isinstance(kw.value, ast.Name) and kw.value.id in loaders
               for kw in call.keywords)


def unsafe_calls(source: str, where: str) -> list[str]:
    """Every unsafe-loading construct in ``source`` (see the module docstring)."""
    out = []
    tree = ast.parse(source)
    loaders = safe_loaders(tree)
    for node in ast.walk(tree):
        at = f"{where}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Import):
            out += [f"{at}: import {a.name}" for a in node.names if a.name.split(".")[0] in PICKLE_MODULES]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in PICKLE_MODULES:
            out.append(f"{at}: from {node.module} import")
        elif isinstance(node, ast.ImportFrom) and node.module == "yaml":
            out += [f"{at}: from yaml import {a.name}" for a in node.names if a.name in UNSAFE_YAML]
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "yaml" \
                    and f.attr in UNSAFE_YAML and not is_safe_load(node, loaders):
                out.append(f"{at}: yaml.{f.attr}")
            if isinstance(f, ast.Attribute) and f.attr in ("read_pickle", "to_pickle"):
                out.append(f"{at}: .{f.attr}")
            if isinstance(f, ast.Name) and f.id in ("eval", "exec"):
                out.append(f"{at}: {f.id}()")
            for kw in node.keywords:
                if kw.arg == "allow_pickle" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False):
                    out.append(f"{at}: allow_pickle={ast.unparse(kw.value)}")
    return out


def test_checker_flags_every_unsafe_construct():
    bad = ("import pickle\nfrom yaml import load\nimport yaml\nyaml.load(s)\nyaml.unsafe_load(s)\n"
           "np.load(f, allow_pickle=True)\nnp.load(f, allow_pickle=flag)\npd.read_pickle(p)\neval('1')\n"
           "yaml.load(s, Loader=yaml.Loader)\nclass Full(yaml.FullLoader): pass\nyaml.load(s, Loader=Full)\n"
           "import numpy as np\nnp.load(f, allow_pickle=False)\nyaml.safe_load(s)\n"
           "class Safe(yaml.SafeLoader): pass\nclass Safer(Safe): pass\nyaml.load(s, Loader=Safer)\n"
           "class Fast(Mixin, yaml.CSafeLoader): pass\nyaml.load(s, Loader=Fast)\nclass Bad(yaml.CLoader): pass\n"
           "yaml.load(s, Loader=Bad)\n")
    found = unsafe_calls(bad, "x.py")
    assert [f.split(": ", 1)[1] for f in found] == [
        "import pickle", "from yaml import load", "yaml.load", "yaml.unsafe_load", "allow_pickle=True",
        "allow_pickle=flag", ".read_pickle", "eval()", "yaml.load", "yaml.load", "yaml.load"]


@pytest.mark.parametrize("folder", ["candor_eval", "tools"])
def test_no_unsafe_loading_in_the_code(folder: str):
    files = sorted((ROOT / folder).rglob("*.py"))
    assert files
    found = [x for p in files for x in unsafe_calls(p.read_text(encoding="utf-8"), p.relative_to(ROOT).as_posix())]
    assert found == []


def test_every_yaml_read_in_the_code_goes_through_safe_load():
    uses = []
    for p in sorted(p for p in (ROOT / "candor_eval").rglob("*.py")):
        tree = ast.parse(p.read_text(encoding="utf-8"))
        loaders = safe_loaders(tree)
        uses += [(p.name, "safe_load" if is_safe_load(n, loaders) else n.func.attr) for n in ast.walk(tree)
                 if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                 and isinstance(n.func.value, ast.Name) and n.func.value.id == "yaml"]
    assert {attr for _, attr in uses} <= {"safe_load", "safe_dump", "YAMLError"}, uses
    assert ("params.py", "safe_load") in uses


# ---------------------------------------------------------------- ONNX: hash before load


class Spy:
    """Stands in for onnxruntime.InferenceSession: records what it was given, then loads it for real."""

    def __init__(self, real):
        self.real, self.calls = real, []

    def __call__(self, model, *args, **kw):
        self.calls.append(model)
        return self.real(model, *args, **kw)


@pytest.fixture
def detect_ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import onnxruntime

    ws = W.copy_base(tmp_path / "ws")
    monkeypatch.chdir(ws)
    spy = Spy(onnxruntime.InferenceSession)
    monkeypatch.setattr(onnxruntime, "InferenceSession", spy)
    return ws, spy


def run_detect() -> int:
    from candor_eval.stages import detect

    return run_main(detect.main, W.STAGES["detect"][1:])


def test_model_with_a_wrong_card_digest_is_never_loaded(detect_ws, capsys):
    ws, spy = detect_ws
    wrong = "ab" * 32
    card = yaml.safe_load((ws / "models/tiny.yaml").read_text())
    (ws / "models/tiny.yaml").write_text(yaml.safe_dump(card | {"sha256": wrong}))
    record = json.loads((ws / "build/verified/model-tiny.json").read_text())    # even past stale records
    (ws / "build/verified/model-tiny.json").write_text(json.dumps(record | {"sha256": wrong}))
    set_record = ws / "build/verified/detection-detector.json"
    doc = json.loads(set_record.read_text())
    doc["models"]["tiny"] |= {"sha256": wrong,
                              "card_sha256": hashlib.sha256((ws / "models/tiny.yaml").read_bytes()).hexdigest()}
    set_record.write_text(json.dumps(doc))
    assert run_detect() == 2
    err = capsys.readouterr().err
    assert "SHA-256 mismatch; refusing to load the model" in err and wrong in err
    assert spy.calls == []


def test_changed_model_bytes_are_never_loaded(detect_ws, capsys):
    ws, spy = detect_ws
    with open(ws / "models/tiny.onnx", "ab") as fh:
        fh.write(b"\0")
    assert run_detect() == 2
    assert "models/tiny.onnx" in capsys.readouterr().err and spy.calls == []


def test_the_loaded_bytes_are_the_hashed_bytes(detect_ws):
    ws, spy = detect_ws
    assert run_detect() == 0
    card = yaml.safe_load((ws / "models/tiny.yaml").read_text())
    assert len(spy.calls) == 1 and isinstance(spy.calls[0], bytes)
    assert hashlib.sha256(spy.calls[0]).hexdigest() == card["sha256"]


ROUTE_SECRET = "rt-SECRETS-SENTINEL-d40c1e"


@pytest.mark.slow
def test_no_sentinel_reaches_dvc_lock_the_run_cache_outputs_or_the_console(tmp_path: Path):
    """Real DVC on a copy of the pipeline: a base URL with a query secret and a route whose header value is a
    secret (from the environment) are used by a live run and two ``dvc repro`` runs; ``dvc.lock``,
    ``.dvc/cache/runs``, every output and all console text are searched. A credential-named query key makes
    ``dvc repro`` fail with the message, and writes nothing of it either."""
    from tests.support_repo import add_candidates, repo_copy, sh

    repo = repo_copy(tmp_path / "repo")
    env = {W.KEY_ENV: KEY, "WEBAPP_AUTH": f"Bearer {ROUTE_SECRET}"}
    echo = json.dumps({"type": "item", "imageNotes": f"header was Bearer {ROUTE_SECRET}"}).encode()
    texts: list[str] = []
    with chat_server([("reply", 200, echo, {"X-Analyzer-Version": "app 1"})]) as srv:
        add_candidates(repo, {"webapp": {"http": srv.url + "/api/analyze-image?tenant=demo",
                                         "headers": {"Authorization": "WEBAPP_AUTH"}}},
                       {"webapp": "examples"}, pause_s=0, api_key_env=W.KEY_ENV,
                       base_url=f"http://127.0.0.1:9/v1?api-version=2024-06-01&deployment={QUERY_SECRET}")
        live = sh([*CANDOR, "identify", "--candidate", "webapp", "--mode", "live"], cwd=repo, env=env)
        texts += [live.stdout, live.stderr]
    assert {r["headers"]["Authorization"] for r in srv.requests} == {f"Bearer {ROUTE_SECRET}"}   # it was sent
    (repo / "data/lots/recordings/webapp.jsonl").write_bytes((repo / "build/live/webapp.jsonl").read_bytes())
    for _ in range(2):
        r = sh(["dvc", "repro", "-s", "identify@prompt-a", "identify@webapp"], cwd=repo, env=env)
        texts += [r.stdout, r.stderr]
    lock = (repo / "dvc.lock").read_text()
    assert "identify.base_url" not in lock and "base_url" not in lock and "127.0.0.1:9" not in lock
    # every output is persist: true, so DVC writes no run cache (where tracked params were copied)
    assert not [p for p in (repo / ".dvc/cache/runs").rglob("*") if p.is_file()]

    doc = yaml.safe_load((repo / "params.yaml").read_text())
    doc["identify"]["base_url"] = f"http://127.0.0.1:9/v1?api_key={QUERY_SECRET}"
    (repo / "params.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    bad = sh(["dvc", "repro", "-s", "identify@prompt-a", "--force"], cwd=repo, env=env, check=False)
    texts += [bad.stdout, bad.stderr]
    assert bad.returncode != 0 and "named like a credential (api_key)" in bad.stdout + bad.stderr
    assert sentinel_leaks([repo], texts) == [] and ROUTE_SECRET not in "".join(texts)
    assert not [p for p in repo.rglob("*") if p.is_file() and ROUTE_SECRET.encode() in p.read_bytes()]


def test_source_url_user_info_reaches_no_message_log_or_output(tmp_path: Path):
    """Sentinel user-info in a manifest's and a model card's ``source`` (both fetched, both failing; then a
    ``file://`` URL whose error fsspec words itself): the fetch messages and every written file hold neither
    the user nor the password (only the two files where the user wrote them do); ``fetch manifest``
    refuses to write a ``--source-prefix`` that carries them."""
    from candor_eval.common.manifest import MANIFEST_NAME
    ws = W.copy_base(tmp_path / "ws")
    secret = f"{USER_SECRET}:{PASSWORD_SECRET}"
    texts: list[str] = []
    manifest = ws / "data/detector" / MANIFEST_NAME
    rows = manifest.read_text().splitlines()
    a = rows[3].split(",")
    body = sorted([*(r + "," for r in rows[1:]), f"images/z.png,{a[1]},{a[2]},http://{secret}@127.0.0.1:9/z.png"])
    manifest.write_text("path,sha256,bytes,source\n" + "\n".join(body) + "\n")
    card = yaml.safe_load((ws / "models/tiny.yaml").read_text())
    (ws / "models/tiny.yaml").write_text(yaml.safe_dump(card | {"onnx": "gone.onnx",
                                                                "source": f"http://{secret}@127.0.0.1:9/m.onnx"}))
    res = W.run_stage(ws, "fetch")
    texts += [res.stdout, res.stderr]
    assert res.code == 2
    assert "http://***@127.0.0.1:9/z.png" in res.stderr and "http://***@127.0.0.1:9/m.onnx" in res.stderr
    # user-info in a file:// URL: fsspec's own error quotes the URL, redacted there too
    (ws / "models/tiny.yaml").write_text(yaml.safe_dump(card))
    mirror = tmp_path / "mirror.png"
    mirror.write_bytes((ws / "data/detector/images/a.png").read_bytes())
    manifest.write_text(manifest.read_text().replace(f"http://{secret}@127.0.0.1:9/z.png", f"file://{secret}@{mirror}"))
    res = W.run_stage(ws, "fetch")
    texts += [res.stdout, res.stderr]
    assert res.code == 2 and "No such file or directory" in res.stderr and res.stderr.count("***@") == 2
    prefix = W.run_stage(ws, "fetch", ["manifest", "data/detector", "--source-prefix", f"https://{secret}@h.example/d"])
    texts += [prefix.stdout, prefix.stderr]
    assert prefix.code == 2 and "user-info" in prefix.stderr
    written = [p for p in ws.rglob("*") if p.is_file() and p not in (manifest, ws / "models/tiny.yaml")]
    assert sentinel_leaks([], texts) == [] and [p for p in written if USER_SECRET.encode() in p.read_bytes()
                                                 or PASSWORD_SECRET.encode() in p.read_bytes()] == []


# ---------------------------------------------------------------- secrets an answer escapes

# Secrets holding a quote, a slash, a backslash, <, & (and, decoded from a query, non-ASCII); each ends with an
# alphanumeric tail that every encoding leaves as it is, so a tail found anywhere is a leak of some form.
ROUTE_TOKEN = 'rt-"q/b\\s<&>-TAILd40c1e'
TENANT = "tn-%3C%26%C3%A9%2F-TAILe19f07"            # a route URL's query value, percent-encoded
ESCAPED_KEY = 'sk-"k/y\\s<&>-TAIL3f9a61'
DEPLOYMENT = "qs-%C3%A9t%C3%A9%2F%22-TAILb71e04"   # a base URL's query value, percent-encoded
TAILS = ("TAILd40c1e", "TAILe19f07", "TAIL3f9a61", "TAILb71e04")


def tail_leaks(roots: list[Path], texts: list[str], *, skip: tuple[str, ...] = ("params.yaml",)) -> list[str]:
    """Every (place, tail) where a secret's tail appears: any file under ``roots`` but ``skip`` (where the user
    wrote the secret), and the texts."""
    files = [p for root in roots for p in sorted(root.rglob("*")) if p.is_file() and p.name not in skip]
    return ([f"{p}: {tail}" for p in files for tail in TAILS if tail.encode() in p.read_bytes()]
            + [f"text #{i}: {tail}" for i, text in enumerate(texts) for tail in TAILS if tail in text])


def php_json(doc: object) -> bytes:
    """PHP's json_encode: ``/`` written ``\\/``, non-ASCII as ``\\uXXXX``."""
    return json.dumps(doc).replace("/", "\\/").encode()


def go_json(doc: object) -> bytes:
    """Go's encoding/json: UTF-8, ``<``, ``>``, ``&`` written ``\\u003c``, ``\\u003e``, ``\\u0026``."""
    text = json.dumps(doc, ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026").encode()


def test_a_route_echoing_its_secrets_json_escaped_leaks_no_form_of_them(tmp_path: Path):
    """A real loopback route echoes its Authorization header and its URL's query value as PHP and Go encode
    JSON (answers, a 401 body) and in its version header; a live run and a by-hand run: no file, report,
    stdout or stderr holds any form of either, and the answers stay parsed with ``***`` in place."""
    import urllib.parse

    ws = W.copy_base(tmp_path / "ws")
    out = tmp_path / "outside"
    tenant = urllib.parse.unquote(TENANT)
    auth = f"Bearer {ROUTE_TOKEN}"
    php = php_json(json.loads(W.ANSWER) | {"imageNotes": f"auth was {auth}; tenant {tenant}"})
    go = go_json(json.loads(W.ANSWER) | {"imageNotes": f"auth was {auth}; tenant {tenant}"})
    denied = go_json({"error": f"token {ROUTE_TOKEN} not valid for {tenant}"})
    version = {"X-Analyzer-Version": f"app 1 ({auth})"}
    texts: list[str] = []
    with chat_server([("reply", 200, php, version), ("reply", 401, denied, version), ("reply", 200, go, version)]
                     ) as srv:
        W.set_params(ws, identify={"mode": "live", "retries": 0, "backoff_s": 0, "pause_s": 0,
                                   "providers": {"p": {"http": f"{srv.url}/api/analyze-image?tenant={TENANT}",
                                                       "headers": {"Authorization": "WEBAPP_AUTH"}}},
                                   "sources": {"p": "data/lots/lots.csv"}})
        env = {W.KEY_ENV: KEY, "WEBAPP_AUTH": auth}
        res = W.run_stage(ws, "identify", extra_env=env)
        texts += [res.stdout, res.stderr]
        hand = W.run_stage(ws, "identify", [*W.STAGES["identify"][1:], "--case", "T*", "--label", "x",
                                            "--record", str(out / "x.jsonl"), "--out", str(out / "x.json"),
                                            "--mode", "live"], extra_env=env)
        texts += [hand.stdout, hand.stderr]
    assert res.code == 1 and hand.code == 0, res.stderr + hand.stderr
    assert {r["headers"]["Authorization"] for r in srv.requests} == {auth}          # the secrets were live
    assert all(r["path"].endswith(f"tenant={TENANT}") for r in srv.requests)
    rec = load_recording(ws / "build/live/p.jsonl")
    notes = {x.parsed["imageNotes"] for x in rec if x.parsed}
    assert notes == {"auth was ***; tenant ***"}, notes                   # PHP's and Go's, both parsed
    assert {x.version for x in rec if x.error is None} == {"app 1 (***)"}
    assert [x.error for x in rec if x.error] == ['after 1 attempt(s): HTTP 401 Unauthorized: {"error": "token *** '
                                                 'not valid for ***"}']
    report = json.loads((out / "x.json").read_text())
    assert {json.loads(a["raw"])["imageNotes"] for a in report["answers"]} == {"auth was ***; tenant ***"}
    assert tail_leaks([tmp_path], texts) == []


PRODUCTION_ECHO = '''\
import json
import os
import urllib.parse

DEPLOYMENT = urllib.parse.unquote("{deployment_head}" + "{deployment_tail}")


def analyze(images, context):
    key = os.environ["{key_env}"]
    if context["id"] == "T001":      # a dict whose key holds a quote and the key, serialised by candor
        return {{"type": "item", "item": {{"itemModel": "OptiPlex 7090"}}, f'seen "{{key}}"': DEPLOYMENT}}
    if context["id"] == "T002":      # a string: JSON as PHP writes it
        return json.dumps({{"type": "item", "imageNotes": f"{{key}} at {{DEPLOYMENT}}"}}).replace("/", "\\\\/")
    raise ValueError(f"refused key {{key!r}} for {{DEPLOYMENT!r}}")
'''


def test_a_python_entry_point_returning_its_key_in_a_quoted_dict_key_leaks_no_form_of_it(tmp_path: Path):
    """The production callable returns a dict whose key holds a quote and the API key (and the base URL's
    decoded query value), a PHP-escaped JSON string, and raises with the key in its ``repr``: neither secret
    reaches any file, the by-hand report, stdout or stderr, in any form."""
    ws = W.copy_base(tmp_path / "ws")
    out = tmp_path / "outside"
    (ws / "prodcode").mkdir()
    head, tail = DEPLOYMENT.split("TAIL")
    (ws / "prodcode/echo.py").write_text(PRODUCTION_ECHO.format(deployment_head=head + "TA",
                                                                deployment_tail="IL" + tail, key_env=W.KEY_ENV))
    W.set_params(ws, identify={"mode": "live", "retries": 0, "backoff_s": 0, "pause_s": 0,
                               "base_url": f"http://127.0.0.1:9/v1?api-version=2024-06-01&deployment={DEPLOYMENT}",
                               "providers": {"p": {"python": "prodcode.echo:analyze"}}, "sources": {"p": "prodcode"}})
    res = W.run_stage(ws, "identify", extra_env={W.KEY_ENV: ESCAPED_KEY})
    hand = W.run_stage(ws, "identify", [*W.STAGES["identify"][1:], "--case", "T*", "--label", "x",
                                        "--record", str(out / "x.jsonl"), "--out", str(out / "x.json"),
                                        "--mode", "live"], extra_env={W.KEY_ENV: ESCAPED_KEY})
    assert res.code == 1 and hand.code == 0, res.stderr + hand.stderr
    rec = {(x.case, x.run): x for x in load_recording(ws / "build/live/p.jsonl")}
    assert rec["T001", 1].parsed == {"type": "item", "item": {"itemModel": "OptiPlex 7090"}, 'seen "***"': "***"}
    assert rec["T002", 1].parsed == {"type": "item", "imageNotes": "*** at ***"}
    assert rec["drill", 1].error == "after 1 attempt(s): ValueError: refused key '***' for '***'"
    assert tail_leaks([tmp_path], [res.stdout, res.stderr, hand.stdout, hand.stderr]) == []


def test_production_code_exiting_with_its_key_in_the_message_prints_it_redacted(tmp_path: Path):
    """``sys.exit(message)`` in the production callable ends the stage (nobody catches it); what Python prints
    of it holds no form of the key."""
    ws = W.copy_base(tmp_path / "ws")
    (ws / "prodcode").mkdir()
    (ws / "prodcode/quit.py").write_text(
        "import os\nimport sys\n\n\ndef analyze(images, context):\n"
        f"    sys.exit('refused key ' + repr(os.environ['{W.KEY_ENV}']))\n")
    W.set_params(ws, identify={"mode": "live", "retries": 0, "providers": {"p": {"python": "prodcode.quit:analyze"}},
                               "sources": {"p": "prodcode"}})
    res = W.run_stage(ws, "identify", extra_env={W.KEY_ENV: ESCAPED_KEY})
    assert res.code == 1 and "refused key '***'" in res.stderr, res.stderr
    assert tail_leaks([tmp_path], [res.stdout, res.stderr]) == []
