# Set-up commands documented in README.md. Both bootstrap .venv on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-validation lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/aifabric compare --report report.html

test: $(STAMP)
	bash scripts/ensure-chromium.sh
	$(BIN)/ruff check src tests $(wildcard bench)
	$(BIN)/python -m pytest -q -m "not slow and not validation"
	$(BIN)/python -m pytest -q -m "validation and not slow" || [ $$? -eq 5 ]  # 5 = none collected

test-validation: $(STAMP)
	$(BIN)/python -m pytest -q -m validation

lint: $(STAMP)
	$(BIN)/ruff check src tests $(wildcard bench)
	$(BIN)/ruff format --check src tests $(wildcard bench)

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) build dist *.egg-info src/*.egg-info .pytest_cache
