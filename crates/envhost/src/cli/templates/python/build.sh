#!/bin/sh
# Builds {{name}}.wasm next to this script with componentize-py (from PyPI, into .build-venv the
# first time), the envhost Python SDK and the environment world's WIT.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
venv="$here/.build-venv"
if [ ! -x "$venv/bin/componentize-py" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --upgrade pip
    "$venv/bin/pip" install --quiet -r "{{sdk_python}}/requirements-build.txt"
fi
"$venv/bin/componentize-py" -d "{{wit}}" -w environment componentize app \
    -p "$here" -p "{{sdk_python}}" -o "$here/{{name}}.wasm"
echo "built $here/{{name}}.wasm"
