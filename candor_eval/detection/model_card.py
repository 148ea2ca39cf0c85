"""Model cards: ``models/<name>.yaml`` names an ONNX file and the SHA-256 of its bytes.

The card's file name (without ``.yaml``) is the model's name, so it follows the rule of names
(:mod:`candor_eval.common.names`): ``demo-v1.yaml``, never ``my model.yaml``.

Required: ``onnx`` (file name relative to the card's folder, inside it: no absolute path, no
``..``, no symlink out) and ``sha256``
(64 lower-case hex digits). Optional: ``source`` (where to fetch the ONNX file
when it is missing, as in manifests), ``classes`` (names in output order),
``input_size`` ([height, width]), ``output_layout``, ``preprocess`` (how a frame becomes the
model's input, :class:`Preprocess`; docs/detector.md, "Preprocessing"), ``class_map`` (card class -> data
class, :mod:`candor_eval.detection.scoring.scope`: declares renamed classes and a model that
covers a subset of the data set's classes), ``training`` (free-form facts: seed, epochs),
``training_sessions`` (the capture sessions the model was trained on, as ``frames.csv`` names
them: the release gate's held-out check fails when a test session is among them, and cannot
check anything when a card declares none), ``eval_manifest_sha256`` (the evaluation set it was scored on) and a frozen
``evaluation`` (metrics the score stage must reproduce). Unknown keys are an error, so a
typo never passes silently. A card holds no thresholds: the served per-class thresholds
live in ``params.yaml`` (``thresholds``, ``thresholds_by_model``;
:mod:`candor_eval.detection.config`), their one home.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from candor_eval.common.errors import InputError, Problem
from candor_eval.common.manifest import HEX64, Entry, path_problem
from candor_eval.common.names import RULE, name_problem
from candor_eval.common.params import Integer, Number, load_yaml, validate
from candor_eval.common.unique import repeated
from candor_eval.common.verify import verify_entry

SHA256_PATTERN = HEX64.pattern


class Preprocess(BaseModel):
    """How a frame becomes the model's input tensor: the serving stack's preprocessing.

    - ``resize``: ``pillow-bilinear`` (Pillow ``Image.BILINEAR``, antialiased: what the demo
      models were trained on) or ``opencv-linear`` (OpenCV ``cv2.resize(..., INTER_LINEAR)``,
      what the Ultralytics and YOLOv5 predictors serve with);
    - ``exif``: ``ignore`` (the stored pixels as they are) or ``apply`` (rotate/flip by the
      EXIF orientation tag first, as OpenCV's ``imread`` and most loaders do);
    - ``colour``: channel order of the tensor, ``rgb`` or ``bgr``;
    - ``scale``: the tensor holds ``pixel / scale`` (the grey 114 border too).

    The defaults are what every card without a ``preprocess`` block gets, the demo models'
    preprocessing whatever the output layout: ``pillow-bilinear``, ``ignore``, ``rgb``, ``255``.
    An Ultralytics or YOLOv5 export needs ``preprocess: {resize: opencv-linear}``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    resize: Literal["pillow-bilinear", "opencv-linear"] = "pillow-bilinear"
    exif: Literal["apply", "ignore"] = "ignore"
    colour: Literal["rgb", "bgr"] = "rgb"
    scale: Number = Field(default=255.0, gt=0, allow_inf_nan=False)


class ModelCard(BaseModel):
    """A validated model card."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    onnx: str = Field(min_length=1)
    sha256: str = Field(pattern=SHA256_PATTERN)
    source: str | None = None
    description: str | None = None
    classes: list[str] | None = None
    input_size: list[Integer] | None = None
    output_layout: str | None = None
    preprocess: Preprocess = Preprocess()
    class_map: dict[str, str] | None = None
    training: dict[str, Any] | None = None
    training_sessions: list[str] | None = None
    eval_manifest_sha256: str | None = Field(default=None, pattern=SHA256_PATTERN)
    evaluation: dict[str, Any] | None = None

    @field_validator("classes")
    @classmethod
    def each_class_once(cls, v: list[str] | None) -> list[str] | None:
        """A class listed twice would make two output indices one name (ambiguous scoring)."""
        dup = repeated(v or ())
        if dup:
            raise ValueError(f"class name(s) listed more than once: {dup}")
        return v

    @field_validator("training_sessions")
    @classmethod
    def sessions_named_once(cls, v: list[str] | None) -> list[str] | None:
        """Each session a non-empty name, listed once (an empty name would match an unnamed session)."""
        if v is not None and (not all(s.strip() for s in v) or repeated(v)):
            raise ValueError(f"each training session a non-empty name listed once; repeated: {repeated(v)}")
        return v

    @field_validator("onnx")
    @classmethod
    def inside_the_models_folder(cls, v: str) -> str:
        """The ONNX file lies in the card's folder (a file outside it is one DVC does not track and a
        clone does not have); a symlink out of it is refused when the file is verified."""
        if (why := path_problem(v)) is not None:
            raise ValueError(f"not a file inside the card's folder ({why.split(' (')[0]}): {v!r}")
        return v

    @model_validator(mode="before")
    @classmethod
    def no_thresholds(cls, data: Any) -> Any:
        if isinstance(data, dict) and "thresholds" in data:
            raise ValueError("a model card holds no thresholds: the served thresholds live in the params file "
                             "(thresholds, thresholds_by_model.<model>); move them there")
        return data


def load_card(path: str | Path) -> ModelCard:
    """Read and validate a model card (errors name the card and the field)."""
    return validate(ModelCard, load_yaml(path), where=str(path))


def onnx_path(card_path: str | Path, card: ModelCard) -> Path:
    """Where the card's ONNX file lives: relative to the card's folder."""
    return Path(card_path).parent / card.onnx


def verify_cards(models: Path) -> tuple[dict[str, dict], list[Problem]]:
    """Verify (and fetch) the ONNX file of every card ``<models>/*.yaml``: its record per model
    (card, ONNX path, SHA-256), and every Problem (a bad card, a missing or changed file, a card whose file
    name is not a model name: :mod:`candor_eval.common.names`)."""
    problems: list[Problem] = []
    cards: dict[str, dict] = {}
    for card_file in sorted(models.glob("*.yaml")):
        if name_problem(card_file.stem) is not None:      # the model's name, a path and a dvc.yaml word
            problems.append(Problem(card_file.as_posix(), "the card's file name is not a model name",
                                    expected=f"models/<name>.yaml, the name {RULE}", got=repr(card_file.stem)))
            continue
        try:
            card = load_card(card_file)
        except InputError as err:
            problems.extend(err.problems)
            continue
        entry = Entry(path=card.onnx, sha256=card.sha256, bytes=None, source=card.source)
        onnx = onnx_path(card_file, card)
        if (p := verify_entry(entry, root=card_file.parent, where=onnx.as_posix())) is not None:
            problems.append(Problem(p.where, p.what + f" (declared by {card_file})", p.expected, p.got))
        cards[card_file.stem] = {"card": card_file.as_posix(), "onnx": onnx.as_posix(), "sha256": card.sha256}
    return cards, problems
