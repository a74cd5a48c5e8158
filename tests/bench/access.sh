#!/usr/bin/env bash
# What the operator token costs a tool call: envhost serving slack open (no token) and guarded
# (a token, sent by mcp_load as Basic authentication from the URL's user-info), measured in turns
# (open, guarded, guarded, open, ...) so that the host's drift hits both alike.
#
#   SKIP_BUILD=1 ROUNDS=3 tests/bench/access.sh
#
# Each turn: a fresh server, `mcp_load --clients 1` then `--clients 8`, BENCH_SECONDS each
# (default 10). Prints one line per turn and the medians as a Markdown table.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
ROUNDS=${ROUNDS:-3}
SECS=${BENCH_SECONDS:-10}
ENVHOST=target/release/envhost
MCP_LOAD=target/release/mcp_load
SLACK=guests/target/wasm32-wasip2/release/slack.wasm
TOKEN=bench-operator-token-0123456789abcdef
OUT=${OUT:-$(mktemp -d -t envhost-access.XXXXXX)}

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    cargo build --release -p envhost --bin envhost -p envhost-tests --bin mcp_load
    cargo build --release --target wasm32-wasip2 --manifest-path guests/Cargo.toml -p slack
fi

PID=
stop() { [ -z "$PID" ] || { kill -TERM "$PID" 2>/dev/null || true; wait "$PID" 2>/dev/null || true; PID=; }; }
trap stop EXIT

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

turn() {  # turn <open|guarded>: one fresh server, then mcp_load with 1 and 8 clients
    local mode=$1 port url
    port=$(free_port)
    if [ "$mode" = guarded ]; then
        ENVHOST_CONTROL_TOKEN=$TOKEN "$ENVHOST" serve "$SLACK" --host 127.0.0.1 --port "$port" >>"$OUT/server.log" 2>&1 &
        url=http://envhost:$TOKEN@127.0.0.1:$port
    else
        "$ENVHOST" serve "$SLACK" --host 127.0.0.1 --port "$port" >>"$OUT/server.log" 2>&1 &
        url=http://127.0.0.1:$port
    fi
    PID=$!
    for _ in $(seq 600); do curl -sf -o /dev/null "http://127.0.0.1:$port/ready" && break; sleep 0.05; done
    for clients in 1 8; do
        "$MCP_LOAD" --url "$url" --clients "$clients" --seconds "$SECS" --server-pid "$PID" --json \
            | tail -n 1 | sed "s/^/$mode $clients /" >>"$OUT/turns.txt"
    done
    stop
}

: >"$OUT/turns.txt"
for round in $(seq "$ROUNDS"); do
    if [ $((round % 2)) = 1 ]; then turn open; turn guarded; else turn guarded; turn open; fi
done

python3 - "$OUT/turns.txt" <<'EOF'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    mode, clients, report = line.split(" ", 2)
    rows.setdefault((mode, int(clients)), []).append(json.loads(report))
print("| server | clients | calls/s median (range) | p50 ms median (range) |")
print("|---|---:|---:|---:|")
for (mode, clients), reports in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
    rates = [r["per_s"] for r in reports]
    assert all(r["errors"] == 0 for r in reports), reports
    p50s = [r["p50_ms"] for r in reports]
    print(f"| {mode} | {clients} | {statistics.median(rates):,.0f} ({min(rates):,.0f}–{max(rates):,.0f}) "
          f"| {statistics.median(p50s):.3f} ({min(p50s):.3f}–{max(p50s):.3f}) |")
EOF
echo "raw: $OUT" >&2
