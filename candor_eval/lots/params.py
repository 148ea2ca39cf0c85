"""The lots track's sections of ``params.yaml``: ``identify``, ``lots`` and ``comps``.

These pydantic models are the one home of every default of these sections (no rule
object carries a default of its own); ``tests/lots/test_params.py`` fails when the
committed ``params.yaml`` and these defaults disagree. Each model forbids unknown keys,
so a misspelled key is an error naming the params file and the key
(:func:`candor_eval.common.params.section`).
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from decimal import Decimal
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator, model_validator

from candor_eval.common.names import Name, name_problem
from candor_eval.common.params import ExactDecimal, Integer, Number
from candor_eval.common.repository import source_problem
from candor_eval.common.unique import repeated
from candor_eval.lots.chat import endpoint_problem

if TYPE_CHECKING:  # the rule objects of ``comps`` are imported where they are made (CompsParams.rules and
    # .ceiling_rules): the stats stage reads ``identify`` here and never loads the matching code
    from candor_eval.lots.ceiling import CeilingRules
    from candor_eval.lots.comps import KeyWords, Rules
    from candor_eval.lots.tokens import TokenRules

ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
HEADER_NAME = r"^[A-Za-z0-9!#$%&'*+.^_`|~-]+$"


class PythonProvider(BaseModel):
    """``{python: "pkg.mod:fn"}``: the production entry point, a callable ``fn(images, context)`` in module
    ``pkg.mod`` (:mod:`candor_eval.lots.production`)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    python: str = Field(pattern=r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")

    @property
    def module(self) -> str:
        return self.python.partition(":")[0]

    @property
    def function(self) -> str:
        return self.python.partition(":")[2]


BODY_PLACEHOLDERS = ("image", "images", "category_library", "default_library", "id", "kind", "run")
PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
ANSWER_PATH = r"^[^.\s]+(\.[^.\s]+)*$"


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def body_problem(body: Any) -> str | None:
    """Why a declared request ``body`` cannot be sent (None when it can): a string holding ``{{...}}`` must be
    exactly one placeholder of :data:`BODY_PLACEHOLDERS`, and one of ``{{image}}``/``{{images}}`` must occur
    (a route that is never sent the photos cannot answer about them)."""
    found: list[str] = []
    for text in _strings(body):
        names = PLACEHOLDER.findall(text)
        if names and (len(names) > 1 or PLACEHOLDER.fullmatch(text) is None):
            return (f"the string {text[:60]!r} holds a placeholder inside other text: a placeholder is the whole "
                    "string (\"{{images}}\"), so that it can stand for a list or an object")
        if names and names[0] not in BODY_PLACEHOLDERS:
            return (f"unknown placeholder {{{{{names[0]}}}}} (expected one of "
                    + ", ".join(f"{{{{{n}}}}}" for n in BODY_PLACEHOLDERS) + ")")
        found += names
    if not {"image", "images"} & set(found):
        return "it never sends the photos: put \"{{image}}\" (the first, a data URL) or \"{{images}}\" (the list) in it"
    return None


class HttpProvider(BaseModel):
    """``{http: URL, version_header: NAME | null, headers: {Header: ENV_VAR}, body: JSON, answer_path: PATH}``:
    the app's own route (:mod:`candor_eval.lots.route`). ``headers`` maps a request header to the *name* of the
    environment variable holding its value (a token, a cookie); the URL follows the rules of
    :func:`candor_eval.lots.chat.endpoint_problem`, so no credential rides in it. ``version_header: null``: the
    route reports no version (recorded as absent). ``body`` (default: candor's own request body) is the route's
    own request shape, with placeholders (:func:`body_problem`); ``answer_path`` (``result.analysis``; a
    number is a list index) is where the answer sits in a JSON response (default: the whole body)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    http: str = Field(repr=False)
    version_header: str | None = Field(default="X-Analyzer-Version", pattern=HEADER_NAME)
    headers: dict[Annotated[str, Field(pattern=HEADER_NAME)], Annotated[str, Field(pattern=ENV_NAME)]] = Field(
        default_factory=dict)
    body: dict[str, Any] | list[Any] | None = None
    answer_path: str | None = Field(default=None, pattern=ANSWER_PATH)

    @field_validator("body")
    @classmethod
    def _sendable(cls, v: dict[str, Any] | list[Any] | None) -> dict[str, Any] | list[Any] | None:
        if v is not None and (why := body_problem(v)) is not None:
            raise ValueError(why)
        return v

    @model_validator(mode="after")
    def _callable_route(self) -> HttpProvider:
        secrets_go = "headers (header name: the environment variable holding its value)"
        if (why := endpoint_problem(self.http, secrets_go=secrets_go)) is not None:
            raise ValueError(f"http URL {why} (the value is not shown: it may hold a secret)")
        return self


class ExecProvider(BaseModel):
    """``{exec: [program, arg, ...], env: [NAME, ...], secrets: [NAME, ...]}``: the production code as a
    long-lived child process speaking JSON lines (:mod:`candor_eval.lots.child`). ``exec`` is an argv list,
    never a shell string (no shell runs it); ``env`` names the variables passed on as they are, ``secrets``
    those passed on and redacted from everything the run writes (checked like an http provider's header
    values); nothing else of candor's environment reaches the child."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    exec: list[Annotated[str, Field(min_length=1, pattern=r"^[^\x00]*$")]] = Field(min_length=1)
    env: list[Annotated[str, Field(pattern=ENV_NAME)]] = Field(default_factory=list)
    secrets: list[Annotated[str, Field(pattern=ENV_NAME)]] = Field(default_factory=list)

    @field_validator("exec", mode="before")
    @classmethod
    def _argv(cls, v: object) -> object:
        if isinstance(v, str):
            raise ValueError("exec is an argv list ([program, arg, ...]), never a shell string")
        return v


def _provider_kind(v: Any) -> str | None:
    if isinstance(v, str):
        return "name"
    if isinstance(v, dict):
        return next((k for k in ("python", "http", "exec") if k in v), None)
    kinds: dict[type, str] = {PythonProvider: "python", HttpProvider: "http", ExecProvider: "exec"}
    return kinds.get(type(v))


Provider = Annotated[
    Annotated[Literal["openai-compatible", "local-ocr"], Tag("name")]
    | Annotated[PythonProvider, Tag("python")] | Annotated[HttpProvider, Tag("http")]
    | Annotated[ExecProvider, Tag("exec")],
    Discriminator(_provider_kind, custom_error_type="provider",
                  custom_error_message="a provider is openai-compatible, local-ocr, {python: \"pkg.mod:fn\"}, "
                                       "{http: URL} or {exec: [program, arg, ...]}")]


class IdentifyParams(BaseModel):
    """``identify``: the model step (docs/lots.md). ``candidates``: the candidates benchmarked (default
    none: a project without the lots track). ``api_key_env`` names the variable holding the key;
    ``providers`` maps a candidate to its live-mode provider (unlisted, the default:
    ``openai-compatible``). What the local OCR reader can name is data: ``data/lots/vocabulary/makes.yaml``
    (:mod:`candor_eval.lots.vocabulary`).

    Live-mode bounds: every duration is finite (``.nan``/``.inf`` or the strings ``nan``/``inf``
    are refused, naming the key) and at most an hour; ``retries`` at most 20, so one call has a
    bounded worst case. ``concurrency`` (threads, default 1) applies to every provider but
    ``local-ocr``; ``max_calls_per_minute`` (default ``null``: unlimited; :mod:`candor_eval.lots.ratelimit`)
    to the HTTP ones (``openai-compatible``, ``http``; a ``python`` provider's calls are its own).
    ``base_url`` must be ``http(s)://host[:port][/path][?query]`` (:func:`candor_eval.lots.chat.endpoint_problem`);
    the error names the key but never quotes the value, which may hold a secret.

    ``sources`` maps each candidate to the file or folder its answers come from (its prompt
    file, or its production code: :mod:`candor_eval.lots.source_identity`), or to a list of files and folders
    (production code only: the adapter and the production folder, say); dvc.yaml's identify stage
    iterates over it, so when it is set it names every candidate. Empty (the default outside the
    committed pipeline): ``<lots>/prompts/<candidate>.txt``, or a ``python`` provider's module file.

    ``record_env`` maps a candidate to the *non-secret* environment variables its production code reads as mode
    switches (``{webapp-v2: [ANALYSIS_MODE]}``): their values (as candor's environment holds them; null when
    unset) are recorded with every live answer, carried into the answers and the identification metrics and
    shown in the report. A declared secret (``api_key_env``, an http header's variable, an exec secret) is
    refused; an exec candidate's variables must be among its ``env`` (what the child sees).

    ``gallery``: the photos a lot sends, ``first`` or ``all`` (default); a mapping candidate -> first|all sets
    it per candidate (unlisted: ``all``), so one photo and the full gallery compare as two candidates.

    A candidate's name (in ``candidates``, and each key of ``providers`` and ``sources``) becomes a file
    name and a word of dvc.yaml's commands, so it follows the rule of names
    (:mod:`candor_eval.common.names`): ``prompt-a``, never ``a/b``, ``..`` or ``x;y``."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    mode: Literal["replay", "live"] = "replay"
    candidates: list[Name] = Field(default_factory=list)
    providers: dict[str, Provider] = Field(default_factory=dict)
    runs: Integer = Field(default=3, ge=1)
    gallery: Literal["first", "all"] | dict[str, Literal["first", "all"]] = "all"
    pause_s: Number = Field(default=1.0, ge=0, le=3600, allow_inf_nan=False)
    timeout_s: Number = Field(default=60.0, gt=0, le=3600, allow_inf_nan=False)
    retries: Integer = Field(default=3, ge=0, le=20)
    backoff_s: Number = Field(default=2.0, ge=0, le=3600, allow_inf_nan=False)
    concurrency: Integer = Field(default=1, ge=1, le=64)
    max_calls_per_minute: Number | None = Field(default=None, gt=0, le=1_000_000, allow_inf_nan=False)
    base_url: str = "https://api.openai.com/v1"
    model: str = "gpt-4o-mini"
    api_key_env: str = Field(default="OPENAI_API_KEY", pattern=ENV_NAME)
    sources: dict[str, str | list[str]] = Field(default_factory=dict)
    record_env: dict[str, list[Annotated[str, Field(pattern=ENV_NAME)]]] = Field(default_factory=dict)

    @field_validator("candidates")
    @classmethod
    def _not_reserved(cls, v: list[str]) -> list[str]:
        if "counts" in v:
            raise ValueError("'counts' is reserved (the counts block of metrics/valuation.json); rename the candidate")
        if twice := repeated(v):
            raise ValueError(f"candidate(s) listed more than once: {', '.join(twice)}")
        return v

    @field_validator("providers", "sources")
    @classmethod
    def _keys_are_names(cls, v: dict[str, Any]) -> dict[str, Any]:
        # each key is a candidate: a word of dvc.yaml's commands and a file name (candor_eval.common.names)
        for key in v:
            if (why := name_problem(key)) is not None:
                raise ValueError(f"key {why}")
        return v

    @model_validator(mode="after")
    def _callable_endpoint(self) -> IdentifyParams:
        # a model-level error: pydantic reports the section, not the value (which may hold a secret)
        if (why := endpoint_problem(self.base_url)) is not None:
            raise ValueError(f"base_url {why} (the value is not shown: it may hold a secret)")
        if self.sources and set(self.sources) != set(self.candidates):
            missing = sorted(set(self.candidates) - set(self.sources))
            extra = sorted(set(self.sources) - set(self.candidates))
            raise ValueError("sources must name every candidate and nothing else (dvc.yaml's identify stage "
                             f"iterates over it): missing {missing or 'none'}, not a candidate {extra or 'none'}")
        for kind, cls in (("http", HttpProvider), ("exec", ExecProvider)):
            if routes := [c for c in self.candidates if isinstance(self.provider(c), cls) and c not in self.sources]:
                raise ValueError(f"sources: the {kind} candidate(s) {', '.join(routes)} need a source (the code in "
                                 "this repository, or a file that pins the version benchmarked): nothing else "
                                 "identifies their answers offline")
        _check_source_paths(self.sources)
        return self

    @model_validator(mode="after")
    def _recorded_switches(self) -> IdentifyParams:
        # record_env: candidate -> the non-secret variables whose values every answer records
        for cand, names in self.record_env.items():
            where = f"record_env.{cand}"
            if cand not in self.candidates:
                raise ValueError(f"{where}: not a candidate (record_env maps candidates to variable names)")
            if twice := repeated(names):
                raise ValueError(f"{where}: listed more than once: {', '.join(twice)}")
            provider = self.provider(cand)
            secret = {self.api_key_env}
            if isinstance(provider, HttpProvider):
                secret |= set(provider.headers.values())
            if isinstance(provider, ExecProvider):
                secret |= set(provider.secrets)
            if named := [n for n in names if n in secret]:
                raise ValueError(f"{where}: {', '.join(named)} is a declared secret (api_key_env, an http header's "
                                 "variable or an exec secret): its value is never recorded; record only mode switches")
            if isinstance(provider, ExecProvider) and (unseen := [n for n in names if n not in provider.env]):
                raise ValueError(f"{where}: {', '.join(unseen)} not in providers.{cand}.env: the child process "
                                 "never sees it; pass it on with env to record it")
        return self

    @model_validator(mode="after")
    def _gallery_per_candidate(self) -> IdentifyParams:
        # gallery: first|all for every candidate, or candidate -> first|all (unlisted candidates: all)
        if isinstance(self.gallery, dict):
            if unknown := [c for c in self.gallery if c not in self.candidates]:
                raise ValueError(f"gallery: {', '.join(map(repr, unknown))} is not a candidate (a per-candidate "
                                 "gallery maps each of candidates to first or all)")
        return self

    def gallery_of(self, candidate: str) -> Literal["first", "all"]:
        """The photos ``candidate`` is sent: ``first`` or ``all`` (``gallery``, a scalar or per candidate)."""
        if isinstance(self.gallery, dict):
            return self.gallery.get(candidate, "all")
        return self.gallery

    def provider(self, candidate: str) -> str | PythonProvider | HttpProvider | ExecProvider:
        """The live-mode provider of ``candidate``."""
        return self.providers.get(candidate, "openai-compatible")

    def source_paths(self, candidate: str) -> list[str] | None:
        """The paths of ``identify.sources.<candidate>`` as a list (one path: a list of one), None when unset."""
        return source_paths(self.sources.get(candidate))


def source_paths(source: str | list[str] | None) -> list[str] | None:
    """A source as written (a path or a list of paths) as a list of paths; None stays None."""
    return None if source is None else [source] if isinstance(source, str) else list(source)


def _check_source_paths(sources: dict[str, str | list[str]]) -> None:
    """Each candidate's source is a path, or a non-empty list of distinct paths, each relative to the project's
    folder and inside the repository (:func:`candor_eval.common.repository.source_problem`)."""
    for name, source in sources.items():
        paths = source_paths(source) or []
        if not paths:
            raise ValueError(f"sources.{name}: an empty list; a path, or a list of the files and folders the "
                             "candidate's answers come from")
        if twice := repeated(paths):
            raise ValueError(f"sources.{name}: path(s) listed more than once: {', '.join(twice)}")
        for path in paths:
            if (why := source_problem(path)) is not None:
                raise ValueError(f"sources.{name}: {why}; a path relative to the project's folder (that of its "
                                 "dvc.yaml), inside the repository")


class LotsParams(BaseModel):
    """``lots``: how long a bare number must be to be a model token (:mod:`candor_eval.lots.tokens`); the
    word lists of the token rules are data (``data/lots/vocabulary/tokens.yaml``,
    :mod:`candor_eval.lots.vocabulary`)."""

    model_config = ConfigDict(extra="forbid", defer_build=True)

    min_number_digits: Integer = Field(default=3, ge=1)


class CompsParams(BaseModel):
    """``comps``: matching switches, abstention, band and ceiling arithmetic (docs/valuation.md).

    ``units``: which items of a container answer count as the lot's units (:mod:`candor_eval.lots.units`):
    ``lot_item`` (default: the lot's item, accessories excluded) or ``all_items`` (every item's quantity).

    Amounts in USD, percentages in %; decimals are kept exact (``0.1`` stays ``0.1``). The accessory
    words and the words keys leave out are data (``data/lots/vocabulary/accessory-words.yaml``,
    ``comps-words.yaml``, :mod:`candor_eval.lots.vocabulary`).
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    require_brand: bool = True
    require_model_token: bool = True
    hedged_fallback: bool = True
    exclude_accessories: bool = True
    per_unit_price: bool = True
    min_comps: Integer = Field(default=3, ge=1)
    band: tuple[Number, Number] = (0.5, 1.5)
    buyer_premium_pct: ExactDecimal = Field(default=Decimal("15"), ge=0)
    sell_fee_pct: ExactDecimal = Field(default=Decimal("13"), ge=0)
    margin_pct: ExactDecimal = Field(default=Decimal("25"), ge=0)
    shipping: ExactDecimal = Field(default=Decimal("25.00"), ge=0)
    buy_headroom_pct: ExactDecimal = Field(default=Decimal("20"), ge=0, le=100)
    units: Literal["lot_item", "all_items"] = "lot_item"

    @field_validator("buyer_premium_pct", "sell_fee_pct", "margin_pct", "shipping", "buy_headroom_pct",
                     mode="before")
    @classmethod
    def _exact(cls, v: object) -> object:
        return Decimal(repr(v)) if isinstance(v, float) else v  # 0.1 stays 0.1, not 0.1000000000000000055

    @model_validator(mode="after")
    def _check(self) -> CompsParams:
        lo, hi = self.band
        if not 0 < lo <= 1 <= hi:
            raise ValueError(f"band must satisfy 0 < low <= 1 <= high, got {list(self.band)}")
        if self.sell_fee_pct + self.margin_pct >= 100:
            raise ValueError("sell_fee_pct + margin_pct must be below 100")
        return self

    def rules(self, *, tokens: TokenRules, accessory_words: tuple[str, ...], words: KeyWords) -> Rules:
        from candor_eval.lots.comps import Rules  # here: see the imports

        return Rules(require_brand=self.require_brand, require_model_token=self.require_model_token,
                     hedged_fallback=self.hedged_fallback, exclude_accessories=self.exclude_accessories,
                     per_unit_price=self.per_unit_price, min_comps=self.min_comps,
                     accessory_words=accessory_words, tokens=tokens, words=words)

    def ceiling_rules(self) -> CeilingRules:
        from candor_eval.lots.ceiling import CeilingRules  # here: see the imports

        return CeilingRules(buyer_premium_pct=self.buyer_premium_pct, sell_fee_pct=self.sell_fee_pct,
                            margin_pct=self.margin_pct, shipping=self.shipping,
                            buy_headroom_pct=self.buy_headroom_pct)
