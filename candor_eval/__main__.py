"""``python -m candor_eval``: the ``candor`` command line (:mod:`candor_eval.cli`)."""
from candor_eval.cli import entry

entry()
