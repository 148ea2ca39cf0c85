"""Code fingerprints (candor_eval/adopt/fingerprint.py) on a tiny package tree built by hand, and an
independent reference: the closure a real import leaves in ``sys.modules``."""
from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from candor_eval.adopt.fingerprint import (
    STAGE_MODULES,
    closure,
    fingerprint,
    package_files,
    package_fingerprint,
    package_root,
    stage_fingerprint,
)


def tree(root: Path, files: dict[str, str]) -> Path:
    pkg = root / "candor_eval"
    for rel, text in files.items():
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text(text)
    return pkg


FILES = {"__init__.py": "", "stages/__init__.py": "", "common/__init__.py": "",
         "stages/a.py": "from candor_eval.common import x\nfrom ..common.y import f\n",
         "stages/b.py": "import json\n", "common/x.py": "def g():\n    import candor_eval.common.z\n",
         "common/y.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from candor_eval.common import w\n",
         "common/z.py": "", "common/w.py": ""}


def test_the_closure_follows_lazy_and_relative_imports_and_parents_not_annotations(tmp_path):
    pkg = tree(tmp_path, FILES)
    got = [p.relative_to(pkg).as_posix() for p in closure("candor_eval.stages.a", pkg)]
    assert got == ["__init__.py", "common/__init__.py", "common/x.py", "common/y.py", "common/z.py",
                   "stages/__init__.py", "stages/a.py"]


def test_the_fingerprint_is_the_sha256_of_the_sha256sum_listing(tmp_path):
    pkg = tree(tmp_path, {"__init__.py": "", "m.py": "x = 1\n"})
    listing = "".join(f"{hashlib.sha256(t.encode()).hexdigest()}  candor_eval/{n}\n"
                      for n, t in (("__init__.py", ""), ("m.py", "x = 1\n")))
    assert fingerprint([pkg / "m.py", pkg / "__init__.py"], tmp_path) == hashlib.sha256(listing.encode()).hexdigest()


def test_a_byte_changes_the_fingerprint_of_the_stages_that_load_it_only(tmp_path):
    pkg = tree(tmp_path, FILES)
    before = [fingerprint(closure(f"candor_eval.stages.{s}", pkg), tmp_path) for s in "ab"]
    (pkg / "common" / "z.py").write_text("# edited\n")
    after = [fingerprint(closure(f"candor_eval.stages.{s}", pkg), tmp_path) for s in "ab"]
    assert before[0] != after[0] and before[1] == after[1]


def test_the_closure_holds_every_module_a_real_import_loads():
    """Reference: importing the stage module in a fresh interpreter; every ``candor_eval`` module it loads
    at import time is in the closure (the closure also holds lazy imports, so it may be larger)."""
    root = package_root()
    for stage, module in STAGE_MODULES.items():
        code = (f"import sys, candor_eval.stages.{module}\n"
                "print('\\n'.join(m.__file__ for n, m in sys.modules.items() if n.startswith('candor_eval') "
                "and getattr(m, '__file__', None)))")
        loaded = {Path(f).resolve() for f in subprocess.run([sys.executable, "-c", code], capture_output=True,
                                                            text=True, check=True).stdout.split()}
        missing = loaded - {p.resolve() for p in closure(f"candor_eval.stages.{module}", root)}
        assert missing == set(), stage


def test_every_stage_has_a_fingerprint():
    assert all(len(stage_fingerprint(s)) == 64 for s in STAGE_MODULES)


def test_the_package_fingerprint_covers_every_py_file_and_nothing_else(tmp_path):
    pkg = tree(tmp_path, FILES | {"data/x.yaml": "a: 1\n"})
    (pkg / "__pycache__").mkdir()
    (pkg / "__pycache__" / "x.cpython-312.pyc").write_bytes(b"\0")
    assert [p.relative_to(pkg).as_posix() for p in package_files(pkg)] == sorted(
        ["__init__.py", "common/__init__.py", "common/w.py", "common/x.py", "common/y.py", "common/z.py",
         "stages/__init__.py", "stages/a.py", "stages/b.py"])
    listing = "".join(f"{hashlib.sha256((pkg / rel).read_bytes()).hexdigest()}  candor_eval/{rel}\n"
                      for rel in sorted(FILES))
    before = package_fingerprint(pkg)
    assert before == hashlib.sha256(listing.encode()).hexdigest()
    (pkg / "data/x.yaml").write_text("a: 2\n")
    (pkg / "__pycache__" / "x.cpython-312.pyc").write_bytes(b"\1")
    assert package_fingerprint(pkg) == before                  # not Python source: no stage's closure holds it
    (pkg / "common/w.py").write_text("# loaded by no stage\n")
    assert package_fingerprint(pkg) != before                  # any module, loaded by a stage or not
