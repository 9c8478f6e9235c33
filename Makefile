# Two commands on a fresh machine: `make demo` and `make test`. Both use .venv.
# `make demo` installs the core package only (no test extras, no system packages);
# `make test` installs everything the tests need: `.[dev]`, the model, the browser.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
CORE   := $(VENV)/.installed-core
STAMP  := $(VENV)/.installed
DEMO   := reports/demo

.PHONY: demo test lint bench docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

# the demo's environment: indexcheck and its core dependencies, nothing else; not
# byte-compiled at install (half the install's CPU): Python compiles what the demo imports
$(CORE): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-compile -e .
	touch $(CORE)

# the tests' environment: every extra, the model checked, the headless browser; not
# byte-compiled at install either (Python compiles the part of the SDKs the tests import)
$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet --no-compile -e '.[dev]'
	$(BIN)/indexcheck model status >/dev/null 2>&1 || $(BIN)/indexcheck model install
	bash scripts/setup_browser.sh
	sh scripts/setup_redis_stack.sh $(VENV)
	touch $(STAMP) $(CORE)

## demo: build a correct and a positional-bug FAISS index of the fixture KB, check both
demo: $(CORE)
	$(BIN)/python scripts/build_fixtures.py index --out $(DEMO)/good-index \
		--buggy-out $(DEMO)/buggy-index --force
	@echo; echo "== check-index on the hash-keyed index (expect PASS, exit 0)"
	$(BIN)/indexcheck check-index --store faiss:$(DEMO)/good-index --chunks fixtures/chunks.jsonl \
		--all --json $(DEMO)/good.json --report $(DEMO)/good
	@echo; echo "== check-index on the positional-cache index (expect FAIL with the shift diagnosed, exit 1)"
	$(BIN)/indexcheck check-index --store faiss:$(DEMO)/buggy-index --chunks fixtures/chunks.jsonl \
		--sample 8 --json $(DEMO)/buggy.json --report $(DEMO)/buggy; test $$? -eq 1
	@echo; echo "demo reports: $(DEMO)/good/check-index.md and $(DEMO)/buggy/check-index.md"

## test: the whole test suite (starts its own PostgreSQL, emulators and embedded engines),
## on TEST_WORKERS processes (pytest-xdist); the tests that start Ray share one of them
TEST_WORKERS ?= 2
test: $(STAMP)
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadgroup

lint: $(STAMP)
	$(BIN)/ruff check indexcheck tests scripts
	$(BIN)/ruff format --check indexcheck tests scripts
	$(BIN)/mypy indexcheck/commands indexcheck/stores indexcheck/embedders

## docs: build the documentation site into site/ (fails on a broken link or reference)
docs: $(STAMP)
	$(BIN)/mkdocs build --strict

bench: $(STAMP)
	$(BIN)/python scripts/bench_check_index.py

clean:
	rm -rf $(VENV) $(DEMO) site .pytest_cache .mypy_cache .ruff_cache
