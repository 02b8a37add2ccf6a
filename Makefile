# Set-up commands documented in README.md and docs/getting-started.md. Both bootstrap .venv on a
# fresh machine: demo installs what the CLI needs, test adds the dev and docs extras.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUN_STAMP := $(VENV)/.installed-run
STAMP := $(VENV)/.installed
# pytest-xdist workers: one per core, at most 4 (each holds its own compiled kernels and up to a few
# GiB of simulation state); JOBS=0 runs the suite in one process
JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -gt 4 ] && n=4; echo $$n)

.PHONY: demo aot test test-slow test-validation test-latest lint lock bench clean docs docs-serve docs-outputs docs-screenshots

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(RUN_STAMP): $(BIN)/python pyproject.toml requirements.lock
	@echo "==> installing aifabric and its pinned dependencies into $(VENV) (first run only)" >&2
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c requirements.lock -e .
	touch $(RUN_STAMP)

# the suite's extras: dev (pytest, ruff, mkdocs, ...) and ray (the sweep's Ray path, tested on a
# local head; under CI=1 a missing ray fails the suite instead of skipping that test)
$(STAMP): $(RUN_STAMP)
	$(BIN)/python -m pip install --quiet -c requirements.lock -e '.[dev,ray]'
	touch $(STAMP)

# The main job. Its first run compiles the numba kernels and measures both fabrics on the packet
# testbed (cached on disk afterwards): bench/RESULTS.md "Cold make demo" has the measured time, and
# why the ahead-of-time build (aot) is not part of it: it costs more than it saves here.
demo: $(RUN_STAMP)
	@echo "==> aifabric compare --report report.html: the first run compiles the simulator kernels and" >&2
	@echo "    measures both fabrics on the packet-level testbed (about a minute on 2 cores; cached" >&2
	@echo "    afterwards, later runs take seconds)" >&2
	$(BIN)/aifabric compare --report report.html

# optional: the packet kernel and the path model's BFS compiled ahead of time (numba.pycc), so that
# simulate starts without numba; says "current" when the build matches the sources.
aot: $(RUN_STAMP)
	@echo "==> compiling the simulator kernels ahead of time (once; 20 s to 2.5 minutes on 2 cores)" >&2
	$(BIN)/python -m aifabric.sim.aot

test: $(STAMP)
	bash scripts/ensure-chromium.sh
	$(MAKE) --no-print-directory lint
	$(BIN)/mkdocs build --strict --quiet --site-dir site
	$(BIN)/python -m pytest -q -n $(JOBS) -m "not slow and not validation"
	$(BIN)/python -m pytest -q -n $(JOBS) -m "validation and not slow" || [ $$? -eq 5 ]  # 5 = none collected

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -n $(JOBS) -m "slow"

test-validation: $(STAMP)
	$(BIN)/python -m pytest -q -n $(JOBS) -m validation

# the reports' screenshots in docs/ (tests write them to a temporary folder unless asked like this)
docs-screenshots: $(STAMP)
	bash scripts/ensure-chromium.sh
	AIFABRIC_DOCS_SCREENSHOTS=1 $(BIN)/python -m pytest -q tests/test_report_browser.py

lint: $(STAMP)
	$(BIN)/ruff check src tests scripts $(wildcard bench)
	$(BIN)/ruff format --check src tests scripts $(wildcard bench)
	$(BIN)/lint-imports --no-cache

# The suite on the newest versions the pyproject ranges allow (not the lock), in its own venv.
test-latest:
	rm -rf .venv-latest && $(PYTHON) -m venv .venv-latest
	.venv-latest/bin/python -m pip install --quiet --upgrade pip
	.venv-latest/bin/python -m pip install --quiet --upgrade -e '.[dev,ray]'
	.venv-latest/bin/python -m pytest -q -m "not slow"

# Regenerate requirements.lock from a fresh venv with the newest allowed versions.
lock:
	rm -rf .venv-lock && $(PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install --quiet --upgrade pip
	.venv-lock/bin/python -m pip install --quiet -e '.[dev,ray]'
	{ head -2 requirements.lock; .venv-lock/bin/pip freeze --exclude-editable | grep -v '^aifabric'; } > requirements.lock.new
	mv requirements.lock.new requirements.lock && rm -rf .venv-lock

# The documentation site (mkdocs.yml, docs/): build it into site/, serve it with live reload, or
# regenerate the outputs shown in README.md and docs/ from real runs (scripts/docs_outputs.py).
docs: $(STAMP)
	$(BIN)/mkdocs build --strict --site-dir site

docs-serve: $(STAMP)
	$(BIN)/mkdocs serve

docs-outputs: $(STAMP)
	$(BIN)/python scripts/docs_outputs.py

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) .venv-latest .venv-lock build dist site *.egg-info src/*.egg-info .pytest_cache
