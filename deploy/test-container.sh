#!/usr/bin/env bash
# The container test: builds the image of deploy/Dockerfile through its `prebuilt` target from
# the checkout's target/release/envhost and guests/target/wasm32-wasip2/release/{slack,counter}.wasm,
# on a Debian 12 base image made here with debootstrap, runs it under podman as
# deploy/kubernetes/statefulset.yaml runs it (read-only root filesystem, no capabilities, no new
# privileges, the operator token in a file, a URL prefix), published on 127.0.0.1 only, and
# checks what it serves; then stops and removes every container it started.
#
#   make host guests-rust && deploy/test-container.sh      (as root; or: make test-container)
#
#   PORT=19187          the first loopback port (the second container takes PORT+1)
#   DEBIAN_MIRROR=URL   the mirror debootstrap fetches from [default: the bookworm mirror of
#                       /etc/apt/sources.list*]
#
# Needs root (debootstrap, rootful podman). podman, runc, slirp4netns, debootstrap, curl and
# python3 come from Debian's packages where missing (tools/setup.sh container). Nothing is pulled
# from an image registry: the only address contacted is the Debian mirror, by debootstrap, the
# first time. podman's configuration and storage, and the base image, live under
# target/deploy-container/ and are kept between runs; each run's token is a throwaway in a
# temporary directory. Exits 0 when every check passes, 1 when one fails, 77 (skipped) when
# containers cannot run on this machine, saying why.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
started=$SECONDS

PORT=${PORT:-19187}
PORT1=$((PORT + 1))
WORK=$ROOT/target/deploy-container
BASE_IMAGE=localhost/envhost-test-base:bookworm
IMAGE=localhost/envhost:test
ENVHOST=target/release/envhost
COMPONENTS=guests/target/wasm32-wasip2/release
UID_EXPECTED=10001

log() { printf 'test-container: %s\n' "$*" >&2; }
skip() {
    log "SKIPPED: $*"
    exit 77
}

# --- what the test needs ------------------------------------------------------------------

for file in "$ENVHOST" "$COMPONENTS/slack.wasm" "$COMPONENTS/counter.wasm"; do
    if [ ! -f "$file" ]; then
        log "missing $file: build the host and the Rust guests first (make host guests-rust)"
        exit 1
    fi
done
[ "$(id -u)" -eq 0 ] || skip "needs root: debootstrap and rootful podman (run it as root)"
if ! command -v podman >/dev/null || ! command -v runc >/dev/null ||
    ! command -v slirp4netns >/dev/null || ! command -v debootstrap >/dev/null ||
    ! command -v curl >/dev/null || ! command -v python3 >/dev/null; then
    command -v apt-get >/dev/null ||
        skip "podman, runc, slirp4netns, debootstrap, curl or python3 is missing and there is no apt-get to install them"
    tools/setup.sh container || skip "installing podman, runc, slirp4netns and debootstrap from Debian's packages failed (above)"
fi
for port in "$PORT" "$PORT1"; do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        log "port $port of 127.0.0.1 is taken: choose others with PORT=N (N and N+1 are used)"
        exit 1
    fi
done

# --- podman, configured for this test only ------------------------------------------------
# Its own storage under $WORK, runc (crun refuses hybrid cgroup hierarchies), cgroupfs and a
# file for events (no systemd needed), and no registry to pull from. Limits podman would raise
# past what this process may have (a sandbox without CAP_SYS_RESOURCE) are pinned to what it
# has: podman runs its OCI runtime with RLIMIT_NPROC at most 32768.

mkdir -p "$WORK"
nofile=$(ulimit -Hn)
nproc=$(ulimit -Hu)
if [ "$nofile" = unlimited ]; then nofile=1048576; fi
if [ "$nproc" = unlimited ] || [ "$nproc" -gt 32768 ]; then nproc=32768; fi

storage_driver=overlay
make_config() {
    cat >"$WORK/containers.conf" <<EOF
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]
log_driver = "k8s-file"

[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$WORK/events.log"
tmp_dir = "$WORK/libpod-tmp"
EOF
    cat >"$WORK/storage.conf" <<EOF
[storage]
driver = "$storage_driver"
graphroot = "$WORK/storage-$storage_driver"
runroot = "$WORK/run-$storage_driver"
EOF
    cat >"$WORK/registries.conf" <<EOF
unqualified-search-registries = []
short-name-mode = "enforcing"
EOF
}
export CONTAINERS_CONF=$WORK/containers.conf
export CONTAINERS_STORAGE_CONF=$WORK/storage.conf
export CONTAINERS_REGISTRIES_CONF=$WORK/registries.conf
make_config
if ! podman info >"$WORK/podman-info.txt" 2>&1; then
    log "podman cannot use overlay storage here ($(tail -n 1 "$WORK/podman-info.txt")); using vfs"
    storage_driver=vfs
    make_config
    podman info >"$WORK/podman-info.txt" 2>&1 ||
        skip "podman cannot start with vfs storage either: $(tail -n 1 "$WORK/podman-info.txt")"
fi

# --- the base image: Debian 12, minbase, from debootstrap ---------------------------------

debian_mirror() {
    # The first deb822 stanza of type deb whose suites include bookworm; else a one-line entry.
    local uri
    uri=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '
        /^[[:space:]]*$/ { if (!found && uri != "" && suite && deb) { print uri; found = 1 }
                           uri = ""; suite = 0; deb = 0; next }
        /^Types:/  { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
        /^URIs:/   { uri = $2 }
        /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == "bookworm") suite = 1 }
        END { if (!found && uri != "" && suite && deb) print uri }' | head -n 1)
    if [ -z "$uri" ]; then
        uri=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
            sed -e 's/\[[^]]*\]//' | awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }')
    fi
    printf '%s' "$uri"
}

base_tar=$WORK/debian-bookworm-minbase.tar
if ! podman image exists "$BASE_IMAGE"; then
    if [ ! -s "$base_tar" ]; then
        mirror=${DEBIAN_MIRROR:-$(debian_mirror)}
        [ -n "$mirror" ] || {
            log "no bookworm mirror in /etc/apt/sources.list*: give one with DEBIAN_MIRROR=URL"
            exit 1
        }
        log "making the base image with debootstrap (bookworm, minbase) from $mirror"
        rootfs=$WORK/rootfs
        rm -rf "$rootfs"
        # debootstrap writes its commands' own errors (tar's, dpkg's) to a log inside the
        # target, not to its output: both are shown when it fails. A failure is tried once more
        # from an empty folder (a mirror that dropped a connection).
        for attempt in 1 2; do
            if debootstrap --variant=minbase --include=ca-certificates bookworm "$rootfs" \
                "$mirror" >"$WORK/debootstrap.log" 2>&1; then
                break
            fi
            tail -n 5 "$WORK/debootstrap.log" >&2
            if [ -f "$rootfs/debootstrap/debootstrap.log" ]; then
                cp "$rootfs/debootstrap/debootstrap.log" "$WORK/debootstrap-target.log"
                log "the failing commands' own errors:"
                grep -v '^[[:space:]]*$' "$WORK/debootstrap-target.log" | tail -n 15 >&2
            fi
            log "free space under $WORK: $(df -h --output=avail "$WORK" | tail -n 1 | tr -d ' ')"
            rm -rf "$rootfs"
            if [ "$attempt" -eq 2 ]; then
                log "debootstrap failed twice (the logs: $WORK/debootstrap.log, $WORK/debootstrap-target.log)"
                exit 1
            fi
            log "debootstrap failed; trying once more"
        done
        # What debian:bookworm-slim leaves out too: downloaded packages and package lists.
        rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
        tar -C "$rootfs" --numeric-owner -cf "$base_tar.partial" .
        mv "$base_tar.partial" "$base_tar"
        rm -rf "$rootfs"
    fi
    podman import --quiet --change 'CMD ["/bin/bash"]' "$base_tar" "$BASE_IMAGE" >/dev/null
fi

# --- can this machine run a container at all? ---------------------------------------------
# Tried with cgroups, then without (a cgroup hierarchy podman cannot write to).

run_opts=()
probe_log=$WORK/probe.log
if ! podman run --rm --pull=never --network none "$BASE_IMAGE" true >"$probe_log" 2>&1; then
    first=$(tail -n 1 "$probe_log")
    if podman run --rm --pull=never --network none --cgroups=disabled "$BASE_IMAGE" true \
        >"$probe_log" 2>&1; then
        log "containers run here only without cgroups ($first): using --cgroups=disabled"
        run_opts+=(--cgroups=disabled)
    else
        skip "podman cannot run a container on this machine: $first; without cgroups: $(tail -n 1 "$probe_log")"
    fi
fi

# --- the image ------------------------------------------------------------------------------

log "building $IMAGE (deploy/Dockerfile, target prebuilt)"
build_start=$SECONDS
if ! podman build --pull=never --network none --layers \
    --file deploy/Dockerfile --ignorefile deploy/Dockerfile.dockerignore \
    --target prebuilt --build-arg "BASE=$BASE_IMAGE" --tag "$IMAGE" . >"$WORK/build.log" 2>&1; then
    tail -n 30 "$WORK/build.log" >&2
    log "FAIL: podman build failed (the whole log: $WORK/build.log)"
    exit 1
fi
log "built in $((SECONDS - build_start)) s"

# --- the containers -------------------------------------------------------------------------

tmp=$(mktemp -d)
containers=()
cleanup() {
    local name
    for name in "${containers[@]}"; do
        podman rm --force --time 0 "$name" >/dev/null 2>&1 || true
    done
    rm -rf "$tmp"
}
trap cleanup EXIT

# A throwaway operator token, readable by the container's user only.
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$tmp/token"
chown "$UID_EXPECTED:$UID_EXPECTED" "$tmp/token"
chmod 0400 "$tmp/token"
printf 'Authorization: Bearer %s\n' "$(cat "$tmp/token")" >"$tmp/auth"

# Starts the image as pod NAME on 127.0.0.1:PORT, as the StatefulSet does; then waits for
# /ready. The network is slirp4netns's, which reaches the container only through the
# published port (and connects out from 127.0.0.1 only).
start() {
    local name=$1 port=$2 cname="envhost-test-$1-$$"
    containers+=("$cname")
    podman run --detach --pull=never --name "$cname" "${run_opts[@]}" \
        --network slirp4netns:outbound_addr=127.0.0.1 --publish "127.0.0.1:$port:18765" \
        --read-only --read-only-tmpfs=false \
        --tmpfs /tmp:rw,nosuid,nodev,size=256m,mode=1777 \
        --tmpfs /var/cache/envhost:rw,nosuid,nodev,size=256m,mode=0700,U \
        --cap-drop ALL --security-opt no-new-privileges \
        --volume "$tmp/token:/run/secrets/envhost/token:ro" \
        --env "POD_NAME=$name" --env "ENVHOST_URL_PREFIX=/pods/$name" \
        "$IMAGE" /opt/envhost/components/slack.wasm \
        --control-token-file=/run/secrets/envhost/token --max-episodes=10000 >/dev/null
    local deadline=$((SECONDS + 60))
    until curl -fsS -o /dev/null "http://127.0.0.1:$port/ready" 2>/dev/null; do
        if [ "$(podman inspect --format '{{.State.Running}}' "$cname")" != true ] ||
            [ "$SECONDS" -ge "$deadline" ]; then
            podman logs "$cname" >&2 || true
            log "FAIL: $name did not become ready on 127.0.0.1:$port"
            exit 1
        fi
        sleep 0.2
    done
}

passed=0
failed=0
check() { # DESCRIPTION, then a command that succeeds when the check holds
    local what=$1
    shift
    if "$@"; then
        passed=$((passed + 1))
        log "ok: $what"
    else
        failed=$((failed + 1))
        log "FAIL: $what"
    fi
}

# request METHOD URL [curl arguments...]: the status on stdout, the body in $tmp/body and the
# headers in $tmp/headers.
request() {
    local method=$1 url=$2
    shift 2
    curl -sS -o "$tmp/body" -D "$tmp/headers" -w '%{http_code}' -X "$method" "$url" "$@"
}
# json FILE PATH: the value at PATH (keys and list indexes joined by dots) of the JSON in FILE;
# objects and lists as JSON, strings as they are.
json() {
    python3 - "$1" "$2" <<'EOF'
import json, sys
value = json.load(open(sys.argv[1]))
for key in filter(None, sys.argv[2].split(".")):
    value = value[int(key)] if isinstance(value, list) else value[key]
print(value if isinstance(value, str) else json.dumps(value, sort_keys=True))
EOF
}
is() { [ "$1" = "$2" ] || { log "  got ${1:-nothing}, expected $2"; return 1; }; }
begins() { case "$1" in "$2"*) return 0 ;; *) log "  ${1:-nothing} does not begin with $2"; return 1 ;; esac; }
has_header() { grep -qi "^$1" "$tmp/headers" || { log "  no $1 header"; return 1; }; }

log "starting the image as envhost-0 on 127.0.0.1:$PORT"
start_at=$SECONDS
start envhost-0 "$PORT"
log "ready in $((SECONDS - start_at)) s"
A=http://127.0.0.1:$PORT
cname0=envhost-test-envhost-0-$$

# The process: envhost, as the image's user, with no capabilities and no new privileges.
pid=$(podman inspect --format '{{.State.Pid}}' "$cname0")
check "the container's process is envhost" is "$(cat "/proc/$pid/comm")" envhost
check "it runs as UID $UID_EXPECTED (the image's USER)" \
    is "$(awk '/^Uid:/ { print $2 "/" $3 }' "/proc/$pid/status")" "$UID_EXPECTED/$UID_EXPECTED"
check "it has no capabilities" is "$(awk '/^CapEff:/ { print $2 }' "/proc/$pid/status")" 0000000000000000
check "it may gain no privileges" is "$(awk '/^NoNewPrivs:/ { print $2 }' "/proc/$pid/status")" 1
# /proc/PID/net/tcp lists the sockets of the container's network namespace: 0.0.0.0:18765
# (hex 494D), listening (state 0A).
check "it listens on 0.0.0.0:18765" \
    grep -q '^ *[0-9]*: 00000000:494D 00000000:0000 0A ' "/proc/$pid/net/tcp"

# /ready answers without the token, at the root and under the prefix.
check "GET /ready answers 200 without the token" is "$(request GET "$A/ready")" 200
check "GET /pods/envhost-0/ready answers 200" is "$(request GET "$A/pods/envhost-0/ready")" 200

# Every other route needs the token.
check "the card without the token answers 401" \
    is "$(request GET "$A/.well-known/agent-env.json")" 401
check "  with WWW-Authenticate" has_header "WWW-Authenticate: Bearer"
check "POST /episodes without the token answers 401" \
    is "$(request POST "$A/episodes" -H 'Content-Type: application/json' -d '{}')" 401
check "  with the code unauthorized" is "$(json "$tmp/body" error.code)" unauthorized
check "POST /episodes with a wrong token answers 401" \
    is "$(request POST "$A/episodes" -H 'Authorization: Bearer 0123456789abcdef0123' -d '{}')" 401
check "GET /metrics without the token answers 401" is "$(request GET "$A/metrics")" 401

# The slack card, with the token.
check "the card with the token answers 200" \
    is "$(request GET "$A/.well-known/agent-env.json" -H "@$tmp/auth")" 200
check "  and is slack's" is "$(json "$tmp/body" name)" slack

# An episode, created with the token: its URLs begin with the prefix, and work.
seed='{"environment": "slack", "parts": [{"kind": "data", "data": {"channels": [{"name": "general"}]}}]}'
check "POST /episodes with the token answers 201" \
    is "$(request POST "$A/episodes" -H "@$tmp/auth" -H 'Content-Type: application/json' -d "$seed")" 201
cp "$tmp/body" "$tmp/episode.json"
episode_url=$(json "$tmp/episode.json" url 2>/dev/null || true)
agent_url=$(json "$tmp/episode.json" agent_url 2>/dev/null || true)
check "  its url begins with /pods/envhost-0/episodes/" begins "$episode_url" /pods/envhost-0/episodes/
check "  its agent_url begins with /pods/envhost-0/agent/" begins "$agent_url" /pods/envhost-0/agent/
check "  its mcp_url begins with /pods/envhost-0/agent/" \
    begins "$(json "$tmp/episode.json" mcp_url)" /pods/envhost-0/agent/
check "  its Location begins with /pods/envhost-0/episodes/" \
    begins "$(sed -n 's/^[Ll]ocation: *//p' "$tmp/headers" | tr -d '\r')" /pods/envhost-0/episodes/
check "its card at its url answers 200 with the token" \
    is "$(request GET "$A${episode_url}.well-known/agent-env.json" -H "@$tmp/auth")" 200
check "its card at its agent_url answers 200 without the token" \
    is "$(request GET "$A${agent_url}.well-known/agent-env.json")" 200
get='{"jsonrpc": "2.0", "id": 1, "method": "data/get", "params": {}}'
check "data/get at its url answers 200" \
    is "$(request POST "$A${episode_url}agentenv" -H "@$tmp/auth" -H 'Content-Type: application/json' -d "$get")" 200
cp "$tmp/body" "$tmp/data-before.json"
check "  with the seeded channel" grep -q general "$tmp/data-before.json"
check "GET /metrics with the token answers 200" is "$(request GET "$A/metrics" -H "@$tmp/auth")" 200
check "  counting 2 live episodes" grep -qx 'envhost_episodes_live 2' "$tmp/body"

# The drain procedure of deploy/README.md: the episode moved to a second pod by a snapshot.
log "starting the image as envhost-1 on 127.0.0.1:$PORT1"
start envhost-1 "$PORT1"
B=http://127.0.0.1:$PORT1
check "POST {url}snapshot on envhost-0 answers 201" \
    is "$(request POST "$A${episode_url}snapshot" -H "@$tmp/auth")" 201
snapshot_url=$(json "$tmp/body" url 2>/dev/null || true)
check "  its url begins with /pods/envhost-0/snapshots/" begins "$snapshot_url" /pods/envhost-0/snapshots/
check "GET the snapshot file from envhost-0 answers 200" \
    is "$(request GET "$A$snapshot_url" -H "@$tmp/auth")" 200
cp "$tmp/body" "$tmp/snapshot.json"
check "POST /snapshots of the file to envhost-1 answers 201" \
    is "$(request POST "$B/snapshots" -H "@$tmp/auth" -H 'Content-Type: application/json' --data-binary "@$tmp/snapshot.json")" 201
moved=$(json "$tmp/body" snapshot 2>/dev/null || true)
check "POST /episodes from the snapshot on envhost-1 answers 201" \
    is "$(request POST "$B/episodes" -H "@$tmp/auth" -H 'Content-Type: application/json' -d "{\"snapshot\": \"$moved\"}")" 201
new_url=$(json "$tmp/body" url 2>/dev/null || true)
check "  its url begins with /pods/envhost-1/episodes/" begins "$new_url" /pods/envhost-1/episodes/
check "data/get of the moved episode answers 200" \
    is "$(request POST "$B${new_url}agentenv" -H "@$tmp/auth" -H 'Content-Type: application/json' -d "$get")" 200
check "  the same data as before the move" \
    is "$(json "$tmp/body" result)" "$(json "$tmp/data-before.json" result)"
check "DELETE of the original on envhost-0 answers 200" \
    is "$(request DELETE "$A/episodes/$(json "$tmp/episode.json" id)" -H "@$tmp/auth")" 200

# The image's default command: the token from ENVHOST_CONTROL_TOKEN; none is refused, since
# the image binds 0.0.0.0.
refusal=$(podman run --rm --pull=never "${run_opts[@]}" --network none --read-only "$IMAGE" 2>&1 || true)
check "the default command without a token refuses to start" \
    grep -q 'refusing to serve on 0.0.0.0 without an operator token' <<<"$refusal"
cname2=envhost-test-default-$$
containers+=("$cname2")
podman run --detach --pull=never --name "$cname2" "${run_opts[@]}" --network none \
    --env "ENVHOST_CONTROL_TOKEN=$(cat "$tmp/token")" "$IMAGE" >/dev/null
pid2=$(podman inspect --format '{{.State.Pid}}' "$cname2")
deadline=$((SECONDS + 60))
default_ready=no
while [ "$SECONDS" -lt "$deadline" ]; do
    # The container's own network namespace has only its loopback: curl runs inside it.
    if nsenter --net="/proc/$pid2/ns/net" curl -fsS -o "$tmp/body" -H "@$tmp/auth" \
        http://127.0.0.1:18765/.well-known/agent-env.json 2>/dev/null; then
        default_ready=yes
        break
    fi
    [ "$(podman inspect --format '{{.State.Running}}' "$cname2")" = true ] || break
    sleep 0.2
done
check "the default command serves slack's card on 0.0.0.0:18765 with ENVHOST_CONTROL_TOKEN" \
    is "$default_ready/$(json "$tmp/body" name 2>/dev/null)" yes/slack

cleanup
trap - EXIT
containers=()
# The images this run replaced, untagged: their layers are dropped.
podman image prune --force >/dev/null 2>&1 || true

log "$((SECONDS - started)) s in all"
echo "test-container: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
