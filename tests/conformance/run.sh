#!/usr/bin/env bash
# MCP's conformance suite (npm @modelcontextprotocol/conformance, pinned in package.json, run by
# npm's node 22) in server mode against `envhost serve guests/everything`: every scenario of its
# default suite must pass but those expected-failures.yml lists; then, with --allowed-hosts,
# dns-rebinding-protection must pass too. Needs the envhost binary ($ENVHOST_BIN, else
# target/release/envhost) and the Rust guests built; sends traffic to 127.0.0.1 only.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
envhost="$(realpath "${ENVHOST_BIN:-$repo/target/release/envhost}")"
component="$repo/guests/target/wasm32-wasip2/release/everything.wasm"

cd "$here"
npm ci --no-audit --no-fund --loglevel=error
node="$here/node_modules/.bin/node"
suite="$here/node_modules/@modelcontextprotocol/conformance/dist/index.js"
results="$(mktemp -d)"
server=""
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; rm -rf "$results"' EXIT

# Serves guests/everything on a free loopback port with extra flags; sets $server and $url.
serve() {
    local port
    port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
    "$envhost" serve "$component" --host 127.0.0.1 --port "$port" "$@" >"$results/envhost-$port.log" 2>&1 &
    server=$!
    url="http://127.0.0.1:$port/mcp"
    for _ in $(seq 100); do
        python3 -c 'import sys, urllib.request; urllib.request.urlopen(sys.argv[1], timeout=1)' \
            "http://127.0.0.1:$port/ready" 2>/dev/null && return 0
        sleep 0.1
    done
    echo "envhost did not become ready:" >&2
    cat "$results/envhost-$port.log" >&2
    return 1
}

stop() {
    kill "$server"
    wait "$server" 2>/dev/null || true
    server=""
}

serve
"$node" "$suite" server --url "$url" --expected-failures "$here/expected-failures.yml" -o "$results/default"
stop

serve --allowed-hosts localhost,127.0.0.1,[::1]
"$node" "$suite" server --url "$url" --scenario dns-rebinding-protection -o "$results/allowed-hosts"
stop
