"""Write the demo detector's evaluation set (held-out sessions) as YOLO + COCO + manifest.

    python -m tools.demo.dataset --out data/detector

Layout written under ``--out`` (everything derived from the same rendered boxes):

- ``images/<frame>.jpg``: JPEG quality 85, 640 x 416 RGB;
- ``labels/<frame>.txt``: YOLO rows ``class cx cy w h`` normalised, 6 decimals (empty file
  when a frame has no labelled object);
- ``classes.txt``: one class name per line, line k is class id k;
- ``coco.json``: COCO detection ground truth (image ids 1.., annotation ids 1..,
  ``category_id`` = class index, ``bbox`` = [x, y, w, h] in pixels, 2 decimals);
- ``frames.csv``: ``frame,session,zoom,split`` (split ``dev`` for the first half of
  the sessions, ``test`` for the second half);
- ``manifest.csv``: written by ``candor fetch manifest`` with the
  ``session,zoom,split`` columns (images and labels carry their frame's values).

Frame names are ``s<session>-<index>`` (e.g. ``s100-007``). The output is
byte-identical for the same arguments (and the same Pillow/libjpeg build).
"""
from __future__ import annotations

import argparse
import io
import logging
import subprocess
import sys
from pathlib import Path

from PIL import Image

from candor_eval.common.atomic import write_json, write_text
from candor_eval.common.tables import write_csv
from tools.demo.scenes import CLASSES, FRAME_H, FRAME_W, Frame, make_session, render, yolo_lines

log = logging.getLogger("demo.dataset")

SEED = 2
EVAL_SESSIONS = (100, 101, 102, 103)
FRAMES_PER_SESSION = 16
JPEG_QUALITY = 85


def split_of(session_id: int, sessions: tuple[int, ...]) -> str:
    """``dev`` for the first half of ``sessions`` (threshold tuning), ``test`` for the rest."""
    return "dev" if sessions.index(session_id) < len(sessions) // 2 else "test"


def jpeg_bytes(frame: Frame) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(frame.image).save(buf, "JPEG", quality=JPEG_QUALITY)
    return buf.getvalue()


def coco_dict(frames: list[Frame]) -> dict:
    """COCO ground truth of ``frames`` (in the given order)."""
    images, anns = [], []
    for img_id, f in enumerate(frames, start=1):
        h, w = f.image.shape[:2]
        images.append({"id": img_id, "file_name": f"images/{f.name}.jpg", "width": w, "height": h})
        for b in f.boxes:
            bw, bh = round(b.x1 - b.x0, 2), round(b.y1 - b.y0, 2)
            anns.append({"id": len(anns) + 1, "image_id": img_id, "category_id": b.cls,
                         "bbox": [round(b.x0, 2), round(b.y0, 2), bw, bh], "area": round(bw * bh, 2),
                         "iscrowd": 0})
    cats = [{"id": k, "name": n} for k, n in enumerate(CLASSES)]
    return {"images": images, "annotations": anns, "categories": cats}


def write_set(out: Path, *, seed: int = SEED, sessions: tuple[int, ...] = EVAL_SESSIONS,
              frames_per_session: int = FRAMES_PER_SESSION, size: tuple[int, int] = (FRAME_W, FRAME_H),
              columns_csv: Path) -> list[Frame]:
    """Render and write the set; return the frames (manifest is written by :func:`main`)."""
    for sub in ("images", "labels"):
        (out / sub).mkdir(parents=True, exist_ok=True)
        for stale in (out / sub).glob("*"):
            if stale.suffix in (".jpg", ".txt"):
                stale.unlink()
    frames: list[Frame] = []
    rows = []
    col_rows = []
    for sid in sessions:
        session = make_session(sid, seed=seed)
        for i in range(frames_per_session):
            f = render(session, i, seed=seed, size=size)
            frames.append(f)
            (out / "images" / f"{f.name}.jpg").write_bytes(jpeg_bytes(f))
            h, w = f.image.shape[:2]
            lines = yolo_lines(f.boxes, width=w, height=h)
            write_text(out / "labels" / f"{f.name}.txt", "".join(r + "\n" for r in lines))
            split = split_of(sid, sessions)
            zoom = f"{f.zoom:g}"
            rows.append([f.name, session.name, zoom, split])
            col_rows += [[f"images/{f.name}.jpg", session.name, zoom, split],
                         [f"labels/{f.name}.txt", session.name, zoom, split]]
    write_text(out / "classes.txt", "".join(c + "\n" for c in CLASSES))
    write_json(out / "coco.json", coco_dict(frames))
    write_csv(out / "frames.csv", ["frame", "session", "zoom", "split"], sorted(rows))
    write_csv(columns_csv, ["path", "session", "zoom", "split"],
              sorted(col_rows) + [["classes.txt", "", "", ""], ["coco.json", "", "", ""], ["frames.csv", "", "", ""]])
    return frames


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    ap = argparse.ArgumentParser(prog="python -m tools.demo.dataset", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="data/detector", help="data set folder (default: data/detector)")
    ap.add_argument("--columns", default="build/demo/detector-columns.csv",
                    help="where to write the per-file session/zoom/split CSV for the manifest")
    args = ap.parse_args(argv)
    out, cols = Path(args.out), Path(args.columns)
    frames = write_set(out, columns_csv=cols)
    # the manifest is the fetch stage's to write; run as a command (a tool never imports a stage)
    subprocess.run([sys.executable, "-m", "stages.fetch", "manifest", str(out), "--columns", str(cols)], check=True)
    log.info("wrote %d frames, %d boxes to %s", len(frames), sum(len(f.boxes) for f in frames), out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
