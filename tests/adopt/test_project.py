"""What ``candor init`` plans to write and what it may overwrite (candor_eval/adopt/project.py)."""
from __future__ import annotations

from candor_eval.adopt.lockfile import InitRecord, Lock
from candor_eval.adopt.project import DEMO_PARTS, conflicts, demo_files, owned, plan
from tests.conftest import ROOT


def tiny_demo() -> dict[str, bytes]:
    return {"params.yaml": b"x: 1\n", "data/a.txt": b"a"}


def make(track="detector", demo=False, gitignore=""):
    return plan(track=track, demo=demo, version="1.0", code={"fetch": "f" * 64}, existing_gitignore=gitignore,
                demo_source=tiny_demo)


def test_a_detector_project_gets_the_scaffold_the_templates_the_lock_and_the_gitignore_block():
    p = make()
    assert sorted(p.files) == [".gitignore", "candor.lock", "dvc.yaml", "params.yaml",
                               *(f"plots/templates/{t}.json" for t in ("anatomy", "confusion", "curve", "overlay",
                                                                         "per_class", "threshold"))]
    assert p.files["plots/templates/overlay.json"] == (ROOT / "plots/templates/overlay.json").read_bytes()
    assert b"gate:" in p.files["params.yaml"] and b"identify:" not in p.files["params.yaml"]
    lots = make("lots").files
    assert "plots/templates/overlay.json" not in lots
    assert lots["data/lots/vocabulary/tokens.yaml"] == (ROOT / "data/lots/vocabulary/tokens.yaml").read_bytes()


def test_a_lots_project_keeps_its_recordings_out_of_git_and_tracked_by_dvc():
    import yaml

    lots = make("lots").files
    assert yaml.safe_load(lots["data/lots/recordings.dvc"]) == {"outs": [{"path": "recordings"}]}
    assert lots["data/lots/.gitignore"] == b"/recordings\n"
    for track in ("detector", "both"):                       # candor's own repository commits its demo recordings
        assert "data/lots/recordings.dvc" not in make(track).files


def test_a_bench_of_cases_gets_its_pipeline_its_params_and_its_shape_in_the_lock():
    import yaml

    files = plan(track="lots", bench="cases", demo=False, version="1.0", code={"fetch": "f" * 64},
                 existing_gitignore="").files
    assert "value" not in yaml.safe_load(files["dvc.yaml"])["stages"] and b"comps:" not in files["params.yaml"]
    assert yaml.safe_load(files["candor.lock"])["init"] == {"track": "lots", "demo": False, "bench": "cases"}
    assert "data/lots/recordings.dvc" in files and "data/lots/vocabulary/tokens.yaml" in files


def test_a_projects_own_params_are_kept_and_given_what_they_lack():
    own = "identify:\n  candidates: [v1]\n"
    files = plan(track="lots", bench="cases", demo=False, version="1.0", code={"fetch": "f" * 64},
                 existing_gitignore="", existing_params=own).files
    assert files["params.yaml"].decode().startswith(own) and b"\nstats:" in files["params.yaml"]
    bad = plan(track="lots", demo=False, version="1.0", code={}, existing_gitignore="", existing_params="[").files
    assert bad["params.yaml"] == make("lots").files["params.yaml"]


def test_the_demo_replaces_the_params_and_its_files_are_marked():
    p = make("both", demo=True)
    assert p.files["params.yaml"] == b"x: 1\n" and p.demo == {"data/a.txt"}


def test_existing_files_with_other_bytes_conflict_and_force_overwrites_only_candors(tmp_path):
    p = make()
    (tmp_path / "dvc.yaml").write_text("stages: {}\n")                 # the user's
    (tmp_path / "params.yaml").write_bytes(p.files["params.yaml"])       # the same bytes: no conflict
    (tmp_path / ".gitignore").write_text("*.pyc\n")                      # the block is merged, never a conflict
    assert conflicts(p, tmp_path, lock=None, force=False) == (["dvc.yaml"], [])
    assert conflicts(p, tmp_path, lock=None, force=True) == (["dvc.yaml"], [])       # not candor's: refused
    lock = Lock(candor="0.1", code={})
    assert conflicts(p, tmp_path, lock=lock, force=True) == ([], ["dvc.yaml"])


def test_demo_files_are_candors_only_in_a_demo_project():
    p = make("both", demo=True)
    assert owned("data/a.txt", plan=p, lock=Lock(candor="1", init=InitRecord(demo=True), code={}))
    assert not owned("data/a.txt", plan=p, lock=Lock(candor="1", code={}))
    assert owned(".gitignore", plan=p, lock=None) and not owned("candor.lock", plan=p, lock=None)


def test_the_gitignore_block_is_added_once_and_kept_apart_from_the_users_lines():
    once = make(gitignore="*.pyc").files[".gitignore"].decode()
    twice = make(gitignore=once).files[".gitignore"].decode()
    assert once == twice and once.startswith("*.pyc\n# >>> candor") and once.count("/build/*") == 1


def test_the_packaged_demo_is_this_repositorys_committed_demo():
    files = demo_files()
    assert set(DEMO_PARTS) <= {p for f in files for p in DEMO_PARTS if f == p or f.startswith(p + "/")}
    for path in ("params.yaml", "dvc.lock", "models/demo-v1.onnx", "data/lots/lots.csv"):
        assert files[path] == (ROOT / path).read_bytes(), path
    assert files["build/detections/detector/demo-v2.jsonl"] == (ROOT / "build/detections/detector/demo-v2.jsonl"
                                                                 ).read_bytes()


def test_this_repository_is_what_candor_init_demo_writes():
    """candor's own repository is an adopter of itself: ``candor init --demo`` here would write nothing."""
    from candor_eval.adopt.lockfile import sealed_code, stages_of
    from candor_eval.cli import version

    code, package = sealed_code(stages_of("both"))
    p = plan(track="both", demo=True, version=version(), code=code, package=package,
             existing_gitignore=(ROOT / ".gitignore").read_text())
    assert conflicts(p, ROOT, lock=None, force=False) == ([], [])
    assert p.files[".gitignore"] == (ROOT / ".gitignore").read_bytes()
