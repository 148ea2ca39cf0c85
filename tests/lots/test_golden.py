"""Golden-set validation: lots.csv and cases, with errors naming file, row and field."""
from __future__ import annotations

import json
import re
import shlex
import shutil
from pathlib import Path

import pytest

from candor_eval.common.errors import InputError
from candor_eval.lots.golden import LOT_COLUMNS, CategoryLibrary, load_golden, parse_lots, render_library, render_prompt
from candor_eval.stages import fetch
from tests.conftest import ROOT, TESTS

FIXTURE = TESTS / "data" / "lots"
HEADER = ",".join(LOT_COLUMNS)
GOOD = "L1,Dell,OptiPlex 7090 SFF,,10,Desktop Computer,held,,1,1850.00,420.00"


@pytest.fixture
def golden_dir(tmp_path: Path) -> Path:
    dst = tmp_path / "lots"
    shutil.copytree(FIXTURE, dst)
    return dst


def test_fixture_loads_sorted():
    g = load_golden(FIXTURE)
    assert [lot.id for lot in g.lots] == ["T001", "T002"]
    assert g.lots[1].model_tokens == ("87V",) and g.lots[0].photos == ("photos/t1.png", "photos/t2.png")
    assert str(g.lots[0].verified_value) == "1850.00" and g.lots[1].verified_value is None
    assert [c.name for c in g.cases] == ["drill"] and g.ids() == ["T001", "T002", "drill"]


def test_real_golden_set_meets_the_brief():
    g = load_golden(ROOT / "data" / "lots")
    assert len(g.lots) >= 24 and sum(lot.valuation for lot in g.lots) >= 17
    assert {lot.tier for lot in g.lots} == {"held", "photo"}
    assert len(g.cases) >= 6
    assert any(not e.expected for c in g.cases for e in c.expectations)


@pytest.mark.parametrize("row, where, needle", [
    ("L1,Dell,OptiPlex,,10,Desktop,shelf,,0,,", "row 2.tier", "'held' or 'photo'"),
    ("L1,Dell,OptiPlex,,zero,Desktop,held,,0,,", "row 2.count", "integer"),
    ("L1,Dell,OptiPlex,,0,Desktop,held,,0,,", "row 2.count", "greater than or equal to 1"),
    ("L1,,OptiPlex,,1,Desktop,held,,0,,", "row 2.make", "at least 1"),
    ("L 1,Dell,OptiPlex,,1,Desktop,held,,0,,", "row 2.id", "pattern"),
    ("L1,Dell,OptiPlex,,1,Desktop,held,,yes,,", "row 2.valuation", "1 or 0"),
    ("L1,Dell,OptiPlex,,1,Desktop,held,,1,1850,420.00", "row 2.verified_value", "with cents"),
    ("L1,Dell,OptiPlex,,1,Desktop,held,,1,,420.00", "row 2.verified_value", "required for a valuation lot"),
    ("L1,Dell,OptiPlex,,1,Desktop,held,,0,10.00,", "row 2.verified_value", "only valuation lots"),
    ("L1,Dell,OptiPlex,,1,Desktop,held,../x.jpg,0,,", "row 2.photos", "'..'"),
    ("L1,Dell,OptiPlex,,1,Desktop,held,,0,,,extra", "row 2", "more fields"),
])
def test_lot_errors_name_file_row_and_field(row, where, needle):
    lots, problems = parse_lots(f"{HEADER}\n{row}\n", file="data/lots/lots.csv")
    assert problems, row
    text = "\n".join(str(p) for p in problems)
    assert f"data/lots/lots.csv:{where}" in text and needle in text


def test_duplicate_ids_and_bad_header():
    _, problems = parse_lots(f"{HEADER}\n{GOOD}\n{GOOD}\n", file="f.csv")
    assert [str(p) for p in problems] == ["f.csv:row 3.id: duplicate id (first on row 2) (got 'L1')"]
    _, problems = parse_lots("id,make\nL1,Dell\n", file="f.csv")
    assert "f.csv:row 1: wrong header" in str(problems[0])


def test_all_problems_reported_at_once_and_missing_photo(golden_dir: Path):
    (golden_dir / "photos" / "t1.png").unlink()
    text = (golden_dir / "lots.csv").read_text().replace(",held,", ",kept,")
    (golden_dir / "lots.csv").write_text(text)
    with pytest.raises(InputError) as err:
        load_golden(golden_dir)
    msg = err.value.message
    assert "row 2.tier" in msg and "hint: fix the golden set" in msg


def test_the_manifest_hint_names_the_golden_folder_quoted_and_parses(tmp_path: Path):
    """The hint's command runs as printed: the folder given, quoted for a POSIX shell."""
    root = tmp_path / "my bench's lots"
    shutil.copytree(FIXTURE, root)
    (root / "photos" / "t1.png").unlink()
    with pytest.raises(InputError) as err:
        load_golden(root)
    assert err.value.hint is not None
    [cmd] = re.findall(r"`([^`]+)`", err.value.hint)
    argv = shlex.split(cmd)
    assert argv[:3] == ["candor", "fetch", "manifest"]
    assert fetch.build_parser().parse_args(argv[2:]).dir == root.as_posix()


def test_missing_photo_named(golden_dir: Path):
    (golden_dir / "photos" / "t1.png").unlink()
    with pytest.raises(InputError, match=r"lots.csv:row 2.photos\[0\]: file not found"):
        load_golden(golden_dir)


@pytest.mark.parametrize("edit, needle", [
    (lambda c: c.pop("image"), "drill.json.image: Field required"),
    (lambda c: c.update(expectations=[]), "drill.json.expectations: Tuple should have at least 1 item"),
    (lambda c: c.update(extra=1), "drill.json.extra: Extra inputs are not permitted"),
    (lambda c: c["expectations"][0].update(field="item..x"), "drill.json.expectations.0.field"),
    (lambda c: c["categoryLibrary"].update(tiers=["x"]), "drill.json.categoryLibrary.tiers"),
    (lambda c: c.update(image="cases/images/none.png"), "drill.json.image: file not found"),
    (lambda c: c.update(name="T001"), "drill.json.name: duplicate id"),
    (lambda c: c["expectations"][1].update(expected=["Power Tools", " -- "]),
     "drill.json.expectations.1: field item.categorySpecific: expected value(s) [' -- '] normalise"),
])
def test_case_errors_name_file_and_key(golden_dir: Path, edit, needle):
    f = golden_dir / "cases" / "drill.json"
    case = json.loads(f.read_text())
    edit(case)
    f.write_text(json.dumps(case))
    with pytest.raises(InputError) as err:
        load_golden(golden_dir)
    assert needle in err.value.message


def test_case_not_json(golden_dir: Path):
    (golden_dir / "cases" / "bad.json").write_text("{nope")
    with pytest.raises(InputError, match="bad.json: not valid JSON"):
        load_golden(golden_dir)


def test_render_prompt_uses_the_library_or_the_defaults():
    lib = CategoryLibrary(functional=("Tools",), itemType=("Drill",))
    default = CategoryLibrary(functional=("Computers",), specific=("Laptops",))
    block = render_library(lib, default=default)
    assert "Reuse one of these" in block and "- categoryFunctional: Tools" in block and "- itemType: Drill" in block
    assert block.endswith("Not in this inventory yet. Suggested categories (reuse them when they fit):\n"
                          "- categorySpecific: Laptops")  # the omitted tier: what a fresh install sees
    assert render_library(None, default=default) == (
        "No inventory yet. Suggested categories (reuse them when they fit):\n"
        "- categoryFunctional: Computers\n- categorySpecific: Laptops")
    assert render_prompt("A\n{{category_library}}\nB", lib, default=default) == f"A\n{block}\nB"
    assert render_prompt("A", None, default=default).endswith(render_library(None, default=default) + "\n")


def test_a_folder_of_cases_alone_is_a_bench_without_lots(golden_dir: Path):
    (golden_dir / "lots.csv").unlink()
    shutil.rmtree(golden_dir / "photos")
    g = load_golden(golden_dir)
    assert g.lots == () and [c.name for c in g.cases] == ["drill"] and g.ids() == ["drill"]
    shutil.rmtree(golden_dir / "cases")
    with pytest.raises(InputError, match="holds neither lots.csv nor cases") as err:
        load_golden(golden_dir)
    assert "lots.csv, or case files" in err.value.message


def test_an_image_written_relative_to_the_case_file_is_named_with_the_path_to_write(golden_dir: Path):
    f = golden_dir / "cases" / "drill.json"
    case = json.loads(f.read_text())
    case["image"] = "images/drill.png"                 # beside the case file: cases/images/drill.png
    f.write_text(json.dumps(case))
    with pytest.raises(InputError) as err:
        load_golden(golden_dir)
    message = err.value.message
    assert "drill.json.image: file not found: a case's image is relative to the bench folder" in message
    assert f"{(golden_dir / 'cases/images/drill.png').as_posix()} exists" in message
    assert 'exists: write "image": "cases/images/drill.png" to name it' in message
    assert f"an image at {(golden_dir / 'images/drill.png').as_posix()}" in message


def test_an_omitted_tier_renders_its_defaults_and_an_empty_one_stays_empty():
    """functional given, specific omitted (default Laptops), itemType given empty ([]: the inventory has none)."""
    default = CategoryLibrary(functional=("Computers",), specific=("Laptops",), itemType=("Laptop",))
    assert render_library(CategoryLibrary(functional=("Tools",), itemType=()), default=default) == (
        "Categories already in this inventory. Reuse one of these, in this order of preference, before inventing "
        "a new one (power-tools, Power tools and Power Tools are the same value):\n"
        "- categoryFunctional: Tools\n"
        "Not in this inventory yet. Suggested categories (reuse them when they fit):\n"
        "- categorySpecific: Laptops")
    full = CategoryLibrary(functional=("Tools",), specific=("Power Tools",), itemType=("Drill",))
    assert "Suggested" not in render_library(full, default=default)
    assert "Suggested" not in render_library(CategoryLibrary(functional=("Tools",)),
                                             default=CategoryLibrary(functional=("Computers",)))
