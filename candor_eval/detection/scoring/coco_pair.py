"""Standalone COCO mode: score any COCO ground-truth / results pair with the pipeline's kernel.

The scene is :func:`candor_eval.detection.scoring.scene.coco_scene` (one split ``all``, size
bands in original pixels). Without thresholds every detection counts (no threshold, no
NMS) and ``match`` takes its defaults (:mod:`candor_eval.detection.match_defaults`); the
result is ``{"all": <summarise block>, "ap": <COCO AP block>, "counts": <the k of n behind every
rate>}``.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from candor_eval.common.counts import KEY as COUNTS_KEY
from candor_eval.common.counts import counts_block
from candor_eval.detection.match_defaults import BAND_EDGES, MATCH_IOU, MIN_SUPPORT
from candor_eval.detection.scoring.box_quality import quality_by_class, tp_box_errors
from candor_eval.detection.scoring.coco_ap import accumulate, average_precision
from candor_eval.detection.scoring.columns import DetectionTable, GroundTruth
from candor_eval.detection.scoring.metrics import operating_point, rate_counts
from candor_eval.detection.scoring.nms_match import score_served
from candor_eval.detection.scoring.scene import coco_scene
from candor_eval.detection.scoring.tally import summarise
from candor_eval.detection.served import Served, ServedNms


def score_coco_pair(gt: GroundTruth, det: DetectionTable, *, class_thresholds: np.ndarray | None = None,
                    nms_iou: float | None = None, agnostic: bool = False, max_det: int | None = None,
                    iou: float = MATCH_IOU, min_support: int = MIN_SUPPORT,
                    critical: Sequence[str] = (), bands: Sequence[float] = BAND_EDGES,
                    image_map: Mapping[int, int] | None = None, category_map: Mapping[int, int] | None = None) -> dict:
    """Metrics of ``det`` against ``gt``; ``class_thresholds`` ``(C,)``: the threshold of each class of ``gt.classes``
    (None: every detection counts), ``nms_iou`` None: no NMS; ``agnostic`` and ``max_det``: the
    rest of the served NMS (:class:`~candor_eval.detection.served.ServedNms`). ``image_map`` and ``category_map``
    (COCO id -> frame / class index, :func:`~candor_eval.detection.scoring.coco.read_coco`) give the AP's
    tie order across images and its category ids (default: frame order, ids 1.. in class order).

    The ``ap`` block (:mod:`candor_eval.detection.scoring.coco_ap`) is of the results as given, every
    detection, no threshold and no NMS: what pycocotools scores."""
    scene = coco_scene(gt)
    thresholds = np.full(len(gt.classes), -np.inf) if class_thresholds is None else class_thresholds
    served = Served(thresholds, ServedNms(nms_iou, max_det=max_det, agnostic=agnostic), match_iou=iou)
    # without NMS or cap the floor's boxes are the results as given: their AP matches come with its match
    as_given = nms_iou is None and max_det is None
    floor, s = score_served(scene, frame=det.frame, cls=det.cls, boxes=det.boxes, score=det.score, served=served,
                            ap=as_given)
    op = operating_point(s, served)
    block = summarise(s, op, frame_mask=np.ones(len(gt.frames), bool), min_support=min_support,
                      critical=list(critical), band_edges=list(bands))
    tp = np.flatnonzero(op.tp)
    tp_iou, edge = tp_box_errors(s.boxes[tp], scene.label_boxes[s.label[tp]], scene.scale[s.frame[tp]])
    block["micro"]["tp_quality"], per_class = quality_by_class(tp_iou, edge, s.cls[tp], classes=scene.classes)
    for name, q in per_class.items():
        block["per_class"][name]["tp_quality"] = q
    frame_of = sorted(image_map.items()) if image_map else [(i, i) for i in range(len(gt.frames))]
    image_order = np.empty(len(gt.frames), np.int64)
    image_order[[f for _, f in frame_of]] = np.arange(len(frame_of))
    cat_ids = ({c: cid for cid, c in category_map.items()} if category_map
               else {c: c + 1 for c in range(len(gt.classes))})
    if floor.ap is not None:
        regular = ~gt.label_crowd
        ap = accumulate(floor.ap, classes=gt.classes, image_order=image_order,
                        n_labels=np.bincount(gt.label_class[regular], minlength=len(gt.classes)))
    else:
        ap = average_precision(classes=gt.classes, label_frame=gt.label_frame, label_class=gt.label_class,
                               label_boxes=gt.label_boxes, label_crowd=gt.label_crowd, det_frame=det.frame,
                               det_class=det.cls, det_boxes=det.boxes, det_score=det.score, image_order=image_order)
    return {"all": block, "ap": ap.block([cat_ids[c] for c in range(len(gt.classes))]),
            COUNTS_KEY: counts_block(rate_counts({"all": block}))}
