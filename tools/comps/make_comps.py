"""Generate the demo comps set: ``data/comps/listings.csv`` and ``data/comps/relevance.csv``.

    python -m tools.comps.make_comps [--lots data/lots/lots.csv] [--out data/comps] [--seed 0]

Seeded and deterministic: the same seed writes the same bytes. For every valuation lot of
``lots.csv`` it writes realistic sold listings priced around the lot's human-verified unit
value (``verified_value / count``): genuine sales of the model (single units and multi-unit
lots, various conditions and configurations) and the decoys the comps rules guard against
(docs/valuation.md):

* ``spec``: titles whose spec words ("8-channel", "16GB", "24 inch") look like model tokens;
* ``card`` / ``other``: the same model number on an unrelated product (a trading card, an ink
  cartridge) or on another brand's product with a similar number;
* ``accessory`` / ``parts``: accessories for the model and parts-only / not-working units;
* ``family``: the same product line, another model (a careful human does not accept it);
* multi-unit lots of the genuine model (``quantity`` > 1, the price is for the whole lot).

``relevance.csv`` lists, per valuation lot, the listing ids a careful human accepts as comps:
the genuine sales of the exact model (single or multi-unit), nothing else. It is written from
the same table that writes the titles, so it is known by construction, not guessed.
Rewrite the manifest afterwards: ``candor fetch manifest data/comps``.
"""
from __future__ import annotations

import argparse
import random
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path

from candor_eval.common.tables import write_csv
from candor_eval.lots.golden import read_lots
from candor_eval.lots.listings import LISTING_COLUMNS, RELEVANCE_COLUMNS

CENT = Decimal("0.01")


@dataclass(frozen=True)
class Row:
    """One listing template: ``factor`` x the verified unit value per unit, ``quantity`` units."""

    title: str
    factor: float
    kind: str = "comp"        # comp | spec | card | other | accessory | parts | family
    quantity: int = 1
    category: str = ""


# Per valuation lot: genuine comps and decoys. Prices are factors of the verified unit value;
# a small seeded jitter is applied on top. Titles read like real marketplace titles.
SPECS: dict[str, list[Row]] = {
    "L001": [
        Row("Dell OptiPlex 7090 SFF i5-10505 16GB 256GB SSD Win 11 Pro", 1.05),
        Row("Lot of 8 Dell OptiPlex 7090 SFF i5 8GB 256GB SSD", 0.9, quantity=8),
        Row("Lot of 4 Dell OptiPlex 7090 Small Form Factor i7-11700 32GB 512GB NVMe", 1.3, quantity=4),
        Row("DELL OPTIPLEX 7090 SFF Core i5 8GB RAM No HDD", 0.75),
        Row("Lot of 3 Dell OptiPlex 7090 SFF i5-10500 16GB 256GB SSD", 1.0, quantity=3),
        Row("Lot of 10 Dell OptiPlex 7090 SFF i5-10500 8GB 256GB", 0.95, quantity=10),
        Row("Lot of 5 Dell OptiPlex 7090 SFF Desktop PC i5 16GB", 1.0, quantity=5),
        Row("Lot of 20 Dell Optiplex 7090 SFF i5-11500 16GB no drives", 0.9, quantity=20),
        Row("Dell OptiPlex 3080 SFF i3-10100 8GB 256GB", 0.55, "family"),
        Row("Dell OptiPlex 7090 Tower i9-11900 32GB 1TB RTX", 3.2, "family"),
        Row("Dell OptiPlex 7090 SFF 180W power supply L180ES-00", 0.18, "accessory"),
        Row("Dell OptiPlex 7090 SFF motherboard for parts not working", 0.25, "parts"),
        Row("Pokemon Card Lot 7090 HP Holo Rare Vintage Collection", 2.4, "card", category="Trading Cards"),
        Row("HP 7090 Color Inkjet Printer Ink Cartridge Tri-Color", 0.12, "other", category="Printer Ink"),
    ],
    "L002": [
        Row("Lot of 5 HP EliteDesk 800 G6 SFF i5-10500 16GB 256GB SSD", 1.0, quantity=5),
        Row("Lot of 3 HP EliteDesk 800 G6 Small Form Factor i7-10700 32GB 512GB", 1.3, quantity=3),
        Row("Lot of 6 HP Elitedesk 800 G6 SFF Core i5 8GB No OS", 0.8, quantity=6),
        Row("Lot of 4 HP EliteDesk 800 G6 SFF i5 16GB 256GB Win11", 0.95, quantity=4),
        Row("Lot of 10 HP EliteDesk 800 G6 SFF i5-10600 16GB 512GB NVMe", 1.05, quantity=10),
        Row("HP EliteDesk 800 G4 SFF i5-8500 8GB 256GB", 0.55, "family"),
        Row("HP EliteDesk 800 G5 Mini i5-9500T 16GB", 0.85, "family"),
        Row("HP EliteDesk 800 G6 SFF 250W power supply L77487-004", 0.2, "accessory"),
        Row("HP ProDesk 600 G6 SFF i5-10500 16GB 256GB", 0.8, "other"),
        Row("Corsair Vengeance 16GB DDR4 3200 SFF desktop memory", 0.3, "spec", category="Computer Memory"),
    ],
    "L003": [
        Row("Lenovo ThinkCentre M720q Tiny i5-8500T 16GB 256GB SSD", 1.05),
        Row("Lot of 8 Lenovo ThinkCentre M720q Tiny i3-8100T 8GB 128GB", 0.75, quantity=8),
        Row("Lot of 6 Lenovo ThinkCentre M720q Tiny i5 8GB 256GB", 0.9, quantity=6),
        Row("Lenovo M720q Tiny Desktop i7-8700T 32GB 512GB", 1.45),
        Row("Lot of 12 Lenovo ThinkCentre M720q i5-9400T 16GB 256GB NVMe", 1.0, quantity=12),
        Row("Lot of 3 Lenovo ThinkCentre M720q Tiny no RAM no SSD", 0.7, quantity=3),
        Row("Lenovo ThinkCentre M920q Tiny i7-8700T 16GB 512GB", 1.6, "family"),
        Row("Lenovo ThinkCentre M720q Tiny 65W AC adapter power supply", 0.15, "accessory"),
        Row("Lenovo ThinkCentre M720q VESA mount bracket kit", 0.12, "accessory"),
        Row("Lenovo ThinkCentre M720q Tiny for parts no power", 0.3, "parts"),
    ],
    "L004": [
        Row("Lot of 5 Dell P2419H 24\" IPS LED Monitors 1920x1080 with stands", 1.05, quantity=5),
        Row("Dell P2419H 24 inch Full HD Monitor no stand", 0.8),
        Row("Lot of 6 Dell P2419H monitors no stands", 0.85, quantity=6),
        Row("Lot of 8 Dell P2419H 24\" monitors with stands", 0.95, quantity=8),
        Row("Lot of 4 Dell P2419H 24in monitors", 1.0, quantity=4),
        Row("Lot of 10 Dell P2419H 23.8\" IPS monitors grade A", 1.1, quantity=10),
        Row("Dell P2419HC 24 USB-C monitor", 1.5, "family"),
        Row("Dell P2419H monitor stand base only", 0.3, "accessory"),
        Row("Dell P2419H cracked screen for parts", 0.2, "parts"),
        Row("Samsung 24 inch curved monitor C24F390", 1.4, "spec"),
        Row("Acer 24 inch 1080p monitor lot of 2", 1.1, "spec", quantity=2),
    ],
    "L005": [
        Row("Lot of 2 Agilent 1260 Infinity HPLC stacks with ChemStation PCs", 0.95, quantity=2, category="Lab Equipment"),
        Row("John Deere 1260 disc mower conditioner, field ready", 1.9, "other", category="Farm Equipment"),
        Row("Lot of 2 Agilent 1260 Infinity HPLC systems lab closeout", 0.9, quantity=2, category="Lab Equipment"),
        Row("Lot of 3 Agilent 1260 Infinity HPLC systems university surplus", 0.8, quantity=3, category="Lab Equipment"),
        Row("Agilent 1260 Infinity HPLC System G1311B G1329B G1316A G1315D", 1.0, category="Lab Equipment"),
        Row("Agilent 1260 Infinity II HPLC system quaternary pump DAD autosampler", 1.25, category="Lab Equipment"),
        Row("Agilent 1260 Infinity HPLC with ChemStation, working", 0.85, category="Lab Equipment"),
        Row("Agilent 1260 Infinity G1311B quaternary pump module", 0.3, "parts", category="Lab Equipment"),
        Row("Agilent 1260 Infinity G1316A column compartment module", 0.12, "parts", category="Lab Equipment"),
        Row("Agilent 1260 Infinity G1329B autosampler module", 0.25, "parts", category="Lab Equipment"),
        Row("Agilent 1260 Infinity G1315D DAD detector module", 0.28, "parts", category="Lab Equipment"),
        Row("Agilent 1260 Infinity HPLC system for parts or repair", 0.2, "parts", category="Lab Equipment"),
        Row("Agilent 1260 HPLC capillary kit 5067-4659", 0.02, "accessory", category="Lab Equipment"),
        Row("Agilent 1100 Series HPLC system G1311A G1313A", 0.45, "family", category="Lab Equipment"),
        Row("Magic the Gathering 1260 collector number foil trading card", 0.004, "card", category="Trading Cards"),
    ],
    "L006": [
        Row("Lot of 2 Tektronix TDS2024C oscilloscopes with probes", 0.95, quantity=2, category="Test Equipment"),
        Row("Lot of 3 Tektronix TDS2024C oscilloscopes school surplus", 0.85, quantity=3, category="Test Equipment"),
        Row("Lot of 5 Tektronix TDS2024C 200 MHz scopes", 0.8, quantity=5, category="Test Equipment"),
        Row("Tektronix TDS2024C 4 Channel 200 MHz Digital Oscilloscope", 1.0, category="Test Equipment"),
        Row("Tektronix TDS2024C oscilloscope 2 GS/s tested w/ probes", 1.15, category="Test Equipment"),
        Row("TEKTRONIX TDS2024C Digital Storage Oscilloscope", 0.9, category="Test Equipment"),
        Row("Tektronix TDS2024C 200MHz 4-Ch scope calibrated", 1.3, category="Test Equipment"),
        Row("Tektronix TDS2024B 4 channel 200 MHz oscilloscope", 0.8, "family", category="Test Equipment"),
        Row("Tektronix TDS2022C 2 channel 200 MHz oscilloscope", 0.7, "family", category="Test Equipment"),
        Row("Tektronix P2220 probe for TDS2024C", 0.08, "accessory", category="Test Equipment"),
        Row("Tektronix TDS2024C power supply board for parts", 0.1, "parts", category="Test Equipment"),
        Row("Rigol DS1054Z 4 channel 50 MHz oscilloscope", 0.4, "other", category="Test Equipment"),
    ],
    "L007": [
        Row("Lot of 3 Fluke 87V true RMS meters calibrated", 1.0, quantity=3, category="Test Equipment"),
        Row("Lot of 6 Fluke 87V multimeters plant surplus", 0.85, quantity=6, category="Test Equipment"),
        Row("Fluke 87V True RMS Industrial Digital Multimeter", 1.05, category="Test Equipment"),
        Row("Lot of 4 Fluke 87-V multimeters with leads", 1.0, quantity=4, category="Test Equipment"),
        Row("FLUKE 87V Multimeter used working", 0.85, category="Test Equipment"),
        Row("Lot of 3 Fluke 87V digital multimeters", 0.9, quantity=3, category="Test Equipment"),
        Row("Lot of 2 Fluke 87 V True-RMS DMM", 1.0, quantity=2, category="Test Equipment"),
        Row("Fluke 87 III True RMS multimeter", 0.6, "family", category="Test Equipment"),
        Row("Fluke 87V replacement holster and test leads TL175", 0.2, "accessory", category="Test Equipment"),
        Row("Fluke 87V display not working for parts", 0.25, "parts", category="Test Equipment"),
        Row("2019 Panini Prizm Basketball #87V Silver Rookie Card PSA 10", 8.5, "card", category="Trading Cards"),
    ],
    "L008": [
        Row("Lot of 4 Thermo Heratherm IGS60 incubators university surplus", 0.75, quantity=4, category="Lab Equipment"),
        Row("Lot of 2 Thermo Heratherm IGS60 incubators", 0.9, quantity=2, category="Lab Equipment"),
        Row("Lot of 3 Thermo Scientific Heratherm IGS60 incubators lab closeout", 0.8, quantity=3, category="Lab Equipment"),
        Row("Thermo Scientific Heratherm IGS60 General Protocol Incubator", 1.0, category="Lab Equipment"),
        Row("Thermo Fisher Heratherm IGS60 Incubator 60L", 1.1, category="Lab Equipment"),
        Row("Thermo Scientific Heratherm IGS60 lab incubator tested", 0.85, category="Lab Equipment"),
        Row("Heratherm IGS60 incubator Thermo 51028063", 0.95, category="Lab Equipment"),
        Row("Thermo Scientific Heratherm IGS100 Incubator 100L", 1.5, "family", category="Lab Equipment"),
        Row("Thermo Scientific Heratherm OGS60 oven", 0.9, "family", category="Lab Equipment"),
        Row("Thermo Heratherm IGS60 replacement shelf", 0.05, "accessory", category="Lab Equipment"),
    ],
    "L009": [
        Row("Lot of 6 Cisco WS-C2960X-48FPD-L Catalyst 2960-X 48 Port PoE+ Switches", 0.95, quantity=6, category="Networking"),
        Row("Lot of 2 Cisco Catalyst 2960-X WS-C2960X-48FPD-L 740W PoE", 1.1, quantity=2, category="Networking"),
        Row("Lot of 3 Cisco WS-C2960X-48FPD-L switches", 0.9, quantity=3, category="Networking"),
        Row("Lot of 5 Cisco WS-C2960X-48FPD-L 48-port PoE", 0.85, quantity=5, category="Networking"),
        Row("Lot of 4 Cisco WS-C2960X-48FPD-L switch w/ rack ears", 1.05, quantity=4, category="Networking"),
        Row("Cisco WS-C2960X-24PS-L Catalyst 2960-X 24 Port PoE", 0.6, "family", category="Networking"),
        Row("Cisco WS-C2960X-48TS-L Catalyst 48 port data only", 0.5, "family", category="Networking"),
        Row("Cisco C2960X-STACK stacking module", 0.35, "accessory", category="Networking"),
        Row("Cisco PWR-C2-640WAC power supply for 2960-X", 0.4, "accessory", category="Networking"),
        Row("Netgear 48-port PoE+ gigabit switch GS752TP", 1.2, "spec", category="Networking"),
    ],
    "L011": [
        Row("Lot of 5 DeWalt DCD791 drills tool only contractor surplus", 0.85, quantity=5, category="Power Tools"),
        Row("DeWalt DCD791 20V MAX XR Brushless Drill Driver tool only", 1.0, category="Power Tools"),
        Row("Lot of 3 DEWALT DCD791B 20V brushless compact drills bare tool", 0.9, quantity=3, category="Power Tools"),
        Row("Dewalt DCD791 drill driver used works great", 0.85, category="Power Tools"),
        Row("Lot of 4 DeWalt DCD791 brushless drill drivers bare tools", 0.9, quantity=4, category="Power Tools"),
        Row("Lot of 2 DeWalt DCD791 20V drills tool only", 1.0, quantity=2, category="Power Tools"),
        Row("DeWalt DCD791D2 20V drill kit with 2 batteries and charger", 2.2, "family", category="Power Tools"),
        Row("DeWalt DCD796 20V hammer drill tool only", 1.2, "family", category="Power Tools"),
        Row("DeWalt DCB205 20V 5Ah battery", 0.9, "spec", category="Power Tools"),
        Row("DeWalt DCD791 replacement chuck", 0.25, "accessory", category="Power Tools"),
        Row("Ryobi P252 18V 1/2 in drill", 0.5, "spec", category="Power Tools"),
    ],
    "L012": [
        Row("Lot of 2 Milwaukee 2804-20 hammer drills", 0.95, quantity=2, category="Power Tools"),
        Row("Lot of 3 Milwaukee 2804-20 M18 FUEL hammer drills tool only", 0.9, quantity=3, category="Power Tools"),
        Row("Lot of 6 Milwaukee 2804-20 hammer drills jobsite surplus", 0.8, quantity=6, category="Power Tools"),
        Row("Milwaukee 2804-20 M18 FUEL 1/2\" Hammer Drill tool only", 1.0, category="Power Tools"),
        Row("Milwaukee 2804-20 M18 Fuel hammer drill driver bare", 0.95, category="Power Tools"),
        Row("MILWAUKEE 2804-20 Gen 3 hammer drill used", 0.85, category="Power Tools"),
        Row("Milwaukee M18 FUEL 2804-20 hammer drill new", 1.3, category="Power Tools"),
        Row("Milwaukee 2804-22 M18 FUEL hammer drill kit 2 batteries", 2.6, "family", category="Power Tools"),
        Row("Milwaukee 2904-20 M18 FUEL hammer drill gen 4", 1.4, "family", category="Power Tools"),
        Row("Milwaukee 2804-20 side handle replacement", 0.1, "accessory", category="Power Tools"),
        Row("Milwaukee 48-11-1850 M18 5.0Ah battery", 0.9, "spec", category="Power Tools"),
    ],
    "L013": [
        Row("Lot of 2 Eppendorf Research plus 8-channel pipettes 10-100 ul", 0.95, quantity=2, category="Lab Equipment"),
        Row("Lot of 5 Eppendorf Research plus 8-channel pipettes", 0.85, quantity=5, category="Lab Equipment"),
        Row("Lot of 3 Eppendorf Research plus 8-channel 30-300ul pipettes", 0.9, quantity=3, category="Lab Equipment"),
        Row("Eppendorf Research plus 8-channel pipette 30-300 uL", 1.0, category="Lab Equipment"),
        Row("Eppendorf Research plus 8-Channel 10-100 ul multichannel pipette", 0.95, category="Lab Equipment"),
        Row("Eppendorf Research Plus 8-channel pipettor calibrated", 1.15, category="Lab Equipment"),
        Row("Eppendorf Research plus 8 channel 0.5-10 uL", 0.9, category="Lab Equipment"),
        Row("Eppendorf Research plus single channel 100-1000 uL", 0.45, "family", category="Lab Equipment"),
        Row("Eppendorf Xplorer plus 8-channel electronic pipette", 2.8, "family", category="Lab Equipment"),
        Row("Thermo Finnpipette F1 8-channel pipette 5-50 ul", 0.85, "spec", category="Lab Equipment"),
        Row("8-Channel 1080p DVR security camera system", 0.35, "spec", category="Security Cameras"),
        Row("Eppendorf epT.I.P.S. pipette tips 10x96 for 8-channel", 0.15, "accessory", category="Lab Equipment"),
    ],
    "L017": [
        Row("Lot of 6 APC Smart-UPS SMT1500 office clear-out", 0.8, quantity=6, category="UPS"),
        Row("APC Smart-UPS SMT1500 1500VA LCD 120V UPS new batteries", 1.1, category="UPS"),
        Row("Lot of 4 APC SMT1500 Smart-UPS 1500VA no batteries", 0.55, quantity=4, category="UPS"),
        Row("APC Smart-UPS 1500 SMT1500 tested", 1.0, category="UPS"),
        Row("Lot of 3 APC SMT1500 Smart-UPS with batteries", 0.95, quantity=3, category="UPS"),
        Row("Lot of 2 APC SMT1500 Smart-UPS 1500VA", 1.0, quantity=2, category="UPS"),
        Row("APC SMT1500RM2U rackmount Smart-UPS 1500VA", 1.4, "family", category="UPS"),
        Row("APC RBC7 replacement battery cartridge for SMT1500", 0.4, "accessory", category="UPS"),
        Row("CyberPower CP1500PFCLCD 1500VA UPS", 0.9, "spec", category="UPS"),
        Row("APC SMT1500 for parts not working", 0.2, "parts", category="UPS"),
    ],
    "L018": [
        Row("Lot of 2 Mettler Toledo XS205 balances with printers", 0.95, quantity=2, category="Lab Equipment"),
        Row("Lot of 2 Mettler Toledo XS205 DualRange balances", 0.85, quantity=2, category="Lab Equipment"),
        Row("Lot of 3 Mettler Toledo XS205 analytical balances as pictured", 0.75, quantity=3, category="Lab Equipment"),
        Row("Mettler Toledo XS205 DualRange analytical balance 220g 0.01mg", 1.0, category="Lab Equipment"),
        Row("Mettler-Toledo XS205 DualRange balance tested", 0.9, category="Lab Equipment"),
        Row("METTLER TOLEDO XS205 analytical balance calibrated", 1.15, category="Lab Equipment"),
        Row("Mettler Toledo XS205DU semi-micro balance", 0.95, category="Lab Equipment"),
        Row("Mettler Toledo XS204 analytical balance 0.1mg", 0.6, "family", category="Lab Equipment"),
        Row("Mettler Toledo XS205 draft shield glass door replacement", 0.05, "accessory", category="Lab Equipment"),
        Row("Mettler Toledo XS205 display terminal for parts", 0.1, "parts", category="Lab Equipment"),
        Row("Sartorius Quintix 125D-1S semi-micro balance", 0.8, "other", category="Lab Equipment"),
    ],
    "L019": [
        Row("Lot of 3 Sorvall Legend Micro 21R Thermo centrifuges", 0.85, quantity=3, category="Lab Equipment"),
        Row("Lot of 2 Thermo Sorvall Legend Micro 21R centrifuges", 0.9, quantity=2, category="Lab Equipment"),
        Row("Lot of 4 Thermo Sorvall Legend Micro 21R refrigerated microcentrifuges", 0.8, quantity=4, category="Lab Equipment"),
        Row("Thermo Scientific Sorvall Legend Micro 21R refrigerated microcentrifuge", 1.0, category="Lab Equipment"),
        Row("Thermo Sorvall Legend Micro 21R centrifuge with rotor", 1.15, category="Lab Equipment"),
        Row("Sorvall Legend Micro 21R refrigerated centrifuge tested", 0.85, category="Lab Equipment"),
        Row("Thermo Sorvall Legend Micro 21R microcentrifuge 24 place", 1.05, category="Lab Equipment"),
        Row("Thermo Fisher Legend Micro 21R microcentrifuge", 0.95, category="Lab Equipment"),
        Row("Thermo Sorvall Legend Micro 21 non-refrigerated centrifuge", 0.45, "family", category="Lab Equipment"),
        Row("Thermo Sorvall Legend Micro 17R refrigerated centrifuge", 0.8, "family", category="Lab Equipment"),
        Row("Thermo Legend Micro 21R replacement rotor 24x1.5/2.0 mL", 0.2, "accessory", category="Lab Equipment"),
        Row("Beckman Coulter Microfuge 21R refrigerated centrifuge", 1.6, "other", category="Lab Equipment"),
    ],
    "L020": [
        Row("Lot of 3 Keysight 34461A multimeters calibrated", 0.95, quantity=3, category="Test Equipment"),
        Row("Lot of 2 Keysight 34461A 6.5 digit multimeters", 0.9, quantity=2, category="Test Equipment"),
        Row("Lot of 4 Keysight 34461A Truevolt DMMs", 0.85, quantity=4, category="Test Equipment"),
        Row("Keysight 34461A 6.5 digit digital multimeter", 1.0, category="Test Equipment"),
        Row("Keysight Agilent 34461A Truevolt DMM tested", 0.95, category="Test Equipment"),
        Row("KEYSIGHT 34461A 6 1/2 digit bench multimeter calibrated", 1.2, category="Test Equipment"),
        Row("Keysight 34461A multimeter used", 0.85, category="Test Equipment"),
        Row("Keysight 34465A 6.5 digit Truevolt DMM", 1.6, "family", category="Test Equipment"),
        Row("Agilent 34401A 6.5 digit multimeter", 0.6, "other", category="Test Equipment"),
        Row("HP 34401A digital multimeter", 0.5, "other", category="Test Equipment"),
        Row("Keysight 34461A rack mount kit 34190A", 0.1, "accessory", category="Test Equipment"),
    ],
    "L021": [
        Row("Lot of 8 Ubiquiti UniFi AP AC Pro UAP-AC-PRO access points", 1.05, quantity=8, category="Networking"),
        Row("Lot of 10 Ubiquiti UAP-AC-PRO UniFi AC Pro APs", 0.95, quantity=10, category="Networking"),
        Row("Lot of 5 Ubiquiti UniFi UAP-AC-PRO no PoE injector", 0.9, quantity=5, category="Networking"),
        Row("Ubiquiti UAP-AC-PRO-US UniFi AC Pro", 1.0, category="Networking"),
        Row("Lot of 6 Ubiquiti UAP-AC-PRO-US UniFi AC Pro with mounts", 1.0, quantity=6, category="Networking"),
        Row("Lot of 20 Ubiquiti UAP-AC-PRO access points", 0.85, quantity=20, category="Networking"),
        Row("Ubiquiti UniFi UAP-AC-LR long range access point", 0.9, "family", category="Networking"),
        Row("Ubiquiti UniFi U6-Pro WiFi 6 access point", 2.8, "family", category="Networking"),
        Row("Ubiquiti POE-48-24W PoE injector for UAP-AC-PRO", 0.3, "accessory", category="Networking"),
        Row("Ubiquiti UAP-AC-PRO ceiling mount bracket", 0.2, "accessory", category="Networking"),
    ],
    "L024": [
        Row("Lot of 3 Bio-Rad T100 thermal cyclers", 0.9, quantity=3, category="Lab Equipment"),
        Row("Triumph Bonneville T100 motorcycle 2016, 9k miles", 6.5, "other", category="Motorcycles"),
        Row("Lot of 2 Bio-Rad T100 thermal cyclers", 0.9, quantity=2, category="Lab Equipment"),
        Row("Lot of 4 Bio-Rad T100 PCR thermal cyclers core facility surplus", 0.8, quantity=4, category="Lab Equipment"),
        Row("Bio-Rad T100 Thermal Cycler 96-well PCR", 1.0, category="Lab Equipment"),
        Row("BioRad T100 thermal cycler tested working", 0.9, category="Lab Equipment"),
        Row("Bio-Rad T100 PCR thermal cycler 1861096", 1.1, category="Lab Equipment"),
        Row("Bio-Rad T100 thermocycler with power cord", 0.95, category="Lab Equipment"),
        Row("Bio-Rad C1000 Touch thermal cycler 96-well", 2.1, "family", category="Lab Equipment"),
        Row("Bio-Rad T100 thermal cycler for parts not heating", 0.2, "parts", category="Lab Equipment"),
        Row("Hot Wheels T100 Treasure Hunt die-cast card", 0.01, "card", category="Toys"),
        Row("Yu-Gi-Oh T100 1st edition promo trading card PSA 10", 0.6, "card", category="Trading Cards"),
    ],
}

# Listings that match no lot on purpose: spec words and numbers a loose matcher grabs.
NOISE: list[tuple[str, str, int, str]] = [
    ("Kingston 16GB DDR4 2666 SODIMM laptop memory", "28.00", 1, "Computer Memory"),
    ("Lot of 50 8GB DDR4 desktop RAM sticks", "400.00", 50, "Computer Memory"),
    ("Generic 24 inch LED monitor HDMI", "70.00", 1, "Monitors"),
    ("16-Channel 4K NVR PoE security system", "210.00", 1, "Security Cameras"),
    ("48-port Cat6 patch panel 1U", "35.00", 1, "Networking"),
    ("Tiny house plans 200 sq ft", "15.00", 1, "Books"),
    ("SFF desktop case black mini-ITX", "45.00", 1, "Computer Cases"),
    ("Pro 24 inch ring light kit with stand", "60.00", 1, "Photography"),
]

CONDITION_TAILS = ("", "", "", " - fast shipping", " (used)", " - tested", " #A")
START = date(2025, 6, 1)


def money(x: float) -> Decimal:
    return Decimal(repr(x)).quantize(CENT, rounding=ROUND_HALF_UP)


def read_valuation_lots(path: Path) -> dict[str, tuple[Decimal, int]]:
    """lot id -> (verified lot value, count) for the valuation lots of a validated ``lots.csv``."""
    lots = [lot for lot in read_lots(path) if lot.valuation]
    unlabelled = [lot.id for lot in lots if lot.count is None]
    if unlabelled:
        raise SystemExit(f"valuation lot(s) without a count in {path}: {', '.join(unlabelled)}")
    return {lot.id: (lot.verified_value, lot.count) for lot in lots}


def build(lots: dict[str, tuple[Decimal, int]], *, seed: int) -> tuple[list[dict[str, str]], list[tuple[str, str]]]:
    """Listing rows (sorted by id) and (lot, listing id) relevance pairs."""
    rng = random.Random(seed)
    missing = sorted(set(lots) - set(SPECS))
    if missing:
        raise SystemExit(f"no comps spec for valuation lot(s) {', '.join(missing)}: add them to SPECS")
    rows: list[dict[str, str]] = []
    relevance: list[tuple[str, str]] = []
    n = 0
    for lot in sorted(lots):
        value, count = lots[lot]
        unit = float(value) / count
        for spec in SPECS[lot]:
            n += 1
            lid = f"C{n:04d}"
            jitter = rng.lognormvariate(0.0, 0.08)
            price = money(unit * spec.factor * spec.quantity * jitter)
            tail = rng.choice(CONDITION_TAILS)
            sold = START + timedelta(days=rng.randrange(0, 180))
            rows.append({"id": lid, "title": spec.title + tail, "price": str(price), "sold_date": sold.isoformat(),
                         "quantity": str(spec.quantity), "category": spec.category or "Computers"})
            if spec.kind == "comp":
                relevance.append((lot, lid))
    for title, price, qty, category in NOISE:
        n += 1
        sold = START + timedelta(days=rng.randrange(0, 180))
        rows.append({"id": f"C{n:04d}", "title": title, "price": price, "sold_date": sold.isoformat(),
                     "quantity": str(qty), "category": category})
    return rows, relevance


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tools.comps.make_comps", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--lots", default="data/lots/lots.csv")
    ap.add_argument("--out", default="data/comps")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rows, relevance = build(read_valuation_lots(Path(args.lots)), seed=args.seed)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "listings.csv", LISTING_COLUMNS, [[r[c] for c in LISTING_COLUMNS] for r in rows])
    write_csv(out / "relevance.csv", RELEVANCE_COLUMNS, sorted(relevance))
    print(f"wrote {out}/listings.csv ({len(rows)} listings) and relevance.csv ({len(relevance)} pairs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
