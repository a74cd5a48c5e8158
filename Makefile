# The two set-up commands of the README, and their parts. Each installs what it needs where it
# is missing (tools/setup.sh: Debian packages through apt-get, Rust's pieces through rustup).
#   make serve       build the host and the Rust guests, and serve the slack example on
#                    127.0.0.1:18765 (MCP_PORT=... for another port)
#   make test        build everything and run every test (Rust, Python, JavaScript, C, and MCP's
#                    conformance suite against guests/everything: tests/conformance/run.sh)
#   make lint        rustfmt and clippy, as CI runs them, and no yanked crate in the lockfiles
#   make setup-serve, make setup-test, make setup-lint: only the installing
#   make guests      every example component: Rust (guests/), Python, JavaScript and C
#   make guests-py   the Python guests (componentize-py, from PyPI, in $(PY_BUILD_VENV)): slack-py.wasm,
#                    faulty-py.wasm, and the reference ports tickets-py.wasm and notes-py.wasm
#   make guests-js   the JavaScript guests (npm ci, then componentize-qjs): slack-js.wasm,
#                    tool-agent-js.wasm, and the reference ports tickets-js.wasm and notes-js.wasm
#   make guests-c    the C guests (Debian's clang and wasi-libc, then envhost-build-c): counter-c.wasm
#   make wheel       the envhost Python package (python/), an abi3 manylinux wheel in dist/ (maturin)
#   make deploy-validate  the Kubernetes manifests (deploy/kubernetes) against the Kubernetes schemas
#   make test-container   the container image (deploy/Dockerfile) built and tried under podman
#   make fuzz        every fuzz target (fuzz/, cargo-fuzz on nightly) for FUZZ_SECONDS (60) each: the
#                    committed seeds in fuzz/corpus/NAME, what is found kept in fuzz/target/corpus/NAME
#   make test-agentenv    agent-env (PyPI agentenv-framework) running the example bundle on envhost
#                    through the agentenv-envhost plugin (integrations/agentenv), in $(AGENTENV_VENV)

VENV ?= .venv
PYTHON ?= python3
# The venv of agent-env, its clients and the agentenv-envhost plugin (tests/agentenv).
AGENTENV_VENV ?= target/agentenv-venv
COMPONENTS := guests/target/wasm32-wasip2/release
ENVHOST := target/release/envhost
# The venv of the Python guests' toolchain (componentize-py), and what every Python guest is built from.
PY_BUILD_VENV ?= target/py-build-venv
PY_SDK := sdk-guest/python
PY_GUEST_DEPS := $(wildcard $(PY_SDK)/envhost_sdk/*.py) $(wildcard wit/environment/*.wit) $(PY_BUILD_VENV)/.installed
# The reference ports served from Python (tests/reference-ports/NAME/python).
PY_PORTS := tickets notes
# The JavaScript guests (guests/NAME), and the SDK every one is built from.
JS_GUESTS := slack-js tool-agent-js
# The reference ports in JavaScript (tests/reference-ports/NAME/js).
JS_PORTS := tickets notes
JS_SDK := sdk-guest/js/package.json $(wildcard sdk-guest/js/*.js sdk-guest/js/src/*.js sdk-guest/js/src/agent/*.js)

# C guests: Debian's clang and wasi-libc (apt: clang-19 lld-19 libclang-rt-19-dev-wasm32
# wasi-libc) compile to a wasm32-wasi core module; envhost-build-c (tools/build-c) generates the
# bindings and makes the component.
CLANG ?= clang-19
BUILD_C := target/release/envhost-build-c
C_BUILD := guests/target/counter-c
C_FLAGS := --target=wasm32-wasi -mexec-model=reactor -O2 -std=c17 -Wall -Wextra -Werror -Wl,--strip-debug

# rustup installs cargo here when tools/setup.sh had to install rustup itself; tools/setup.sh
# puts npm's node in target/node when the system's is too old for the JavaScript guest.
export PATH := $(CURDIR)/target/node/node_modules/.bin:$(HOME)/.cargo/bin:$(PATH)

.PHONY: fuzz wheel serve test lint guests guests-rust guests-py guests-js guests-c test-js host host-all venv \
	setup-serve setup-test setup-lint test-agentenv

setup-serve:
	tools/setup.sh serve

setup-test:
	tools/setup.sh test

setup-lint:
	tools/setup.sh lint

guests: guests-rust guests-py guests-js guests-c

guests-rust:
	cargo build --release --target wasm32-wasip2 --manifest-path guests/Cargo.toml

guests-py: $(COMPONENTS)/slack-py.wasm $(COMPONENTS)/faulty-py.wasm $(PY_PORTS:%=$(COMPONENTS)/%-py.wasm)

$(PY_BUILD_VENV)/.installed: $(PY_SDK)/requirements-build.txt
	$(PYTHON) -m venv $(PY_BUILD_VENV)
	$(PY_BUILD_VENV)/bin/pip install --quiet --upgrade pip
	$(PY_BUILD_VENV)/bin/pip install --quiet -r $(PY_SDK)/requirements-build.txt
	touch $@

# A Python guest, guests/NAME: its app module (`app`, defining `Env`) and the SDK,
# pre-initialised into one component.
$(COMPONENTS)/slack-py.wasm: guests/slack-py/slack_env.py
$(COMPONENTS)/%-py.wasm: guests/%-py/app.py $(PY_GUEST_DEPS)
	mkdir -p $(COMPONENTS)
	$(PY_BUILD_VENV)/bin/componentize-py -d wit/environment -w environment componentize app \
		-p guests/$*-py -p $(PY_SDK) -o $@

# A reference port, tests/reference-ports/NAME: the reference environment with its imports
# changed (python/NAME.py) and the app module that exports it.
$(COMPONENTS)/tickets-py.wasm: $(wildcard tests/reference-ports/tickets/python/*.py)
$(COMPONENTS)/notes-py.wasm: $(wildcard tests/reference-ports/notes/python/*.py)
$(PY_PORTS:%=$(COMPONENTS)/%-py.wasm): $(COMPONENTS)/%-py.wasm: $(PY_GUEST_DEPS)
	mkdir -p $(COMPONENTS)
	$(PY_BUILD_VENV)/bin/componentize-py -d wit/environment -w environment componentize app \
		-p tests/reference-ports/$*/python -p $(PY_SDK) -o $@

guests-js: $(JS_GUESTS:%=$(COMPONENTS)/%.wasm) $(JS_PORTS:%=$(COMPONENTS)/%-js.wasm)

# A JavaScript guest, guests/NAME: npm ci installs exactly its package-lock.json (the SDK from
# sdk-guest/js, componentize-qjs from npm), then its `build` script makes the component; again
# only when its sources, the SDK or its WIT world changed.
$(COMPONENTS)/slack-js.wasm: $(wildcard guests/slack-js/src/*.js) $(wildcard wit/environment/*.wit)
$(COMPONENTS)/tool-agent-js.wasm: $(wildcard guests/tool-agent-js/src/*.js) $(wildcard wit/agent/*.wit)
$(JS_GUESTS:%=$(COMPONENTS)/%.wasm): $(COMPONENTS)/%.wasm: guests/%/package.json guests/%/package-lock.json $(JS_SDK)
	cd guests/$* && npm ci --no-audit --no-fund --loglevel=error
	mkdir -p $(COMPONENTS)
	cd guests/$* && npm run --silent build

# A JavaScript reference port, tests/reference-ports/NAME/js: built as a JavaScript guest is.
$(COMPONENTS)/tickets-js.wasm: $(wildcard tests/reference-ports/tickets/js/src/*.js)
$(COMPONENTS)/notes-js.wasm: $(wildcard tests/reference-ports/notes/js/src/*.js)
$(JS_PORTS:%=$(COMPONENTS)/%-js.wasm): $(COMPONENTS)/%-js.wasm: tests/reference-ports/%/js/package.json \
		tests/reference-ports/%/js/package-lock.json $(JS_SDK) $(wildcard wit/environment/*.wit)
	cd tests/reference-ports/$*/js && npm ci --no-audit --no-fund --loglevel=error
	mkdir -p $(COMPONENTS)
	cd tests/reference-ports/$*/js && npm run --silent build

guests-c:
	cargo build --release -p envhost-build-c
	$(BUILD_C) bindings --wit wit/environment --world environment --out-dir $(C_BUILD)/gen
	$(CLANG) $(C_FLAGS) -I $(C_BUILD)/gen -o $(C_BUILD)/counter-c.core.wasm \
		guests/counter-c/counter.c guests/counter-c/json.c \
		$(C_BUILD)/gen/environment.c $(C_BUILD)/gen/environment_component_type.o
	mkdir -p $(COMPONENTS)
	$(BUILD_C) component $(C_BUILD)/counter-c.core.wasm -o $(COMPONENTS)/counter-c.wasm

# The JavaScript SDK's unit tests (node's test runner).
test-js:
	cd sdk-guest/js && npm test

# The envhost binary alone; host-all every crate of the workspace (the tests' binaries, the C
# guests' build tool).
host:
	cargo build --release -p envhost --bin envhost

host-all:
	cargo build --release --workspace

# The Python package: maturin (from PyPI, in $(VENV)) builds the native module, stripped, into a
# wheel for CPython 3.10 and later.
wheel: venv
	$(VENV)/bin/maturin build --quiet --release --strip --manifest-path python/Cargo.toml --out dist

serve: setup-serve
	$(MAKE) guests-rust host
	MCP_HOST=127.0.0.1 $(ENVHOST) serve $(COMPONENTS)/slack.wasm

venv: $(VENV)/.installed

# agent-env and the plugin from pip (the plugin from its folder, as a user installs it).
$(AGENTENV_VENV)/.installed: tests/agentenv/requirements.txt integrations/agentenv/pyproject.toml \
		$(wildcard integrations/agentenv/agentenv_envhost/*.py)
	$(PYTHON) -m venv $(AGENTENV_VENV)
	$(AGENTENV_VENV)/bin/pip install --quiet --upgrade pip
	$(AGENTENV_VENV)/bin/pip install --quiet -r tests/agentenv/requirements.txt ./integrations/agentenv
	touch $@

test-agentenv: $(AGENTENV_VENV)/.installed
	ENVHOST_BIN=$(ENVHOST) $(AGENTENV_VENV)/bin/python -m pytest -q -p no:cacheprovider tests/agentenv

$(VENV)/.installed: tests/python/requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -r tests/python/requirements.txt
	touch $@

test: setup-test
	$(MAKE) guests host-all venv
	cargo test --release --workspace
	cargo test --release --manifest-path guests/Cargo.toml -p desk
	$(MAKE) test-js
	$(MAKE) wheel
	$(VENV)/bin/pip install --quiet --force-reinstall --no-deps dist/envhost-*.whl
	ENVHOST_BIN=$(ENVHOST) $(VENV)/bin/python -m pytest -q tests/python sdk-guest/python/tests
	$(VENV)/bin/python -m pytest -q python/tests
	$(MAKE) test-agentenv
	ENVHOST_BIN=$(ENVHOST) tests/conformance/run.sh
	deploy/test-container.sh || [ $$? -eq 77 ]

lint: setup-lint
	cargo fmt --all --check
	cargo fmt --manifest-path guests/Cargo.toml --all --check
	cargo clippy --release --workspace --all-targets -- -D warnings
	cargo clippy --release --target wasm32-wasip2 --manifest-path guests/Cargo.toml -- -D warnings
	$(PYTHON) tools/check-yanked.py Cargo.lock guests/Cargo.lock
	$(MAKE) deploy-validate

# deploy/: the Kubernetes manifests checked against the Kubernetes schemas (PyPI
# kubernetes-validate, in target/deploy-venv), and the container image built from the host and
# the Rust guests and tried under podman (deploy/test-container.sh; as root).
.PHONY: deploy-validate test-container setup-container

deploy-validate:
	deploy/validate.sh

setup-container:
	tools/setup.sh container

test-container: setup-container
	$(MAKE) guests-rust host
	deploy/test-container.sh

# The fuzz targets (fuzz/fuzz_targets), each run for FUZZ_SECONDS; a crash stops the run and
# leaves its input in fuzz/artifacts/NAME.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS := data_add tool_arguments
fuzz:
	tools/setup.sh fuzz
	for target in $(FUZZ_TARGETS); do \
		mkdir -p fuzz/target/corpus/$$target && \
		cargo +nightly fuzz run -O $$target fuzz/target/corpus/$$target fuzz/corpus/$$target -- \
			-max_total_time=$(FUZZ_SECONDS) || exit 1; \
	done
