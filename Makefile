# One entry point for people and CI. Every target creates the virtual environment first if needed.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)

.PHONY: install demo test check lint types clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	rm -f $(VENV)/.installed-* && touch $(STAMP)

install: $(STAMP)

## The demo: start Neo4j, load the sample corpus, build every layer, ask questions.
demo: $(STAMP)
	scripts/system-deps
	$(BIN)/strata demo

## The whole test suite against a real Neo4j (provisioned locally when none is given).
test: $(STAMP)
	scripts/system-deps --test
	$(BIN)/python -m pytest

## Lint and type checks, as CI runs them.
check: lint types

lint: $(STAMP)
	$(BIN)/ruff check kg loaders reasoning cypher tests

types: $(STAMP)
	$(BIN)/mypy

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
