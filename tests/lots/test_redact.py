"""Redaction of live-mode secrets: which values of a key and a base URL are secret, and the replacement."""
from __future__ import annotations

import ast
import html
import json
import re
import urllib.parse

import pytest

from candor_eval.common.errors import InputError, Problem
from candor_eval.lots.recording import parse_answer
from candor_eval.lots.redact import MIN_SECRET, Redactor, forms, redact_exception, redacted_error, url_secrets

KEY = "sk-0123456789abcdef"


@pytest.mark.parametrize("url, secrets", [
    ("https://api.example.com/v1", []),
    ("https://h/v1?api-version=2024-06-01", ["api-version=2024-06-01", "2024-06-01"]),
    ("https://h/v1?key=abc%2Fdefghij&x=1", ["key=abc%2Fdefghij&x=1", "key=abc%2Fdefghij", "abc%2Fdefghij",
                                            "key=abc/defghij&x=1", "key=abc/defghij", "abc/defghij"]),
    ("https://user-name:pass-word-1@h/v1", ["user-name:pass-word-1", "user-name", "pass-word-1"]),
])
def test_url_secrets_of_at_least_min_length(url, secrets):
    assert sorted({s for s in url_secrets(url) if len(s) >= MIN_SECRET}) == sorted(set(secrets))


def test_every_secret_is_replaced_longest_first_and_short_values_are_left():
    redact = Redactor.for_endpoint("https://h/v1?token=tok-SECRET-42&v=1", KEY)
    text = f"Bearer {KEY}; token=tok-SECRET-42; tok-SECRET-42%; v=1 stays"
    assert redact(text) == "Bearer ***; ***; ***%; v=1 stays"
    assert Redactor()("nothing to hide") == "nothing to hide"


def test_percent_encoded_and_decoded_forms_are_both_redacted():
    redact = Redactor.for_endpoint("https://h/v1?k=a%2Bb%2Fc-d-e-f", KEY)
    assert redact("a%2Bb%2Fc-d-e-f and a+b/c-d-e-f") == "*** and ***"


# ---------------------------------------------------------------- every written form of a secret

# Each secret holds a quote, a slash, a backslash, <, > and &; the second also non-ASCII (a percent-decoded
# query value can be). Its alphanumeric chunks are unchanged by every encoding: none may survive redaction.
NASTY = ['HEADa91"MIDb72/\\<&>TAILc83', "HEADd44/été\u2028<&>TAILe55"]
CHUNKS = ("HEADa91", "MIDb72", "TAILc83", "HEADd44", "TAILe55")


def php(doc) -> str:
    """PHP's json_encode: ``/`` as ``\\/``, non-ASCII as ``\\uXXXX``."""
    return json.dumps(doc).replace("/", "\\/")


def go(doc) -> str:
    """Go's encoding/json: raw UTF-8, ``<``, ``>``, ``&``, U+2028 and U+2029 as ``\\u003c`` ..."""
    text = json.dumps(doc, ensure_ascii=False)
    for c, e in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(c, e)
    return text


def every_char_escaped(doc) -> str:
    """JSON whose every string character is a ``\\uXXXX`` escape (legal, and no list of forms covers it)."""
    def lit(s: str) -> str:
        return '"' + "".join(f"\\u{ord(c):04X}" if ord(c) < 0x10000 else c for c in s) + '"'
    return "{" + ", ".join(f"{lit(k)}: {lit(v)}" for k, v in doc.items()) + "}"


def lower_hex(text: str) -> str:
    return re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), text)


def strings(doc) -> str:
    """Every string of a parsed JSON document, keys and values, one a line."""
    if isinstance(doc, dict):
        return "\n".join(f"{k}\n{strings(v)}" for k, v in doc.items())
    return doc if isinstance(doc, str) else ""


def json_text(text: str) -> str:
    return strings(json.loads(text))


# form -> (the text that shows the secret, how to read it back)
FORMS = {
    "as written": (lambda s: f"echo {s} end", str),
    "json ensure_ascii off": (lambda s: json.dumps({"echo": s}, ensure_ascii=False), json_text),
    "json ensure_ascii on": (lambda s: json.dumps({"echo": s}), json_text),
    "json key holding a quote": (lambda s: json.dumps({f'note "{s}"': 1}, ensure_ascii=False), json_text),
    "php slashes": (lambda s: php({"echo": f"Bearer {s}"}), json_text),
    "go <>&": (lambda s: go({"echo": s}), json_text),
    "upper-case hex": (lambda s: re.sub(r"\\u[0-9a-f]{4}", lambda m: m.group().upper().replace("\\U", "\\u"),
                                        json.dumps({"echo": s})), json_text),
    "every char escaped": (lambda s: every_char_escaped({"echo": s}), json_text),
    "json inside json": (lambda s: json.dumps({"body": json.dumps({"echo": s})}),
                         lambda t: json_text(json.loads(t)["body"])),
    "php inside a recording line": (lambda s: json.dumps({"raw": php({"echo": s})}, ensure_ascii=False),
                                    lambda t: json_text(json.loads(t)["raw"])),
    "url quote": (lambda s: "https://h/cb?t=" + urllib.parse.quote(s, safe="") + "&x=1", urllib.parse.unquote),
    "url quote_plus": (lambda s: "t=" + urllib.parse.quote_plus(s), urllib.parse.unquote_plus),
    "url lower-case hex": (lambda s: "t=" + lower_hex(urllib.parse.quote(s, safe="")), urllib.parse.unquote),
    "url every byte": (lambda s: "t=" + "".join(f"%{b:02X}" for b in s.encode()), urllib.parse.unquote),
    "html": (lambda s: f"<p>{html.escape(s)}</p>", html.unescape),
    "python repr": (lambda s: f"ValueError: bad key {s!r}", lambda t: ast.literal_eval(t.partition("key ")[2])),
    "python ascii": (lambda s: f"bad key {ascii(s)}", lambda t: ast.literal_eval(t.partition("key ")[2])),
    "fenced json": (lambda s: "```json\n" + json.dumps({"echo": s}) + "\n```",
                    lambda t: strings(parse_answer(t)[0])),
}


@pytest.mark.parametrize("secret", NASTY)
@pytest.mark.parametrize("form", FORMS)
def test_every_form_of_a_secret_is_redacted(secret: str, form: str):
    encode, read = FORMS[form]
    text = encode(secret)
    assert secret in read(text)                                  # the form really holds the secret
    clean = Redactor.of([secret])(text)
    assert [c for c in CHUNKS if c in clean or c.lower() in clean] == [], clean
    assert secret not in read(clean) and "***" in read(clean)


@pytest.mark.parametrize("form", ["json ensure_ascii off", "json ensure_ascii on", "php slashes", "go <>&",
                                  "every char escaped", "json key holding a quote", "fenced json"])
def test_a_redacted_json_answer_stays_json_and_holds_the_mask(form: str):
    clean = Redactor.of([NASTY[0]])(FORMS[form][0](NASTY[0]))
    parsed, why = parse_answer(clean)
    assert why is None and "***" in strings(parsed)


def test_what_holds_no_secret_is_left_byte_for_byte():
    redact = Redactor.of(NASTY)
    for text in ['{"note": "caf\\u00e9 \\/ \\u003c ok"}', "50%25 off, a+b=c, %zz", "<p>&amp; fine</p>", "tok%"]:
        assert redact(text) == text


def test_a_url_keeps_its_other_parts_and_json_its_other_strings():
    redact = Redactor.of([NASTY[1]])
    assert redact("https://h/cb?t=" + urllib.parse.quote(NASTY[1], safe="") + "&x=1") == "https://h/cb?t=***&x=1"
    assert redact(json.dumps({"a": "keep \\ me", "b": f"x {NASTY[1]} y"})) == '{"a": "keep \\\\ me", "b": "x *** y"}'


def test_forms_cover_the_encodings_and_skip_short_decodings():
    got = forms('ab"cd/ef<g')
    assert {'ab"cd/ef<g', 'ab\\"cd/ef<g', 'ab\\"cd\\/ef<g', 'ab\\"cd/ef\\u003cg', 'ab\\\\\\"cd/ef<g',
            "ab%22cd%2Fef%3Cg", "ab%22cd%2fef%3cg", "ab%22cd/ef%3Cg", "ab&quot;cd/ef&lt;g"} <= got
    assert forms("abcdefgh") == {"abcdefgh"}
    assert forms("abc%2Fdefgh") >= {"abc%2Fdefgh", "abc/defgh"} and "a/bcdef" not in forms("a%2Fbcdef")


def test_tree_redacts_keys_and_values_and_leaks_tells():
    redact = Redactor.of([NASTY[0]])
    doc = {"a": [NASTY[0], 1, None], f"k {NASTY[0]}": {"n": 2.5}}
    assert redact.tree(doc) == {"a": ["***", 1, None], "k ***": {"n": 2.5}}
    assert redact.leaks(json.dumps(doc)) and not redact.leaks(json.dumps(redact.tree(doc)))


def test_a_bad_input_error_is_redacted_in_every_part():
    secret = NASTY[0]
    err = InputError([Problem("params.yaml:identify.providers.p.python", f"cannot import m: RuntimeError: {secret!r}",
                              expected=json.dumps(secret), got=None), Problem("x", "fine")], hint=f"key {secret}")
    clean = redacted_error(err, Redactor.of([secret]))
    assert clean.message == ("2 problems:\n  params.yaml:identify.providers.p.python: cannot import m: RuntimeError: "
                             "'***' (expected \"***\")\n  x: fine\nhint: key ***")


def test_an_exception_and_every_one_chained_to_it_are_redacted_in_place():
    secret = NASTY[1]
    try:
        try:
            raise KeyError(f"no {secret}")
        except KeyError as inner:
            raise SystemExit(f"exit: {secret!r}") from inner
    except SystemExit as caught:
        err = caught
    err.__context__ = ValueError(json.dumps(secret), 3)
    redact_exception(err, Redactor.of([secret]))
    assert (err.code, err.args) == ("exit: '***'", ("exit: '***'",))
    assert err.__cause__ is not None and err.__cause__.args == ("no ***",)
    assert err.__context__.args == ('"***"', 3)
