#!/usr/bin/env bash
# Validates the Kubernetes manifests of deploy/kubernetes/ against the Kubernetes 1.37 schemas,
# strictly (a field the schema does not know is an error), with PyPI kubernetes-validate, pinned
# in deploy/requirements.txt and installed into a venv of its own ($DEPLOY_VENV, default
# target/deploy-venv; made again when deploy/requirements.txt changes).
#
#   deploy/validate.sh              every *.yaml and *.yml under deploy/kubernetes/
#   deploy/validate.sh FILE...      these files
#   make deploy-validate            the same as the first
#
# Exits 0 when every document of every file is valid, 1 otherwise (each failure is printed): a
# document that breaks its schema, YAML that does not parse, or a kind the schemas do not have.
set -euo pipefail
cd "$(dirname "$0")/.."

VENV=${DEPLOY_VENV:-target/deploy-venv}
PYTHON=${PYTHON:-python3}
KUBERNETES_VERSION=1.37.0

stamp="$VENV/.installed"
if [ ! -f "$stamp" ] || ! cmp -s deploy/requirements.txt "$stamp"; then
    rm -rf "$VENV"
    if ! "$PYTHON" -m venv "$VENV"; then
        echo "validate: $PYTHON cannot make a venv (on Debian: apt-get install python3-venv)" >&2
        exit 1
    fi
    "$VENV/bin/pip" install --quiet --disable-pip-version-check -r deploy/requirements.txt
    cp deploy/requirements.txt "$stamp"
fi

if [ "$#" -gt 0 ]; then
    files=("$@")
else
    mapfile -t files < <(find deploy/kubernetes -type f \( -name '*.yaml' -o -name '*.yml' \) | sort)
fi
if [ "${#files[@]}" -eq 0 ]; then
    echo "validate: no manifests to validate" >&2
    exit 1
fi

# --quiet prints only warnings and failures. kubernetes-validate only warns of a document whose
# kind and apiVersion have no schema (a misspelt kind, a custom resource) and exits 0: here a
# warning fails the run too, since every manifest here is of a built-in kind.
status=0
report=$("$VENV/bin/kubernetes-validate" --strict --quiet \
    --kubernetes-version "$KUBERNETES_VERSION" "${files[@]}" 2>&1) || status=$?
[ -n "$report" ] && printf '%s\n' "$report" >&2
if [ "$status" -ne 0 ] || grep -q '^WARN' <<<"$report"; then
    echo "validate: invalid manifests (above)" >&2
    exit 1
fi
echo "validate: ${#files[@]} files valid against Kubernetes $KUBERNETES_VERSION (strict)"
