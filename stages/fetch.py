"""fetch-and-verify stage: every file of every manifest and every model card, by SHA-256.

    python -m stages.fetch verify [--data data] [--models models] --out build/verified
    python -m stages.fetch manifest DIR [--columns FILE.csv] [--source-prefix URL]

``verify`` reads every ``<data>/<set>/manifest.csv`` and every ``<models>/*.yaml``
model card. A file that is present is hashed; one that is missing and has a
``source`` is fetched through fsspec into a temporary file beside its final path,
hashed, and only then moved into place. Any mismatch stops the stage (exit 2)
with one message listing every bad file (path, expected and actual SHA-256 or
"missing"); nothing is written. On success it writes, per data set,
``<out>/data-<set>.json`` (manifest SHA-256, file count, bytes) and, per model,
``<out>/model-<name>.json`` (ONNX SHA-256). Later stages depend on exactly the
records they use, so a changed byte reruns only what is downstream of it.

``manifest`` writes ``DIR/manifest.csv`` for an existing folder so users can
bring their own data in one command; ``--columns`` merges extra per-file columns
(a CSV with a ``path`` column, e.g. ``session,zoom,split``). Rewriting an existing
manifest (after an intended data change) keeps its extra columns and ``source``
of every file still present; ``--columns`` and ``--source-prefix`` override them.
"""
from __future__ import annotations

import argparse
import csv
import logging
import os
import tempfile
from collections.abc import Sequence
from pathlib import Path

from tqdm import tqdm

from candor.common.atomic import write_json, write_text
from candor.common.errors import InputError, Problem, fail, run_main
from candor.common.manifest import (
    MANIFEST_NAME, REQUIRED_COLUMNS, Action, Entry, Manifest, build_manifest_rows, decide, format_manifest,
    load_manifest, mismatch, sha256_file,
)
from candor.detection.model_card import load_card, onnx_path

log = logging.getLogger("candor.fetch")


def resolve_source(source: str, *, root: Path) -> str:
    """A fetchable URL for ``source``: URLs pass through, plain paths are relative to ``root``."""
    if "://" in source:
        return source
    return str((root / source).resolve())


def fetch_to(source: str, final: Path) -> str:
    """Copy ``source`` (any fsspec URL or local path) to a temp file beside ``final``.

    Returns the temp file's path; the caller verifies it and moves it into place
    (or deletes it). A failed download leaves no file at ``final``.
    """
    import fsspec  # imported here: only needed when something is missing

    final.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{final.name}.", suffix=".part", dir=final.parent)
    try:
        with os.fdopen(fd, "wb") as out, fsspec.open(source, "rb") as src:
            while chunk := src.read(1 << 20):
                out.write(chunk)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


def verify_entry(entry: Entry, *, root: Path, where: str) -> Problem | None:
    """Verify (and fetch when missing) one file; return its Problem or None."""
    final = root / entry.path
    action = decide(entry, root=root)
    if action is Action.VERIFY:
        return mismatch(entry, where=where, actual_sha256=sha256_file(final))
    if action is Action.MISSING:
        return mismatch(entry, where=where, actual_sha256=None)
    url = resolve_source(entry.source or "", root=root)
    try:
        tmp = fetch_to(url, final)
    except Exception as err:  # network, permission, 404...: a problem of this file, keep checking others
        return Problem(where, f"missing, and fetching it from {entry.source!r} failed: {type(err).__name__}: {err}")
    problem = mismatch(entry, where=where, actual_sha256=sha256_file(tmp))
    if problem is None:
        os.replace(tmp, final)
        log.info("fetched %s from %s", where, entry.source)
    else:
        Path(tmp).unlink(missing_ok=True)
        problem = Problem(where, f"fetched from {entry.source!r} but SHA-256 mismatch",
                          expected=entry.sha256, got=problem.got)
    return problem


def verify_manifest(manifest: Manifest) -> list[Problem]:
    """Every Problem of one manifest's files (empty when all verify)."""
    problems = []
    for entry in tqdm(manifest.entries, desc=f"verify {manifest.root}", unit="file", leave=False):
        where = (manifest.root / entry.path).as_posix()
        if (p := verify_entry(entry, root=manifest.root, where=where)) is not None:
            problems.append(p)
    return problems


def find_manifests(data: Path) -> list[Path]:
    """``<data>/<set>/manifest.csv`` for every data set folder, sorted."""
    return sorted(p for p in data.glob(f"*/{MANIFEST_NAME}") if p.is_file())


def verify_all(*, data: Path, models: Path) -> tuple[dict[str, dict], dict[str, dict]]:
    """Verify everything; return the per-set and per-model records or raise one InputError."""
    problems: list[Problem] = []
    sets: dict[str, dict] = {}
    for file in find_manifests(data):
        try:
            manifest = load_manifest(file)
        except InputError as err:
            problems.extend(err.problems)
            continue
        problems.extend(verify_manifest(manifest))
        sets[file.parent.name] = {
            "manifest": file.as_posix(), "sha256": manifest.sha256,
            "files": len(manifest.entries), "bytes": manifest.total_bytes,
        }
    cards: dict[str, dict] = {}
    for card_file in sorted(models.glob("*.yaml")):
        try:
            card = load_card(card_file)
        except InputError as err:
            problems.extend(err.problems)
            continue
        entry = Entry(path=card.onnx, sha256=card.sha256, bytes=0, source=card.source)
        onnx = onnx_path(card_file, card)
        if (p := verify_entry(entry, root=card_file.parent, where=onnx.as_posix())) is not None:
            problems.append(Problem(p.where, p.what + f" (declared by {card_file})", p.expected, p.got))
        cards[card_file.stem] = {"card": card_file.as_posix(), "onnx": onnx.as_posix(), "sha256": card.sha256}
    if problems:
        raise InputError(problems, hint="restore the files (git checkout / dvc pull), or if the change is "
                                        "intended rewrite the manifest: python -m stages.fetch manifest DIR")
    return sets, cards


def cmd_verify(args: argparse.Namespace) -> int:
    sets, cards = verify_all(data=Path(args.data), models=Path(args.models))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    wanted = {f"data-{k}.json": v for k, v in sets.items()} | {f"model-{k}.json": v for k, v in cards.items()}
    for stale in out.glob("*.json"):
        if stale.name not in wanted:
            stale.unlink()
    for name, record in wanted.items():
        write_json(out / name, record)
    log.info("verified %d data set(s), %d model(s)", len(sets), len(cards))
    return 0


def read_columns(path: Path) -> tuple[dict[str, dict[str, str]], tuple[str, ...]]:
    """Extra per-file columns from a CSV with a ``path`` column."""
    with open(path, newline="", encoding="utf-8") as fh:
        reader = csv.DictReader(fh)
        cols = tuple(c for c in (reader.fieldnames or ()) if c != "path")
        if "path" not in (reader.fieldnames or ()):
            raise fail(str(path), "no 'path' column", expected="a CSV with path plus extra columns")
        return {row["path"]: {c: row[c] for c in cols} for row in reader}, cols


def carried_columns(file: Path) -> tuple[dict[str, dict[str, str]], tuple[str, ...], dict[str, str]]:
    """What a rewrite keeps from an existing manifest: extra columns and sources per path.

    Returns (path -> extra values, extra column names, path -> source); all empty when
    ``file`` does not exist. Rows whose file is gone simply drop out of the new manifest.
    """
    if not file.is_file():
        return {}, (), {}
    old = load_manifest(file)
    cols = tuple(c for c in old.columns if c not in (*REQUIRED_COLUMNS, "source"))
    return ({e.path: dict(e.extra) for e in old.entries}, cols,
            {e.path: e.source for e in old.entries if e.source})


def cmd_manifest(args: argparse.Namespace) -> int:
    root = Path(args.dir)
    if not root.is_dir():
        raise fail(str(root), "not a folder", expected="an existing data set folder")
    extra, cols, sources = carried_columns(root / MANIFEST_NAME)
    if args.columns:
        given, given_cols = read_columns(Path(args.columns))
        for path, values in given.items():
            extra[path] = {**extra.get(path, {}), **values}
        cols = (*cols, *(c for c in given_cols if c not in cols))
    entries = build_manifest_rows(root, extra=extra)
    if args.source_prefix:
        prefix = args.source_prefix.rstrip("/")
        sources = {e.path: f"{prefix}/{e.path}" for e in entries}
    entries = [Entry(e.path, e.sha256, e.bytes, sources.get(e.path), e.extra) for e in entries]
    write_text(root / MANIFEST_NAME, format_manifest(entries, extra_columns=cols,
                                                     with_source=any(e.source for e in entries)))
    print(f"wrote {root / MANIFEST_NAME}: {len(entries)} files")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m stages.fetch", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    v = sub.add_parser("verify", help="verify (and fetch) every manifest and model card")
    v.add_argument("--data", default="data", help="folder holding <set>/manifest.csv (default: data)")
    v.add_argument("--models", default="models", help="folder holding <name>.yaml model cards (default: models)")
    v.add_argument("--out", required=True, help="folder for the verified records (data-<set>.json, model-<name>.json)")
    v.set_defaults(func=cmd_verify)
    m = sub.add_parser("manifest", help="write DIR/manifest.csv for an existing folder")
    m.add_argument("dir", help="the data set folder")
    m.add_argument("--columns", help="CSV with a path column and extra per-file columns to include")
    m.add_argument("--source-prefix", help="record source=<prefix>/<path> for every file "
                   "(default: keep the sources of an existing manifest)")
    m.set_defaults(func=cmd_manifest)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    raise SystemExit(run_main(main))
