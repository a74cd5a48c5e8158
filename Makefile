# The two set-up commands of the README, and their parts.
#   make serve   serve the bundled slack example on 127.0.0.1:18765
#   make test    build everything and run every test (Rust and Python)
#   make lint    rustfmt and clippy, as CI runs them
#   make guests  the example components, Rust (guests/) and C (guests/counter-c, `make guests-c`)

VENV ?= .venv
PYTHON ?= python3
COMPONENTS := guests/target/wasm32-wasip2/release
ENVHOST := target/release/envhost

# C guests: Debian's clang and wasi-libc (apt: clang-19 lld-19 libclang-rt-19-dev-wasm32
# wasi-libc) compile to a wasm32-wasi core module; envhost-build-c (tools/build-c) generates the
# bindings and makes the component.
CLANG ?= clang-19
BUILD_C := target/release/envhost-build-c
C_BUILD := guests/target/counter-c
C_FLAGS := --target=wasm32-wasi -mexec-model=reactor -O2 -std=c17 -Wall -Wextra -Werror -Wl,--strip-debug

.PHONY: serve test lint guests guests-c host venv

guests: guests-c
	rustup target add wasm32-wasip2
	cargo build --release --target wasm32-wasip2 --manifest-path guests/Cargo.toml

guests-c:
	cargo build --release -p envhost-build-c
	$(BUILD_C) bindings --wit wit/environment --world environment --out-dir $(C_BUILD)/gen
	$(CLANG) $(C_FLAGS) -I $(C_BUILD)/gen -o $(C_BUILD)/counter-c.core.wasm \
		guests/counter-c/counter.c guests/counter-c/json.c \
		$(C_BUILD)/gen/environment.c $(C_BUILD)/gen/environment_component_type.o
	mkdir -p $(COMPONENTS)
	$(BUILD_C) component $(C_BUILD)/counter-c.core.wasm -o $(COMPONENTS)/counter-c.wasm

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
