"""Train a demo detector on generated training sessions and export it to ONNX (needs torch).

    python -m tools.demo.train --pool-only       # render the training frames once
    python -m tools.demo.train --recipe v1 --onnx models/demo-v1.onnx
    python -m tools.demo.train --recipe v2 --onnx models/demo-v2.onnx

Training frames come from sessions :data:`TRAIN_SESSIONS` (never the evaluation
sessions), rendered by :mod:`tools.demo.scenes`, letterboxed to the model input and
round-tripped through JPEG (quality 85) like the evaluation images. They are cached
in ``build/demo/pool-*.npz`` (not committed) so both recipes share them.

Assignment (anchor-free, centre sampling): a box is positive at the stride-8 cell
holding its centre and at the neighbouring cells (3x3) whose centres fall inside
the box; a cell claimed by two boxes goes to the smaller one. Loss: sigmoid focal
loss (alpha 0.25, gamma 2) over all cells and classes / positives + 2 x GIoU loss
over positives. Everything is seeded; training is deterministic on one machine and
thread count, not across machines (so the ONNX files are committed, by hash).
"""
from __future__ import annotations

import argparse
import io
import json
import logging
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from tools.demo.model import STRIDE, TinyDet, fuse_for_export
from tools.demo.scenes import CLASSES, letterbox, letterbox_geometry, make_session, render

log = logging.getLogger("demo.train")

SEED = 2
INPUT = 320
TRAIN_SESSIONS = tuple(range(0, 60))
FRAMES_PER_SESSION = 20
OPSET = 17
WIDTH = 24

RECIPES = {
    # the reference: plain training, horizontal flips only
    "v1": {"steps": 500, "batch": 16, "lr": 3e-3, "aug": "flip", "torch_seed": 1},
    # the candidate: longer, with colour/lighting jitter and vertical flips
    "v2": {"steps": 600, "batch": 16, "lr": 3e-3, "aug": "flip+colour", "torch_seed": 2},
}


# ---------------------------------------------------------------------------- data pool


def _pool_item(args: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
    seed, sid, idx = args
    frame = render(make_session(sid, seed=seed), idx, seed=seed)
    buf = io.BytesIO()
    Image.fromarray(frame.image).save(buf, "JPEG", quality=85)
    img = np.asarray(Image.open(io.BytesIO(buf.getvalue())).convert("RGB"))
    h, w = img.shape[:2]
    scale, _, _, left, top = letterbox_geometry(w, h, INPUT)
    boxes = np.array([[b.cls, b.x0 * scale + left, b.y0 * scale + top, b.x1 * scale + left, b.y1 * scale + top]
                      for b in frame.boxes], np.float32).reshape(-1, 5)
    return letterbox(img, INPUT), boxes


def build_pool(*, seed: int, sessions: tuple[int, ...], frames: int, cache: Path, workers: int = 2):
    """(images (N, S, S, 3) uint8, boxes (M, 6) [image, cls, x0, y0, x1, y1] in input px)."""
    if cache.is_file():
        z = np.load(cache, allow_pickle=False)
        return z["images"], z["boxes"]
    jobs = [(seed, sid, i) for sid in sessions for i in range(frames)]
    t0 = time.time()
    with ProcessPoolExecutor(workers) as ex:
        items = list(ex.map(_pool_item, jobs, chunksize=8))
    images = np.stack([im for im, _ in items])
    boxes = np.concatenate([np.concatenate([np.full((len(b), 1), k, np.float32), b], 1)
                            for k, (_, b) in enumerate(items)])
    cache.parent.mkdir(parents=True, exist_ok=True)
    np.savez(cache, images=images, boxes=boxes)
    log.info("pool: %d frames, %d boxes in %.0f s", len(images), len(boxes), time.time() - t0)
    return images, boxes


# ---------------------------------------------------------------------------- targets


def assign(boxes: np.ndarray, *, grid: int, num_classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Targets for one image from ``boxes`` (K, 5) [cls, x0, y0, x1, y1] in input pixels.

    Returns cls (C, G, G) float32 in {0, 1}, box (4, G, G) xyxy, pos (G, G) bool.
    """
    cls_t = np.zeros((num_classes, grid, grid), np.float32)
    box_t = np.zeros((4, grid, grid), np.float32)
    owner = np.full((grid, grid), -1, np.int64)
    area = np.full((grid, grid), np.inf, np.float32)
    for k, (_c, x0, y0, x1, y1) in enumerate(boxes):
        a = (x1 - x0) * (y1 - y0)
        ci, cj = int((y0 + y1) / 2 // STRIDE), int((x0 + x1) / 2 // STRIDE)
        for di in (-1, 0, 1):
            for dj in (-1, 0, 1):
                i, j = ci + di, cj + dj
                if not (0 <= i < grid and 0 <= j < grid):
                    continue
                px, py = (j + 0.5) * STRIDE, (i + 0.5) * STRIDE
                centre = di == 0 and dj == 0
                if not centre and not (x0 < px < x1 and y0 < py < y1):
                    continue
                if a < area[i, j]:
                    area[i, j], owner[i, j] = a, k
    pos = owner >= 0
    for i, j in zip(*np.nonzero(pos)):
        c, x0, y0, x1, y1 = boxes[owner[i, j]]
        cls_t[int(c), i, j] = 1.0
        box_t[:, i, j] = (x0, y0, x1, y1)
    return cls_t, box_t, pos


def augment(img: np.ndarray, boxes: np.ndarray, rng: np.random.Generator, aug: str) -> tuple[np.ndarray, np.ndarray]:
    """Flip (and for ``flip+colour``: vertical flips, brightness/tint/haze jitter)."""
    b = boxes.copy()
    s = img.shape[1]
    if rng.random() < 0.5:
        img = img[:, ::-1]
        b[:, [1, 3]] = s - b[:, [3, 1]]
    if "colour" in aug:
        if rng.random() < 0.5:
            img = img[::-1]
            b[:, [2, 4]] = s - b[:, [4, 2]]
        f = img.astype(np.float32) * rng.uniform(0.7, 1.3) * rng.uniform(0.9, 1.1, 3)
        if rng.random() < 0.3:
            hz = rng.uniform(0.05, 0.25)
            f = f * (1 - hz) + 200 * hz
        img = np.clip(f, 0, 255).astype(np.uint8)
    return np.ascontiguousarray(img), b


# ---------------------------------------------------------------------------- loss


def giou(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Generalised IoU of paired xyxy boxes (N, 4)."""
    ix0, iy0 = torch.max(a[:, 0], b[:, 0]), torch.max(a[:, 1], b[:, 1])
    ix1, iy1 = torch.min(a[:, 2], b[:, 2]), torch.min(a[:, 3], b[:, 3])
    inter = (ix1 - ix0).clamp(min=0) * (iy1 - iy0).clamp(min=0)
    aa = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1])
    ab = (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1])
    union = aa + ab - inter + 1e-6
    ex_w = torch.max(a[:, 2], b[:, 2]) - torch.min(a[:, 0], b[:, 0])
    ex = ex_w * (torch.max(a[:, 3], b[:, 3]) - torch.min(a[:, 1], b[:, 1])) + 1e-6
    iou = inter / union
    return iou - (ex - union) / ex


def loss_fn(model: TinyDet, x: torch.Tensor, cls_t: torch.Tensor, box_t: torch.Tensor, pos: torch.Tensor):
    box_raw, logits = model.raw(x)
    npos = pos.sum().clamp(min=1).float()
    p = torch.sigmoid(logits)
    ce = torch.nn.functional.binary_cross_entropy_with_logits(logits, cls_t, reduction="none")
    pt = p * cls_t + (1 - p) * (1 - cls_t)
    alpha = 0.25 * cls_t + 0.75 * (1 - cls_t)
    l_cls = (alpha * (1 - pt) ** 2 * ce).sum() / npos
    dec = TinyDet.decode(box_raw, model.grid)  # (B, 4, G, G) cxcywh
    xyxy = torch.cat([dec[:, :2] - dec[:, 2:] / 2, dec[:, :2] + dec[:, 2:] / 2], 1)
    pred = xyxy.permute(0, 2, 3, 1)[pos]
    tgt = box_t.permute(0, 2, 3, 1)[pos]
    l_box = (1 - giou(pred, tgt)).mean() if pred.numel() else xyxy.sum() * 0
    return l_cls + 2.0 * l_box, l_cls.item(), l_box.item()


# ---------------------------------------------------------------------------- train / export


def train(recipe: str, *, images: np.ndarray, boxes: np.ndarray, threads: int) -> tuple[TinyDet, dict]:
    cfg = RECIPES[recipe]
    torch.manual_seed(cfg["torch_seed"])
    torch.set_num_threads(threads)
    rng = np.random.default_rng([SEED, cfg["torch_seed"]])
    model = TinyDet(len(CLASSES), size=INPUT, width=WIDTH)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg["lr"], weight_decay=5e-4)
    steps, bs = cfg["steps"], cfg["batch"]
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=cfg["lr"], total_steps=steps, pct_start=0.1)
    by_image = np.split(boxes[:, 1:], np.searchsorted(boxes[:, 0], np.arange(1, len(images))))
    g = INPUT // STRIDE
    order = np.concatenate([rng.permutation(len(images)) for _ in range(steps * bs // len(images) + 1)])
    t0 = time.time()
    model.train()
    for step in range(steps):
        idx = order[step * bs:(step + 1) * bs]
        xs, cs, bx, ps = [], [], [], []
        for i in idx:
            img, b = augment(images[i], by_image[i], rng, cfg["aug"])
            c, t, p = assign(b, grid=g, num_classes=len(CLASSES))
            xs.append(img), cs.append(c), bx.append(t), ps.append(p)
        x = torch.from_numpy(np.stack(xs)).permute(0, 3, 1, 2).float().div_(255)
        loss, lc, lb = loss_fn(model, x, torch.from_numpy(np.stack(cs)), torch.from_numpy(np.stack(bx)),
                               torch.from_numpy(np.stack(ps)))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        opt.step()
        sched.step()
        if step % 100 == 0 or step == steps - 1:
            log.info("%s step %d/%d loss %.3f (cls %.3f box %.3f) %.0f s", recipe, step, steps, float(loss), lc, lb,
                     time.time() - t0)
    seconds = time.time() - t0
    record = {
        "recipe": recipe, "sessions": f"s{TRAIN_SESSIONS[0]:03d}-s{TRAIN_SESSIONS[-1]:03d}",
        "frames": int(len(images)), "boxes": int(len(boxes)), "seed": SEED, "torch_seed": cfg["torch_seed"],
        "steps": steps, "batch": bs, "epochs": round(steps * bs / len(images), 2), "lr": cfg["lr"],
        "augmentation": cfg["aug"], "optimizer": "AdamW one-cycle", "threads": threads,
        "train_seconds": round(seconds), "params": int(sum(p.numel() for p in model.parameters())),
        "width": WIDTH, "torch": torch.__version__,
    }
    return model, record


def export(model: TinyDet, path: Path) -> None:
    """ONNX (opset 17, static input (1, 3, S, S) named ``images``, output ``output0``)."""
    model = fuse_for_export(model)
    x = torch.zeros(1, 3, INPUT, INPUT)
    path.parent.mkdir(parents=True, exist_ok=True)
    with torch.no_grad():
        torch.onnx.export(model, (x,), str(path), input_names=["images"], output_names=["output0"],
                          opset_version=OPSET, do_constant_folding=True, dynamo=False)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    ap = argparse.ArgumentParser(prog="python -m tools.demo.train", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--recipe", choices=sorted(RECIPES))
    ap.add_argument("--onnx", help="where to write the ONNX model")
    ap.add_argument("--pool-only", action="store_true", help="only render the training-frame cache and exit")
    ap.add_argument("--record", help="training record JSON (default: tools/demo/records/<onnx stem>.train.json)")
    ap.add_argument("--pool", default="build/demo/pool.npz", help="cache of letterboxed training frames")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, help="override the recipe's steps (for a quick trial)")
    args = ap.parse_args(argv)
    if not args.pool_only and not (args.recipe and args.onnx):
        ap.error("--recipe and --onnx are required (unless --pool-only)")
    if args.steps:
        RECIPES[args.recipe] = {**RECIPES[args.recipe], "steps": args.steps}
    t0 = time.time()
    images, boxes = build_pool(seed=SEED, sessions=TRAIN_SESSIONS, frames=FRAMES_PER_SESSION, cache=Path(args.pool))
    if args.pool_only:
        return 0
    model, record = train(args.recipe, images=images, boxes=boxes, threads=args.threads)
    onnx = Path(args.onnx)
    export(model, onnx)
    record["wall_seconds_incl_pool"] = round(time.time() - t0)
    rec = Path(args.record or f"tools/demo/records/{onnx.stem}.train.json")
    rec.parent.mkdir(parents=True, exist_ok=True)
    rec.write_text(json.dumps(record, indent=2) + "\n")
    log.info("wrote %s and %s: %s", onnx, rec, record)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
