#!/usr/bin/env bash
# Installs what a make target needs, where it is missing, so that `make serve` and `make test`
# work on a fresh Debian or Ubuntu machine that has git, make and rustup:
#
#   tools/setup.sh serve   a C compiler and linker (Rust links with it; mimalloc is C), and the
#                          Rust toolchain of rust-toolchain.toml with its wasm32-wasip2 target
#   tools/setup.sh test    what `serve` needs, and python3 with venv (the Python suites, and
#                          componentize-py for the Python guest), node 20.19 or newer and npm
#                          (the JavaScript guest; npm's node 22 in target/node when the system's
#                          is older), Debian's clang 19, lld 19, wasm32 builtins and wasi-libc (the
#                          C guest), and what `container` installs
#   tools/setup.sh lint    what `serve` needs (the toolchain brings rustfmt and clippy), and python3
#                          with venvs (the manifests' validation)
#   tools/setup.sh container  podman, runc, slirp4netns, debootstrap, curl and python3 (the
#                          container test, deploy/test-container.sh)
#   tools/setup.sh fuzz    what `serve` needs, Rust nightly (rustup's minimal profile) and
#                          cargo-fuzz (crates.io) for the fuzz targets in fuzz/
#
# Debian packages come from apt-get, through sudo unless run as root; Rust's pieces from rustup,
# which is installed (its minimal profile) when missing. Nothing is installed twice.
set -euo pipefail
cd "$(dirname "$0")/.."

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
        curl --proto '=https' --tlsv1.2 -sSf https://static.rust-lang.org/rustup/rustup-init.sh |
            sh -s -- -y --profile minimal
        export PATH="$HOME/.cargo/bin:$PATH"
    fi
    # The toolchain of rust-toolchain.toml, with its components and targets.
    rustup toolchain install
}

serve() {
    command -v cc >/dev/null || apt_install build-essential
    rust
}

test_deps() {
    serve
    python_venv
    command -v npm >/dev/null || apt_install nodejs npm
    # componentize-qjs loads as an ES module, which node reads by itself from 20.19 on (Debian 12
    # ships 18): an older node gets npm's `node` package, 22, in target/node (the Makefile puts
    # it first on PATH).
    if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number);
                  process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)'; then
        log "node $(node --version) is older than 20.19: installing npm's node 22 into target/node"
        npm install --prefix target/node --no-audit --no-fund --loglevel=error node@22
    fi
    container
    local c_packages=(clang-19 lld-19 libclang-rt-19-dev-wasm32 wasi-libc)
    have_packages "${c_packages[@]}" || apt_install "${c_packages[@]}"
    # The X11 driver's tests run under Xvfb, the probe's full-level fixture on Tk and DejaVu.
    local x_packages=(xvfb python3-tk fonts-dejavu-core)
    have_packages "${x_packages[@]}" || apt_install "${x_packages[@]}"
}

lint() {
    serve
    # deploy/validate.sh installs kubernetes-validate into a venv of its own.
    python_venv
}

# python3, able to make venvs: they need ensurepip, which Debian packages apart (python3-venv).
python_venv() {
    command -v python3 >/dev/null || apt_install python3
    local probe
    probe=$(mktemp -d)
    python3 -m venv "$probe/v" >/dev/null 2>&1 || apt_install python3-venv
    rm -rf "$probe"
}

container() {
    local packages=(podman runc slirp4netns debootstrap curl python3)
    have_packages "${packages[@]}" || apt_install "${packages[@]}"
}

fuzz() {
    serve
    rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
    command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
}

case "${1:-}" in
    serve) serve ;;
    test) test_deps ;;
    lint) lint ;;
    container) container ;;
    fuzz) fuzz ;;
    *) echo "usage: tools/setup.sh serve|test|lint|container|fuzz" >&2; exit 2 ;;
esac
