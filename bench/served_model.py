"""A served-size detector for the inference-overhead bench: YOLOv8n's layout and size, random weights.

Built with the ``onnx`` helper API (no torch), seeded, never committed (written to a temporary
folder with its model card). The graph follows YOLOv8n: input ``[1, 3, 640, 640]``; backbone of
stride-2 3x3 convolutions (16, 32, 64, 128, 256 channels) with C2f blocks (1, 2, 2, 1 bottlenecks)
and SPPF; the PAN neck (two upsample + C2f, two stride-2 conv + C2f); the decoupled head per
stride 8, 16, 32 (box branch 64 channels with DFL over 16 bins, class branch 80 channels), decoded
to the Ultralytics layout ``[1, 84, 8400]`` (``cx, cy, w, h`` in input pixels, then 80 class
scores). Convolutions carry folded batch-norm (a bias) and SiLU, as an exported model does. About
3.2 million parameters, like YOLOv8n (:func:`build` returns the count). The class logits are
standardised per class (random weights alone give near-constant logits) and shifted, so that, as
with a trained model before NMS, about 100-350 of the 8,400 anchors score above ``detector.floor``
0.05 on a demo frame.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

NUM_CLASSES = 80
REG_MAX = 16
SIZE = 640
STRIDES = (8, 16, 32)
LOGIT_SCALE, LOGIT_BIAS = 1.5, -10.0


class Graph:
    """A tiny builder: nodes, initializers and unique names."""

    def __init__(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.nodes: list = []
        self.inits: list = []
        self.n = 0
        self.params = 0

    def name(self, base: str) -> str:
        self.n += 1
        return f"{base}_{self.n}"

    def const(self, array: np.ndarray, base: str = "c") -> str:
        from onnx import numpy_helper

        name = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name=name))
        return name

    def op(self, kind: str, inputs: list[str], base: str | None = None, **attrs) -> str:
        from onnx import helper

        out = self.name(base or kind.lower())
        self.nodes.append(helper.make_node(kind, inputs, [out], **attrs))
        return out

    def conv(self, x: str, c_in: int, c_out: int, k: int = 1, s: int = 1, *, act: bool = True,
             bias: float = 0.0) -> str:
        w = (self.rng.standard_normal((c_out, c_in, k, k)) * np.sqrt(1.0 / (c_in * k * k))).astype(np.float32)
        b = np.full(c_out, bias, np.float32)
        self.params += w.size + b.size
        y = self.op("Conv", [x, self.const(w, "w"), self.const(b, "b")], kernel_shape=[k, k], strides=[s, s],
                    pads=[k // 2] * 4)
        return self.op("Mul", [y, self.op("Sigmoid", [y])]) if act else y

    def c2f(self, x: str, c_in: int, c_out: int, n: int, *, shortcut: bool) -> str:
        c = c_out // 2
        y = self.conv(x, c_in, 2 * c)
        parts = [self.op("Slice", [y, self.const(np.array([0], np.int64)), self.const(np.array([c], np.int64)),
                                   self.const(np.array([1], np.int64))]),
                 self.op("Slice", [y, self.const(np.array([c], np.int64)), self.const(np.array([2 * c], np.int64)),
                                   self.const(np.array([1], np.int64))])]
        for _ in range(n):
            z = self.conv(self.conv(parts[-1], c, c, 3), c, c, 3)
            parts.append(self.op("Add", [parts[-1], z]) if shortcut else z)
        return self.conv(self.op("Concat", parts, axis=1), (2 + n) * c, c_out)

    def sppf(self, x: str, c: int) -> str:
        y = self.conv(x, c, c // 2)
        pools = [y]
        for _ in range(3):
            pools.append(self.op("MaxPool", [pools[-1]], kernel_shape=[5, 5], strides=[1, 1], pads=[2, 2, 2, 2]))
        return self.conv(self.op("Concat", pools, axis=1), 2 * c, c)

    def up(self, x: str) -> str:
        return self.op("Resize", [x, "", self.const(np.array([1, 1, 2, 2], np.float32))], mode="nearest")


def head(g: Graph, x: str, c_in: int, stride: int) -> tuple[str, str]:
    """One level's ``(box distances [1, 4, HW] in pixels, class scores [1, 80, HW])``."""
    hw = (SIZE // stride) ** 2
    box = g.conv(g.conv(g.conv(x, c_in, 64, 3), 64, 64, 3), 64, 4 * REG_MAX, act=False)
    cls = g.conv(g.conv(g.conv(x, c_in, 80, 3), 80, 80, 3), 80, NUM_CLASSES, act=False)
    # random weights shrink activations with depth; standardise the logits per class (what a trained
    # model's calibration gives), then shift them: ~100-350 anchors per demo frame score above 0.05
    cls = g.op("InstanceNormalization", [cls, g.const(np.full(NUM_CLASSES, LOGIT_SCALE, np.float32)),
                                         g.const(np.full(NUM_CLASSES, LOGIT_BIAS, np.float32))], epsilon=1e-20)
    bins = g.op("Reshape", [box, g.const(np.array([1, 4, REG_MAX, hw], np.int64))])
    prob = g.op("Softmax", [bins], axis=2)
    dist = g.op("ReduceSum", [g.op("Mul", [prob, g.const(np.arange(REG_MAX, dtype=np.float32).reshape(1, 1, -1, 1))]),
                              g.const(np.array([2], np.int64))], keepdims=0)
    dist = g.op("Mul", [dist, g.const(np.array(stride, np.float32))])
    scores = g.op("Sigmoid", [g.op("Reshape", [cls, g.const(np.array([1, NUM_CLASSES, hw], np.int64))])])
    return dist, scores


def anchors() -> np.ndarray:
    """Anchor centres ``[2, 8400]`` in input pixels, stride 8 first (Ultralytics' order)."""
    pts = []
    for s in STRIDES:
        n = SIZE // s
        ys, xs = np.meshgrid(np.arange(n) + 0.5, np.arange(n) + 0.5, indexing="ij")
        pts.append(np.stack([xs.ravel(), ys.ravel()]) * s)
    return np.concatenate(pts, axis=1).astype(np.float32)


def build(seed: int = 0) -> tuple[bytes, int]:
    """The serialized model and its parameter count."""
    import onnx
    from onnx import TensorProto, helper

    g = Graph(seed)
    x = "images"
    x = g.conv(x, 3, 16, 3, 2)
    x = g.c2f(g.conv(x, 16, 32, 3, 2), 32, 32, 1, shortcut=True)
    p3 = g.c2f(g.conv(x, 32, 64, 3, 2), 64, 64, 2, shortcut=True)
    p4 = g.c2f(g.conv(p3, 64, 128, 3, 2), 128, 128, 2, shortcut=True)
    p5 = g.sppf(g.c2f(g.conv(p4, 128, 256, 3, 2), 256, 256, 1, shortcut=True), 256)
    t4 = g.c2f(g.op("Concat", [g.up(p5), p4], axis=1), 384, 128, 1, shortcut=False)
    n3 = g.c2f(g.op("Concat", [g.up(t4), p3], axis=1), 192, 64, 1, shortcut=False)
    n4 = g.c2f(g.op("Concat", [g.conv(n3, 64, 64, 3, 2), t4], axis=1), 192, 128, 1, shortcut=False)
    n5 = g.c2f(g.op("Concat", [g.conv(n4, 128, 128, 3, 2), p5], axis=1), 384, 256, 1, shortcut=False)
    levels = [head(g, f, c, s) for f, c, s in ((n3, 64, 8), (n4, 128, 16), (n5, 256, 32))]
    dist = g.op("Concat", [d for d, _ in levels], axis=2)                    # [1, 4, 8400]: l, t, r, b
    scores = g.op("Concat", [s for _, s in levels], axis=2)                  # [1, 80, 8400]
    lt = g.op("Slice", [dist, g.const(np.array([0], np.int64)), g.const(np.array([2], np.int64)),
                        g.const(np.array([1], np.int64))])
    rb = g.op("Slice", [dist, g.const(np.array([2], np.int64)), g.const(np.array([4], np.int64)),
                        g.const(np.array([1], np.int64))])
    centre = g.const(anchors()[None], "anchors")
    xy = g.op("Add", [centre, g.op("Mul", [g.op("Sub", [rb, lt]), g.const(np.array(0.5, np.float32))])])
    wh = g.op("Add", [lt, rb])
    out = g.op("Concat", [xy, wh, scores], axis=1, base="output0")
    graph = helper.make_graph(
        g.nodes, "served-size", [helper.make_tensor_value_info("images", TensorProto.FLOAT, [1, 3, SIZE, SIZE])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, [1, 4 + NUM_CLASSES, 8400])], initializer=g.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model.SerializeToString(), g.params


def write_model(folder: Path, name: str = "served-size", *, seed: int = 0) -> tuple[str, int]:
    """Write ``<folder>/<name>.onnx`` and its card (80 classes ``class0..``; Ultralytics preprocessing);
    return the card name and the parameter count."""
    import yaml

    blob, params = build(seed)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.onnx").write_bytes(blob)
    card = {"onnx": f"{name}.onnx", "sha256": hashlib.sha256(blob).hexdigest(),
            "classes": [f"class{i}" for i in range(NUM_CLASSES)], "input_size": [SIZE, SIZE],
            "output_layout": "ultralytics", "preprocess": {"resize": "opencv-linear"}}
    (folder / f"{name}.yaml").write_text(yaml.safe_dump(card, sort_keys=False))
    return name, params
