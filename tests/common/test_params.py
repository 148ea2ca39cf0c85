"""candor_eval.common.params: the checked YAML loader, one validated section per stage, and the one
probability check.

The models here are local (the stage models and the committed params.yaml: tests/test_params.py), so
what is tested is the loader's own policy: a repeated key, an anchor or a non-finite number is an
InputError naming file and line or key path; a misspelled section or key suggests the nearest; a
:data:`~candor_eval.common.params.Probability` lies strictly between 0 and 1.
"""
from __future__ import annotations

import math
from decimal import Decimal

import pytest
from pydantic import BaseModel, ConfigDict

from candor_eval.common.errors import InputError
from candor_eval.common.params import (
    ExactDecimal,
    Integer,
    Number,
    Probability,
    check_probability,
    load_yaml,
    nearest,
    non_finite,
    read_params,
    section,
    validate,
)


class Reference(BaseModel):
    model_config = ConfigDict(extra="forbid")
    lots: str = "prompt-a"


class Stats(BaseModel):
    model_config = ConfigDict(extra="forbid")
    confidence: Probability = 0.95
    alpha: Probability = 0.05
    reference: Reference = Reference()


@pytest.mark.parametrize("text, message", [
    ("a: 1\na: 2\n", "p.yaml:line 2: key 'a' repeated in one mapping"),
    ("a: &x [1]\nb: *x\n", "p.yaml:line 1: anchors and aliases"),
    ("a: .nan\n", "p.yaml:a: non-finite number"),
    ("a: {b: [1, -.inf]}\n", "p.yaml:a.b.1: non-finite number (expected a finite number, got -inf)"),
    ("a: b: c\n", "p.yaml: not valid YAML"),
    ("a: " + "[" * 3000 + "]" * 3000 + "\n", "p.yaml: not valid YAML"),
])
def test_load_yaml_refuses(tmp_path, text, message):
    (tmp_path / "p.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as err:
        load_yaml(tmp_path / "p.yaml")
    assert message in err.value.message.replace(str(tmp_path) + "/", "")


def test_load_yaml_drops_a_bom_and_names_a_foreign_byte(tmp_path):
    p = tmp_path / "p.yaml"
    p.write_bytes(b"\xef\xbb\xbfa: 1\n")
    assert load_yaml(p) == {"a": 1}
    p.write_bytes("a: caf\u00e9\n".encode("latin-1"))
    with pytest.raises(InputError, match=r"not UTF-8 text \(byte 6"):
        load_yaml(p)


def test_each_load_is_its_own_copy(tmp_path):
    """The parse is cached per text; a caller changing what it got changes nothing of the next load."""
    p = tmp_path / "p.yaml"
    p.write_text("a: {b: [1, 2]}\n", encoding="utf-8")
    load_yaml(p)["a"]["b"].append(3)
    assert load_yaml(p) == {"a": {"b": [1, 2]}}


@pytest.mark.parametrize("doc, expected", [
    ({"a": 1.5, "b": [0, {"c": "x"}]}, None),
    ({"a": {"b": [1.0, math.inf]}}, ("a.b.1", math.inf)),
    ([0.0, {"k": -math.inf}], ("1.k", -math.inf)),
    ({"first": math.inf, "second": math.nan}, ("first", math.inf)),        # the first in document order
    (None, None),
])
def test_non_finite_names_the_dotted_path_of_the_first(doc, expected):
    assert non_finite(doc) == expected


def test_nearest_suggests_only_a_close_name():
    assert nearest("confidance", ["alpha", "confidence"]) == "did you mean 'confidence'?"
    assert nearest("zzz", ["alpha", "confidence"]) is None


def test_unknown_section_and_key_suggest_the_nearest(tmp_path):
    p = tmp_path / "params.yaml"
    p.write_text("stat:\n  alpha: 0.1\n", encoding="utf-8")
    with pytest.raises(InputError, match="stat: unknown section \\(did you mean 'stats'\\?\\)"):
        section(Stats, "stats", path=p)
    p.write_text("stats:\n  confidance: 0.9\n", encoding="utf-8")
    with pytest.raises(InputError, match="stats.confidance: .*did you mean 'confidence'"):
        section(Stats, "stats", path=p)
    p.write_text("stats:\n  reference: {lot: p}\n", encoding="utf-8")      # nested model: its own fields
    with pytest.raises(InputError, match="stats.reference.lot: .*did you mean 'lots'"):
        section(Stats, "stats", path=p)


def test_a_missing_section_is_the_model_defaults_and_a_given_one_is_validated(tmp_path):
    p = tmp_path / "params.yaml"
    p.write_text("gate: {}\n", encoding="utf-8")
    assert section(Stats, "stats", path=p) == Stats()
    p.write_text("stats: {alpha: 0.1, reference: {lots: prompt-b}}\n", encoding="utf-8")
    assert section(Stats, "stats", path=p) == Stats(alpha=0.1, reference=Reference(lots="prompt-b"))


@pytest.mark.parametrize("text, expected", [("", {}), ("# nothing\n", {}), ("stats: {alpha: 0.1}\n",
                                                                            {"stats": {"alpha": 0.1}})])
def test_read_params_of_an_empty_or_small_file(tmp_path, text, expected):
    (tmp_path / "params.yaml").write_text(text, encoding="utf-8")
    assert read_params(tmp_path / "params.yaml") == expected


def test_read_params_refuses_a_top_level_that_is_not_a_mapping(tmp_path):
    (tmp_path / "params.yaml").write_text("- stats\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"params.yaml: top level must be a mapping \(got 'list'\)"):
        read_params(tmp_path / "params.yaml")


def test_every_misspelled_section_is_listed_at_once_and_the_users_own_are_ignored(tmp_path):
    (tmp_path / "params.yaml").write_text("stat: {}\nzebra: {}\ndetecter: {}\n", encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_params(tmp_path / "params.yaml")
    assert [p.where.rsplit(":", 1)[1] for p in err.value.problems] == ["stat", "detecter"]
    (tmp_path / "params.yaml").write_text("train: {epochs: 3}\nplots: {}\nstats: {alpha: 0.1}\nexport: 1\n")
    assert read_params(tmp_path / "params.yaml") == {"stats": {"alpha": 0.1}}


# --- Probability: strictly between 0 and 1, the one check for params and argv


@pytest.mark.parametrize("value, ok", [
    (0.05, True), (0.5, True), (1e-300, True), (1 - 1e-16, True),
    (0.0, False), (1.0, False), (-0.5, False), (1.5, False), (math.nan, False), (math.inf, False),
])
def test_a_probability_lies_strictly_between_0_and_1(value, ok):
    """Both forms of the check agree: the pydantic field type and :func:`check_probability`."""
    if ok:
        assert check_probability(value, where="--alpha") == value
        assert validate(Stats, {"alpha": value}, where="params.yaml:stats").alpha == value
        return
    with pytest.raises(InputError, match=r"^--alpha: must be strictly between 0 and 1 \(got "):
        check_probability(value, where="--alpha")
    with pytest.raises(InputError, match=r"^params.yaml:stats.alpha: "):
        validate(Stats, {"alpha": value}, where="params.yaml:stats")


def test_a_probability_field_names_the_file_and_the_key_path():
    with pytest.raises(InputError) as err:
        validate(Stats, {"confidence": 1.0, "alpha": 0.0}, where="p.yaml:stats")
    assert [p.where for p in err.value.problems] == ["p.yaml:stats.confidence", "p.yaml:stats.alpha"]
    assert "less than 1" in err.value.problems[0].what and "greater than 0" in err.value.problems[1].what


# --- Number, Integer, ExactDecimal: a bool or a string is never a number


class Numbers(BaseModel):
    model_config = ConfigDict(extra="forbid")
    x: Number = 0.0
    n: Integer = 0
    d: ExactDecimal = Decimal(0)


@pytest.mark.parametrize("key, value, expected", [
    ("x", 1, 1.0), ("x", 0.5, 0.5), ("n", 3, 3), ("d", 0.1, Decimal("0.1")), ("d", 25, Decimal(25)),
])
def test_numbers_take_yaml_numbers(key, value, expected):
    got = getattr(validate(Numbers, {key: value}, where="p.yaml:s"), key)
    assert got == expected and type(got) is type(expected)


@pytest.mark.parametrize("key, value, what", [
    ("x", True, "not bool"), ("x", "0.5", "not str"), ("n", False, "not bool"), ("n", "3", "not str"),
    ("n", 3.0, "valid integer"), ("n", 2.5, "valid integer"), ("d", True, "not bool"), ("d", "1", "not str"),
    ("x", None, "not NoneType"),
])
def test_numbers_refuse_bools_strings_and_fractional_counts(key, value, what):
    with pytest.raises(InputError, match=rf"^p.yaml:s.{key}: .*{what}"):
        validate(Numbers, {key: value}, where="p.yaml:s")


def test_an_exponent_without_a_dot_is_a_number_as_in_yaml_1_2(tmp_path):
    """PyYAML (YAML 1.1) reads ``1e3`` as text; DVC (YAML 1.2) as a number: the loader follows DVC,
    and quoted text stays text."""
    p = tmp_path / "p.yaml"
    p.write_text('a: 1e3\nb: -2E-4\nc: "1e3"\nd: 1e\n', encoding="utf-8")
    assert load_yaml(p) == {"a": 1000.0, "b": -0.0002, "c": "1e3", "d": "1e"}


def test_libyaml_and_the_pure_loader_read_every_yaml_file_of_the_repository_alike():
    """What libyaml loads, the pure-Python loader loads to equal content, and what libyaml refuses, the pure
    loader refuses too (then ``load_yaml`` parses again with the pure loader for its message): every YAML file
    of the repository (params, cards, word lists, the bad-input corpus with its anchors and alias bombs)."""
    import subprocess
    from pathlib import Path

    import yaml

    from candor_eval.common import params

    if not params.LIBYAML:
        pytest.skip("PyYAML without libyaml: the pure loader is the only one")
    root = Path(__file__).resolve().parents[2]
    files = subprocess.run(["git", "ls-files", "-z", "*.yaml", "*.yml"], cwd=root, capture_output=True, text=True,
                           check=True).stdout.strip("\0").split("\0")
    compared = refused = 0
    for rel in files:
        text = (root / rel).read_bytes().decode("utf-8", errors="replace").lstrip("\ufeff")
        try:
            fast = yaml.load(text, Loader=params._CheckedCLoader)
        except params._Refused as err:
            with pytest.raises(params._Refused) as pure:
                yaml.load(text, Loader=params._CheckedLoader)
            assert pure.value.what == err.what, rel
            refused += 1
            continue
        except Exception:  # noqa: BLE001 - load_yaml falls back to the pure loader on any failure
            continue
        assert yaml.load(text, Loader=params._CheckedLoader) == fast, rel
        compared += 1
    assert compared > 50 and refused >= 3


def test_params_parse_on_libyaml_and_errors_stay_the_pure_loader_s(tmp_path, monkeypatch):
    import yaml

    from candor_eval.common import params

    if not params.LIBYAML:
        pytest.skip("PyYAML without libyaml")
    used = []
    real = yaml.load
    monkeypatch.setattr(yaml, "load", lambda text, Loader: used.append(Loader) or real(text, Loader=Loader))
    (tmp_path / "p.yaml").write_text("stats:\n  alpha: 1e-2\n  x: [1, 2.5, true, null, '3']\n", encoding="utf-8")
    assert load_yaml(tmp_path / "p.yaml") == {"stats": {"alpha": 0.01, "x": [1, 2.5, True, None, "3"]}}
    assert used == [params._CheckedCLoader]
    for text, line in (("a: 1\nb:\n  c: 2\n  c: 3\n", "line 4: key 'c' repeated"), ("a: &x 1\n", "line 1: anchors")):
        used.clear()
        (tmp_path / "q.yaml").write_text(text, encoding="utf-8")
        with pytest.raises(InputError, match=line):
            load_yaml(tmp_path / "q.yaml")
        assert used[-1] is params._CheckedLoader
    (tmp_path / "r.yaml").write_text("a: [1, 2\n", encoding="utf-8")
    with pytest.raises(yaml.YAMLError) as pure:
        real("a: [1, 2\n", Loader=params._CheckedLoader)
    with pytest.raises(InputError) as err:
        load_yaml(tmp_path / "r.yaml")
    assert str(pure.value) in err.value.message                  # the pure loader's words, marks and all


# --- anchors and aliases: refused by the same composer on libyaml's events and on the pure parser's


def _loaders_used(monkeypatch) -> list:
    import yaml

    used: list = []
    real = yaml.load
    monkeypatch.setattr(yaml, "load", lambda text, Loader: used.append(Loader) or real(text, Loader=Loader))
    return used


def test_asterisks_and_ampersands_in_comments_and_quotes_parse_on_libyaml(tmp_path, monkeypatch):
    """The committed params.yaml has ``sqrt(w*h)`` in a comment, a model card ``round(w*scale)`` in a
    quoted string: text, read on libyaml, to the same content."""
    from candor_eval.common import params

    if not params.LIBYAML:
        pytest.skip("PyYAML without libyaml")
    used = _loaders_used(monkeypatch)
    (tmp_path / "p.yaml").write_text("# &top\nmatch:\n  bands: [32, 96]   # sqrt(w*h) & more\n  b: x#*y\t# *z\n"
                                     "  c: 'w*h # &a'\n  d: \"round(w*scale)\n    & more\"\n", encoding="utf-8")
    assert load_yaml(tmp_path / "p.yaml") == {"match": {"bands": [32, 96], "b": "x#*y", "c": "w*h # &a",
                                                        "d": "round(w*scale) & more"}}
    assert used == [params._CheckedCLoader]


@pytest.mark.parametrize("text, line", [
    ("a: &x 1\nb: *x\n", 1),                      # a real anchor and alias
    ("a: 1  # c\nb: [2, *x]  # *y\n", 2),          # an alias before a comment
    ("a: 'w # *h'\nb: &x 2\n", 2),                 # a `#` inside a quoted string: not a comment
    ('a: ["p\n  q # x", *y]\n', 2),                # a quoted string closing after a `#`, then an alias
    ("a: 1 # c\u2028b: &x 2\n", 2),                # a line break YAML knows (LS) after a comment
    ("a: &a [1, 2]\nb: &b [*a, *a]\nc: [*b, *b]\n", 1),   # the start of an alias bomb
])
def test_a_real_anchor_or_alias_is_refused_with_the_pure_loader_s_message(tmp_path, monkeypatch, text, line):
    import yaml

    from candor_eval.common import params

    used = _loaders_used(monkeypatch)
    (tmp_path / "q.yaml").write_text(text, encoding="utf-8")
    with pytest.raises(InputError, match=rf"q.yaml:line {line}: anchors and aliases \(&name, \*name\) are not allowed"):
        load_yaml(tmp_path / "q.yaml")
    assert used[-1] is params._CheckedLoader
    if params.LIBYAML:
        assert used[0] is params._CheckedCLoader          # refused on libyaml too, then parsed again for the message
        with pytest.raises(params._Refused, match="anchors"):
            yaml.load(text, Loader=params._CheckedCLoader)
