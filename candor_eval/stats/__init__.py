"""Statistics over independent units: rates with their intervals over clusters, the exact
sign-flip test of paired per-cluster differences (exact McNemar with one unit per cluster), exact
power, Holm within families, the outcome-table contract and its paired units. Pure mathematics:
nothing here imports :mod:`candor_eval.review`, which builds what a reviewer reads on top of it."""
