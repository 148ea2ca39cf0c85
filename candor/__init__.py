"""candor: a reproducible evaluation pipeline for vision systems (library; stages/ holds the DVC entry points)."""
