"""The bad-input corpus (tests/bad_inputs/<case>/): every case runs its stage's CLI as a subprocess.

A case folder holds ``case.yaml`` (validated by :class:`Spec`) and, optionally,
``files/``: files laid over the workspace at the same relative paths (the bad
input itself; those of ``unlisted`` only after the case's ``remanifest`` and fetch, as a file
added to a set but not to its manifest). The runner builds the good workspace once
(:mod:`tests.bad_inputs.workspace`: inputs plus the good pipeline's outputs),
copies it per case, applies the case, snapshots every file's SHA-256, runs
``python -m candor_eval.stages.<module> ...`` in the copy and checks:

* exit 2 (or the ``exit`` the spec names: a case may document that an input
  works, e.g. a PNG named ``.jpg``);
* stderr holds exactly one ``error:`` message, no traceback, and every
  ``message`` substring (the file and the row, field or box);
* no file anywhere in the workspace was added, removed or changed (so nothing
  under ``metrics/``, ``plots/``, the recordings or ``build/``); an ``exit: 0``
  case may change exactly its ``changes``, and its ``contains`` names lines those
  files must then hold (e.g. a neutralised CSV cell).

A case with ``serve`` runs its stage against a scripted chat server on 127.0.0.1
(:mod:`tests.chat_server`; the steps as lists): ``identify.base_url`` is set to its URL and
the API key variable to a test key, so a live answer the provider sends can be the bad input.

A case whose bug sits in a module this suite may not fix carries
``pending: <module>: <what is wrong>``; it runs as ``xfail(strict=True)``, so
the fix turns it into a failure until the mark is removed.

The stage processes are forked, a few at a time, from one process that has
imported the libraries once (:mod:`tests.bad_inputs.zygote`), so the whole
corpus costs a few seconds; :func:`test_zygote_matches_a_fresh_interpreter`
checks that this changes nothing a case can see.
"""
from __future__ import annotations

import os
import shutil
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, Literal

import pytest
import yaml
from pydantic import BaseModel, ConfigDict, Field

from candor_eval.common.errors import run_main
from candor_eval.common.manifest import sha256_file
from candor_eval.stages import fetch
from tests.bad_inputs import workspace as W
from tests.chat_server import chat_server

# every case runs in the session fixture ``outcomes``: under pytest-xdist the module's tests share one worker,
# so the corpus runs once per test session, not once per worker
pytestmark = pytest.mark.xdist_group("bad_inputs")

CORPUS = Path(__file__).parent / "bad_inputs"
WORKERS = 3
TEST_KEY = "sk-corpus-test-key-0000"


class Generate(BaseModel):
    """A file made at test time (too big to commit)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["big_png", "big_text"]     # big_text: YOLO label lines, repeated to ``bytes``
    path: str
    bytes: int = Field(gt=0)


class Expect(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    exit: int = 2
    message: list[str] = Field(default_factory=list)
    changes: list[str] = Field(default_factory=list)
    contains: dict[str, list[str]] = Field(default_factory=dict)   # an exit 0 case: path -> lines the file holds
    absent: list[str] = Field(default_factory=list)    # never in stdout or stderr (a planted secret)


class Spec(BaseModel):
    """``case.yaml``: what the case is, which stage reads it, how to lay it out, what must happen."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    what: str = Field(min_length=1)
    stage: Literal["fetch", "detect", "score-detection", "coco-eval", "identify", "score-lots", "value", "stats",
                   "gate"]
    args: list[str] | None = None                     # replaces the stage's default arguments
    remove: list[str] = Field(default_factory=list)   # files deleted from the workspace
    append: dict[str, str] = Field(default_factory=dict)   # path -> hex bytes appended
    generate: list[Generate] = Field(default_factory=list)
    card: dict[str, Any] = Field(default_factory=dict)     # keys set in models/tiny.yaml
    params: dict[str, Any] = Field(default_factory=dict)   # dotted keys set in params.yaml
    remanifest: list[str] = Field(default_factory=list)    # data sets whose manifest is rewritten, then fetch
    recard: list[str] = Field(default_factory=list)        # cards whose sha256 is set to their file's, then fetch
    serve: list[list[Any]] = Field(default_factory=list)   # a chat server's script (module docstring)
    symlink_out: list[str] = Field(default_factory=list)   # files moved out of the workspace, a symlink left
    unlisted: list[str] = Field(default_factory=list)      # files of files/ laid only after remanifest and fetch
    symlink: dict[str, str] = Field(default_factory=dict)   # path -> what it is made a symlink to (/dev/zero)
    expect: Expect
    pending: str | None = None


def load_specs() -> dict[str, Spec]:
    out = {}
    for file in sorted(CORPUS.glob("*/case.yaml")):
        out[file.parent.name] = Spec.model_validate(yaml.safe_load(file.read_text(encoding="utf-8")))
    return out


SPECS = load_specs()


@contextmanager
def chdir(path: Path):
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)


def set_dotted(doc: dict, dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for key in parents:
        doc = doc.setdefault(key, {})
    doc[last] = value


def apply(ws: Path, name: str, spec: Spec) -> None:
    """Lay the case over a fresh copy of the good workspace (the order of the keys in Spec)."""
    files = CORPUS / name / "files"
    if files.is_dir():
        shutil.copytree(files, ws, dirs_exist_ok=True, ignore=lambda d, names: [
            n for n in names if (Path(d) / n).relative_to(files).as_posix() in spec.unlisted])
    for rel in spec.remove:
        (ws / rel).unlink()
    for rel, hexbytes in spec.append.items():
        with open(ws / rel, "ab") as fh:
            fh.write(bytes.fromhex(hexbytes))
    for g in spec.generate:
        p = ws / g.path
        if g.kind == "big_png":
            p.write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * (g.bytes - 8))
        else:
            line = b"0 0.5 0.5 0.1 0.1\n"
            p.write_bytes((line * (g.bytes // len(line) + 1))[:g.bytes])
    if spec.card:
        card = yaml.safe_load((ws / "models/tiny.yaml").read_text())
        (ws / "models/tiny.yaml").write_text(yaml.safe_dump(card | spec.card, sort_keys=False))
    if spec.params:
        doc = yaml.safe_load((ws / "params.yaml").read_text())
        for dotted, value in spec.params.items():
            set_dotted(doc, dotted, value)
        (ws / "params.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    for rel in spec.remanifest:
        W.write_manifest(ws / rel)
    for name_ in spec.recard:
        card_file = ws / "models" / f"{name_}.yaml"
        card = yaml.safe_load(card_file.read_text())
        card["sha256"] = sha256_file(card_file.parent / card["onnx"])
        card_file.write_text(yaml.safe_dump(card, sort_keys=False))
    for rel in spec.symlink_out:         # the same bytes, outside the workspace, reached through a symlink
        moved = ws.parent / f"{ws.name}-outside" / rel
        moved.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(ws / rel, moved)
        (ws / rel).symlink_to(moved)
    for rel, target in spec.symlink.items():
        (ws / rel).unlink(missing_ok=True)
        (ws / rel).symlink_to(target)
    if spec.remanifest or spec.recard:   # the user did the bookkeeping: the fetch stage passes
        with chdir(ws):
            assert run_main(fetch.main, ["verify", "--data", "data", "--models", "models",
                                         "--out", "build/verified"]) == 0, name
    for rel in spec.unlisted:            # added to a set's folder after its manifest was written and verified
        shutil.copyfile(files / rel, ws / rel)


class Outcome(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    result: Any
    changed: list[str]
    lines: dict[str, list[str]] = Field(default_factory=dict)   # the lines of each ``contains`` file after the run


@pytest.fixture(scope="session")
def base() -> Path:
    return W.shared_base()


@pytest.fixture(scope="session")
def outcomes(base: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Outcome]:
    """Prepare every case (sequentially), run all of them (in parallel), snapshot before and after."""
    root = tmp_path_factory.mktemp("cases")
    prepared = {}
    with ExitStack() as servers:
        for name, spec in SPECS.items():
            ws = root / name
            shutil.copytree(base, ws)
            apply(ws, name, spec)
            if spec.serve:
                srv = servers.enter_context(chat_server([tuple(step) for step in spec.serve]))
                W.set_params(ws, identify={"base_url": srv.url})
            prepared[name] = (ws, W.snapshot(ws))

        names = list(prepared)
        envs = [{W.KEY_ENV: TEST_KEY} if SPECS[n].serve else {} for n in names]
        results = W.run_batch([(prepared[n][0], SPECS[n].stage, SPECS[n].args) for n in names], workers=WORKERS,
                              envs=envs)
    return {n: Outcome(result=r, changed=W.diff(prepared[n][1], W.snapshot(prepared[n][0])),
                       lines={f: (prepared[n][0] / f).read_text(encoding="utf-8").splitlines()
                              for f in SPECS[n].expect.contains if (prepared[n][0] / f).is_file()})
            for n, r in zip(names, results)}


def params_for_cases() -> list:
    out = []
    for name, spec in SPECS.items():
        marks = [pytest.mark.xfail(strict=True, reason=spec.pending)] if spec.pending else []
        out.append(pytest.param(name, marks=marks, id=name))
    return out


@pytest.mark.parametrize("name", params_for_cases())
def test_case(name: str, outcomes: dict[str, Outcome]):
    spec, out = SPECS[name], outcomes[name]
    res = out.result
    context = f"{name}: {' '.join(res.argv)}\nexit {res.code}\nstderr:\n{res.stderr[-3000:]}"
    assert res.code == spec.expect.exit, context
    assert "Traceback" not in res.stderr, context
    assert [s for s in spec.expect.absent if s in res.stdout + res.stderr] == [], context
    if spec.expect.exit == 2:
        errors = [ln for ln in res.stderr.splitlines() if ln.startswith("error: ")]
        assert len(errors) == 1, context
        message = res.stderr[res.stderr.index("error: "):]
        for needle in spec.expect.message:
            assert needle in message, f"{needle!r} not in the message\n{context}"
        assert out.changed == [], f"files changed on bad input: {out.changed}\n{context}"
    else:
        for needle in spec.expect.message:          # what the run logged (a recorded failure, a replaced character)
            assert needle in res.stderr, f"{needle!r} not in stderr\n{context}"
        assert sorted(c[1:] for c in out.changed) == sorted(spec.expect.changes), context
        assert all(c.startswith("~") for c in out.changed), context
        for path, lines in spec.expect.contains.items():
            assert set(lines) <= set(out.lines.get(path, [])), f"{path}: {lines} not all in {out.lines.get(path)}"


def test_pending_cases_that_fail_still_write_nothing(outcomes: dict[str, Outcome]):
    """Until their module is fixed, pending cases that crash must at least leave every file as it was."""
    crashed = {n: outcomes[n] for n, s in SPECS.items() if s.pending and outcomes[n].result.code != 0}
    assert {n: o.changed for n, o in crashed.items() if o.changed} == {}


# The reliability classes (README, "Reliability") and the name prefix of their cases.
CLASSES = {"enc-": "encodings", "path-": "paths of the wrong kind", "yaml-": "YAML",
           "ambiguous-": "ambiguous data", "json-": "hostile JSON", "unbounded-": "unbounded work",
           "raw-": "raw detections", "csv-": "CSV formula cells"}


def test_corpus_is_large_enough_and_covers_every_stage():
    assert len(SPECS) >= 250
    per_class = {c: sum(n.startswith(prefix) for n in SPECS) for prefix, c in CLASSES.items()}
    assert min(per_class.values()) >= 8, per_class
    assert {s.stage for s in SPECS.values()} == {"fetch", "detect", "score-detection", "coco-eval", "identify",
                                                 "score-lots", "value", "stats", "gate"}
    # every case names at least one file (or the command-line argument) in its expected message,
    # or documents that it works
    for name, spec in SPECS.items():
        assert spec.expect.exit == 0 or any("/" in m or m.endswith((".yaml", ".csv", ".json")) or "params" in m
                                            or "API key" in m or m.split()[0] in (spec.args or ())
                                            for m in spec.expect.message), name


def test_good_workspace_is_deterministic(base: Path, tmp_path: Path):
    """Rerunning a stage on the good workspace changes nothing: the snapshot check has no false alarms."""
    ws = tmp_path / "ws"
    shutil.copytree(base, ws)
    before = W.snapshot(ws)
    for stage in ("score-detection", "identify", "value"):
        assert W.run_stage(ws, stage).code == 0
    assert W.diff(before, W.snapshot(ws)) == []


@pytest.mark.parametrize("name", ["fetch-manifest-dotdot", "detect-zero-byte-image", "detect-png-named-jpg"])
def test_zygote_matches_a_fresh_interpreter(name: str, base: Path, outcomes: dict[str, Outcome], tmp_path: Path):
    """A forked run and a fresh ``python -m`` give the same exit code and the same stderr lines."""
    ws = tmp_path / name
    shutil.copytree(base, ws)
    apply(ws, name, SPECS[name])
    fresh = W.run_stage(ws, SPECS[name].stage, SPECS[name].args)
    forked = outcomes[name].result
    def strip(text: str) -> list[str]:
        return [ln for ln in text.splitlines() if "frame/s]" not in ln and "it/s]" not in ln]

    assert ((fresh.code, strip(fresh.stderr)[-3:], fresh.stdout)
            == (forked.code, strip(forked.stderr)[-3:], forked.stdout))


def test_snapshot_sees_a_write(tmp_path: Path):
    """The check is not blind: a changed, an added and a removed file are all reported."""
    (tmp_path / "m").mkdir()
    (tmp_path / "m" / "a.json").write_text("1")
    (tmp_path / "m" / "b.json").write_text("2")
    before = W.snapshot(tmp_path)
    (tmp_path / "m" / "a.json").write_text("3")
    (tmp_path / "m" / "b.json").unlink()
    (tmp_path / "m" / "c.json").write_text("4")
    assert W.diff(before, W.snapshot(tmp_path)) == ["~m/a.json", "-m/b.json", "+m/c.json"]
