# The two set-up commands of the README, and their parts.
#   make serve   serve the bundled slack example on 127.0.0.1:18765
#   make test    build everything and run every test (Rust and Python)
#   make lint    rustfmt and clippy, as CI runs them
#   make guests-js   the JavaScript guests (npm ci, then componentize-qjs): slack-js.wasm

VENV ?= .venv
PYTHON ?= python3
COMPONENTS := guests/target/wasm32-wasip2/release
ENVHOST := target/release/envhost

.PHONY: serve test lint guests guests-rust guests-js test-js host venv

guests: guests-rust guests-js

guests-rust:
	rustup target add wasm32-wasip2
	cargo build --release --target wasm32-wasip2 --manifest-path guests/Cargo.toml

# npm ci installs exactly package-lock.json (the SDK from sdk-guest/js, componentize-qjs from npm).
guests-js:
	cd guests/slack-js && npm ci --no-audit --no-fund --loglevel=error
	mkdir -p $(COMPONENTS)
	cd guests/slack-js && npm run --silent build

# The JavaScript SDK's unit tests (node's test runner).
test-js:
	cd sdk-guest/js && npm test

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
	$(MAKE) test-js
	ENVHOST_BIN=$(ENVHOST) $(VENV)/bin/python -m pytest -q tests/python

lint:
	cargo fmt --all --check
	cargo fmt --manifest-path guests/Cargo.toml --all --check
	cargo clippy --release --workspace --all-targets -- -D warnings
	cargo clippy --release --target wasm32-wasip2 --manifest-path guests/Cargo.toml -- -D warnings
