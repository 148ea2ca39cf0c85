"""Generate the demo recordings of prompt-a and prompt-b (seeded, reproducible).

    python tools/lots/make_recordings.py [--root data/lots] [--seed 0]

These are **synthetic** answers, written to look like what a vision-language
model returns for the lots and cases of the golden set, so that the replay
pipeline, the scorers and the statistics have something realistic to chew on
without a network. They are not real model output: the provider is recorded as
``demo.invalid`` and the model as ``demo-vlm``. Record real answers with
``identify.mode: live`` and put them in ``recordings/`` to measure a real model.

What each lot gets is scripted below, run by run, so the failure classes the
lots track exists to catch (docs/lots.md) appear on purpose:

* identification codes: ``H`` clean hit; ``E`` the right model, hedged (``e.g.``,
  ``possibly``, ``or similar``): an abstention, counted as hedged (docs/lots.md); ``P`` hit with
  spec words in the model field
  (``16GB``, ``48-port``); ``S`` spec words only (``8-channel``): an abstention;
  ``C`` category only (model null or the category): an abstention; ``W`` a
  confidently wrong model; ``U`` unparseable output (prose around the JSON or
  a truncated object);
* count codes: ``.`` right; ``D`` a screen dimension read as the quantity;
  ``A`` accessories counted as units (a container answer whose batteries and
  charger add to the count); ``M`` a configured system counted as its modules;
  ``N`` no quantity; ``-`` miscounted by one.

prompt-b (nameplate-first, stricter rules) is better on most lots and worse on a
few (L019, L020, L022, L023), so there are discordant pairs in both directions.
Stylistic details (code fences, indentation, make spelling) come from a
``random.Random`` seeded per (seed, candidate, lot, run); reruns write the same bytes.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from candor_eval.lots.golden import Golden, Lot, load_golden  # noqa: E402 - after the sys.path line above
from candor_eval.lots.recording import RecordLine, parse_answer  # noqa: E402 - after the sys.path line above

PROVIDER = "demo.invalid"
MODEL = "demo-vlm"

# id: (functional, specific, attributes, spec-only model text, wrong model, screen size)
LOT_STYLE: dict[str, dict[str, Any]] = {
    "L001": dict(fn="Computers", sp="Desktop Computers", attrs=[("Form Factor", "SFF"), ("Memory", "16GB")],
                 spec="SFF i5 16GB", wrong="OptiPlex 7080", plus="16GB"),
    "L002": dict(fn="Computers", sp="Desktop Computers", attrs=[("Form Factor", "SFF")],
                 spec="SFF Desktop", wrong="EliteDesk 800 G5", plus="i5-10500"),
    "L003": dict(fn="Computers", sp="Desktop Computers", attrs=[("Form Factor", "Tiny")],
                 spec="Tiny 8GB", wrong="ThinkCentre M710q", plus="Tiny"),
    "L004": dict(fn="Computers", sp="Monitors", attrs=[("Screen Size", "24 in")], screen=24,
                 spec='24"', wrong="P2417H", plus='24"'),
    "L005": dict(fn="Lab Equipment", sp="Chromatography", attrs=[("Modules", "pump, autosampler, column oven, DAD")],
                 spec="4-module HPLC stack", wrong="1290 Infinity II", plus="Quaternary"),
    "L006": dict(fn="Test Equipment", sp="Oscilloscopes", attrs=[("Channels", "4"), ("Bandwidth", "200 MHz")],
                 spec="4-channel 200MHz", wrong="TDS2014B", plus="4-channel"),
    "L007": dict(fn="Test Equipment", sp="Multimeters", attrs=[("Type", "True RMS")],
                 spec="True RMS", wrong="Fluke 179", plus="True RMS"),
    "L008": dict(fn="Lab Equipment", sp="Incubators", attrs=[("Capacity", "60 L")],
                 spec="60L", wrong="Heracell 150i", plus="60L"),
    "L009": dict(fn="Networking", sp="Network Switches", attrs=[("Ports", "48"), ("PoE", "yes")],
                 spec="48-port PoE", wrong="Catalyst 3850-48P", plus="48-port PoE"),
    "L010": dict(fn="Networking", sp="Network Switches", attrs=[("Ports", "24"), ("PoE budget", "250W")],
                 spec="24-port 250W PoE", wrong="US-48-500W", plus="250W"),
    "L011": dict(fn="Tools", sp="Power Tools", attrs=[("Voltage", "20V MAX")], accessories=[
        ("Battery", "DCB203", 2), ("Charger", "DCB112", 1)], spec="20V MAX", wrong="DCD771", plus="20V"),
    "L012": dict(fn="Tools", sp="Power Tools", attrs=[("Voltage", "18V")],
                 spec="M18 FUEL 18V", wrong="2704-20", plus="M18 FUEL"),
    "L013": dict(fn="Lab Equipment", sp="Liquid Handling", attrs=[("Channels", "8"), ("Volume", "30-300 ul")],
                 spec="8-channel 30-300ul", wrong="Xplorer plus", plus="8-channel"),
    "L014": dict(fn="Computers", sp="Laptops", attrs=[("Screen Size", "14 in")],
                 spec='14" i5', wrong="Latitude 5410", plus="i5 16GB"),
    "L015": dict(fn="Computers", sp="Laptops", attrs=[("Screen Size", "14 in")],
                 spec='14" Gen 2', wrong="ThinkPad T490", plus="Gen 2"),
    "L016": dict(fn="Office Equipment", sp="Printers", attrs=[("Type", "Mono laser")],
                 spec="Mono laser 40ppm", wrong="LaserJet Pro M402n", plus="40ppm"),
    "L017": dict(fn="Electronics", sp="Power Protection", attrs=[("Capacity", "1500VA")],
                 spec="1500VA", wrong="SMT1000", plus="1500VA"),
    "L018": dict(fn="Lab Equipment", sp="Balances", attrs=[("Readability", "0.01 mg")],
                 spec="0.01mg 220g", wrong="XS204", plus="DualRange"),
    "L019": dict(fn="Lab Equipment", sp="Centrifuges", attrs=[("Refrigerated", "yes")],
                 spec="24-place refrigerated", wrong="Legend Micro 17R", plus="refrigerated"),
    "L020": dict(fn="Test Equipment", sp="Multimeters", attrs=[("Digits", "6.5")],
                 spec="6.5 digit", wrong="34401A", plus="6.5 digit"),
    "L021": dict(fn="Networking", sp="Wireless", attrs=[("Standard", "802.11ac")],
                 spec="802.11ac", wrong="UAP-AC-LR", plus="802.11ac"),
    "L022": dict(fn="Lab Equipment", sp="Microscopes", attrs=[("Objectives", "4x 10x 40x 100x")],
                 spec="4-objective", wrong="CX31", plus="binocular"),
    "L023": dict(fn="Tools", sp="Power Tools", attrs=[("Voltage", "18V LXT")],
                 spec="18V LXT", wrong="XPH07Z", plus="18V LXT"),
    "L024": dict(fn="Lab Equipment", sp="PCR", attrs=[("Block", "96-well")],
                 spec="96-well", wrong="C1000 Touch", plus="96-well"),
    "L025": dict(fn="Computers", sp="Monitors", attrs=[("Screen Size", "23.8 in")], screen=24,
                 spec='24" IPS', wrong="EliteDisplay E233", plus='23.8"'),
    "L026": dict(fn="Networking", sp="Network Switches", attrs=[("Ports", "24"), ("PoE", "yes")],
                 spec="24-port PoE+", wrong="Catalyst 9300-24P", plus="24P"),
}

# id: {candidate: (identification codes per run, count codes per run)}
SCRIPT: dict[str, dict[str, tuple[str, str]]] = {
    "L001": {"prompt-a": ("PHE", "..N"), "prompt-b": ("HHH", "...")},
    "L002": {"prompt-a": ("WHC", "..."), "prompt-b": ("HHH", "...")},
    "L003": {"prompt-a": ("EEH", "-.."), "prompt-b": ("HHH", "...")},
    "L004": {"prompt-a": ("CHC", "DD."), "prompt-b": ("HHH", "..D")},
    "L005": {"prompt-a": ("SCS", "MMM"), "prompt-b": ("HHW", "M..")},
    "L006": {"prompt-a": ("HHH", "..."), "prompt-b": ("HHH", "...")},
    "L007": {"prompt-a": ("HEH", ".-."), "prompt-b": ("HHH", "...")},
    "L008": {"prompt-a": ("CCW", "..."), "prompt-b": ("HWH", "...")},
    "L009": {"prompt-a": ("HHP", "..."), "prompt-b": ("HHH", "...")},
    "L010": {"prompt-a": ("SSC", "..."), "prompt-b": ("EHH", "...")},
    "L011": {"prompt-a": ("HHH", "AAA"), "prompt-b": ("HHH", "A..")},
    "L012": {"prompt-a": ("WHH", "..."), "prompt-b": ("HHH", "...")},
    "L013": {"prompt-a": ("SSS", "..."), "prompt-b": ("HHS", "...")},
    "L014": {"prompt-a": ("HWH", ".-."), "prompt-b": ("HHH", "...")},
    "L015": {"prompt-a": ("HHH", "---"), "prompt-b": ("HHH", ".-.")},
    "L016": {"prompt-a": ("UHH", "..."), "prompt-b": ("HHH", "...")},
    "L017": {"prompt-a": ("HHE", "..."), "prompt-b": ("HHH", "...")},
    "L018": {"prompt-a": ("CWC", "..."), "prompt-b": ("HHH", "...")},
    "L019": {"prompt-a": ("WHH", "..."), "prompt-b": ("WHW", "...")},
    "L020": {"prompt-a": ("HHH", "..."), "prompt-b": ("HUH", "...")},
    "L021": {"prompt-a": ("HHC", "-.."), "prompt-b": ("EHH", "...")},
    "L022": {"prompt-a": ("HHH", "..."), "prompt-b": ("WWH", "...")},
    "L023": {"prompt-a": ("HCH", "..."), "prompt-b": ("CCH", "...")},
    "L024": {"prompt-a": ("HHS", "..."), "prompt-b": ("HHH", "...")},
    "L025": {"prompt-a": ("CCH", "DD."), "prompt-b": ("HHH", "...")},
    "L026": {"prompt-a": ("WWW", "..."), "prompt-b": ("HWH", "...")},
}

# Field cases: per candidate, a variant code per run (see case_answer).
CASE_SCRIPT: dict[str, dict[str, str]] = {
    "drill-on-bench": {"prompt-a": "abb", "prompt-b": "aaa"},
    "pipette-multichannel": {"prompt-a": "bbU", "prompt-b": "aab"},
    "pc-pallet": {"prompt-a": "bbb", "prompt-b": "aab"},
    "oscilloscope-bench": {"prompt-a": "aba", "prompt-b": "aaa"},
    "switch-rack": {"prompt-a": "abX", "prompt-b": "aba"},
    "monitor-stack": {"prompt-a": "abb", "prompt-b": "aaa"},
}

RATE_LIMIT = ('after 4 attempt(s): HTTP 429 Too Many Requests: {"error": {"message": "Rate limit reached for '
              'requests per min. Please try again in 20s.", "type": "requests", "code": "rate_limit_exceeded"}}')


def sha256_text(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def attrs(pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"name": n, "value": v} for n, v in pairs]


def model_text(lot: Lot, code: str, rng: random.Random, style: dict[str, Any]) -> str | None:
    """The itemModel for identification code ``code``."""
    series_and_number = lot.model
    if code == "H":
        return rng.choice([series_and_number, f"{lot.make} {series_and_number}"])
    if code == "E":
        return rng.choice([f"e.g. {series_and_number}", f"{series_and_number} (possibly)",
                           f"{series_and_number} or similar"])
    if code == "P":
        return f"{series_and_number} {style['plus']}"
    if code == "S":
        return style["spec"]
    if code == "C":
        return rng.choice([None, lot.category])
    if code == "W":
        return style["wrong"]
    raise ValueError(code)


def quantity(lot: Lot, code: str, style: dict[str, Any]) -> int | None:
    n = lot.count or 1
    return {".": n, "D": style.get("screen", 24), "M": 4, "N": None, "-": n - 1 if n > 1 else 2, "A": n}[code]


def lot_answer(lot: Lot, id_code: str, count_code: str, rng: random.Random) -> dict[str, Any]:
    style = LOT_STYLE[lot.id]
    make: str | None = rng.choice([lot.make, lot.make.upper()]) if lot.make.isascii() else lot.make
    if id_code == "C" and rng.random() < 0.5:
        make = None
    item = {
        "itemName": f"{lot.make} {style['sp'].rstrip('s')}" if id_code == "C" else f"{lot.make} {lot.model}",
        "itemManufacturer": make,
        "itemModel": model_text(lot, id_code, rng, style),
        "itemType": lot.category,
        "categoryFunctional": style["fn"],
        "categorySpecific": style["sp"],
        "quantity": quantity(lot, count_code, style),
        "itemAttributes": attrs(style["attrs"]),
        "condition": rng.choice(["Used", "Used - good", "Used, untested"]),
    }
    label = f"{lot.count or 1}x {lot.category}" if (lot.count or 1) > 1 else lot.category
    if count_code == "A":
        extras = [{"itemName": f"{lot.make} {kind}", "itemManufacturer": lot.make, "itemModel": model,
                   "itemType": kind, "quantity": qty} for kind, model, qty in style["accessories"]]
        return {"type": "container",
                "container": {"containerType": "Box", "containerItems": [item, *extras]},
                "imageLabel": f"{lot.make} kit", "imageNotes": "Tools with batteries and charger in a box."}
    return {"type": "item", "item": item, "imageLabel": label,
            "imageNotes": rng.choice(["Nameplate visible in one photo.", "Units appear complete.",
                                      "Photographed on a pallet.", "Some cosmetic wear."])}


def case_answer(name: str, variant: str, rng: random.Random) -> dict[str, Any]:
    """The answer object of field case ``name``: variant ``a`` good, ``b`` typical slips."""
    good = variant == "a"
    if name == "drill-on-bench":
        item = {"itemName": "Cordless Drill/Driver", "itemManufacturer": "DeWalt" if good else None,
                "itemModel": "DCD791" if good else "e.g. DCD791",
                "itemType": "Cordless Drill", "categoryFunctional": "Tools",
                "categorySpecific": "Power Tools" if good else "power-tools",
                "quantity": 1, "itemAttributes": attrs([("Voltage", "20 Volts"), ("Chuck", "1/2 in")])}
        return {"type": "item", "item": item, "imageLabel": "DeWalt drill", "imageNotes": "Yellow body."}
    if name == "pipette-multichannel":
        item = {"itemName": "Multichannel Pipette", "itemManufacturer": "Eppendorf",
                "itemModel": "Research plus" if good else "8-channel",
                "itemType": "Multichannel Pipette" if good else "Pipettor",
                "categoryFunctional": "Lab Equipment",
                "categorySpecific": "Liquid Handling" if good else "Pipettes",
                "quantity": 1,
                "itemAttributes": attrs([("Channels", "8"), ("Volume Range", "30-300 uL")] if good
                                        else [("Volume Range", "30-300 uL")])}
        return {"type": "item", "item": item, "imageLabel": "Eppendorf pipette", "imageNotes": ""}
    if name == "pc-pallet":
        desk = {"itemName": "Desktop PC", "itemManufacturer": "Dell", "itemModel": "OptiPlex 7090",
                "itemType": "Desktop Computer", "quantity": 12}
        if good:
            return {"type": "container",
                    "container": {"containerType": "Pallet", "containerItems": [desk]},
                    "imageLabel": "Pallet of Dell desktops", "imageNotes": "Shrink-wrapped."}
        return {"type": "item", "item": desk | {"categorySpecific": "Desktop Computers"},
                "imageLabel": "Dell desktops", "imageNotes": "Shrink-wrapped pallet."}
    if name == "oscilloscope-bench":
        item = {"itemName": "Digital Storage Oscilloscope", "itemManufacturer": "Tektronix",
                "itemModel": "TDS2024C" if good else "TDS 2000 series",
                "itemType": "Digital Oscilloscope", "categoryFunctional": "Test Equipment" if good else "Electronics",
                "categorySpecific": "Oscilloscopes", "quantity": 1,
                "itemAttributes": attrs([("Channels", "4"), ("Bandwidth", "200 MHz")])}
        return {"type": "item", "item": item, "imageLabel": "Tektronix scope", "imageNotes": ""}
    if name == "switch-rack":
        item = {"itemName": "Managed Switch", "itemManufacturer": "Cisco", "itemModel": "Catalyst 2960-X",
                "itemType": "Network Switch", "categoryFunctional": "Networking",
                "categorySpecific": "Network Switches" if good else "Switches",
                "quantity": 1,
                "itemAttributes": attrs([("Ports", "48"), ("PoE", "yes")] if good else [("PoE", "yes")])}
        return {"type": "item", "item": item, "imageLabel": "Cisco switch in rack" if good else "Rack switch",
                "imageNotes": ""}
    if name == "monitor-stack":
        item = {"itemName": "LCD Monitor", "itemManufacturer": None, "itemModel": None,
                "itemType": "Monitor" if good else "Computer Monitor", "categoryFunctional": "Computers",
                "categorySpecific": "Monitors", "quantity": 24 if not good else 6,
                "itemAttributes": attrs([("Screen Size", "24 in")] if good else [("Panel", "IPS")])}
        return {"type": "item", "item": item, "imageLabel": "Stack of monitors", "imageNotes": ""}
    raise KeyError(name)


def render_raw(obj: dict[str, Any], code: str, rng: random.Random) -> str:
    """What the model 'said': JSON, sometimes fenced; ``U`` gives unparseable text."""
    if code == "U":
        text = json.dumps(obj, indent=2)
        return rng.choice([
            "Here is the analysis of the lot:\n\n```json\n" + text + "\n```\n\nLet me know if you need more detail.",
            text[: len(text) * 2 // 3],
        ])
    text = json.dumps(obj, indent=rng.choice([None, 2]))
    return f"```json\n{text}\n```" if rng.random() < 0.3 else text


def record(case: str, run: int, raw: str | None, *, sha: str, error: str | None = None) -> RecordLine:
    if error is not None:
        return RecordLine(case=case, run=run, error=error, provider=PROVIDER, model=MODEL,
                          prompt_sha256=sha, gallery="all")
    parsed, why = parse_answer(raw or "")
    return RecordLine(case=case, run=run, raw=raw, parsed=parsed, parse_error=why, provider=PROVIDER,
                      model=MODEL, prompt_sha256=sha, gallery="all")


def build(golden: Golden, *, candidate: str, sha: str, seed: int) -> list[RecordLine]:
    lines = []
    for lot in golden.lots:
        ids, counts = SCRIPT[lot.id][candidate]
        for run, (ic, cc) in enumerate(zip(ids, counts), start=1):
            rng = random.Random(f"{seed}:{candidate}:{lot.id}:{run}")
            obj = lot_answer(lot, "H" if ic == "U" else ic, cc, rng)
            lines.append(record(lot.id, run, render_raw(obj, ic, rng), sha=sha))
    for case in golden.cases:
        for run, v in enumerate(CASE_SCRIPT[case.name][candidate], start=1):
            rng = random.Random(f"{seed}:{candidate}:{case.name}:{run}")
            if v == "X":
                lines.append(record(case.name, run, None, sha=sha, error=RATE_LIMIT))
                continue
            obj = case_answer(case.name, "b" if v == "U" else v, rng)
            lines.append(record(case.name, run, render_raw(obj, v, rng), sha=sha))
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default="data/lots")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    root = Path(args.root)
    golden = load_golden(root)
    for candidate in ("prompt-a", "prompt-b"):
        sha = sha256_text(root / "prompts" / f"{candidate}.txt")
        lines = build(golden, candidate=candidate, sha=sha, seed=args.seed)
        out = root / "recordings" / f"{candidate}.jsonl"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text("".join(line.to_json() + "\n" for line in lines), encoding="utf-8")
        print(f"wrote {out}: {len(lines)} lines")


if __name__ == "__main__":
    main()
