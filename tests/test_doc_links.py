"""Every pointer into the documentation leads somewhere: a README section named in code, docs,
params or the Makefile (``README "Sweeps"``, ``README, "Bring your own"``) is the start of one of
the README's headings, and every ``docs/<name>.md`` named anywhere exists."""
from __future__ import annotations

import re
import subprocess

from tests.conftest import ROOT

SECTION = re.compile(r'README(?:\'s)?,? (?:section )?"([^"\n]+)"')
DOC = re.compile(r"\bdocs/([A-Za-z_]+\.md)\b")


def _tracked_texts() -> dict[str, str]:
    names = subprocess.run(["git", "ls-files", "*.py", "*.md", "*.yaml", "Makefile", "*.txt", ".ci/run"],
                           cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    return {n: (ROOT / n).read_text(encoding="utf-8", errors="replace") for n in names
            if not n.startswith("tests/bad_inputs/") and (ROOT / n).is_file()}


def headings() -> list[str]:
    return [ln.lstrip("#").strip() for ln in (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
            if ln.startswith("## ") or ln.startswith("### ")]


def test_readme_sections_named_elsewhere_exist():
    heads = headings()
    missing = sorted({(name, title) for name, text in _tracked_texts().items() for title in SECTION.findall(text)
                      if not any(h.startswith(title) for h in heads)})
    assert missing == []


def test_docs_named_elsewhere_exist():
    missing = sorted({(name, doc) for name, text in _tracked_texts().items() for doc in DOC.findall(text)
                      if not (ROOT / "docs" / doc).is_file()})
    assert missing == []


def test_the_checker_finds_a_missing_section():
    """The pattern reads the forms the repository uses, so a renamed section cannot pass unseen."""
    text = 'see README "No such section" and README, "Sweeps"; README\'s "Quick start"'
    assert SECTION.findall(text) == ["No such section", "Sweeps", "Quick start"]
    assert not any(h.startswith("No such section") for h in headings())
