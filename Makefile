# anonstream — the two commands: `make demo` and `make test` (each sets up what it needs).
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
RUNTIME_STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
DEMO_OUT := out/demo

.PHONY: setup setup-test demo test test-chaos test-chaos-scale unit up down bench clean

setup: $(RUNTIME_STAMP)
setup-test: $(TEST_STAMP)

# Runtime only (what `make demo` and `make up` need): the package without extras, WordNet, the ONNX export and the
# static table (ANONSTREAM_EMBED_BACKEND=static), each built once from the shipped model into its cache, offline.
# Rebuilt when pyproject.toml changes; pip's cache keeps re-installs cheap (torch is large).
$(RUNTIME_STAMP): pyproject.toml deploy/system-deps.sh
	deploy/system-deps.sh
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip setuptools wheel
	$(BIN)/pip install --quiet -e .
	$(BIN)/python -m anonstream.embedding.onnx  # the embedding model's ONNX export, once into the cache
	$(BIN)/python -m anonstream.embedding.static  # the static backend's table distilled from it (~100 s, once)
	@touch $@

# On top of the runtime: the test extras, and chromium + prometheus for the dashboard tests.
$(TEST_STAMP): $(RUNTIME_STAMP)
	deploy/system-deps.sh --test
	$(BIN)/pip install --quiet -e '.[test]'
	@touch $@

demo: setup
	@mkdir -p $(DEMO_OUT)
	$(BIN)/anonstream run --input data/sample/tab-train-100.jsonl --output $(DEMO_OUT)/sanitized.jsonl --report $(DEMO_OUT)/report.json
	@echo "sanitized documents: $(DEMO_OUT)/sanitized.jsonl"
	@echo "report:              $(DEMO_OUT)/report.json"
	@echo "dead letters:        $(DEMO_OUT)/sanitized.dead-letter.jsonl"

# Unit and integration tests; starts Kafka and Redis (deploy/infra.sh) and stops them afterwards.
test: setup-test
	deploy/run-tests.sh

# Chaos suite: kills, broker and Redis restarts, hostile input, leakage with one process per stage, then the
# multi-instance phase (two processes per stage on the Redis Cluster with exactly-once). Its own Kafka, Redis and
# Redis Cluster. Figures: benchmarks/results/reliability.md.
test-chaos: setup-test
	tests/chaos/run.sh

# The multi-instance phase alone: two processes per stage on the Redis Cluster with exactly-once, kills and restarts.
test-chaos-scale: setup-test
	tests/chaos/run.sh -k two_instances_per_stage

unit: setup-test
	$(BIN)/python -m pytest -q tests/unit

up: setup
	deploy/services.sh up

down:
	deploy/services.sh down

bench: setup-test
	$(BIN)/pip install --quiet -e '.[test,bench]'
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf out .run .pytest_cache
