#!/bin/sh
# Builds {{name}}.wasm next to this script: cargo for wasm32-wasip2 (the target is added if missing).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
rustup target add wasm32-wasip2 >/dev/null 2>&1 || true
# WebAssembly SIMD, with which the SDK prints JSON (docs/sdk-rust.md#json-printing).
export CARGO_TARGET_WASM32_WASIP2_RUSTFLAGS="${CARGO_TARGET_WASM32_WASIP2_RUSTFLAGS:-} -C target-feature=+simd128"
cargo build --release --target wasm32-wasip2 --manifest-path "$here/Cargo.toml"
cp "$here/target/wasm32-wasip2/release/{{crate}}.wasm" "$here/{{name}}.wasm"
echo "built $here/{{name}}.wasm"
