"""Model tokens: what in a model name identifies the machine (one tokeniser for identification and comps).

"Dell OptiPlex 7090 SFF" and "OptiPlex 7090" are the same machine, so identification and
comps compare *model keys*, not strings (docs/lots.md, "Token rules"). Definitions:

* **Folding** (:func:`fold`): Unicode NFKC, then case-fold (``ＲＴＸ３０８０`` -> ``rtx3080``,
  ``Straße`` -> ``strasse``). Every comparison in the lots track starts here.
* **Tokenising** (:func:`tokenise`): fold, ``24"`` becomes ``24in`` (a screen size stays a
  size), then split on everything that is not a letter, digit or mark of any script, a hyphen
  or a dot; hyphens and dots stay inside a token (``2960-x``, ``e.g``) and are trimmed at its
  ends.
* **Parts** (:func:`parts`): each token cut at hyphens and dots and where letters meet digits
  (``ws-c2960x-48fpd-l`` -> ``ws c 2960 x 48 fpd l``; ``5424r`` -> ``5424 r``).
* **Key** (:func:`key`): the parts of a text joined (``EX4300-48T``, ``EX430048T`` and
  ``ex4300 48t`` all give ``ex430048t``; ``87-V``, ``87V`` and ``87 V`` give ``87v``).
* **Spans** (:func:`spans`): the keys of every run of consecutive parts of a text that ends
  where a piece ends (a space, hyphen, dot or the end of the text); it may start anywhere. A
  key *occurs* in a text when it is one of its spans: ``3080`` occurs in ``RTX3080``,
  ``RTX-3080`` and ``RTX 3080 Ti`` but not in ``13080`` (one part) nor in ``3080Ti`` (letters
  glued to it), so a different number that merely contains the label's digits, or a model
  with a glued suffix (``SMT1500RM2U`` for ``SMT1500``), stays a different model.
* A token is **distinctive** when it contains a digit and is not a spec token. A **spec
  token** is any of (all configurable, :class:`TokenRules`, params ``lots``):

  - a *spec word* or *form factor* itself (``sff``, ``channel``, ``gb``, ``1u``);
  - a number followed by a spec word, with or without a hyphen (``16gb``, ``8-channel``,
    ``24-inch``, ``20v``, ``1500va``): capacities and sizes;
  - a pure number with fewer than ``min_number_digits`` digits (``8``, ``24``);
  - a generation marker: a generation prefix plus digits (``g6``, ``gen2``, ``mk3``);
  - a hyphenated token whose parts all carry a digit and are all spec tokens (``30-300ul``);
  - a dimension ``NxM`` (``1920x1080``), a quantity ``Nx`` whose number is shorter than
    ``min_number_digits`` (``2x``, ``10x``; ``5950x`` is a CPU model, and ``x1``/``x280``
    are ThinkPads), a display resolution (``1080p``, ``4k``) or a CPU (``i5``, ``i7-10700``,
    ``i7-1185g7``).

  Single-letter units other than ``v`` are left out of the default spec words on purpose:
  ``34461A`` and ``TDS2024C`` are model numbers, not amperes. Letter-only words
  (``optiplex``, ``catalyst``) are never distinctive: a series name cannot tell a 3080 from
  a 7090.
* **Label keys** (:func:`label_keys`): the keys of the label's pinned ``model_tokens``
  phrases when given (``87V``, ``Research plus``, ``800 G6``), otherwise of its distinctive
  tokens and, for a hyphenated one, of its first distinctive hyphen part (the base model:
  ``EX4300-48T`` gives ``ex430048t`` and ``ex4300``; ``2804-20`` gives ``280420`` and
  ``2804``). A suffix part alone (``48t``, ``20``) is a variant, not a model.
* **Models named** (:func:`models_named`): the text cut into alternatives (at ``/ , ; ( )``,
  ``or``, ``and``, ...); each alternative with a distinctive token names a model, and two
  alternatives that share a key name one (``2960-X (WS-C2960X-48FPD-L)``, ``EX4300 48T``).
* **Hedged** (:meth:`TokenRules.is_hedged`): the text names more than one model (``7090 or
  7080``, ``RTX 3080/3090``) or carries a hedge marker (``hedge_markers``: ``e.g.``,
  ``such as``, ``or similar``, ``possibly``, ...), matched as whole words after folding.
  Identification scores a hedged answer as an abstention (:mod:`candor_eval.lots.identification`);
  comps do not use a hedged model number as a hard gate (:mod:`candor_eval.lots.comps`).

Pure functions, no I/O.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

_INCH_RE = re.compile(r"(\d)\s*(?:\"|''|”|″)")
_PART_RE = re.compile(r"\d+|[^\W\d_]+")
_SHAPE_RE = re.compile(r"^\d+x\d+$|^(?:480|720|1080|1440|2160)[pi]$|^[2458]k$"
                       r"|^(?:i[3579]|r[3579])(?:-\d{3,5}[a-z0-9]{0,3})?$")


def fold(text: str) -> str:
    """NFKC, then case-fold.

    >>> fold("ＲＴＸ３０８０ Straße")
    'rtx3080 strasse'
    """
    return unicodedata.normalize("NFKC", text).casefold()


def is_word_char(ch: str) -> bool:
    """A letter or digit of any script, or a combining mark (part of the letter before it)."""
    return ch.isalnum() or unicodedata.category(ch).startswith("M")


def tokenise(text: str | None) -> list[str]:
    """Folded tokens of ``text`` in order (see the module docstring); None gives [].

    >>> tokenise('Dell OptiPlex 7090, 24" (e.g. WS-C2960X)')
    ['dell', 'optiplex', '7090', '24in', 'e.g', 'ws-c2960x']
    """
    if not text:
        return []
    folded = _INCH_RE.sub(r"\1in", fold(text))
    cleaned = "".join(ch if is_word_char(ch) or ch in ".-" else " " for ch in folded)
    return [tok for raw in cleaned.split() if (tok := raw.strip(".-"))]


def _pieces(text: str | None) -> list[list[str]]:
    """The parts of each hyphen/dot-separated piece of each token of ``text``."""
    return [_split_piece(piece) for tok in tokenise(text) for piece in re.split(r"[.\-]+", tok) if piece]


def parts(text: str | None) -> list[str]:
    """Runs of letters and runs of digits of the tokens of ``text``, in order (marks stay with
    their letters).

    >>> parts("WS-C2960X-48FPD-L")
    ['ws', 'c', '2960', 'x', '48', 'fpd', 'l']
    """
    return [p for piece in _pieces(text) for p in piece]


def _split_piece(piece: str) -> list[str]:
    out: list[str] = []
    for ch in piece:
        kind = "d" if ch.isdigit() else "l"
        if out and (unicodedata.category(ch).startswith("M") or ("d" if out[-1][-1].isdigit() else "l") == kind):
            out[-1] += ch
        else:
            out.append(ch)
    return out


def key(text: str | None) -> str:
    """The parts of ``text`` joined: the form in which model codes are compared.

    >>> key("EX4300-48T"), key("87 V")
    ('ex430048t', '87v')
    """
    return "".join(parts(text))


def spans(text: str | None) -> frozenset[str]:
    """The keys of every run of consecutive parts of ``text`` that ends where a piece ends (at a
    space, hyphen, dot or the end): where a key *occurs*. A run may start inside a piece
    (``3080`` occurs in ``RTX3080``) but never stops short of letters or digits glued to it
    (``smt1500`` does not occur in ``SMT1500RM2U``, nor ``3080`` in ``13080``).

    >>> "3080" in spans("RTX3080"), "3080" in spans("13080"), "smt1500" in spans("SMT1500RM2U")
    (True, False, False)
    """
    flat: list[tuple[str, bool]] = [(p, i == len(piece) - 1) for piece in _pieces(text) for i, p in enumerate(piece)]
    return frozenset("".join(p for p, _ in flat[i:j + 1])
                     for j, (_, ends) in enumerate(flat) if ends for i in range(j + 1))


def candidate_tokens(text: str | None) -> list[str]:
    """Tokens of ``text`` plus the hyphen-separated parts of hyphenated tokens, in order."""
    out: list[str] = []
    for tok in tokenise(text):
        out.append(tok)
        if "-" in tok:
            out.extend(p for p in tok.split("-") if p)
    return out


@dataclass(frozen=True)
class TokenRules:
    """What is never distinctive and what marks a hedge (see the module docstring); built from
    params ``lots`` (:class:`candor_eval.lots.params.LotsParams`, the one home of the defaults)."""

    spec_words: tuple[str, ...]
    form_factors: tuple[str, ...]
    generation_prefixes: tuple[str, ...]
    min_number_digits: int
    hedge_markers: tuple[str, ...]
    _words: frozenset[str] = field(init=False, repr=False, compare=False)
    _num_unit: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _generation: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _quantity: re.Pattern[str] = field(init=False, repr=False, compare=False)
    _hedge: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        words = frozenset(fold(w) for w in (*self.spec_words, *self.form_factors))
        object.__setattr__(self, "_words", words)
        units = "|".join(sorted((re.escape(fold(w)) for w in self.spec_words), key=len, reverse=True))
        object.__setattr__(self, "_num_unit", re.compile(rf"^\d+(?:\.\d+)?-?(?:{units})$" if units else r"^(?!)$"))
        gens = "|".join(sorted((re.escape(fold(g)) for g in self.generation_prefixes), key=len, reverse=True))
        object.__setattr__(self, "_generation", re.compile(rf"^(?:{gens})-?\d+$" if gens else r"^(?!)$"))
        short = max(self.min_number_digits - 1, 0)
        object.__setattr__(self, "_quantity", re.compile(rf"^\d{{1,{short}}}x$" if short else r"^(?!)$"))
        markers = [(r"(?<!\w)" if m[:1].isalnum() else "") + re.escape(fold(m))
                   + (r"(?!\w)" if m[-1:].isalnum() else "")
                   for m in self.hedge_markers if m]
        object.__setattr__(self, "_hedge", re.compile("|".join(markers) if markers else r"(?!)"))

    def is_spec(self, token: str) -> bool:
        """True when ``token`` (already folded) is a spec token."""
        if token in self._words:
            return True
        if token.isdigit():
            return len(token) < self.min_number_digits
        if self._num_unit.match(token) or self._generation.match(token) or self._quantity.match(token):
            return True
        pieces = [p for p in token.split("-") if p]
        if len(pieces) > 1 and all(any(ch.isdigit() for ch in p) and self.is_spec(p) for p in pieces):
            return True  # a range or combination of specs: 30-300ul, 4-20ma
        return bool(_SHAPE_RE.match(token))

    def is_distinctive(self, token: str) -> bool:
        """True when ``token`` contains a digit and is not a spec token."""
        return any(ch.isdigit() for ch in token) and not self.is_spec(token)

    def is_hedged(self, text: str | None) -> bool:
        """True when ``text`` names more than one model or carries a hedge marker.

        >>> rules = TokenRules(spec_words=(), form_factors=(), generation_prefixes=(), min_number_digits=3,
        ...                    hedge_markers=("e.g.",))
        >>> rules.is_hedged("OptiPlex 7090 or 7080"), rules.is_hedged("e.g. 7090"), rules.is_hedged("7090")
        (True, True, False)
        """
        if not text:
            return False
        return bool(self._hedge.search(fold(text))) or len(models_named(text, rules=self)) > 1


def distinctive_tokens(text: str | None, *, rules: TokenRules) -> frozenset[str]:
    """The distinctive tokens of ``text`` and of the hyphen parts of its tokens that are not spec
    tokens themselves (a spec token's parts are not model numbers either: ``i5-10500``).

    >>> rules = TokenRules(spec_words=("gb",), form_factors=("sff",), generation_prefixes=(), min_number_digits=3,
    ...                    hedge_markers=())
    >>> sorted(distinctive_tokens("OptiPlex 7090 SFF 16GB", rules=rules))
    ['7090']
    """
    out: set[str] = set()
    for tok in tokenise(text):
        if not rules.is_spec(tok):
            out.update(t for t in (tok, *tok.split("-")) if t and rules.is_distinctive(t))
    return frozenset(out)


def label_keys(model: str, pinned: tuple[str, ...] = (), *, rules: TokenRules) -> frozenset[str]:
    """The keys that identify a label: its pinned phrases', else its distinctive tokens' and the
    first distinctive hyphen part of each (module docstring); empty when it has none."""
    if pinned:
        return frozenset(k for p in pinned if (k := key(p)))
    out: set[str] = set()
    for tok in tokenise(model):
        if rules.is_distinctive(tok):
            out.add(key(tok))
            base = next((p for p in tok.split("-") if rules.is_distinctive(p)), None)
            if base is not None:
                out.add(key(base))
    return frozenset(out)


_ALTERNATIVES = re.compile(r"[/,;|&+]|(?<!\w)(?:or|and|vs\.?)(?!\w)")


def models_named(text: str | None, *, rules: TokenRules) -> frozenset[str]:
    """Keys of the distinct models ``text`` names.

    The text is cut into alternatives at ``/ , ; | & +`` and the words ``or``, ``and``, ``vs``
    (brackets are not cuts: a bracketed part qualifies the model before it, ``2804-20 (M18
    FUEL)``); an alternative with a distinctive token names a model, keyed by its distinctive
    tokens (spaces inside one alternative do not separate models: ``EX4300 48T``, ``M18
    2804``). Two alternatives name the same model when a key of one occurs in the other
    (``2960-X (WS-C2960X-48FPD-L)``).

    >>> rules = TokenRules(spec_words=(), form_factors=(), generation_prefixes=(), min_number_digits=3,
    ...                    hedge_markers=())
    >>> sorted(models_named("EX4300-48T or EX4300-48P", rules=rules)), sorted(models_named("M18 2804", rules=rules))
    (['ex430048p', 'ex430048t'], ['2804 m18'])
    """
    named: list[tuple[frozenset[str], frozenset[str]]] = []
    for alternative in _ALTERNATIVES.split(fold(text or "")):
        keys = frozenset(key(t) for t in tokenise(alternative) if rules.is_distinctive(t))
        found = spans(alternative)
        if keys and not any(keys & other or other_keys & found for other_keys, other in named):
            named.append((keys, found))
    return frozenset(" ".join(sorted(keys)) for keys, _ in named)
