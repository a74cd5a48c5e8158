#!/usr/bin/env bash
# Installs what a make target needs, where it is missing, so that `make serve` and `make test`
# work on a fresh Debian or Ubuntu machine that has git, make and rustup:
#
#   tools/setup.sh serve   a C compiler and linker (Rust links with it; mimalloc is C), Rust's
#                          wasm32-wasip2 target
#   tools/setup.sh test    what `serve` needs, and python3 with venv (the Python suites, and
#                          componentize-py for the Python guest), node and npm (the JavaScript
#                          guest), Debian's clang 19, lld 19, wasm32 builtins and wasi-libc (the C
#                          guest)
#   tools/setup.sh lint    rustfmt and clippy
#
# Debian packages come from apt-get, through sudo unless run as root; Rust's pieces from rustup,
# which is installed (its minimal profile) when missing. Nothing is installed twice.
set -euo pipefail

log() { printf '[setup] %s\n' "$*" >&2; }

apt_updated=""
apt_install() {
    command -v apt-get >/dev/null || {
        log "missing: $*; install them (this script knows only apt-get)"
        exit 1
    }
    local sudo_cmd=""
    [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
    log "installing Debian packages: $*"
    if [ -z "$apt_updated" ]; then
        $sudo_cmd apt-get update -qq
        apt_updated=1
    fi
    $sudo_cmd env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@"
}

have_packages() { dpkg -s "$@" >/dev/null 2>&1; }

rust() {
    if ! command -v rustup >/dev/null && [ -x "$HOME/.cargo/bin/rustup" ]; then
        export PATH="$HOME/.cargo/bin:$PATH"
    fi
    if ! command -v rustup >/dev/null; then
        command -v curl >/dev/null || apt_install curl ca-certificates
        log "installing rustup"
        curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
        export PATH="$HOME/.cargo/bin:$PATH"
    fi
    rustup show active-toolchain >/dev/null 2>&1 || rustup default stable
}

serve() {
    command -v cc >/dev/null || apt_install build-essential
    rust
    rustup target list --installed | grep -qx wasm32-wasip2 || rustup target add wasm32-wasip2
}

test_deps() {
    serve
    command -v python3 >/dev/null || apt_install python3
    # venvs need ensurepip, which Debian packages apart (python3-venv).
    local probe
    probe=$(mktemp -d)
    python3 -m venv "$probe/v" >/dev/null 2>&1 || apt_install python3-venv
    rm -rf "$probe"
    command -v npm >/dev/null || apt_install nodejs npm
    local node_major
    node_major=$(node -p 'process.versions.node.split(".")[0]')
    [ "$node_major" -ge 18 ] || { log "node $node_major is too old: the JavaScript guest needs 18 or newer"; exit 1; }
    local c_packages=(clang-19 lld-19 libclang-rt-19-dev-wasm32 wasi-libc)
    have_packages "${c_packages[@]}" || apt_install "${c_packages[@]}"
}

lint() {
    rust
    local installed
    installed=$(rustup component list --installed)
    grep -q '^rustfmt' <<<"$installed" || rustup component add rustfmt
    grep -q '^clippy' <<<"$installed" || rustup component add clippy
    serve
}

case "${1:-}" in
    serve) serve ;;
    test) test_deps ;;
    lint) lint ;;
    *) echo "usage: tools/setup.sh serve|test|lint" >&2; exit 2 ;;
esac
