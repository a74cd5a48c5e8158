#!/usr/bin/env bash
# Episodes created already seeded through POST /episodes: each with a distinct seed given as
# parts, then each restored from one seeded snapshot (episodes_bench seeding).
#
#   tests/bench/seeding.sh            (from anywhere; it works from the repository root)
#
# Environment:
#   EPISODES      episodes each way                     (default: 10000)
#   MESSAGES      messages in each seed                 (default: 200)
#   CONCURRENCY   requests in flight                    (default: 8)
#   SKIP_BUILD=1  use what is built already
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
EPISODES=${EPISODES:-10000}

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    cargo build --release -p envhost --bin envhost -p envhost-tests --bin episodes_bench
    cargo build --release --target wasm32-wasip2 --manifest-path guests/Cargo.toml
fi
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
target/release/envhost serve guests/target/wasm32-wasip2/release/slack.wasm --host 127.0.0.1 \
    --port "$PORT" --max-episodes $((EPISODES + 10)) >/dev/null 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
for _ in $(seq 600); do
    curl -sf -o /dev/null "http://127.0.0.1:$PORT/ready" && break
    sleep 0.05
done
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) CPUs; $(git rev-parse --short HEAD)" >&2
target/release/episodes_bench seeding --url "http://127.0.0.1:$PORT" --server-pid "$PID" \
    --episodes "$EPISODES" --messages "${MESSAGES:-200}" --concurrency "${CONCURRENCY:-8}"
