"""``candor plots`` (candor_eval/stages/plots.py): the real ``dvc plots show`` in a tiny DVC project, with the
vendored scripts beside the page."""
from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from candor_eval.stages.plots import page_template
from tests.conftest import CANDOR, ROOT


def test_the_template_loads_the_scripts_beside_the_page():
    template = page_template((ROOT / "plots/html/template.html").read_text())
    assert "../plots/html/vendor/" not in template
    assert template.count('<script src="vendor/') == 3


def test_the_page_is_written_with_vega_beside_it(tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    bin_dir = Path(sys.executable).parent
    subprocess.run([str(bin_dir / "dvc"), "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "p").mkdir()
    (tmp_path / "p/pr.csv").write_text("recall,precision\n0.1,0.9\n0.5,0.7\n")
    (tmp_path / "dvc.yaml").write_text("plots:\n  - p/pr.csv:\n      x: recall\n      y: precision\n")
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "DVC_NO_ANALYTICS": "1", "HOME": str(tmp_path)}
    out = subprocess.run([*CANDOR, "plots"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "dvc_plots/index.html").read_text()
    assert '<script src="vendor/vega.min.js">' in page and "p/pr.csv" in page
    vendored = tmp_path / "dvc_plots/vendor/vega.min.js"
    assert hashlib.sha256(vendored.read_bytes()).digest() == hashlib.sha256(
        (ROOT / "plots/html/vendor/vega.min.js").read_bytes()).digest()


def test_outside_a_dvc_project_it_exits_2(tmp_path):
    bin_dir = Path(sys.executable).parent
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "DVC_NO_ANALYTICS": "1", "HOME": str(tmp_path)}
    out = subprocess.run([*CANDOR, "plots"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert out.returncode == 2 and "not inside a DVC project" in out.stderr and not (tmp_path / "dvc_plots").exists()
