"""The detector track: its params, data set frames and model cards here; ``inference`` (model ->
raw boxes) and ``scoring`` (labels, NMS, matching, metrics, plots) below; latency timing."""
