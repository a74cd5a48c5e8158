#!/usr/bin/env bash
# Many episodes in one process: every benchmark of BENCHMARKS.md's "Many episodes" section, in
# one run, printed as Markdown.
#
#   tests/bench/episodes.sh            (from anywhere; it works from the repository root)
#
# In order:
#   host_bench density                 10,000 slack episodes × 10 messages, in process
#   host_bench calls                   trivial tool calls on one core, in process
#   episodes_bench admission           20,000 creates against `--max-episodes 10000`
#   episodes_bench spread, ROUNDS runs 8 clients on the root episode (the single-episode
#                                      figure) and 1,000 episodes with a client and session each,
#                                      taking TURNS turns of TURN_SECONDS each in ABBA order
#   episodes_bench isolation           a spinning episode (100 ms deadline) beside 8 clients,
#                                      paced at 500 and 1,000 calls/s each, then closed loop
#
# Environment:
#   OUT            where the raw outputs and report.md go (default: a new directory under $TMPDIR)
#   ROUNDS         runs of the spread bench, each on a fresh server (default: 3)
#   TURNS          turns of each load per spread run (default: 10)
#   TURN_SECONDS   the measured seconds of each turn (default: 2)
#   BENCH_SECONDS  the measured seconds of each isolation phase (default: 10)
#   SKIP_BUILD=1   use what is built already
# Everything this script starts is stopped when it exits.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"

OUT=${OUT:-$(mktemp -d -t envhost-episodes.XXXXXX)}
ROUNDS=${ROUNDS:-3}
TURNS=${TURNS:-10}
TURN_SECONDS=${TURN_SECONDS:-2}
SECS=${BENCH_SECONDS:-10}
ENVHOST=target/release/envhost
RELEASE=guests/target/wasm32-wasip2/release
mkdir -p "$OUT"

log() { printf '[episodes] %s\n' "$*" >&2; }

SERVER_PID=
stop_server() {
    [ -n "$SERVER_PID" ] || return 0
    kill -TERM "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
}
trap stop_server EXIT
trap 'exit 130' INT TERM

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_server() {  # start_server <log name> <envhost serve arguments...>: sets SERVER_PID and URL
    local name=$1
    shift
    local port
    port=$(free_port)
    URL=http://127.0.0.1:$port
    "$ENVHOST" serve "$@" --host 127.0.0.1 --port "$port" >>"$OUT/$name.log" 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 600); do
        curl -sf -o /dev/null "$URL/ready" && return 0
        kill -0 "$SERVER_PID" 2>/dev/null || { log "envhost exited: see $OUT/$name.log"; exit 1; }
        sleep 0.05
    done
    log "envhost is not ready after 30 s"
    exit 1
}

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    log "building (release)"
    cargo build --release --workspace
    cargo build --release --target wasm32-wasip2 --manifest-path guests/Cargo.toml
fi

log "host_bench density"
target/release/host_bench density | tee "$OUT/density.txt"
log "host_bench calls"
target/release/host_bench calls | tee "$OUT/calls.txt"

log "admission"
start_server admission "slack=$RELEASE/slack.wasm" --max-episodes 10000
target/release/episodes_bench admission --url "$URL" --server-pid "$SERVER_PID" | tee "$OUT/admission.txt"
stop_server

log "spread: $ROUNDS runs of $TURNS turns"
: >"$OUT/spread.txt"
for round in $(seq "$ROUNDS"); do
    start_server spread "slack=$RELEASE/slack.wasm" --max-episodes 2000
    target/release/episodes_bench spread --url "$URL" --server-pid "$SERVER_PID" \
        --turns "$TURNS" --seconds "$TURN_SECONDS" --json \
        | tee -a "$OUT/spread.raw" | grep '^{' | sed "s/^/$round /" >>"$OUT/spread.txt"
    stop_server
done

log "isolation"
: >"$OUT/isolation.txt"
for rate in 500 1000 ""; do
    start_server isolation "faulty=$RELEASE/faulty.wasm" --cpu-deadline-ms 100
    target/release/episodes_bench isolation --url "$URL" --server-pid "$SERVER_PID" --seconds "$SECS" \
        ${rate:+--rate "$rate"} | tee -a "$OUT/isolation.txt"
    stop_server
done

python3 tests/bench/episodes_report.py "$OUT" | tee "$OUT/report.md"
log "raw outputs and report.md in $OUT"
