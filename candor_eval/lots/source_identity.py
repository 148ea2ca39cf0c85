"""The identity of a candidate: the SHA-256 its recording carries, and the prompt or code it names.

A **prompt** candidate (:func:`prompt_identity`) records the SHA-256 of its prompt file's bytes;
a local reader's (``local-ocr``) covers its makes list too
(:func:`candor_eval.lots.ocr_reading.reader_sha256`), so an edited list makes its recording stale.

A candidate whose answers come from production code (a ``python`` or ``http`` provider,
:mod:`candor_eval.lots.production`, :mod:`candor_eval.lots.route`) records, in ``prompt_sha256``, the
SHA-256 of its **source**: ``identify.sources.<candidate>``, a file or a folder of the
repository, relative to the project's folder (the working directory, where DVC runs the stage);
it may climb out of the project by leading ``..`` (``../shopapp``) but must stay inside the
repository top, and so must every file below a folder (no symlink out:
:func:`candor_eval.common.repository.first_outside`). By default, for a ``python`` provider, it is
the file of the entry point's module, shown relative to the project's folder when it is in the
repository (``../shopapp/analysis.py``).

* **A file**: the SHA-256 of its bytes (the same as ``sha256sum``).
* **A folder**: the SHA-256 of its listing, one line ``<sha256 of the file>  <path>\\n`` per
  file below it, sorted by path (posix, relative to the folder); ``__pycache__`` folders and
  ``*.pyc`` files are left out (they are not code, and ``.dvcignore`` leaves them out of the
  stage's deps too). An empty folder is an error: it identifies nothing.

* **Several paths** (``identify.sources.<candidate>`` a list: the adapter and the production folder, say):
  the SHA-256 of one listing over them all, one line ``<sha256 of the file>  <path>\\n`` per file below
  every listed path (a listed file is itself), ``<path>`` relative to the repository top (posix), sorted
  by that path, each file once (a file below two listed folders counts once); bytecode is left out as
  above. A list of one path is that path (its SHA is the file's or the folder's, as above), so a
  recording made before the list existed stays valid. The recording also keeps each listed path's
  own SHA-256 (:attr:`Identity.parts`, the line's ``sources``), so a stale recording names the paths
  that changed.

Two candidates that share a file (both prompt versions in one ``prompts.ts``) share its SHA: an edit
to one version makes both recordings stale. Split the versions into their own files and list, for
each candidate, its own file and the code they share; or accept that an edit records both again.

Replay compares this SHA with the recording's, so any change to the code, one byte of one
file, makes the recording stale (:mod:`candor_eval.lots.replay`).
"""
from __future__ import annotations

import hashlib
import importlib.machinery
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from candor_eval.common.errors import fail
from candor_eval.common.repository import first_outside, repository_top, shown_from
from candor_eval.lots.ocr_reading import reader_sha256
from candor_eval.lots.params import ExecProvider, HttpProvider, IdentifyParams, PythonProvider
from candor_eval.lots.production import on_import_path
from candor_eval.lots.vocabulary import Makes, Source, read_vocabulary


@dataclass(frozen=True)
class Identity:
    """What a candidate's answers come from: its prompt file (``None`` for production code), the production
    code it is (``code``: the path, or its paths joined by ", "; ``None`` for a prompt), the local reader's
    makes list, the SHA-256 its recording carries and, for several source paths, each one's SHA-256."""

    sha: str
    prompt_file: Path | None = None
    code: str | None = None
    makes: Makes | None = None
    parts: dict[str, str] | None = None     # several source paths: each path (as written) -> its own SHA-256


def prompt_identity(prompt_file: Path, *, makes: Makes | None = None) -> Identity:
    """A prompt candidate's identity: the SHA-256 of the prompt file; with ``makes`` (a local reader: what it
    can name), the reader's SHA-256 over the prompt and the list. InputError when the file is missing."""
    try:
        template = prompt_file.read_bytes()
    except (FileNotFoundError, IsADirectoryError):
        raise fail(prompt_file.as_posix(), "prompt not found", expected="the candidate's prompt file") from None
    if makes is not None:
        return Identity(sha=reader_sha256(template, makes.model_dump()), prompt_file=prompt_file, makes=makes)
    return Identity(sha=hashlib.sha256(template).hexdigest(), prompt_file=prompt_file)


def code_identity(code: Path, *, where: str) -> Identity:
    """A production-code candidate's identity: the SHA-256 of its source (:func:`source_sha256`)."""
    return Identity(sha=source_sha256(code, where=where), code=code.as_posix())


def sources_identity(paths: Sequence[Path], *, where: str) -> Identity:
    """A production-code candidate's identity over one or several paths (:func:`sources_sha256`); with
    several, ``parts`` holds each path's own SHA-256 (:func:`source_sha256`)."""
    if len(paths) == 1:
        return code_identity(paths[0], where=where)
    parts = {p.as_posix(): source_sha256(p, where=where) for p in paths}
    return Identity(sha=sources_sha256(paths, where=where), code=", ".join(parts), parts=parts)


def sources_sha256(paths: Sequence[Path], *, where: str, top: Path | None = None) -> str:
    """The SHA-256 of several source paths (module docstring): one path is :func:`source_sha256`; several,
    the listing of every file below them, by path relative to ``top`` (default: the working directory's
    repository top), sorted, each file once. InputError naming ``where`` when one is missing or empty."""
    if len(paths) == 1:
        return source_sha256(paths[0], where=where)
    top = repository_top(Path.cwd()) if top is None else top
    files: dict[str, Path] = {}
    for root in paths:
        source_sha256(root, where=where)                        # missing or empty: the error of one path
        for f in source_files(root):
            files[Path(os.path.abspath(f)).relative_to(top.absolute()).as_posix()] = f
    listing = "".join(f"{hashlib.sha256(files[rel].read_bytes()).hexdigest()}  {rel}\n" for rel in sorted(files))
    return hashlib.sha256(listing.encode("utf-8")).hexdigest()


def changed_parts(recorded: dict[str, str] | None, current: dict[str, str]) -> list[str]:
    """The paths whose SHA-256 differs between a recording's ``sources`` and the current ones (a path in only
    one of them counts), sorted; every current path when the recording kept none."""
    if recorded is None:
        return sorted(current)
    return sorted(p for p in set(recorded) | set(current) if recorded.get(p) != current.get(p))


def source_files(root: Path) -> list[Path]:
    """The files that make up ``root`` (itself when a file), sorted by relative posix path."""
    if root.is_file():
        return [root]
    return sorted((p for p in root.rglob("*") if p.is_file() and p.suffix != ".pyc"
                   and "__pycache__" not in p.relative_to(root).parts),
                  key=lambda p: p.relative_to(root).as_posix())


def source_sha256(root: Path, *, where: str) -> str:
    """The SHA-256 of a source file or folder (module docstring); InputError naming ``where`` when it is
    missing or an empty folder."""
    if not root.exists():
        raise fail(f"{where}: {root.as_posix()}", "production code not found",
                   expected="a file or folder of the repository")
    if root.is_file():
        return hashlib.sha256(root.read_bytes()).hexdigest()
    files = source_files(root)
    if not files:
        raise fail(f"{where}: {root.as_posix()}", "folder holds no file", expected="the production code's files")
    listing = "".join(f"{hashlib.sha256(p.read_bytes()).hexdigest()}  {p.relative_to(root).as_posix()}\n"
                      for p in files)
    return hashlib.sha256(listing.encode("utf-8")).hexdigest()


def module_file(module: str, *, where: str) -> Path:
    """The file of ``module`` (``pkg.mod``) on the import path, relative to the working directory when inside
    its repository top (:func:`candor_eval.common.repository.shown_from`); found without importing (no code of
    the package runs). InputError naming ``where``."""
    path: list[str] | None = None
    spec = None
    for i in range(len(parts := module.split("."))):
        spec = importlib.machinery.PathFinder.find_spec(".".join(parts[:i + 1]), path or sys.path)
        if spec is None:
            raise fail(where, f"module {'.'.join(parts[:i + 1])} not found on the import path",
                       expected="a module under the repository root or an installed package", got=module)
        path = list(spec.submodule_search_locations or [])
    if spec is None or not spec.origin or not Path(spec.origin).is_file():
        raise fail(where, f"module {module} has no source file", expected="a .py module or package", got=module)
    return shown_from(Path(spec.origin).resolve(), folder=Path.cwd().resolve())


def candidate_identity(params: IdentifyParams, candidate: str, *, lots: Path, makes_file: Source,
                       params_file: str) -> Identity:
    """The :class:`Identity` of ``candidate``: its source ``identify.sources.<candidate>`` (relative to the
    working directory, inside its repository top with every file below it: InputError otherwise), else the
    default place (``<lots>/prompts/<candidate>.txt``; a python provider's module file, found on the import
    path with the working directory's import roots on it); a local reader's makes list read from
    ``makes_file``. ``params_file`` names the params in error messages."""
    provider = params.provider(candidate)
    sources = params.source_paths(candidate)
    where = f"{params_file}:identify.sources.{candidate}"
    for source in sources or []:
        if (out := first_outside(source, folder=Path.cwd())) is not None:
            entry, real = out
            raise fail(where, "leads out of the repository"
                       + ("" if entry == Path(source) else f" (a symlink below {source})"),
                       expected=f"a file or folder inside {repository_top(Path.cwd()).as_posix()}, and every file "
                                "below it (no symlink out)",
                       got=f"{entry.as_posix()} -> {real.as_posix()}")
    if isinstance(provider, PythonProvider | HttpProvider | ExecProvider):
        if sources is None:
            assert isinstance(provider, PythonProvider)     # http and exec providers have a source: IdentifyParams
            on_import_path()
            return code_identity(module_file(provider.module, where=f"{params_file}:identify.providers."
                                                                     f"{candidate}.python"), where=where)
        return sources_identity([Path(s) for s in sources], where=where)
    if sources is not None and len(sources) > 1:
        raise fail(where, "a prompt candidate has one source, its prompt file", expected="one path",
                   got=sources, hint="several paths identify production code (a python, http or exec provider)")
    prompt_file = Path(sources[0]) if sources else lots / "prompts" / f"{candidate}.txt"
    makes = read_vocabulary(Makes, makes_file) if provider == "local-ocr" else None
    return prompt_identity(prompt_file, makes=makes)
