#!/usr/bin/env bash
# A computer's screenshot and click over MCP (computer_bench): the reference X11 driver
# (agentenv-framework's agent_env/drivers/envs/reference/driver.py, mss + python-xlib, served by
# agentenv_protocol) and envhost serving guests/x11-driver, both on one Xvfb 1280x800x24, in
# one run.
#
#   tests/bench/computer.sh            (from anywhere; it works from the repository root)
#
# Environment:
#   ROUNDS        rounds                                     (default: 5)
#   CALLS         calls of each kind a round                 (default: 20)
#   SKIP_BUILD=1  use what is built already
#
# The reference driver comes from PyPI at run time into target/computer-bench/ (a venv with
# agentenv-framework-protocol[computer], mss and python-xlib; the driver's file unpacked from
# the agentenv-framework wheel); nothing of it is kept in the repository. Needs Xvfb (apt:
# xvfb). The screen shows tests/bench/computer_scene.py's busy desktop (apt: python3-tk,
# fonts-dejavu-core), so PNG encoding works on realistic pixels. Then the same two calls on
# envhost serving guests/desk (a desktop simulated in Wasm), alone.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
WORK=target/computer-bench
COMPONENTS=guests/target/wasm32-wasip2/release
FRAMEWORK=agentenv-framework==0.9.1364
PROTOCOL=agentenv-framework-protocol[computer]==0.1.379
log() { echo "[computer.sh] $*" >&2; }

command -v Xvfb >/dev/null || { log "Xvfb is missing (apt-get install xvfb)"; exit 1; }
if [ "${SKIP_BUILD:-0}" != 1 ]; then
    log "building envhost and computer_bench (release), and the Rust guests"
    cargo build --release -p envhost --bin envhost -p envhost-tests --bin computer_bench
    cargo build --release --target wasm32-wasip2 --manifest-path guests/Cargo.toml
fi
mkdir -p "$WORK"
if [ ! -f "$WORK/venv/.installed" ]; then
    log "installing the reference driver's Python packages into $WORK/venv"
    python3 -m venv "$WORK/venv"
    "$WORK/venv/bin/pip" install --quiet "$PROTOCOL" mss python-xlib
    "$WORK/venv/bin/pip" download --quiet --no-deps --dest "$WORK/wheel" "$FRAMEWORK"
    "$WORK/venv/bin/python" - "$WORK" <<'EOF'
import pathlib, sys, zipfile
work = pathlib.Path(sys.argv[1])
wheel = next((work / "wheel").glob("agentenv_framework-*.whl"))
with zipfile.ZipFile(wheel) as z:
    source = z.read("agent_env/drivers/envs/reference/driver.py")
(work / "reference").mkdir(exist_ok=True)
(work / "reference" / "driver.py").write_bytes(source)
EOF
    touch "$WORK/venv/.installed"
fi

STARTED=()
cleanup() {
    for pid in "${STARTED[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

DISPLAY_NUMBER=$(( (RANDOM % 400) + 200 ))
while [ -e "/tmp/.X11-unix/X$DISPLAY_NUMBER" ]; do DISPLAY_NUMBER=$((DISPLAY_NUMBER + 1)); done
export DISPLAY=":$DISPLAY_NUMBER"
Xvfb "$DISPLAY" -screen 0 1280x800x24 -nolisten tcp >"$WORK/xvfb.log" 2>&1 &
STARTED+=("$!")
for _ in $(seq 100); do [ -e "/tmp/.X11-unix/X$DISPLAY_NUMBER" ] && break; sleep 0.05; done
/usr/bin/python3 tests/bench/computer_scene.py >"$WORK/scene.log" 2>&1 &
STARTED+=("$!")
sleep 2

TARGETS=()
start() {  # start <name> <command>...: on a free port, appends NAME=URL@PID to TARGETS
    local name=$1 port
    shift
    port=$(free_port)
    MCP_HOST=127.0.0.1 MCP_PORT=$port "$@" >"$WORK/$name.log" 2>&1 &
    local pid=$!
    STARTED+=("$pid")
    for _ in $(seq 1200); do
        kill -0 "$pid" 2>/dev/null || { log "$name exited (see $WORK/$name.log)"; exit 1; }
        curl -sf -o /dev/null "http://127.0.0.1:$port/.well-known/agent-env.json" && break
        sleep 0.05
    done
    TARGETS+=(--target "$name=http://127.0.0.1:$port@$pid")
}

start reference env -C "$WORK/reference" "$ROOT/$WORK/venv/bin/python" -c \
    'from driver import ReferenceDriver; ReferenceDriver().serve()'
start envhost target/release/envhost serve --driver "$COMPONENTS/x11_driver.wasm" --display "$DISPLAY"

log "load before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; $(git rev-parse --short HEAD)"
target/release/computer_bench "${TARGETS[@]}" --rounds "${ROUNDS:-5}" --calls "${CALLS:-20}"
log "load after: $(cut -d' ' -f1-3 /proc/loadavg)"

# The desk (a desktop simulated in Wasm, no X) over the same MCP path, on its own.
TARGETS=()
start desk target/release/envhost serve --driver "$COMPONENTS/desk.wasm"
target/release/computer_bench "${TARGETS[@]}" --rounds "${ROUNDS:-5}" --calls "${CALLS:-20}"
