"""candor_eval/review/revisions.py: files at a git revision or DVC experiment, on a tiny real git
repository built in ``tmp_path`` (two commits, a tag, DVC-style ``refs/exps`` refs)."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from candor_eval.common.errors import InputError
from candor_eval.review.revisions import WORKSPACE, folders_at, read_at, resolve_revision


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c",
                           "commit.gpgsign=false", *args], cwd=repo, capture_output=True, text=True,
                          check=True).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> dict[str, str]:
    """First commit: ``metrics/stats.json`` = 1 and ``metrics/outcomes/detector/``; second commit:
    stats = 2, ``metrics/outcomes/night/`` added, ``metrics/old.json`` removed. Tag ``v1`` on the
    first; experiments ``exp-a`` (on the first) and ``exp-b`` (twice, under two baselines)."""
    git(tmp_path, "init", "-q", "-b", "main")
    m = tmp_path / "metrics"
    (m / "outcomes" / "detector").mkdir(parents=True)
    (m / "outcomes" / "detector" / "t.csv").write_text("frame\n")
    (m / "outcomes" / "identification.csv").write_text("lot\n")
    (m / "stats.json").write_text('{"v": 1}\n')
    (m / "old.json").write_text("old\n")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "first")
    first = git(tmp_path, "rev-parse", "HEAD")
    git(tmp_path, "tag", "v1")
    (m / "stats.json").write_text('{"v": 2}\n')
    (m / "outcomes" / "night").mkdir()
    (m / "outcomes" / "night" / "t.csv").write_text("frame\n")
    (m / "old.json").unlink()
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "second")
    second = git(tmp_path, "rev-parse", "HEAD")
    git(tmp_path, "update-ref", f"refs/exps/{first[:2]}/{first[2:]}/exp-a", first)
    git(tmp_path, "update-ref", f"refs/exps/{first[:2]}/{first[2:]}/exp-b", first)
    git(tmp_path, "update-ref", f"refs/exps/{second[:2]}/{second[2:]}/exp-b", second)
    return {"first": first, "second": second, "root": str(tmp_path)}


def test_the_workspace_stays_itself(repo):
    """:data:`WORKSPACE` is not resolved (the files on disk)."""
    assert resolve_revision(WORKSPACE, repo=Path(repo["root"])) == "workspace"


@pytest.mark.parametrize("rev,which", [("HEAD", "second"), ("main", "second"), ("HEAD~1", "first"),
                                       ("v1", "first"), ("short-first", "first"), ("first", "first"),
                                       ("exp-a", "first")])
def test_a_git_revision_or_experiment_name_resolves_to_its_commit(repo, rev, which):
    """Anything ``git rev-parse`` accepts (branch, tag, ``HEAD~1``, a short SHA), or an experiment
    name found under ``refs/exps``: the full 40-hex SHA of its commit."""
    rev = {"short-first": repo["first"][:8], "first": repo["first"]}.get(rev, rev)
    assert resolve_revision(rev, repo=Path(repo["root"])) == repo[which]


def test_an_experiment_name_under_two_baselines_is_ambiguous(repo):
    """Two experiments of one name: an InputError naming it and both refs, suggesting the SHA."""
    with pytest.raises(InputError) as info:
        resolve_revision("exp-b", repo=Path(repo["root"]))
    (problem,) = info.value.problems
    assert (problem.where, problem.what) == ("exp-b", "experiment name is ambiguous")
    assert problem.got is not None and problem.got.count("refs/exps/") == 2 and problem.got.count("/exp-b") == 2
    assert info.value.hint == "pass the experiment's commit SHA instead"


@pytest.mark.parametrize("rev", ["nope", "exp", "HEAD~5", "metrics"])
def test_an_unknown_revision_is_an_input_error_naming_it(repo, rev):
    """Neither a revision nor an experiment (``exp`` is only part of a name): an InputError naming it."""
    with pytest.raises(InputError, match=f"^{rev}: not a git revision or DVC experiment name") as info:
        resolve_revision(rev, repo=Path(repo["root"]))
    assert "git log --oneline" in (info.value.hint or "")


def test_read_at_a_revision_the_workspace_and_an_absent_file(repo):
    """The file's text at the commit, on disk for the workspace; ``None`` where it does not exist."""
    root = Path(repo["root"])
    assert read_at(repo["first"], "metrics/stats.json", repo=root) == '{"v": 1}\n'
    assert read_at(repo["second"], "metrics/stats.json", repo=root) == '{"v": 2}\n'
    assert read_at(repo["first"], "metrics/old.json", repo=root) == "old\n"
    assert read_at(repo["second"], "metrics/old.json", repo=root) is None          # removed in the second
    (root / "metrics" / "stats.json").write_text('{"v": 3}\n')                       # uncommitted
    assert read_at(WORKSPACE, "metrics/stats.json", repo=root) == '{"v": 3}\n'
    assert read_at(WORKSPACE, "metrics/old.json", repo=root) is None
    assert read_at(WORKSPACE, "metrics", repo=root) is None                         # a folder is no file


def test_folders_at_a_revision_and_the_workspace(repo):
    """The folders directly under a path, sorted, files left out; none under an absent path."""
    root = Path(repo["root"])
    assert folders_at(repo["first"], "metrics/outcomes", repo=root) == ["detector"]
    assert folders_at(repo["second"], "metrics/outcomes", repo=root) == ["detector", "night"]
    assert folders_at(repo["second"], "metrics/outcomes/", repo=root) == ["detector", "night"]
    assert folders_at(repo["second"], "metrics/none", repo=root) == []
    (root / "metrics" / "outcomes" / "aaa").mkdir()
    assert folders_at(WORKSPACE, "metrics/outcomes", repo=root) == ["aaa", "detector", "night"]
    assert folders_at(WORKSPACE, "metrics/none", repo=root) == []
    assert folders_at(WORKSPACE, "metrics/stats.json", repo=root) == []


@pytest.mark.parametrize("rev", ["first", WORKSPACE])
def test_read_at_a_folder_is_no_file(repo, rev):
    """A folder where a file was asked for is "no file there" at a revision as in the workspace
    (``git show`` would print the folder's listing as if it were the file)."""
    root = Path(repo["root"])
    assert read_at(repo.get(rev, rev), "metrics/outcomes", repo=root) is None


def test_a_file_that_is_not_utf8_at_a_revision_is_named(repo):
    """Bytes that are not UTF-8 are an InputError naming ``rev:path`` and the byte, whatever the
    machine's locale (git's output is decoded by the reader, not by the locale)."""
    root = Path(repo["root"])
    (root / "latin.csv").write_bytes("caf\xe9\n".encode("latin-1"))
    git(root, "add", "latin.csv")
    git(root, "commit", "-q", "-m", "latin")
    head = git(root, "rev-parse", "HEAD")
    with pytest.raises(InputError, match=rf"{head}:latin.csv: not UTF-8 text \(byte 3"):
        read_at(head, "latin.csv", repo=root)


def test_folders_at_a_revision_keep_non_ascii_names(repo):
    """Folder names come back as written (git quotes them in its default output)."""
    root = Path(repo["root"])
    (root / "metrics" / "outcomes" / "café").mkdir()
    (root / "metrics" / "outcomes" / "café" / "t.csv").write_text("frame\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "accent")
    head = git(root, "rev-parse", "HEAD")
    assert folders_at(head, "metrics/outcomes", repo=root) == folders_at(WORKSPACE, "metrics/outcomes", repo=root)
    assert "café" in folders_at(head, "metrics/outcomes", repo=root)


def test_a_branch_only_on_a_remote_resolves_as_dvc_does(repo, tmp_path_factory):
    """A CI clone of another branch has ``origin/main`` and no ``main``: ``main`` is the remote's branch
    (DVC's fallback), as long as the remotes that have it agree."""
    clone = tmp_path_factory.mktemp("clone")
    git(clone, "clone", "-q", "--no-checkout", repo["root"], ".")
    git(clone, "checkout", "-q", "-b", "feature", repo["first"])
    git(clone, "branch", "-q", "-D", "main")
    assert resolve_revision("main", repo=clone) == repo["second"]
    git(clone, "update-ref", "refs/remotes/fork/main", repo["first"])
    with pytest.raises(InputError, match="^main: branch of more than one remote") as info:
        resolve_revision("main", repo=clone)
    assert info.value.problems[0].got == "'fork/main, origin/main'"
    git(clone, "update-ref", "refs/remotes/fork/main", repo["second"])
    assert resolve_revision("main", repo=clone) == repo["second"]
    with pytest.raises(InputError, match="^ain: not a git revision"):     # a ref's tail is no branch name
        resolve_revision("ain", repo=clone)
