"""Generate the synthetic lot photos listed in ``data/lots/lots.csv`` (seeded, tiny).

    python -m tools.lots.make_photos [--lots data/lots/lots.csv] [--seed 0]

They are flat illustrations, not photographs: enough for the harness to send
real image bytes in live mode and for the manifest to hash. Per lot, photo 1 is
an overview (a box and the lot count, no nameplate), photo 2 a nameplate
close-up (make and model as text), photo 3 the accessories or a label detail.
The field-expectation cases get one small PNG each (``cases/images/``).
So one photo carries less evidence than the full gallery (``identify.gallery``, docs/lots.md).
Each file is a small baseline JPEG (160x120, quality 60, a few KB). Reruns with
the same seed and Pillow version write the same bytes.
"""
from __future__ import annotations

import argparse
import random
from pathlib import Path

from PIL import Image, ImageDraw

from candor_eval.common.tables import read_rows

W, H = 160, 120


def draw_photo(*, lot: dict[str, str], index: int, rng: random.Random) -> Image.Image:
    """One synthetic photo of ``lot``; ``index`` 0 overview, 1 nameplate, 2 detail."""
    bg = tuple(rng.randint(150, 230) for _ in range(3))
    img = Image.new("RGB", (W, H), bg)
    d = ImageDraw.Draw(img)
    body = tuple(rng.randint(20, 110) for _ in range(3))
    if index == 0:
        n = min(int(lot["count"]), 6)
        for i in range(n):
            x = 8 + i * 24
            d.rectangle([x, 40, x + 20, 100], fill=body, outline=(0, 0, 0))
        d.text((6, 6), f"lot {lot['id']}  x{lot['count']}", fill=(0, 0, 0))
    elif index == 1:
        d.rectangle([10, 30, 150, 90], fill=(235, 235, 235), outline=(0, 0, 0))
        d.text((16, 38), lot["make"][:22], fill=(0, 0, 0))
        d.text((16, 56), lot["model"][:22], fill=(0, 0, 0))
        d.text((16, 74), f"S/N {rng.randint(10**7, 10**8 - 1)}", fill=(60, 60, 60))
    else:
        d.rectangle([20, 50, 70, 100], fill=body, outline=(0, 0, 0))
        d.ellipse([90, 50, 140, 100], fill=body, outline=(0, 0, 0))
        d.text((6, 6), lot["category"][:24], fill=(0, 0, 0))
    return img


CASE_IMAGES = {
    "drill.png": ("Cordless drill on a bench", "DEWALT 20V MAX"),
    "pipette.png": ("Multichannel pipette", "Eppendorf 8-ch"),
    "pc-pallet.png": ("Pallet of desktops", "Dell x12"),
    "oscilloscope.png": ("Bench oscilloscope", "TEKTRONIX TDS2024C"),
    "switch.png": ("Switch in a rack", "CISCO 48-port"),
    "monitors.png": ("Stack of monitors", "24in"),
}


def draw_case_image(*, title: str, plate: str, rng: random.Random) -> Image.Image:
    """A tiny flat illustration for a field-expectation case (palette PNG)."""
    img = Image.new("RGB", (W, H), tuple(rng.randint(170, 235) for _ in range(3)))
    d = ImageDraw.Draw(img)
    d.rectangle([20, 40, 140, 100], fill=tuple(rng.randint(20, 110) for _ in range(3)), outline=(0, 0, 0))
    d.text((6, 6), title, fill=(0, 0, 0))
    d.text((26, 64), plate, fill=(250, 250, 250))
    return img.convert("P", palette=Image.Palette.ADAPTIVE, colours=16)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lots", default="data/lots/lots.csv")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    lots_file = Path(args.lots)
    root = lots_file.parent
    lots = [row for _, row in read_rows(lots_file).rows]
    for lot in lots:
        rng = random.Random(f"{args.seed}:{lot['id']}")
        for i, rel in enumerate(p for p in (lot["photos"] or "").split(";") if p):
            out = root / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            draw_photo(lot=lot, index=i, rng=rng).save(out, format="JPEG", quality=60, optimize=False)
    for name, (title, plate) in CASE_IMAGES.items():
        out = root / "cases" / "images" / name
        out.parent.mkdir(parents=True, exist_ok=True)
        draw_case_image(title=title, plate=plate, rng=random.Random(f"{args.seed}:{name}")).save(out, format="PNG")
    print(f"wrote photos for {len(lots)} lots and {len(CASE_IMAGES)} case images under {root}")


if __name__ == "__main__":
    main()
