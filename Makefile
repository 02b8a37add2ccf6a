# Set-up commands documented in README.md. Both bootstrap .venv on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# pytest-xdist workers: one per core, at most 4 (each holds its own compiled kernels and up to a few
# GiB of simulation state); JOBS=0 runs the suite in one process
JOBS ?= $(shell n=$$(nproc 2>/dev/null || echo 2); [ $$n -gt 4 ] && n=4; echo $$n)

.PHONY: demo aot test test-slow test-validation test-latest lint lock bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml requirements.lock
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c requirements.lock -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/aifabric compare --report report.html

# optional: the packet kernel compiled ahead of time (simulate starts without numba; README "Speed")
aot: $(STAMP)
	$(BIN)/python -m aifabric.sim.aot

test: $(STAMP)
	bash scripts/ensure-chromium.sh
	$(MAKE) --no-print-directory lint
	$(BIN)/python -m pytest -q -n $(JOBS) -m "not slow and not validation"
	$(BIN)/python -m pytest -q -n $(JOBS) -m "validation and not slow" || [ $$? -eq 5 ]  # 5 = none collected

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -n $(JOBS) -m "slow"

test-validation: $(STAMP)
	$(BIN)/python -m pytest -q -n $(JOBS) -m validation

lint: $(STAMP)
	$(BIN)/ruff check src tests $(wildcard bench)
	$(BIN)/ruff format --check src tests $(wildcard bench)
	$(BIN)/lint-imports --no-cache

# The suite on the newest versions the pyproject ranges allow (not the lock), in its own venv.
test-latest:
	rm -rf .venv-latest && $(PYTHON) -m venv .venv-latest
	.venv-latest/bin/python -m pip install --quiet --upgrade pip
	.venv-latest/bin/python -m pip install --quiet --upgrade -e '.[dev]'
	.venv-latest/bin/python -m pytest -q -m "not slow"

# Regenerate requirements.lock from a fresh venv with the newest allowed versions.
lock:
	rm -rf .venv-lock && $(PYTHON) -m venv .venv-lock
	.venv-lock/bin/python -m pip install --quiet --upgrade pip
	.venv-lock/bin/python -m pip install --quiet -e '.[dev]'
	{ head -2 requirements.lock; .venv-lock/bin/pip freeze --exclude-editable | grep -v '^aifabric'; } > requirements.lock.new
	mv requirements.lock.new requirements.lock && rm -rf .venv-lock

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) .venv-latest .venv-lock build dist *.egg-info src/*.egg-info .pytest_cache
