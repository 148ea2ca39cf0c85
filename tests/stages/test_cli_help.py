"""candor_eval/stages/cli_help.py: Sphinx markup stripped, paragraphs and items wrapped, command blocks kept."""
from __future__ import annotations

import argparse

from candor_eval.stages.cli_help import WIDTH, PlainHelp, plain, wrap_text


def test_plain_keeps_the_text_of_roles_literals_and_emphasis():
    assert plain(":mod:`candor_eval.lots.live`, :func:`~a.b.run`, :class:`the gate <a.Gate>`") == \
        "candor_eval.lots.live, run, the gate"
    assert plain("``--runs N`` is **the** count; ``a\n b`` over a break") == "--runs N is the count; a\n b over a break"
    assert plain("On this machine::\n\n    dvc repro\n::\n") == "On this machine:\n\n    dvc repro\n\n"
    assert plain("10**6 and 2 * 3") == "10**6 and 2 * 3"                 # no pair of marks: text


def test_paragraphs_and_items_wrap_and_an_indented_block_stays():
    text = ("one " * 30 + "\n\n* first item " + "x " * 40 + "\n  continued\n* second\n\n"
            "    candor identify -c p   # note\n    next line")
    out = wrap_text(text, 40)
    blocks = out.split("\n\n")
    assert max(map(len, out.splitlines())) <= 40
    assert blocks[0].splitlines()[0] == ("one " * 10).strip() and len(blocks[0].splitlines()) == 3
    items = blocks[1].splitlines()
    assert items[0].startswith("* first item") and all(ln.startswith("  ") for ln in items[1:-1])
    assert items[-2].endswith("continued") and items[-1] == "* second"
    assert blocks[2] == "    candor identify -c p   # note\n    next line"
    long = wrap_text("    candor x " + "--flag VALUE " * 8, 40).splitlines()
    assert long[0].startswith("    candor x") and all(ln.startswith("        ") for ln in long[1:])


def test_the_formatter_renders_a_docstring_plain_within_100_columns():
    parser = argparse.ArgumentParser(prog="candor x", description="Reads ``params.yaml`` (:mod:`a.b`). " * 10,
                                     formatter_class=PlainHelp)
    parser.add_argument("--out", help="where ``x`` goes, see :func:`~a.b.c` " * 4)
    assert PlainHelp(prog="candor x", width=300)._width == WIDTH           # a wide terminal: still 100
    out = parser.format_help()
    assert "``" not in out and ":mod:" not in out and ":func:" not in out and "see c" in out
    assert max(map(len, out.splitlines())) <= WIDTH


def test_every_parser_and_its_subcommands_render_plain_help():
    from candor_eval.stages.cli_help import StageParser
    p = StageParser(prog="candor x", description="see :mod:`candor_eval.stats.rates` and ``--runs``")
    sub = p.add_subparsers(dest="command").add_parser("run", description="the ``run`` of :func:`~a.b.go`")
    assert isinstance(sub, StageParser)
    assert "see candor_eval.stats.rates and --runs" in p.format_help()
    assert "the run of go" in sub.format_help() and "``" not in sub.format_help()
