"""Command-line glue of every command's help: plain text (no Sphinx markup), wrapped, in 100 columns.

The module docstrings are the source of every stage's ``--help`` and are written for the API docs, in
reStructuredText with Sphinx roles. :func:`plain` renders one for a terminal: a role keeps its text
(``:mod:`candor_eval.lots.live``` is ``candor_eval.lots.live``, ``:func:`~a.b.c``` is ``c``, a
``:class:`text <target>``` is ``text``), inline literals and emphasis lose their marks (````x```` and
``**x**`` are ``x``), and a ``::`` that introduces a literal block becomes ``:``. :class:`PlainHelp`, an
argparse formatter, wraps each paragraph and list item to the width (an item's continuation lines under
its text) and keeps an indented block (a command example) as written, a line wider than the width
broken at spaces (its continuation four columns further in).
"""
from __future__ import annotations

import argparse
import re
import shutil
import textwrap
from typing import Any

WIDTH = 100        # the widest line of any candor output, --help included

_ROLE = re.compile(r":[a-z]+(?::[a-z]+)?:`([^`]+)`")     # [^`] spans a line break too
_LITERAL = re.compile(r"``(.+?)``", re.DOTALL)      # a literal may run over a line break
_STRONG = re.compile(r"\*\*(.+?)\*\*")
_TITLED = re.compile(r"^(.*?)\s*<[^<>]+>$")
_ITEM = re.compile(r"^(\s*)([-*]|\d+\.)\s+")


def _role_text(match: re.Match[str]) -> str:
    """The shown text of a Sphinx role: its title when ``title <target>``, else the target (only its last
    dotted part after ``~``)."""
    inner = match.group(1)
    if (titled := _TITLED.match(inner)) is not None:
        return titled.group(1)
    return inner.rsplit(".", 1)[-1] if inner.startswith("~") else inner


def plain(text: str) -> str:
    """``text`` without Sphinx markup (module docstring).

    >>> plain("see :mod:`candor_eval.lots.live` and :func:`~a.b.run`: ``--runs N`` is **the** count::")
    'see candor_eval.lots.live and run: --runs N is the count:'
    """
    text = _ROLE.sub(_role_text, text)
    text = _LITERAL.sub(r"\1", text)
    text = _STRONG.sub(r"\1", text)
    text = re.sub(r"(?<=\S)::$", ":", text, flags=re.MULTILINE)
    return re.sub(r"^::$", "", text, flags=re.MULTILINE)


def wrap_text(text: str, width: int) -> str:
    """``text`` (plain) with each paragraph and list item wrapped to ``width``; an indented block that is
    no list item (a command example) kept line by line as written."""
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text.strip("\n")):
        lines = block.splitlines()
        if all(ln.startswith((" ", "\t")) for ln in lines) and not _ITEM.match(lines[0]):
            out.append("\n".join(_long_line(ln.rstrip(), width) for ln in lines))
            continue
        items: list[list[str]] = []
        for ln in lines:
            if _ITEM.match(ln) or not items:
                items.append([ln])
            else:
                items[-1].append(ln)
        wrapped = []
        for item in items:
            head = _ITEM.match(item[0])
            lead = head.group(0) if head else _indent(item[0])
            body = " ".join(part.strip() for part in [item[0][len(lead):], *item[1:]])
            wrapped.append(textwrap.fill(body, width=width, initial_indent=lead, subsequent_indent=" " * len(lead),
                                         break_on_hyphens=False, break_long_words=False))
        out.append("\n".join(wrapped))
    return "\n\n".join(out)


def _indent(line: str) -> str:
    """The leading white space of ``line``."""
    return line[: len(line) - len(line.lstrip())]


def _long_line(line: str, width: int) -> str:
    """A line of an indented block as written, or, when wider than ``width``, broken at spaces with its
    continuation lines four columns further in."""
    if len(line) <= width:
        return line
    lead = _indent(line)
    return textwrap.fill(line.strip(), width=width, initial_indent=lead, subsequent_indent=lead + "    ",
                         break_on_hyphens=False, break_long_words=False)


def help_width() -> int:
    """The width of the help text: the terminal's less 2 (argparse's own rule), at most :data:`WIDTH`."""
    return min(shutil.get_terminal_size().columns - 2, WIDTH)


class PlainHelp(argparse.HelpFormatter):
    """The argparse formatter of every candor command: the description and each argument's help plain
    (:func:`plain`) and wrapped (:func:`wrap_text`) to at most :data:`WIDTH` columns."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None) -> None:
        super().__init__(prog, indent_increment, max_help_position, min(width or help_width(), WIDTH))

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return textwrap.indent(wrap_text(plain(text), width - len(indent)), indent) + "\n"

    def _split_lines(self, text: str, width: int) -> list[str]:
        return super()._split_lines(plain(text), width)


class StageParser(argparse.ArgumentParser):
    """The argument parser of every candor command, written once: its help, usage and errors rendered by
    :class:`PlainHelp` (plain, at most :data:`WIDTH` columns); its subcommands' parsers are of this class
    too (argparse makes a subparser of its parent's class)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", PlainHelp)
        super().__init__(*args, **kwargs)
