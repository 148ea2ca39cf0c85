"""Scoring detections: labels, NMS, matching, metrics, plots."""
