#!/usr/bin/env bash
# Instructions per in-process tool call, counted by valgrind's callgrind: repeatable where timings
# are not (the count does not depend on what else the machine runs).
#
#   tests/bench/call_instructions.sh      (from anywhere; it works from the repository root)
#
# Runs `host_bench calls` (counter_counts on one episode) under callgrind twice, for 4 and 12
# measured seconds, and prints the difference of the two instruction totals over the difference of
# their call counts, so start-up and the warmup cancel out (a first run outside valgrind fills
# wasmtime's compiled-artefact cache). Runs differ by about ±2% (the runtime's timer and I/O
# polls follow the wall clock). Under valgrind, SHA-256 runs without the CPU's SHA extensions
# (about 3,500 instructions a call more than natively).
#
# Environment: SKIP_BUILD=1 uses the host_bench already built.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
command -v valgrind >/dev/null || { echo "valgrind is needed (Debian: apt-get install valgrind)" >&2; exit 1; }
[ "${SKIP_BUILD:-0}" = 1 ] || cargo build --release -p envhost-tests --bin host_bench

count() {  # count <seconds>: prints "<instructions> <calls>"
    local out
    out=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null target/release/host_bench calls --seconds "$1" 2>&1)
    local instructions calls
    instructions=$(grep 'Collected' <<<"$out" | awk '{print $4}' | tr -d ,)
    calls=$(grep '^| [0-9]' <<<"$out" | awk -F'|' '{print $2}' | tr -d ' ')
    echo "$instructions $calls"
}

target/release/host_bench calls --seconds 0.1 >/dev/null
read -r short_ir short_calls < <(count 4)
read -r long_ir long_calls < <(count 12)
echo "| calls counted | instructions per call |"
echo "|---|---|"
echo "| $((long_calls - short_calls)) | $(((long_ir - short_ir) / (long_calls - short_calls))) |"
