"""Adoption, the lots shape: a team benchmarks its own production analysis code with candor installed from its wheel.

No candor checkout is on any path (:func:`tests.adoption.installed`). The team's repository is a Git + DVC
repository with its own ``stages/`` package, its own ``params.yaml`` (a ``report:`` section) and ``dvc.yaml``, and
its app package ``shopapp/`` whose ``analysis.analyze(images, context)`` is the production code: it tells the
product from the photo's colour (deterministic, no network) and logs every call to the file named by
``SHOPAPP_CALL_LOG``, so the test can tell a live run from a replay. candor's project goes into ``eval/``
(``candor init eval --track lots``); the test builds the team's bench there from scratch (three lots, one case,
Pillow-made photos, the comps, an empty audit and the word lists the stages read) and configures the candidate
in ``eval/params.yaml`` by editing three lines, as a team would (``sources: {shop: ../shopapp}``: the app is
above the project, where DVC runs its stages):

- record once live from ``eval/``, promote the recording, write the bench's manifests, commit;
- ``dvc repro`` in ``eval/`` replays offline (the app is never called) and scores (from the top, ``dvc repro``
  would run the team's ``dvc.yaml`` only: DVC's default target is the ``dvc.yaml`` of the working directory);
- a second ``dvc repro``, and ``dvc repro --all-pipelines`` from the top, change nothing git sees, and the app's
  bytecode is no part of its dep (the team's ``.dvcignore``, as docs/lots.md advises);
- one changed line of the app makes ``dvc status`` list ``eval/dvc.yaml:identify@shop`` and replay refuse the
  stale recording (exit 2, naming it and the command that records it again).
"""
from __future__ import annotations

import csv
import hashlib
import io
import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.adoption import new_repository, run

pytestmark = pytest.mark.slow

APP = '''\
"""The shop's photo analysis: the product is told by the photo's colour (a stand-in for the real model)."""
import io
import os

from PIL import Image

PRODUCTS = {
    (200, 30, 30): {"itemManufacturer": "Dell", "itemModel": "OptiPlex 7090", "itemType": "Desktop Computer"},
    (30, 160, 60): {"itemManufacturer": "HP", "itemModel": "EliteDesk 800 G6 SFF", "itemType": "Desktop Computer"},
    (40, 60, 200): {"itemManufacturer": "Makita", "itemModel": "XFD131", "itemType": "Drill"},
}
UNKNOWN = {"itemManufacturer": None, "itemModel": None, "itemType": "Equipment"}


def analyze(images, context):
    """The app's answer for one listing: its first photo's product, one unit per photo."""
    if os.environ.get("SHOPAPP_CALL_LOG"):
        with open(os.environ["SHOPAPP_CALL_LOG"], "a") as log:
            log.write(f"{context['id']} {context['run']}\\n")
    data, _mime = images[0]
    colour = Image.open(io.BytesIO(data)).convert("RGB").getpixel((0, 0))
    item = dict(PRODUCTS.get(colour, UNKNOWN))
    item["quantity"] = len(images)
    return {"type": "item", "item": item}
'''
STALE_LINE = ('UNKNOWN = {"itemManufacturer": None, "itemModel": None, "itemType": "Equipment"}',
              'UNKNOWN = {"itemManufacturer": None, "itemModel": None, "itemType": "Other"}')

USER_DVC_YAML = """\
stages:
  report:
    cmd: python -m stages.report
    deps: [stages/report.py]
    params: [report]
    outs: [reports/summary.txt]
"""
USER_PARAMS = "report:\n  currency: USD\n  top: 5\n"
DVCIGNORE = "__pycache__/\n*.pyc\n"          # as docs/lots.md advises: bytecode is no part of the code's deps
REPORT = """\
import pathlib, yaml
top = yaml.safe_load(open("params.yaml"))["report"]["top"]
pathlib.Path("reports").mkdir(exist_ok=True)
pathlib.Path("reports/summary.txt").write_text(f"top {top}\\n")
"""

RED, GREEN, BLUE, GREY = (200, 30, 30), (30, 160, 60), (40, 60, 200), (128, 128, 128)
LOTS = [  # id, make, model, model_tokens, count, category, tier, photos (colours), valuation, verified, current
    ("S1", "Dell", "OptiPlex 7090", "", "2", "Desktop Computer", "held", [RED, RED], "1", "300.00", "80.00"),
    ("S2", "HP", "EliteDesk 800 G6", "800 G6", "1", "Desktop Computer", "photo", [GREEN], "1", "150.00", "40.00"),
    ("S3", "Bosch", "GSR 12V-300", "GSR 12V-300", "1", "Drill", "photo", [GREY], "0", "", ""),
]
CASE = {"name": "drill-case", "description": "A cordless drill on a bench", "image": "cases/images/drill.png",
        "expectations": [{"field": "item.itemType", "expected": ["Drill"]},
                         {"field": "item.itemManufacturer", "expected": ["Makita"]},
                         {"field": "item.itemModel", "expected": ["XFD131"]}]}
LISTINGS = [  # id, title, price, sold_date, quantity, category
    ("C1", "Dell OptiPlex 7090 SFF i5 8GB 256GB", "120.00", "2025-10-01", "1", "Computers"),
    ("C2", "Lot of 2 Dell OptiPlex 7090 Small Form Factor", "260.00", "2025-10-03", "2", "Computers"),
    ("C3", "Dell OptiPlex 7090 i7 16GB", "150.00", "2025-10-08", "1", "Computers"),
    ("C4", "HP EliteDesk 800 G6 SFF i5", "140.00", "2025-10-09", "1", "Computers"),
]
RELEVANCE = [("S1", "C1"), ("S1", "C2"), ("S1", "C3"), ("S2", "C4")]
# The word lists the lots stages read (candor_eval/lots/vocabulary.py): candor init writes candor's defaults
# into the bench, and the team edits them (here: its own, short)
VOCABULARY = {
    "tokens.yaml": {"spec_words": ["gb", "tb", "v"], "form_factors": ["sff", "tower"],
                    "generation_prefixes": ["g", "gen"], "hedge_markers": ["e.g.", "such as", "maybe", "?"]},
    "accessory-words.yaml": {"accessory_words": ["charger", "battery", "power cord"]},
    "comps-words.yaml": {"category_words": ["desktop", "computer", "drill"], "generic_words": ["lot", "used"],
                         "hedge_words": ["or", "maybe"]},
    "category-library.yaml": {"functional": ["Computers", "Tools"], "specific": None, "itemType": None},
}
RUNS = 3
IDS = [lot[0] for lot in LOTS] + [CASE["name"]]


def png(colour: tuple[int, int, int]) -> bytes:
    """A small photo of one colour with a darker frame (the app reads its top-left pixel)."""
    from PIL import Image, ImageDraw

    img = Image.new("RGB", (48, 32), colour)
    ImageDraw.Draw(img).rectangle((8, 8, 39, 23), outline=tuple(c // 2 for c in colour), width=2)
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return buf.getvalue()


def write_csv(path: Path, header: list[str], rows: list[tuple]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def bench(data: Path) -> None:
    """The team's bench under ``data`` (the project's ``data/``): ``lots/`` (lots.csv, photos, one case, the
    word lists), ``comps/`` (listings and their relevance to the valuation lots) and ``audit/`` (no audit yet),
    """
    lots = data / "lots"
    rows = []
    for lot_id, make, model, tokens, count, category, tier, colours, valuation, verified, current in LOTS:
        photos = [f"photos/{lot_id}-{i}.png" for i in range(1, len(colours) + 1)]
        for rel, colour in zip(photos, colours):
            (lots / rel).parent.mkdir(parents=True, exist_ok=True)
            (lots / rel).write_bytes(png(colour))
        rows.append((lot_id, make, model, tokens, count, category, tier, ";".join(photos), valuation, verified,
                     current))
    write_csv(lots / "lots.csv", ["id", "make", "model", "model_tokens", "count", "category", "tier", "photos",
                                  "valuation", "verified_value", "current_price"], rows)
    (lots / "cases/images").mkdir(parents=True)
    (lots / CASE["image"]).write_bytes(png(BLUE))
    (lots / "cases" / f"{CASE['name']}.json").write_text(json.dumps(CASE, indent=2) + "\n")
    (lots / "recordings").mkdir()
    (lots / "vocabulary").mkdir(exist_ok=True)
    for name, lists in VOCABULARY.items():
        (lots / "vocabulary" / name).write_text(yaml.safe_dump(lists, sort_keys=False))
    write_csv(data / "comps/listings.csv", ["id", "title", "price", "sold_date", "quantity", "category"], LISTINGS)
    write_csv(data / "comps/relevance.csv", ["lot", "listing"], RELEVANCE)
    write_csv(data / "audit/audit.csv", ["lot", "description", "pipeline_verdict", "pipeline_ceiling",
                                         "audited_verdict", "audited_ceiling", "root_cause"], [])
    write_csv(data / "audit/root_causes.csv", ["root_cause", "description", "guard"], [])


def configure(params: Path) -> None:
    """The candidate, set in candor's params.yaml as a team edits it: three lines, the comments kept (the
    lots reference stays empty: the only candidate)."""
    text = params.read_text()
    for old, new in (("  candidates: []", "  candidates: [shop]"),
                     ("  providers: {}", '  providers: {shop: {python: "shopapp.analysis:analyze"}}'),
                     ("  sources: {}", "  sources: {shop: ../shopapp}")):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    params.write_text(text)


def git(repo: Path, env: dict[str, str], *args: str) -> str:
    return run(["git", *args], cwd=repo, env=env).stdout


@pytest.fixture(scope="module")
def shop(installed) -> dict:
    """The team's repository after its candidate was recorded live, promoted and scored by a first ``dvc repro``."""
    repo = installed["base"] / "shop"
    calls = installed["base"] / "shop-calls.log"
    env = {k: v for k, v in installed["env"].items() if k != "PYTHONDONTWRITEBYTECODE"}    # a team's machine
    env["SHOPAPP_CALL_LOG"] = str(calls)
    new_repository(repo, env)
    (repo / "stages").mkdir()
    (repo / "stages/__init__.py").write_text('"""The team\'s own stages."""\n')
    (repo / "stages/report.py").write_text(REPORT)
    (repo / "params.yaml").write_text(USER_PARAMS)
    (repo / "dvc.yaml").write_text(USER_DVC_YAML)
    (repo / "shopapp").mkdir()
    (repo / "shopapp/__init__.py").write_text('"""The shop\'s app."""\n')
    (repo / "shopapp/analysis.py").write_text(APP)
    (repo / ".gitignore").write_text("__pycache__/\n")
    (repo / ".dvcignore").write_text(DVCIGNORE)
    run(["dvc", "repro"], cwd=repo, env=env)                                  # the team's own pipeline
    git(repo, env, "add", "-A")
    git(repo, env, "commit", "-qm", "the shop")
    steps = {"init": run(["candor", "init", "eval", "--track", "lots"], cwd=repo, env=env).stdout}
    project = repo / "eval"
    bench(project / "data")
    configure(project / "params.yaml")
    git(repo, env, "add", "-A")
    git(repo, env, "commit", "-qm", "candor, the bench and the shop candidate")

    steps["live"] = run(["candor", "identify", "--candidate", "shop", "--mode", "live", "--record",
                         "build/live/shop.jsonl"], cwd=project, env=env)
    steps["live calls"] = calls.read_text().splitlines()
    shutil.copy(project / "build/live/shop.jsonl", project / "data/lots/recordings/shop.jsonl")     # promote
    for folder in ("data/lots", "data/comps", "data/audit"):                  # the fetch stage verifies each
        run(["candor", "fetch", "manifest", folder], cwd=project, env=env)
    git(repo, env, "add", "-A")
    git(repo, env, "commit", "-qm", "the shop's recording")
    steps["repro"] = run(["dvc", "repro"], cwd=project, env=env).stdout
    steps["repro calls"] = calls.read_text().splitlines()
    git(repo, env, "add", "-A")
    git(repo, env, "commit", "-qm", "first evaluation")
    return {"repo": repo, "project": project, "env": env, "steps": steps}


def test_init_writes_candors_project_beside_the_teams_own(shop):
    repo = shop["repo"]
    assert (repo / "params.yaml").read_text() == USER_PARAMS
    assert (repo / "dvc.yaml").read_text() == USER_DVC_YAML
    assert {"dvc.yaml", "params.yaml", "candor.lock"} <= {p.name for p in shop["project"].iterdir()}
    assert "identify.candidates" in shop["steps"]["init"]


def test_the_live_run_called_the_apps_own_code_once_per_lot_case_and_run(shop):
    assert sorted(shop["steps"]["live calls"]) == sorted(f"{i} {r}" for i in IDS for r in range(1, RUNS + 1))
    lines = [json.loads(x) for x in (shop["project"] / "data/lots/recordings/shop.jsonl").read_text().splitlines()]
    assert [(x["case"], x["run"]) for x in lines] == sorted((i, r) for i in IDS for r in range(1, RUNS + 1))
    assert {(x["provider"], x["model"], x["error"]) for x in lines} == {("python", "shopapp.analysis:analyze", None)}
    listing = "".join(f"{hashlib.sha256((shop['repo'] / 'shopapp' / n).read_bytes()).hexdigest()}  {n}\n"
                      for n in ("__init__.py", "analysis.py"))
    assert {x["prompt_sha256"] for x in lines} == {hashlib.sha256(listing.encode()).hexdigest()}
    assert {x["parsed"]["item"]["itemModel"] for x in lines if x["case"] == "S1"} == {"OptiPlex 7090"}
    assert (shop["repo"] / "shopapp/__pycache__").is_dir()      # the app was imported from eval/, at the top


def test_repro_replays_offline_and_scores_the_app(shop):
    out, project = shop["steps"]["repro"], shop["project"]
    for stage in ("fetch", "identify@shop", "score-lots", "value@shop", "score-valuation", "stats"):
        assert f"Running stage '{stage}'" in out, stage
    assert "Running stage 'report'" not in out
    assert shop["steps"]["repro calls"] == shop["steps"]["live calls"]          # replay never called the app
    ident = json.loads((project / "metrics/identification.json").read_text())["identification"]["shop"]["all"]
    assert (ident["lots"], ident["hit"], ident["abstain"], ident["wrong"]) == (3, 2, 1, 0)
    fields = json.loads((project / "metrics/fields/shop.json").read_text())
    assert fields["cases_met"] == {"met": 1, "n": 1, "rate": 1.0}
    valuation = json.loads((project / "metrics/valuation.json").read_text())
    assert valuation["shop"]["lots"] == 2, valuation
    assert "shop" in (project / "metrics/headline.json").read_text()


def test_a_second_repro_leaves_git_clean(shop):
    repo, env = shop["repo"], shop["env"]
    out = run(["dvc", "repro"], cwd=shop["project"], env=env).stdout
    assert "Running stage" not in out, out
    assert "Running stage" not in run(["dvc", "repro", "--all-pipelines"], cwd=repo, env=env).stdout
    assert git(repo, env, "status", "--porcelain") == ""
    shutil.rmtree(repo / "shopapp/__pycache__")                 # a clone, where the app never ran
    assert "up to date" in run(["dvc", "status"], cwd=repo, env=env).stdout


def test_a_changed_line_of_the_app_is_stale_for_dvc_and_for_replay(shop):
    repo, project, env = shop["repo"], shop["project"], shop["env"]
    app = repo / "shopapp/analysis.py"
    old, new = STALE_LINE
    app.write_text(app.read_text().replace(old, new))
    status = run(["dvc", "status"], cwd=repo, env=env).stdout
    assert "eval/dvc.yaml:identify@shop" in status, status
    assert "report" not in status.replace("eval/", ""), status
    replay = run(["candor", "identify", "--candidate", "shop"], cwd=project, env=env, check=False)
    assert replay.returncode == 2 and "Traceback" not in replay.stderr, replay.stderr
    assert "data/lots/recordings/shop.jsonl: recorded with other production code: ../shopapp changed" in replay.stderr
    assert "candor identify --candidate shop --mode live --record build/live/shop-" in replay.stderr
    repro = run(["dvc", "repro"], cwd=project, env=env, check=False)
    assert repro.returncode != 0 and "recorded with other production code" in repro.stdout + repro.stderr
