"""Adding a detection set, or a model to a set, in a params file's ``detector.sets``, by inserting text.

``detector.sets`` maps a set to the model cards scored on it, reference first
(:mod:`candor_eval.detection.sets`). ``candor add set`` adds ``<set>: []`` (:func:`add_set`);
``candor add model`` appends a model to a set's list (:func:`add_model`). Each returns the new text
of the file, the same text when the set or model is already there (rerunning changes nothing).

The edit inserts text where the addition belongs and changes no other byte: comments, their
alignment, key order, indentation, quoting and blank lines stay as written. (A YAML round trip
does not: ruamel.yaml re-indents every list to one style, puts a new last key of a mapping below
the comment lines that follow that mapping, and shifts trailing comments.) The places, found from
the parsed nodes' positions:

- a key (a set under ``sets``, or ``sets`` under ``detector``, or ``detector`` at the top) goes on
  a new line after the last line of the mapping's last entry, at its keys' indent; into a flow
  mapping before its ``}``; an empty ``{}`` or an empty value (``sets:``, ``sets: null``) becomes
  a block mapping below its key, one indent step (the file's own, else 2) deeper, the ``{}``
  blanked so a comment after it keeps its column;
- a model goes on a new line after the last item of a block list, with the same dash and indent;
  into a flow list before its ``]`` (``[]`` becomes ``[m]``); an empty value becomes ``[m]``.

Names are written as YAML plain scalars, quoted when they would read as something else
(``true``, ``1.5``). The result is checked: parsed again it must be the old document with the one
addition, exactly; a layout this module cannot place text in is an input error that gives the
line to add by hand. Only the structure of ``detector.sets`` is read here (a mapping of set ->
list of model names); the params stages validate the rest.
"""
from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import yaml

from candor_eval.common.errors import fail

Node = yaml.Node
DEFAULT_STEP = 2


class _SafeNodes(yaml.SafeLoader):
    """The safe loader, composing nodes (with their positions) and nothing else."""


def scalar(name: str) -> str:
    """``name`` as a YAML flow scalar that reads back as that string.

    >>> scalar("birds"), scalar("true"), scalar("1.5")
    ('birds', "'true'", "'1.5'")
    """
    return yaml.safe_dump([name], default_flow_style=True, width=1 << 16).strip()[1:-1]


def parse(text: str, *, where: str) -> tuple[Any, Node | None]:
    """The document and its root node; invalid YAML is an InputError naming ``where``."""
    try:
        return yaml.safe_load(text), yaml.compose(text, Loader=_SafeNodes)
    except yaml.YAMLError as err:
        raise fail(where, f"not valid YAML: {err}") from None


def detector_sets(text: str, *, where: str) -> dict[str, list[str]]:
    """``detector.sets`` of a params file's ``text``: set -> its models (a set with an empty or
    null list has none); a missing or empty ``detector`` or ``sets`` is no set. Anything but a
    mapping of names to lists of names is an InputError naming ``where`` and the key."""
    doc, _ = parse(text, where=where)
    detector = doc.get("detector") if isinstance(doc, dict) else None
    if doc is not None and not isinstance(doc, dict):
        raise fail(where, "the top level is not a mapping", expected="sections such as detector:")
    if detector is None:
        return {}
    if not isinstance(detector, dict):
        raise fail(f"{where}:detector", "not a mapping", got=type(detector).__name__)
    sets = detector.get("sets")
    if sets is None:
        return {}
    if not isinstance(sets, dict):
        raise fail(f"{where}:detector.sets", "not a mapping", expected="{<set>: [<model>, ...]}",
                   got=type(sets).__name__)
    out: dict[str, list[str]] = {}
    for key, models in sets.items():
        models = [] if models is None else models
        if not isinstance(key, str) or not isinstance(models, list) or not all(isinstance(m, str) for m in models):
            raise fail(f"{where}:detector.sets.{key}", "not a set name with a list of model names",
                       expected="<set>: [<model>, ...]", got=repr({key: models})[:200])
        out[key] = models
    return out


def choose_set(sets: dict[str, list[str]], wanted: str | None, *, where: str) -> str:
    """The set a model is added to: ``wanted`` when given (it must be a set of ``sets``), else the
    only set; no set, several sets without ``wanted``, or an unknown one is an InputError naming them.

    >>> choose_set({"birds": []}, None, where="params.yaml")
    'birds'
    """
    names = ", ".join(sets) or "none"
    if wanted is not None:
        if wanted not in sets:
            raise fail(f"{where}:detector.sets", f"no detection set {wanted!r}", expected=f"one of: {names}",
                       hint=f"bring its data first: candor add set {wanted} --from DATA_YAML")
        return wanted
    if len(sets) == 1:
        return next(iter(sets))
    if not sets:
        raise fail(f"{where}:detector.sets", "no detection set to add the model to",
                   hint="bring a set first: candor add set NAME --from DATA_YAML (or --coco FILE --images DIR)")
    raise fail(f"{where}:detector.sets", "several detection sets: which one is the model scored on?",
               expected="--set SET", got=names, hint="name it with --set (one of: " + names + ")")


def add_set(text: str, name: str, *, where: str) -> str:
    """``text`` with ``<name>: []`` under ``detector.sets`` (unchanged when the set is there)."""
    sets = detector_sets(text, where=where)
    if name in sets:
        return text
    _, root = parse(text, where=where)
    entry = f"{scalar(name)}: []"
    step = indent_step(root)
    detector = entry_of(root, "detector")
    if detector is None:
        new = insert_key(text, parent=None, node=root, block=["detector:", " " * step + "sets:",
                                                              " " * 2 * step + entry],
                         flow=f"detector: {{sets: {{{entry}}}}}", step=step)
    else:
        sets_entry = entry_of(detector[1], "sets")
        if sets_entry is None:
            new = insert_key(text, parent=detector[0], node=detector[1], block=["sets:", " " * step + entry],
                             flow=f"sets: {{{entry}}}", step=step)
        else:
            new = insert_key(text, parent=sets_entry[0], node=sets_entry[1], block=[entry], flow=entry, step=step)

    def expect(doc: dict) -> None:
        if doc.get("detector") is None:
            doc["detector"] = {}
        if doc["detector"].get("sets") is None:
            doc["detector"]["sets"] = {}
        doc["detector"]["sets"][name] = []

    return checked(text, new, expect, where=where, line=f"detector.sets: {entry}")


def add_model(text: str, model: str, *, set_name: str, where: str) -> str:
    """``text`` with ``model`` appended to ``detector.sets.<set_name>`` (unchanged when listed); the
    set must exist (:func:`choose_set`)."""
    sets = detector_sets(text, where=where)
    if set_name not in sets:
        raise fail(f"{where}:detector.sets", f"no detection set {set_name!r}", expected=", ".join(sets) or "a set")
    if model in sets[set_name]:
        return text
    _, root = parse(text, where=where)
    detector = entry_of(root, "detector")
    sets_entry = entry_of(detector[1], "sets") if detector else None
    found = entry_of(sets_entry[1], set_name) if sets_entry else None
    if found is None:       # detector_sets found it: only a document the composer reads otherwise
        raise fail(f"{where}:detector.sets.{set_name}", "not found in the file's text")
    new = insert_item(text, key=found[0], node=found[1], item=scalar(model))

    def expect(doc: dict) -> None:
        models = doc["detector"]["sets"]
        models[set_name] = [*(models[set_name] or []), model]

    return checked(text, new, expect, where=where, line=f"detector.sets.{set_name}: append {model}")


# --- the text edits


def entry_of(node: Node | None, key: str) -> tuple[Node, Node] | None:
    """(key node, value node) of ``key`` in mapping ``node`` (None: not a mapping, or no such key)."""
    if not isinstance(node, yaml.MappingNode):
        return None
    return next(((k, v) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == key), None)


def indent_step(root: Node | None) -> int:
    """The file's indent step: the column of the keys of the first top-level block mapping that is a
    value of the top level (whose keys are at column 0), else :data:`DEFAULT_STEP`.

    >>> indent_step(yaml.compose("a: 1\\nb:\\n    c: 2\\n", Loader=_SafeNodes)), indent_step(None)
    (4, 2)
    """
    values = [v for _, v in root.value] if isinstance(root, yaml.MappingNode) else []
    nested = next((v for v in values if isinstance(v, yaml.MappingNode) and not v.flow_style and v.value), None)
    return nested.value[0][0].start_mark.column if nested is not None else DEFAULT_STEP


def last_line(node: Node) -> int:
    """The 0-based line of the last character of ``node``'s content (comments after it are not content)."""
    while isinstance(node, yaml.MappingNode | yaml.SequenceNode) and node.value and not node.flow_style:
        if isinstance(node, yaml.MappingNode):
            key, value = node.value[-1]
            if is_empty(value):
                return key.end_mark.line
            node = value
        else:
            node = node.value[-1]
    end = node.end_mark
    return end.line if end.column > 0 else end.line - 1


def is_null(node: Node) -> bool:
    return isinstance(node, yaml.ScalarNode) and node.tag == "tag:yaml.org,2002:null"


def is_empty(node: Node) -> bool:
    """A null written as nothing (``key:`` followed by the next line)."""
    return is_null(node) and node.start_mark.index == node.end_mark.index


def newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def line_start(text: str, line: int) -> int:
    """Index of the first character of 0-based ``line`` (``len(text)`` past the end; a missing final
    newline is the caller's: :func:`after_line` adds it)."""
    index = 0
    for _ in range(line):
        nxt = text.find("\n", index)
        if nxt < 0:
            return len(text)
        index = nxt + 1
    return index


def after_line(text: str, line: int, lines: list[str]) -> str:
    """``text`` with ``lines`` inserted after 0-based ``line``."""
    nl = newline(text)
    if text and not text.endswith("\n"):
        text += nl
    at = line_start(text, line + 1)
    return text[:at] + "".join(x + nl for x in lines) + text[at:]


def blank(text: str, start: int, end: int) -> str:
    """``text[start:end]`` removed: replaced by spaces when a comment follows on its line (it keeps
    its column), else dropped with the spaces before it."""
    rest = text[end:].split("\n", 1)[0].rstrip("\r")
    if rest.strip():
        return text[:start] + " " * (end - start) + text[end:]
    head = text[:start].rstrip(" \t")
    return head + text[end:].lstrip(" \t")


def insert_key(text: str, *, parent: Node | None, node: Node | None, block: list[str], flow: str, step: int) -> str:
    """``text`` with a key added to mapping ``node`` (the value of key node ``parent``; None: the top
    level): ``block``, its lines at the mapping's indent, or ``flow``, its flow form."""
    if isinstance(node, yaml.MappingNode) and node.flow_style:
        close = node.end_mark.index - 1
        if text[close] != "}":
            return text
        if node.value:
            return text[:close] + ", " + flow + text[close:]
        if parent is None:
            return text[:node.start_mark.index] + "\n".join(block) + text[node.end_mark.index:]
        return below(text, parent=parent, span=(node.start_mark.index, node.end_mark.index), block=block, step=step)
    if isinstance(node, yaml.MappingNode) and node.value:
        col = node.value[0][0].start_mark.column
        return after_line(text, last_line(node), [" " * col + x for x in block])
    if node is None or (parent is None and is_null(node)):           # an empty document (or comments only)
        nl = newline(text)
        return text + (nl if text and not text.endswith("\n") else "") + "".join(x + nl for x in block)
    if is_null(node) and parent is not None:
        span = None if is_empty(node) else (node.start_mark.index, node.end_mark.index)
        return below(text, parent=parent, span=span, block=block, step=step)
    return text                                                        # not a mapping: the check refuses it


def below(text: str, *, parent: Node, span: tuple[int, int] | None, block: list[str], step: int) -> str:
    """``block`` as the first lines of a block mapping under key ``parent``, one ``step`` deeper;
    ``span`` (an empty ``{}`` or a written null after the key) is blanked first."""
    col = parent.start_mark.column + step
    line = parent.end_mark.line if span is None else max(parent.end_mark.line, line_of(text, span[1]))
    new = after_line(text, line, [" " * col + x for x in block])
    return new if span is None else blank(new, *span)


def line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index)


def insert_item(text: str, *, key: Node, node: Node, item: str) -> str:
    """``text`` with ``item`` appended to the list ``node`` (the value of ``key``)."""
    if isinstance(node, yaml.SequenceNode) and node.flow_style:
        close = node.end_mark.index - 1
        if text[close] != "]":
            return text
        return text[:close] + (", " if node.value else "") + item + text[close:]
    if isinstance(node, yaml.SequenceNode) and node.value:
        first = node.value[0].start_mark.index
        dash = text[node.start_mark.index:first]
        dash = dash if "\n" not in dash and dash.startswith("-") else "- "
        return after_line(text, last_line(node), [" " * node.start_mark.column + dash + item])
    if is_null(node) and not is_empty(node):
        return text[:node.start_mark.index] + f"[{item}]" + text[node.end_mark.index:]
    if is_empty(node):
        colon = text.find(":", key.end_mark.index)
        return text[:colon + 1] + f" [{item}]" + text[colon + 1:]
    return text


def checked(old: str, new: str, expect: Callable[[dict], None], *, where: str, line: str) -> str:
    """``new`` when it parses to ``old``'s document changed by ``expect`` (which edits a copy in
    place), else an InputError naming ``where`` and giving the change to make by hand."""
    wanted, _ = parse(old, where=where)
    wanted = copy.deepcopy(wanted) if wanted is not None else {}
    expect(wanted)
    try:
        got = yaml.safe_load(new)
    except yaml.YAMLError:
        got = None
    if new == old or got != wanted:
        raise fail(where, "cannot add to detector.sets without rewriting other lines (an unusual layout)",
                   expected=line, hint=f"add it by hand: {line}")
    return new
