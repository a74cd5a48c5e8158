#!/usr/bin/env bash
# The episode data path: data/add, data/get and slack_list_inbox on the Python reference and on
# envhost serving the Rust, Python and JavaScript slacks, in one run, against a native floor.
#
#   tests/bench/data.sh            (from anywhere; it works from the repository root)
#
# It builds envhost, data_bench and the guests (SKIP_BUILD=1: use what is built; the Python and
# JavaScript slacks are measured when their components exist, `make guests` builds them), starts
# the reference (tests/reference-ports/slack/reference.py) and one envhost per slack on free loopback
# ports, and runs data_bench against them (see its doc comment: tests/src/bin/data_bench).
#
# Environment:
#   SIZES    the seed sizes in messages  (default: 1,200,2000,20000)
#   ROUNDS   samples per size of 2,000 messages or more; four times as many below (default: 5)
#   OUT      where the servers' logs and the table go (default: a new directory under $TMPDIR)
# Everything this script starts is stopped when it exits.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"

OUT=${OUT:-$(mktemp -d -t envhost-data.XXXXXX)}
PY=.venv/bin/python
COMPONENTS=guests/target/wasm32-wasip2/release
mkdir -p "$OUT"
log() { printf '[data] %s\n' "$*" >&2; }

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

wait_ready() {  # wait_ready <pid> <url>: until the card answers 200 (60 s at most)
    for _ in $(seq 1200); do
        kill -0 "$1" 2>/dev/null || { log "the server at $2 exited"; return 1; }
        curl -sf -o /dev/null "$2/.well-known/agent-env.json" && return 0
        sleep 0.05
    done
    log "the server at $2 is not ready after 60 s"
    return 1
}

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    log "building envhost and data_bench (release), and the Rust guests"
    cargo build --release -p envhost --bin envhost -p envhost-tests --bin data_bench
    cargo build --release --target wasm32-wasip2 --manifest-path guests/Cargo.toml
fi
[ -f .venv/.installed ] || { log "creating .venv (make venv)"; make venv; }

TARGETS=()
start() {  # start <name> <command>...: on a free port, appends NAME=URL@PID to TARGETS
    local name=$1 port
    shift
    port=$(free_port)
    MCP_HOST=127.0.0.1 MCP_PORT=$port "$@" >>"$OUT/$name.log" 2>&1 &
    local pid=$!
    STARTED+=("$pid")
    wait_ready "$pid" "http://127.0.0.1:$port"
    TARGETS+=(--target "$name=http://127.0.0.1:$port@$pid")
}

start reference "$PY" tests/reference-ports/slack/reference.py
start envhost-rust target/release/envhost serve "$COMPONENTS/slack.wasm"
for lang in py js; do
    if [ -f "$COMPONENTS/slack-$lang.wasm" ]; then
        start "envhost-$lang" target/release/envhost serve "$COMPONENTS/slack-$lang.wasm"
    else
        log "no $COMPONENTS/slack-$lang.wasm (make guests builds it): envhost-$lang not measured"
    fi
done

log "load before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; $(git rev-parse --short HEAD)"
target/release/data_bench "${TARGETS[@]}" --sizes "${SIZES:-1,200,2000,20000}" \
    --rounds "${ROUNDS:-5}" --json | tee "$OUT/data.txt"
log "load after: $(cut -d' ' -f1-3 /proc/loadavg); output in $OUT"
