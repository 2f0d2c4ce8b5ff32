# Everything a fresh machine needs comes from here: `make localnet` and `make test` install first.
COMETBFT_VERSION := v0.38.26
PYTHON ?= python3
GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
VENV := .venv
BIN := .bin
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
COMETBFT := $(BIN)/cometbft
COMETBFT_STAMP := $(BIN)/.cometbft-$(COMETBFT_VERSION)
COSMOVISOR := $(BIN)/cosmovisor
COSMOVISOR_PIN := tools/cosmovisor/go.mod tools/cosmovisor/go.sum
PROTOGEN := protogen
PROTOGEN_STAMP := $(PROTOGEN)/.generated
PROTOS := $(shell find proto -name '*.proto')
LOCALNET_HOME ?= localnet/home
BROWSER := /usr/bin/chromium /usr/bin/chromedriver
NATIVE := $(shell find native -name '*.rs' -o -name Cargo.toml)
COSMJS := clients/js
COSMJS_STAMP := $(COSMJS)/node_modules/.installed
DOCS_SOURCES := /usr/share/doc/python3-doc
CORPUS := data/python-docs/meta.json
export PATH := $(HOME)/.cargo/bin:$(PATH)

.PHONY: install localnet localnet-stop localnet-status test check test-unit test-localnet bench bench-iavl bench-litellm clean

install: $(STAMP) $(COMETBFT_STAMP) $(COSMOVISOR) $(PROTOGEN_STAMP) $(COSMJS_STAMP) $(BROWSER) $(CORPUS)

# `pip install -e .` also builds the state tree's native module (native/jmt) with cargo.
$(STAMP): pyproject.toml $(NATIVE)
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -e '.[test]'
	touch $@

$(COMETBFT_STAMP):
	mkdir -p $(BIN)
	GOBIN=$(CURDIR)/$(BIN) $(GO) install github.com/cometbft/cometbft/cmd/cometbft@$(COMETBFT_VERSION)
	$(COMETBFT) version
	rm -f $(BIN)/.cometbft-* && touch $@

# Cosmovisor, unchanged, to run a node through software upgrades (docs/operators.md): its version and every dependency's
# pinned by tools/cosmovisor's go.mod and go.sum.
$(COSMOVISOR): $(COSMOVISOR_PIN)
	mkdir -p $(BIN)
	cd tools/cosmovisor && GOBIN=$(CURDIR)/$(BIN) $(GO) install cosmossdk.io/tools/cosmovisor/cmd/cosmovisor
	DAEMON_NAME=gonkad DAEMON_HOME=/nonexistent $(COSMOVISOR) version 2>&1 | head -1
	touch $@

# Debian's headless browser and its WebDriver, for the network page's test (tests/test_rest_localnet.py); apt only
# where either is missing.
$(BROWSER) &:
	apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium chromium-driver

# The training corpus (diloco/README.md, "Data"): Debian's Python documentation, prepared into token shards
# (under a second; diloco.prepare skips when they match the installed sources).
$(DOCS_SOURCES):
	apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends python3-doc

$(CORPUS): $(STAMP) $(DOCS_SOURCES) diloco/prepare.py
	PYTHONPATH=$(CURDIR) $(PY) -m diloco.prepare > /dev/null

# Python code for proto/gonka/**, never committed: regenerated when a .proto or the toolchain changes.
$(PROTOGEN_STAMP): $(STAMP) $(PROTOS) proto/generate.py
	$(PY) proto/generate.py
	touch $@

# CosmJS, pinned by the committed lock file, for tests/test_cosmjs_localnet.py (a Cosmos client, unchanged).
$(COSMJS_STAMP): $(COSMJS)/package.json $(COSMJS)/package-lock.json
	cd $(COSMJS) && npm ci --no-audit --no-fund
	touch $@

localnet: install
	$(PY) -m gonkad localnet start --home $(LOCALNET_HOME) --wait 120  # settings: localnet/settings.toml
	$(PY) -m gonkad localnet watch --home $(LOCALNET_HOME) --seconds 10
	@echo "localnet running in $(LOCALNET_HOME); 'make localnet-status' or 'make localnet-stop'"

localnet-status: install
	$(PY) -m gonkad localnet status --home $(LOCALNET_HOME)

localnet-stop: install
	$(PY) -m gonkad localnet stop --home $(LOCALNET_HOME)

# The unit tests on UNIT_WORKERS processes (pytest-xdist; each test's ports and folders are its own), then the
# localnet tests one after another (each starts real networks: side by side they would race for the CPU). Each run
# collects only its own group's files: importing the other group's costs each process seconds of CPU for tests it
# then deselects (the markers still select, tests/conftest.py).
UNIT_WORKERS ?= 2
# Localnet files run two at a time, a file to a worker (each shares one network): they mostly wait for blocks.
# The longest first, so that no long one is left running alone at the end.
LOCALNET_WORKERS ?= 2
LOCALNET_LONGEST := $(addprefix tests/test_,$(addsuffix _localnet.py,sprint train_and_serve gov epochs bls inference paid_answers))
LOCALNET_TESTS := $(LOCALNET_LONGEST) $(filter-out $(LOCALNET_LONGEST),$(sort $(wildcard tests/*_localnet.py)))
PYTEST_UNIT := $(PY) -m pytest -q -m "not localnet" -n $(UNIT_WORKERS) --ignore-glob='*_localnet.py'
PYTEST_LOCALNET := $(PY) -m pytest -q -m localnet -n $(LOCALNET_WORKERS) --dist loadfile $(LOCALNET_TESTS)

test: check
	$(PYTEST_UNIT)
	$(PYTEST_LOCALNET)

# The linter, the formatter's check and the type check (settings in pyproject.toml); `make test` runs them first.
check: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

test-unit: install
	$(PYTEST_UNIT)

test-localnet: install
	$(PYTEST_LOCALNET)

bench: install
	$(PY) bench/bench_store.py
	$(PY) bench/bench_app.py
	$(PY) bench/bench_mlnode.py
	$(PY) bench/bench_verify.py
	$(PY) bench/bench_sprint.py
	$(PY) bench/bench_agent.py

# The Cosmos SDK's own state tree (IAVL, bench/iavl, a Go program) on bench_store.py's workload, beside ours and
# the bare LevelDB batch. Built here only, never by `install`: the chain does not need it.
IAVL_BENCH := bench/iavl/iavl-bench
$(IAVL_BENCH): bench/iavl/main.go bench/iavl/go.mod bench/iavl/go.sum
	cd bench/iavl && $(GO) build -o iavl-bench .

bench-iavl: install $(IAVL_BENCH)
	$(PY) bench/bench_store.py --iavl

# The TA beside a LiteLLM proxy over the same fake backend; LiteLLM in its own venv, never in $(VENV).
LITELLM_VENV := .venv-litellm
$(LITELLM_VENV)/.installed: bench/requirements-litellm.txt
	$(PYTHON) -m venv $(LITELLM_VENV)
	$(LITELLM_VENV)/bin/pip install --quiet --upgrade pip
	$(LITELLM_VENV)/bin/pip install --quiet -r bench/requirements-litellm.txt
	touch $@

bench-litellm: install $(LITELLM_VENV)/.installed
	$(PY) bench/bench_agent.py --litellm --litellm-venv $(LITELLM_VENV)

clean:
	rm -rf $(VENV) $(BIN) $(PROTOGEN) build *.egg-info $(IAVL_BENCH)
