"""candor: a DVC-driven, reproducible evaluation pipeline for vision systems.

One module per DVC stage (``candor <name>``); the rules live in small
pure modules named after their concept.
"""
