"""candor: a reproducible evaluation pipeline for vision systems (the ``candor`` command: :mod:`candor_eval.cli`;
``candor_eval.stages`` holds the DVC entry points)."""
