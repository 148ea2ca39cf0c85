"""Distinctive model tokens: what in a model name identifies the machine.

"Dell OptiPlex 7090 SFF" and "OptiPlex 7090" are the same machine, so identification
compares *distinctive tokens*, not strings (docs/lots.md). Definitions:

* **Tokenising** (:func:`tokenize`): lower-case, split on white space and on
  ``, / ( ) [ ] ; : " ' + * | &``; hyphens and dots stay inside a token
  (``2960-x``, ``ws-c2960x-48fpd-l``, ``e.g.``). Leading/trailing dots and hyphens
  are trimmed. ``24"`` becomes ``24in`` first, so a screen size stays a size.
* **Candidate tokens** of a text are its tokens plus, for hyphenated tokens, each
  hyphen-separated part (``2804-20`` gives ``2804-20``, ``2804`` and ``20``);
  the distinctive ones are the distinctive tokens of the text.
* A candidate token is **distinctive** when it contains a digit and is not a
  spec token. A **spec token** is any of (all configurable, :class:`TokenRules`):

  - a *spec word* or *form factor* itself (``sff``, ``channel``, ``gb``, ``1u``);
  - a number followed by a spec word, with or without a hyphen (``16gb``,
    ``8-channel``, ``24-inch``, ``20v``, ``1500va``): capacities and sizes;
  - a pure number with fewer than ``min_number_digits`` digits (``8``, ``24``):
    counts and sizes, never model numbers;
  - a generation marker: a generation prefix plus digits (``g6``, ``gen2``, ``mk3``);
  - a hyphenated token whose parts all carry a digit and are all spec tokens
    (``30-300ul``); one letter-only part makes it a model code (``us-24-250w``);
  - a dimension ``NxM`` (``1920x1080``), a count ``Nx``/``xN`` (``2x``) or a
    display resolution (``1080p``, ``4k``), or a CPU (``i5``, ``i7-10700``).
  The hyphen parts of a spec token are not distinctive either.

  Single-letter units other than ``v`` are left out of the default spec words
  on purpose: ``34461A`` and ``TDS2024C`` are model numbers, not amperes.

  Letter-only words (``optiplex``, ``catalyst``) are never distinctive: a series
  name without a model number cannot tell a 3080 from a 7090.
* A user may **pin** distinctive tokens for a label (``model_tokens`` in
  ``lots.csv``): pinned phrases replace the rule for that label and bypass it,
  which is how ``87V`` (otherwise "87 volts") or ``Research plus`` (no digit)
  become identifying. A pinned phrase of several words must appear as a
  contiguous run of tokens.
* **Hedged** (:func:`is_hedged`): the model text carries a hedge such as
  ``e.g.``, ``possibly``, ``or similar``, ``likely``, ``probably``, ``maybe``,
  ``approx.``, ``similar to``, ``such as``, ``unknown``, ``?`` or an ``X or Y``
  alternative. Comps must not treat a hedged model number as a hard gate.

Pure functions, no I/O.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

HEDGES: tuple[str, ...] = (
    r"\be\.?\s?g\.?(?=\s|$|[,:])", r"\bpossibly\b", r"\bor similar\b", r"\blikely\b", r"\bprobably\b",
    r"\bmaybe\b", r"\bperhaps\b", r"\bapprox\.?", r"\bsimilar to\b", r"\bsuch as\b", r"\bunknown\b",
    r"\?", r"\bor\b",
)
_HEDGE_RE = re.compile("|".join(HEDGES), re.IGNORECASE)
_SPLIT_RE = re.compile(r"[\s,/()\[\];:\"'+*|&]+")
_SHAPE_RE = re.compile(r"^\d+x\d+$|^\d+x$|^x\d+$|^(?:480|720|1080|1440|2160)[pi]$|^[2458]k$"
                       r"|^(?:i[3579]|r[3579])(?:-\d{3,5}[a-z]{0,2})?$")
_INCH_RE = re.compile(r"(\d)\s*(?:\"|''|”|″)")


@dataclass(frozen=True)
class TokenRules:
    """What is never distinctive (see the module docstring); built from params ``lots``
    (:class:`candor.lots.params.LotsParams`, the one home of the defaults)."""

    spec_words: tuple[str, ...]
    form_factors: tuple[str, ...]
    generation_prefixes: tuple[str, ...]
    min_number_digits: int
    _words: frozenset[str] = field(init=False, repr=False, compare=False)
    _num_unit: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _generation: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        words = frozenset(w.lower() for w in (*self.spec_words, *self.form_factors))
        object.__setattr__(self, "_words", words)
        units = "|".join(sorted((re.escape(w.lower()) for w in self.spec_words), key=len, reverse=True))
        object.__setattr__(self, "_num_unit", re.compile(rf"^\d+(?:\.\d+)?-?(?:{units})$" if units else r"^(?!)$"))
        gens = "|".join(sorted((re.escape(g.lower()) for g in self.generation_prefixes), key=len, reverse=True))
        object.__setattr__(self, "_generation", re.compile(rf"^(?:{gens})-?\d+$" if gens else r"^(?!)$"))

    def is_spec(self, token: str) -> bool:
        """True when ``token`` (already lower-case) is a spec token."""
        if token in self._words:
            return True
        if token.isdigit():
            return len(token) < self.min_number_digits
        if self._num_unit.match(token) or self._generation.match(token):
            return True
        parts = [p for p in token.split("-") if p]
        if len(parts) > 1 and all(any(ch.isdigit() for ch in p) and self.is_spec(p) for p in parts):
            return True  # a range or combination of specs: 30-300ul, 4-20ma
        return bool(_SHAPE_RE.match(token))

    def is_distinctive(self, token: str) -> bool:
        """True when ``token`` contains a digit and is not a spec token."""
        return any(ch.isdigit() for ch in token) and not self.is_spec(token)


def tokenize(text: str | None) -> list[str]:
    """Lower-cased tokens of ``text`` in order (see the module docstring); None gives []."""
    if not text:
        return []
    text = _INCH_RE.sub(r"\1in", text.lower())
    out = []
    for raw in _SPLIT_RE.split(text):
        tok = raw.strip(".-")
        if tok:
            out.append(tok)
    return out


def candidate_tokens(text: str | None) -> list[str]:
    """Tokens of ``text`` plus the hyphen-separated parts of hyphenated tokens, in order."""
    out: list[str] = []
    for tok in tokenize(text):
        out.append(tok)
        if "-" in tok:
            out.extend(p for p in tok.split("-") if p)
    return out


def distinctive_tokens(text: str | None, *, rules: TokenRules) -> frozenset[str]:
    """The distinctive candidate tokens of ``text`` under ``rules``.

    >>> rules = TokenRules(spec_words=("gb",), form_factors=("sff",), generation_prefixes=(), min_number_digits=3)
    >>> sorted(distinctive_tokens("OptiPlex 7090 SFF 16GB", rules=rules))
    ['7090']
    """
    out: set[str] = set()
    for tok in tokenize(text):
        if rules.is_spec(tok):
            continue  # a spec token's parts are not model numbers either (i5-10500, 30-300ul)
        out.update(t for t in (tok, *tok.split("-")) if t and rules.is_distinctive(t))
    return frozenset(out)


def contains_phrase(text: str | None, phrase: str) -> bool:
    """True when the tokens of ``phrase`` occur contiguously in the tokens of ``text``.

    A one-token phrase also matches a hyphen-separated part of a token
    (``c2960x`` is found in ``ws-c2960x-48fpd-l``); a phrase of several words
    must match whole tokens in order (``research plus``).
    """
    want = tokenize(phrase)
    if not want:
        return False
    if len(want) == 1:
        return want[0] in candidate_tokens(text)
    have = tokenize(text)
    n = len(want)
    return any(have[i:i + n] == want for i in range(len(have) - n + 1))


def is_hedged(text: str | None) -> bool:
    """True when ``text`` hedges its model (``e.g.``, ``possibly``, ``or similar``, ...)."""
    return bool(text) and bool(_HEDGE_RE.search(text))
