"""``candor.lock``: the installed candor a project's outputs were made with, one fingerprint per stage.

A YAML file beside the project's ``dvc.yaml``, written by ``candor init`` and ``candor lock``:

- ``candor``: the candor-eval version that wrote it;
- ``init``: what ``candor init`` was asked (``track``, ``demo``, and for a lots track the ``bench`` shape),
  so ``candor lock`` rewrites the same project;
- ``code.<stage>``: each stage's fingerprint (:mod:`candor_eval.adopt.fingerprint`);
- ``package``: the *seal* of the code it holds (:func:`seal`): the SHA-256 over the package fingerprint
  of the candor that computed those fingerprints and the ``code`` entries. Optional: a lock without
  it (or with a seal that does not match) is checked stage by stage.

Each stage in the written ``dvc.yaml`` lists ``candor.lock: [code.<stage>]`` as params, so after an
upgrade and ``candor lock``, ``dvc status`` lists exactly the stages whose code changed. A stage run
by ``candor`` checks its own fingerprint against the installed package first
(:func:`stale_stages`): running new code under an old lock would record outputs DVC attributes to
the old code. That check costs the parse of each module of the stage's import closure, so it first
compares the seal with the installed package's: when every file of the package is the one the
fingerprints were computed from, every fingerprint still holds and no closure is computed. The
seal covers the ``code`` entries too, so a fingerprint changed by hand (or by a merge) never passes
for checked; the ``dvc.yaml`` params stay ``code.<stage>``, so ``package`` never reruns a stage.
"""
from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from candor_eval.adopt.fingerprint import STAGE_MODULES, package_fingerprint
from candor_eval.common.errors import InputError, Problem
from candor_eval.common.params import load_yaml, validate

LOCK_NAME = "candor.lock"
Track = Literal["detector", "lots", "both"]
# What a lots bench holds (docs/adopting.md): ``cases`` a folder of case files only; ``lots`` also
# ``lots.csv`` and ``photos/``; ``valuation`` also the comps and the audit, and the valuation stages
Bench = Literal["cases", "lots", "valuation"]
BENCHES: tuple[Bench, ...] = ("cases", "lots", "valuation")


class InitRecord(BaseModel):
    """What ``candor init`` was asked."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    track: Track = "both"
    demo: bool = False
    bench: Bench | None = None      # None: not recorded (before `--bench`): see bench_of


def bench_of(track: str, bench: Bench | None) -> Bench | None:
    """The shape of a project's lots bench: None without a lots track; as recorded; else ``valuation`` (the
    demo's, and every lots project's before ``candor init --bench``).

    >>> bench_of("detector", None), bench_of("lots", "cases"), bench_of("both", None)
    (None, 'cases', 'valuation')
    """
    if track == "detector":
        return None
    return bench or "valuation"


class Lock(BaseModel):
    """A validated ``candor.lock``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    candor: str = Field(min_length=1)
    init: InitRecord = InitRecord()
    code: dict[str, str]
    package: str | None = None      # seal(code) when written; None: a lock before the seal, checked stage by stage


def stages_of(track: str, bench: Bench | None = None) -> list[str]:
    """The stages a project of ``track`` runs (its ``dvc.yaml``, and the latency diagnostic of a detector),
    in :data:`STAGE_MODULES` order; the valuation stages only with a ``valuation`` bench (:func:`bench_of`).

    >>> stages_of("detector")
    ['fetch', 'detect', 'score-detection', 'stats', 'latency']
    >>> stages_of("lots", "cases")
    ['fetch', 'identify', 'score-lots', 'stats']
    """
    lots = {"identify", "score-lots", "value", "score-valuation"}
    detector = {"detect", "score-detection", "latency"}
    drop = detector if track == "lots" else lots if track == "detector" else set()
    if bench_of(track, bench) in ("cases", "lots"):
        drop = drop | {"value", "score-valuation"}
    return [s for s in STAGE_MODULES if s not in drop]


def render(lock: Lock) -> str:
    """The file's text: a comment saying what it is, then the keys (stable order, one line each, ``package``
    last and only when set; versions and digests quoted, so YAML never reads them as numbers)."""
    lines = ["# candor.lock: written by `candor init` / `candor lock`; do not edit. Each stage of dvc.yaml lists",
             "# its code.<stage> as a param, so an upgrade of candor reruns exactly the stages whose code changed.",
             f"candor: '{lock.candor}'",
             "init:",
             f"  track: {lock.init.track}",
             f"  demo: {'true' if lock.init.demo else 'false'}"]
    lines += [f"  bench: {lock.init.bench}"] if lock.init.bench is not None else []
    lines += ["code:"]
    lines += [f"  {stage}: '{digest}'" for stage, digest in lock.code.items()]     # quoted: 64 digits are a number
    lines += [f"package: '{lock.package}'"] if lock.package is not None else []
    return "\n".join(lines) + "\n"


def seal(code: Mapping[str, str], root: Path | None = None) -> str:
    """The seal of the fingerprints ``code`` (stage -> fingerprint) for the package under ``root`` (default:
    the installed one): the SHA-256 of the lines ``"<package fingerprint>  package\n"`` then
    ``"<fingerprint>  code.<stage>\n"`` for each stage, sorted by stage. Write it only beside fingerprints
    computed from that package (:func:`sealed_code`): the check trusts them when the seal matches."""
    lines = [f"{package_fingerprint(root)}  package\n", *(f"{code[s]}  code.{s}\n" for s in sorted(code))]
    return hashlib.sha256("".join(lines).encode()).hexdigest()


def sealed_code(stages: list[str], root: Path | None = None) -> tuple[dict[str, str], str]:
    """The fingerprints of ``stages`` of the package under ``root`` (default: the installed one) and their
    :func:`seal`: what ``candor init`` and ``candor lock`` write."""
    from candor_eval.adopt.fingerprint import stage_fingerprint

    code = {s: stage_fingerprint(s, root) for s in stages}
    return code, seal(code, root)


def read_lock(path: Path) -> Lock:
    """Read and validate ``candor.lock`` (errors name the file and key)."""
    return validate(Lock, load_yaml(path), where=str(path))


def stale_stages(lock: Lock, installed: dict[str, str], stages: list[str] | None = None) -> list[str]:
    """The stages (of ``stages``, default: those the lock lists) whose fingerprint in ``lock`` is not
    the installed one's."""
    wanted = list(lock.code) if stages is None else stages
    return [s for s in wanted if s in lock.code and lock.code[s] != installed.get(s)]


def stale_error(path: Path, lock: Lock, stale: list[str], version: str) -> InputError:
    """The error of a lock that does not match the installed candor: the stages, both versions and the fix."""
    return InputError([Problem(f"{path}:code.{s}", "does not match the installed candor's code of this stage")
                       for s in stale],
                      hint=f"the lock was written by candor {lock.candor}, candor {version} is installed: run "
                           f"`candor lock` (in {path.parent.as_posix() or '.'}), then `dvc status` lists what reruns: "
                           + ", ".join(stale))


def check_lock(path: Path, version: str, stages: list[str] | None = None, root: Path | None = None) -> None:
    """Raise :func:`stale_error` when ``path`` (a ``candor.lock``) does not match the package under ``root``
    (default: the installed one) for ``stages`` (default: every stage it lists). A lock whose seal is the
    package's matches for every stage it lists (the module docstring); otherwise each stage's fingerprint
    is computed and compared."""
    from candor_eval.adopt.fingerprint import stage_fingerprint

    lock = read_lock(path)
    if lock.package is not None and lock.package == seal(lock.code, root):
        return
    wanted = [s for s in (list(lock.code) if stages is None else stages) if s in STAGE_MODULES]
    installed = {s: stage_fingerprint(s, root) for s in wanted}
    if stale := stale_stages(lock, installed, wanted):
        raise stale_error(path, lock, stale, version)
