# Set-up commands documented in README.md. Both bootstrap .venv on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo aot test test-slow test-validation test-latest lint lock bench clean docs-screenshots

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
	$(BIN)/python -m pytest -q -m "not slow and not validation"
	$(BIN)/python -m pytest -q -m "validation and not slow" || [ $$? -eq 5 ]  # 5 = none collected

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m "slow"

test-validation: $(STAMP)
	$(BIN)/python -m pytest -q -m validation

# the reports' screenshots in docs/ (tests write them to a temporary folder unless asked like this)
docs-screenshots: $(STAMP)
	bash scripts/ensure-chromium.sh
	AIFABRIC_DOCS_SCREENSHOTS=1 $(BIN)/python -m pytest -q tests/test_report_browser.py

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
