"""The project ``candor init`` writes: a ``dvc.yaml`` of candor stages for a track, and what goes beside it.

The ``dvc.yaml`` is text built here from one block per stage (so its comments survive), the same for
every project of a track and bench shape: candor's own repository runs exactly the ``both`` file (a test
compares them). The lots stages depend on the parts of the bench its shape has
(:data:`candor_eval.adopt.lockfile.Bench`): a ``cases`` bench is ``data/lots/cases/`` (each case's image
in it) and the word lists; a ``lots`` bench adds ``lots.csv`` and ``photos/``; a ``valuation`` bench
(the ``both`` track's) adds ``data/comps/``, ``data/audit/`` and the ``value`` and ``score-valuation``
stages. DVC refuses to run a stage whose dep is missing, so a stage never lists a part its shape lacks.
Every name DVC interpolates into a command (``${key}``, ``${item}``: a candidate or a set) is single-quoted
there, besides being checked where params are read (:mod:`candor_eval.common.names`):
DVC runs ``cmd`` through a shell, and interpolation happens before candor can check anything.
Paths are relative to the folder of the ``dvc.yaml`` (DVC runs each stage there):
``data/<set>/`` and ``models/`` in, ``build/``, ``metrics/`` and ``plots/`` out. No stage lists
candor's code as a dep; each lists its fingerprint in ``candor.lock`` as a param instead
(:mod:`candor_eval.adopt.lockfile`). Every output is ``persist: true``: DVC never removes it before
a stage runs, and a stage replaces its files only once everything is valid, so a bad param or
input leaves the outputs as they were.
"""
from __future__ import annotations

import yaml

from candor_eval.adopt.lockfile import LOCK_NAME, Bench, bench_of, stages_of

HEADER = """\
# candor pipeline, written by `candor init` (track: {track}); `candor init --force` rewrites it.
# Paths are relative to this folder. No stage lists candor's code as a dep: each lists its code
# fingerprint in candor.lock as a param, so `candor lock` after an upgrade reruns exactly the stages
# whose code changed. Every output is `persist: true`: a stage replaces its files only once
# everything is valid, so a bad param or input leaves every output as it was.
stages:
"""


def _code(stage: str, indent: str) -> str:
    return f"{indent}- {LOCK_NAME}:\n{indent}    - code.{stage}\n"


def _outs(paths: list[tuple[str, bool]], indent: str) -> str:
    """``outs`` entries: each persisted; ``cache: false`` for committed ones (True in the pair)."""
    out = ""
    for path, committed in paths:
        out += f"{indent}- {path}:\n{indent}    persist: true\n"
        out += f"{indent}    cache: false\n" if committed else ""
    return out


def fetch_stage(track: str) -> str:
    """The fetch stage: every manifest, and (with a detector) every model card and detection set."""
    if track == "lots":
        return ("  fetch:                       # every manifest, by SHA-256 (candor fetch --help)\n"
                "    cmd: candor fetch verify --data data --params params.yaml --out build/verified\n"
                "    deps:\n      - data\n"
                "    params:\n" + _code("fetch", "      ")
                + "    outs:\n" + _outs([("build/verified", False)], "      "))
    return ("  fetch:                       # every manifest and model card, by SHA-256 (candor fetch --help)\n"
            "    cmd: candor fetch verify --data data --models models --params params.yaml --out build/verified\n"
            "    deps:\n      - data\n      - models\n"
            "    params:\n      - detector.sets\n" + _code("fetch", "      ")
            + "    outs:\n" + _outs([("build/verified", False)], "      "))


def bench_deps(bench: Bench | None, indent: str) -> str:
    """The bench's case and lot deps: ``lots.csv`` and ``photos`` unless it is cases only, then ``cases``."""
    lots = "" if bench == "cases" else f"{indent}- data/lots/lots.csv\n{indent}- data/lots/photos\n"
    return lots + f"{indent}- data/lots/cases\n"


def identify_stage(bench: Bench | None = "valuation") -> str:
    return ("  identify:                    # lots track: the model step per candidate (docs/lots.md)\n"
            "    foreach: ${identify.sources}   # candidate -> its prompt file or its production code\n"
            "    do:\n"
            "      cmd: >-\n"
            "        candor identify --candidate '${key}' --lots data/lots --answers 'build/answers/${key}.jsonl'\n"
            "      deps:\n" + bench_deps(bench, "        ")
            + "        - ${item}                            # the prompt or the production code: a change makes the "
            "recording stale\n"
            "        - data/lots/recordings/${key}.jsonl\n"
            "        - data/lots/vocabulary               # the OCR reader's makes, the token rules, the category "
            "library\n"
            "      params:                  # not base_url: replayed answers do not depend on it, and a URL can carry "
            "a secret\n"
            + "".join(f"        - identify.{k}\n" for k in (
                "mode", "runs", "gallery", "pause_s", "timeout_s", "retries", "backoff_s", "concurrency",
                "max_calls_per_minute", "model", "api_key_env", "providers", "record_env"))
            + "        - identify.sources.${key}\n        - lots.min_number_digits\n" + _code("identify", "        ")
            + "      outs:\n" + _outs([("build/answers/${key}.jsonl", False)], "        "))


def score_lots_stage(bench: Bench | None = "valuation") -> str:
    return ("  score-lots:                  # lots track: identification, count, field expectations (docs/lots.md)\n"
            "    cmd: candor score-lots --lots data/lots --answers build/answers --metrics metrics\n"
            "    deps:\n" + bench_deps(bench, "      ")
            + "      - data/lots/vocabulary\n      - build/answers\n"
            "    params:\n      - lots\n      - identify.candidates\n" + _code("score-lots", "      ")
            + "    outs:                      # detailed metrics, committed; the headline is metrics/headline.json\n"
            + _outs([("metrics/identification.json", True), ("metrics/fields", True),
                     ("metrics/outcomes/identification.csv", True), ("metrics/outcomes/fields.csv", True)], "      "))


def value_stage() -> str:
    keys = ("require_brand", "require_model_token", "hedged_fallback", "exclude_accessories", "per_unit_price",
            "min_comps", "buyer_premium_pct", "sell_fee_pct", "margin_pct", "shipping", "buy_headroom_pct", "units")
    return ("  value:                       # lots track: comps -> unit value -> lot value -> ceiling -> verdict "
            "(docs/valuation.md)\n"
            "    foreach: ${identify.candidates}\n"
            "    do:\n"
            "      cmd: >-\n"
            "        candor value --candidate '${item}' --answers 'build/answers/${item}.jsonl'\n"
            "        --lots data/lots/lots.csv --comps data/comps --out 'build/values/${item}.csv'\n"
            "      deps:\n"
            "        - build/answers/${item}.jsonl\n        - data/lots/lots.csv\n        - data/lots/vocabulary\n"
            "        - data/comps\n"
            "      params:\n        - lots\n" + "".join(f"        - comps.{k}\n" for k in keys)
            + _code("value", "        ")
            + "      outs:\n" + _outs([("build/values/${item}.csv", False)], "        "))


def score_valuation_stage() -> str:
    return ("  score-valuation:             # lots track: value ratio, band, comps fit; the audit comparison "
            "(docs/valuation.md)\n"
            "    cmd: >-\n"
            "      candor score-valuation --values build/values --lots data/lots/lots.csv\n"
            "      --comps data/comps --audit data/audit --metrics metrics/valuation.json\n"
            "      --outcomes metrics/outcomes/valuation.csv --audit-metrics metrics/audit.json\n"
            "    deps:\n      - build/values\n      - data/lots/lots.csv\n      - data/comps\n      - data/audit\n"
            "    params:\n      - identify.candidates\n      - comps.band\n" + _code("score-valuation", "      ")
            + "    outs:\n" + _outs([("metrics/valuation.json", True), ("metrics/audit.json", True),
                                   ("metrics/outcomes/valuation.csv", True)], "      "))


def detect_stage() -> str:
    return ("  detect:                      # detector track: raw boxes of each set's models, before thresholds "
            "and NMS (docs/detector.md)\n"
            "    foreach: ${detector.sets}    # one stage per detection set: data/<set>/\n"
            "    do:\n"
            "      cmd: >-\n"
            "        candor detect --set '${key}' --models models --data 'data/${key}'\n"
            "        --verified build/verified --out 'build/detections/${key}'\n"
            "      deps:\n"
            "        # the fetch stage's record of this set: its manifest, and the card and ONNX hashes of its\n"
            "        # models only, so a model added to another set does not rerun this one\n"
            "        - build/verified/detection-${key}.json\n"
            "        - data/${key}\n"
            "      params:\n        - detector.sets.${key}\n        - detector.floor\n        - detector.providers\n"
            "        - detector.executor\n" + _code("detect", "        ")
            + "      outs:\n"
            "        # canonical inference outputs, committed to git (docs/detector.md, \"Canonical inference "
            "outputs\"):\n"
            "        # a fresh clone reproduces everything downstream without a model call, on any CPU\n"
            + _outs([("build/detections/${key}", True)], "        "))


def score_detection_stage() -> str:
    kinds = ("pr", "f1", "confusion", "per_class", "pr_models", "f1_models", "anatomy")
    return ("  score-detection:             # detector track: thresholds, NMS, matching, metrics, plots per set "
            "(docs/detector.md)\n"
            "    foreach: ${detector.sets}\n"
            "    do:\n"
            "      cmd: >-\n"
            "        candor score-detection --set '${key}' --params params.yaml\n"
            "        --detections 'build/detections/${key}'\n"
            "        --models models --data 'data/${key}' --metrics 'metrics/detection/${key}' --outcomes "
            "'metrics/outcomes/${key}'\n"
            "        --plots plots/detection --coco-out 'build/coco-results/${key}'\n"
            "      deps:\n"
            "        - build/detections/${key}\n        - build/verified/detection-${key}.json\n        - data/${key}\n"
            "      params:\n"
            + "".join(f"        - {k}\n" for k in (
                "detector.sets.${key}", "detector.floor", "detector.nms_iou", "detector.max_det",
                "detector.nms_agnostic", "detector.nms_by_model", "thresholds", "thresholds_by_model", "match",
                "stats.cluster"))
            + _code("score-detection", "        ")
            + "      outs:\n"
            + _outs([("metrics/detection/${key}", True), ("metrics/outcomes/${key}", True)]
                    + [(f"plots/detection/{k}/${{key}}", True) for k in kinds], "        ")
            + _outs([("build/coco-results/${key}", False)], "        "))


def stats_stage(track: str, bench: Bench | None = None) -> str:
    lots, detector = track in ("lots", "both"), track in ("detector", "both")
    valued = bench_of(track, bench) == "valuation"
    metrics = (["metrics/identification.json", "metrics/fields"] if lots else []) + (
        ["metrics/detection"] if detector else []) + (["metrics/valuation.json"] if valued else [])
    gate = (" --gate metrics/gate.json --detection metrics/detection --models models") if detector else ""
    outs = [("metrics/stats.json", True)] + ([("metrics/gate.json", True)] if detector else []) + [
        ("plots/report", True)]
    what = "exact paired tests, the gate, the report" if detector else "exact paired tests, the report"
    return (f"  stats:                       # intervals over clusters, {what} (docs/stats.md)\n"
            "    cmd: >-\n"
            f"      candor stats run --outcomes metrics/outcomes\n      --metrics {' '.join(metrics)}\n"
            f"      --out metrics/stats.json{gate}\n"
            "      --report plots/report/report.md --headline metrics/headline.json --forest plots/figures\n"
            "    deps:\n      - metrics/outcomes\n" + "".join(f"      - {m}\n" for m in metrics)
            + "    params:\n      - stats\n"
            + ("      - identify.candidates\n" if lots else "")
            + ("      - gate\n      - detector.sets\n      - match.critical\n      - match.min_support\n"
               if detector else "")
            + _code("stats", "      ")
            + "    metrics:                   # the one metrics file: `dvc metrics diff` and `dvc exp show` list "
            "only these numbers\n"
            + _outs([("metrics/headline.json", True)], "      ")
            + "    outs:\n" + _outs(outs, "      "))


PLOTS = """
# Detector plots (docs/detector.md, "Plots"): one plot per file of each folder (<kind>/<set>/...), in this order on the
# page: the set's models compared on the headline split (test) first, then each model's detail on all frames. No
# template smooths a curve; every rate axis is fixed at 0..1. PNG views: `candor figures` (plots/figures/).
plots:
  - plots/detection/pr_models:               # every model of a set in one panel, one line each; served point marked
      template: plots/templates/overlay.json
      x: recall
      y: precision
  - plots/detection/f1_models:               # F1 versus threshold, one line per model; served threshold marked
      template: plots/templates/threshold.json
      x: threshold
      y: f1
  - plots/detection/per_class:               # per-class F1, one bar per model; unqualified classes grey
      template: plots/templates/per_class.json
      x: f1
      y: class
  - plots/detection/anatomy:                 # the FP kinds of each model (docs/detector.md, "What kind of error")
      template: plots/templates/anatomy.json
      x: count
      y: kind
  - plots/detection/confusion:               # every class column for every model; colour: share of the row
      template: plots/templates/confusion.json
      x: predicted
      y: actual
  - plots/detection/pr:                      # one model, all frames
      template: plots/templates/curve.json
      x: recall
      y: precision
  - plots/detection/f1:
      template: plots/templates/curve.json
      x: threshold
      y: f1
"""

def stage_text(stage: str, track: str, bench: Bench | None) -> str:
    """The block of ``stage`` in the ``dvc.yaml`` of ``track`` with a lots bench of shape ``bench``."""
    shape = bench_of(track, bench)
    return {"fetch": lambda: fetch_stage(track), "identify": lambda: identify_stage(shape),
            "score-lots": lambda: score_lots_stage(shape), "value": value_stage,
            "score-valuation": score_valuation_stage, "detect": detect_stage,
            "score-detection": score_detection_stage, "stats": lambda: stats_stage(track, bench)}[stage]()


def dvc_yaml(track: str, bench: Bench | None = None) -> str:
    """The ``dvc.yaml`` of a project of ``track`` (``detector``, ``lots`` or ``both``) whose lots bench has the
    shape ``bench`` (None: :func:`candor_eval.adopt.lockfile.bench_of`'s default, ``valuation``)."""
    blocks = [stage_text(s, track, bench) for s in stages_of(track, bench) if s != "latency"]
    header = HEADER.format(track=track if bench is None else f"{track}, bench: {bench}")
    return header + "".join(blocks) + (PLOTS if track != "lots" else "")


PARAMS_HEAD = """\
# candor parameters, written by `candor init` (track: {track}): every key at its documented default.
# Each stage reads only its own sections (listed under `params:` in dvc.yaml), so changing one reruns
# exactly the stages that use it. Sections that are not candor's are yours: candor ignores them.
"""

PARAMS_LOTS = """\
identify:                      # lots track, model step (candor identify --help; docs/lots.md)
  mode: replay                 # replay (recorded answers, offline) | live (call the candidate)
  candidates: []               # the candidates scored and valued: data/lots/recordings/<c>.jsonl
  providers: {}                # live: who answers a candidate; unlisted: openai-compatible (base_url);
                               # {python: "pkg.mod:fn"}, {http: URL} or {exec: [argv]}: your code (docs/lots.md)
  sources: {}                  # candidate -> its prompt file or its production code (a file or folder):
                               # the identify stage iterates over it, so a change to it reruns that candidate
  runs: 3                      # runs per lot / case
  gallery: all                 # all photos of a lot, or only the first
  pause_s: 1.0                 # live: pause between one thread's calls
  timeout_s: 60.0              # live: whole-call deadline of each attempt
  retries: 3                   # live: retries on 429 / 5xx / timeouts
  backoff_s: 2.0               # live: first retry wait, doubled each time
  concurrency: 1               # live: calls in flight at once (threads)
  max_calls_per_minute:        # live: call-rate limit, every attempt counted (empty: unlimited)
  base_url: https://api.openai.com/v1
  model: gpt-4o-mini
  api_key_env: OPENAI_API_KEY  # the NAME of the variable holding the key
  record_env: {}               # candidate -> non-secret variables (mode switches) recorded with every answer
lots:                          # lots track, scoring (docs/lots.md, "Token rules")
  min_number_digits: 3         # a bare number shorter than this is never a model token
"""

PARAMS_COMPS = """\
comps:                         # lots track, valuation (docs/valuation.md)
  require_brand: true
  require_model_token: true
  hedged_fallback: true
  exclude_accessories: true
  per_unit_price: true
  min_comps: 3
  band:                        # in band when low <= estimate / verified value <= high
  - 0.5
  - 1.5
  buyer_premium_pct: 15
  sell_fee_pct: 13
  margin_pct: 25
  shipping: 25.00
  buy_headroom_pct: 20
  units: lot_item              # a container answer's units: the lot's item only; all_items: every item
"""

PARAMS_STATS = """\
stats:                         # intervals over clusters and exact paired tests (docs/stats.md)
  confidence: 0.95
  alpha: 0.05
  reference:
    lots:                      # the lots reference candidate (empty: the only candidate)
  cluster:
    detection: frame           # frame | session (the frames.csv session; needs >= 6 per split)
    fields: case
    by_set: {}
"""

PARAMS_DETECTOR = """\
gate:                          # the PREDECLARED release gate (docs/stats.md): fix it before scoring a candidate
  set:                         # a set of detector.sets (empty: the only set)
  reference:                   # empty: the set's first model
  candidate:                   # empty: the set's second model (when it has exactly two)
  split: test
  alpha: 0.05
  comparison: weights          # weights: the served contract must be equal | package: whole packages compared
  refresh_p95_ms: 2000         # the p95 of a whole requested refresh (candor gate run --refresh; docs/stats.md)
  latency_tolerance: 0.1       # decoded-image p95 increase allowed vs the reference timed in the same run
  improvement: shown           # shown: each micro P/R/F1 difference must reach alpha | higher: point estimate
  max_recall_drop: 0.05        # a critical class passes when its recall drop is shown to be below this
  unqualified: fail            # a critical class too small to show anything: fail | waive
  waive: []
detector:                      # detector track (docs/detector.md)
  sets: {}                     # set -> its models, reference first: `candor add set` / `candor add model`
  providers:
  - CPUExecutionProvider
  floor: 0.05                  # raw boxes below this score are never stored
  nms_iou: 0.5                 # served same-class NMS (suppress when IoU > nms_iou)
  max_det:                     # at most this many boxes per frame after NMS (empty: no cap)
  nms_agnostic: false
  nms_by_model: {}             # model -> the NMS keys it serves differently
  executor: local              # local | ray (docs/scale.md)
reinference:                   # `candor verify-inference`: how far a rerun's raw boxes may be from the committed
  box_px: 0.01
  score: 0.0001
thresholds:                    # served per-class confidence thresholds; `default` serves every class not named
  default: 0.25
thresholds_by_model: {}        # model -> the classes it serves at other thresholds
match:
  iou: 0.5                     # a detection matches a label of its class when IoU >= iou
  min_support: 10              # classes with fewer labels are reported as unqualified
  critical: []                 # action targets: wrong and missed are reported, and gated
  bands:                       # object size bands, sqrt(w*h) in px at model input
  - 16
  - 48
latency:
  warmup: 3                    # warm-up calls before one timed call per image
"""


def params_yaml(track: str, bench: Bench | None = None) -> str:
    """The ``params.yaml`` ``candor init`` writes for ``track`` and a lots bench of shape ``bench``: candor's
    sections at their defaults (``comps`` only with the valuation stages)."""
    lots, detector = track in ("lots", "both"), track in ("detector", "both")
    head = PARAMS_HEAD.format(track=track if bench is None else f"{track}, bench: {bench}")
    return (head + (PARAMS_LOTS if lots else "") + (PARAMS_COMPS if bench_of(track, bench) == "valuation" else "")
            + PARAMS_STATS + (PARAMS_DETECTOR if detector else ""))


def sections(text: str) -> dict[str, str]:
    """The top-level sections of a params text candor wrote: key -> its lines (the key's line to the next key's)."""
    out: dict[str, str] = {}
    key = None
    for line in text.splitlines(keepends=True):
        if line[:1].isalpha() and ":" in line:
            key = line.split(":", 1)[0]
            out[key] = ""
        if key is not None:
            out[key] += line
    return out


def params_with_missing(existing: str, fresh: str) -> str | None:
    """``existing`` (a project's ``params.yaml``) with each of ``fresh``'s sections it lacks appended at its
    defaults, every byte of it kept (a bench or a track grown by ``candor init --force``); None when ``existing``
    is not a YAML mapping (then ``fresh`` replaces it)."""
    try:
        doc = yaml.safe_load(existing)
    except yaml.YAMLError:
        return None
    if not isinstance(doc, dict):
        return None
    missing = "".join(block for key, block in sections(fresh).items() if key not in doc)
    if not missing:
        return existing
    return existing + ("" if existing.endswith("\n") or not existing else "\n") + missing


GITIGNORE_BEGIN = "# >>> candor (written by `candor init`; it rewrites this block)"
GITIGNORE_END = "# <<< candor"
GITIGNORE_BODY = """\
# derived files (DVC-cached); build/detections/ holds the canonical inference outputs, committed
/build/*
!/build/detections/
# machine-specific: the latency diagnostic and the PNG figures (their bytes depend on the build)
/metrics/latency/
/plots/figures/
# `dvc plots show` writes its page here
/dvc_plots/
"""


def gitignore(existing: str) -> str:
    """``existing`` (a ``.gitignore``'s text, maybe empty) with candor's marked block added or replaced."""
    block = f"{GITIGNORE_BEGIN}\n{GITIGNORE_BODY}{GITIGNORE_END}\n"
    if GITIGNORE_BEGIN in existing and GITIGNORE_END in existing:
        head, rest = existing.split(GITIGNORE_BEGIN, 1)
        tail = rest.split(GITIGNORE_END, 1)[1].lstrip("\n")
        return head + block + tail
    return existing + ("\n" if existing and not existing.endswith("\n") else "") + block
