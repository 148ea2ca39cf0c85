"""Procedural top-down strategy-game scenes with exact box labels (the demo detector's data).

Pure numpy + Pillow, no torch. Everything is derived from integers, so the same
``(seed, session, frame)`` gives byte-identical pixels and labels on any machine
with the same Pillow/numpy versions.

Definitions
-----------
- A *session* (an int id, named ``s<id:03d>``) fixes the terrain palette, the
  lighting (brightness, colour tint, haze) and whether the bottom UI panel is shown,
  as one capture session of a real game would.
- A *frame* of a session has a *zoom* from :data:`ZOOMS`; object sizes in pixels
  scale with it (zoom 2.0 draws everything twice as large as zoom 1.0).
- Frames are :data:`FRAME_W` x :data:`FRAME_H` = 640 x 416 RGB (a game
  screen of 1280 x 831 halved, aspect 1.538 vs 1.540).
- A *box* is ``(class_id, x0, y0, x1, y1)`` in frame pixels (floats, x1/y1
  exclusive edges): the full drawn extent of one labelled object, clipped to the
  visible game view (inside the frame and outside the UI bars). An object is
  labelled only when at least :data:`MIN_VISIBLE` of its pixels inside the frame
  stay visible after occlusion and at least :data:`MIN_INSIDE` of its full box lies
  in the game view; otherwise it is drawn but left unlabelled (as an annotator
  would skip it).
- Distractors (rocks, flowers, plain bushes, stumps, water, paths, UI bars) are
  drawn and never labelled.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw

CLASSES: tuple[str, ...] = (
    "villager", "sheep", "deer", "boar", "berry_bush",
    "tree", "gold_mine", "stone_mine", "relic", "mill",
)
FRAME_W, FRAME_H = 640, 416
ZOOMS: tuple[float, ...] = (0.75, 1.0, 1.5, 2.0)
MIN_VISIBLE = 0.35
MIN_INSIDE = 0.35

# Base size (w, h) in frame pixels at zoom 1.0.
BASE_SIZE = {
    "villager": (16, 22), "sheep": (24, 17), "deer": (28, 20), "boar": (24, 17),
    "berry_bush": (28, 26), "tree": (44, 52), "gold_mine": (56, 44), "stone_mine": (56, 44),
    "relic": (13, 13), "mill": (84, 84),
}

RGB = tuple[int, int, int]


@dataclass(frozen=True)
class Session:
    """Look of one capture session."""

    id: int
    grass: RGB
    grass_alt: RGB
    dirt: RGB
    brightness: float
    tint: tuple[float, float, float]
    haze: float
    bottom_panel: bool

    @property
    def name(self) -> str:
        return f"s{self.id:03d}"


@dataclass(frozen=True)
class Box:
    """A labelled object: class index and xyxy in frame pixels (x1, y1 exclusive)."""

    cls: int
    x0: float
    y0: float
    x1: float
    y1: float


@dataclass(frozen=True)
class Frame:
    """One rendered frame: ``image`` (H, W, 3) uint8 RGB, its boxes, and ``owner``.

    ``owner`` (H, W) int32 holds, per pixel, 1 + the index into ``boxes`` of the
    labelled object visible there, or 0 (terrain, distractor, unlabelled object, UI).
    """

    session: Session
    index: int
    zoom: float
    image: np.ndarray
    boxes: tuple[Box, ...]
    owner: np.ndarray

    @property
    def name(self) -> str:
        return f"{self.session.name}-{self.index:03d}"


def _rng(*key: int) -> np.random.Generator:
    return np.random.default_rng([int(k) for k in key])


def _clip8(c) -> RGB:
    return tuple(int(max(0, min(255, round(v)))) for v in c)


def _jit(rng: np.random.Generator, c, amount: float) -> RGB:
    return _clip8(np.asarray(c, float) + rng.normal(0, amount, 3))


TERRAINS: tuple[tuple[RGB, RGB, RGB], ...] = (
    ((88, 140, 60), (110, 150, 70), (140, 115, 80)),    # temperate grass
    ((120, 145, 70), (140, 150, 85), (160, 130, 90)),   # dry grass
    ((70, 120, 55), (60, 105, 50), (115, 95, 70)),      # dark forest floor
    ((190, 170, 120), (175, 155, 105), (150, 120, 85)),  # desert sand
    ((150, 150, 95), (125, 140, 80), (135, 110, 80)),   # steppe
    ((205, 210, 215), (185, 195, 205), (150, 140, 130)),  # snow
)


def make_session(session_id: int, *, seed: int) -> Session:
    """The look of session ``session_id`` (a pure function of ``seed`` and the id)."""
    rng = _rng(seed, 1, session_id)
    grass, alt, dirt = TERRAINS[int(rng.integers(len(TERRAINS)))]
    return Session(
        id=session_id,
        grass=_jit(rng, grass, 9), grass_alt=_jit(rng, alt, 9), dirt=_jit(rng, dirt, 8),
        brightness=float(rng.uniform(0.72, 1.12)),
        tint=tuple(float(v) for v in rng.uniform(0.92, 1.08, 3)),
        haze=float(rng.choice([0.0, 0.0, rng.uniform(0.05, 0.22)])),
        bottom_panel=bool(rng.random() < 0.6),
    )


def frame_zoom(session_id: int, index: int, *, seed: int) -> float:
    """Zoom of a frame: frames cycle through :data:`ZOOMS` so every level is covered."""
    return ZOOMS[(index + session_id) % len(ZOOMS)]


# ---------------------------------------------------------------------------- drawing


def ellipse_pts(cx: float, cy: float, a: float, b: float, theta: float = 0.0, n: int = 18):
    """Polygon points of an ellipse with half-axes ``a``, ``b`` rotated by ``theta``."""
    ct, st = math.cos(theta), math.sin(theta)
    out = []
    for k in range(n):
        t = 2 * math.pi * k / n
        x, y = a * math.cos(t), b * math.sin(t)
        out.append((cx + x * ct - y * st, cy + x * st + y * ct))
    return out


class Painter:
    """Draws on the RGB canvas and, in step, on an id mask; tracks each object's extent."""

    def __init__(self, img: Image.Image):
        self.img = img
        self.draw = ImageDraw.Draw(img)
        self.mask = Image.new("I", img.size, 0)
        self.mdraw = ImageDraw.Draw(self.mask)
        self.oid = 0
        self.ext: list[float] | None = None

    def begin(self, oid: int) -> None:
        self.oid, self.ext = oid, None

    def _grow(self, x0, y0, x1, y1) -> None:
        if self.ext is None:
            self.ext = [x0, y0, x1, y1]
        else:
            e = self.ext
            e[0], e[1], e[2], e[3] = min(e[0], x0), min(e[1], y0), max(e[2], x1), max(e[3], y1)

    def poly(self, pts, fill: RGB, *, outline: RGB | None = None) -> None:
        pts = [(float(x), float(y)) for x, y in pts]
        self.draw.polygon(pts, fill=fill, outline=outline)
        self.mdraw.polygon(pts, fill=self.oid, outline=self.oid if outline else None)
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        self._grow(min(xs), min(ys), max(xs) + 1, max(ys) + 1)

    def ell(self, cx, cy, a, b, fill: RGB, theta: float = 0.0, *, outline: RGB | None = None) -> None:
        self.poly(ellipse_pts(cx, cy, max(a, 0.6), max(b, 0.6), theta), fill, outline=outline)

    def line(self, pts, fill: RGB, width: int) -> None:
        pts = [(float(x), float(y)) for x, y in pts]
        width = max(1, int(round(width)))
        self.draw.line(pts, fill=fill, width=width)
        self.mdraw.line(pts, fill=self.oid, width=width)
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        h = width / 2
        self._grow(min(xs) - h, min(ys) - h, max(xs) + h + 1, max(ys) + h + 1)

    def shadow(self, cx, cy, a, b, ground: np.ndarray) -> None:
        """A darker ground ellipse under an object; not part of the object."""
        c = _clip8(ground * 0.62)
        self.draw.polygon(ellipse_pts(cx, cy, a, b), fill=c)


PLAYER_COLOURS: tuple[RGB, ...] = (
    (40, 70, 220), (210, 40, 40), (40, 170, 60), (230, 210, 40),
    (40, 200, 210), (160, 60, 200), (150, 150, 150), (240, 130, 30),
)


def draw_object(p: Painter, kind: str, cx: float, cy: float, s: float, rng: np.random.Generator,
                ground: np.ndarray) -> None:
    """Draw one object of ``kind`` centred at (cx, cy) with scale ``s`` (px per base unit)."""
    th = float(rng.uniform(0, 2 * math.pi))
    ux, uy = math.cos(th), math.sin(th)
    bw, bh = BASE_SIZE[kind]
    w, h = bw * s, bh * s
    if kind == "villager":
        p.shadow(cx + 2 * s, cy + h * 0.4, w * 0.45, h * 0.18, ground)
        col = PLAYER_COLOURS[int(rng.integers(len(PLAYER_COLOURS)))]
        p.ell(cx, cy + h * 0.1, w * 0.42, h * 0.38, _jit(rng, col, 12))
        skin = _jit(rng, (205, 160, 120), 25)
        p.ell(cx, cy - h * 0.3, w * 0.26, w * 0.26, skin)
        if rng.random() < 0.7:  # tool
            tx = cx + ux * w * 0.5
            p.line([(cx + ux * w * 0.1, cy), (tx, cy + uy * h * 0.35)], _jit(rng, (90, 70, 50), 10), max(1, s * 1.6))
    elif kind == "sheep":
        p.shadow(cx + 2 * s, cy + h * 0.35, w * 0.45, h * 0.25, ground)
        flip = 1 if rng.random() < 0.5 else -1
        wool = _jit(rng, (235, 232, 220), 10)
        p.ell(cx - flip * w * 0.08, cy, w * 0.38, h * 0.45, wool)
        for k in range(3):
            p.ell(cx - flip * w * (0.25 - 0.16 * k), cy - h * 0.25, w * 0.11, h * 0.16, wool)
        p.ell(cx + flip * w * 0.36, cy - h * 0.05, w * 0.13, h * 0.22, _jit(rng, (60, 55, 50), 8))
    elif kind == "deer":
        p.shadow(cx + 2 * s, cy + h * 0.35, w * 0.45, h * 0.25, ground)
        flip = 1 if rng.random() < 0.5 else -1
        fur = _jit(rng, (165, 115, 65), 12)
        p.ell(cx - flip * w * 0.06, cy + h * 0.05, w * 0.34, h * 0.3, fur)
        p.ell(cx - flip * w * 0.06, cy + h * 0.12, w * 0.22, h * 0.12, _jit(rng, (215, 190, 150), 10))
        hx, hy = cx + flip * w * 0.33, cy - h * 0.18
        p.ell(hx, hy, w * 0.12, h * 0.16, fur)
        ant = _jit(rng, (90, 70, 45), 8)
        p.line([(hx, hy - h * 0.1), (hx - flip * w * 0.1, hy - h * 0.45)], ant, max(1, s * 1.2))
        p.line([(hx, hy - h * 0.1), (hx + flip * w * 0.14, hy - h * 0.4)], ant, max(1, s * 1.2))
    elif kind == "boar":
        p.shadow(cx + 2 * s, cy + h * 0.35, w * 0.45, h * 0.25, ground)
        flip = 1 if rng.random() < 0.5 else -1
        hide = _jit(rng, (85, 65, 55), 10)
        p.ell(cx - flip * w * 0.05, cy, w * 0.4, h * 0.42, hide)
        p.line([(cx - flip * w * 0.3, cy - h * 0.3), (cx + flip * w * 0.2, cy - h * 0.36)],
               _jit(rng, (45, 35, 30), 6), max(1, s * 1.5))
        p.ell(cx + flip * w * 0.36, cy + h * 0.05, w * 0.14, h * 0.24, _jit(rng, (110, 85, 70), 8))
        p.ell(cx + flip * w * 0.47, cy + h * 0.2, w * 0.04, h * 0.06, (240, 235, 220))
    elif kind == "berry_bush":
        leaf = _jit(rng, (55, 110, 45), 12)
        p.shadow(cx + 3 * s, cy + h * 0.3, w * 0.45, h * 0.3, ground)
        for k in range(5):
            a = th + k * 2 * math.pi / 5
            p.ell(cx + math.cos(a) * w * 0.18, cy + math.sin(a) * h * 0.18, w * 0.3, h * 0.3, leaf)
        berry = _jit(rng, (200, 30, 70) if rng.random() < 0.6 else (110, 40, 150), 15)
        for _ in range(int(rng.integers(5, 10))):
            bx = cx + rng.uniform(-0.32, 0.32) * w
            by = cy + rng.uniform(-0.32, 0.32) * h
            p.ell(bx, by, max(1.0, 1.6 * s), max(1.0, 1.6 * s), berry)
    elif kind == "tree":
        style = int(rng.integers(3))
        p.shadow(cx + 6 * s, cy + h * 0.32, w * 0.45, h * 0.22, ground)
        p.line([(cx, cy + h * 0.48), (cx, cy + h * 0.1)], _jit(rng, (95, 70, 45), 10), max(2, s * 4))
        if style == 0:  # oak: cluster of blobs
            leaf = _jit(rng, (45, 100, 40), 14)
            for k in range(6):
                a = th + k * 2 * math.pi / 6
                p.ell(cx + math.cos(a) * w * 0.2, cy - h * 0.12 + math.sin(a) * h * 0.15, w * 0.28, h * 0.24,
                      _jit(rng, leaf, 6))
        elif style == 1:  # pine: stacked triangles
            leaf = _jit(rng, (30, 80, 45), 10)
            for k in range(3):
                yk = cy - h * 0.5 + k * h * 0.18
                ww = w * (0.3 + 0.1 * k)
                p.poly([(cx, yk), (cx - ww, yk + h * 0.35), (cx + ww, yk + h * 0.35)], _jit(rng, leaf, 5))
        else:  # autumn / palm-ish round canopy
            leaf = _jit(rng, (150, 120, 40) if rng.random() < 0.5 else (70, 125, 55), 15)
            p.ell(cx, cy - h * 0.12, w * 0.48, h * 0.38, leaf)
            p.ell(cx - w * 0.12, cy - h * 0.22, w * 0.22, h * 0.16, _clip8(np.asarray(leaf) * 1.15))
    elif kind in ("gold_mine", "stone_mine"):
        base = (215, 180, 50) if kind == "gold_mine" else (150, 150, 145)
        edge = (120, 95, 30) if kind == "gold_mine" else (85, 85, 85)
        n = int(rng.integers(3, 6))
        for _ in range(n):
            rx, ry = cx + rng.uniform(-0.28, 0.28) * w, cy + rng.uniform(-0.25, 0.25) * h
            r = rng.uniform(0.13, 0.22) * w
            k = int(rng.integers(5, 8))
            pts = [(rx + math.cos(2 * math.pi * i / k + th) * r * rng.uniform(0.7, 1.1),
                    ry + math.sin(2 * math.pi * i / k + th) * r * rng.uniform(0.6, 0.9)) for i in range(k)]
            p.poly(pts, _jit(rng, base, 14), outline=_jit(rng, edge, 8))
    elif kind == "relic":
        p.shadow(cx + 1.5 * s, cy + h * 0.4, w * 0.5, h * 0.2, ground)
        p.poly([(cx - w / 2, cy - h / 2), (cx + w / 2, cy - h / 2), (cx + w / 2, cy + h / 2), (cx - w / 2, cy + h / 2)],
               _jit(rng, (230, 200, 90), 10))
        p.line([(cx, cy - h * 0.35), (cx, cy + h * 0.35)], (250, 250, 240), max(1, s * 1.5))
        p.line([(cx - w * 0.3, cy - h * 0.08), (cx + w * 0.3, cy - h * 0.08)], (250, 250, 240), max(1, s * 1.5))
    elif kind == "mill":
        p.shadow(cx + 6 * s, cy + h * 0.15, w * 0.32, h * 0.3, ground)
        wall = _jit(rng, (175, 150, 115), 12)
        roof = _jit(rng, (140, 60, 40) if rng.random() < 0.6 else (90, 85, 95), 12)
        bx = w * 0.28
        p.poly([(cx - bx, cy - bx * 0.5), (cx + bx, cy - bx * 0.5), (cx + bx, cy + bx * 1.1),
                (cx - bx, cy + bx * 1.1)], wall)
        p.poly([(cx - bx * 1.15, cy - bx * 0.5), (cx, cy - bx * 1.3), (cx + bx * 1.15, cy - bx * 0.5)], roof)
        hub = (cx, cy - bx * 0.2)
        blade = _jit(rng, (225, 215, 190), 8)
        a0 = float(rng.uniform(0, math.pi / 2))
        for k in range(4):
            a = a0 + k * math.pi / 2
            tip = (hub[0] + math.cos(a) * w * 0.48, hub[1] + math.sin(a) * h * 0.48)
            p.line([hub, tip], blade, max(1, s * 3))
        p.ell(hub[0], hub[1], 3 * s, 3 * s, (70, 50, 35))
    else:  # pragma: no cover - the kinds are fixed
        raise ValueError(kind)


def draw_distractor(p: Painter, kind: str, cx: float, cy: float, s: float, rng: np.random.Generator,
                    ground: np.ndarray) -> None:
    """Unlabelled clutter: drawn with mask id 0, so it never counts as an object."""
    p.begin(0)
    if kind == "rock":
        r = rng.uniform(4, 11) * s
        k = int(rng.integers(5, 8))
        pts = [(cx + math.cos(2 * math.pi * i / k) * r * rng.uniform(0.6, 1.1),
                cy + math.sin(2 * math.pi * i / k) * r * rng.uniform(0.5, 0.9)) for i in range(k)]
        p.poly(pts, _jit(rng, (130, 128, 120), 15), outline=_jit(rng, (80, 80, 80), 8))
    elif kind == "flowers":
        col = _jit(rng, [(240, 220, 60), (240, 240, 240), (220, 90, 160), (120, 120, 240)][int(rng.integers(4))], 15)
        for _ in range(int(rng.integers(3, 9))):
            fx, fy = cx + rng.normal(0, 6 * s), cy + rng.normal(0, 5 * s)
            p.ell(fx, fy, 1.3 * s, 1.3 * s, col)
    elif kind == "bush":  # like a berry bush, without berries
        leaf = _jit(rng, (60, 115, 50), 14)
        r = rng.uniform(7, 13) * s
        for k in range(4):
            a = k * math.pi / 2 + rng.uniform(0, 1)
            p.ell(cx + math.cos(a) * r * 0.4, cy + math.sin(a) * r * 0.4, r * 0.6, r * 0.55, leaf)
    elif kind == "stump":
        p.ell(cx, cy, 5 * s, 4 * s, _jit(rng, (120, 90, 60), 10))
        p.ell(cx, cy, 3 * s, 2.4 * s, _jit(rng, (175, 140, 95), 10))
    elif kind == "bones":  # pale, small: a relic/sheep look-alike
        c = _jit(rng, (225, 220, 200), 8)
        p.line([(cx - 6 * s, cy), (cx + 6 * s, cy + rng.uniform(-3, 3) * s)], c, max(1, 2 * s))
        p.ell(cx - 6 * s, cy, 2 * s, 2 * s, c)
    elif kind == "fence":
        c = _jit(rng, (130, 100, 65), 10)
        L = rng.uniform(20, 50) * s
        a = rng.uniform(0, math.pi)
        p.line([(cx, cy), (cx + math.cos(a) * L, cy + math.sin(a) * L)], c, max(1, 2 * s))


# ---------------------------------------------------------------------------- terrain


def _noise(rng: np.random.Generator, w: int, h: int, cell: int) -> np.ndarray:
    """Smooth value noise in [0, 1], (h, w) float32, from a coarse grid upsampled bicubically."""
    gw, gh = w // cell + 3, h // cell + 3
    grid = (rng.random((gh, gw)) * 255).astype(np.uint8)
    up = Image.fromarray(grid, "L").resize((gw * cell, gh * cell), Image.BICUBIC)
    ox, oy = int(rng.integers(cell)), int(rng.integers(cell))
    return np.asarray(up, np.float32)[oy:oy + h, ox:ox + w] / 255.0


def terrain(session: Session, rng: np.random.Generator, w: int, h: int, zoom: float) -> np.ndarray:
    """Ground colours (h, w, 3) float32: two grasses by noise, dirt patches, grain."""
    g = np.asarray(session.grass, np.float32)
    a = np.asarray(session.grass_alt, np.float32)
    d = np.asarray(session.dirt, np.float32)
    n1 = _noise(rng, w, h, max(8, int(48 * zoom)))[..., None]
    n2 = _noise(rng, w, h, max(8, int(90 * zoom)))[..., None]
    img = g * (1 - n1) + a * n1
    dirt = np.clip((n2 - 0.68) * 6, 0, 1)
    img = img * (1 - dirt) + d * dirt
    img += rng.normal(0, 5.0, (h, w, 1)).astype(np.float32)
    return img


# ---------------------------------------------------------------------------- scene

KINDS_IN_ORDER = CLASSES
DISTRACTORS = ("rock", "flowers", "bush", "stump", "bones", "fence")


def _place_groups(rng: np.random.Generator, zoom: float, w: int, h: int) -> list[tuple[str, float, float]]:
    """Object centres, in clusters like a game map (herds, forests, berry patches)."""
    area = (w * h) / (640 * 416) / (zoom * zoom)  # map area in view relative to zoom 1.0
    out: list[tuple[str, float, float]] = []

    def cluster(kind: str, n: int, spread: float) -> None:
        x, y = rng.uniform(-0.05, 1.05) * w, rng.uniform(-0.05, 1.05) * h
        for _ in range(n):
            out.append((kind, x + rng.normal(0, spread * zoom), y + rng.normal(0, spread * zoom * 0.8)))

    def count(mean: float) -> int:
        return int(rng.poisson(mean * area))

    for _ in range(count(1.4)):
        cluster("tree", int(rng.integers(3, 12)), 38)
    for _ in range(count(4.0)):
        out.append(("tree", rng.uniform(0, w), rng.uniform(0, h)))
    for _ in range(count(0.9)):
        cluster("sheep", int(rng.integers(2, 6)), 22)
    for _ in range(count(0.7)):
        cluster("deer", int(rng.integers(2, 5)), 26)
    for _ in range(count(0.35)):
        cluster("boar", int(rng.integers(1, 3)), 18)
    for _ in range(count(0.8)):
        cluster("berry_bush", int(rng.integers(3, 7)), 22)
    for _ in range(count(2.2)):
        cluster("villager", int(rng.integers(1, 5)), 30)
    for kind, mean in (("gold_mine", 0.55), ("stone_mine", 0.55), ("relic", 0.6), ("mill", 0.35)):
        for _ in range(count(mean)):
            out.append((kind, rng.uniform(0, w), rng.uniform(0, h)))
    return out


def render(session: Session, index: int, *, seed: int, size: tuple[int, int] = (FRAME_W, FRAME_H)) -> Frame:
    """Render frame ``index`` of ``session`` (deterministic in seed, session, index, size)."""
    w, h = size
    zoom = frame_zoom(session.id, index, seed=seed)
    rng = _rng(seed, 2, session.id, index)
    ground = terrain(session, rng, w, h, zoom)
    img = Image.fromarray(np.clip(ground, 0, 255).astype(np.uint8), "RGB")
    p = Painter(img)
    s_unit = zoom * (w / FRAME_W)

    # Ground clutter first (under everything).
    if rng.random() < 0.35:  # a water pond
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        p.begin(0)
        p.ell(cx, cy, rng.uniform(30, 90) * s_unit, rng.uniform(20, 50) * s_unit,
              _jit(rng, (60, 100, 170), 10), float(rng.uniform(0, math.pi)))
    for _ in range(int(rng.poisson(14 / zoom ** 2))):
        kind = DISTRACTORS[int(rng.choice(len(DISTRACTORS), p=[0.22, 0.34, 0.2, 0.1, 0.07, 0.07]))]
        cx, cy = rng.uniform(0, w), rng.uniform(0, h)
        draw_distractor(p, kind, cx, cy, s_unit * rng.uniform(0.8, 1.2), rng,
                        ground[int(min(max(cy, 0), h - 1)), int(min(max(cx, 0), w - 1))])

    placed = _place_groups(rng, zoom, w, h)
    placed.sort(key=lambda t: (t[2], t[1]))  # painter's order: lower on screen is in front
    extents: list[tuple[str, list[float], int]] = []  # kind, full extent, own pixel count in frame
    for oid, (kind, cx, cy) in enumerate(placed, start=1):
        s = s_unit * float(rng.uniform(0.8, 1.25))
        p.begin(oid)
        gx, gy = int(min(max(cx, 0), w - 1)), int(min(max(cy, 0), h - 1))
        draw_object(p, kind, cx, cy, s, rng, ground[gy, gx])
        assert p.ext is not None
        x0, y0, x1, y1 = (int(math.floor(max(p.ext[0], 0))), int(math.floor(max(p.ext[1], 0))),
                          int(math.ceil(min(p.ext[2], w))), int(math.ceil(min(p.ext[3], h))))
        own = 0
        if x1 > x0 and y1 > y0:
            own = int((np.asarray(p.mask.crop((x0, y0, x1, y1))) == oid).sum())
        extents.append((kind, list(p.ext), own))

    # Lighting applies to the game view only; the UI bars are drawn on top afterwards.
    arr = np.asarray(img, np.float32)
    arr = arr * session.brightness * np.asarray(session.tint, np.float32)
    if session.haze:
        arr = arr * (1 - session.haze) + 200.0 * session.haze
    img = Image.fromarray(np.clip(arr + 0.5, 0, 255).astype(np.uint8), "RGB")
    mask = p.mask
    top = max(6, int(round(14 * w / FRAME_W)))
    bottom = int(round(58 * h / FRAME_H)) if session.bottom_panel and h >= 0.4 * FRAME_H else 0
    ui = ImageDraw.Draw(img)
    mui = ImageDraw.Draw(mask)
    ui.rectangle([0, 0, w - 1, top - 1], fill=(40, 32, 25))
    mui.rectangle([0, 0, w - 1, top - 1], fill=0)
    for k in range(4 if top >= 10 else 0):  # resource counters: icon + "digits"
        x = int(8 + k * 70 * w / FRAME_W)
        colours = [(180, 60, 40), (90, 140, 60), (220, 190, 60), (160, 160, 160)]
        ui.rectangle([x, 3, x + top - 6, top - 4], fill=colours[k])
        for j in range(3):
            ui.rectangle([x + top + j * 6, 4, x + top + j * 6 + 3, top - 5], fill=(230, 220, 190))
    if bottom >= 24:
        ui.rectangle([0, h - bottom, w - 1, h - 1], fill=(55, 45, 35))
        mui.rectangle([0, h - bottom, w - 1, h - 1], fill=0)
        mm = bottom - 8  # minimap
        ui.rectangle([w - mm - 6, h - bottom + 4, w - 7, h - 5], fill=(70, 100, 60), outline=(200, 180, 120))
        for j in range(6):  # command buttons
            x = 10 + j * (bottom - 14)
            ui.rectangle([x, h - bottom + 8, x + bottom - 20, h - 12], fill=(90, 75, 60), outline=(190, 170, 120))

    owner_ids = np.asarray(mask, np.int64)
    visible = np.bincount(owner_ids.ravel(), minlength=len(placed) + 1)
    view = (0.0, float(top), float(w), float(h - bottom))
    boxes: list[Box] = []
    remap = np.zeros(len(placed) + 1, np.int32)
    for oid, (kind, ext, own) in enumerate(extents, start=1):
        fx0, fy0, fx1, fy1 = ext
        cx0, cy0 = max(fx0, view[0]), max(fy0, view[1])
        cx1, cy1 = min(fx1, view[2]), min(fy1, view[3])
        if cx1 - cx0 < 2 or cy1 - cy0 < 2 or own == 0:
            continue
        inside = (cx1 - cx0) * (cy1 - cy0) / ((fx1 - fx0) * (fy1 - fy0))
        if inside < MIN_INSIDE or visible[oid] / own < MIN_VISIBLE:
            continue
        boxes.append(Box(CLASSES.index(kind), round(cx0, 2), round(cy0, 2), round(cx1, 2), round(cy1, 2)))
        remap[oid] = len(boxes)
    owner = remap[owner_ids].astype(np.int32)
    return Frame(session=session, index=index, zoom=zoom, image=np.asarray(img, np.uint8).copy(),
                 boxes=tuple(boxes), owner=owner)


def yolo_lines(boxes: tuple[Box, ...] | list[Box], *, width: int, height: int) -> list[str]:
    """YOLO txt rows ``class cx cy w h`` normalised to [0, 1], 6 decimals."""
    out = []
    for b in boxes:
        cx, cy = (b.x0 + b.x1) / 2 / width, (b.y0 + b.y1) / 2 / height
        bw, bh = (b.x1 - b.x0) / width, (b.y1 - b.y0) / height
        out.append(f"{b.cls} {cx:.6f} {cy:.6f} {bw:.6f} {bh:.6f}")
    return out


def letterbox_geometry(width: int, height: int, size: int) -> tuple[float, int, int, int, int]:
    """Letterbox of a ``width`` x ``height`` frame into a ``size`` square.

    Returns ``(scale, new_w, new_h, pad_left, pad_top)``: scale = min(size/w, size/h),
    new_w = round(w * scale), new_h = round(h * scale), pad_left = (size - new_w) // 2,
    pad_top = (size - new_h) // 2; the rest of the square is gray (114, 114, 114).
    """
    scale = min(size / width, size / height)
    nw, nh = int(round(width * scale)), int(round(height * scale))
    return scale, nw, nh, (size - nw) // 2, (size - nh) // 2


def letterbox(image: np.ndarray, size: int) -> np.ndarray:
    """(size, size, 3) uint8: ``image`` resized with PIL BILINEAR, centred on gray 114."""
    h, w = image.shape[:2]
    _, nw, nh, left, top = letterbox_geometry(w, h, size)
    out = np.full((size, size, 3), 114, np.uint8)
    out[top:top + nh, left:left + nw] = np.asarray(Image.fromarray(image).resize((nw, nh), Image.BILINEAR))
    return out
