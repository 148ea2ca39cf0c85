"""candor init: make a folder of a Git + DVC repository a candor project.

    candor init [DIR] [--track detector|lots|both] [--bench cases|lots|valuation] [--demo] [--force]

Writes into ``DIR`` (default: the current folder, or ``eval/`` when the current folder already has
a ``dvc.yaml`` or ``params.yaml`` of its own: DVC joins every ``dvc.yaml`` of a repository into one
graph, so the user's own stages can feed candor's) a ``dvc.yaml`` of candor's stages for the track,
a ``params.yaml`` of candor's sections with every key at its documented default, the detector
plots' templates, ``candor.lock`` (the installed candor and each stage's code fingerprint:
``candor lock --help``) and a marked block in ``.gitignore``. ``--demo`` adds the embedded demo (its
params, data, models, committed raw detections, metrics and ``dvc.lock``): the first ``dvc repro``
then reruns nothing. Then it prints the next three commands.

``--bench`` is the shape of the lots bench under ``data/lots/``, which the lots stages depend on
(DVC refuses a stage whose dep is missing, so the pipeline names only what the bench has):

- ``cases`` (the ``lots`` track's default): ``cases/*.json``, each case's image under ``cases/`` too
  (``image`` is relative to ``data/lots/``), and the word lists: identification per field, no lots;
- ``lots``: also ``lots.csv`` and ``photos/`` (a lot per row, scored for identification and count);
- ``valuation`` (the ``both`` track's default, the demo's): also ``data/comps/`` and ``data/audit/``,
  and the ``value`` and ``score-valuation`` stages.

A bench that grows is one ``candor init --force --bench SHAPE`` away: it rewrites ``dvc.yaml`` and
``candor.lock``, and adds the sections ``params.yaml`` lacks (``comps``) at their defaults, every line of
it kept (in a candor project ``params.yaml`` is never reset; a file that is not YAML is rewritten with
``--force``). Without ``--bench``, ``--force`` keeps the shape ``candor.lock`` records.

It never overwrites a file it does not own: when a file it would write exists with other content,
it lists them all and writes nothing; ``--force`` overwrites the ones candor wrote (a folder with a
``candor.lock``), never the others (:mod:`candor_eval.adopt.project`).

Exit codes: 0 written; 2 not inside a Git repository with a DVC project (the ``git init`` /
``dvc init`` to run is printed), or files in the way (listed), or a bad flag.
"""
from __future__ import annotations

import logging
import subprocess
from collections.abc import Sequence
from pathlib import Path

from candor_eval.adopt.lockfile import BENCHES, LOCK_NAME, Bench, Lock, read_lock, sealed_code, stages_of
from candor_eval.adopt.project import conflicts, plan
from candor_eval.cli import version
from candor_eval.common.atomic import replace_dir_files
from candor_eval.common.errors import InputError, Problem, fail
from candor_eval.common.repository import dvc_root
from candor_eval.stages.cli_help import StageParser

log = logging.getLogger("candor.init")


def git_root(folder: Path) -> Path | None:
    """The top folder of the Git work tree holding ``folder``, or None."""
    try:
        out = subprocess.run(["git", "-C", str(folder), "rev-parse", "--show-toplevel"], capture_output=True,
                             text=True, check=False)
    except FileNotFoundError:
        return None
    return Path(out.stdout.strip()) if out.returncode == 0 else None


def target_folder(given: str | None, cwd: Path) -> Path:
    """``DIR`` as given; without it the current folder, or ``eval/`` beside a dvc.yaml / params.yaml not candor's."""
    if given is not None:
        return cwd / given
    theirs = [n for n in ("dvc.yaml", "params.yaml") if (cwd / n).exists()]
    if theirs and not (cwd / LOCK_NAME).exists():
        log.info("this folder has its own %s: candor's project goes into eval/", " and ".join(theirs))
        return cwd / "eval"
    return cwd


def check_repository(folder: Path) -> None:
    """An InputError unless ``folder`` is inside a Git work tree with a DVC project (the commands to run named)."""
    top = git_root(folder if folder.exists() else folder.parent)
    if top is None:
        raise fail(str(folder), "not inside a Git repository", expected="a Git repository with a DVC project",
                   hint="git init && dvc init   (in the repository's top folder), then candor init again")
    if dvc_root(folder.resolve(), top.resolve()) is None:
        raise fail(str(folder), "no DVC project here or above it", expected="a DVC project (a .dvc folder)",
                   hint=f"dvc init   (in {top}), or dvc init --subdir   (in {folder}) to keep DVC to that folder")


def next_commands(folder: Path, *, track: str, demo: bool, cwd: Path, bench: Bench | None = None) -> list[str]:
    """The three commands to run next (paths as the user types them from ``cwd``). Outside ``.``, ``dvc repro``
    names candor's ``dvc.yaml``: without a target DVC runs only the ``dvc.yaml`` of the current folder (with
    one, it runs that pipeline and every stage of the repository upstream of it, the user's own included)."""
    rel = folder.relative_to(cwd).as_posix() if folder.is_relative_to(cwd) else str(folder)
    d = "" if rel == "." else f" --dir {rel}"
    repro = "dvc repro" if rel == "." else f"dvc repro {rel}/dvc.yaml"
    if demo:
        return [f"{repro}            # reruns no inference: the demo's outputs are committed",
                "dvc exp run -S " + ("" if rel == "." else f"{rel}/params.yaml:") + "thresholds.deer=0.3"
                + ("" if rel == "." else f" {rel}/dvc.yaml"),
                "dvc metrics diff"]
    if track == "lots":
        where = "params.yaml" if rel == "." else f"{rel}/params.yaml"
        data = "data" if rel == "." else f"{rel}/data"
        what = {"cases": "lots/cases/*.json", "lots": "lots/cases/*.json, lots/lots.csv and lots/photos/"}.get(
            bench or "valuation", "lots/cases/*.json, lots/lots.csv, lots/photos/, comps/ and audit/")
        manifests = " && ".join(f"candor fetch manifest {data}/{f}" for f in (
            ["lots"] if bench in ("cases", "lots") else ["lots", "comps", "audit"]))
        record = "candor record CANDIDATE" if rel == "." else f"(cd {rel} && candor record CANDIDATE)"
        return [f"put the bench into {data}/ ({what}), then: {manifests}",
                f"edit {where}: identify.candidates, providers and sources (docs/lots.md), then: {record}", repro]
    return [f"candor add set val --from data.yaml{d}", f"candor add model best --onnx best.onnx{d}", repro]


def bench_shape(given: Bench | None, track: str, lock: Lock | None) -> Bench | None:
    """The lots bench's shape to write: as given; else the one ``lock`` (an existing project of the same track)
    records; else ``cases`` for the lots track and None (the ``valuation`` shape, not recorded) for ``both``."""
    if given is not None or track == "detector":
        return given
    if lock is not None and lock.init.track == track:
        return lock.init.bench if lock.init.bench is not None or track == "both" else "valuation"
    return "cases" if track == "lots" else None


def main(argv: Sequence[str] | None = None) -> int:
    p = StageParser(prog="candor init", description=__doc__)
    p.add_argument("dir", nargs="?", help="the project folder (default: . or eval/, see above)")
    p.add_argument("--track", choices=["detector", "lots", "both"], default="both", help="default: %(default)s")
    p.add_argument("--bench", choices=BENCHES, default=None,
                   help="the lots bench's shape (see above; default: cases for --track lots, valuation for both)")
    p.add_argument("--demo", action="store_true", help="add the embedded demo (track both)")
    p.add_argument("--force", action="store_true", help="overwrite files candor wrote before")
    args = p.parse_args(argv)
    if args.demo and args.track != "both":
        raise fail("--demo", "the demo has both tracks", expected="--track both (the default) with --demo")
    if args.bench is not None and args.track == "detector":
        raise fail("--bench", "a detector project has no lots bench", expected="--track lots or both with --bench")
    if args.demo and args.bench not in (None, "valuation"):
        raise fail("--bench", f"the demo's bench is valuation, not {args.bench}", expected="--demo without --bench")
    cwd = Path.cwd()
    folder = target_folder(args.dir, cwd)
    check_repository(folder)
    lock_path = folder / LOCK_NAME
    lock = read_lock(lock_path) if lock_path.is_file() else None
    gitignore = folder / ".gitignore"
    bench = bench_shape(args.bench, args.track, lock)
    params = folder / "params.yaml"
    ours = params.read_text(encoding="utf-8") if lock is not None and params.is_file() else None
    code, package = sealed_code(stages_of(args.track, bench))
    todo = plan(track=args.track, demo=args.demo, version=version(), bench=bench, existing_params=ours,
                code=code, package=package,
                existing_gitignore=gitignore.read_text(encoding="utf-8") if gitignore.is_file() else "")
    refused, forced = conflicts(todo, folder, lock=lock, force=args.force)
    if refused:
        raise InputError([Problem(str(folder / r), "exists and is not candor's to overwrite" if args.force
                                  else "exists with other content") for r in refused],
                         hint=None if args.force else "nothing was written; --force overwrites the files "
                                                       "candor wrote before (never others)")
    changed = {path: data for path, data in todo.files.items()
               if not ((folder / path).is_file() and (folder / path).read_bytes() == data)}
    replace_dir_files(folder, changed, clean=False)
    written = len(changed)
    print(f"candor init: {written} file(s) written in {folder}" + (f" ({len(forced)} overwritten)" if forced else ""))
    print("next:\n" + "\n".join(f"  {c}" for c in next_commands(folder, track=args.track, demo=args.demo, cwd=cwd,
                                                                bench=bench)))
    return 0
