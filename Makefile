# The only entry points: make demo | test | bench | rtl | build | clean.
VENV := .venv
PY := $(VENV)/bin/python
# maturin needs to know which virtualenv to install into.
export VIRTUAL_ENV := $(abspath $(VENV))

RUST_SOURCES := $(shell find crates -name '*.rs' -o -name Cargo.toml) Cargo.toml Cargo.lock

.PHONY: build demo test bench rtl clean

$(VENV)/.installed: requirements.txt requirements-dev.txt
	python3 -m venv $(VENV)
	$(PY) -m pip install -q -U pip
	$(PY) -m pip install -q -r requirements-dev.txt
	touch $@

# The Python sources are installed editable, so only Rust or packaging changes need a rebuild.
$(VENV)/.built: $(VENV)/.installed $(RUST_SOURCES) pyproject.toml
	$(VENV)/bin/maturin develop --profile dist
	touch $@

build: $(VENV)/.built

demo: build
	$(VENV)/bin/retx reproduce melo-fig5a --quick

test: build
	cargo test --release -p retx
	$(VENV)/bin/pytest -q tests/python

# Each bench in a process of its own, so each reports its own peak memory.
bench:
	cargo build --profile dist -p retx --bin retx-bench
	./target/dist/retx-bench fabric
	./target/dist/retx-bench hpcc
	./target/dist/retx-bench ndp
	./target/dist/retx-bench dragonfly
	./target/dist/retx-bench uet
	./target/dist/retx-bench parallel ndp-ws
	./target/dist/retx-bench parallel uet-perm
	./target/dist/retx-bench validate

# Synthesizes rtl/ with yosys (generic and Xilinx 7-series): results/rtl/resources.parquet and
# the table on stdout (docs/HARDWARE.md). Needs yosys (.ci/run installs it).
rtl: build
	$(PY) -m retx.synth rtl results/rtl

clean:
	rm -rf $(VENV) target results .pytest_cache
	find python tests -name __pycache__ -type d -prune -exec rm -rf {} +
