"""The repository a project lives in: its top (Git first, then DVC, else the folder itself), the import roots from
the project folder up to the top, how a source path may climb out of the project, and where it really leads."""
from __future__ import annotations

from pathlib import Path

import pytest

from candor_eval.common.repository import (
    first_outside,
    import_roots,
    outside_top,
    repository_top,
    shown_from,
    source_problem,
)


def tree(root: Path, *dirs: str, files: tuple[str, ...] = ()) -> Path:
    for d in dirs:
        (root / d).mkdir(parents=True, exist_ok=True)
    for f in files:
        (root / f).parent.mkdir(parents=True, exist_ok=True)
        (root / f).write_text("")
    return root


def test_the_top_is_the_git_work_tree_then_the_dvc_project_then_the_folder_itself(tmp_path):
    repo = tree(tmp_path / "repo", ".git", "eval/data", "ml/.dvc", "ml/eval")
    assert repository_top(repo / "eval/data") == repo
    assert repository_top(repo / "ml/eval") == repo             # a DVC project in a subfolder: still Git's top
    assert repository_top(repo) == repo
    linked = tree(tmp_path / "linked", "eval", files=(".git",))     # a linked worktree: .git is a file
    assert repository_top(linked / "eval") == linked
    plain = tree(tmp_path / "plain", ".dvc", "eval")                 # dvc init --no-scm
    assert repository_top(plain / "eval") == plain
    bare = tree(tmp_path / "bare", "eval")
    assert repository_top(bare / "eval") == bare / "eval"
    tree(tmp_path / "file", "eval", files=(".dvc",))                 # a .dvc that is not a folder marks nothing
    assert repository_top(tmp_path / "file/eval") == tmp_path / "file/eval"


def test_the_import_roots_are_the_folder_then_its_parents_up_to_the_top(tmp_path):
    repo = tree(tmp_path / "repo", ".git", "eval", "ml/bench/eval")
    assert import_roots(repo / "eval") == [repo / "eval", repo]
    assert import_roots(repo / "ml/bench/eval") == [repo / "ml/bench/eval", repo / "ml/bench", repo / "ml", repo]
    assert import_roots(repo) == [repo]
    assert import_roots(tree(tmp_path / "bare", "eval") / "eval") == [tmp_path / "bare/eval"]


@pytest.mark.parametrize("path", ["shopapp", "shopapp/analysis.py", "../shopapp", "../../lib/app.py",
                                  "data/lots/prompts/a.txt", "..x/y", "a..b"])
def test_a_source_may_leave_the_project_by_leading_dotdots(path):
    assert source_problem(path) is None


@pytest.mark.parametrize(("path", "needle"), [
    ("", "empty path"),
    ("a\\b", "backslash"),
    ("/srv/app", "absolute path"),
    ("C:/app", "absolute path"),
    ("a//b", "empty or '.' path component"),
    ("./app", "empty or '.' path component"),
    ("../app/", "empty or '.' path component"),
    ("../ app", "whitespace"),
    ("..", "only '..' components"),
    ("../..", "only '..' components"),
    ("a/../b", "'..' after a folder name"),
    ("../a/../../b", "'..' after a folder name"),
])
def test_other_source_paths_are_refused_with_the_reason(path, needle):
    assert needle in (source_problem(path) or "")


def test_outside_top_follows_the_path_and_its_symlinks(tmp_path):
    repo = tree(tmp_path / "repo", ".git", "eval", "shopapp", files=("shopapp/analysis.py",))
    tree(tmp_path, "elsewhere", files=("elsewhere/app.py",))
    assert outside_top("../shopapp", folder=repo / "eval") is None
    assert outside_top("../shopapp/analysis.py", folder=repo / "eval") is None
    assert outside_top("../../elsewhere", folder=repo / "eval") == (tmp_path / "elsewhere").resolve()
    (repo / "linked").symlink_to(tmp_path / "elsewhere")
    assert outside_top("../linked/app.py", folder=repo / "eval") == (tmp_path / "elsewhere/app.py").resolve()


def test_first_outside_checks_a_folder_and_everything_below_it(tmp_path):
    """A folder inside the repository holding a symlink to a file (or a folder) elsewhere leads out; the entry is
    named as written from the project folder."""
    repo = tree(tmp_path / "repo", ".git", "eval", "shopapp/sub", files=("shopapp/analysis.py",))
    tree(tmp_path, "elsewhere", files=("elsewhere/secret.py",))
    assert first_outside("../shopapp", folder=repo / "eval") is None
    (repo / "shopapp/inner.py").symlink_to(repo / "shopapp/analysis.py")      # a symlink inside: fine
    assert first_outside("../shopapp", folder=repo / "eval") is None
    (repo / "shopapp/sub/z.py").symlink_to(tmp_path / "elsewhere/secret.py")
    assert first_outside("../shopapp", folder=repo / "eval") == (Path("../shopapp/sub/z.py"),
                                                                  (tmp_path / "elsewhere/secret.py").resolve())
    assert first_outside("../shopapp/analysis.py", folder=repo / "eval") is None
    (repo / "shopapp/sub/z.py").unlink()
    (repo / "shopapp/a-dir").symlink_to(tmp_path / "elsewhere")
    assert first_outside("../shopapp", folder=repo / "eval") == (Path("../shopapp/a-dir"),
                                                                  (tmp_path / "elsewhere").resolve())
    assert first_outside("../../elsewhere", folder=repo / "eval") == (Path("../../elsewhere"),
                                                                       (tmp_path / "elsewhere").resolve())


def test_shown_from_is_relative_to_the_project_inside_the_repository_only(tmp_path):
    repo = tree(tmp_path / "repo", ".git", "eval", files=("shopapp/analysis.py", "eval/local.py"))
    assert shown_from(repo / "shopapp/analysis.py", folder=repo / "eval") == Path("../shopapp/analysis.py")
    assert shown_from(repo / "eval/local.py", folder=repo / "eval") == Path("local.py")
    outside = tree(tmp_path, files=("site/pkg/mod.py",)) / "site/pkg/mod.py"
    assert shown_from(outside, folder=repo / "eval") == outside


def test_the_dvc_project_is_found_from_a_subfolder_up_to_the_top(tmp_path):
    from candor_eval.common.repository import dvc_root

    (tmp_path / "r/.dvc").mkdir(parents=True)
    (tmp_path / "r/eval/x").mkdir(parents=True)
    assert dvc_root(tmp_path / "r/eval/x") == tmp_path / "r"
    assert dvc_root(tmp_path / "r/eval/x", top=tmp_path / "r/eval") is None
