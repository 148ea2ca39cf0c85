"""What ``candor init`` writes into a folder, decided before anything is written.

A *plan* maps each path (relative to the project folder) to its bytes. The scaffold files are
``dvc.yaml`` and ``params.yaml`` (:mod:`candor_eval.adopt.scaffold`), the detector plots'
Vega-Lite templates under ``plots/templates/`` (``dvc.yaml`` names them), for the lots track
candor's default word lists as the bench's own starting ones (``data/lots/vocabulary/``: data the
team edits, a dep of the lots stages), ``candor.lock`` and the marked block of ``.gitignore``; for the
``lots`` track the recordings kept out of Git (:data:`RECORDINGS_OUT_OF_GIT`); ``--demo`` adds the
embedded demo (its params, data, models, committed raw boxes, metrics, plot data and ``dvc.lock``),
so the first ``dvc repro`` reruns no inference.

A candor project's own ``params.yaml`` is never reset: rewritten (another bench shape or track), it keeps
every byte and gains the sections it lacks, at their defaults.

Ownership: candor owns a file it wrote. A folder with a ``candor.lock`` is a candor project, whose
scaffold files candor wrote; its demo files are candor's when the lock says ``demo: true``. The
``.gitignore`` block between candor's markers is always candor's, the rest of the file never.
:func:`conflicts` lists every existing file whose bytes differ from the plan's; ``--force`` may
overwrite those candor owns and never the others.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from candor_eval.adopt.lockfile import LOCK_NAME, Bench, InitRecord, Lock, Track, render
from candor_eval.adopt.scaffold import dvc_yaml, gitignore, params_with_missing, params_yaml

# The embedded demo, as package data (candor_eval/demo/ links the demo project's folders): the
# project path of each part -> its place in the package
DEMO_PARTS = {
    "params.yaml": "params.yaml",
    "dvc.lock": "dvc.lock",
    "data": "data",
    "models": "models",
    "build/detections": "build_detections",
    "metrics/headline.json": "metrics/headline.json",
    "metrics/stats.json": "metrics/stats.json",
    "metrics/gate.json": "metrics/gate.json",
    "metrics/identification.json": "metrics/identification.json",
    "metrics/valuation.json": "metrics/valuation.json",
    "metrics/audit.json": "metrics/audit.json",
    "metrics/fields": "metrics/fields",
    "metrics/detection": "metrics/detection",
    "metrics/outcomes": "metrics/outcomes",
    "plots/detection": "plots/detection",
    "plots/report": "plots/report",
}
TEMPLATES = ("overlay.json", "threshold.json", "per_class.json", "anatomy.json", "confusion.json", "curve.json")

# A lots project keeps its recordings out of Git's diff: DVC tracks data/lots/recordings/ (this .dvc file, its
# hash filled in by the first `dvc repro` or `dvc commit`, pushed to the DVC remote by `dvc push`) and Git
# ignores the folder; a rerun's Git diff is the scores and one hash line (docs/adopting.md)
RECORDINGS_OUT_OF_GIT = {
    "data/lots/recordings.dvc": b"# the recordings, tracked by DVC (dvc push / dvc pull), out of Git's diff\n"
                                b"outs:\n- path: recordings\n",
    "data/lots/.gitignore": b"/recordings\n",
}


@dataclass(frozen=True)
class Plan:
    """The files of a project: path -> bytes, and which of them are the demo's."""

    files: dict[str, bytes]
    demo: frozenset[str]


def walk(node: Traversable, prefix: str, *, read: bool = False) -> Iterable[tuple[str, Any]]:
    """Every file under ``node`` (a package resource), as (project path, resource), sorted; with ``read``
    its bytes instead of the resource."""
    if node.is_file():
        yield prefix, node.read_bytes() if read else node
        return
    for child in sorted(node.iterdir(), key=lambda c: c.name):
        yield from walk(child, f"{prefix}/{child.name}", read=read)


def demo_files(root: Traversable | None = None) -> dict[str, bytes]:
    """The embedded demo's files (see :data:`DEMO_PARTS`)."""
    root = files("candor_eval") / "demo" if root is None else root
    out: dict[str, bytes] = {}
    for path, part in DEMO_PARTS.items():
        node = root
        for name in part.split("/"):
            node = node / name
        out.update(walk(node, path, read=True))
    return out


def plan(*, track: Track, demo: bool, version: str, code: dict[str, str], existing_gitignore: str,
         demo_source: Callable[[], dict[str, bytes]] = demo_files, bench: Bench | None = None,
         existing_params: str | None = None, package: str | None = None) -> Plan:
    """The files ``candor init`` writes for ``track`` (with the demo when ``demo``) and a lots bench of shape
    ``bench`` (None: not recorded, the ``valuation`` shape). ``existing_params``, the ``params.yaml`` of a
    candor project being rewritten, is kept with the sections it lacks added (unless it is not YAML).
    ``code`` and ``package`` are the lock's fingerprints and their seal (``adopt.lockfile.sealed_code``)."""
    templates = files("candor_eval") / "plots_templates"
    params = params_yaml(track, bench)
    if existing_params is not None:
        params = params_with_missing(existing_params, params) or params
    out = {"dvc.yaml": dvc_yaml(track, bench).encode(), "params.yaml": params.encode()}
    if track != "lots":
        out |= {f"plots/templates/{t}": (templates / t).read_bytes() for t in TEMPLATES}
    if track != "detector":
        out |= dict(walk(files("candor_eval") / "vocabulary", "data/lots/vocabulary", read=True))
    if track == "lots":
        out |= RECORDINGS_OUT_OF_GIT
    extra = demo_source() if demo else {}
    out |= extra
    out[LOCK_NAME] = render(Lock(candor=version, init=InitRecord(track=track, demo=demo, bench=bench),
                                  code=code, package=package)).encode()
    out[".gitignore"] = gitignore(existing_gitignore).encode()
    return Plan(files=out, demo=frozenset(extra) - {"params.yaml"})


def owned(path: str, *, plan: Plan, lock: Lock | None) -> bool:
    """Whether candor wrote ``path`` of ``plan`` in a folder whose ``candor.lock`` is ``lock`` (None: absent)."""
    if path in (".gitignore", LOCK_NAME):
        return path == ".gitignore" or lock is not None
    if lock is None:
        return False
    return lock.init.demo if path in plan.demo else True


def conflicts(plan: Plan, folder: Path, *, lock: Lock | None, force: bool) -> tuple[list[str], list[str]]:
    """The plan's files that exist in ``folder`` with other bytes: (those it may not overwrite, those it may
    with ``force``). A file with the planned bytes is neither."""
    refused: list[str] = []
    forced: list[str] = []
    for path, data in plan.files.items():
        target = folder / path
        if path == ".gitignore" or not target.exists() or (target.is_file() and target.read_bytes() == data):
            continue
        (forced if force and owned(path, plan=plan, lock=lock) else refused).append(path)
    return refused, forced
