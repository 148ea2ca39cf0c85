"""candor.lock: rewrite it for the installed candor (``lock``), or check it without running anything (``check``).

    candor lock [--dir DIR]     # after upgrading candor: then `dvc status` lists the stages whose code changed
    candor check [--dir DIR]    # for CI: exit 2 when the lock is not the installed candor's

``DIR`` (default ``.``) is the folder of the project's ``dvc.yaml`` and ``candor.lock``
(:mod:`candor_eval.adopt.lockfile`). ``lock`` keeps what ``candor init`` was asked (the track) and
writes every stage's fingerprint of the installed package (:mod:`candor_eval.adopt.fingerprint`)
and their seal (what lets a stage's start skip its own fingerprint while the package is unchanged),
printing the stages whose fingerprint changed. ``check`` names every stage whose code differs.

Exit codes: 0 ok; 2 no lock, a malformed lock, or (check) a lock that does not match the installed
candor (the stages, both versions and the fix named).
"""
from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from candor_eval.adopt.lockfile import LOCK_NAME, Lock, check_lock, read_lock, render, sealed_code, stages_of
from candor_eval.cli import version
from candor_eval.common.atomic import write_text
from candor_eval.common.errors import fail
from candor_eval.stages.cli_help import StageParser


def existing(folder: Path) -> Path:
    path = folder / LOCK_NAME
    if not path.is_file():
        raise fail(str(path), "not found", expected="the candor.lock `candor init` writes",
                   hint=f"candor init {folder.as_posix()}" if folder != Path(".") else "candor init")
    return path


def cmd_lock(args: argparse.Namespace) -> int:
    path = existing(Path(args.dir))
    old = read_lock(path)
    code, package = sealed_code(stages_of(old.init.track, old.init.bench))
    write_text(path, render(Lock(candor=version(), init=old.init, code=code, package=package)))
    changed = [s for s in code if old.code.get(s) != code[s]]
    print(f"wrote {path.as_posix()}: candor {version()} (was {old.candor}); stages whose code changed: "
          + (", ".join(changed) if changed else "none"))
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    path = existing(Path(args.dir))
    check_lock(path, version())
    print(f"{path.as_posix()}: matches the installed candor {version()}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = StageParser(prog="candor", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)
    for name, func, summary in (("lock", cmd_lock, "rewrite candor.lock for the installed candor"),
                                ("check", cmd_check, "exit 2 when candor.lock is not the installed candor's")):
        s = sub.add_parser(name, help=summary, description=__doc__)
        s.add_argument("--dir", default=".", help="the folder of the project's dvc.yaml and candor.lock (default: .)")
        s.set_defaults(func=func)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)
