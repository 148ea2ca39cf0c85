"""candor plots: the project's DVC plots as one offline page (``dvc plots show`` with Vega vendored).

    candor plots [--out dvc_plots] [-- DVC_PLOTS_SHOW_ARGS...]

Runs ``dvc plots show --html-template <page template> -o OUT`` in the current folder (a DVC
project, e.g. what ``candor init`` wrote) and puts candor's vendored Vega, Vega-Lite and Vega-Embed
builds beside the page (``OUT/vendor/``), so it draws with no network: the template is candor's
offline page (package data ``plots_html/template.html``) with its scripts loaded from ``vendor/``
next to the page, wherever the project is (the checkout's own ``make plots`` loads them from
``plots/html/vendor/`` instead). Further arguments after ``--`` go to ``dvc plots show`` (e.g.
``-- plots/detection/pr_models``).

Exit codes: 0 the page was written; 2 not inside a DVC project, or ``dvc plots show`` failed (its
message is printed).
"""
from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path

from candor_eval.common.atomic import replace_dir_files
from candor_eval.common.errors import fail
from candor_eval.common.repository import dvc_root
from candor_eval.stages.cli_help import StageParser

CHECKOUT_VENDOR = "../plots/html/vendor/"      # where the checkout's template loads the scripts from
VENDOR = ("vega.min.js", "vega-lite.min.js", "vega-embed.min.js", "LICENSE")


def page_template(template: str) -> str:
    """The offline template with its scripts loaded from ``vendor/`` beside the page.

    >>> page_template('<script src="../plots/html/vendor/vega.min.js"></script>')
    '<script src="vendor/vega.min.js"></script>'
    """
    return template.replace(CHECKOUT_VENDOR, "vendor/")


def main(argv: Sequence[str] | None = None) -> int:
    p = StageParser(prog="candor plots", description=__doc__)
    p.add_argument("--out", default="dvc_plots", help="the page's folder (default: %(default)s)")
    p.add_argument("rest", nargs="*", help="after --: arguments for dvc plots show")
    args = p.parse_args(argv)
    html = files("candor_eval") / "plots_html"
    if dvc_root(Path.cwd().resolve()) is None:
        raise fail(str(Path.cwd()), "not inside a DVC project", expected="a folder with dvc.yaml in a DVC repository",
                   hint="run candor plots where your dvc.yaml is (candor init makes one)")
    dvc = shutil.which("dvc")
    if dvc is None:
        raise fail("dvc", "not found on PATH", expected="DVC installed beside candor (a dependency of candor-eval)")
    with tempfile.TemporaryDirectory() as tmp:
        template = Path(tmp) / "template.html"
        template.write_text(page_template((html / "template.html").read_text(encoding="utf-8")), encoding="utf-8")
        proc = subprocess.run([dvc, "plots", "show", "--html-template", str(template), "-o", args.out, *args.rest],
                              capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise fail("dvc plots show", (proc.stderr or proc.stdout).strip().splitlines()[-1] if (proc.stderr or
                                                                                               proc.stdout) else
                   f"exit {proc.returncode}")
    replace_dir_files(Path(args.out) / "vendor", {n: (html / "vendor" / n).read_bytes() for n in VENDOR}, clean=True)
    print(f"wrote {Path(args.out) / 'index.html'} (Vega vendored in {Path(args.out) / 'vendor'}: works offline)")
    return 0
