"""Redaction of live-mode secrets: which values of a key and a base URL are secret, and the replacement."""
from __future__ import annotations

import pytest

from candor_eval.lots.redact import MIN_SECRET, Redactor, url_secrets

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
