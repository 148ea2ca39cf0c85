"""candor_eval/review/error_kinds.py: the descriptive "what kind of error changed" table of the report."""
from __future__ import annotations

from candor_eval.review.error_kinds import model_rows, report_lines


def doc(fp: int, kinds: tuple[int, ...], *, iou: float | None) -> dict:
    names = ("localisation", "class_confusion", "duplicate", "background", "both")
    return {"test": {"micro": {"fp": fp, "fn": 4, "tp": 2, "fp_anatomy": dict(zip(names, kinds)),
                               "fn_anatomy": {"aimed": 1, "missed": 3},
                               "tp_quality": {"tp": 2, "iou_median": iou, "iou_p10": iou, "edge_error_px": 1.5}}}}


def test_rows_and_differences():
    docs = {"detection.s.a": ("a.json", doc(5, (1, 1, 1, 1, 1), iou=0.8)),
            "detection.s.b": ("b.json", doc(3, (0, 1, 2, 0, 0), iou=None))}
    lines = report_lines(docs, {"s": ["a", "b"], "alone": ["a"]})
    assert list(lines) == ["s"]                      # a set of one model has nothing to compare
    table = lines["s"]
    assert "| fp | 5 | 3 | -2 |" in table
    assert "| fp duplicate | 1 | 2 | +1 |" in table
    assert "| tp iou_median | 0.8000 | n/a | n/a |" in table
    assert "| map50 | n/a | n/a | n/a |" in table      # no AP block in these documents


def test_a_missing_document_gives_not_available():
    assert all(v is None for _, v in model_rows(None, split="test"))
