"""What a reviewer reads: the stats stage's collection and ``metrics/stats.json``, the predeclared
release gate and ``metrics/gate.json``, the report, the headline metrics, the forest plots, the
revision compare and the sweep ranking. Built on :mod:`candor_eval.stats` (the mathematics), which
imports nothing of this package; the gate's detector edge (model cards, detection sets) is here.
"""
