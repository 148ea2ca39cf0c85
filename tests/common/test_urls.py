"""Tests for candor_eval/common/urls.py: a source URL's user-info never shown."""
from __future__ import annotations

import pytest

from candor_eval.common.urls import redact_source, redact_text, redact_urls, userinfo


@pytest.mark.parametrize("url, shown", [
    ("https://ann:secret-pw@h.example/a.png", "https://***@h.example/a.png"),
    ("s3://key:sig@bucket/a.png", "s3://***@bucket/a.png"),
    ("https://token@h.example/a.png", "https://***@h.example/a.png"),
    ("https://h.example/a@b.png", "https://h.example/a@b.png"),          # an @ in the path is no user-info
    ("images/a.png", "images/a.png"),
    ("https://h.example/a.png?api-version=1", "https://h.example/a.png?api-version=1"),
])
def test_user_info_is_masked_and_nothing_else(url, shown):
    assert redact_source(url) == shown
    assert (userinfo(url) == "") == (shown == url)


def test_every_form_of_the_user_info_leaves_free_text():
    url = "https://ann:p%40ss-w0rd@h.example/x"
    text = f"GET {url} failed; auth ann:p@ss-w0rd; password p@ss-w0rd, encoded p%40ss-w0rd"
    out = redact_text(text, url)
    assert "p@ss-w0rd" not in out and "p%40ss-w0rd" not in out and "ann:" not in out
    assert out.startswith("GET https://***@h.example/x failed")
    assert redact_text("a pin 123 stays", "https://u:123@h/x") == "a pin 123 stays"      # short: not searched
    assert redact_text("no url", None) == "no url"


def test_every_url_quoted_in_free_text_loses_its_user_info():
    text = "got 'https://ann:pw-123456@h.example/x' or file://u@/tmp/y; mail a@b.example stays"
    assert redact_urls(text) == "got 'https://***@h.example/x' or file://***@/tmp/y; mail a@b.example stays"
