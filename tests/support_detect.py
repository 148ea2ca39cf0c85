"""Builders (no tests) for the detector tests: a tiny data set and a tiny ONNX model with a fixed output."""
from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from PIL import Image

from candor_eval.common.manifest import build_manifest_rows, format_manifest

CLASSES = ["deer", "sheep", "relic"]


def constant_model(path: Path, output: np.ndarray, *, input_hw: tuple[int, int] = (64, 64),
                   dynamic_input: bool = False, metadata: dict[str, str] | None = None) -> str:
    """Write an ONNX model whose output is ``output`` (+ 0 * max(input)), with ``metadata`` (key -> text,
    as an exporter writes it); return its SHA-256."""
    h, w = input_hw
    in_shape = [1, 3, "h", "w"] if dynamic_input else [1, 3, h, w]
    x = helper.make_tensor_value_info("images", TensorProto.FLOAT, in_shape)
    y = helper.make_tensor_value_info("output0", TensorProto.FLOAT, list(output.shape))
    const = numpy_helper.from_array(output.astype(np.float32), name="fixed")
    zero = numpy_helper.from_array(np.array(0.0, np.float32), name="zero")
    nodes = [
        helper.make_node("ReduceMax", ["images"], ["m"], keepdims=0),
        helper.make_node("Mul", ["m", "zero"], ["z"]),
        helper.make_node("Add", ["fixed", "z"], ["output0"]),
    ]
    graph = helper.make_graph(nodes, "fixed", [x], [y], initializer=[const, zero])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    if metadata:
        onnx.helper.set_model_props(model, metadata)
    onnx.checker.check_model(model)
    data = model.SerializeToString()
    path.write_bytes(data)
    return hashlib.sha256(data).hexdigest()


def ultralytics_output(rows: list[list[float]], n_classes: int = len(CLASSES), n: int = 8) -> np.ndarray:
    """[1, 4+C, N] with the given anchor rows (cx, cy, w, h, scores...) and zeros elsewhere."""
    out = np.zeros((n, 4 + n_classes), np.float32)
    out[:len(rows)] = np.array(rows, np.float32)
    return out.T[None]


def write_card(models: Path, name: str, sha: str, **extra) -> Path:
    import yaml

    card = {"onnx": f"{name}.onnx", "sha256": sha, "classes": CLASSES, **extra}
    p = models / f"{name}.yaml"
    p.write_text(yaml.safe_dump(card, sort_keys=False))
    return p


def make_dataset(root: Path, frames: dict[str, dict]) -> Path:
    """``frames``: id -> {size: (w, h), labels: ["c cx cy w h", ...], split, zoom, session}."""
    d = root / "data" / "detector"
    (d / "images").mkdir(parents=True)
    (d / "labels").mkdir()
    (d / "classes.txt").write_text("\n".join(CLASSES) + "\n")
    rows = ["frame,session,zoom,split"]
    for fid, spec in sorted(frames.items()):
        w, h = spec["size"]
        Image.new("RGB", (w, h), (40, 120, 40)).save(d / "images" / f"{fid}.png")
        (d / "labels" / f"{fid}.txt").write_text("".join(x + "\n" for x in spec.get("labels", [])))
        rows.append(f"{fid},{spec.get('session', 's1')},{spec.get('zoom', '1')},{spec.get('split', 'dev')}")
    (d / "frames.csv").write_text("\n".join(rows) + "\n")
    (d / "manifest.csv").write_text(format_manifest(build_manifest_rows(d)))
    return d


def tiny_repo(root: Path, *, frames: dict[str, dict], rows: list[list[float]], params: str) -> Path:
    """A verified workspace in ``root``: data set ``frames``, model ``tiny`` (64x64 input) whose
    output holds ``rows``, and ``params.yaml``; the fetch stage has run."""
    from candor_eval.common.errors import run_main
    from candor_eval.stages import fetch

    make_dataset(root, frames)
    (root / "models").mkdir()
    sha = constant_model(root / "models" / "tiny.onnx", ultralytics_output(rows))
    write_card(root / "models", "tiny", sha, input_size=[64, 64])
    (root / "params.yaml").write_text(params)
    assert run_main(fetch.main, ["verify", "--data", str(root / "data"), "--models", str(root / "models"),
                                 "--params", str(root / "params.yaml"),
                                 "--out", str(root / "build" / "verified")]) == 0
    return root
