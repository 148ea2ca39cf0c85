"""Every number the README and ``docs/`` quote from an output equals what the pipeline produced.

A claim names a document, a regular expression whose groups capture the quoted numbers (or a table
cell: the row's first cell and a column), and the values they must equal, read from the committed
outputs (``metrics/*.json``, the plot files of ``dvc.yaml``, the bad-input corpus) and formatted as the
document formats them. The committed outputs are what ``make repro`` reproduces byte for byte, so a
claim that holds here holds on a fresh clone. A self-check changes each quoted number in memory and
requires the check to fail, so no claim passes whatever the document says.

What is not an output (a command's flags, a param's default) is checked elsewhere: code names by
``tests/test_doc_names.py``, sections by ``tests/test_doc_links.py``, command blocks by
``tests/test_readme.py`` and ``tests/test_examples.py`` (slow, on fresh clones).
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

import pytest
import yaml
from scipy.stats import binomtest

from tests.conftest import ROOT
from tests.test_plots_browser import declared_plot_files

# ------------------------------------------------------------------ the truth: committed outputs


@cache
def load(path: str) -> Any:
    return json.loads((ROOT / path).read_text(encoding="utf-8"))


def dig(doc: Any, dotted: str) -> Any:
    for key in dotted.split("/"):
        doc = doc[key]
    return doc


def paired(metric: str, cand: str) -> dict[str, Any]:
    """One paired comparison of ``metrics/stats.json``."""
    return load("metrics/stats.json")["paired"][metric]["candidates"][cand]


def rate(key: str) -> dict[str, Any]:
    return load("metrics/stats.json")["rates"][key]


def ident(cand: str, part: str = "all") -> dict[str, Any]:
    return load("metrics/identification.json")["identification"][cand][part]


def fields(cand: str) -> dict[str, Any]:
    return load(f"metrics/fields/{cand}.json")["fields_met"]


def valuation(cand: str) -> dict[str, Any]:
    return load("metrics/valuation.json")[cand]


def criterion(name: str) -> dict[str, Any]:
    return load("metrics/gate.json")["criteria"][name]


def f(x: float, digits: int = 3) -> str:
    return f"{x:.{digits}f}"


def p(x: float) -> str:
    """A p-value as the documents quote it: 3 significant digits."""
    return f"{x:.3g}"


def signed(x: float) -> str:
    return f"{x:+.3f}"


VERDICT = {"B worse": "**worse**", "B better": "**better**", "no detectable difference": "no detectable difference"}


def verdict_word(c: dict[str, Any], *, bold: bool = True) -> str:
    word = VERDICT[c["verdict"]]
    return word if bold else word.strip("*")


def frac(k: int, n: int, digits: int = 3) -> str:
    return f"{k}/{n} = {k / n:.{digits}f}"


def with_interval(r: dict[str, Any], digits: int = 2) -> str:
    return f"{r['k']}/{r['n']} = {f(r['rate'], digits)} [{f(r['lo'], digits)}, {f(r['hi'], digits)}]"


def lots_split(c: dict[str, Any], *, sep: str = "–") -> str:
    return f"{c['a_only']}{sep}{c['b_only']}"


def not_shown() -> list[str]:
    """The critical classes whose drop the gate could not bound within its margin (qualified, max drop >= margin)."""
    crit = criterion("critical_recall_non_inferior")
    return [n for n, k in crit["classes"].items()
            if k["status"] not in ("unqualified", "regressed") and k["max_drop"] is not None
            and k["max_drop"] >= crit["limit"]]


def classes_tested() -> int:
    """The per-class recall tests of the demo set's test split (one Holm family)."""
    return sum(m.startswith("detection.detector.test.class.") and m.endswith(".label_found")
               for m in load("metrics/stats.json")["paired"])


def empty_plot_files() -> list[str]:
    """Declared plot files with a header and no row: DVC gives them no spec (`var spec = {}`)."""
    return [x for x in declared_plot_files(ROOT)
            if len((ROOT / x).read_text(encoding="utf-8").strip().splitlines()) <= 1]


@cache
def bad_input_cases() -> list[dict[str, Any]]:
    return [yaml.safe_load(c.read_text(encoding="utf-8"))
            for c in sorted((ROOT / "tests/bad_inputs").glob("*/case.yaml"))]


def stage_counts() -> str:
    counts: dict[str, int] = {}
    for case in bad_input_cases():
        counts[case["stage"]] = counts.get(case["stage"], 0) + 1
    return ", ".join(f"{s} {n}" for s, n in sorted(counts.items(), key=lambda sn: (-sn[1], sn[0])))


def exits() -> dict[int, int]:
    """Bad-input cases by the exit code they expect."""
    counts: dict[int, int] = {}
    for case in bad_input_cases():
        counts[case["expect"]["exit"]] = counts.get(case["expect"]["exit"], 0) + 1
    return counts


@cache
def comps_fixes(cand: str, on: bool) -> Any:
    """The valuation summary of a demo candidate's recorded answers with the comps fixes on or off, as
    ``dvc exp run -S comps.<fix>=false ...`` measures it (tests/stages/test_value.py runs the same)."""
    from candor_eval.common.params import section
    from candor_eval.lots.params import CompsParams
    from tests.stages.test_value import FIXES_OFF, demo_summary

    params = section(CompsParams, "comps", path=ROOT / "params.yaml")
    return demo_summary(cand, params if on else params.model_copy(update=FIXES_OFF))[0]


def real_world_names() -> int:
    from tests.lots.test_identification import REAL_WORLD

    return len(REAL_WORLD)


# ------------------------------------------------------------------ claims


@dataclass(frozen=True)
class Claim:
    """``pattern`` found in ``doc`` (its groups: the quoted values) must equal ``expected()``, in order."""

    doc: str
    pattern: str
    expected: Callable[[], tuple[str, ...]]

    def quoted(self, text: str) -> re.Match[str] | None:
        return re.search(self.pattern, text)

    def problems(self, text: str) -> list[str]:
        m = self.quoted(text)
        if m is None:
            return [f"{self.doc}: no text matches {self.pattern!r}"]
        want = self.expected()
        got = tuple(re.sub(r"\s+", " ", g) for g in m.groups())       # a quote may wrap across lines
        return [f"{self.doc}: quotes {g!r} where the outputs say {w!r} (in {m.group(0)!r})"
                for g, w in zip(got, want, strict=True) if g != w]


def cell(doc: str, header: str, row: str, *values: Callable[[], str] | None) -> Claim:
    """The cells after the first of the table row that starts with ``| row |``, in the table whose header line
    starts with ``header``: each must equal its value (``None``: a cell not checked)."""
    head = re.escape(header)
    cells = r"\|".join(r" ([^|]*?) " if v is not None else r"[^|]*" for v in values)
    pattern = rf"{head}[^\n]*\n(?:\|[^\n]*\n)*?\| {re.escape(row)} \|{cells}\|"
    return Claim(doc, pattern, lambda: tuple(v() for v in values if v is not None))


def text(doc: str, pattern: str, *values: Callable[[], str]) -> Claim:
    return Claim(doc, pattern, lambda: tuple(v() for v in values))


N = r"([-+]?\d+(?:\.\d+)?)"    # a quoted number
V1, V2 = "detection/detector/demo-v1", "detection/detector/demo-v2"
LABEL = "detection.detector.test.label_found"
SHEEP, DEER = "detection.detector.test.class.sheep.label_found", "detection.detector.test.class.deer.label_found"
DET = "| model | precision | recall |"
LOTS = "| | prompt-a (reference) | prompt-b | ocr-baseline |"
OCR = "| figure | ocr-baseline | prompt-a (reference) |"
FIX = "| candidate | comps fixes | in band |"


def micro(model: str, what: str) -> dict[str, Any]:
    return rate(f"detection.detector.{model}.test.micro.{what}")


def detector_row(model: str) -> tuple[Callable[[], str], ...]:
    head = f"detection/detector/{model}"
    prec, rec = (lambda: micro(model, "precision")), (lambda: micro(model, "recall"))
    return (lambda: f(dig(load("metrics/headline.json"), f"{head}/precision")),
            lambda: f(dig(load("metrics/headline.json"), f"{head}/recall")),
            lambda: f(dig(load("metrics/headline.json"), f"{head}/f1")),
            lambda: str(prec()["k"]), lambda: str(prec()["n"] - prec()["k"]), lambda: str(rec()["n"] - rec()["k"]),
            lambda: f(dig(load("metrics/headline.json"), f"{head}/fp_per_frame"), 1))


def lots_paired(metric: str, cand: str, prefix: str = "") -> Callable[[], str]:
    def cell_text() -> str:
        c = paired(metric, cand)
        where = "" if c["cluster"] == c["unit"] else f" in {c['a_better']}–{c['b_better']} of {c['clusters']} cases"
        return f"{prefix}{lots_split(c)}{where}, p = {p(c['p'])}: {verdict_word(c)}"
    return cell_text


def rate_frac(cand: str, what: str) -> Callable[[], str]:
    return lambda: frac(ident(cand)[what], ident(cand)["lots"])


def ocr_paired(metric: str, prefix: str = "") -> Callable[[], str]:
    def cell_text() -> str:
        c = paired(metric, "ocr-baseline")
        where = "" if c["cluster"] == c["unit"] else f" in {c['a_better']} / {c['b_better']} of {c['clusters']} cases"
        holm = "" if c["p_holm"] is None else f", Holm p = {p(c['p_holm'])} over the 2 tiers"
        return f"{prefix}{c['a_only']} / {c['b_only']}{where}, p = {p(c['p'])}{holm}: {verdict_word(c, bold=False)}"
    return cell_text


def fixes_row(cand: str, on: bool) -> tuple[Callable[[], str], ...]:
    def s() -> Any:
        return comps_fixes(cand, on)
    bold = (lambda x: f"**{x}**") if on else (lambda x: x)
    return (lambda: bold(f"{s().in_band}/{s().lots}"), lambda: bold(f(s().median_ratio)),
            lambda: f"{bold(f'{s().worst_error:.2f}x')} ({s().worst_lot})", lambda: str(s().no_estimate))


CLAIMS: list[Claim] = [
    # README, "The demo, and what it shows": the detector table and what the tests say
    cell("README.md", DET, "demo-v1 (reference)", *detector_row("demo-v1")),
    cell("README.md", DET, "demo-v2 (candidate)", *detector_row("demo-v2")),
    text("README.md", rf"\({N} labels only v2 found, {N} only v1, in {N} and {N} of the {N} test frames\): B - A =\s+"
         rf"{N} \[{N}, {N}\], p = {N}",
         lambda: str(paired(LABEL, "demo-v2")["b_only"]), lambda: str(paired(LABEL, "demo-v2")["a_only"]),
         lambda: str(paired(LABEL, "demo-v2")["b_better"]), lambda: str(paired(LABEL, "demo-v2")["a_better"]),
         lambda: str(paired(LABEL, "demo-v2")["clusters"]), lambda: signed(paired(LABEL, "demo-v2")["diff"]),
         lambda: signed(paired(LABEL, "demo-v2")["diff_lo"]), lambda: signed(paired(LABEL, "demo-v2")["diff_hi"]),
         lambda: p(paired(LABEL, "demo-v2")["p"])),
    text("README.md", rf"80% power\s+only for about {N} points of recall",
         lambda: f"{100 * load('metrics/stats.json')['power'][LABEL]['demo-v2']['detectable']:.0f}"),
    text("README.md", rf"recall interval over frames is \[{N}, {N}\] \(over labels\s+it would read \[{N}, {N}\]\)",
         lambda: f(micro("demo-v2", "recall")["lo"]), lambda: f(micro("demo-v2", "recall")["hi"]),
         *(lambda i=i: f(binomtest(micro("demo-v2", "recall")["k"], micro("demo-v2", "recall")["n"])
                         .proportion_ci(method="wilson")[i]) for i in (0, 1))),
    text("README.md", rf"sheep is {N}-{N} frames \(p = {N}\), no detectable difference\s+once adjusted for the {N} "
         rf"classes tested \(Holm p = {N}\)",
         lambda: str(paired(SHEEP, "demo-v2")["a_better"]), lambda: str(paired(SHEEP, "demo-v2")["b_better"]),
         lambda: f"{paired(SHEEP, 'demo-v2')['p']:.2g}",
         lambda: str(classes_tested()),
         lambda: f"{paired(SHEEP, 'demo-v2')['p_holm']:.2g}"),
    text("README.md", rf"deer drops from {N} to {N} \({N}-{N} labels\s+in {N}-{N} frames, p = {N}\)",
         lambda: f(paired(DEER, "demo-v2")["a"]["rate"]), lambda: f(paired(DEER, "demo-v2")["b"]["rate"]),
         lambda: str(paired(DEER, "demo-v2")["a_only"]), lambda: str(paired(DEER, "demo-v2")["b_only"]),
         lambda: str(paired(DEER, "demo-v2")["a_better"]), lambda: str(paired(DEER, "demo-v2")["b_better"]),
         lambda: p(paired(DEER, "demo-v2")["p"])),
    text("README.md", rf"micro P, R and F1 are\s+higher but not distinguishable from noise \(p {N}, {N}, {N}\)",
         *(lambda c=c: p(criterion(c)["p"]) for c in ("micro_precision_higher", "micro_recall_higher",
                                                        "micro_f1_higher"))),
    text("README.md", r"noise \(p [\d., ]+\); ([a-z_,\s]+?)\s+cannot be shown to lose less than 5 points",
         lambda: ", ".join(not_shown()[:-1]) + " and " + not_shown()[-1]),
    text("README.md", rf"deer's data allow a drop of up to\s+{N} points",
         lambda: f"{100 * criterion('critical_recall_non_inferior')['classes']['deer']['max_drop']:.0f}"),
    text("README.md", rf"boar \({N} labels\) is unqualified; {N} criteria are not evaluated",
         lambda: str(criterion("critical_recall_non_inferior")["classes"]["boar"]["support"]),
         lambda: str(len(load("metrics/gate.json")["pending"]))),
    text("README.md", rf"Wrong targets fall \({N} → {N}\)",
         lambda: str(criterion("wrong_targets_no_increase")["reference"]),
         lambda: str(criterion("wrong_targets_no_increase")["candidate"])),
    # README: the lots table
    cell("README.md", LOTS, "identification hit (unit lot: majority of 3 runs)",
         rate_frac("prompt-a", "hit"), rate_frac("prompt-b", "hit"), rate_frac("ocr-baseline", "hit"),
         lots_paired("identification.hit", "prompt-b"), lots_paired("identification.hit", "ocr-baseline")),
    cell("README.md", LOTS, "wrong (lot)",
         rate_frac("prompt-a", "wrong"), rate_frac("prompt-b", "wrong"), rate_frac("ocr-baseline", "wrong"),
         lots_paired("identification.not_wrong", "prompt-b", "not wrong "),
         lots_paired("identification.not_wrong", "ocr-baseline", "not wrong ")),
    cell("README.md", LOTS, "hedged (lot; scored as abstentions)",
         *(lambda c=c: f"{ident(c)['hedged']}/{ident(c)['lots']}" for c in ("prompt-a", "prompt-b", "ocr-baseline"))),
    cell("README.md", LOTS, "run consistency (lot: same state every run)",
         rate_frac("prompt-a", "consistent"), rate_frac("prompt-b", "consistent"),
         lambda: f"{ident('ocr-baseline')['consistent']}/{ident('ocr-baseline')['lots']} (a deterministic model)"),
    cell("README.md", LOTS, "exact count (lot)",
         *(lambda c=c: frac(rate(f"identification.{c}.count.all.exact_rate")["k"],
                            rate(f"identification.{c}.count.all.exact_rate")["n"])
           for c in ("prompt-a", "prompt-b", "ocr-baseline")),
         lots_paired("identification.count_exact", "prompt-b"),
         lots_paired("identification.count_exact", "ocr-baseline")),
    cell("README.md", LOTS, "field expectations met (unit (case, field), clustered by case)",
         *(lambda c=c: frac(fields(c)["met"], fields(c)["n"]) for c in ("prompt-a", "prompt-b", "ocr-baseline")),
         lots_paired("fields.majority", "prompt-b"), lots_paired("fields.majority", "ocr-baseline")),
    cell("README.md", LOTS, "valuation in band [0.5, 1.5]",
         *(lambda c=c: f"{valuation(c)['in_band']}/{valuation(c)['lots']}" for c in ("prompt-a", "prompt-b",
                                                                                       "ocr-baseline")),
         lots_paired("valuation.in_band", "prompt-b"), lots_paired("valuation.in_band", "ocr-baseline")),
    cell("README.md", LOTS, "median value ratio / worst lot error",
         *(lambda c=c: f"{valuation(c)['median_ratio']:.2f} / {valuation(c)['worst_error']:.2f}x"
           for c in ("prompt-a", "prompt-b", "ocr-baseline"))),
    text("README.md", rf"{N} surplus lots \({N} `held`,\s+{N} `photo` tier\), {N} valuation lots, {N} "
         rf"field-expectation cases",
         lambda: str(ident("prompt-a")["lots"]), lambda: str(ident("prompt-a", "held")["lots"]),
         lambda: str(ident("prompt-a", "photo")["lots"]), lambda: str(valuation("prompt-a")["lots"]),
         lambda: str(load("metrics/fields/prompt-a.json")["cases_met"]["n"])),
    text("README.md", rf"reading the printed text alone gets {N}/{N} hits and {N}/{N} wrong",
         lambda: str(ident("ocr-baseline")["hit"]), lambda: str(ident("ocr-baseline")["lots"]),
         lambda: str(ident("ocr-baseline")["wrong"]), lambda: str(ident("ocr-baseline")["lots"])),
    text("README.md", rf"prompt-b's {N} field gains are {N} cases moving\s+one way: {N} cases can reach",
         lambda: str(paired("fields.majority", "prompt-b")["b_only"]),
         lambda: str(paired("fields.majority", "prompt-b")["b_better"]),
         lambda: str(paired("fields.majority", "prompt-b")["clusters"])),
    # README: the comps fixes and the audit
    text("README.md", rf"prompt-a's median ratio is {N} and its worst lot {N}x off \({N}/{N} in band\); with them "
         rf"on, {N} and\s+{N}x \({N}/{N}\)",
         lambda: f"{comps_fixes('prompt-a', False).median_ratio:.2f}",
         lambda: f"{comps_fixes('prompt-a', False).worst_error:.1f}",
         lambda: str(comps_fixes("prompt-a", False).in_band),
         lambda: str(comps_fixes("prompt-a", False).lots), lambda: f"{valuation('prompt-a')['median_ratio']:.2f}",
         lambda: f"{valuation('prompt-a')['worst_error']:.1f}", lambda: str(valuation("prompt-a")["in_band"]),
         lambda: str(valuation("prompt-a")["lots"])),
    text("README.md", rf"{N} of {N} verdicts changed, actionable lots {N} → {N}, the\s+summed actionable bid "
         rf"ceilings fell {N}%, {N} of {N} buys stayed buys",
         *(lambda k=k: str(load("metrics/audit.json")[k]) for k in ("verdicts_changed", "lots", "actionable_before",
                                                                     "actionable_after")),
         lambda: f"{-load('metrics/audit.json')['ceiling_change_pct']:.0f}",
         lambda: str(load("metrics/audit.json")["buys_stayed_buys"]),
         lambda: str(load("metrics/audit.json")["buys_before"])),
    # README: counts of what the repository holds
    text("README.md", rf"\| bad-input cases tried \(`tests/bad_inputs/`\) \| {N} over every stage \(([^)]*)\)",
         lambda: str(len(bad_input_cases())), stage_counts),
    text("README.md", rf"checks that every plot with data is drawn \({N} of the\s+demo's {N}; the other {N} have no "
         r"rows\)",
         lambda: str(len(declared_plot_files(ROOT)) - len(empty_plot_files())),
         lambda: str(len(declared_plot_files(ROOT))), lambda: str(len(empty_plot_files()))),
    # docs/reliability.md: the bad-input totals
    text("docs/reliability.md", rf"\| bad-input cases tried \| \*\*{N}\*\* \(stages: ([^)]*)\)",
         lambda: str(len(bad_input_cases())), stage_counts),
    text("docs/reliability.md", rf"\| handled as promised \| \*\*{N}\*\*: {N} exit 2 [^;]*; {N} documented to work"
         rf"[^;]*; {N} live calls that failed",
         lambda: str(len(bad_input_cases())), *(lambda code=code: str(exits().get(code, 0)) for code in (2, 0, 1))),
    # docs/stats.md
    text("docs/stats.md", rf"demo-v2's test micro recall {N}/{N} over {N} frames is `\[{N}, {N}\]` \(design\s+"
         rf"effect {N};",
         lambda: str(micro("demo-v2", "recall")["k"]), lambda: str(micro("demo-v2", "recall")["n"]),
         lambda: str(micro("demo-v2", "recall")["clusters"]), lambda: f(micro("demo-v2", "recall")["lo"]),
         lambda: f(micro("demo-v2", "recall")["hi"]), lambda: f(micro("demo-v2", "recall")["deff"], 1)),
    text("docs/stats.md", rf"says `\[{N}, {N}\]`; its FP per frame, {N} over {N} frames, is `\[{N}, {N}\]` "
         rf"\(over-dispersion\s+{N}\)",
         *(lambda i=i: f(binomtest(micro("demo-v2", "recall")["k"], micro("demo-v2", "recall")["n"])
                         .proportion_ci(method="wilson")[i]) for i in (0, 1)),
         lambda: str(micro("demo-v2", "fp_per_frame")["k"]), lambda: str(micro("demo-v2", "fp_per_frame")["n"]),
         lambda: f(micro("demo-v2", "fp_per_frame")["lo"], 2), lambda: f(micro("demo-v2", "fp_per_frame")["hi"], 2),
         lambda: f(micro("demo-v2", "fp_per_frame")["deff"], 1)),
    text("docs/stats.md", rf"has 80% power for about {N} pp with the sign-flip\s+test over its {N} frames \({N} with "
         r"a discordant label\)",
         lambda: f"{100 * load('metrics/stats.json')['power'][LABEL]['demo-v2']['detectable']:.1f}",
         lambda: str(load("metrics/stats.json")["power"][LABEL]["demo-v2"]["clusters_total"]),
         lambda: str(load("metrics/stats.json")["power"][LABEL]["demo-v2"]["clusters_discordant"])),
    text("docs/stats.md", rf"test sheep is {N}-{N} frames \(raw p {N}\) and Holm p {N}\s+over its {N} classes",
         lambda: str(paired(SHEEP, "demo-v2")["a_better"]), lambda: str(paired(SHEEP, "demo-v2")["b_better"]),
         lambda: str(paired(SHEEP, "demo-v2")["p"]), lambda: str(paired(SHEEP, "demo-v2")["p_holm"]),
         lambda: str(classes_tested())),
    text("docs/stats.md", r"higher, but not\s+distinguishable from noise on \d+ frames; ([a-z_,\s]+?)\s+cannot be "
         rf"shown to\s+lose less than 5 points of recall \(their data allow drops up to {N}, {N}, {N} and {N}\);"
         rf"\s+boar \({N} labels in {N} frames\) is unqualified",
         lambda: ", ".join(not_shown()[:-1]) + " and " + not_shown()[-1],
         *(lambda i=i: f(criterion("critical_recall_non_inferior")["classes"][not_shown()[i]]["max_drop"])
           for i in range(4)),
         lambda: str(criterion("critical_recall_non_inferior")["classes"]["boar"]["support"]),
         lambda: str(criterion("critical_recall_non_inferior")["classes"]["boar"]["paired"]["clusters"])),
    # docs/lots.md: the OCR baseline's table, the real-world names
    cell("docs/lots.md", OCR, "hit (lots)", lambda: with_interval(rate("identification.ocr-baseline.all.hit_rate")),
         lambda: frac(ident("prompt-a")["hit"], ident("prompt-a")["lots"], 2), ocr_paired("identification.hit")),
    cell("docs/lots.md", OCR, "wrong (lots)", lambda: with_interval(rate("identification.ocr-baseline.all.wrong_rate")),
         lambda: f"{ident('prompt-a')['wrong']}/{ident('prompt-a')['lots']}",
         ocr_paired("identification.not_wrong", "not wrong: ")),
    cell("docs/lots.md", OCR, "abstain (lots)",
         lambda: with_interval(rate("identification.ocr-baseline.all.abstain_rate")),
         lambda: f"{ident('prompt-a')['abstain']}/{ident('prompt-a')['lots']}", None),
    cell("docs/lots.md", OCR, "hit, held / photo",
         lambda: " / ".join(frac(ident("ocr-baseline", t)["hit"], ident("ocr-baseline", t)["lots"], 2)
                            for t in ("held", "photo")),
         lambda: " / ".join(f"{ident('prompt-a', t)['hit']}/{ident('prompt-a', t)['lots']}" for t in ("held", "photo")),
         ocr_paired("identification.photo.hit", "photo: ")),
    cell("docs/lots.md", OCR, "count exact (lots)",
         lambda: with_interval(rate("identification.ocr-baseline.count.all.exact_rate")),
         lambda: frac(rate("identification.prompt-a.count.all.exact_rate")["k"],
                      rate("identification.prompt-a.count.all.exact_rate")["n"], 2),
         ocr_paired("identification.count_exact")),
    cell("docs/lots.md", OCR, "fields met ((case, field), clustered by case)",
         lambda: with_interval(rate("fields.ocr-baseline.fields_met.rate")),
         lambda: f"{fields('prompt-a')['met']}/{fields('prompt-a')['n']}", ocr_paired("fields.majority")),
    cell("docs/lots.md", OCR, "cases met", lambda: with_interval(rate("fields.ocr-baseline.cases_met.rate")),
         lambda: "{met}/{n}".format(**load("metrics/fields/prompt-a.json")["cases_met"]), None),
    cell("docs/lots.md", OCR, "valuation in band (lots)",
         lambda: with_interval(rate("valuation.ocr-baseline.in_band_rate")),
         lambda: f"{valuation('prompt-a')['in_band']}/{valuation('prompt-a')['lots']}",
         ocr_paired("valuation.in_band")),
    cell("docs/lots.md", OCR, "run consistency",
         lambda: with_interval(rate("identification.ocr-baseline.all.consistent_rate")),
         lambda: f"{ident('prompt-a')['consistent']}/{ident('prompt-a')['lots']}", None),
    text("docs/lots.md", rf"A table of {N} real model names", lambda: str(real_world_names())),
    text("docs/lots.md", rf"The demo has {N} lots \({N} held, {N} photo\), {N} valuation lots, and {N} cases",
         lambda: str(ident("prompt-a")["lots"]), lambda: str(ident("prompt-a", "held")["lots"]),
         lambda: str(ident("prompt-a", "photo")["lots"]), lambda: str(valuation("prompt-a")["lots"]),
         lambda: str(load("metrics/fields/prompt-a.json")["cases_met"]["n"])),
    # docs/valuation.md: the comps fixes, on (the committed metrics) and off (the same answers re-valued)
    cell("docs/valuation.md", FIX, "prompt-a | off", *fixes_row("prompt-a", False)),
    cell("docs/valuation.md", FIX, "prompt-a | **on**", *fixes_row("prompt-a", True)),
    cell("docs/valuation.md", FIX, "prompt-b | off", *fixes_row("prompt-b", False)),
    cell("docs/valuation.md", FIX, "prompt-b | **on**", *fixes_row("prompt-b", True)),
    cell("docs/valuation.md", FIX, "prompt-a | **on**", None, None, None, None,
         lambda: f"{valuation('prompt-a')['comps']['precision']:.2f} / {valuation('prompt-a')['comps']['recall']:.2f}"),
    cell("docs/valuation.md", FIX, "prompt-b | **on**", None, None, None, None,
         lambda: f"{valuation('prompt-b')['comps']['precision']:.2f} / {valuation('prompt-b')['comps']['recall']:.2f}"),
]


def document(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: f"{c.doc}:{c.pattern[:40]}")
def test_every_quoted_number_equals_the_committed_output(claim):
    assert claim.problems(document(claim.doc)) == []


def bump(number: str) -> str:
    """The quoted number with its last digit changed (``0.275`` -> ``0.276``; ``9`` -> ``0``)."""
    i = max(i for i, ch in enumerate(number) if ch.isdigit())
    return number[:i] + str((int(number[i]) + 1) % 10) + number[i + 1:]


@pytest.mark.parametrize("claim", CLAIMS, ids=lambda c: f"{c.doc}:{c.pattern[:40]}")
def test_a_changed_number_fails_the_check(claim):
    """Each quoted value, changed in memory (one digit of each number in it), is reported: no claim passes
    whatever the document says."""
    text = document(claim.doc)
    m = claim.quoted(text)
    assert m is not None
    for group in range(1, len(m.groups()) + 1):
        start, end = m.span(group)
        quoted = m.group(group)
        if not any(ch.isdigit() for ch in quoted):
            changed = quoted + "x"
        else:
            changed = bump(quoted)
        mutated = text[:start] + changed + text[end:]
        assert claim.problems(mutated), (claim.doc, quoted, changed)


def test_the_bad_input_corpus_is_counted_and_each_case_names_its_stage():
    cases = bad_input_cases()
    assert len(cases) == len(list((ROOT / "tests/bad_inputs").glob("*/case.yaml"))) > 300
    assert sum(int(n.split()[-1]) for n in stage_counts().split(", ")) == len(cases)


def test_the_production_code_example_declares_the_candidate_it_runs():
    """On a fresh clone the example's first `candor identify` exits 2 unless the candidate is declared: the README
    declares it first, with the provider and source tests/test_examples.py gives it."""
    readme = document("README.md")
    block = readme[readme.index("## Benchmark your production code"):readme.index("## Plots offline")]
    steps = block[block.index("```\n$ python - <<'PY'"):]
    assert steps.index('ident["candidates"].append("example-analyzer")') < steps.index("$ candor identify")
    assert '{"python": "examples.lots_analyzer:analyze"}' in steps
    assert 'ident["sources"]["example-analyzer"] = "examples/lots_analyzer.py"' in steps
    example = (ROOT / "tests/test_examples.py").read_text(encoding="utf-8")
    assert '"example-analyzer": {"python": "examples.lots_analyzer:analyze"}' in example
    assert '{"example-analyzer": "examples/lots_analyzer.py"' in example
    assert "example-analyzer" not in yaml.safe_load(document("params.yaml"))["identify"]["candidates"]


def subset_problems(doc: Any, actual: Any, where: str = "") -> list[str]:
    """Where the mapping ``doc`` says something ``actual`` does not: a key it lacks or another value."""
    if isinstance(doc, dict) and isinstance(actual, dict):
        return [p for k, v in doc.items() for p in (subset_problems(v, actual[k], f"{where}.{k}".lstrip("."))
                                                   if k in actual else [f"{where}.{k}".lstrip(".") + ": no such key"])]
    return [] if doc == actual else [f"{where}: the doc says {doc!r}, params.yaml {actual!r}"]


def params_block(name: str, heading: str) -> dict[str, Any]:
    body = document(name)
    section = body[body.index(f"\n## {heading}\n"):]
    return yaml.safe_load(section[section.index("```yaml\n") + 8:section.index("\n```", section.index("```yaml"))])


def test_the_detector_params_section_is_the_committed_params_yaml():
    """docs/detector.md, "Params", shows the demo's detector sections: every key it shows is in params.yaml with that
    value (it once showed `detector.models`, which no longer exists)."""
    shown = params_block("docs/detector.md", "Params")
    actual = yaml.safe_load(document("params.yaml"))
    assert subset_problems(shown, actual) == []
    assert subset_problems({"detector": {"models": ["demo-v1", "demo-v2"]}}, actual) == ["detector.models: no such key"]
    assert subset_problems({"match": {"iou": 0.4}}, actual) == ["match.iou: the doc says 0.4, params.yaml 0.5"]
