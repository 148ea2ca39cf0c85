"""Class and model names as file names and page text (pure: no I/O).

Plot data files are named after their class (:mod:`candor_eval.detection.scoring.plots`), and the
names appear as they are in the plots page (``dvc plots show`` embeds them in a script) and in
the report. So a data set's class names are checked once, where the ground truth is read
(:mod:`candor_eval.detection.scoring.truth`): :func:`class_name_problems`.
"""
from __future__ import annotations

import re

from candor_eval.common.errors import Problem


def safe_name(name: str) -> str:
    """A file-name-safe version of a class or model name."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "_"


RESERVED = ("all", "background")      # the micro curve's file name; the confusion matrix's no-box row
UNSAFE = re.compile(r"[<>&\"'`\\]|[^\S ]|[\x00-\x1f\x7f]")


def class_name_problems(classes: tuple[str, ...] | list[str], *, where: str) -> list[Problem]:
    """Why data class names cannot name plot files and page content: a reserved name
    (:data:`RESERVED`, any case), a character that is markup or a quote in the plots page and the
    report (``< > & " ' ` \\``) or whitespace other than a space or a control character, or two
    names with the same :func:`safe_name` (case-insensitive: they would overwrite each other's
    files). Empty: every name is fine.

    >>> class_name_problems(["deer", "red deer"], where="c.txt")
    []
    >>> [p.what for p in class_name_problems(["All", "a b", "a_b", "</script>"], where="c.txt")]
    ... # doctest: +NORMALIZE_WHITESPACE
    ['reserved class name', "two class names give one plot file name 'a_b'",
     'a character that is markup, a quote or a control character']
    """
    problems = []
    seen: dict[str, str] = {}
    for name in classes:
        if name.lower() in RESERVED:
            problems.append(Problem(where, "reserved class name", expected="any name but " + ", ".join(RESERVED),
                                    got=repr(name)))
            continue
        key = safe_name(name).lower()
        if key in seen:
            problems.append(Problem(where, f"two class names give one plot file name {safe_name(name)!r}",
                                    expected="class names that differ after mapping characters outside "
                                             "[A-Za-z0-9_.-] to '_'", got=f"{seen[key]!r} and {name!r}"))
        seen.setdefault(key, name)
        if UNSAFE.search(name):
            problems.append(Problem(where, "a character that is markup, a quote or a control character",
                                    expected="no < > & \" ' ` \\, tab, newline or control character", got=repr(name)))
    return problems
