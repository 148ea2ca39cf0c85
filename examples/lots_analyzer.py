"""A production-style image analysis entry point: the worked example of benchmarking production code.

This is what an app's own analysis code looks like, and candor calls it as it is: it builds
its own prompt, calls an OpenAI-compatible endpoint through the official ``openai`` SDK and
post-processes the answer. Nothing of it is copied into candor, so a change here shows up in
the scores (README, "Benchmark your production code, not a copy of its prompt").

    identify:
      providers: {example-analyzer: {python: "examples.lots_analyzer:analyze"}}
      sources: {example-analyzer: examples/lots_analyzer.py, ...}

Configuration, read from the environment as the app reads it: ``ANALYZER_BASE_URL`` (default
``https://api.openai.com/v1``), ``ANALYZER_MODEL`` (default ``gpt-4o-mini``) and
``OPENAI_API_KEY``. The SDK's own retries are off (``max_retries=0``): rate limits, server
errors and dropped connections are marked transient (``err.transient = True``) and candor
retries them with its backoff, so every attempt is counted in one place.

Needs ``openai`` (requirements-test.txt; candor itself does not depend on it).
"""
from __future__ import annotations

import base64
import json
import os
import re
from typing import Any

import openai

PROMPT = """\
You catalogue surplus auction lots from photos. Answer with exactly one JSON object:
{"type": "item", "item": {"itemManufacturer": "...", "itemModel": "...", "itemType": "...",
 "categoryFunctional": "...", "categorySpecific": "...", "quantity": 1,
 "itemAttributes": [{"name": "...", "value": "..."}]}, "imageLabel": "...", "imageNotes": "..."}
itemModel is the model as printed on the nameplate; if you cannot read it, use null.
quantity counts the main units for sale, never accessories.
"""

FENCE = re.compile(r"^```[A-Za-z0-9_-]*\s*\n(.*?)\n?```\s*$", re.DOTALL)


def library_text(library: dict[str, Any], *, default: bool) -> str:
    """The category block of the prompt: reuse these names before inventing new ones."""
    head = "Suggested categories:" if default else "Categories already in this inventory (reuse them):"
    lines = [f"- {tier}: {', '.join(values)}" for tier, values in library.items() if values]
    return "\n".join([head, *lines])


def postprocess(text: str) -> dict[str, Any] | str:
    """The model's answer as a dict (a Markdown fence dropped, a quantity given as text made a number);
    the text as it came when it is not a JSON object."""
    m = FENCE.match(text.strip())
    try:
        doc = json.loads(m.group(1) if m else text)
    except json.JSONDecodeError:
        return text
    if not isinstance(doc, dict):
        return text
    item = doc.get("item")
    if isinstance(item, dict) and isinstance(item.get("quantity"), str) and item["quantity"].isdigit():
        item["quantity"] = int(item["quantity"])
    return doc


def analyze(images: list[tuple[bytes, str]], context: dict[str, Any]) -> dict[str, Any] | str:
    """Analyse one lot's photos (``(bytes, mime_type)`` pairs); the answer as a dict (or the raw text)."""
    client = openai.OpenAI(base_url=os.environ.get("ANALYZER_BASE_URL", "https://api.openai.com/v1"),
                           api_key=os.environ["OPENAI_API_KEY"], max_retries=0,
                           timeout=context.get("timeout_s", 60.0))
    prompt = PROMPT + "\n" + library_text(context["category_library"], default=context["default_library"])
    content: list[dict[str, Any]] = [{"type": "text", "text": prompt}]
    content += [{"type": "image_url", "image_url": {"url": f"data:{mime};base64,{base64.b64encode(data).decode()}"}}
                for data, mime in images]
    try:
        resp = client.chat.completions.create(model=os.environ.get("ANALYZER_MODEL", "gpt-4o-mini"),
                                              messages=[{"role": "user", "content": content}], temperature=0)
    except (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError) as err:
        err.transient = True       # candor retries these (APITimeoutError is an APIConnectionError)
        raise
    return postprocess(resp.choices[0].message.content or "")
