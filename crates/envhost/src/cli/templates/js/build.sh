#!/bin/sh
# Builds {{name}}.wasm next to this script: npm installs the envhost JavaScript SDK and
# componentize-qjs (the first time), then componentize-qjs builds the component.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here"
[ -d node_modules ] || npm install --no-audit --no-fund --loglevel=error
npm run --silent build
echo "built $here/{{name}}.wasm"
