"""The repository a candor project lives in: its top folder, where the project's own code is imported from,
and which paths from the project folder stay inside the repository.

A candor project is a folder of a Git + DVC repository (``candor init eval`` puts it in ``eval/`` beside the
team's own ``dvc.yaml``), and DVC runs the project's stages in that folder, so the team's code is usually
*above* the working directory of a stage (``../shopapp``).

* The **repository top** of a folder (:func:`repository_top`) is the nearest folder, from it upwards, that
  holds ``.git`` (the top folder of the Git work tree; ``.git`` is a file in a linked worktree or a
  submodule); without one, the nearest that holds a ``.dvc`` folder (a DVC project without Git:
  ``dvc init --no-scm``); without either, the folder itself.
* The **import roots** of a project folder (:func:`import_roots`) are the folder itself, then each of its
  parents up to the repository top, nearest first: ``eval/``, then the repository top, so the team's
  package at the top (``shopapp/``) imports as ``shopapp`` from ``eval/`` as it does from the top.
* A **source path** (``identify.sources``) is relative to the project folder, posix, and may leave it
  only by leading ``..`` components (``../shopapp``, ``../../lib/app.py``; never ``a/../b``), so it
  reads as what it names. :func:`source_problem` checks how it is written (no file is read);
  :func:`outside_top` checks where it leads: a source must stay inside the repository top, where DVC
  hashes it as a dep of the stage (a path of only ``..`` would hold the project itself, and so the
  stage's own outputs); for a folder, so must every file and folder below it (:func:`first_outside`: a
  symlink inside it to a file elsewhere would make the candidate's identity bytes the repository does not
  hold, as a model card's ONNX file may not be a symlink out of its folder).
* The **DVC project** of a folder (:func:`dvc_root`) is the nearest folder, from it upwards, holding a
  ``.dvc`` folder: where ``candor init`` and ``candor plots`` may work.
"""
from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath


def repository_top(folder: Path) -> Path:
    """The repository top of ``folder`` (module docstring), an absolute path."""
    folder = folder.absolute()
    chain = [folder, *folder.parents]
    git = next((p for p in chain if (p / ".git").exists()), None)
    dvc = next((p for p in chain if (p / ".dvc").is_dir()), None)
    return git or dvc or folder


def import_roots(folder: Path) -> list[Path]:
    """``folder`` and its parents up to its repository top, nearest first (module docstring)."""
    folder, top = folder.absolute(), repository_top(folder)
    if not folder.is_relative_to(top):
        return [folder]
    return [folder, *(p for p in folder.parents if p.is_relative_to(top))]


def source_problem(path: str) -> str | None:
    """Why ``path`` is not a well-written source path (module docstring), or None. Pure: no file is read."""
    if not path:
        return "empty path"
    if "\\" in path:
        return "backslash in path (paths are POSIX, '/'-separated)"
    if path.startswith("/") or re.match(r"^[A-Za-z]:", path):
        return "absolute path (paths are relative to the project's folder, the folder of its dvc.yaml)"
    parts = path.split("/")
    if any(p in ("", ".") for p in parts):
        return "empty or '.' path component"
    if any(p != p.strip() for p in parts):
        return "a path component starts or ends with whitespace (a reader that trims it names another file)"
    named = list(PurePosixPath(path).parts)
    while named and named[0] == "..":
        named.pop(0)
    if not named:
        return "only '..' components: a folder holding the project itself (and so its own outputs)"
    if ".." in named:
        return "'..' after a folder name (write the path without it: ../app, not data/../../app)"
    return None


def outside_top(path: str, *, folder: Path) -> Path | None:
    """Where ``path`` (relative to ``folder``) really leads when that is outside ``folder``'s repository top
    (symlinks followed), else None."""
    real = (folder / path).resolve()
    return None if real.is_relative_to(repository_top(folder).resolve()) else real


def first_outside(path: str, *, folder: Path) -> tuple[Path, Path] | None:
    """The first of ``path`` (relative to ``folder``) and, for a folder, the files and folders below it (sorted,
    symlinks followed, but not walked into) whose real place is outside ``folder``'s repository top (as written:
    ``path`` or ``path/<below>``), with that place; None when all stay inside."""
    top = repository_top(folder).resolve()
    root = folder / path
    for entry in [root, *(sorted(root.rglob("*")) if root.is_dir() else [])]:
        if not (real := entry.resolve()).is_relative_to(top):
            return Path(path) / entry.relative_to(root), real
    return None


def shown_from(path: Path, *, folder: Path) -> Path:
    """``path`` as the project sees it: relative to ``folder`` (``../shopapp/analysis.py``) when it lies inside
    ``folder``'s repository top, else as given."""
    path, folder = path.absolute(), folder.absolute()
    if not path.is_relative_to(repository_top(folder)):
        return path
    return Path(os.path.relpath(path, folder))


def dvc_root(folder: Path, top: Path | None = None) -> Path | None:
    """The nearest folder from ``folder`` up (to ``top``, or the file system's root) holding a ``.dvc`` folder:
    the DVC project ``folder`` is in, or None."""
    for candidate in [folder, *folder.parents]:
        if (candidate / ".dvc").is_dir():
            return candidate
        if candidate == top:
            break
    return None
