"""A candidate's identity: a prompt's SHA-256 (a local reader's covering its makes list), production code's (a
file's bytes, a folder's sorted listing, bytecode left out), and the module file found without running the package."""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from candor_eval.common.errors import InputError
from candor_eval.lots.params import IdentifyParams
from candor_eval.lots.source_identity import (
    Identity,
    candidate_identity,
    changed_parts,
    code_identity,
    module_file,
    prompt_identity,
    source_files,
    source_sha256,
    sources_identity,
    sources_sha256,
)
from candor_eval.lots.vocabulary import Makes


def test_a_file_is_the_sha256_of_its_bytes(tmp_path):
    f = tmp_path / "analysis.py"
    f.write_bytes(b"def analyze(images, context):\n    return {}\n")
    assert source_sha256(f, where="w") == hashlib.sha256(f.read_bytes()).hexdigest()


def test_a_folder_is_the_sha256_of_its_listing_and_bytecode_is_left_out(tmp_path):
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "b.py").write_text("b\n")
    (root / "sub" / "a.py").write_text("a\n")
    listing = "".join(f"{hashlib.sha256(t.encode()).hexdigest()}  {p}\n"
                      for p, t in [("b.py", "b\n"), ("sub/a.py", "a\n")])
    expected = hashlib.sha256(listing.encode()).hexdigest()
    assert source_sha256(root, where="w") == expected
    (root / "__pycache__").mkdir()
    (root / "__pycache__" / "b.cpython-311.pyc").write_bytes(b"\0")
    (root / "c.pyc").write_bytes(b"\1")
    assert source_sha256(root, where="w") == expected              # importing the code changes nothing
    assert [p.name for p in source_files(root)] == ["b.py", "a.py"]
    (root / "sub" / "a.py").write_text("a  \n")                     # one byte of one file
    assert source_sha256(root, where="w") != expected
    (root / "sub" / "a.py").rename(root / "sub" / "z.py")           # a rename is a change too
    assert source_sha256(root, where="w") != expected


@pytest.mark.parametrize("make, needle", [
    (lambda p: None, "production code not found"),
    (lambda p: p.mkdir(), "folder holds no file"),
])
def test_missing_or_empty_sources_name_the_key_and_the_path(tmp_path, make, needle):
    make(tmp_path / "gone")
    with pytest.raises(InputError) as err:
        source_sha256(tmp_path / "gone", where="identify.sources.x")
    assert needle in err.value.message and "identify.sources.x" in err.value.message


def test_module_file_is_found_without_importing(tmp_path, monkeypatch):
    pkg = tmp_path / "prodpkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("raise RuntimeError('the package ran')\n")
    (pkg / "analysis.py").write_text("def analyze(images, context): ...\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])       # (restored by monkeypatch)
    assert module_file("prodpkg.analysis", where="w").as_posix() == "prodpkg/analysis.py"
    assert "prodpkg" not in sys.modules
    with pytest.raises(InputError, match="module prodpkg.missing not found"):
        module_file("prodpkg.missing", where="w")


def test_a_prompt_is_the_sha256_of_its_bytes(tmp_path):
    """A prompt candidate: SHA-256 of the prompt file; no code, no makes."""
    f = tmp_path / "p.txt"
    f.write_bytes(b"Name the model.\n")
    assert prompt_identity(f) == Identity(sha=hashlib.sha256(b"Name the model.\n").hexdigest(), prompt_file=f)


def test_a_local_reader_covers_its_makes_list(tmp_path):
    """A local reader: SHA-256 of the prompt, a newline and ``{"makes": [...]}`` as canonical JSON."""
    f = tmp_path / "ocr.txt"
    f.write_bytes(b"r\n")
    makes = Makes(makes=["Dell"])
    got = prompt_identity(f, makes=makes)
    assert got.sha == hashlib.sha256(b'r\n\n{"makes": ["Dell"]}').hexdigest() and got.makes == makes
    assert got.sha != prompt_identity(f, makes=Makes(makes=["HP"])).sha


def test_a_missing_prompt_names_the_file(tmp_path):
    with pytest.raises(InputError, match="p.txt: prompt not found"):
        prompt_identity(tmp_path / "p.txt")


def test_code_identity_is_its_source_sha256(tmp_path):
    f = tmp_path / "analysis.py"
    f.write_bytes(b"x = 1\n")
    assert code_identity(f, where="w") == Identity(sha=hashlib.sha256(b"x = 1\n").hexdigest(), code=f.as_posix())


def test_candidate_identity_finds_the_prompt_the_source_or_the_module(tmp_path, monkeypatch, user_code):
    """Default place ``<lots>/prompts/<c>.txt``; ``identify.sources.<c>`` overrides it; a local reader reads
    ``makes_file``; a python provider without a source is its entry point's module file."""
    monkeypatch.chdir(user_code)
    (user_code / "prompts").mkdir()
    (user_code / "prompts" / "a.txt").write_bytes(b"A\n")
    (user_code / "other.txt").write_bytes(b"B\n")
    (user_code / "makes.yaml").write_text("makes: [Dell]\n")
    (user_code / "my_app.py").write_text("def analyze(images, context):\n    return {}\n")
    p = IdentifyParams(candidates=["a", "b", "o", "py"], sources={},
                       providers={"o": "local-ocr", "py": {"python": "my_app:analyze"}})

    def ident(c: str, params: IdentifyParams = p) -> Identity:
        return candidate_identity(params, c, lots=Path("."), makes_file="makes.yaml", params_file="p.yaml")

    assert ident("a").sha == hashlib.sha256(b"A\n").hexdigest() and ident("a").makes is None
    (user_code / "prompts" / "o.txt").write_bytes(b"A\n")
    assert ident("o").makes == Makes(makes=["Dell"]) and ident("o").sha != ident("a").sha
    assert ident("py") == Identity(sha=hashlib.sha256((user_code / "my_app.py").read_bytes()).hexdigest(),
                                   code="my_app.py")
    with_source = p.model_copy(update={"sources": {"a": "other.txt", "b": "other.txt", "o": "other.txt",
                                                   "py": "other.txt"}})
    assert ident("a", with_source).sha == hashlib.sha256(b"B\n").hexdigest()
    assert ident("py", with_source).code == "other.txt"
    with pytest.raises(InputError, match="prompts/b.txt: prompt not found"):
        ident("b")


def test_a_project_in_a_subfolder_names_code_at_the_repository_top(tmp_path, monkeypatch, user_code):
    """``sources: ../shopapp`` from ``eval/``; without a source, the module file shown from ``eval/``; a source
    leading out of the repository is refused naming the key."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "eval").mkdir()
    (repo / "shop_ident_pkg").mkdir()
    (repo / "shop_ident_pkg/__init__.py").write_text("")
    (repo / "shop_ident_pkg/analysis.py").write_text("def analyze(images, context):\n    return {}\n")
    (tmp_path / "outside.py").write_text("x = 1\n")
    monkeypatch.chdir(repo / "eval")
    p = IdentifyParams(candidates=["py"], providers={"py": {"python": "shop_ident_pkg.analysis:analyze"}})

    def ident(sources: dict[str, str]) -> Identity:
        return candidate_identity(p.model_copy(update={"sources": sources}), "py", lots=Path("data/lots"),
                                  makes_file="makes.yaml", params_file="params.yaml")

    module = repo / "shop_ident_pkg/analysis.py"
    assert ident({}) == Identity(sha=hashlib.sha256(module.read_bytes()).hexdigest(),
                                 code="../shop_ident_pkg/analysis.py")
    assert ident({"py": "../shop_ident_pkg"}) == code_identity(Path("../shop_ident_pkg"), where="w")
    with pytest.raises(InputError) as err:
        ident({"py": "../../outside.py"})
    assert err.value.message.startswith("params.yaml:identify.sources.py: leads out of the repository")
    assert repo.resolve().as_posix() in err.value.message


def test_a_source_folder_holding_a_symlink_out_of_the_repository_is_refused(tmp_path, monkeypatch):
    """Like a model card's ONNX symlink out of its folder: the bytes would be the candidate's identity, yet
    the repository does not hold them. The source itself a symlink out is refused too."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "app").mkdir()
    (repo / "app/analysis.py").write_text("x = 1\n")
    (tmp_path / "outside.py").write_text("y = 2\n")
    monkeypatch.chdir(repo)
    p = IdentifyParams(candidates=["py"], providers={"py": {"python": "app.analysis:analyze"}})

    def ident(source: str) -> Identity:
        return candidate_identity(p.model_copy(update={"sources": {"py": source}}), "py", lots=Path("data/lots"),
                                  makes_file="makes.yaml", params_file="params.yaml")

    assert ident("app") == code_identity(Path("app"), where="w")
    (repo / "app/helper.py").symlink_to(tmp_path / "outside.py")
    with pytest.raises(InputError) as err:
        ident("app")
    assert err.value.message.startswith("params.yaml:identify.sources.py: leads out of the repository "
                                        "(a symlink below app)")
    assert f"app/helper.py -> {(tmp_path / 'outside.py').resolve().as_posix()}" in err.value.message
    (repo / "linked.py").symlink_to(tmp_path / "outside.py")
    with pytest.raises(InputError, match=r"sources\.py: leads out of the repository \(expected") as err:
        ident("linked.py")
    assert "got 'linked.py -> " in err.value.message


def test_an_exec_candidate_is_its_source_code_folder_included(tmp_path, monkeypatch):
    """An exec candidate's identity is its source's, like an http one's: a folder is its listing's SHA-256."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "webapp").mkdir()
    (tmp_path / "webapp/analyze.mjs").write_text("console.log(1)\n")
    params = IdentifyParams(candidates=["w"], providers={"w": {"exec": ["node", "webapp/analyze.mjs"]}},
                            sources={"w": "webapp"})
    got = candidate_identity(params, "w", lots=tmp_path, makes_file=tmp_path / "none.yaml", params_file="p.yaml")
    assert got == code_identity(Path("webapp"), where="p.yaml:identify.sources.w")


def test_several_paths_are_one_listing_by_repository_path_each_file_once(tmp_path, monkeypatch):
    """Two paths: the SHA-256 of the listing of every file below them by path from the repository top, sorted,
    a file below two listed paths once; each path's own SHA-256 kept as ``parts``."""
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "webapp/src/services").mkdir(parents=True)
    (repo / "eval").mkdir()
    (repo / "webapp/src/prompts.ts").write_text("v1\n")
    (repo / "webapp/src/services/ai.ts").write_text("ai\n")
    monkeypatch.chdir(repo / "eval")
    paths = [Path("../webapp/src/services"), Path("../webapp/src/prompts.ts"), Path("../webapp/src/services/ai.ts")]
    listing = (f"{hashlib.sha256(b'v1' + bytes([10])).hexdigest()}  webapp/src/prompts.ts\n"
               f"{hashlib.sha256(b'ai' + bytes([10])).hexdigest()}  webapp/src/services/ai.ts\n")
    assert sources_sha256(paths, where="w") == hashlib.sha256(listing.encode()).hexdigest()
    got = sources_identity(paths[:2], where="w")
    assert got.sha == sources_sha256(paths, where="w")                     # ai.ts listed twice counts once
    assert got.code == "../webapp/src/services, ../webapp/src/prompts.ts"
    assert got.parts == {"../webapp/src/services": source_sha256(paths[0], where="w"),
                         "../webapp/src/prompts.ts": hashlib.sha256(b"v1\n").hexdigest()}
    with pytest.raises(InputError, match="production code not found"):
        sources_sha256([paths[1], Path("../webapp/gone.ts")], where="w")


def test_a_list_of_one_path_is_that_path_so_old_recordings_stay_valid(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "app").mkdir()
    (tmp_path / "app/a.py").write_text("a\n")
    for path in ("app", "app/a.py"):
        assert sources_sha256([Path(path)], where="w") == source_sha256(Path(path), where="w")
        assert sources_identity([Path(path)], where="w") == code_identity(Path(path), where="w")
    params = IdentifyParams(candidates=["w"], providers={"w": {"exec": ["node", "a.mjs"]}}, sources={"w": ["app"]})
    assert candidate_identity(params, "w", lots=tmp_path, makes_file="m.yaml", params_file="p.yaml") == \
        code_identity(Path("app"), where="w")


def test_changed_parts_names_each_path_whose_sha_differs():
    assert changed_parts({"a": "1", "b": "2"}, {"a": "1", "b": "3"}) == ["b"]
    assert changed_parts({"a": "1", "b": "2"}, {"a": "1", "c": "2"}) == ["b", "c"]   # dropped and added
    assert changed_parts(None, {"b": "1", "a": "2"}) == ["a", "b"]                    # kept none: every path


def test_a_prompt_candidate_has_one_source(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "p.txt").write_text("p\n")
    params = IdentifyParams(candidates=["p"], sources={"p": ["p.txt", "q.txt"]})
    with pytest.raises(InputError, match="a prompt candidate has one source") as err:
        candidate_identity(params, "p", lots=tmp_path, makes_file="m.yaml", params_file="p.yaml")
    assert "p.yaml:identify.sources.p" in err.value.message
    one = IdentifyParams(candidates=["p"], sources={"p": ["p.txt"]})
    assert candidate_identity(one, "p", lots=tmp_path, makes_file="m.yaml", params_file="p.yaml") == \
        prompt_identity(Path("p.txt"))
