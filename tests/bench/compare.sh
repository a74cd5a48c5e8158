#!/usr/bin/env bash
# envhost vs the Python reference SDK, serving the same slack environment, measured in one run.
#
#   tests/bench/compare.sh            (from anywhere; it works from the repository root)
#
# It builds envhost, mcp_load and the guests (and the .venv with `make venv` when missing), starts
# the Python reference slack server and envhost serving guests/.../slack.wasm on free loopback
# ports, and runs against each of them, one after the other:
#   the shared Python bench, agentenv_bench.py --clients 8 --seconds 10 (its three phases)
#   mcp_load --clients 1   (10 s, after its 1 s warmup)
#   mcp_load --clients 8   (10 s, after its 1 s warmup)
# every one with --server-pid, then prints the results as Markdown (tests/bench/report.py).
#
# envhost is started once and stopped before measuring, so the wasmtime compiled-artefact cache
# is warm, then started again for the measurement; its VmRSS is read as soon as it is ready.
#
# Environment:
#   AGENTENV_BENCH  the shared Python bench  (default: ../shared/bench/agentenv_bench.py)
#   BENCH_SECONDS   the measured seconds of each bench (default: 10)
#   OUT             where the raw outputs and report.md go (default: a new directory under $TMPDIR)
#   SKIP_BUILD=1    use what is built already
#   QUIET_WAIT=0    do not wait for other cargo/rustc processes to finish before measuring
# Everything this script starts is stopped when it exits.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"

BENCH=${AGENTENV_BENCH:-$ROOT/../shared/bench/agentenv_bench.py}
SECONDS_PER_BENCH=${BENCH_SECONDS:-10}
OUT=${OUT:-$(mktemp -d -t envhost-compare.XXXXXX)}
PY=.venv/bin/python
ENVHOST=target/release/envhost
MCP_LOAD=target/release/mcp_load
SLACK_WASM=guests/target/wasm32-wasip2/release/slack.wasm
mkdir -p "$OUT"

log() { printf '[compare] %s\n' "$*" >&2; }

# ------------------------------------------------------------------------------------------ processes

STARTED=()  # the pids of the servers this script started

stop() {  # stop <pid>: TERM it, then KILL it if it is still there after 5 s
    local pid=$1
    kill -TERM "$pid" 2>/dev/null || return 0
    for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
}

cleanup() {
    for pid in "${STARTED[@]}"; do stop "$pid"; done
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

wait_ready() {  # wait_ready <pid> <url> <path>...: until every path answers 200 (30 s at most)
    local pid=$1 url=$2
    shift 2
    for _ in $(seq 600); do
        kill -0 "$pid" 2>/dev/null || { log "the server at $url exited"; return 1; }
        local ready=1
        for path in "$@"; do
            curl -sf -o /dev/null "$url$path" || { ready=0; break; }
        done
        [ "$ready" = 1 ] && return 0
        sleep 0.05
    done
    log "the server at $url is not ready after 30 s"
    return 1
}

start_reference() {  # sets REF_PID
    MCP_HOST=127.0.0.1 MCP_PORT=$REF_PORT "$PY" tests/reference-ports/slack/reference.py \
        >>"$OUT/reference.log" 2>&1 &
    REF_PID=$!
    STARTED+=("$REF_PID")
    wait_ready "$REF_PID" "$REF_URL" /.well-known/agent-env.json
}

start_envhost() {  # sets ENVHOST_PID
    "$ENVHOST" serve "$SLACK_WASM" --host 127.0.0.1 --port "$ENVHOST_PORT" >>"$OUT/envhost.log" 2>&1 &
    ENVHOST_PID=$!
    STARTED+=("$ENVHOST_PID")
    wait_ready "$ENVHOST_PID" "$ENVHOST_URL" /ready /.well-known/agent-env.json
}

memory() {  # memory <pid>: {"VmRSS": KiB, "VmHWM": KiB} from /proc
    awk '/^VmRSS:/ {rss = $2} /^VmHWM:/ {hwm = $2} END {printf "{\"VmRSS\": %d, \"VmHWM\": %d}", rss, hwm}' \
        "/proc/$1/status"
}

busy_jiffies() {  # the machine's non-idle CPU time so far, in clock ticks
    awk '/^cpu / {print $2 + $3 + $4 + $7 + $8 + $9}' /proc/stat
}

others_building() {  # the pids of cargo/rustc processes running now (other engineers' builds)
    pgrep -x 'cargo|rustc' || true
}

# ------------------------------------------------------------------------------------------ build

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    log "building envhost and mcp_load (release)"
    cargo build --release --workspace
    log "building the guests (wasm32-wasip2, release)"
    cargo build --release --target wasm32-wasip2 --manifest-path guests/Cargo.toml
fi
[ -f .venv/.installed ] || { log "creating .venv (make venv)"; make venv; }
for f in "$ENVHOST" "$MCP_LOAD" "$SLACK_WASM" "$PY" "$BENCH"; do
    [ -e "$f" ] || { log "missing: $f"; exit 1; }
done

# ------------------------------------------------------------------------------------------ servers

REF_PORT=$(free_port)
ENVHOST_PORT=$(free_port)
while [ "$ENVHOST_PORT" = "$REF_PORT" ]; do ENVHOST_PORT=$(free_port); done
REF_URL=http://127.0.0.1:$REF_PORT
ENVHOST_URL=http://127.0.0.1:$ENVHOST_PORT

log "warming envhost's compiled-artefact cache (start, ready, stop)"
start_envhost
stop "$ENVHOST_PID"

if [ "${QUIET_WAIT:-1}" != 0 ]; then
    while [ -n "$(others_building)" ]; do
        log "cargo/rustc is running (pids $(others_building | tr '\n' ' ')); waiting for it to finish"
        sleep 10
    done
fi

log "starting the reference on $REF_URL and envhost on $ENVHOST_URL"
start_reference
REF_IDLE=$(memory "$REF_PID")
start_envhost
ENVHOST_IDLE=$(memory "$ENVHOST_PID")
log "idle memory (KiB): reference $REF_IDLE, envhost $ENVHOST_IDLE"

# ------------------------------------------------------------------------------------------ benches

# run_bench <file stem> <command>...: runs it, keeps its whole output in <stem>.txt and its last line
# (the JSON) in <stem>.json, and notes the wall time, the machine's busy CPU and other builds.
run_bench() {
    local stem=$1
    shift
    log "$stem: $*"
    local busy0 t0 busy1 t1 building
    busy0=$(busy_jiffies)
    t0=$(date +%s.%N)
    "$@" >"$OUT/$stem.txt" 2>"$OUT/$stem.err" || {
        log "$stem failed:"
        cat "$OUT/$stem.txt" "$OUT/$stem.err" >&2
        exit 1
    }
    t1=$(date +%s.%N)
    busy1=$(busy_jiffies)
    building=$(others_building | tr '\n' ' ')
    tail -n 1 "$OUT/$stem.txt" >"$OUT/$stem.json"
    python3 - "$OUT/$stem.run.json" "$t0" "$t1" "$busy0" "$busy1" "$(getconf CLK_TCK)" "$building" <<'EOF'
import json, sys
path, t0, t1, b0, b1, tck, building = sys.argv[1:]
wall = float(t1) - float(t0)
json.dump({"wall_s": round(wall, 2), "machine_busy_cores": round((int(b1) - int(b0)) / int(tck) / wall, 2),
           "others_building": building.split()}, open(path, "w"))
EOF
    [ -z "$building" ] || log "warning: cargo/rustc was running at the end of $stem (pids $building)"
}

# The shared bench runs first, on the freshly started server, so that its memory readings are
# those of serving it; mcp_load's runs then add hundreds of thousands of messages to the slack
# environment's own data.
for server in reference envhost; do
    if [ "$server" = reference ]; then url=$REF_URL pid=$REF_PID; else url=$ENVHOST_URL pid=$ENVHOST_PID; fi
    run_bench "$server-agentenv_bench-c8" "$PY" "$BENCH" --url "$url" --clients 8 \
        --seconds "$SECONDS_PER_BENCH" --server-pid "$pid"
    for clients in 1 8; do
        run_bench "$server-mcp_load-c$clients" "$MCP_LOAD" --url "$url" --clients "$clients" \
            --seconds "$SECONDS_PER_BENCH" --server-pid "$pid" --json
    done
done

cat >"$OUT/servers.json" <<EOF
{"reference": {"url": "$REF_URL", "pid": $REF_PID, "idle": $REF_IDLE, "end": $(memory "$REF_PID")},
 "envhost": {"url": "$ENVHOST_URL", "pid": $ENVHOST_PID, "idle": $ENVHOST_IDLE, "end": $(memory "$ENVHOST_PID")}}
EOF

python3 tests/bench/report.py "$OUT" | tee "$OUT/report.md"
log "raw outputs and report.md: $OUT"
