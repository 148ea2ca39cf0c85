"""Adoption, the lots shapes: a team benchmarks its own production analysis code with candor installed from its wheel.

Two teams (the second shape is at the end of this file: a web app in Node, a bench of cases only, two versions
on one entry point through the exec provider, ``candor init --track lots`` with its default ``cases`` bench).
The first:

No candor checkout is on any path (:func:`tests.adoption.installed`). The team's repository is a Git + DVC
repository with its own ``stages/`` package, its own ``params.yaml`` (a ``report:`` section) and ``dvc.yaml``, and
its app package ``shopapp/`` whose ``analysis.analyze(images, context)`` is the production code: it tells the
product from the photo's colour (deterministic, no network) and logs every call to the file named by
``SHOPAPP_CALL_LOG``, so the test can tell a live run from a replay. candor's project goes into ``eval/``
(``candor init eval --track lots --bench valuation``); the test builds the team's bench there from scratch (three
lots, one case, Pillow-made photos, the comps, an empty audit and the word lists the stages read) and configures the
candidate in ``eval/params.yaml`` by editing three lines, as a team would (``sources: {shop: ../shopapp}``: the app is
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
    steps = {"init": run(["candor", "init", "eval", "--track", "lots", "--bench", "valuation"], cwd=repo,
                                 env=env).stdout}
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
    assert "record it again with `candor record shop` (add --force" in replay.stderr
    repro = run(["dvc", "repro"], cwd=project, env=env, check=False)
    assert repro.returncode != 0 and "recorded with other production code" in repro.stdout + repro.stderr


# ---------------------------------------------------------------------------------------------------------------
# The cases-only shape (issue 37): a web app's analysis in Node (a second Python process where Node is not on the
# machine), two prompt versions on one entry point, each in its own file; a bench that is a folder of cases.
#
# - `candor init --track lots` at the repository's top writes the `cases` bench: identify, score-lots and stats
#   depend on data/lots/cases/ and the word lists only (no lots.csv, photos or comps);
# - `candor record v1`, `candor record v2` call the web app's driver through the exec provider (one process per
#   record, kept alive), which calls the loopback chat server with its version's prompt;
# - `dvc repro` replays offline (the chat server is gone) and scores both versions;
# - one edit to v2's prompt file: `dvc status` lists identify@v2 and nothing of v1.
# The commands, their output and their times are written to <base>/webapp-transcript.md.
# ---------------------------------------------------------------------------------------------------------------
NODE = shutil.which("node")
RUNTIME = "node" if NODE else "python"
EXT = "mjs" if NODE else "py"

SERVICE_MJS = """\
// The web app's analysis service: one model call with the version's prompt, then the fields that version asks for.
export function createAnalysisService({ prompt, modelUrl }) {
  return {
    async analyzeImage(dataUrl, categoryLibrary) {
      const res = await fetch(`${modelUrl}/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          model: "vision-model",
          messages: [
            { role: "system", content: `${prompt.text}\\nCategories: ${JSON.stringify(categoryLibrary)}` },
            { role: "user", content: [{ type: "image_url", image_url: { url: dataUrl } }] },
          ],
        }),
      });
      if (!res.ok) {
        const err = new Error(`model said ${res.status}`);
        err.transient = res.status === 429 || res.status >= 500;
        throw err;
      }
      const said = JSON.parse((await res.json()).choices[0].message.content);
      const item = Object.fromEntries(prompt.fields.map((f) => [f, said[f] ?? null]));
      return { type: "item", item };
    },
  };
}
"""
DRIVER_MJS = """\
// The benchmark's entry point: candor's exec protocol (docs/lots.md), one JSON line in, one out.
import { createInterface } from "node:readline";
import { createAnalysisService } from "./src/service.mjs";

const at = process.argv.indexOf("--version");
const version = process.argv[at + 1];
const { default: prompt } = await import(`./src/prompts/${version}.mjs`);
const service = createAnalysisService({ prompt, modelUrl: process.env.WEBAPP_MODEL_URL });
for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
  const req = JSON.parse(line);
  let out;
  try {
    out = { answer: await service.analyzeImage(req.images[0], req.category_library), version: `webapp ${version}` };
  } catch (err) {
    out = { error: { message: String(err?.message ?? err), transient: err?.transient === true } };
  }
  process.stdout.write(JSON.stringify(out) + "\\n");
}
"""
PROMPT_MJS = 'export default {{ text: "{text}", fields: {fields} }};\n'

SERVICE_PY = '''\
"""The web app's analysis service: one model call with the version's prompt, then the fields that version asks for."""
import json
import urllib.error
import urllib.request


class ModelError(Exception):
    transient = False


def analyze_image(prompt, model_url, data_url, category_library):
    system = f"{prompt['text']}\\nCategories: {json.dumps(category_library)}"
    body = {"model": "vision-model",
            "messages": [{"role": "system", "content": system},
                         {"role": "user", "content": [{"type": "image_url", "image_url": {"url": data_url}}]}]}
    req = urllib.request.Request(f"{model_url}/chat/completions", data=json.dumps(body).encode(),
                                 headers={"content-type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as res:
            said = json.loads(json.loads(res.read())["choices"][0]["message"]["content"])
    except urllib.error.HTTPError as err:
        failure = ModelError(f"model said {err.code}")
        failure.transient = err.code == 429 or err.code >= 500
        raise failure from None
    return {"type": "item", "item": {f: said.get(f) for f in prompt["fields"]}}
'''
DRIVER_PY = '''\
"""The benchmark's entry point: candor's exec protocol (docs/lots.md), one JSON line in, one out."""
import json
import os
import runpy
import sys

sys.dont_write_bytecode = True
here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "src"))
from service import analyze_image  # noqa: E402

version = sys.argv[sys.argv.index("--version") + 1]
prompt = runpy.run_path(os.path.join(here, "src", "prompts", f"{version}.py"))["PROMPT"]
for line in sys.stdin:
    req = json.loads(line)
    try:
        out = {"answer": analyze_image(prompt, os.environ["WEBAPP_MODEL_URL"], req["images"][0],
                                       req["category_library"]), "version": f"webapp {version}"}
    except Exception as err:
        out = {"error": {"message": str(err), "transient": getattr(err, "transient", False)}}
    sys.stdout.write(json.dumps(out) + "\\n")
    sys.stdout.flush()
'''
PROMPT_PY = 'PROMPT = {{"text": "{text}", "fields": {fields}}}\n'

VERSIONS = {  # v1 asks for the type and the maker only; v2 for the model too
    "v1": ("Name the item's type and maker as JSON.", ["itemType", "itemManufacturer"]),
    "v2": ("Name the item's type, maker and model as JSON.", ["itemType", "itemManufacturer", "itemModel"]),
}
V2_EDIT = ("as JSON.", "as one JSON object.")
MODEL_SAYS = json.dumps({"itemType": "Drill", "itemManufacturer": "Makita", "itemModel": "XFD131"})
CASES = [  # name, colour of its image, expectations
    ("drill", BLUE, {"item.itemType": ["Drill"], "item.itemManufacturer": ["Makita"], "item.itemModel": ["XFD131"]}),
    ("saw", GREY, {"item.itemType": ["Circular Saw"], "item.itemManufacturer": ["Bosch"],
                   "item.itemModel": ["GKS 18V-57"]}),
]


def webapp_files() -> dict[str, str]:
    """The web app: its service, the benchmark driver, one prompt file per version (Node, or Python without it)."""
    if NODE:
        files = {"webapp/src/service.mjs": SERVICE_MJS, "webapp/analyze.mjs": DRIVER_MJS}
        prompt = PROMPT_MJS
    else:
        files = {"webapp/src/service.py": SERVICE_PY, "webapp/analyze.py": DRIVER_PY}
        prompt = PROMPT_PY
    for version, (text, fields) in VERSIONS.items():
        files[f"webapp/src/prompts/{version}.{EXT}"] = prompt.format(text=text, fields=json.dumps(fields))
    return files


def cases_bench(lots: Path) -> None:
    """The bench: data/lots/cases/<name>.json, each case's image beside it (``image`` relative to data/lots)."""
    for name, colour, expected in CASES:
        (lots / "cases").mkdir(parents=True, exist_ok=True)
        (lots / f"cases/{name}.png").write_bytes(png(colour))
        case = {"name": name, "description": f"a {name} on a bench", "image": f"cases/{name}.png",
                "expectations": [{"field": f, "expected": e} for f, e in expected.items()]}
        (lots / f"cases/{name}.json").write_text(json.dumps(case, indent=2) + "\n")


def configure_versions(params: Path) -> None:
    """Two candidates on one entry point, each version's prompt file its source, v1 the reference, no pause between
    calls (the loopback model has no rate limit): five lines of params.yaml."""
    driver = ["node", "webapp/analyze.mjs"] if NODE else ["python", "webapp/analyze.py"]
    providers = {v: {"exec": [*driver, "--version", v], "env": ["WEBAPP_MODEL_URL"]} for v in VERSIONS}
    text = params.read_text()
    for old, new in (("  candidates: []", "  candidates: [v1, v2]"),
                     ("  providers: {}", f"  providers: {json.dumps(providers)}"),
                     ("  sources: {}", "  sources: {" + ", ".join(f"{v}: webapp/src/prompts/{v}.{EXT}"
                                                                   for v in VERSIONS) + "}"),
                     ("    lots:                      # the lots", "    lots: v1                   # the lots"),
                     ("  pause_s: 1.0 ", "  pause_s: 0.0 ")):
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    params.write_text(text)


class Transcript:
    """The commands as run, with their exit code, wall time and output (for the issue's closing note)."""

    def __init__(self, repo: Path, env: dict[str, str]) -> None:
        self.repo, self.env, self.lines = repo, env, [f"# the cases-only shape; the web app ran in {RUNTIME}"]

    def __call__(self, args: list[str], *, env: dict[str, str] | None = None, check: bool = True,
                 note: str = "") -> tuple[str, float]:
        import time

        start = time.monotonic()
        proc = run(args, cwd=self.repo, env=env or self.env, check=check)
        took = time.monotonic() - start
        out = (proc.stdout + proc.stderr).rstrip()
        self.lines.append(f"$ {' '.join(args)}    # exit {proc.returncode}, {took:.2f} s{note and ', ' + note}\n{out}")
        return proc.stdout + proc.stderr, took


@pytest.fixture(scope="module")
def webapp(installed) -> dict:
    """The web app's repository after both versions were recorded live and a first ``dvc repro`` scored them."""
    from tests.chat_server import chat_server

    repo = installed["base"] / "webapp-repo"
    env = dict(installed["env"])
    new_repository(repo, env)
    for rel, text in webapp_files().items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    (repo / ".gitignore").write_text("__pycache__/\nnode_modules/\n")
    git(repo, env, "add", "-A")
    git(repo, env, "commit", "-qm", "the web app")
    sh = Transcript(repo, env)
    steps: dict = {"init": sh(["candor", "init", "--track", "lots"])[0]}
    cases_bench(repo / "data/lots")
    sh(["candor", "fetch", "manifest", "data/lots"])              # the fetch stage verifies the bench by SHA-256
    configure_versions(repo / "params.yaml")
    git(repo, env, "add", "-A")
    git(repo, env, "commit", "-qm", "candor, the cases and the two versions")
    calls = len(CASES) * RUNS
    with chat_server([("ok", MODEL_SAYS)]) as server:
        live = env | {"WEBAPP_MODEL_URL": server.url}
        for v in VERSIONS:
            first = len(server.accepted)
            steps[f"record {v}"], took = sh(["candor", "record", v], env=live)
            gaps = sorted(b - a for a, b in zip(server.accepted[first:], server.accepted[first + 1:]))
            sh.lines[-1] = sh.lines[-1].replace(
                " s\n", f" s; {calls} model calls, {gaps[len(gaps) // 2]:.3f} s per call (median time between calls "
                        f"at the model), {took - sum(gaps):.2f} s before the first call and after the last\n", 1)
        steps["model requests"] = list(server.requests)
    steps["dvc status before repro"] = sh(["dvc", "status"])[0]
    steps["repro"] = sh(["dvc", "repro"], note="the chat server is gone: replay only")[0]
    git(repo, env, "add", "-A")
    git(repo, env, "commit", "-qm", "the recordings' hash and the first evaluation")
    steps["status"] = sh(["dvc", "status"])[0]
    steps["git status"] = git(repo, env, "status", "--porcelain")
    v2 = repo / f"webapp/src/prompts/v2.{EXT}"
    v2.write_text(v2.read_text().replace(*V2_EDIT))
    steps["status after edit"] = sh(["dvc", "status"], note=f"after editing webapp/src/prompts/v2.{EXT}")[0]
    steps["replay v2 after edit"] = sh(["candor", "identify", "--candidate", "v2"], check=False)[0]
    (installed["base"] / "webapp-transcript.md").write_text("\n\n".join(sh.lines) + "\n")
    return {"repo": repo, "env": env, "steps": steps}


def test_init_writes_the_cases_bench_pipeline(webapp):
    stages = yaml.safe_load((webapp["repo"] / "dvc.yaml").read_text())["stages"]
    assert list(stages) == ["fetch", "identify", "score-lots", "stats"]
    assert not (webapp["repo"] / "data/lots/lots.csv").exists() and not (webapp["repo"] / "data/comps").exists()
    assert yaml.safe_load((webapp["repo"] / "candor.lock").read_text())["init"]["bench"] == "cases"
    assert "put the bench into data/ (lots/cases/*.json), then: candor fetch manifest data/lots" in webapp["steps"][
        "init"]


def test_record_called_the_webapp_live_once_per_case_run_and_version(webapp):
    """Each version's driver ran in Node where Node is on the machine (else Python), and called the model."""
    repo, requests = webapp["repo"], webapp["steps"]["model requests"]
    assert len(requests) == len(CASES) * RUNS * len(VERSIONS)
    prompts = [r["json"]["messages"][0]["content"].split("\n")[0] for r in requests]
    assert sorted(set(prompts)) == sorted(text for text, _ in VERSIONS.values())
    for v in VERSIONS:
        assert "promoted" in webapp["steps"][f"record {v}"]
        lines = [json.loads(x) for x in (repo / f"data/lots/recordings/{v}.jsonl").read_text().splitlines()]
        assert [(x["case"], x["run"]) for x in lines] == [(c[0], r) for c in CASES for r in range(1, RUNS + 1)]
        assert {(x["provider"], x["model"].split()[0], x["version"], x["error"]) for x in lines} == {
            ("exec", RUNTIME, f"webapp {v}", None)}, f"the web app ran in {RUNTIME}"
        assert {x["prompt_sha256"] for x in lines} == {hashlib.sha256(webapp_files()[f"webapp/src/prompts/{v}.{EXT}"]
                                                                      .encode()).hexdigest()}   # its file, before edits
    assert "data/lots/recordings.dvc" in webapp["steps"]["dvc status before repro"]    # DVC tracks them
    assert (repo / "data/lots/recordings.dvc").read_text().count("md5:") == 1             # dvc repro committed them
    assert "recordings" not in git(repo, webapp["env"], "ls-files", "data/lots").replace("recordings.dvc", "")


def test_repro_replays_offline_and_scores_both_versions(webapp):
    repo, out = webapp["repo"], webapp["steps"]["repro"]
    for stage in ("fetch", "identify@v1", "identify@v2", "score-lots", "stats"):
        assert f"Running stage '{stage}'" in out, stage
    v1 = json.loads((repo / "metrics/fields/v1.json").read_text())
    v2 = json.loads((repo / "metrics/fields/v2.json").read_text())
    assert v1["cases_met"] == {"met": 0, "n": 2, "rate": 0.0}           # v1 never names the model
    assert v2["cases_met"] == {"met": 1, "n": 2, "rate": 0.5}           # the drill, not the saw
    headline = json.loads((repo / "metrics/headline.json").read_text())
    assert {"v1", "v2"} <= set(json.dumps(headline).replace('"', " ").split())
    assert "Data and pipelines are up to date" in webapp["steps"]["status"]
    assert webapp["steps"]["git status"] == ""


def test_an_edit_to_one_versions_file_is_stale_for_that_candidate_only(webapp):
    status = webapp["steps"]["status after edit"]
    assert status.split() == ["identify@v2:", "changed", "deps:", "modified:", f"webapp/src/prompts/v2.{EXT}"], status
    assert "identify@v1" not in status, status
    replay = webapp["steps"]["replay v2 after edit"]
    assert "data/lots/recordings/v2.jsonl: recorded with other production code" in replay, replay
    assert "Traceback" not in replay
