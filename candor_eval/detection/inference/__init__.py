"""ONNX inference: letterbox, run, decode, and the raw-detections file."""
