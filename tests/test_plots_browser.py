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
- A screenshot goes to build/plots-screenshot.png.
- The vendored files match the SHA-256 values recorded in plots/html/README.md.

Skips when Chromium is not installed, unless CI is set (then it fails: `.ci/run` installs it).
"""
from __future__ import annotations

import hashlib
import math
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
OFFLINE = ("--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
           "--proxy-bypass-list=<-loopback>")
COLUMNS, COLUMN_PX, ROW_PX = 4, 486, 440        # the template's grid: 470 px columns, 16 px gaps

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
        self.vendor_missing = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        classes = a.get("class", "").split()
        if tag == "div" and a.get("id") in self.divs:
            self.current = a["id"]
        elif a.get("id") == "vendor-missing":
            self.vendor_missing = True
        elif self.current and "marks" in classes and tag in ("canvas", "svg"):
            self.marks[self.current].append((float(a.get("width") or 0), float(a.get("height") or 0)))
        elif self.current and "no-data" in classes:
            self.no_data.add(self.current)


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

    SCREENSHOT.parent.mkdir(exist_ok=True)
    rows = math.ceil(len(divs) / COLUMNS)
    size = (COLUMNS * COLUMN_PX + 32, rows * ROW_PX + 32)
    chromium(browser, page.as_uri(), f"--window-size={size[0]},{size[1]}",
             f"--screenshot={SCREENSHOT}", profile=tmp_path / "s")
    assert png_size(SCREENSHOT) == size


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
