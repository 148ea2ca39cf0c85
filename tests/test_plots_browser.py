"""The `make plots` page in a real browser with networking disabled: every declared plot is drawn.

- The page is what `make plots` writes: the real `dvc plots show --html-template
  plots/html/template.html` on a clone of HEAD (nothing is written in the checkout), with this
  checkout's `plots/html/` copied in (the template under test). Its scripts are the vendored files
  only (no URL).
- Headless Chromium opens it with every network load impossible: DNS maps every host to NOTFOUND
  and all HTTP(S), loopback included, goes to a dead proxy (port 9). A probe page that loads a
  script from a live loopback server shows the flags do block (and that the probe loads without
  them).
- Declared plots: the files under the folders of `dvc.yaml`'s top-level `plots:`. The page has one
  plot div per file; a plot is drawn when its div holds a Vega `marks` canvas/svg of non-zero size.
  A plot file with no rows (DVC writes `var spec = {}`) shows the template's "no rows" note instead.
- Comparison first: the page's first plots (section "compared") are the set's models overlaid (PR
  and F1 of all classes, per-class F1, FP kinds), every comparison plot comes before any
  single-model one, and a 1,280 x 800 screenshot of the first screen goes to
  build/plots-first-screen.png (the whole page: build/plots-screenshot.png).
- An empty plot's note names its file path (not the div id).
- No template smooths (no ``loess``, no DVC ``linear``/``smooth`` template) and every rate axis is
  fixed at 0..1 (fast tests, no browser).
- The vendored files match the SHA-256 values recorded in plots/html/README.md.
- The report (`plots/report/report.md`, rendered by this checkout's code from the committed metrics, as a
  forge renders Markdown: CommonMark with tables) shows the gate's verdict and the answer of every track
  within the first 1,280 x 800 screen; its screenshot goes to build/report-first-screen.png.

Skips when Chromium is not installed, unless CI is set (then it fails: `.ci/run` installs it).
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import struct
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
TEMPLATE = "plots/html/template.html"
SCREENSHOT = ROOT / "build" / "plots-screenshot.png"
FIRST_SCREEN = ROOT / "build" / "plots-first-screen.png"
REPORT_FIRST_SCREEN = ROOT / "build" / "report-first-screen.png"
COMPARED_FIRST = ("pr_models", "f1_models", "per_class", "anatomy")   # the first row, in this order
OFFLINE = ("--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
           "--proxy-bypass-list=<-loopback>")
SCREEN = (1280, 800)

needs_browser = pytest.mark.skipif(
    BROWSER is None and not os.environ.get("CI"),
    reason="chromium is not installed (apt-get install -y chromium); under CI this test fails instead")


@pytest.fixture(scope="module")
def browser() -> str:
    if BROWSER is None:
        pytest.fail("CI is set but chromium is not installed: .ci/run installs it "
                    "(apt-get update && apt-get install -y chromium)")
    return BROWSER


def chromium(browser: str, url: str, *action: str, profile: Path, offline: bool = True) -> str:
    """Run headless Chromium on `url` with one action (--dump-dom, --screenshot=...); its stdout."""
    args = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            f"--user-data-dir={profile}", "--hide-scrollbars", "--virtual-time-budget=10000",
            *(OFFLINE if offline else ()), *action, url]
    proc = subprocess.run(args, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"chromium failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
    return proc.stdout


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A clone of HEAD with this checkout's page template, on which `make plots`' command has run."""
    clone = tmp_path_factory.mktemp("plots") / "candor"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=60)
    shutil.copytree(ROOT / "plots/html", clone / "plots/html", dirs_exist_ok=True)
    env = dict(os.environ, DVC_NO_ANALYTICS="1")
    proc = subprocess.run([sys.executable, "-m", "dvc", "plots", "show", "--html-template", TEMPLATE],
                          cwd=clone, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, f"dvc plots show failed:\n{proc.stdout}\n{proc.stderr}"
    return clone


def declared_plot_files(repo: Path) -> list[str]:
    """The files under the paths of dvc.yaml's top-level `plots:` (one plot each)."""
    entries = yaml.safe_load((repo / "dvc.yaml").read_text())["plots"]
    paths = [repo / p for entry in entries for p in (entry if isinstance(entry, dict) else [entry])]
    return sorted(f.relative_to(repo).as_posix() for p in paths
                  for f in ([p] if p.is_file() else p.rglob("*")) if f.is_file())


def plot_divs(page: str) -> dict[str, bool]:
    """{plot div id: whether DVC gave it a spec} for the page DVC wrote (`var spec = {}`: no rows)."""
    found = re.findall(r'<div id = "([^"]+)">\s*<script type = "text/javascript">\s*var spec = (.*?);\n',
                       page)
    return {div: spec != "{}" for div, spec in found}


class Census(HTMLParser):
    """Per plot div of a rendered DOM: the (width, height) of its Vega `marks` elements and its notes.

    The plot divs are siblings, so an element belongs to the last plot div opened before it."""

    def __init__(self, divs: set[str]) -> None:
        super().__init__()
        self.divs, self.current = divs, None
        self.marks: dict[str, list[tuple[float, float]]] = {d: [] for d in divs}
        self.no_data: set[str] = set()
        self.notes: dict[str, str] = {}
        self.in_note = False
        self.vendor_missing = False
        self.order: list[tuple[str, str]] = []      # (section id, plot div id) in document order
        self.section = ""

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        classes = a.get("class", "").split()
        if tag == "section":
            self.section = a.get("id", "")
        if tag == "div" and a.get("id") in self.divs:
            self.current = a["id"]
            self.order.append((self.section, a["id"]))
        elif a.get("id") == "vendor-missing":
            self.vendor_missing = True
        elif self.current and "marks" in classes and tag in ("canvas", "svg"):
            self.marks[self.current].append((float(a.get("width") or 0), float(a.get("height") or 0)))
        elif self.current and "no-data" in classes:
            self.no_data.add(self.current)
            self.in_note = True

    def handle_data(self, data: str) -> None:
        if self.in_note and self.current:
            self.notes[self.current] = self.notes.get(self.current, "") + data

    def handle_endtag(self, tag: str) -> None:
        if tag == "p":
            self.in_note = False


def census(dom: str, divs: set[str]) -> Census:
    parser = Census(divs)
    parser.feed(dom)
    return parser


def png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def test_vendored_files_match_the_recorded_sha256():
    readme = (ROOT / "plots/html/README.md").read_text()
    recorded = dict(re.findall(r"^\| `([\w.-]+\.js)` \|.*\| `([0-9a-f]{64})` \|$", readme, re.M))
    vendored = {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
                for p in sorted((ROOT / "plots/html/vendor").glob("*.js"))}
    assert set(recorded) == {"vega.min.js", "vega-lite.min.js", "vega-embed.min.js"}
    assert vendored == recorded


@pytest.mark.slow
@needs_browser
def test_network_flags_block_a_live_loopback_server(browser, http_root, tmp_path):
    served, url = http_root
    (served / "probe.js").write_text('document.title = "probe loaded";\n')
    page = tmp_path / "probe.html"
    page.write_text(f'<html><head><title>offline</title><script src="{url}/probe.js"></script>'
                    '</head><body></body></html>\n')
    online = chromium(browser, page.as_uri(), "--dump-dom", profile=tmp_path / "p1", offline=False)
    offline = chromium(browser, page.as_uri(), "--dump-dom", profile=tmp_path / "p2")
    assert "<title>probe loaded</title>" in online          # the probe can load at all
    assert "<title>offline</title>" in offline, offline


@pytest.mark.slow
def test_page_loads_only_the_vendored_scripts(clone):
    page = clone / "dvc_plots/index.html"
    sources = re.findall(r'<script[^>]*\bsrc\s*=\s*"([^"]+)"', page.read_text())
    assert sources == [f"../plots/html/vendor/{name}"
                       for name in ("vega.min.js", "vega-lite.min.js", "vega-embed.min.js")]
    assert all((page.parent / s).resolve().is_file() for s in sources)


@pytest.mark.slow
@needs_browser
def test_every_declared_plot_is_drawn_offline(browser, clone, tmp_path):
    page = clone / "dvc_plots/index.html"
    divs = plot_divs(page.read_text())
    declared = declared_plot_files(clone)
    assert len(divs) == len(declared) > 0, (len(divs), declared)

    seen = census(chromium(browser, page.as_uri(), "--dump-dom", profile=tmp_path / "p"), set(divs))
    drawn = {d for d, sizes in seen.marks.items() if sizes and all(w > 0 and h > 0 for w, h in sizes)}
    with_spec = {d for d, has_spec in divs.items() if has_spec}
    assert not seen.vendor_missing
    assert drawn == with_spec, f"not drawn: {sorted(with_spec - drawn)}"
    assert sum(len(sizes) for sizes in seen.marks.values()) == len(with_spec)   # one chart each
    assert seen.no_data == set(divs) - with_spec                              # empty files say so
    by_id = {div_id(f): f for f in declared}
    for div, note in seen.notes.items():                                      # ... by their path
        assert note.startswith(f"{by_id[div]}: the plot file has no rows"), (div, note)

    kinds = [(section, kind_of(div)) for section, div in seen.order]
    assert [k for _, k in kinds[:len(COMPARED_FIRST)]] == list(COMPARED_FIRST), kinds[:6]
    compared = [k for section, k in kinds if section == "compared"]
    assert set(compared) == {"pr_models", "f1_models", "per_class", "anatomy", "confusion"}
    assert kinds == sorted(kinds, key=lambda sk: sk[0] != "compared")           # every comparison first
    assert {k for section, k in kinds if section == "detail"} == {"pr", "f1"}

    SCREENSHOT.parent.mkdir(exist_ok=True)
    chromium(browser, page.as_uri(), f"--window-size={SCREEN[0]},{SCREEN[1]}",
             f"--screenshot={FIRST_SCREEN}", profile=tmp_path / "s1")
    assert png_size(FIRST_SCREEN) == SCREEN
    chromium(browser, page.as_uri(), f"--window-size={SCREEN[0]},6000", f"--screenshot={SCREENSHOT}",
             profile=tmp_path / "s2")
    assert png_size(SCREENSHOT) == (SCREEN[0], 6000)


def div_id(path: str) -> str:
    """DVC's div id of a plot file (dvc_render's ``remove_special_chars``)."""
    return re.sub(r"[!@#$%^&*()\[\]{};,<>?\\/:.|`~=_+ ]", "_", path)


def kind_of(div: str) -> str:
    """The plot kind (``plots/detection/<kind>/...``) of a div id."""
    for kind in ("pr_models", "f1_models", "per_class", "anatomy", "confusion", "pr", "f1"):
        if div.startswith(f"plots_detection_{kind}_"):
            return kind
    raise AssertionError(f"{div}: not a plot of plots/detection/<kind>/")


def plot_templates(repo: Path) -> list[tuple[str, dict]]:
    """(plots path, template content) for each entry of dvc.yaml's top-level ``plots:``."""
    out = []
    for entry in yaml.safe_load((repo / "dvc.yaml").read_text())["plots"]:
        for path, props in entry.items():
            name = props["template"]
            assert name.endswith(".json"), f"{path}: DVC's built-in template {name!r} (linear smooths)"
            out.append((path, json.loads((repo / name).read_text())))
    return out


def test_no_plot_smooths_and_rate_axes_are_fixed():
    """No template has a ``loess`` transform (DVC's ``linear`` and ``smooth`` do, with a slider), and
    every curve's quantitative axes of rates are fixed on 0..1 (two models' panels compare at a glance)."""
    templates = plot_templates(ROOT)
    assert len(templates) == 7
    for path, content in templates:
        assert "loess" not in json.dumps(content), path
    for path, content in templates:
        if any(k in path for k in ("pr", "f1")) and not path.endswith("per_class"):
            layers = content.get("layer", [content])
            scales = [enc[axis].get("scale", {}).get("domain") for layer in [content, *layers]
                      for enc in [layer.get("encoding", {})] for axis in ("x", "y") if axis in enc
                      and "scale" in enc[axis]]
            assert scales and all(d == [0, 1] for d in scales), (path, scales)


def test_the_page_template_gives_an_empty_plot_its_file_path():
    """The path-from-div-id rule of the template agrees with DVC's id rule (a folder prefix, then the
    last "_" before the extension is the dot)."""
    page = (ROOT / TEMPLATE).read_text()
    assert 'replace(/[!@#$%^&*()\\[\\]{};,<>?\\\\\\/:.|`~=_+ ]/g, "_")' in page
    from dvc_render.base import Renderer
    for path in ("plots/detection/pr/detector/demo-v1/stone_mine.csv", "a b/c.d/e_f.csv"):
        assert div_id(path) == Renderer.remove_special_chars(path)


def drawn_marks(browser: str, spec: str, *, profile: Path, page: Path, vendor: Path) -> dict[str, int]:
    """Draw one plot's spec (as DVC wrote it) with Vega's SVG renderer offline; per mark kind
    (``mark-line``, ``mark-rect``, ...), how many shapes it drew."""
    page.write_text("<html><head>" + "".join(
        f'<script src="{(vendor / n).as_uri()}"></script>'
        for n in ("vega.min.js", "vega-lite.min.js", "vega-embed.min.js"))
        + '</head><body><div id="v"></div><script>vegaEmbed("#v", ' + spec
        + ', {renderer: "svg", actions: false});</script></body></html>\n')
    dom = chromium(browser, page.as_uri(), "--dump-dom", profile=profile)
    counts: dict[str, int] = {}
    for kind, body in re.findall(r'<g class="(mark-\w+) role-mark[^"]*"[^>]*>(.*?)</g>', dom, re.S):
        counts[kind] = counts.get(kind, 0) + len(re.findall(r"<path\b", body))
    return counts


@pytest.mark.slow
@needs_browser
def test_the_models_of_a_set_share_one_panel(browser, clone, tmp_path):
    """The comparison plots (docs/detector.md, "Plots"): one line per model of the set in one PR and
    one F1 panel, and one bar per model and FP kind in the anatomy chart."""
    divs = dict(re.findall(r'<div id = "([^"]+)">\s*<script type = "text/javascript">\s*var spec = (.*?);\n',
                           (clone / "dvc_plots/index.html").read_text()))
    models = yaml.safe_load((clone / "params.yaml").read_text())["detector"]["sets"]["detector"]
    vendor = clone / "plots/html/vendor"
    for i, (div, mark, n) in enumerate([("plots_detection_pr_models_detector_all_csv", "mark-line", len(models)),
                                        ("plots_detection_f1_models_detector_deer_csv", "mark-line", len(models)),
                                        ("plots_detection_anatomy_detector_fp_csv", "mark-rect", 5 * len(models))]):
        got = drawn_marks(browser, divs[div], profile=tmp_path / f"p{i}", page=tmp_path / f"{i}.html", vendor=vendor)
        assert got.get(mark) == n, (div, got)


def report_markdown() -> str:
    """The report this checkout's code writes from the committed metrics (what the stats stage writes)."""
    from candor_eval.review.collect import read_metrics
    from candor_eval.review.gate_result import GateResult
    from candor_eval.review.report import review
    from candor_eval.review.stats_file import StatsFile

    def doc(name: str) -> dict:
        return json.loads((ROOT / "metrics" / name).read_text())
    stats = StatsFile.from_json(doc("stats.json"), where="metrics/stats.json")
    gate = GateResult.from_json(doc("gate.json"), where="metrics/gate.json")
    metrics = [ROOT / "metrics" / m for m in ("identification.json", "fields", "detection", "valuation.json")]
    sets = yaml.safe_load((ROOT / "params.yaml").read_text())["detector"]["sets"]
    return review(stats, gate, read_metrics(metrics, root=ROOT / "metrics")[0], sets=sets, forest="../figures")[1]


# After layout, each marked element's bottom edge (px from the top of the page) is written into the DOM.
MEASURE = """<script>
for (const el of document.querySelectorAll("p, li")) {
  const text = el.textContent;
  if (text.startsWith("Release gate:") || /^(lots|detection\\.[\\w.-]+) \\(against /.test(text)) {
    el.setAttribute("data-bottom", Math.ceil(el.getBoundingClientRect().bottom + window.scrollY));
  }
}
</script>"""


@pytest.mark.slow
@needs_browser
def test_the_rendered_report_shows_the_verdict_and_every_track_on_the_first_screen(browser, tmp_path):
    markdown_it = pytest.importorskip("markdown_it")
    body = markdown_it.MarkdownIt("commonmark").enable("table").render(report_markdown())
    page = tmp_path / "report.html"
    page.write_text("<!doctype html><html><head><meta charset='utf-8'><style>body{font:16px/1.5 sans-serif;"
                    "max-width:1012px;margin:0 auto;padding:32px}table{border-collapse:collapse}td,th{border:1px "
                    "solid #ccc;padding:4px 8px}</style></head><body>" + body + MEASURE + "</body></html>")
    dom = chromium(browser, page.as_uri(), f"--window-size={SCREEN[0]},{SCREEN[1]}", "--dump-dom",
                   profile=tmp_path / "d")
    marked = re.findall(r'<(?:p|li) data-bottom="(\d+)">(.*?)</(?:p|li)>', dom, flags=re.S)
    texts = [re.sub(r"<[^>]+>", "", t) for _, t in marked]
    assert texts[0].startswith("Release gate: FAILED"), texts
    assert {t.split(" (against")[0] for t in texts[1:]} == {"lots", "detection.detector"}, texts
    assert all(int(bottom) <= SCREEN[1] for bottom, _ in marked), marked
    REPORT_FIRST_SCREEN.parent.mkdir(exist_ok=True)
    chromium(browser, page.as_uri(), f"--window-size={SCREEN[0]},{SCREEN[1]}",
             f"--screenshot={REPORT_FIRST_SCREEN}", profile=tmp_path / "s")
    assert png_size(REPORT_FIRST_SCREEN) == SCREEN
