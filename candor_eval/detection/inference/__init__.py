"""ONNX inference: letterbox, run, decode, one model over a data set (locally or on Ray); the raw-detections
file they write is the shared contract :mod:`candor_eval.detection.detections_file`."""
