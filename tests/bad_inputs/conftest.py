"""The corpus's ``files/`` are laid into a workspace, never collected: a case's Python module may exit at import
(``sys.exit(3)``, ``os._exit(0)``), which ``--doctest-modules`` would do to the test process itself."""
collect_ignore_glob = ["*/files/*"]
