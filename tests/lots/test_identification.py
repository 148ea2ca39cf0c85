"""Hit / abstain / wrong (docs/lots.md) and the exact-count check, on real-world model names."""
from __future__ import annotations

import pytest

from candor_eval.lots.identification import count_exact, identification_outcome
from tests.conftest import committed_token_rules

R = committed_token_rules()

# Real product naming across equipment kinds: label model, pinned model_tokens, then answers
# that must hit, must be wrong and must abstain (hedged answers abstain too). Numbers shorter
# than min_number_digits are counts and sizes (``Micro 21``, ``TE 70``: abstain), and a suffix
# glued to the label's key makes another model (``G1260A`` for ``1260``, ``3080Ti``).
REAL_WORLD = [
    # computers
    ("OptiPlex 7090", (), ["Dell OptiPlex 7090 SFF", "OPTIPLEX-7090", "Optiplex 7090 16GB"],
     ["OptiPlex 7080", "OptiPlex 17090"], ["OptiPlex", "Desktop Computer", "e.g. OptiPlex 7090"]),
    ("ThinkPad X1 Carbon", (), ["ThinkPad X1 Carbon Gen 9", "X1 Carbon", "Thinkpad X1"],
     ["ThinkPad X13", "ThinkPad T14"], ["ThinkPad Carbon", "Laptop 14-inch"]),
    ("ThinkPad X280", (), ["ThinkPad X280", "X 280", "thinkpad x-280"], ["ThinkPad X270", "X2800"],
     ["ThinkPad", "ThinkPad X280 or X270"]),
    ("ThinkPad T14 Gen 2", (), ["T14 Gen 2", "ThinkPad T14"], ["ThinkPad T15", "T140"], ["ThinkPad Gen 2"]),
    ("EliteDesk 800 G6 SFF", ("800 G6",), ["EliteDesk 800 G6", "800G6 SFF"], ["EliteDesk 800 G5", "EliteDesk 600 G6"],
     ["EliteDesk", "SFF 16GB"]),
    ("ThinkCentre M720q Tiny", (), ["M720q", "ThinkCentre M720Q Tiny"], ["M920q", "M720s"], ["ThinkCentre Tiny"]),
    ("Latitude 5420", (), ["Latitude 5420", "Dell 5420 i5-1145G7"], ["Latitude 5410", "Latitude 54200"],
     ["Latitude", "i5-1145G7 16GB"]),
    ("MacBook Pro A2338", (), ["A2338", "MacBook Pro 13 A2338"], ["A2251", "A23380"], ["MacBook Pro 13-inch"]),
    # CPUs and GPUs
    ("Ryzen 9 5950X", (), ["AMD Ryzen 9 5950X", "5950x", "Ryzen 5950X"], ["Ryzen 9 5900X", "5950X3D"],
     ["Ryzen 9", "16-core CPU", "Ryzen 9 5950X or 5900X"]),
    ("RTX 3080", (), ["GeForce RTX 3080", "RTX3080", "RTX-3080 10GB", "RTX 3080 Ti"],
     ["RTX 13080", "RTX 3070", "3080Ti"],
     ["GeForce RTX", "graphics card 10GB", "possibly RTX 3080"]),
    ("RTX3080", (), ["RTX 3080", "rtx-3080"], ["RTX 3090"], ["GeForce"]),
    # a CPU name is a spec token: a different CPU names no model (abstain), the pinned one hits
    ("Core i7-10700", ("i7-10700",), ["Intel Core i7-10700", "i7 10700"], [], ["Core i7", "i7-10700K", "i7-9700"]),
    # network gear
    ("EX4300-48T", (), ["Juniper EX4300-48T", "EX430048T", "EX4300 48T", "EX4300"], ["EX2300-48T", "EX4300X"],
     ["48-port switch", "EX4300-48T or EX4300-48P"]),
    ("Catalyst 2960X-48TS-L", (), ["WS-C2960X-48TS-L", "Catalyst 2960-X", "2960X"], ["Catalyst 2960", "C9200-48T"],
     ["Catalyst", "48-port PoE"]),
    ("Catalyst 9200L C9200L-24P-4G", ("9200L", "C9200L-24P-4G"), ["C9200L-24P-4G-E", "Catalyst 9200L"],
     ["C9300-24P", "9200"], ["Catalyst 24-port"]),
    ("UniFi Switch US-24-250W", ("US-24-250W",), ["US-24-250W", "UniFi US 24 250W"], ["US-48-500W", "USW-24"],
     ["24-port 250W PoE", "e.g. UniFi Switch US-24-250W"]),
    ("UniFi AP AC Pro UAP-AC-PRO", ("UAP-AC-PRO",), ["UAP-AC-PRO", "UAP AC PRO"], ["U6-Pro"],
     ["Access point", "UAP-AC-PRO or similar"]),
    ("Nexus 93180YC-EX", (), ["N9K-C93180YC-EX", "Nexus 93180YC-EX"], ["Nexus 93108TC-EX", "Nexus 9000"],
     ["Nexus switch"]),
    ("SRX300", (), ["Juniper SRX300", "SRX-300"], ["SRX320", "SRX3000"], ["SRX firewall"]),
    ("FortiGate 60F", (), ["FortiGate-60F", "FG-60F"], ["FortiGate 61F", "FortiGate 600F"], ["FortiGate"]),
    # test instruments
    ("87-V", ("87V",), ["Fluke 87V", "87-V", "87 V True RMS"], ["Fluke 179", "Fluke 287"],
     ["Fluke multimeter", "e.g. 87V"]),
    ("34461A", (), ["Keysight 34461A", "34461 A", "Agilent 34461A"], ["34465A", "34401A"],
     ["Truevolt DMM", "e.g. 34461A"]),
    ("TDS2024C", (), ["Tektronix TDS2024C", "TDS 2024C", "TDS-2024C"], ["TDS2024B", "TDS2014C"],
     ["4-channel oscilloscope", "TDS2024C or TDS2024B"]),
    ("DSOX1204G", (), ["Keysight DSOX1204G", "DSO-X 1204G"], ["DSOX1202G"], ["InfiniiVision"]),
    ("MSO44", (), ["Tektronix MSO44", "MSO 44"], ["MSO46", "MSO 44B"], ["4 Series MSO", "MSO 4"]),
    ("E4980A", (), ["Keysight E4980A LCR meter", "E4980 A"], ["E4990A"], ["LCR meter 20Hz-2MHz"]),
    ("DP832", (), ["Rigol DP832", "DP-832"], ["DP821", "DP8320"], ["Rigol 3-channel power supply"]),
    ("Model 2450", (), ["Keithley 2450 SourceMeter", "2450"], ["Keithley 2460", "24500"], ["SourceMeter", "SMU"]),
    # tools
    ("DCD771C2", (), ["DeWalt DCD771C2", "DCD771 C2", "DCD-771C2"], ["DCD771B", "DCD791D2"], ["20V drill driver kit"]),
    ("2804-20", (), ["Milwaukee 2804-20", "2804-22", "M18 2804"], ["2704-20", "2904-20", "M18 hammer drill"],
     ["hammer drill 18V"]),
    ("XPH12Z", (), ["Makita XPH12Z", "XPH-12Z"], ["XPH14Z", "XPH12"], ["18V LXT hammer drill"]),
    ("DHP486Z", (), ["Makita DHP486Z", "DHP 486Z", "DHP-486Z"], ["DHP484Z", "DHP486"], ["18V LXT combi drill"]),
    ("TE 7-C", ("TE 7-C",), ["Hilti TE 7-C", "TE7-C"], ["TE 6-A22", "TE 60-A36"], ["Hilti rotary hammer", "TE 70"]),
    # lab equipment
    ("5424 R", ("5424 R",), ["Eppendorf 5424 R", "5424R", "Centrifuge 5424R"], ["5424", "5430 R"], ["Microcentrifuge"]),
    ("Heratherm IGS60", (), ["Thermo Heratherm IGS60", "IGS-60", "IGS 60"], ["Heratherm IGS100", "IMC18"],
     ["Heratherm incubator", "60 L incubator"]),
    ("1260 Infinity II", ("1260",), ["Agilent 1260 Infinity II", "1260 HPLC", "1260-Infinity"],
     ["1290 Infinity II", "11260", "G1260A"],
     ["Infinity II", "HPLC system"]),
    ("Sorvall Legend Micro 21R", ("21R",), ["Legend Micro 21R", "Micro 21 R"], ["Legend Micro 17R", "Micro 210R"],
     ["Sorvall Legend", "Micro 21"]),
    ("XS205 DualRange", (), ["Mettler Toledo XS205", "XS 205"], ["XS204", "XS2050"],
     ["Analytical Balance", "DualRange"]),
    ("T100 Thermal Cycler", ("T100",), ["Bio-Rad T100", "T-100 Thermal Cycler"], ["C1000", "T1000"],
     ["Thermal Cycler 96-well"]),
    ("CX41", (), ["Olympus CX41", "CX-41"], ["CX43", "CX31"], ["Olympus microscope"]),
    ("Research plus", ("Research plus",), ["Eppendorf Research plus 8-channel", "Research Plus"], ["Rainin E4 XLS"],
     ["8-channel pipette", "Research 8-channel plus", "Xplorer 8"]),
    # printers, monitors, power
    ("LaserJet M404n", (), ["HP LaserJet Pro M404n", "M404N"], ["LaserJet M402n", "M404dn"], ["LaserJet Pro"]),
    ("P2419H", (), ['Dell P2419H 24"', "P 2419 H"], ["P2419HC", "P2422H"], ['24" monitor 1920x1080']),
    ("Smart-UPS SMT1500", (), ["APC Smart-UPS SMT1500", "SMT 1500"], ["SMT1500RM2U", "SMT750"], ["Smart-UPS 1500VA"]),
]


@pytest.mark.parametrize("label, pinned, hits, wrongs, abstains", REAL_WORLD, ids=[r[0] for r in REAL_WORLD])
def test_real_world_model_names(label, pinned, hits, wrongs, abstains):
    got = {(a, identification_outcome(label, a, pinned=pinned, rules=R)) for a in [*hits, *wrongs, *abstains]}
    want = {*((a, "hit") for a in hits), *((a, "wrong") for a in wrongs), *((a, "abstain") for a in abstains)}
    assert got == want


def test_the_table_is_wide():
    assert len(REAL_WORLD) >= 40


@pytest.mark.parametrize("label, pinned, predicted, expected", [
    ("OptiPlex 7090", (), "Dell OptiPlex 7090 SFF", "hit"),       # the docs/lots.md example
    ("OptiPlex 7090 SFF", (), "e.g. OptiPlex 7090", "abstain"),   # hedged: abstain, counted as hedged
    ("OptiPlex 7090 SFF", (), "OptiPlex 7090 or 7080", "abstain"),  # two models named
    ("OptiPlex 7090 SFF", (), "OptiPlex 3080", "wrong"),
    ("OptiPlex 7090 SFF", (), "SFF i5 16GB", "abstain"),          # spec words only
    ("OptiPlex 7090 SFF", (), None, "abstain"),
    ("OptiPlex 7090 SFF", (), "   ", "abstain"),
    ("EliteDesk 800 G6 SFF", ("800 G6",), "EliteDesk 800 G5", "wrong"),
    ("Catalyst 2960-X WS-C2960X-48FPD-L", ("2960-X", "WS-C2960X-48FPD-L"), "Catalyst 2960-X 48-port", "hit"),
])
def test_outcome(label, pinned, predicted, expected):
    assert identification_outcome(label, predicted, pinned=pinned, rules=R) == expected


@pytest.mark.parametrize("label, predicted, expected", [(10, 10, True), (8, 24, False), (2, None, False),
                                                        (None, 3, None), (None, None, None)])
def test_count_exact(label, predicted, expected):
    assert count_exact(label, predicted) is expected
