# The two set-up commands of the README, and their parts.
#   make serve   serve the bundled slack example on 127.0.0.1:18765
#   make test    build everything and run every test (Rust and Python)
#   make lint    rustfmt and clippy, as CI runs them

VENV ?= .venv
PYTHON ?= python3
COMPONENTS := guests/target/wasm32-wasip2/release
ENVHOST := target/release/envhost

.PHONY: serve test lint guests host venv

guests:
	rustup target add wasm32-wasip2
	cargo build --release --target wasm32-wasip2 --manifest-path guests/Cargo.toml

host:
	cargo build --release --workspace

serve: guests host
	MCP_HOST=127.0.0.1 $(ENVHOST) serve $(COMPONENTS)/slack.wasm

venv: $(VENV)/.installed

$(VENV)/.installed: tests/python/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -r tests/python/requirements.txt
	touch $@

test: guests host venv
	cargo test --release --workspace
	ENVHOST_BIN=$(ENVHOST) $(VENV)/bin/python -m pytest -q tests/python

lint:
	cargo fmt --all --check
	cargo fmt --manifest-path guests/Cargo.toml --all --check
	cargo clippy --release --workspace --all-targets -- -D warnings
	cargo clippy --release --target wasm32-wasip2 --manifest-path guests/Cargo.toml -- -D warnings
