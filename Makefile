# candor: two commands on a fresh machine (Python 3.11, pip, git):
#   make repro   create .venv, install requirements.txt, run the whole pipeline (dvc repro), render the PNGs
#   make test    install the test requirements into the same venv, run ruff and mypy, then pytest
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
export PATH := $(abspath $(BIN)):$(PATH)
export DVC_NO_ANALYTICS := 1

.PHONY: repro test check gate bench bench-results latency verify-inference figures plots clean-venv sweep

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# requirements.txt is the runtime dependency list of the candor-eval package (pyproject.toml reads it);
# the package itself is installed editable, so candor_eval/ edits take effect without reinstalling
$(VENV)/.runtime: requirements.txt pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $@

$(VENV)/.test: requirements-test.txt requirements-ocr.txt requirements-nodeps.txt requirements-cluster.txt $(VENV)/.runtime
	$(BIN)/python -m pip install --quiet -r requirements-test.txt
	$(BIN)/python -m pip install --quiet --no-deps --require-hashes -r requirements-ocr.txt
	$(BIN)/python -m pip install --quiet --no-deps --require-hashes -r requirements-nodeps.txt
	$(BIN)/python -m pip install --quiet -r requirements-cluster.txt
	touch $@

repro: $(VENV)/.runtime
	$(BIN)/dvc repro
	$(BIN)/candor figures

# PNG figures for people (plots/figures/, git-ignored: PNG bytes depend on the matplotlib build)
figures: $(VENV)/.runtime
	$(BIN)/candor figures

# The plots page dvc_plots/index.html (git-ignored), with Vega loaded from plots/html/vendor/ so it
# works offline (plots/html/README.md). It must stay in dvc_plots/: its script paths are relative.
plots: $(VENV)/.runtime
	$(BIN)/dvc plots show --html-template plots/html/template.html

# The linter and the type checker first (configuration: pyproject.toml), then the test suite on two
# processes (pytest-xdist; the slow tests of a module on one of them, in turn: tests/conftest.py)
test: $(VENV)/.test
	$(BIN)/ruff check candor_eval tests bench tools
	$(BIN)/mypy
	$(BIN)/python -m pytest -n 2 --dist loadgroup $(PYTEST_ARGS)

# The inner loop while working: the same lint and types, and every test not marked slow (no clone,
# no real pipeline), on two processes
check: $(VENV)/.test
	$(BIN)/ruff check candor_eval tests bench tools
	$(BIN)/mypy
	$(BIN)/python -m pytest -m "not slow" -n 2 --dist loadgroup $(PYTEST_ARGS)

# The predeclared release gate (params.yaml: gate; docs/stats.md): reproduce up to the stats
# stage (which evaluates the gate), then evaluate it again with the machine's latency, print every
# criterion, exit non-zero when the candidate fails (for CI). The stats stage itself always
# exits 0 so that `make repro` records gate.json instead of stopping.
gate: $(VENV)/.runtime
	$(BIN)/dvc repro stats
	$(BIN)/candor gate run --latency metrics/latency --out build/gate-with-latency.json
	$(BIN)/candor gate check --gate build/gate-with-latency.json

clean-venv:
	rm -rf $(VENV)

# Machine-specific latency diagnostic (diagnostics/dvc.yaml; nothing committed or pushed).
# Its dvc.lock is machine-specific too, so it is removed: every `make latency` measures afresh.
latency: $(VENV)/.runtime
	$(BIN)/dvc repro diagnostics/dvc.yaml
	rm -f diagnostics/dvc.lock

# Rerun every model and check the committed (canonical) raw detections within the declared
# tolerance (params.yaml: reinference; README "Reproducibility: what is identical where"). Exits 1 on a real disagreement.
verify-inference: $(VENV)/.runtime
	$(BIN)/dvc repro fetch
	$(BIN)/candor verify-inference

# Benchmarks against peers (bench/; peers are bench-only requirements). Writes bench/RESULTS.md.
bench: $(VENV)/.test
	$(BIN)/python -m pip install --quiet -r bench/requirements.txt
	$(BIN)/python bench/run.py $(BENCH_ARGS)

# The same, writing the committed bench/RESULTS.md (the figures README and docs link to)
bench-results: $(VENV)/.test
	$(BIN)/python -m pip install --quiet -r bench/requirements.txt
	$(BIN)/python bench/run.py --results bench/RESULTS.md $(BENCH_ARGS)

# A queued multi-value sweep (README "Sweeps"): one experiment per value through DVC's queue, run
# JOBS at a time, then the experiments ranked by SORT (a headline metric of the dev split: thresholds are
# tuned on dev, never on the test split, which gives the verdict only). Inference never reruns
# for a threshold: each experiment reruns scoring and what reads it. It waits until each of its
# experiments has finished, prints each failed one's error, and then exits 1 when any failed.
#   make sweep PARAM=thresholds.deer VALUES="0.15 0.25 0.3"
PARAM ?= thresholds.deer
VALUES ?= 0.15 0.2 0.25
JOBS ?= 2
SORT ?= metrics/headline.json:detection.detector.demo-v2.dev.f1
comma := ,
sweep: $(VENV)/.runtime
	@set -e; queued=$$($(BIN)/dvc exp run --queue -S '$(PARAM)=$(subst $() ,$(comma),$(strip $(VALUES)))'); \
	echo "$$queued"; names=$$(echo "$$queued" | sed -n "s/^Queued experiment '\([^']*\)'.*/\1/p" | paste -sd'|'); \
	test -n "$$names"; $(BIN)/dvc queue start -j $(JOBS); \
	while $(BIN)/dvc queue status | grep -E " ($$names) " | grep -qvE ' (Success|Failed)$$'; do sleep 2; done; \
	failed=$$($(BIN)/dvc queue status | grep -E " ($$names) .* Failed$$" | awk '{print $$2}'); \
	for n in $$failed; do echo "experiment $$n failed:" >&2; $(BIN)/dvc queue logs $$n | grep -E '^(error|hint): ' >&2 || true; done; \
	$(BIN)/candor sweep-table --param $(PARAM) --sort $(SORT); \
	if [ -n "$$failed" ]; then echo "error: make sweep: failed experiment(s):" $$failed "(dvc queue logs <name>)" >&2; exit 1; fi
